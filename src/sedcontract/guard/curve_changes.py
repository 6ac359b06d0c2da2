"""Where each count of the standard contract changes as the threshold falls, read off one
clip's frame scores: the runs of frames on the grid, the windows of the frame clauses, the
reference rows each run overlaps, kept as ``(key, value, change)`` pairs (memory follows runs
and score changes, never the number of thresholds). :mod:`sedcontract.guard.curves` sums them
into curves."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.syntax import Bound
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces.decision import filtered
from sedcontract.traces.grid import project_us, to_us
from sedcontract.traces.score_files import ScoreTable

FRAME_CLAUSES = ("onset", "offset", "silence")


EVENT_CLAUSES = ("missed", "false", "fragmentation")


DIAGNOSTICS = ("late_onset", "early_onset", "late_release", "early_release", "merge", "leakage")


INF = math.inf


BATCH_CELLS = 1_000_000  # grid cells (frames × rows) handled at once: bounds the memory


@dataclass(frozen=True)
class Curve:
    """Satisfied and obligation counts of one coordinate (one class, or the union trace) as
    step functions of the threshold: at ``t`` they are ``base`` plus the sum of the changes
    at every value above ``t`` (``values`` descending, distinct)."""

    values: np.ndarray      # descending breakpoints (score values; +inf possible)
    satisfied: np.ndarray   # cumulative counts: at values[i+1] <= t < values[i], index i
    obligations: np.ndarray
    base: tuple[int, int]   # (satisfied, obligations) with no frame active

    def at(self, t: float) -> tuple[int, int]:
        """``(satisfied, obligations)`` at threshold ``t`` (active iff score > t)."""
        sat, obl = self.counts(np.array([t], dtype=np.float64))
        return int(sat[0]), int(obl[0])

    def counts(self, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The satisfied and obligation counts at each of ``thresholds`` at once."""
        above = np.searchsorted(-self.values, -np.asarray(thresholds), side="left")  # > t
        at = np.maximum(above - 1, 0)
        if not len(self.values):
            return np.full(len(above), self.base[0]), np.full(len(above), self.base[1])
        return (np.where(above == 0, self.base[0], self.satisfied[at]),
                np.where(above == 0, self.base[1], self.obligations[at]))

    @property
    def thresholds(self) -> np.ndarray:
        """The values at which a count changes (ascending)."""
        return self.values[::-1]

    def changes(self) -> tuple[np.ndarray, np.ndarray]:
        """The satisfied and obligation changes at each of ``values``."""
        return (np.diff(self.satisfied, prepend=self.base[0]),
                np.diff(self.obligations, prepend=self.base[1]))



