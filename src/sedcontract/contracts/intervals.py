"""Maximal intervals of the reference and prediction traces, row by row, and the overlap
structure between them (counts and candidate pairs) in vectorised form."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sedcontract.traces.activity import runs


@dataclass(frozen=True)
class Intervals:
    """Half-open frame intervals ``[start, end)``, sorted by (row, start); disjoint in a row."""

    row: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, active: np.ndarray, lengths: np.ndarray | None) -> Intervals:
        active = np.asarray(active)
        rows = int(np.prod(active.shape[:-1], dtype=np.int64))
        row, start, end = runs(active.reshape(rows, active.shape[-1]), lengths)
        return cls(row, start, end)

    def __len__(self) -> int:
        return len(self.row)

    def row_bounds(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """``first[r], stop[r]``: the index range of row r's intervals."""
        first = np.searchsorted(self.row, np.arange(rows), side="left")
        stop = np.searchsorted(self.row, np.arange(rows), side="right")
        return first, stop


def overlap_counts(around: Intervals, counted: Intervals, n: int) -> np.ndarray:
    """For each interval of ``around``: how many intervals of ``counted`` in the same row share
    at least one frame with it."""
    if len(around) == 0:
        return np.zeros(0, dtype=np.int64)
    key = n + 1
    starts = counted.row * key + counted.start
    ends = counted.row * key + counted.end
    begun = np.searchsorted(starts, around.row * key + around.end, side="left")
    finished = np.searchsorted(ends, around.row * key + around.start, side="right")
    return (begun - finished).astype(np.int64)


def same_row_pairs(ref: Intervals, pred: Intervals, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (ref index, pred index) pair in the same row, ordered by ref then pred onset."""
    first, stop = pred.row_bounds(rows)
    per_ref = (stop - first)[ref.row] if len(ref) else np.zeros(0, dtype=np.int64)
    ref_index = np.repeat(np.arange(len(ref)), per_ref)
    offsets = np.arange(len(ref_index)) - np.repeat(np.cumsum(per_ref) - per_ref, per_ref)
    pred_index = np.repeat(first[ref.row] if len(ref) else first[:0], per_ref) + offsets
    return ref_index.astype(np.int64), pred_index.astype(np.int64)
