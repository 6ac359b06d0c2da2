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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sedcontract.blocks import EXECUTOR_BLOCKS, block_results, check_jobs, on_processes
from sedcontract.contracts.contract import contract_hash, load_contract
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.guard.curve_changes import (
    BATCH_CELLS,
    DIAGNOSTICS,
    EVENT_CLAUSES,
    FRAME_CLAUSES,
    Curve,
    CurveChanges,
    eps_frames,
    expand_first,
    grid_segments,
    row_changes,
    score_spans,
)
from sedcontract.guard.pipeline import audit, check_corpus
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.grid import to_us
from sedcontract.traces.score_files import tables_to_events
from sedcontract.traces.traceset import TraceSet

__all__ = ["CURVE_COORDINATES", "ClipChanges", "Curve", "GuardCurves", "clip_changes",
           "guard_curves", "join_curves"]

CURVE_COORDINATES = (*FRAME_CLAUSES, *EVENT_CLAUSES, *DIAGNOSTICS)  # exact at every threshold


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


def join_curves(parts: Sequence[GuardCurves]) -> GuardCurves:
    """The curves of the union of disjoint sets of clips (blocks, shards, the processes of a
    validation), exact: the counts' changes summed at each score value."""
    if not parts:
        raise SedContractError("no curves to join")
    first = parts[0]
    for other in parts[1:]:
        if other.classes != first.classes or other.thresholds != first.thresholds:
            raise SedContractError("curves of different classes or duration thresholds do not "
                                   "join")
    keys = len(first.classes) + 1

    def joined(name: str) -> list[Curve]:
        counts = CurveChanges(keys)
        for part in parts:
            for k, curve in enumerate([*(part.typed[name][c] for c in first.classes),
                                       part.union[name]]):
                d_sat, d_obl = curve.changes()
                counts.base[k] += curve.base  # whole numbers, summed exactly
                counts.add(np.full(len(curve.values), k), curve.values, d_sat, d_obl)
        return counts.curves()

    made = {name: joined(name) for name in first.typed}
    typed = {name: dict(zip(first.classes, curves[:-1], strict=True))
             for name, curves in made.items()}
    duration = {k: [tuple(int(sum(x)) for x in zip(*cells, strict=True))
                    for cells in zip(*(part.duration[k] for part in parts), strict=True)]
                for k in first.duration}
    return GuardCurves(first.classes, typed, {n: c[-1] for n, c in made.items()},
                       first.thresholds, duration)


def _curves_on_executor(executor: Any, blocks: int | None, ref: EventList, source: Any,
                        durations: Mapping[str, float], policy: AuditPolicy,
                        decision: DecisionPolicy, thresholds: tuple[float, ...]
                        ) -> GuardCurves:
    """:func:`guard_curves` of consecutive blocks of the clips on ``executor``, joined."""
    clips = list(ref.clips)

    def task(a: int, b: int) -> Any:
        block = clips[a:b]
        return executor.submit(guard_curves, ref.select(clips=block), source.select(block),
                               {c: durations[c] for c in block}, policy, decision=decision,
                               thresholds=thresholds)

    return join_curves(list(block_results(len(clips), blocks or EXECUTOR_BLOCKS, task,
                                          empty=True)))


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


