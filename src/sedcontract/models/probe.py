"""The front end of a probe: a frozen pretrained encoder (wav2vec2, AST, HTS-AT, BEATs) whose
features are computed once per clip and cached on disk (keyed by encoder, layer and checkpoint
bytes; clips by their waveform), then placed on the contract grid by their time spans. The
encoder is not a submodule: its weights are the checkpoint's, never saved in a run's."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from sedcontract.errors import SedContractError
from sedcontract.models.boundary import align_steps
from sedcontract.models.encoders import Encoder, load_encoder
from sedcontract.models.feature_cache import FeatureCache

log = logging.getLogger(__name__)

ENCODER_KEYS = ("family", "checkpoint", "layer", "hub")


class EncoderFeatures(nn.Module):
    """Frozen ``encoder`` (``family``, ``checkpoint``, ``layer``, ``hub``) → cached features →
    aligned to the grid of ``hop`` seconds: ``[batch, dim, frames]``."""

    encoder: Encoder

    def __init__(self, encoder: Mapping[str, Any], *, hop: float, cache_dir: str | Path,
                 sample_rate: int = 16_000) -> None:
        super().__init__()
        unknown = set(encoder) - set(ENCODER_KEYS)
        if unknown or "family" not in encoder or "checkpoint" not in encoder:
            raise SedContractError(f"encoder settings are {', '.join(ENCODER_KEYS)} (family and "
                                   f"checkpoint required); got {sorted(encoder)}")
        frozen = load_encoder(encoder["family"], encoder["checkpoint"],
                              int(encoder.get("layer", -1)), bool(encoder.get("hub", False)))
        object.__setattr__(self, "encoder", frozen)  # not a submodule (see the module text)
        self.hop, self.sample_rate, self.dim = float(hop), int(sample_rate), frozen.dim
        self.cache = FeatureCache(cache_dir, frozen, encoder["checkpoint"])
        self.score_source = (f"sigmoid of the boundary head's activity logits on frozen "
                             f"{frozen.family} features (layer {frozen.layer})")

    def frames(self, samples: int) -> int:
        """Grid frames of a clip of ``samples`` (as the log-mel front end counts them)."""
        return samples // round(self.hop * self.sample_rate)

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        """Encode (no cache) and align: features of raw audio."""
        self.encoder.to(waveform.device)
        encoded = self.encoder(waveform, self.sample_rate)
        return align_steps(encoded.features, encoded.centres, self.frames(waveform.shape[-1]),
                           self.hop)

    def batch_features(self, batch: Mapping[str, Any]) -> torch.Tensor:
        """The cached features of a batch's clips, aligned to its targets' frames."""
        encoded = self.cache.lookup(batch["waveform"], batch["samples"], self.sample_rate)
        return align_steps(encoded.features, encoded.centres, int(batch["frames"].max()),
                           self.hop)

    def prepare(self, clips: Iterable[tuple[torch.Tensor, int]], device: torch.device,
                name: str) -> None:
        """Encode every clip the cache lacks (once; later runs read the file)."""
        self.encoder.to(device)
        before = self.cache.encoder_calls
        self.cache.fill(clips)
        log.info("%s features of %s: %d clips encoded (%s)", self.encoder.family, name,
                 self.cache.encoder_calls - before, self.cache.path)
