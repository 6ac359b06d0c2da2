"""Frozen-encoder features cached on disk, so training a head never runs the encoder again.

A cache folder is named by a digest of what decides the features: the encoder family, layer
and sample rate and the checkpoint's bytes. Inside, a clip's features are found by a digest
of its own waveform (the samples it really has), so a rebuilt or edited data set can never be
served stale features. Files are read with :func:`~sedcontract.models.encoders.safe_load`
(tensors and plain data only).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Iterable
from pathlib import Path

import torch

from sedcontract.models.encoders import Encoded, Encoder, describe, safe_load
from sedcontract.outputs import atomic_write

log = logging.getLogger(__name__)


def checkpoint_digest(path: str | Path) -> str:
    """sha256 of a checkpoint file, or of every file of a model directory (names and bytes);
    a hub name (no such path) is digested by name."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else \
        [path] if path.is_file() else []
    if not files:
        digest.update(f"hub:{path}".encode())
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with open(file, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def waveform_digest(waveform: torch.Tensor, sample_rate: int) -> str:
    """sha256 of a mono waveform's float32 samples and its rate."""
    data = waveform.detach().to(torch.float32).contiguous().cpu().numpy().tobytes()
    return hashlib.sha256(data + str(sample_rate).encode()).hexdigest()


class FeatureCache:
    """Features of one encoder on disk in ``root / <key> / features.pt``, in memory once
    read."""

    def __init__(self, root: str | Path, encoder: Encoder, checkpoint: str | Path) -> None:
        self.encoder = encoder
        self.identity = {**describe(encoder), "checkpoint": checkpoint_digest(checkpoint)}
        self.key = hashlib.sha256(json.dumps(self.identity, sort_keys=True).encode()
                                  ).hexdigest()[:20]
        self.path = Path(root) / self.key / "features.pt"
        self.features: dict[str, torch.Tensor] = {}
        self.spans: dict[str, torch.Tensor] = {}
        self.encoder_calls = 0  # clips the encoder ran on (a fully cached run makes none)
        if self.path.exists():
            self._read()

    def fill(self, clips: Iterable[tuple[torch.Tensor, int]], batch: int = 8) -> None:
        """Make sure every clip (``(waveform, sample_rate)``) is cached: encode the ones the
        cache lacks, then write the file (only when something was added)."""
        todo = []
        for waveform, rate in clips:
            key = waveform_digest(waveform, rate)
            if key not in self.features:
                todo.append((key, waveform, rate))
        for start in range(0, len(todo), batch):
            self._encode(todo[start:start + batch])
        if todo:
            self._write()

    def _encode(self, group: list[tuple[str, torch.Tensor, int]]) -> None:
        """Encode clips of one rate together, each cut back to its own steps."""
        for rate in sorted({r for _, _, r in group}):
            same = [(k, w) for k, w, r in group if r == rate]
            padded = torch.zeros(len(same), max(len(w) for _, w in same))
            for i, (_, w) in enumerate(same):
                padded[i, :len(w)] = w
            device = next(self.encoder.parameters()).device
            encoded = self.encoder(padded.to(device), rate)
            self.encoder_calls += len(same)
            for i, (key, w) in enumerate(same):
                keep = encoded.spans[:, 0] < len(w) / rate
                self.features[key] = encoded.features[i][:, keep].to(torch.float16).cpu()
                self.spans[key] = encoded.spans[keep]

    def lookup(self, waveforms: torch.Tensor, samples: torch.Tensor, rate: int) -> Encoded:
        """Features of a zero-padded batch, each clip cut to its ``samples``: from the cache,
        encoding (and keeping) only clips not seen before; steps padded to the longest."""
        clips = [w[:int(n)] for w, n in zip(waveforms, samples, strict=True)]
        keys = [waveform_digest(w, rate) for w in clips]
        missing = [(k, w.cpu(), rate) for k, w in zip(keys, clips, strict=True)
                   if k not in self.features]
        if missing:
            self._encode(missing)
        longest = max(keys, key=lambda k: self.spans[k].shape[0])
        out = torch.zeros(len(keys), self.features[longest].shape[0],
                          self.spans[longest].shape[0])
        for i, key in enumerate(keys):
            out[i, :, :self.features[key].shape[-1]] = self.features[key].float()
        return Encoded(out.to(waveforms.device), self.spans[longest])

    def _read(self) -> None:
        try:
            data = safe_load(self.path, "feature cache", "sedcontract writes tensors only")
            if data.get("identity") != self.identity:
                raise ValueError("written for another encoder")
            for key, feats, spans in zip(data["keys"], data["features"], data["spans"],
                                         strict=True):
                self.features[key], self.spans[key] = feats, spans
        except Exception as exc:  # a damaged or foreign file is recomputed, never trusted
            log.warning("feature cache %s unusable (%s); recomputing", self.path,
                        str(exc).removeprefix(f"{self.path}: "))
            self.features, self.spans = {}, {}

    def _write(self) -> None:
        keys = sorted(self.features)
        buffer = io.BytesIO()
        torch.save({"identity": self.identity, "keys": keys,
                    "features": [self.features[k] for k in keys],
                    "spans": [self.spans[k] for k in keys]}, buffer)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, buffer.getvalue())
        log.info("feature cache: %d clips in %s", len(keys), self.path)
