"""The guard vector of score tables at every decision threshold, in one pass per clip and
class, exact: a frame is active iff its score is above the threshold ``t``, so each count of
the standard contract is a step function of ``t`` that changes only at score values. Every
obligation's satisfaction is a union of ``t``-intervals read off the frame scores (an onset
at frame ``k`` exists for ``t`` in ``[g[k-1], g[k])``), and a count is the sum of such
indicators, kept as ``(value, change)`` pairs: memory follows runs and score changes, never
the number of thresholds.

Supported exactly: the standard contract (its clauses and directional diagnostics) but
``duration``, whose matching is recomputed at each threshold :func:`guard_curves` is given;
projections ``center`` and ``any_overlap``; a median filter before the threshold; score
tables whose rows are sorted and do not overlap (gaps between rows allowed). One threshold
for every class: the union trace is active where any class's score is above it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sedcontract.audit.guard import audit, check_corpus
from sedcontract.contracts.contract import contract_hash, load_contract
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.syntax import Bound
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.activity import offset as offset_frames
from sedcontract.traces.activity import onset as onset_frames
from sedcontract.traces.decision import DecisionPolicy, filtered
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.grid import project_us, to_us
from sedcontract.traces.scores import ScoreTable, tables_to_events
from sedcontract.traces.traceset import TraceSet

__all__ = ["CURVE_COORDINATES", "Curve", "GuardCurves", "guard_curves"]

FRAME_CLAUSES = ("onset", "offset", "silence")
EVENT_CLAUSES = ("missed", "false", "fragmentation")
DIAGNOSTICS = ("late_onset", "early_onset", "late_release", "early_release", "merge", "leakage")
CURVE_COORDINATES = (*FRAME_CLAUSES, *EVENT_CLAUSES, *DIAGNOSTICS)  # exact at every threshold
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
        above = int(np.searchsorted(-self.values, -t, side="left"))  # values > t
        if above == 0:
            return self.base
        return int(self.satisfied[above - 1]), int(self.obligations[above - 1])

    @property
    def thresholds(self) -> np.ndarray:
        """The values at which a count changes (ascending)."""
        return self.values[::-1]


class _Counts:
    """The changes of one coordinate for every key (a class, and the union trace last): the
    counts with nothing active, and ``(key, value, satisfied change, obligation change)``
    meaning "for thresholds below ``value``, add these"."""

    def __init__(self, keys: int) -> None:
        self.keys = keys
        self.base = np.zeros((keys, 2), dtype=np.int64)
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add_base(self, key: np.ndarray, sat: Any, obl: Any) -> None:
        key = np.asarray(key, dtype=np.int64)
        np.add.at(self.base, (key, 0), np.broadcast_to(np.asarray(sat, dtype=np.int64),
                                                       key.shape))
        np.add.at(self.base, (key, 1), np.broadcast_to(np.asarray(obl, dtype=np.int64),
                                                       key.shape))

    def add(self, key: np.ndarray, value: np.ndarray, sat: Any, obl: Any) -> None:
        key, value = np.asarray(key, dtype=np.int64), np.asarray(value, dtype=np.float64)
        live = value > -INF  # "below -inf" holds for no threshold
        if not live.any():
            return
        shape = key.shape
        self.parts.append((key[live], value[live],
                           np.broadcast_to(np.asarray(sat, dtype=np.int64), shape)[live],
                           np.broadcast_to(np.asarray(obl, dtype=np.int64), shape)[live]))

    def interval(self, key: np.ndarray, lo: np.ndarray, hi: np.ndarray, sat: int,
                 obl: int) -> None:
        """Add ``[lo <= t < hi]`` times (sat, obl) for each key."""
        keep = lo < hi
        self.add(key[keep], hi[keep], sat, obl)
        self.add(key[keep], lo[keep], -sat, -obl)

    def compact(self) -> None:
        """The changes summed per key and value (descending) and zero changes dropped: memory
        follows the distinct score values, not the frames added."""
        if not self.parts:
            return
        key, value, sat, obl = (np.concatenate(x) for x in zip(*self.parts, strict=True))
        by_key = np.argsort(key, kind="stable")  # a few keys: split first, then sort values
        bounds = np.searchsorted(key[by_key], np.arange(self.keys + 1))
        parts = []
        for k in range(self.keys):
            mine = by_key[bounds[k]:bounds[k + 1]]
            unique, inverse = np.unique(-value[mine], return_inverse=True)
            d_sat = np.rint(np.bincount(inverse, weights=sat[mine], minlength=len(unique)))
            d_obl = np.rint(np.bincount(inverse, weights=obl[mine], minlength=len(unique)))
            changed = (d_sat != 0) | (d_obl != 0)
            parts.append((np.full(int(changed.sum()), k, dtype=np.int64), -unique[changed],
                          d_sat[changed].astype(np.int64), d_obl[changed].astype(np.int64)))
        self.parts = parts

    def curves(self) -> list[Curve]:
        """Each key's :class:`Curve`."""
        self.compact()
        out = []
        for k in range(self.keys):
            base = (int(self.base[k, 0]), int(self.base[k, 1]))
            _, value, sat, obl = self.parts[k] if self.parts else (None, np.zeros(0), np.zeros(
                0, dtype=np.int64), np.zeros(0, dtype=np.int64))
            out.append(Curve(value, base[0] + np.cumsum(sat), base[1] + np.cumsum(obl), base))
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


