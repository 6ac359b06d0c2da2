"""``ProbeModule``: the shared boundary head on a frozen pretrained encoder (wav2vec2, AST,
HTS-AT, BEATs), so the guard vector shows which encoders keep timing structure.

The encoder's features are computed once per clip and cached on disk (keyed by encoder,
layer and checkpoint bytes; clips by their waveform); each batch's steps are placed on the
contract grid by their time spans and refined by the same :class:`BoundaryHead` the
contract-aware detector uses. The encoder is not a submodule: its weights are the
checkpoint's, never saved in the run's checkpoints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from sedcontract.errors import SedContractError
from sedcontract.lightning.module import DetectorModule
from sedcontract.models.boundary import BoundaryHead, align_steps
from sedcontract.models.encoders import Encoder, load_encoder
from sedcontract.models.feature_cache import FeatureCache

log = logging.getLogger(__name__)

ENCODER_KEYS = ("family", "checkpoint", "layer", "hub")


class ProbeModule(DetectorModule):
    """Frozen ``encoder`` (a mapping of ``family``, ``checkpoint``, ``layer``, ``hub``) →
    cached features → aligned to the grid of ``hop`` seconds → :class:`BoundaryHead` with
    ``outputs`` classes."""

    def __init__(self, encoder: Mapping[str, Any], hop: float, outputs: int, *,
                 cache_dir: str | Path, sample_rate: int = 16_000,
                 head: Mapping[str, int] | None = None,
                 optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 scheduler: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        unknown = set(encoder) - set(ENCODER_KEYS)
        if unknown or "family" not in encoder or "checkpoint" not in encoder:
            raise SedContractError(f"encoder settings are {', '.join(ENCODER_KEYS)} (family and "
                                   f"checkpoint required); got {sorted(encoder)}")
        frozen = load_encoder(encoder["family"], encoder["checkpoint"],
                              int(encoder.get("layer", -1)), bool(encoder.get("hub", False)))
        self._dim, self._hop, self.sample_rate = frozen.dim, float(hop), int(sample_rate)
        net = BoundaryHead(frozen.dim, outputs, **dict(head or {}))
        super().__init__(net, None, optimizer, scheduler, **kwargs)
        object.__setattr__(self, "encoder", frozen)  # not a submodule (see the module text)
        self.cache = FeatureCache(cache_dir, frozen, encoder["checkpoint"])
        self._filled: set[str] = set()  # splits whose clips are all cached
        self.score_source = (f"sigmoid of the boundary head's activity logits on frozen "
                             f"{frozen.family} features (layer {frozen.layer})")

    encoder: Encoder

    def make_norm(self, frontend: Any) -> nn.Module:
        return nn.BatchNorm1d(self._dim)

    @property
    def hop(self) -> float:
        return self._hop

    def frames(self, samples: int) -> int:
        """Grid frames of a clip of ``samples`` (as the log-mel front end counts them)."""
        return samples // round(self._hop * self.sample_rate)

    def features(self, waveform: torch.Tensor) -> torch.Tensor:
        """Encode (no cache) and align: for ``forward`` on raw audio."""
        self.encoder.to(waveform.device)
        encoded = self.encoder(waveform, self.sample_rate)
        return self.norm(align_steps(encoded.features, encoded.centres,
                                     self.frames(waveform.shape[-1]), self._hop))

    def batch_features(self, batch: Mapping[str, Any]) -> torch.Tensor:
        """The cached features of the batch's clips, aligned to the targets' frames."""
        encoded = self.cache.lookup(batch["waveform"], batch["samples"], self.sample_rate)
        frames = int(batch["frames"].max())
        return self.norm(align_steps(encoded.features, encoded.centres, frames, self._hop))

    def fill_cache(self, split: str) -> None:
        """Encode every clip of ``split`` the cache lacks (once; later runs read the file)."""
        if split in self._filled:
            return
        self._filled.add(split)
        dataset = self.trainer.datamodule.dataset(split)
        self.encoder.to(self.device)
        before = self.cache.encoder_calls
        self.cache.fill(dataset.waveforms())
        log.info("%s features of %s: %d clips encoded, %d cached (%s)", self.encoder.family,
                 split, self.cache.encoder_calls - before, len(dataset), self.cache.path)

    def on_fit_start(self) -> None:
        self.fill_cache(self.trainer.datamodule.train_split)

    def on_validation_start(self) -> None:
        self.fill_cache(self.trainer.datamodule.val_split)
        super().on_validation_start()
