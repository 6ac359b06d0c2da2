"""Frame detectors over log-mel features ``[batch, features, frames]``. Each returns logits
``activity``, ``onset`` and ``offset`` of shape ``[batch, classes, frames]`` (one head each),
aligned frame for frame with the input (and so with the contract grid)."""

from __future__ import annotations

import torch
from torch import nn

HEADS = ("activity", "onset", "offset")


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


DETECTORS = {"logistic": LogisticDetector, "temporal_cnn": TemporalCNN,
             "dilated_cnn": DilatedCNN}
