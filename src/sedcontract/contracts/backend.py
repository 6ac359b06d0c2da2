"""Array backends of the temporal operators: ``[rows, n]`` Boolean arrays, one clip per row,
windows clipped to each row's own length so nothing leaks across clips.

``SlicingOps`` holds the logic once, written with slicing and ``& | ~`` only, so any array
library with numpy-style indexing can use it; ``NumpyOps`` is the monitor's backend (the torch
one lives with the models).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class SlicingOps(ABC):
    """Shifts along the last axis; ``valid`` (or None) marks each row's in-clip frames.
    Subclasses say how to make a filled array (``_full_like``, ``const``) and count."""

    def __init__(self, shape: Any, valid: Any = None) -> None:
        self.shape, self.valid = shape, valid
        self._valid_shifted: dict[int, Any] = {}

    @abstractmethod
    def _full_like(self, x: Any, fill: bool) -> Any:
        """An array shaped and typed like ``x``, every element ``fill``."""

    def _raw_shift(self, x: Any, k: int, fill: bool) -> Any:
        n = x.shape[-1]
        out = self._full_like(x, fill)
        if abs(k) < n:
            if k > 0:
                out[..., : n - k] = x[..., k:]
            else:
                out[..., -k:] = x[..., : n + k]
        return out

    def shift(self, x: Any, k: int, fill: bool) -> Any:
        """``y[t] = x[t+k]`` inside the row's own length, else ``fill``."""
        if k == 0:
            return x
        out = self._raw_shift(x, k, fill)
        if k > 0 and self.valid is not None:  # t+k past this row's own end
            inside = self._valid_shifted.get(k)
            if inside is None:
                inside = self._valid_shifted[k] = self._raw_shift(self.valid, k, False)
            out = out | ~inside if fill else out & inside
        return out

    def and_(self, x: Any, y: Any) -> Any:
        return x & y

    def or_(self, x: Any, y: Any) -> Any:
        return x | y

    def not_(self, x: Any) -> Any:
        return ~x


class NumpyOps(SlicingOps):
    """The numpy backend of the exact monitor."""

    def _full_like(self, x: np.ndarray, fill: bool) -> np.ndarray:
        return np.full_like(x, fill)

    def const(self, value: bool) -> np.ndarray:
        return np.full(self.shape, value, dtype=bool)

    def count(self, x: np.ndarray) -> np.ndarray:
        """Per-row number of true in-clip frames."""
        if self.valid is not None:
            x = x & self.valid
        return np.count_nonzero(x, axis=-1)