class CurveChanges:
    """The changes of one coordinate for every key (a class, and the union trace last): the
    counts with nothing active, and ``(key, value, satisfied change, obligation change)``
    meaning "for thresholds below ``value``, add these"."""

    def __init__(self, keys: int) -> None:
        self.keys = keys
        self.base = np.zeros((keys, 2), dtype=np.int64)
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.compacted = 0  # changes held after the last compaction
        self.held = 0  # changes held now

    def add_base(self, key: np.ndarray, sat: Any, obl: Any) -> None:
        """Add (sat, obl) with nothing active, for each key."""
        key = np.asarray(key, dtype=np.int64)
        if not len(key):
            return
        low = int(key.min())  # the keys met only (per clip, a batch's clips of many)
        span = int(key.max()) - low + 1
        for column, weight in ((0, sat), (1, obl)):
            weights = np.broadcast_to(np.asarray(weight, dtype=np.float64), key.shape)
            self.base[low:low + span, column] += np.rint(np.bincount(
                key - low, weights, span)).astype(np.int64)

    def add(self, key: np.ndarray, value: np.ndarray, sat: Any, obl: Any) -> None:
        key, value = np.asarray(key, dtype=np.int64), np.asarray(value, dtype=np.float64)
        live = value > -INF  # "below -inf" holds for no threshold
        if not live.any():
            return
        shape = key.shape
        obl = np.asarray(obl, dtype=np.int64)  # none at all: kept as None (no memory)
        self.held += int(live.sum())
        self.parts.append((key[live].astype(np.int32), value[live],
                           np.broadcast_to(np.asarray(sat, dtype=np.int64), shape)[live],
                           None if obl.ndim == 0 and obl == 0 else
                           np.broadcast_to(obl, shape)[live]))

    def interval(self, key: np.ndarray, lo: np.ndarray, hi: np.ndarray, sat: int,
                 obl: int) -> None:
        """Add ``[lo <= t < hi]`` times (sat, obl) for each key."""
        keep = lo < hi
        self.add(key[keep], hi[keep], sat, obl)
        self.add(key[keep], lo[keep], -sat, -obl)

    def compact(self, lazy: bool = False) -> None:
        """The changes summed per key and value (descending) and zero changes dropped: memory
        follows the distinct score values, not the frames added. ``lazy``: only once the
        changes held have doubled since the last compaction, so that each change is sorted
        O(log n) times in all."""
        held = self.held
        if not held or (len(self.parts) == 1 and held == self.compacted) or \
                (lazy and held < max(BATCH_CELLS, 2 * self.compacted)):
            return
        key, value, sat = (np.concatenate([part[j] for part in self.parts]) for j in range(3))
        obl = None if all(part[3] is None for part in self.parts) else np.concatenate(
            [np.zeros(len(part[0]), np.int64) if part[3] is None else part[3]
             for part in self.parts])
        self.parts.clear()
        order = np.argsort(-value)  # then by key, stably (a radix sort on few keys)
        order = order[np.argsort(key[order].astype(np.int16 if self.keys < 2 ** 15 else
                                                   np.int64), kind="stable")]
        key, value = key[order], value[order]
        new = np.ones(len(key), dtype=bool)
        new[1:] = (key[1:] != key[:-1]) | (value[1:] != value[:-1])
        at = np.flatnonzero(new)
        key, value = key[at], value[at]
        d_sat = np.add.reduceat(sat[order], at) if len(at) else sat[:0]
        d_obl = None if obl is None else np.add.reduceat(obl[order], at) if len(at) else obl[:0]
        del order
        changed = d_sat != 0 if d_obl is None else (d_sat != 0) | (d_obl != 0)
        self.parts = [(key[changed], value[changed], d_sat[changed],
                       None if d_obl is None else d_obl[changed])]
        self.compacted = self.held = int(changed.sum())

    def curves(self) -> list[Curve]:
        """Each key's :class:`Curve`."""
        self.compact()
        key, value, sat, obl = self.parts[0] if self.parts else (
            np.zeros(0, dtype=np.int32), np.zeros(0), np.zeros(0, dtype=np.int64), None)
        bounds = np.searchsorted(key, np.arange(self.keys + 1))
        out = []
        for k in range(self.keys):
            base = (int(self.base[k, 0]), int(self.base[k, 1]))
            mine = slice(bounds[k], bounds[k + 1])
            n = bounds[k + 1] - bounds[k]
            # obligations that never change are one number, not an array
            held = np.broadcast_to(np.int64(base[1]), (n,)) if obl is None else \
                base[1] + np.cumsum(obl[mine])
            out.append(Curve(value[mine], base[0] + np.cumsum(sat[mine]), held, base))
        return out