def _batch_runs(traces: TraceSet, index: np.ndarray, row_start: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference runs of a batch of clips (their indices in ``traces``) on the rows of
    :func:`grid_segments` (each class, then the union trace), as ``(row, start, end)`` in
    positions, sorted."""
    per, n_clips = len(traces.classes), len(index)
    parts = []
    for runs, width, key_of in ((traces.runs["ref"], per, None),
                                (traces.union_runs["ref"], 1, per)):
        lo = np.searchsorted(runs.row, index * width)
        hi = np.searchsorted(runs.row, (index + 1) * width)
        clip, at = expand_first(lo, hi - lo)
        key = runs.row[at] - index[clip] * width if key_of is None else \
            np.full(len(at), key_of)
        row = key * n_clips + clip
        n = traces.lengths[index][clip]
        a, b = np.minimum(runs.start[at], n), np.minimum(runs.end[at], n)
        keep = a < b
        order = np.lexsort((a[keep], row[keep]))
        parts.append((row[keep][order], a[keep][order], b[keep][order]))
    row, a, b = (np.concatenate(x) for x in zip(*parts, strict=True))
    return row, row_start[row] + a, row_start[row] + b


def _prepared(ref: Any, scores: Any, durations: Any, policy: AuditPolicy | None,
              decision: DecisionPolicy | None
              ) -> tuple[EventList, Any, dict[str, float], AuditPolicy, DecisionPolicy, Any]:
    """The checked inputs of the curves: reference, table source, durations, policy, decision
    (``decision``, else the policy's), and the audit's corpus (its checks)."""
    policy = policy or AuditPolicy()
    decision = decision or policy.decision or DecisionPolicy()
    check_curves(policy, decision)
    ref = events_of(ref, "ground truth")
    given = durations_of(durations)
    if given is None:
        raise SedContractError("curves need clip durations (predicted events are cut at them)")
    source = score_source(scores, ref.clips)
    corpus = check_corpus(ref, EventList.from_rows([], clips=ref.clips), policy,
                          durations=given, classes=tuple(source.columns))
    return ref, source, given, policy, decision, corpus


def _scan(corpus: Any, source: Any, given: Mapping[str, float], policy: AuditPolicy,
          decision: DecisionPolicy, per_clip: bool) -> tuple[TraceSet, dict[str, CurveChanges]]:
    """Every coordinate's changes over the clips, one clip's tables at a time: keyed by class
    (the union trace last), or with ``per_clip`` by clip and class (``clip · (classes + 1) +
    class``)."""
    classes = tuple(source.columns)
    traces = TraceSet.from_events(corpus.ref, corpus.pred, hop=policy.hop, durations=given,
                                  classes=classes, projection=policy.projection,
                                  max_frames=policy.max_frames)
    # a window wider than the longest clip covers the same frames as one that long
    eps = min(eps_frames(policy), int(traces.lengths.max(initial=0)))
    keys = len(classes) + 1
    counts = {name: CurveChanges(keys * (len(traces.clips) if per_clip else 1))
              for name in CURVE_COORDINATES}
    duration_us = to_us(np.array([float(given[c]) for c in traces.clips]))
    index = {clip: i for i, clip in enumerate(traces.clips)}
    filters = decision.resolve(classes).median_filter
    if not any(filters):
        filters = None
    hop_us = int(to_us(policy.hop))
    batch: list[tuple[int, tuple[np.ndarray, ...]]] = []  # a clip's index and spans
    held = 0

    def flush() -> None:
        nonlocal held
        if not batch:
            return
        which = np.array([i for i, _ in batch], dtype=np.int64)
        seg, row_key = grid_segments([spans for _, spans in batch], traces.lengths[which],
                                      keys)
        if per_clip:  # rows are key-major: row r is clip r % clips of the batch
            row_key = row_key + keys * np.tile(which, keys)
        run_row, run_a, run_b = _batch_runs(traces, which, seg.row_start)
        row_changes(counts, seg, row_key, run_row, run_a, run_b, eps, policy.edges)
        for c in counts.values():
            c.compact(lazy=True)
        batch.clear()
        held = 0

    for clip, (table, path) in source.tables(traces.clips):  # one clip at a time
        i = index[clip]
        batch.append((i, score_spans(table, filters, hop_us, policy.projection,
                                     int(duration_us[i]), path, decision.median_edge)))
        held += table.scores.size + 1
        if held >= BATCH_CELLS:
            flush()
    flush()
    return traces, counts


def guard_curves(ref: Any, scores: Any, durations: Any, policy: AuditPolicy | None = None, *,
                 decision: DecisionPolicy | None = None, thresholds: Sequence[float] = (),
                 executor: Any = None, blocks: int | None = None, jobs: int = 1
                 ) -> GuardCurves:
    """The standard contract's coordinates and diagnostics of score tables (a folder, a table
    source or clip → DataFrame) against ``ref`` as step functions of one threshold for every
    class (:class:`Curve`, exact at every threshold); ``decision`` (default: the policy's)
    gives the median filter (its threshold is what varies; hysteresis has two and is
    refused); ``duration`` is audited at each of ``thresholds``. Durations are needed:
    predicted events are cut at them, as the audit of thresholded events cuts them.
    ``executor`` (anything with ``submit``) or ``jobs`` processes: ``blocks`` consecutive
    blocks of clips, each given only its clips' tables, joined exactly
    (:func:`join_curves`): the same curves."""
    check_jobs(jobs)
    if executor is None and jobs > 1:
        return on_processes(jobs, __name__, lambda pool: guard_curves(
            ref, scores, durations, policy, decision=decision, thresholds=thresholds,
            executor=pool, blocks=blocks or jobs))
    ref, source, given, policy, decision, corpus = _prepared(ref, scores, durations, policy,
                                                             decision)
    if executor is not None:
        return _curves_on_executor(executor, blocks, corpus.ref, source, given, policy,
                                   decision, tuple(thresholds))
    traces, counts = _scan(corpus, source, given, policy, decision, per_clip=False)
    classes = traces.classes
    n_classes = len(classes)
    made = {name: counts[name].curves() for name in CURVE_COORDINATES}
    typed = {name: dict(zip(classes, made[name][:n_classes], strict=True))
             for name in CURVE_COORDINATES}
    union = {name: made[name][n_classes] for name in CURVE_COORDINATES}
    return GuardCurves(tuple(classes), typed, union, tuple(float(t) for t in thresholds),
                       _duration_at(ref, source, given, policy, decision, thresholds))


def _duration_at(ref: EventList, source: Any, given: Mapping[str, float],
                 policy: AuditPolicy, decision: DecisionPolicy, thresholds: Sequence[float]
                 ) -> dict[str, list[tuple[int, int]]]:
    """``duration`` (its matching redone per threshold) audited at each of ``thresholds``:
    class (``*``: the union trace) → ``(satisfied, obligations)`` per threshold."""
    classes = list(source.columns)
    duration: dict[str, list[tuple[int, int]]] = {}
    for t in thresholds:
        events = tables_to_events(source.tables(list(ref.clips)),
                                  decision.with_thresholds(float(t)), "scores")
        report = audit(ref, events, policy, durations=given, classes=classes,
                       coordinates=["duration"])
        for c in classes:
            cell = report.modes["typed"].per_class("duration")[c]
            duration.setdefault(c, []).append((cell.satisfied, cell.obligations))
        cell = report.modes["union"].micro("duration")
        duration.setdefault("*", []).append((cell.satisfied, cell.obligations))
    return duration


@dataclass(frozen=True)
class ClipChanges:
    """Each clip's share of the curves, for resampling clips: per coordinate, ``base[clip,
    key]`` (counts with nothing active) and the changes ``(clip, key, value, satisfied,
    obligations)`` sorted by clip and key, values descending; key ``len(classes)`` is the union
    trace. ``seconds`` are the clips' durations."""

    classes: tuple[str, ...]
    clips: tuple[str, ...]
    seconds: np.ndarray
    base: dict[str, np.ndarray]
    changes: dict[str, tuple[np.ndarray, ...]]
    thresholds: tuple[float, ...] = ()
    duration: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def total(self) -> GuardCurves:
        """The curves of all the clips (:func:`guard_curves`')."""
        keys = len(self.classes) + 1
        made = {}
        for name, (_, key, value, sat, obl) in self.changes.items():
            counts = CurveChanges(keys)
            counts.base += self.base[name].sum(axis=0)
            counts.add(key, value, sat, obl if obl.any() else 0)
            made[name] = counts.curves()
        return GuardCurves(self.classes,
                           {n: dict(zip(self.classes, c[:-1], strict=True))
                            for n, c in made.items()},
                           {n: c[-1] for n, c in made.items()}, self.thresholds,
                           self.duration)

    def select(self, index: Sequence[int]) -> ClipChanges:
        """The changes of the clips at ``index`` (sorted, distinct), in their order: the
        curves of a subset of the clips (a calibration split) without reading them again.
        ``duration`` is the corpus's and is left out."""
        index = np.asarray(index, dtype=np.int64)
        if np.any(np.diff(index) <= 0) or (len(index) and not 0 <= index[0] <= index[-1]
                                           < len(self.clips)):
            raise SedContractError("select clips by sorted, distinct indices")
        new = np.full(len(self.clips), -1, dtype=np.int64)
        new[index] = np.arange(len(index))
        changes = {}
        for name, (clip, *rest) in self.changes.items():
            keep = new[clip] >= 0
            changes[name] = (new[clip][keep], *(part[keep] for part in rest))
        return ClipChanges(self.classes, tuple(self.clips[i] for i in index),
                           self.seconds[index], {n: b[index] for n, b in self.base.items()},
                           changes)


def clip_changes(ref: Any, scores: Any, durations: Any, policy: AuditPolicy | None = None, *,
                 decision: DecisionPolicy | None = None,
                 thresholds: Sequence[float] = ()) -> ClipChanges:
    """:func:`guard_curves`' changes kept clip by clip (memory grows with the clips' distinct
    score values, which the corpus's curves share): what intervals over clips resample;
    ``duration`` audited at ``thresholds`` for the corpus (:meth:`ClipChanges.total`)."""
    ref, source, given, policy, decision, corpus = _prepared(ref, scores, durations, policy,
                                                             decision)
    traces, counts = _scan(corpus, source, given, policy, decision, per_clip=True)
    keys, n = len(traces.classes) + 1, len(traces.clips)
    base, changes = {}, {}
    for name, c in counts.items():
        c.compact()
        key, value, sat, obl = c.parts[0] if c.parts else (
            np.zeros(0, dtype=np.int32), np.zeros(0), np.zeros(0, dtype=np.int64), None)
        order = np.argsort(key, kind="stable")  # values stay descending within a key
        key = key[order].astype(np.int64)
        changes[name] = (key // keys, key % keys, value[order], sat[order],
                         np.zeros(len(key), dtype=np.int64) if obl is None else obl[order])
        base[name] = c.base.reshape(n, keys, 2)
    return ClipChanges(tuple(traces.classes), tuple(traces.clips),
                       np.array([float(given[c]) for c in traces.clips]), base, changes,
                       tuple(float(t) for t in thresholds),
                       _duration_at(ref, source, given, policy, decision, thresholds))
