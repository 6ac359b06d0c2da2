"""Training-batch transforms a detector is composed with (config group ``augment``): the
benchmark's perturbations on the waveform (labels follow) and SpecAugment-style masks on the
features. Validation and test batches are never transformed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import numpy as np
import torch
from torch import nn

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.data.augment import Augmentation
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole
from sedcontract.traces.activity import offset, onset


def _known(what: str, settings: Mapping[str, Any] | None, names: list[str]) -> None:
    unknown = sorted(set(settings or {}) - set(names))
    if unknown:
        raise SedContractError(f"unknown {what} setting(s) {unknown}; the settings are "
                               f"{', '.join(names)}")


class FeatureMasks(nn.Module):
    """SpecAugment-style masks on normalised features in training: ``time`` bands of up to
    ``time_width`` frames and ``freq`` bands of up to ``freq_width`` bins set to 0 (the mean);
    labels unchanged."""

    def __init__(self, time: int = 2, time_width: int = 10, freq: int = 2,
                 freq_width: int = 8) -> None:
        super().__init__()
        for name, value in (("time", time), ("time_width", time_width), ("freq", freq),
                            ("freq_width", freq_width)):
            if not is_whole(value) or value < 0:
                raise SedContractError(f"augment.feature_masks.{name} must be an integer >= 0, "
                                       f"got {value!r}")
        self.time, self.time_width, self.freq, self.freq_width = time, time_width, freq, \
            freq_width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return x
        b, f, t = x.shape
        keep = torch.ones(b, f, t, dtype=torch.bool, device=x.device)
        for count, width, size, axis in ((self.time, self.time_width, t, 2),
                                         (self.freq, self.freq_width, f, 1)):
            for _ in range(count):
                w = torch.randint(0, width + 1, (b,), device=x.device)
                start = (torch.rand(b, device=x.device) * (size - w + 1).clamp(min=1)).long()
                at = torch.arange(size, device=x.device)[None]
                band = (at >= start[:, None]) & (at < (start + w)[:, None])
                keep &= ~(band[:, None, :] if axis == 2 else band[:, :, None])
        return x * keep


class Perturb(nn.Module):
    """Waveform augmentation (:class:`~sedcontract.data.augment.Augmentation` settings
    ``waveform``; None: off) applied to training batches on the CPU, boundary targets derived
    again under the policy's clip edges; and :class:`FeatureMasks` (``feature_masks``; None:
    off) on the features."""

    def __init__(self, *, policy: AuditPolicy, waveform: Mapping[str, Any] | None = None,
                 feature_masks: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        _known("augment.waveform", waveform, [f.name for f in fields(Augmentation)])
        _known("augment.feature_masks", feature_masks,
               ["time", "time_width", "freq", "freq_width"])
        self.edges = policy.edges
        self.augmentation = None
        if waveform:
            settings = dict(waveform)
            for name in ("families", "background_db"):
                if name in settings:
                    settings[name] = tuple(settings[name])
            self.augmentation = Augmentation(**settings)
        self.masks = FeatureMasks(**feature_masks) if feature_masks else None

    def batch(self, batch: Mapping[str, Any], *, hop: float, sample_rate: int,
              seed: list[int]) -> Mapping[str, Any]:
        """An augmented copy of a training batch (on the CPU); ``seed`` makes it repeatable."""
        if self.augmentation is None:
            return batch
        waveform, activity = self.augmentation(
            batch["waveform"].numpy(), batch["activity"].numpy() > 0.5,
            batch["samples"].numpy(), batch["frames"].numpy(), hop=hop,
            sample_rate=sample_rate, rng=np.random.default_rng(seed))
        lengths = batch["frames"].numpy()[:, None].repeat(activity.shape[1], 1)
        out = dict(batch, augmented=True)
        out["waveform"] = torch.from_numpy(waveform)
        out["activity"] = torch.from_numpy(activity.astype(np.float32))
        for name, derive in (("onset", onset), ("offset", offset)):
            out[name] = torch.from_numpy(derive(activity, self.edges, lengths).astype(np.float32))
        return out

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """Masked features in training (unchanged otherwise)."""
        return x if self.masks is None else self.masks(x)
