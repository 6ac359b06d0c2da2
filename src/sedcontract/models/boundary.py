"""The shared boundary head and the contract-aware detector.

``BoundaryHead`` maps features ``[batch, channels, steps]`` to logits ``activity``, ``onset``,
``offset`` ``[batch, classes, frames]``: it resamples the steps onto the contract grid when
they differ (an encoder's steps), refines with residual temporal convolutions and projects.
The refinement starts as the identity (its last convolution is zero), so a head whose
projection is loaded from another detector computes exactly what that detector computed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from sedcontract.models.detectors import HEADS, DilatedCNN


class _Refine(nn.Module):
    """``h + conv(relu(norm(conv(h))))`` with the second convolution zero-initialised."""

    def __init__(self, channels: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, padding=kernel // 2)
        self.norm = nn.BatchNorm1d(channels)
        self.out = nn.Conv1d(channels, channels, 1)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.out(torch.relu(self.norm(self.conv(h))))


def align_steps(h: torch.Tensor, centres: torch.Tensor, frames: int,
                hop: float) -> torch.Tensor:
    """Steps ``[batch, channels, steps]`` whose centres lie at ``centres`` seconds, resampled
    onto grid frames ``0 … frames−1`` (centred at ``(k + ½)·hop``) by linear interpolation in
    time, held constant beyond the first and last centre: each step lands where its span is,
    whatever the encoder's step."""
    steps = h.shape[-1]
    grid = (torch.arange(frames, dtype=torch.float64) + 0.5) * hop
    c = centres.to(torch.float64).cpu()
    right = torch.searchsorted(c, grid).clamp(1, max(steps - 1, 1))
    left = right - 1
    if steps == 1:
        return h[..., :1].expand(*h.shape[:-1], frames)
    weight = ((grid - c[left]) / (c[right] - c[left])).clamp(0, 1).to(h.dtype).to(h.device)
    left, right = left.to(h.device), right.to(h.device)
    return h[..., left] * (1 - weight) + h[..., right] * weight


class BoundaryHead(nn.Module):
    """Features → activity/onset/offset logits on the contract grid (see the module text)."""

    def __init__(self, features: int, classes: int, refine: int = 2, kernel: int = 5) -> None:
        super().__init__()
        self.classes = classes
        self.refine = nn.Sequential(*[_Refine(features, kernel) for _ in range(refine)])
        self.proj = nn.Conv1d(features, len(HEADS) * classes, kernel_size=1)

    def forward(self, h: torch.Tensor, frames: int | None = None) -> dict[str, torch.Tensor]:
        if frames is not None and frames != h.shape[-1]:
            h = F.interpolate(h, size=frames, mode="linear", align_corners=False)
        out = self.proj(self.refine(h))
        return dict(zip(HEADS, out.split(self.classes, dim=1), strict=True))


class ContractAwareDetector(DilatedCNN):
    """The dilated CNN's trunk (same layers and parameter names, so a ``dilated_cnn``
    checkpoint initialises it) under a :class:`BoundaryHead`."""

    fresh = ("heads.refine.",)  # parameters a dilated_cnn checkpoint does not have

    def __init__(self, features: int, classes: int, channels: int = 64, blocks: int = 6,
                 kernel: int = 3, refine: int = 2, refine_kernel: int = 5) -> None:
        super().__init__(features, classes, channels, blocks, kernel)
        self.heads = BoundaryHead(channels, classes, refine, refine_kernel)
