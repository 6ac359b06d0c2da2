"""Boundary F1: onsets or offsets detected within a number of frames, one to one."""

from __future__ import annotations

import numpy as np

from sedcontract.contracts.matching import sweep
from sedcontract.scores.counts import MetricResult, row_sums
from sedcontract.traces import TraceSet
from sedcontract.traces.intervals import Intervals, row_keys


def _boundaries(runs: Intervals, lengths: np.ndarray, kind: str,
                edges: str) -> tuple[np.ndarray, np.ndarray]:
    """``(row, frame)`` of every onset (a run's first frame) or offset (the first frame after
    it) under the clip-edge policy: ``open`` drops those at the clip edges, ``closed`` keeps
    onsets at frame 0 and puts an offset at the clip end on the clip's last frame."""
    length = lengths[runs.row]
    if kind == "onset":
        keep = (runs.start > 0) | (edges == "closed")
        return runs.row[keep], runs.start[keep]
    position = np.where(runs.end >= length, length - 1, runs.end)
    keep = (runs.end < length) | (edges == "closed")
    return runs.row[keep], position[keep]


def boundary_metrics(traces: TraceSet, *, frames: int, kind: str = "onset",
                     edges: str = "open") -> MetricResult:
    """Boundary F1: reference onsets (or offsets) detected by a predicted one of the same class
    within ``frames`` frames, one to one, on the contract grid (the guard vector's grid and
    clip-edge policy)."""
    lengths = traces.row_lengths("typed")
    r_row, r_pos = _boundaries(traces.runs["ref"], lengths, kind, edges)
    p_row, p_pos = _boundaries(traces.runs["pred"], lengths, kind, edges)
    # rows are sorted and positions sorted within a row, so each reference's predictions in
    # reach are one range and the ranges move forward: earliest-first (the sweep) is optimal
    key = row_keys(np.concatenate([p_row, r_row]), p_pos, r_pos - frames, r_pos + frames)
    placed = key(p_row, p_pos)
    lo = np.searchsorted(placed, key(r_row, r_pos - frames), side="left")
    hi = np.searchsorted(placed, key(r_row, r_pos + frames), side="right")
    hit, _ = sweep(np.arange(len(r_row), dtype=np.int64), lo, hi)
    n_rows = traces.rows("typed")
    return MetricResult.of_rows(traces.clips, traces.classes, row_sums(r_row[hit], None, n_rows),
                                row_sums(r_row, None, n_rows), row_sums(p_row, None, n_rows))
