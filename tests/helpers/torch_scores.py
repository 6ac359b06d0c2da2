"""Torch helpers of the training tier: smooth random frame scores and a counter of copies
to the host."""

from __future__ import annotations

import torch

CLASSES = ("speech", "tone")


CLIPS = ("a", "b", "c", "d", "e")


def random_scores(seed: int, classes: int = len(CLASSES)) -> torch.Tensor:
    """Smooth random frame scores ``[clips, classes, 100]`` that cross 0.5 a few times."""
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(len(CLIPS), classes, 100, generator=g)
    kernel = torch.ones(1, 1, 9) / 9
    smooth = torch.nn.functional.conv1d(noise.reshape(-1, 1, 100), kernel, padding=4)
    return torch.sigmoid(3 * smooth.reshape(len(CLIPS), classes, 100))


class HostCopies(torch.overrides.TorchFunctionMode):
    """Counts the copies of tensors to the host (``.cpu()``, ``.to('cpu')``, ``.tolist()``,
    ``.item()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.copies = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.Tensor.cpu, torch.Tensor.tolist, torch.Tensor.item) or (
                func is torch.Tensor.to and "cpu" in map(str, (*args[1:], *kwargs.values()))):
            self.copies += 1
        return func(*args, **kwargs)
