"""Frame detectors over log-mel features ``[batch, features, frames]``. Each returns logits
``activity``, ``onset`` and ``offset`` of shape ``[batch, classes, frames]`` (one head each),
aligned frame for frame with the input (and so with the contract grid)."""

from __future__ import annotations

import torch
from torch import nn

from sedcontract.data.dataset import TARGETS

HEADS = TARGETS  # one output head per frame target


class _Heads(nn.Module):
    """One 1×1 convolution producing the three heads."""

    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        self.classes = classes
        self.proj = nn.Conv1d(channels, len(HEADS) * classes, kernel_size=1)

    def forward(self, h: torch.Tensor) -> dict[str, torch.Tensor]:
        out = self.proj(h)
        return dict(zip(HEADS, out.split(self.classes, dim=1), strict=True))


class LogisticDetector(nn.Module):
    """Per-frame logistic regression on ``±context`` stacked frames (a single linear map)."""

    def __init__(self, features: int, classes: int, context: int = 5) -> None:
        super().__init__()
        self.classes = classes
        self.linear = nn.Conv1d(features, len(HEADS) * classes, kernel_size=2 * context + 1,
                                padding=context)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return dict(zip(HEADS, self.linear(x).split(self.classes, dim=1), strict=True))


class TemporalCNN(nn.Module):
    """A stack of same-padded 1-D convolutions with ReLU and batch norm."""

    def __init__(self, features: int, classes: int, channels: int = 64, layers: int = 4,
                 kernel: int = 5) -> None:
        super().__init__()
        blocks, width = [], features
        for _ in range(layers):
            blocks += [nn.Conv1d(width, channels, kernel, padding=kernel // 2),
                       nn.BatchNorm1d(channels), nn.ReLU()]
            width = channels
        self.body = nn.Sequential(*blocks)
        self.heads = _Heads(channels, classes)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.heads(self.body(x))


class _Residual(nn.Module):
    def __init__(self, channels: int, dilation: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, dilation=dilation,
                              padding=dilation * (kernel // 2))
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + torch.relu(self.norm(self.conv(h)))


class DilatedCNN(nn.Module):
    """Residual blocks with exponentially growing dilation (1, 2, 4, …): the receptive field
    doubles per block at constant cost."""

    def __init__(self, features: int, classes: int, channels: int = 64, blocks: int = 6,
                 kernel: int = 3) -> None:
        super().__init__()
        self.inp = nn.Conv1d(features, channels, kernel_size=1)
        self.body = nn.Sequential(*[_Residual(channels, 2**b, kernel) for b in range(blocks)])
        self.heads = _Heads(channels, classes)
        self.receptive_field = 1 + (kernel - 1) * (2**blocks - 1)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.heads(self.body(self.inp(x)))


def hysteresis(x: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """Boolean activity along the last axis: switch on above ``high``, off below ``low``
    (per class thresholds broadcast over ``[batch, classes, frames]``)."""
    state = torch.zeros(x.shape[:-1], dtype=torch.bool, device=x.device)
    out = torch.zeros_like(x, dtype=torch.bool)
    for t in range(x.shape[-1]):
        state = torch.where(state, x[..., t] >= low, x[..., t] > high)
        out[..., t] = state
    return out


class ThresholdDetector(nn.Module):
    """No gradient: per class, the log-mel band that best separates its active frames (band
    energy), spectral flux for onsets, and hysteresis thresholds fitted on training data.

    ``forward`` returns logits (feature minus the midpoint threshold, flux minus its
    threshold); ``decide`` applies the hysteresis to give Boolean activity.
    """

    score_source = "fitted hysteresis per class (0/1 scores)"  # how its scores are made

    def __init__(self, features: int, classes: int, band: int = 8, fit_clips: int = 256) -> None:
        super().__init__()
        self.features, self.classes, self.band = features, classes, band
        self.fit_clips = fit_clips  # training clips the fit sees
        self.register_buffer("start", torch.zeros(classes, dtype=torch.long))
        self.register_buffer("low", torch.zeros(classes))
        self.register_buffer("high", torch.zeros(classes))
        self.register_buffer("flux_threshold", torch.zeros(classes))
        self.register_buffer("fitted_flag", torch.zeros((), dtype=torch.bool))  # in checkpoints

    @property
    def fitted(self) -> bool:
        return bool(self.fitted_flag)

    def band_energy(self, x: torch.Tensor) -> torch.Tensor:
        """``[batch, classes, frames]`` mean log-mel energy in each class's band."""
        windows = x.unfold(1, self.band, 1).mean(-1)  # [batch, features - band + 1, frames]
        return windows[:, self.start, :]

    def flux(self, x: torch.Tensor) -> torch.Tensor:
        """Positive spectral flux in each class's band, ``[batch, classes, frames]``."""
        diff = torch.relu(torch.diff(x, dim=-1, prepend=x[..., :1]))
        return self.band_energy(diff)

    @torch.no_grad()
    def fit(self, x: torch.Tensor, activity: torch.Tensor, onset: torch.Tensor,
            quantiles: int = 41, pairs_per_pass: int = 64) -> ThresholdDetector:
        """Choose bands and thresholds on features ``[N, F, T]`` and targets ``[N, C, T]``
        by exhaustive search (best frame F1 for activity over every low ≤ high pair of
        quantile levels, ``pairs_per_pass`` pairs at a time; best F1 for onsets)."""
        windows = x.unfold(1, self.band, 1).mean(-1)
        for c in range(self.classes):
            active = activity[:, c].bool()
            if not active.any() or active.all():
                continue
            separation = (windows.permute(1, 0, 2)[:, active].mean(-1)
                          - windows.permute(1, 0, 2)[:, ~active].mean(-1))
            self.start[c] = int(separation.argmax())
        energy = self.band_energy(x)
        grid = torch.linspace(0.02, 0.98, quantiles, device=x.device)
        low_i, high_i = torch.triu_indices(quantiles, quantiles)  # every low <= high pair
        for c in range(self.classes):
            target = activity[:, c].bool()
            levels = torch.quantile(energy[:, c].flatten(), grid)
            best = (-1.0, 0.0, 0.0)
            for chunk in torch.arange(len(low_i)).split(pairs_per_pass):
                low, high = levels[low_i[chunk]], levels[high_i[chunk]]
                decided = hysteresis(energy[None, :, c].expand(len(chunk), -1, -1),
                                     low[:, None], high[:, None])
                f1 = _f1_each(decided, target)
                k = int(f1.argmax())  # the first best, as in a pair-by-pair search
                if float(f1[k]) > best[0]:
                    best = (float(f1[k]), float(low[k]), float(high[k]))
            self.low[c], self.high[c] = best[1], best[2]
        flux = self.flux(x)
        for c in range(self.classes):
            target = onset[:, c].bool()
            levels = torch.quantile(flux[:, c].flatten(), grid)
            scores = _f1_each(flux[None, :, c] > levels[:, None, None], target)
            self.flux_threshold[c] = float(levels[int(scores.argmax())])
        self.fitted_flag.fill_(True)
        return self

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        energy = self.band_energy(x)
        mid = ((self.low + self.high) / 2)[None, :, None]
        onset = self.flux(x) - self.flux_threshold[None, :, None]
        return {"activity": energy - mid, "onset": onset, "offset": -onset}

    def frame_scores(self, x: torch.Tensor, out: dict[str, torch.Tensor]) -> torch.Tensor:
        """The scores the decision policy thresholds: the hysteresis' 0/1 decisions."""
        return self.decide(x).float()

    def decide(self, x: torch.Tensor) -> torch.Tensor:
        """Boolean activity ``[batch, classes, frames]`` with the fitted hysteresis."""
        if not self.fitted:
            raise RuntimeError("ThresholdDetector.fit must run on training data first")
        return hysteresis(self.band_energy(x), self.low[None, :], self.high[None, :])


def _f1_each(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Frame F1 of each of ``[K, ...]`` Boolean predictions against one target ``[...]``."""
    dims = tuple(range(1, prediction.ndim))
    tp = (prediction & target).sum(dims).double()
    total = prediction.sum(dims).double() + target.sum().double()
    return torch.where(total > 0, 2 * tp / total.clamp(min=1), torch.zeros_like(tp))
