"""Maximal runs of activity as sorted half-open frame intervals per row, and the overlap
structure between two such sets (ranges, counts, candidate pairs) found by sorted search.

Because the intervals of one row are disjoint and sorted, both their starts and their ends
increase, so the intervals of one side that overlap an interval of the other side form one
contiguous index range: pairs cost what they are, never the cross product of a row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sedcontract.traces.activity import runs

_EMPTY = np.zeros(0, dtype=np.int64)
# candidate pairs refused above this (a relation or collar that relates almost everything to
# everything in one clip): 16,777,216 pairs
MAX_PAIRS = 1 << 24


@dataclass(frozen=True)
class Intervals:
    """Half-open intervals ``[start, end)`` (frames, or any numbers), sorted by (row, start);
    in one row they are disjoint and do not touch (maximal runs)."""

    row: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, active: np.ndarray, lengths: np.ndarray | None) -> Intervals:
        """The maximal runs of Boolean activity ``[..., n]`` (rows flattened)."""
        active = np.asarray(active)
        rows = int(np.prod(active.shape[:-1], dtype=np.int64))
        row, start, end = runs(active.reshape(rows, active.shape[-1]), lengths)
        return cls(row, start, end)

    @classmethod
    def merged(cls, row: np.ndarray, start: np.ndarray, end: np.ndarray, *,
               ordered: bool = False, keep_empty: bool = False) -> Intervals:
        """Maximal runs of any intervals: empty ones dropped, overlapping or touching ones of a
        row joined. ``ordered``: the input is already sorted by (row, start), so no sort.
        ``keep_empty``: an empty interval that touches no other stays, as an empty run (events
        of zero length still count as events)."""
        row = np.asarray(row, dtype=np.int64)
        start, end = np.asarray(start), np.asarray(end)
        if not keep_empty:
            keep = end > start
            row, start, end = row[keep], start[keep], end[keep]
        if not len(row):
            return cls(_EMPTY, _EMPTY, _EMPTY)
        key = row_keys(row, start, end)
        if not ordered:
            # a stable sort of one key finds the sorted pieces of its input (timsort): joining
            # a few sorted run sets costs about what reading them costs
            order = np.argsort(key(row, start), kind="stable")
            row, start, end = row[order], start[order], end[order]
        key_end = np.maximum.accumulate(key(row, end))  # the running end within the row
        new = np.ones(len(row), dtype=bool)  # a run starts past the running end of its row
        new[1:] = (row[1:] != row[:-1]) | (key(row[1:], start[1:]) > key_end[:-1])
        first = np.flatnonzero(new)
        last_end = np.maximum.reduceat(end, first)
        return cls(row[first], start[first], last_end)

    def __len__(self) -> int:
        return len(self.row)

    def kept(self, keep: np.ndarray) -> Intervals:
        """The intervals where ``keep`` (a mask or sorted indices) holds."""
        return Intervals(self.row[keep], self.start[keep], self.end[keep])

    def rows_between(self, first: int, stop: int) -> Intervals:
        """The intervals of rows ``[first, stop)``, renumbered from 0."""
        lo, hi = np.searchsorted(self.row, [first, stop], side="left")
        return Intervals(self.row[lo:hi] - first, self.start[lo:hi], self.end[lo:hi])

    def paint(self, rows: int, n: int) -> np.ndarray:
        """Boolean activity ``[rows, n]``; intervals are clipped to ``n`` frames."""
        start, end = np.minimum(self.start, n), np.minimum(self.end, n)
        diff = np.zeros((rows, n + 1), dtype=np.int8)  # runs never overlap: sums stay 0/1
        np.add.at(diff, (self.row, start), 1)
        np.add.at(diff, (self.row, end), -1)
        return np.cumsum(diff[:, :n], axis=1, dtype=np.int8).astype(bool)


def overlap_ranges(around: Intervals, counted: Intervals,
                   reach: np.ndarray | int = 0) -> tuple[np.ndarray, np.ndarray]:
    """For each interval of ``around`` widened by ``reach`` frames on both sides: the index
    range ``[lo, hi)`` of the intervals of ``counted`` in its row that share a frame with it."""
    if len(around) == 0 or len(counted) == 0:
        return np.zeros(len(around), dtype=np.int64), np.zeros(len(around), dtype=np.int64)
    # rows that hold no counted interval have nothing to search (often most of them)
    present = np.zeros(max(int(counted.row.max()), int(around.row.max())) + 1, dtype=bool)
    present[counted.row] = True
    asked = np.flatnonzero(present[around.row])
    if len(asked) < len(around):
        lo = np.zeros(len(around), dtype=np.int64)
        hi = np.zeros(len(around), dtype=np.int64)
        some = Intervals(around.row[asked], around.start[asked], around.end[asked])
        lo[asked], hi[asked] = overlap_ranges(some, counted, reach if np.ndim(reach) == 0
                                              else np.asarray(reach)[asked])
        return lo, hi
    low, high = around.start - reach, around.end + reach
    if all(np.issubdtype(x.dtype, np.integer) for x in (counted.start, low)):
        key = row_keys(np.concatenate([counted.row, around.row]), counted.start, counted.end,
                       low, high)
        lo = np.searchsorted(key(counted.row, counted.end), key(around.row, low), side="right")
        hi = np.searchsorted(key(counted.row, counted.start), key(around.row, high),
                             side="left")
    else:  # any numbers: ranks among the counted intervals' own ends (few), searched exactly
        values = np.unique(np.concatenate([counted.start, counted.end]))
        stride = len(values) + 1
        # intervals in a row ending at or before `low`; starting before `high`
        lo = np.searchsorted(counted.row * stride + np.searchsorted(values, counted.end),
                             around.row * stride + np.searchsorted(values, low, side="right")
                             - 1, side="right")
        hi = np.searchsorted(counted.row * stride + np.searchsorted(values, counted.start),
                             around.row * stride + np.searchsorted(values, high), side="left")
    return lo.astype(np.int64), np.maximum(hi, lo).astype(np.int64)


def row_keys(rows: np.ndarray, *positions: np.ndarray
             ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A key ``row · stride + place`` that orders (row, position) pairs exactly: the position
    itself when integers leave room below 2⁶², else its rank among the distinct positions
    (any numbers: frames, microseconds, seconds), so no size of input overflows."""
    top = int(rows.max()) + 1 if len(rows) else 1
    present = [np.ravel(p) for p in positions if np.size(p)]
    if present and all(np.issubdtype(p.dtype, np.integer) for p in present):
        low = min(int(p.min()) for p in present)
        high = max(int(p.max()) for p in present)
        stride = high - low + 2
        if top * stride < 2**62:
            return lambda row, position: row * stride + (position - low)
    values = np.unique(np.concatenate([np.ravel(p) for p in positions]))
    stride = len(values) + 1
    return lambda row, position: row * stride + np.searchsorted(values, position)


