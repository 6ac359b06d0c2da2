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
from sedcontract.traces.decision import DecisionPolicy, filter_frames
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.grid import to_us
from sedcontract.traces.scores import ScoreTable, tables_to_events
from sedcontract.traces.traceset import TraceSet

__all__ = ["CURVE_COORDINATES", "Curve", "GuardCurves", "guard_curves"]

FRAME_CLAUSES = ("onset", "offset", "silence")
EVENT_CLAUSES = ("missed", "false", "fragmentation")
DIAGNOSTICS = ("late_onset", "early_onset", "late_release", "early_release", "merge", "leakage")
CURVE_COORDINATES = (*FRAME_CLAUSES, *EVENT_CLAUSES, *DIAGNOSTICS)  # exact at every threshold
INF = math.inf


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


@dataclass
class _Changes:
    """Changes collected for one (mode, class, coordinate): base counts and per-value
    changes."""

    base_sat: int = 0
    base_obl: int = 0
    values: list[np.ndarray] = field(default_factory=list)
    d_sat: list[np.ndarray] = field(default_factory=list)
    d_obl: list[np.ndarray] = field(default_factory=list)

    def add(self, values: Any, d_sat: Any = 0, d_obl: Any = 0) -> None:
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if not len(values):
            return
        self.values.append(values)
        self.d_sat.append(np.broadcast_to(np.asarray(d_sat, dtype=np.int64), values.shape))
        self.d_obl.append(np.broadcast_to(np.asarray(d_obl, dtype=np.int64), values.shape))

    def curve(self) -> Curve:
        if not self.values:
            empty = np.zeros(0)
            return Curve(empty, empty.astype(np.int64), empty.astype(np.int64),
                         (self.base_sat, self.base_obl))
        values = np.concatenate(self.values)
        sat, obl = np.concatenate(self.d_sat), np.concatenate(self.d_obl)
        keep = values > -INF  # [t < -inf] holds for no threshold
        values, sat, obl = values[keep], sat[keep], obl[keep]
        unique, inverse = np.unique(-values, return_inverse=True)
        sat_sum = np.bincount(inverse.reshape(-1), weights=sat, minlength=len(unique))
        obl_sum = np.bincount(inverse.reshape(-1), weights=obl, minlength=len(unique))
        changed = (sat_sum != 0) | (obl_sum != 0)
        return Curve(-unique[changed],
                     self.base_sat + np.cumsum(np.rint(sat_sum[changed])).astype(np.int64),
                     self.base_obl + np.cumsum(np.rint(obl_sum[changed])).astype(np.int64),
                     (self.base_sat, self.base_obl))


def _indicator(changes: _Changes, lo: np.ndarray, hi: np.ndarray, what: str = "sat") -> None:
    """Add ``[lo <= t < hi]`` for disjoint intervals (lo may be -inf, hi +inf)."""
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    if what == "sat":
        changes.add(hi, 1, 0)
        changes.add(lo, -1, 0)
    else:
        changes.add(hi, 0, 1)
        changes.add(lo, 0, -1)


