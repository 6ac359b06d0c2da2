"""The numpy backend of the temporal operators: ``[rows, n]`` Boolean arrays, one clip per
row, windows clipped to each row's own length so nothing leaks across clips."""

from __future__ import annotations

import numpy as np


class NumpyOps:
    """Shifts along the last axis; ``valid`` (or None) marks each row's in-clip frames."""

    def __init__(self, shape: tuple[int, ...], valid: np.ndarray | None = None) -> None:
        self.shape, self.valid = shape, valid
        self._valid_shifted: dict[int, np.ndarray] = {}

    def _raw_shift(self, x: np.ndarray, k: int, fill: bool) -> np.ndarray:
        n = x.shape[-1]
        out = np.empty_like(x)
        if abs(k) >= n:
            out[...] = fill
        elif k > 0:
            out[..., : n - k] = x[..., k:]
            out[..., n - k:] = fill
        else:
            out[..., -k:] = x[..., : n + k]
            out[..., :-k] = fill
        return out

    def shift(self, x: np.ndarray, k: int, fill: bool) -> np.ndarray:
        if k == 0:
            return x
        out = self._raw_shift(x, k, fill)
        if k > 0 and self.valid is not None:  # t+k past this row's own end
            inside = self._valid_shifted.get(k)
            if inside is None:
                inside = self._valid_shifted[k] = self._raw_shift(self.valid, k, False)
            if fill:
                out |= ~inside
            else:
                out &= inside
        return out

    def and_(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x & y

    def or_(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x | y

    def not_(self, x: np.ndarray) -> np.ndarray:
        return ~x

    def const(self, value: bool) -> np.ndarray:
        return np.full(self.shape, value, dtype=bool)

    def count(self, x: np.ndarray) -> np.ndarray:
        """Per-row number of true in-clip frames."""
        if self.valid is not None:
            x = x & self.valid
        return np.count_nonzero(x, axis=-1)