def _grouped_indicator(group: np.ndarray, lo: np.ndarray, hi: np.ndarray, exactly_one: bool
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For intervals ``[lo, hi)`` of ``t`` tagged by ``group``: where, in each group, the
    number of intervals holding ``t`` is at least one (``exactly_one``: exactly one) changes,
    as ``(group, value, change)``: for thresholds below ``value``, add ``change``."""
    keep = lo < hi
    group, lo, hi = group[keep], lo[keep], hi[keep]
    values = np.r_[hi, lo]
    groups = np.r_[group, group]
    steps = np.r_[np.ones(len(hi), dtype=np.int64), -np.ones(len(lo), dtype=np.int64)]
    live = values > -INF
    values, groups, steps = values[live], groups[live], steps[live]
    if not len(values):
        return groups, values, steps
    order = np.lexsort((-values, groups))
    values, groups, steps = values[order], groups[order], steps[order]
    new = np.r_[True, (groups[1:] != groups[:-1]) | (values[1:] != values[:-1])]
    at = np.flatnonzero(new)
    values, groups, steps = values[at], groups[at], np.add.reduceat(steps, at)
    total = np.cumsum(steps)
    first = np.r_[True, groups[1:] != groups[:-1]]
    offset = np.maximum.accumulate(np.where(first, np.arange(len(total)), 0))
    count = total - (total[offset] - steps[offset])  # running count within the group
    held = (count == 1) if exactly_one else (count >= 1)
    before = np.r_[False, held[:-1]]
    before[first] = False
    change = held.astype(np.int64) - before
    nonzero = change != 0
    return groups[nonzero], values[nonzero], change[nonzero]


def expand_first(first: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``[first[i], first[i] + count[i])``: each member's range and its value."""
    group = np.repeat(np.arange(len(count)), count)
    start = np.r_[0, np.cumsum(count)[:-1]] if len(count) else np.zeros(0, dtype=np.int64)
    return group, np.arange(int(count.sum())) - np.repeat(start - first, count)


class _Segments:
    """Rows of grid scores laid end to end, as maximal segments of constant score (``pos``:
    each segment's first position, ascending; a row starts a segment): every look-up of a
    frame's score, or of the least or greatest over frames, is a search among segments, so
    the work follows score changes, never frames."""

    def __init__(self, pos: np.ndarray, val: np.ndarray, row: np.ndarray,
                 row_start: np.ndarray) -> None:
        self.pos, self.val, self.row, self.row_start = pos, val, row, row_start
        first = np.r_[True, row[1:] != row[:-1]] if len(row) else np.zeros(0, dtype=bool)
        self.prev = np.r_[-INF, val[:-1]] if len(val) else np.zeros(0)
        self.prev[first] = -INF
        self.end = np.r_[pos[1:], 0] if len(pos) else np.zeros(0, dtype=np.int64)
        last = np.r_[first[1:], True] if len(pos) else first
        self.end[last] = row_start[1:][row[last]]

    def of(self, x: np.ndarray) -> np.ndarray:
        """The segment holding each position."""
        return np.searchsorted(self.pos, x, side="right") - 1

    def at(self, x: np.ndarray) -> np.ndarray:
        """The score at each position."""
        return self.val[self.of(x)] if len(x) else np.zeros(0)

    def before(self, x: np.ndarray, first: np.ndarray) -> np.ndarray:
        """The score at each position's previous frame, ``-inf`` at a row's first frame."""
        out = np.full(len(x), -INF)
        inner = x > first
        out[inner] = self.at(x[inner] - 1)
        return out

    def reduce(self, fn: np.ufunc, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``fn`` over the scores of frames ``[a, b)`` (non-empty, within a row)."""
        if not len(a):
            return np.zeros(0)
        index = np.empty(2 * len(a), dtype=np.int64)
        index[0::2], index[1::2] = self.of(a), self.of(b - 1) + 1
        return fn.reduceat(np.r_[self.val, 0.0], index)[0::2]

    def starts(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """Where a run of ``g > t`` starts inside each stretch ``[a, b)`` (non-empty, within a
        row), as intervals of ``t`` tagged by the stretch: its first frame when active, then
        each rise of the score inside it."""
        j0 = self.of(a) + 1
        group, j = expand_first(j0, self.of(b - 1) + 1 - j0)
        return (np.r_[np.arange(len(a)), group], np.r_[np.full(len(a), -INF), self.prev[j]],
                np.r_[self.at(a), self.val[j]])


def _cover(starts: np.ndarray, ends: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Frames before each position ``x`` covered by disjoint sorted intervals."""
    done = np.r_[0, np.cumsum(ends - starts)]
    i = np.searchsorted(starts, x, side="right")
    past = np.where(i > 0, ends[np.maximum(i - 1, 0)] - x, 0) if len(starts) else 0
    return done[i] - np.maximum(past, 0)


def _window_changes(counts: Mapping[str, CurveChanges], seg: _Segments, kind: str,
                    names: Sequence[str], positions: np.ndarray, rows: np.ndarray,
                    lo: np.ndarray, hi: np.ndarray, j0: np.ndarray, count: np.ndarray,
                    row_key: np.ndarray, edges: str) -> None:
    """The onset (``kind`` ``on``) or offset clauses of reference boundaries at
    ``positions``: a predicted boundary at a segment's first frame in ``[lo, hi]`` (segments
    ``j0`` on, ``count`` of them) holds an interval of ``t``; the clause holds where any does,
    its diagnostics with the prediction active (inactive) at the boundary too."""
    row_first, row_end = seg.row_start[:-1], seg.row_start[1:]
    group, j = expand_first(j0, count)
    g, g_before = seg.val[j], seg.prev[j]
    if kind == "on":
        window_lo, window_hi = g_before, g
        if edges == "open":
            window_lo = np.where(seg.pos[j] == row_first[rows][group], INF, window_lo)
    else:
        window_lo, window_hi = g, g_before
        if edges == "closed":  # a run still active at the last frame ends there
            last = np.flatnonzero(hi == row_end[rows] - 1)
            g_last = seg.at(hi[last])
            group = np.r_[group, last]
            window_lo = np.r_[window_lo, np.full(len(last), -INF)]
            window_hi = np.r_[window_hi, np.maximum(g_last, seg.before(
                hi[last], row_first[rows][last]))]
    boundary_key = row_key[rows]
    here = seg.at(positions)
    for name, extra in zip(names, (None, "active", "inactive"), strict=True):
        c = counts[name]
        c.add_base(boundary_key, 0, 1)
        lows, highs, groups = window_lo, window_hi, group
        if extra is not None:  # active at the boundary: t < g; inactive: t >= g
            lows = np.r_[window_lo, np.full(len(positions), -INF) if extra == "active"
                         else here]
            highs = np.r_[window_hi, here if extra == "active"
                          else np.full(len(positions), INF)]
            groups = np.r_[group, np.arange(len(positions))]
        held_group, held_value, change = _grouped_indicator(groups, lows, highs, False)
        c.add(boundary_key[held_group], held_value, change, 0)


def row_changes(counts: Mapping[str, CurveChanges], seg: _Segments, row_key: np.ndarray,
                 run_row: np.ndarray, run_a: np.ndarray, run_b: np.ndarray, eps: int,
                 edges: str) -> None:
    """Every coordinate of rows of grid scores (``seg``) against their reference runs
    (``[run_a, run_b)`` of row ``run_row``, sorted, maximal), added to ``counts``."""
    _boundary_changes(counts, seg, row_key, run_row, run_a, run_b, eps, edges)
    _silence_changes(counts, seg, row_key, run_row, run_a, run_b, eps)
    _coverage_changes(counts, seg, row_key[run_row], run_a, run_b)
    _false_and_merge_changes(counts, seg, row_key, run_row, run_a, run_b)


def _boundary_changes(counts: Mapping[str, CurveChanges], seg: _Segments, row_key: np.ndarray,
                      run_row: np.ndarray, run_a: np.ndarray, run_b: np.ndarray, eps: int,
                      edges: str) -> None:
    """Onset and offset with their directional diagnostics: predicted boundaries within
    ``eps`` of each reference boundary, as intervals of the threshold."""
    row_first, row_end = seg.row_start[:-1], seg.row_start[1:]
    on_keep = run_a > row_first[run_row] if edges == "open" else np.ones(len(run_a), bool)
    off_at = run_b.copy()
    at_end = run_b == row_end[run_row]
    if edges == "closed":
        off_at[at_end] -= 1
    off_keep = ~at_end if edges == "open" else np.ones(len(run_b), bool)
    for positions, rows, kind, names in (
            (run_a[on_keep], run_row[on_keep], "on", ("onset", "late_onset", "early_onset")),
            (off_at[off_keep], run_row[off_keep], "off",
             ("offset", "early_release", "late_release"))):
        # only where the score changes (a segment's first frame) can a boundary lie: the
        # boundaries in blocks of at most BATCH_CELLS such frames (memory stays bounded
        # however wide eps is)
        lo = np.maximum(row_first[rows], positions - eps)
        hi = np.minimum(row_end[rows] - 1, positions + eps)
        j0 = np.searchsorted(seg.pos, lo, side="left")
        count = np.searchsorted(seg.pos, hi, side="right") - j0
        held = np.cumsum(count)
        first = 0
        while first < len(count):
            before = int(held[first - 1]) if first else 0
            stop = int(np.searchsorted(held, before + BATCH_CELLS, side="right"))
            stop = min(max(stop, first + 1), len(count))
            part = slice(first, stop)
            _window_changes(counts, seg, kind, names, positions[part], rows[part], lo[part],
                            hi[part], j0[part], count[part], row_key, edges)
            first = stop


def _silence_changes(counts: Mapping[str, CurveChanges], seg: _Segments, row_key: np.ndarray,
                     run_row: np.ndarray, run_a: np.ndarray, run_b: np.ndarray, eps: int) -> None:
    """Silence far from reference activity and leakage next to it, the frames of each
    segment."""
    row_first, row_end = seg.row_start[:-1], seg.row_start[1:]
    near_a = np.maximum(row_first[run_row], run_a - eps)
    near_b = np.minimum(row_end[run_row], run_b + eps)
    new = np.r_[True, (run_row[1:] != run_row[:-1]) | (near_a[1:] > near_b[:-1])] \
        if len(run_a) else np.zeros(0, dtype=bool)
    start_of = np.flatnonzero(new)
    near_a, near_b = near_a[new], near_b[np.r_[start_of[1:] - 1, len(new) - 1]] \
        if len(start_of) else near_b[:0]
    near = _cover(near_a, near_b, seg.end) - _cover(near_a, near_b, seg.pos)
    on_ref = _cover(run_a, run_b, seg.end) - _cover(run_a, run_b, seg.pos)
    seg_key = row_key[seg.row]
    for name, frames in (("silence", seg.end - seg.pos - near), ("leakage", near - on_ref)):
        c = counts[name]
        c.add_base(seg_key, frames, frames)
        c.add(seg_key, seg.val, -frames, 0)


def _coverage_changes(counts: Mapping[str, CurveChanges], seg: _Segments, run_key: np.ndarray,
                      run_a: np.ndarray, run_b: np.ndarray) -> None:
    """Missed and fragmentation, per reference run (``run_key``: each run's key)."""
    top = seg.reduce(np.maximum, run_a, run_b)
    counts["missed"].add_base(run_key, 0, 1)
    counts["missed"].add(run_key, top, 1, 0)
    frag = counts["fragmentation"]
    frag.add(run_key, top, 0, 1)
    held_group, held_value, change = _grouped_indicator(*seg.starts(run_a, run_b), True)
    frag.add(run_key[held_group], held_value, change, 0)


def _false_and_merge_changes(counts: Mapping[str, CurveChanges], seg: _Segments,
                             row_key: np.ndarray, run_row: np.ndarray, run_a: np.ndarray,
                             run_b: np.ndarray) -> None:
    """False and merge: every run of g > t, less those wholly in a stretch without
    reference activity (inclusion and exclusion at the stretch's two ends)."""
    row_first, row_end = seg.row_start[:-1], seg.row_start[1:]
    run_key, seg_key = row_key[run_row], row_key[seg.row]
    false, merge = counts["false"], counts["merge"]
    false.interval(seg_key, seg.prev, seg.val, 1, 1)
    merge.interval(seg_key, seg.prev, seg.val, 1, 1)
    same = np.zeros(len(run_row), dtype=bool)  # a run after another of its row
    same[1:] = run_row[1:] == run_row[:-1]
    last_run = np.r_[~same[1:], True] if len(run_row) else same
    without = np.setdiff1d(np.flatnonzero(row_end > row_first), run_row)
    # stretches without reference activity: before each run, after a row's last, whole rows
    quiet_row = np.concatenate([run_row, run_row[last_run], without])
    quiet_a = np.concatenate([np.where(same, np.roll(run_b, 1), row_first[run_row]),
                              run_b[last_run], row_first[without]])
    quiet_b = np.concatenate([run_a, row_end[run_row[last_run]], row_end[without]])
    keep = quiet_a < quiet_b
    order = np.argsort(quiet_a[keep], kind="stable")
    quiet_row, quiet_a, quiet_b = (x[keep][order] for x in (quiet_row, quiet_a, quiet_b))
    quiet_key = row_key[quiet_row]
    groups, lows, highs = seg.starts(quiet_a, quiet_b)
    false.interval(quiet_key[groups], lows, highs, -1, 0)
    merge.interval(quiet_key[groups], lows, highs, -1, -1)
    has_left = quiet_a != row_first[quiet_row]
    has_right = quiet_b != row_end[quiet_row]
    g_a, g_last = seg.at(quiet_a), seg.at(quiet_b - 1)
    g_left = seg.before(quiet_a, row_first[quiet_row])
    g_right = np.full(len(quiet_b), -INF)
    g_right[has_right] = seg.at(quiet_b[has_right])
    left, right = np.minimum(g_a, g_left), np.minimum(g_last, g_right)
    lowest = seg.reduce(np.minimum, quiet_a, quiet_b)
    both = has_left & has_right
    span = np.minimum(np.minimum(lowest, g_left), g_right)
    for c, obl in ((false, 0), (merge, 1)):
        c.add(quiet_key[has_left], left[has_left], 1, obl)
        c.add(quiet_key[has_right], right[has_right], 1, obl)
        c.add(quiet_key[both], span[both], -1, -obl)
    # a run over m >= 2 reference runs bridges the m - 1 quiet stretches between them
    same_row = same[1:]
    if same_row.any():
        i = np.flatnonzero(same_row)
        bridge = seg.reduce(np.minimum, run_b[i] - 1, run_a[i + 1] + 1)
        merge.add(run_key[i], bridge, -1, 0)
        run_low = seg.reduce(np.minimum, run_a, run_b)
        bridges = np.full(len(run_a), np.nan)
        bridges[i] = bridge
        j = np.flatnonzero(same_row[:-1] & same_row[1:])
        if len(j):
            across = np.minimum(np.minimum(bridges[j], bridges[j + 1]), run_low[j + 1])
            merge.add(run_key[j], across, 1, 0)


def score_spans(table: ScoreTable, filters: Any, hop_us: int, projection: str,
                duration_us: int, where: str, edge: str = "reflect"
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A clip's score rows and the gaps between neighbours on the grid, in time order: first
    and end frames, each with its scores (a gap takes the lower of its two neighbours: one
    event spans it only when both rows are active), after the median ``filters`` (with their
    ``edge`` rule); rows are cut at the clip's duration."""
    if np.isnan(table.scores).any():
        row, column = np.argwhere(np.isnan(table.scores))[0]
        raise SedContractError(f"{where}: row {int(table.lines[row])}, class "
                               f"{table.classes[column]!r}: NaN is no score")
    on, off = to_us(table.onset), to_us(table.offset)
    if np.any(off[:-1] > on[1:]) or np.any(off <= on):
        raise SedContractError(f"{where}: score rows that overlap (or are not sorted) have no "
                               "threshold-free curve here; give thresholds to audit at")
    scores = table.scores
    if filters is not None and len(on):
        try:
            scores = filtered(scores, filters, table.hop, edge)  # as the decision takes it
        except TraceFormatError as exc:
            raise TraceFormatError(exc.message, path=where) from None
    end_us = np.minimum(off, duration_us)
    gap = off[:-1] < on[1:]
    if gap.any():  # rows and gaps interleaved in time order
        spans_on = np.concatenate([on, off[:-1][gap]])
        spans_off = np.concatenate([end_us, np.minimum(on[1:][gap], end_us[1:][gap])])
        scores = np.concatenate([scores, np.minimum(scores[:-1][gap], scores[1:][gap])])
        order = np.argsort(spans_on, kind="stable")
        on, end_us, scores = spans_on[order], spans_off[order], scores[order]
    live = end_us > on  # rows past the duration cover no frame
    first, end = project_us(on[live], end_us[live], hop_us, projection)
    return first, end, scores[live]


def grid_segments(clips: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                   lengths: np.ndarray, keys: int) -> tuple[_Segments, np.ndarray]:
    """The grid scores of a batch of clips (each clip's spans, :func:`score_spans`; ``lengths``:
    its frames) as :class:`_Segments` of ``keys`` rows per clip (each class, then the union
    trace: the highest score), key-major (row ``key · clips + clip``); and each row's key.
    A frame takes the highest score of the spans it falls in, ``-inf`` outside every one."""
    n_clips = len(clips)
    offset = np.r_[0, np.cumsum(lengths)]
    total = int(offset[-1])
    count = np.array([len(c[0]) for c in clips], dtype=np.int64)
    clip_of = np.repeat(np.arange(n_clips), count)
    end = np.minimum(np.concatenate([c[1] for c in clips]), lengths[clip_of])
    first = np.minimum(np.concatenate([c[0] for c in clips]), end) + offset[:-1][clip_of]
    end = end + offset[:-1][clip_of]
    values = np.concatenate([c[2] for c in clips])
    # pieces: between consecutive span edges; the spans covering one are a range of them
    cuts = np.sort(np.concatenate([offset[:-1][lengths > 0], first, end]), kind="stable")
    cuts = cuts[np.r_[True, cuts[1:] != cuts[:-1]] & (cuts < total)] if len(cuts) else cuts
    lo = np.searchsorted(end, cuts, side="right")
    hi = np.searchsorted(first, cuts, side="right")
    padded = np.r_[values, np.full((2, values.shape[1]), -INF)]  # an empty range reads these
    if np.all(hi - lo <= 1):  # a piece in one span at most (always under center)
        piece = padded[np.where(hi > lo, lo, len(values))]
    else:
        index = np.empty(2 * len(cuts), dtype=np.int64)
        index[0::2], index[1::2] = lo, np.maximum(hi, lo + 1)
        piece = np.maximum.reduceat(padded, index, axis=0)[0::2]
        piece[lo >= hi] = -INF
    union = piece.max(axis=1, initial=-INF) if piece.shape[1] else np.full(len(cuts), -INF)
    piece = np.c_[piece, union]
    piece_clip = np.searchsorted(offset[:-1], cuts, side="right") - 1
    starts = np.r_[True, piece_clip[1:] != piece_clip[:-1]] if len(cuts) else np.zeros(0, bool)
    changed = np.ones(piece.shape, dtype=bool)
    changed[1:] = piece[1:] != piece[:-1]
    changed[starts] = True
    p, key = np.nonzero(changed)  # piece-major; then key-major by a stable sort of the keys
    by_key = np.argsort(key.astype(np.int16 if keys < 2 ** 15 else np.int64), kind="stable")
    p, key = p[by_key], key[by_key]
    row = key * n_clips + piece_clip[p]
    row_start = np.r_[(np.arange(keys)[:, None] * total + offset[:-1][None, :]).ravel(),
                      keys * total]
    pos = row_start[row] + cuts[p] - offset[:-1][piece_clip[p]]
    return (_Segments(pos, piece[p, key], row, row_start),
            np.repeat(np.arange(keys), n_clips))


def eps_frames(policy: AuditPolicy) -> int:
    return policy.resolver().frames(Bound(name="eps"))
