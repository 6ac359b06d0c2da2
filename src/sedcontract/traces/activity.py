"""Frame activity: maximal runs (frames → intervals) and the derived onset/offset atoms.

Arrays are ``[rows, n]`` booleans; ``lengths`` gives each row's own number of valid frames
(clips of different durations share one array), frames at or past a row's length are ignored.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from sedcontract.errors import SignalError

Edges = Literal["open", "closed"]
EDGES: tuple[str, ...] = ("open", "closed")


def valid_mask(shape: tuple[int, ...], lengths: np.ndarray | None) -> np.ndarray | None:
    """``valid[r, t] = t < lengths[r]``, or None when every row is full length."""
    n = shape[-1]
    if lengths is None:
        return None
    lengths = np.asarray(lengths)
    if lengths.shape != shape[:-1]:
        raise SignalError(f"lengths has shape {lengths.shape}, expected {shape[:-1]}")
    if np.any(lengths < 0) or np.any(lengths > n):
        raise SignalError(f"lengths must lie in [0, {n}]")
    if np.all(lengths == n):
        return None
    return np.arange(n) < lengths[..., None]


def runs(active: np.ndarray, lengths: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs of True as ``(row, start, end)`` with ``end`` exclusive, in row-major order."""
    active = np.asarray(active, dtype=bool)
    if active.ndim == 1:
        active = active[None]
    valid = valid_mask(active.shape, lengths)
    if valid is not None:
        active = active & valid
    rows, n = active.shape
    padded = np.zeros((rows, n + 2), dtype=np.int8)
    padded[:, 1:-1] = active
    change = np.diff(padded, axis=1)
    r_on, starts = np.nonzero(change == 1)
    _, ends = np.nonzero(change == -1)
    # both lists are in row-major order and pair up one to one
    return r_on.astype(np.int64), starts.astype(np.int64), ends.astype(np.int64)


def _check_edges(edges: str) -> None:
    if edges not in EDGES:
        raise SignalError(f"unknown clip-edge policy {edges!r}; choose one of {', '.join(EDGES)}")


def onset(active: np.ndarray, edges: Edges = "open",
          lengths: np.ndarray | None = None) -> np.ndarray:
    """``onset[t] = active[t] ∧ ¬active[t−1]``.

    ``open``: an event already active at frame 0 started before the clip, so it has no onset;
    ``closed``: the clip start is a boundary and frame 0 carries the onset.
    """
    _check_edges(edges)
    active = np.asarray(active, dtype=bool)
    previous = np.empty_like(active)
    previous[..., 1:] = active[..., :-1]
    previous[..., :1] = active[..., :1] if edges == "open" else False
    result = active & ~previous
    valid = valid_mask(active.shape, lengths)
    return result if valid is None else result & valid


def offset(active: np.ndarray, edges: Edges = "open",
           lengths: np.ndarray | None = None) -> np.ndarray:
    """``offset[t] = ¬active[t] ∧ active[t−1]``: the first inactive frame after a run.

    ``open``: an event still active at the clip's last frame has no offset; ``closed``: the grid
    has no frame past the end, so that offset is placed on the last frame of the clip.
    """
    _check_edges(edges)
    active = np.asarray(active, dtype=bool)
    previous = np.zeros_like(active)
    previous[..., 1:] = active[..., :-1]
    result = ~active & previous
    valid = valid_mask(active.shape, lengths)
    if valid is not None:
        result &= valid
    if edges == "closed" and active.shape[-1] > 0:
        n = active.shape[-1]
        last = np.broadcast_to(n if lengths is None else np.asarray(lengths), active.shape[:-1])
        last = last.reshape(-1) - 1
        flat_active, flat_result = active.reshape(-1, n), result.reshape(-1, n)
        rows = np.flatnonzero(last >= 0)
        flat_result[rows, last[rows]] |= flat_active[rows, last[rows]]
        result = flat_result.reshape(active.shape)
    return result