def _reduce(fn: np.ufunc, g: np.ndarray, starts: np.ndarray, ends: np.ndarray,
            empty: float) -> np.ndarray:
    """``fn`` over each ``g[starts[i]:ends[i]]`` (disjoint, ascending, non-empty)."""
    if not len(starts):
        return np.zeros(0)
    index = np.empty(2 * len(starts), dtype=np.int64)
    index[0::2], index[1::2] = starts, ends
    return fn.reduceat(np.r_[g, empty], index)[0::2]


def _runs_of(mask: np.ndarray, first: np.ndarray, last: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Maximal runs ``[start, end)`` of ``mask`` that do not cross a row boundary."""
    before = np.r_[False, mask[:-1]]
    before[first] = False
    after = np.r_[mask[1:], False]
    after[last] = False
    return np.flatnonzero(mask & ~before), np.flatnonzero(mask & ~after) + 1


def _batch_changes(counts: Mapping[str, _Counts], g: np.ndarray, ref: np.ndarray,
                   ref_on: np.ndarray, ref_off: np.ndarray, row_start: np.ndarray,
                   row_key: np.ndarray, eps: int, edges: str) -> None:
    """Every coordinate of a batch of trace rows laid end to end (``g``: grid scores, ``ref``:
    reference activity and its onsets and offsets, ``row_start``: each row's first position
    and the end; ``row_key``: each row's key), added to ``counts``."""
    n_all = len(g)
    lengths = np.diff(row_start)
    row = np.repeat(np.arange(len(lengths)), lengths)
    key = row_key[row]
    first, last = np.zeros(n_all, dtype=bool), np.zeros(n_all, dtype=bool)
    first[row_start[:-1][lengths > 0]] = True
    last[row_start[1:][lengths > 0] - 1] = True
    k = np.arange(n_all) - row_start[:-1][row]
    g_before = np.r_[-INF, g[:-1]]
    g_before[first] = -INF
    # predicted onsets and offsets at each frame, as intervals of t
    on_lo, on_hi = g_before.copy(), g
    if edges == "open":
        on_lo[first] = INF
    off_lo, off_hi = g.copy(), g_before.copy()
    if edges == "closed":
        off_lo[last], off_hi[last] = -INF, np.maximum(g[last], g_before[last])
    shifts = np.arange(-eps, eps + 1)
    for positions, (lo, hi), names in (
            (np.flatnonzero(ref_on), (on_lo, on_hi), ("onset", "late_onset", "early_onset")),
            (np.flatnonzero(ref_off), (off_lo, off_hi),
             ("offset", "early_release", "late_release"))):
        where = positions[:, None] + shifts[None, :]
        inside = (k[positions][:, None] + shifts[None, :] >= 0) & \
            (k[positions][:, None] + shifts[None, :] < lengths[row[positions]][:, None])
        group = np.broadcast_to(np.arange(len(positions))[:, None], where.shape)[inside]
        at = where[inside]
        window_lo, window_hi = lo[at], hi[at]
        boundary_key = key[positions]
        here = g[positions]
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
    # silence far from reference activity, leakage next to it
    ref_starts, ref_ends = _runs_of(ref, first, last)
    near_change = np.zeros(n_all + 1, dtype=np.int64)
    row_of_run = row[ref_starts] if len(ref_starts) else np.zeros(0, dtype=np.int64)
    np.add.at(near_change, np.maximum(row_start[:-1][row_of_run], ref_starts - eps), 1)
    np.add.at(near_change, np.minimum(row_start[1:][row_of_run], ref_ends + eps), -1)
    near = np.cumsum(near_change[:-1]) > 0
    for name, mask in (("silence", ~near), ("leakage", near & ~ref)):
        c = counts[name]
        c.add_base(key[mask], 1, 1)
        c.add(key[mask], g[mask], -1, 0)
    # missed and fragmentation, per reference run
    run_key = key[ref_starts]
    top = _reduce(np.maximum, g, ref_starts, ref_ends, -INF)
    counts["missed"].add_base(run_key, 0, 1)
    counts["missed"].add(run_key, top, 1, 0)
    frag = counts["fragmentation"]
    frag.add(run_key, top, 0, 1)
    in_run = np.repeat(np.arange(len(ref_starts)), ref_ends - ref_starts)
    at = np.concatenate([np.arange(a, b) for a, b in zip(ref_starts, ref_ends, strict=True)]) \
        if len(ref_starts) else np.zeros(0, dtype=np.int64)
    lo = g_before[at].copy() if len(at) else np.zeros(0)
    if len(at):
        lo[np.r_[0, np.cumsum(ref_ends - ref_starts)[:-1]]] = -INF  # a run's first frame
    held_group, held_value, change = _grouped_indicator(in_run, lo, g[at], True)
    frag.add(run_key[held_group], held_value, change, 0)
    # false and merge: every run of g > t, less those wholly in a stretch without reference
    # activity (inclusion and exclusion at the stretch's two ends)
    false, merge = counts["false"], counts["merge"]
    for c in (false, merge):
        c.interval(key, g_before, g, 1, 0)
    false.interval(key, g_before, g, 0, 1)
    quiet_starts, quiet_ends = _runs_of(~ref, first, last)
    quiet = ~ref
    quiet_before = g_before.copy()
    quiet_before[quiet_starts] = -INF
    false.interval(key[quiet], quiet_before[quiet], g[quiet], -1, 0)
    merge.interval(key[quiet], quiet_before[quiet], g[quiet], -1, 0)
    merge.interval(key, g_before, g, 0, 1)
    merge.interval(key[quiet], quiet_before[quiet], g[quiet], 0, -1)
    quiet_key = key[quiet_starts]
    has_left = ~first[quiet_starts]
    has_right = ~last[quiet_ends - 1]
    left = np.minimum(g[quiet_starts], g_before[quiet_starts])
    right = np.minimum(g[quiet_ends - 1], np.r_[g, -INF][quiet_ends])
    lowest = _reduce(np.minimum, g, quiet_starts, quiet_ends, INF)
    both = has_left & has_right
    span = np.minimum(np.minimum(lowest, g_before[quiet_starts]), np.r_[g, -INF][quiet_ends])
    for c, obl in ((false, 0), (merge, 1)):
        c.add(quiet_key[has_left], left[has_left], 1, obl)
        c.add(quiet_key[has_right], right[has_right], 1, obl)
        c.add(quiet_key[both], span[both], -1, -obl)
    # a run over m >= 2 reference runs bridges the m - 1 quiet stretches between them
    same_row = row[ref_starts[1:]] == row[ref_starts[:-1]] if len(ref_starts) > 1 else \
        np.zeros(0, dtype=bool)
    if same_row.any():
        i = np.flatnonzero(same_row)
        gap_low = _reduce(np.minimum, g, ref_ends[i], ref_starts[i + 1], INF)
        bridge = np.minimum(np.minimum(g[ref_ends[i] - 1], gap_low), g[ref_starts[i + 1]])
        merge.add(run_key[i], bridge, -1, 0)
        run_low = _reduce(np.minimum, g, ref_starts, ref_ends, INF)
        bridges = np.full(len(ref_starts), np.nan)
        bridges[i] = bridge
        j = np.flatnonzero(same_row[:-1] & same_row[1:]) if len(same_row) > 1 else \
            np.zeros(0, dtype=np.int64)
        if len(j):
            across = np.minimum(np.minimum(bridges[j], bridges[j + 1]), run_low[j + 1])
            merge.add(run_key[j], across, 1, 0)


def _grid_scores(table: ScoreTable, decision: DecisionPolicy, hop: float, projection: str,
                 frames: int, duration_us: int | None, where: str) -> np.ndarray:
    """``[frames, classes]``: each grid frame's score, such that the frame is active at
    threshold ``t`` iff its score is above ``t`` (what projecting the events of the table
    thresholded at ``t`` gives): a row's score where a frame's centre (``center``) or any part
    of it (``any_overlap``, the highest) falls in the row, the lower of two neighbours where
    it falls in a gap between them, ``-inf`` outside every row or past the clip's duration."""
    n_rows = table.scores.shape[0]
    out = np.full((frames, len(table.classes)), -INF)
    if not n_rows or not frames:
        return out
    if np.isnan(table.scores).any():
        row, column = np.argwhere(np.isnan(table.scores))[0]
        raise SedContractError(f"{where}: row {int(table.lines[row])}, class "
                               f"{table.classes[column]!r}: NaN is no score")
    on, off = to_us(table.onset), to_us(table.offset)
    if np.any(off[:-1] > on[1:]) or np.any(off <= on):
        raise SedContractError(f"{where}: score rows that overlap (or are not sorted) have no "
                               "threshold-free curve here; give thresholds to audit at")
    row_hop = float(np.median(table.offset - table.onset))  # as the decision takes it
    scores = filtered(table.scores, decision.resolve(table.classes).median_filter, row_hop)
    end_us = off if duration_us is None else np.minimum(off, duration_us)
    h = int(to_us(hop))
    # rows, and the gaps between neighbours (active when both are: one run spans the gap)
    gap = off[:-1] < on[1:]
    spans_on = np.r_[on, off[:-1][gap]]
    spans_off = np.r_[end_us, np.minimum(on[1:][gap], end_us[1:][gap])]
    spans = np.r_[scores, np.minimum(scores[:-1][gap], scores[1:][gap])]
    first, end = project_us(spans_on, spans_off, h, projection)
    end = np.minimum(end, frames)
    first = np.minimum(first, end)
    # every frame of every span at once (a frame two spans touch takes the higher score)
    count = end - first
    frame = np.repeat(first - np.r_[0, np.cumsum(count)[:-1]], count) + np.arange(count.sum())
    values = np.repeat(spans, count, axis=0)
    if projection == "center":  # a frame's centre lies in one span at most
        out[frame] = values
    else:
        np.maximum.at(out, frame, values)
    return out


def _eps_frames(policy: AuditPolicy) -> int:
    return policy.resolver().frames(Bound(name="eps"))


@dataclass(frozen=True)
class GuardCurves:
    """Each coordinate's curves: ``typed[coordinate][class]`` and ``union[coordinate]``;
    ``duration`` (its matching redone per threshold) at ``thresholds`` only."""

    classes: tuple[str, ...]
    typed: dict[str, dict[str, Curve]]
    union: dict[str, Curve]
    thresholds: tuple[float, ...] = ()
    duration: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def at(self, t: float, mode: str = "typed") -> dict[str, dict[str, tuple[int, int]]]:
        """Every coordinate's counts at threshold ``t``: typed per class, union under
        ``"*"``."""
        if mode == "union":
            return {name: {"*": curve.at(t)} for name, curve in self.union.items()}
        return {name: {c: curve.at(t) for c, curve in by_class.items()}
                for name, by_class in self.typed.items()}


def check_curves(policy: AuditPolicy, decision: DecisionPolicy,
                 targets: Sequence[str] = ()) -> None:
    """Refuse, before anything is read, what the curves are not exact for: another contract
    than the standard one, projection majority, hysteresis (two thresholds, for any class),
    and targets that name no coordinate the curves hold."""
    if contract_hash(policy.parsed) != contract_hash(load_contract("standard")):
        raise SedContractError("curves at every threshold are exact for the standard contract; "
                               "audit another contract at chosen thresholds instead")
    if policy.projection == "majority":
        raise SedContractError("projection majority joins neighbouring rows of an event: its "
                               "curves are not exact here; use center or any_overlap")
    if decision.low is not None or any(c.low is not None for _, c in decision.classes):
        raise SedContractError("hysteresis has two thresholds: curves vary one")
    unknown = [t for t in targets if t not in CURVE_COORDINATES]
    if unknown:
        raise SedContractError(f"no curve of {unknown[0]!r} to set a target on; the curves hold "
                               f"{', '.join(CURVE_COORDINATES)}")


def _reference_rows(traces: TraceSet, i: int, n: int) -> np.ndarray:
    """Clip ``i``'s reference activity ``[classes, n]``, painted from its runs alone (memory
    follows the clip, not the longest clip times every clip)."""
    runs, per = traces.runs["ref"], len(traces.classes)
    a, b = np.searchsorted(runs.row, [i * per, (i + 1) * per])
    change = np.zeros((per, n + 1), dtype=np.int8)
    rows = runs.row[a:b] - i * per
    # runs of a row neither overlap nor touch: no two share a start or an end frame
    change[rows, np.minimum(runs.start[a:b], n)] += 1
    change[rows, np.minimum(runs.end[a:b], n)] -= 1
    return np.cumsum(change[:, :n], axis=1) > 0


def guard_curves(ref: Any, scores: Any, durations: Any, policy: AuditPolicy | None = None, *,
                 decision: DecisionPolicy | None = None,
                 thresholds: Sequence[float] = ()) -> GuardCurves:
    """The standard contract's coordinates and diagnostics of score tables (a folder, a table
    source or clip → DataFrame) against ``ref`` as step functions of one threshold for every
    class (:class:`Curve`, exact at every threshold); ``decision`` gives the median filter
    (its threshold is what varies; hysteresis has two and is refused); ``duration`` is
    audited at each of ``thresholds``. Durations are needed: predicted events are cut at
    them, as the audit of thresholded events cuts them."""
    policy = policy or AuditPolicy()
    decision = decision or DecisionPolicy()
    check_curves(policy, decision)
    ref = events_of(ref, "ground truth")
    given = durations_of(durations)
    if given is None:
        raise SedContractError("curves need clip durations (predicted events are cut at them)")
    source = score_source(scores, ref.clips)
    classes = tuple(source.columns)
    corpus = check_corpus(ref, EventList.from_rows([], clips=ref.clips), policy,
                          durations=given, classes=classes)  # the audit's own checks
    traces = TraceSet.from_events(corpus.ref, corpus.pred, hop=policy.hop, durations=given,
                                  classes=classes, projection=policy.projection,
                                  max_frames=policy.max_frames)
    # a window wider than the longest clip covers the same frames as one that long
    eps = min(_eps_frames(policy), int(traces.lengths.max(initial=0)))
    n_classes = len(classes)
    counts = {name: _Counts(n_classes + 1) for name in CURVE_COORDINATES}  # the union last
    duration_us = to_us(np.array([float(given[c]) for c in traces.clips]))
    index = {clip: i for i, clip in enumerate(traces.clips)}
    batch: list[tuple[np.ndarray, ...]] = []  # a clip's scores, reference rows, keys
    held = 0

    def flush() -> None:
        nonlocal held
        if not batch:
            return
        lengths = np.array([len(b[0]) for b in batch for _ in b[2]], dtype=np.int64)
        scores = np.concatenate([part for b in batch for part in b[0].T])
        ref_rows, ref_on, ref_off = (np.concatenate([part for b in batch for part in b[j]])
                                     for j in (1, 3, 4))
        keys = np.concatenate([b[2] for b in batch])
        _batch_changes(counts, scores, ref_rows, ref_on, ref_off,
                       np.r_[0, np.cumsum(lengths)], keys, eps, policy.edges)
        for c in counts.values():
            c.compact()
        batch.clear()
        held = 0

    def add(i: int, n: int, g: np.ndarray) -> int:
        """Clip ``i``'s rows (each class, then the union) into the batch; their cells."""
        active = _reference_rows(traces, i, n)
        rows = np.r_[active, active.any(axis=0)[None]]
        scores = np.c_[g, g.max(axis=1) if n_classes else np.full(n, -INF)]
        batch.append((scores, rows, np.arange(n_classes + 1),
                      onset_frames(rows, policy.edges), offset_frames(rows, policy.edges)))
        return scores.size

    for clip, (table, path) in source.tables(traces.clips):  # one clip at a time
        i = index[clip]
        n = int(traces.lengths[i])
        g = _grid_scores(table, decision, policy.hop, policy.projection, n,
                         int(duration_us[i]), path)
        held += add(i, n, g)
        if held >= BATCH_CELLS:
            flush()
    flush()
    made = {name: counts[name].curves() for name in CURVE_COORDINATES}
    typed = {name: dict(zip(classes, made[name][:n_classes], strict=True))
             for name in CURVE_COORDINATES}
    union = {name: made[name][n_classes] for name in CURVE_COORDINATES}
    duration: dict[str, list[tuple[int, int]]] = {}
    for t in thresholds:
        events = tables_to_events(source.tables(traces.clips),
                                  decision.with_thresholds(float(t)), "scores")
        report = audit(ref, events, policy, durations=given, classes=list(classes),
                       coordinates=["duration"])
        for c in classes:
            cell = report.modes["typed"].per_class("duration")[c]
            duration.setdefault(c, []).append((cell.satisfied, cell.obligations))
        cell = report.modes["union"].micro("duration")
        duration.setdefault("*", []).append((cell.satisfied, cell.obligations))
    return GuardCurves(classes, typed, union, tuple(float(t) for t in thresholds), duration)