def run_after(runs: Intervals, row: np.ndarray, position: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """For each ``(row, position)``: the index of the first interval of ``runs`` in that row
    that ends after ``position``, and whether there is one (where there is none the index is
    still a valid one): one sorted search, as the intervals of a row are disjoint and sorted."""
    if not len(runs) or not len(row):
        return np.zeros(len(row), dtype=np.int64), np.zeros(len(row), dtype=bool)
    key = row_keys(np.concatenate([runs.row, row]), runs.end, position)
    index = np.searchsorted(key(runs.row, runs.end), key(row, position), side="right")
    found = index < len(runs)
    index[~found] = 0
    found &= runs.row[index] == row
    return index, found


def holds_at(runs: Intervals, row: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Whether an interval of ``runs`` in ``row`` holds ``position`` (each pair)."""
    index, found = run_after(runs, row, position)
    return found & (runs.start[index] <= position) if len(runs) else found


def overlap_counts(around: Intervals, counted: Intervals) -> np.ndarray:
    """For each interval of ``around``: how many intervals of ``counted`` in the same row share
    at least one frame with it."""
    lo, hi = overlap_ranges(around, counted)
    return hi - lo


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an array: ``np.unique`` without its extras, by a sort
    (numpy 2.4's hashed ``unique`` of many distinct integers is about 50× slower here)."""
    values = np.sort(np.ravel(values))
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` for every ``j`` in ``[lo[i], hi[i])``, ordered by ``i`` then ``j``."""
    width = hi - lo
    first = np.repeat(np.arange(len(lo), dtype=np.int64), width)
    offsets = np.arange(len(first), dtype=np.int64) - np.repeat(np.cumsum(width) - width, width)
    return first, np.repeat(lo, width) + offsets


def same_row_ranges(around: Intervals, counted: Intervals,
                    rows: int) -> tuple[np.ndarray, np.ndarray]:
    """For each interval of ``around``: the index range of every interval of ``counted`` in
    its row."""
    first = np.searchsorted(counted.row, np.arange(rows), side="left")
    stop = np.searchsorted(counted.row, np.arange(rows), side="right")
    return first[around.row], stop[around.row]