def _union(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals ``[lo, hi)`` as disjoint intervals (touching ones joined)."""
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    if not len(lo):
        return lo, hi
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    start = np.r_[True, lo[1:] > reach[:-1]]
    return lo[start], np.maximum.reduceat(hi, np.flatnonzero(start))


def _onset_intervals(g: np.ndarray, edges: str) -> tuple[np.ndarray, np.ndarray]:
    """For each frame k, the thresholds at which a predicted onset lies at k: ``[g[k-1],
    g[k])`` (frame 0: ``(-inf, g[0])`` with closed edges, none with open ones)."""
    lo = np.r_[INF if edges == "open" else -INF, g[:-1]]
    return lo, g.copy()


def _offset_intervals(g: np.ndarray, edges: str) -> tuple[np.ndarray, np.ndarray]:
    """For each frame k, the thresholds at which a predicted offset (the first inactive frame
    after a run) lies at k: ``[g[k], g[k-1])``; closed edges also put the offset of a run
    still active at the last frame on that frame."""
    lo, hi = g.copy(), np.r_[-INF, g[:-1]]
    if edges == "closed" and len(g):
        lo[-1], hi[-1] = -INF, max(g[-1], hi[-1])
    return lo, hi


def _window(k: int, eps: int, n: int) -> slice:
    return slice(max(0, k - eps), min(n, k + eps + 1))


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    padded = np.r_[False, mask, False].astype(np.int8)
    change = np.diff(padded)
    return np.flatnonzero(change == 1), np.flatnonzero(change == -1)


def _run_starts(changes: _Changes, g: np.ndarray, sign: int, what: str) -> None:
    """Add ``sign`` × the number of runs of ``g > t`` within ``g`` taken alone (frame
    ``-1`` inactive): a run starts at k for ``t`` in ``[g[k-1], g[k])``."""
    lo, hi = np.r_[-INF, g[:-1]], g
    keep = lo < hi
    if what == "sat":
        changes.add(hi[keep], sign, 0)
        changes.add(lo[keep], -sign, 0)
    else:
        changes.add(hi[keep], 0, sign)
        changes.add(lo[keep], 0, -sign)


def _exactly_one(changes: _Changes, g: np.ndarray) -> None:
    """Add ``[the runs of g > t, taken alone, number exactly one]`` to the satisfied counts."""
    lo, hi = np.r_[-INF, g[:-1]], g
    keep = lo < hi
    values = np.r_[hi[keep], lo[keep]]
    steps = np.r_[np.ones(keep.sum(), dtype=np.int64), -np.ones(keep.sum(), dtype=np.int64)]
    live = values > -INF
    values, steps = values[live], steps[live]
    if not len(values):
        return
    unique, inverse = np.unique(-values, return_inverse=True)
    step = np.bincount(inverse.reshape(-1), weights=steps, minlength=len(unique))
    count = np.cumsum(np.rint(step)).astype(np.int64)  # for t just below each -unique
    one = (count == 1).astype(np.int64)
    change = np.diff(np.r_[0, one])
    nonzero = change != 0
    changes.add(-unique[nonzero], change[nonzero], 0)


def _row_changes(changes: Mapping[str, _Changes], g: np.ndarray, ref: np.ndarray, eps: int,
                 edges: str) -> None:
    """Every coordinate of one trace row (one clip and class, or a clip's union): its grid
    scores ``g`` (``-inf`` where no score reaches) and reference activity ``ref``."""
    n = len(g)
    ref = ref.astype(bool)
    on_lo, on_hi = _onset_intervals(g, edges)
    off_lo, off_hi = _offset_intervals(g, edges)
    ref_on = np.flatnonzero(onset_frames(ref, edges))
    ref_off = np.flatnonzero(offset_frames(ref, edges))
    for name, frames, (lo, hi), extra in (
            ("onset", ref_on, (on_lo, on_hi), None),
            ("late_onset", ref_on, (on_lo, on_hi), "active"),
            ("early_onset", ref_on, (on_lo, on_hi), "inactive"),
            ("offset", ref_off, (off_lo, off_hi), None),
            ("late_release", ref_off, (off_lo, off_hi), "inactive"),
            ("early_release", ref_off, (off_lo, off_hi), "active")):
        c = changes[name]
        c.base_obl += len(frames)
        for k in frames:
            w = _window(int(k), eps, n)
            lows, highs = lo[w], hi[w]
            if extra == "active":      # pred.active at k: t < g[k]
                lows, highs = np.r_[lows, -INF], np.r_[highs, g[k]]
            elif extra == "inactive":  # !pred.active at k: t >= g[k]
                lows, highs = np.r_[lows, g[k]], np.r_[highs, INF]
            _indicator(c, *_union(lows, highs))
    # silence (far from reference activity) and leakage (next to it): frames stay inactive
    near = np.zeros(n, dtype=bool)
    for s, e in zip(*_runs(ref), strict=True):
        near[max(0, s - eps):min(n, e + eps)] = True
    for name, where in (("silence", ~near), ("leakage", near & ~ref)):
        c = changes[name]
        scores = g[where]
        c.base_obl += len(scores)
        c.base_sat += len(scores)
        c.add(scores, -1, 0)
    # missed and fragmentation: per reference run
    starts, ends = _runs(ref)
    missed, frag = changes["missed"], changes["fragmentation"]
    missed.base_obl += len(starts)
    for s, e in zip(starts, ends, strict=True):
        top = float(g[s:e].max())
        missed.add(top, 1, 0)
        frag.add(top, 0, 1)
        _exactly_one(frag, g[s:e])
    # false: runs overlapping some reference frame, of all runs; merge: of those, the ones
    # overlapping exactly one reference run
    false, merge = changes["false"], changes["merge"]
    _run_starts(false, g, 1, "obl")
    _run_starts(false, g, 1, "sat")
    for p, q in zip(*_runs(~ref), strict=True):  # runs wholly inside a non-reference stretch
        _run_starts(false, g[p:q], -1, "sat")
        left = min(g[p], g[p - 1]) if p > 0 else -INF
        right = min(g[q - 1], g[q]) if q < n else -INF
        false.add([left, right], 1, 0)
        if p > 0 and q < n:
            false.add(min(float(g[p - 1:q + 1].min()), INF), -1, 0)
    _run_starts(merge, g, 1, "obl")
    _run_starts(merge, g, 1, "sat")
    for p, q in zip(*_runs(~ref), strict=True):
        _run_starts(merge, g[p:q], -1, "obl")
        _run_starts(merge, g[p:q], -1, "sat")
        left = min(g[p], g[p - 1]) if p > 0 else -INF
        right = min(g[q - 1], g[q]) if q < n else -INF
        merge.add([left, right], 1, 1)
        if p > 0 and q < n:
            merge.add(float(g[p - 1:q + 1].min()), -1, -1)
    # a run overlapping m >= 2 reference runs bridges the m - 1 gaps between them
    for i in range(len(starts) - 1):
        bridge = float(g[ends[i] - 1:starts[i + 1] + 1].min())
        merge.add(bridge, -1, 0)
        if i + 2 < len(starts):
            merge.add(float(g[ends[i] - 1:starts[i + 2] + 1].min()), 1, 0)


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
    on, off = to_us(table.onset), to_us(table.offset)
    if np.any(off[:-1] > on[1:]) or np.any(off <= on):
        raise SedContractError(f"{where}: score rows that overlap (or are not sorted) have no "
                               "threshold-free curve here; give thresholds to audit at")
    scores = np.asarray(table.scores, dtype=np.float64)
    resolved = decision.resolve(table.classes)
    row_hop = float(np.median(table.offset - table.onset))
    sizes = [filter_frames(m, row_hop, n_rows) for m in resolved.median_filter]
    if any(size > 1 for size in sizes):
        from scipy.ndimage import median_filter

        scores = scores.copy()
        for c, size in enumerate(sizes):
            if size > 1:
                scores[:, c] = median_filter(scores[:, c], size=size, mode="nearest")
    end_us = off if duration_us is None else np.minimum(off, duration_us)
    h = int(to_us(hop))
    # rows, and the gaps between neighbours (active when both are: one run spans the gap)
    gap = off[:-1] < on[1:]
    spans_on = np.r_[on, off[:-1][gap]]
    spans_off = np.r_[end_us, np.minimum(on[1:][gap], end_us[1:][gap])]
    spans = np.r_[scores, np.minimum(scores[:-1][gap], scores[1:][gap])]
    first, end = _frames(spans_on, spans_off, h, projection)
    end = np.minimum(end, frames)
    for i in np.flatnonzero(end > first):
        out[first[i]:end[i]] = np.maximum(out[first[i]:end[i]], spans[i])
    return out


def _frames(on_us: np.ndarray, off_us: np.ndarray, h: int, projection: str
            ) -> tuple[np.ndarray, np.ndarray]:
    """The frame range ``[first, end)`` of each span under ``center`` or ``any_overlap``, as
    :func:`~sedcontract.traces.grid.project` computes it, on microsecond times."""
    def ceil_div(a: np.ndarray, b: int) -> np.ndarray:
        return -np.floor_divide(-a, b)

    if projection == "center":
        first, end = ceil_div(2 * on_us - h, 2 * h), ceil_div(2 * off_us - h, 2 * h)
    else:
        first, end = np.floor_divide(on_us, h), ceil_div(off_us, h)
    first = np.maximum(first, 0)
    end = np.where(off_us > on_us, np.maximum(end, first), first)
    return first.astype(np.int64), end.astype(np.int64)


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
    if contract_hash(policy.parsed) != contract_hash(load_contract("standard")):
        raise SedContractError("curves at every threshold are exact for the standard contract; "
                               "audit another contract at chosen thresholds instead")
    if policy.projection == "majority":
        raise SedContractError("projection majority joins neighbouring rows of an event: its "
                               "curves are not exact here; use center or any_overlap")
    if decision.low is not None or any(
            c.low is not None for c in (decision.classes or {}).values()):
        raise SedContractError("hysteresis has two thresholds: curves vary one")
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
    active = traces.dense("ref")
    eps = _eps_frames(policy)
    changes = {m: {name: {c: _Changes() for c in classes} if m == "typed" else _Changes()
                   for name in CURVE_COORDINATES} for m in ("typed", "union")}
    duration_us = to_us(np.array([float(given[c]) for c in traces.clips]))
    tables = dict(source.tables())
    for i, clip in enumerate(traces.clips):
        n = int(traces.lengths[i])
        table, path = tables[clip]
        g = _grid_scores(table, decision, policy.hop, policy.projection, n,
                         int(duration_us[i]), path)
        for c, cls in enumerate(classes):
            _row_changes({name: changes["typed"][name][cls] for name in CURVE_COORDINATES},
                         g[:, c], active[i, c, :n], eps, policy.edges)
        _row_changes(changes["union"], g.max(axis=1) if len(classes) else g[:, 0],
                     active[i, :, :n].any(axis=0), eps, policy.edges)
    typed = {name: {c: changes["typed"][name][c].curve() for c in classes}
             for name in CURVE_COORDINATES}
    union = {name: changes["union"][name].curve() for name in CURVE_COORDINATES}
    duration: dict[str, list[tuple[int, int]]] = {}
    for t in thresholds:
        events = tables_to_events(tables, decision.with_thresholds(float(t)), "scores")
        report = audit(ref, events, policy, durations=given, classes=list(classes),
                       coordinates=["duration"])
        for c in classes:
            cell = report.modes["typed"].per_class("duration")[c]
            duration.setdefault(c, []).append((cell.satisfied, cell.obligations))
        cell = report.modes["union"].micro("duration")
        duration.setdefault("*", []).append((cell.satisfied, cell.obligations))
    return GuardCurves(classes, typed, union, tuple(float(t) for t in thresholds), duration)
