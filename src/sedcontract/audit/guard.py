"""Guard vectors: the standard-contract audit of a reference/prediction pair, per coordinate,
per class and per clip, on the typed and union traces, with the policy that produced it."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.audit.facts import TraceFacts, refuse_unseen
from sedcontract.blocks import (
    EXECUTOR_BLOCKS,
    block_results,
    check_jobs,
    clip_range,
    on_processes,
)
from sedcontract.contracts.bounds import BoundResolver, Conversion
from sedcontract.contracts.contract import (
    ContractResult,
    check_atom_classes,
    needed_signals,
    run_contract,
)
from sedcontract.contracts.monitor import SignalTable
from sedcontract.contracts.policy import AGGREGATIONS, AuditPolicy, ScoreSettings, policy_of
from sedcontract.contracts.runs import BACKENDS, RunTable
from sedcontract.contracts.syntax import Contract, EventClause
from sedcontract.errors import ContractCheckError, SedContractError
from sedcontract.numbers import is_whole
from sedcontract.scores.counts import MetricResult
from sedcontract.scores.psds.request import PsdsRequest
from sedcontract.scores.psds.settings import PsdsUnavailable
from sedcontract.scores.segment_roc import AurocRequest
from sedcontract.scores.standard import SCORE_NAMES, standard_scores
from sedcontract.traces import MODES, EventList, TraceSet
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import (
    detections,
    durations_of,
    events_of,
    is_score_tables,
    score_source,
)
from sedcontract.traces.intervals import Intervals
from sedcontract.traces.names import SIDES
from sedcontract.traces.overrun import Cut, fit_to_durations
from sedcontract.traces.traceset import (
    RowLabels,
    row_labels,
)

__all__ = ["AGGREGATIONS", "Cell", "GuardReport", "MatchingCounts", "ModeReport",
           "ScoresReport", "audit", "clip_counts", "count_layout", "empty_report",
           "mode_reports", "prepare_contract", "score"]


@dataclass(frozen=True)
class Cell:
    """``satisfied / obligations``; NaN (vacuous) when there are no obligations."""

    satisfied: int
    obligations: int

    @property
    def score(self) -> float:
        return math.nan if self.obligations == 0 else self.satisfied / self.obligations

    @property
    def vacuous(self) -> bool:
        return self.obligations == 0


@dataclass(frozen=True)
class MatchingCounts:
    """One matching of the contract, per row: the pairs greedy and exact matching find (the
    declared method's are the pairs used)."""

    name: str
    method: str
    greedy_per_row: np.ndarray
    exact_per_row: np.ndarray

    @property
    def pairs(self) -> int:
        return int((self.greedy_per_row if self.method == "greedy"
                    else self.exact_per_row).sum())

    @property
    def short_rows(self) -> np.ndarray:
        """Rows where greedy finds fewer pairs than the maximum."""
        return np.flatnonzero(self.greedy_per_row < self.exact_per_row)


@dataclass(frozen=True)
class ModeReport:
    """All clause counts of one trace mode (typed or union), kept per row."""

    mode: str
    coordinates: tuple[str, ...]
    diagnostics: tuple[str, ...]
    sorts: dict[str, str]
    rows: Sequence[tuple[str, str | None]]      # (clip, class) per row; class None on union
    satisfied: dict[str, np.ndarray]
    obligations: dict[str, np.ndarray]
    matchings: dict[str, MatchingCounts] = field(default_factory=dict)

    def arrays(self, clips: int, per: int) -> dict[str, np.ndarray]:
        """Every per-row count, each ``[clips, per]`` (``per`` rows per clip)."""
        out = {}
        for name in (*self.coordinates, *self.diagnostics):
            out[f"satisfied/{name}"] = self.satisfied[name].reshape(clips, per)
            out[f"obligations/{name}"] = self.obligations[name].reshape(clips, per)
        for name, m in self.matchings.items():
            out[f"greedy/{name}"] = m.greedy_per_row.reshape(clips, per)
            out[f"exact/{name}"] = m.exact_per_row.reshape(clips, per)
        return out

    def rebuild(self, clips: Sequence[str], classes: Sequence[str],
                arrays: dict[str, np.ndarray]) -> ModeReport:
        """This mode's report for other clips, from :meth:`arrays` of theirs."""
        names = (*self.coordinates, *self.diagnostics)
        return ModeReport(
            self.mode, self.coordinates, self.diagnostics, self.sorts,
            row_labels(clips, classes, self.mode),
            {n: arrays[f"satisfied/{n}"].reshape(-1) for n in names},
            {n: arrays[f"obligations/{n}"].reshape(-1) for n in names},
            {n: MatchingCounts(n, m.method, arrays[f"greedy/{n}"].reshape(-1),
                               arrays[f"exact/{n}"].reshape(-1))
             for n, m in self.matchings.items()})

    def micro(self, name: str) -> Cell:
        """Counts pooled over every clip and class."""
        return Cell(int(self.satisfied[name].sum()), int(self.obligations[name].sum()))

    def _grouped(self, name: str, key: int) -> dict[Any, Cell]:
        """Counts per class (``key`` 1) or per clip (0), in the order the rows first name
        them."""
        if isinstance(self.rows, RowLabels):  # rows are clip-major: sum one axis
            shape = (len(self.rows.clips), self.rows.per)
            sat = self.satisfied[name].reshape(shape).sum(axis=1 - key)
            obl = self.obligations[name].reshape(shape).sum(axis=1 - key)
            names = self.rows.classes if key == 1 else self.rows.clips
            if not len(self.rows):  # no rows: no groups (as the loop below finds none)
                return {}
            return {k: Cell(int(a), int(b)) for k, a, b in zip(names, sat, obl, strict=True)}
        out: dict[Any, list[int]] = {}
        for i, row in enumerate(self.rows):
            cell = out.setdefault(row[key], [0, 0])
            cell[0] += int(self.satisfied[name][i])
            cell[1] += int(self.obligations[name][i])
        return {k: Cell(*v) for k, v in out.items()}

    def per_class(self, name: str) -> dict[str | None, Cell]:
        return self._grouped(name, 1)

    def per_clip(self, name: str) -> dict[str, Cell]:
        return self._grouped(name, 0)

    def macro(self, name: str) -> tuple[float, int]:
        """Mean over classes of the per-class scores, and how many classes were not vacuous.

        The union trace has no classes: its macro score is the pooled score, with 0 classes.
        """
        per_class = self.per_class(name)
        if set(per_class) <= {None}:
            return self.micro(name).score, 0
        scores = [c.score for c in per_class.values() if not c.vacuous]
        return (float(np.mean(scores)) if scores else math.nan), len(scores)

    def score(self, name: str, aggregation: str = "micro") -> float:
        return self.micro(name).score if aggregation == "micro" else self.macro(name)[0]

    def logic(self, aggregation: str = "micro",
              coordinates: Sequence[str] | None = None) -> float:
        """Mean of the non-vacuous coordinates (NaN when all are vacuous)."""
        scores = [self.score(n, aggregation) for n in coordinates or self.coordinates]
        scores = [s for s in scores if not math.isnan(s)]
        return float(np.mean(scores)) if scores else math.nan


@dataclass(frozen=True)
class GuardReport:
    """Guard vectors of one audit, by mode, with the policy and trace facts behind them.

    Every number in it is a count per clip (or per clip × class) or computed from such counts,
    so the reports of disjoint sets of clips of one corpus join into the corpus's report
    (:meth:`concat`): shards, processes and validation batches sum, they never recompute."""

    policy: dict[str, Any]
    facts: TraceFacts
    modes: dict[str, ModeReport]
    aggregation: str = "micro"
    coordinates: tuple[str, ...] = ()
    scores: dict[str, MetricResult] | None = None  # standard scores on the same traces
    psds: dict[str, Any] | None = None  # PSDS per scenario (score files or points), or a note
    auroc: dict[str, Any] | None = None  # segment-based mAUC and mpAUC (score files)

    @property
    def traces(self) -> dict[str, Any]:
        """The ``traces`` section: clips, classes, what projection lost, warnings."""
        return self.facts.as_dict()

    @property
    def clips(self) -> tuple[str, ...]:
        return self.facts.clips

    def vector(self, mode: str) -> dict[str, float]:
        """``{coordinate: score}`` under the report's aggregation."""
        report = self.modes[mode]
        return {name: report.score(name, self.aggregation) for name in self.coordinates}

    def logic(self, mode: str) -> float:
        return self.modes[mode].logic(self.aggregation, self.coordinates)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every count of the report, each ``[clips, width]`` (one row of numbers per clip)."""
        n, per = len(self.clips), len(self.facts.classes)
        out = {f"facts/{k}": v for k, v in self.facts.arrays().items()}
        for mode, report in self.modes.items():
            width = per if mode == "typed" else 1
            out |= {f"{mode}/{k}": v for k, v in report.arrays(n, width).items()}
        for name, result in (self.scores or {}).items():
            for part in ("tp", "ref", "sys"):
                out[f"scores/{name}/{part}"] = getattr(result, part).reshape(n, per)
            out[f"scores/{name}/subs"] = result.subs.reshape(n, 1)
            if result.ties is not None:
                out[f"scores/{name}/ties"] = result.ties.reshape(n, 1)
        return out

    def rebuild(self, clips: Sequence[str], arrays: Mapping[str, np.ndarray]) -> GuardReport:
        """This report's structure (policy, contract, classes) over other clips, from
        :meth:`arrays` of theirs."""
        classes = self.facts.classes

        def part(prefix: str) -> dict[str, np.ndarray]:
            return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}

        scores = None if self.scores is None else {
            name: MetricResult(tuple(clips), classes,
                               *(arrays[f"scores/{name}/{k}"].reshape(len(clips), len(classes))
                                 for k in ("tp", "ref", "sys")),
                               arrays[f"scores/{name}/subs"].reshape(len(clips)),
                               arrays[f"scores/{name}/ties"].reshape(len(clips))
                               if f"scores/{name}/ties" in arrays else None)
            for name in self.scores}
        return GuardReport(self.policy, self.facts.rebuild(clips, part("facts/")),
                           {m: r.rebuild(clips, classes, part(f"{m}/"))
                            for m, r in self.modes.items()},
                           self.aggregation, self.coordinates, scores, self.psds, self.auroc)

    @staticmethod
    def concat(parts: Iterable[GuardReport]) -> GuardReport:
        """The report of the union of disjoint clip sets (in order), from theirs; they must
        come from one policy and contract. PSDS and AUROC (curves over the whole corpus) are
        not sums of counts and are refused. ``parts`` may be an iterator: only each part's
        counts are kept, and each count is let go once joined, so a corpus in blocks peaks
        near its own size, not twice it."""
        first: GuardReport | None = None
        clips: list[str] = []
        arrays: list[dict[str, np.ndarray]] = []
        for part in parts:
            if first is None:
                first = part
            else:
                _check_joinable(first, part)
            if part.psds is not None or part.auroc is not None:
                raise SedContractError("PSDS and AUROC are curves over the whole corpus, not "
                                       "sums of counts: reports with them cannot be joined")
            clips += part.clips
            arrays.append(part.arrays())
        if first is None:
            raise SedContractError("no reports to join")
        twice = next((c for c, n in Counter(clips).items() if n > 1), None)
        if twice is not None:
            raise SedContractError(f"clip {twice!r} is in more than one of the joined reports")
        return first.rebuild(clips, {k: np.concatenate([a.pop(k) for a in arrays])
                                     for k in list(arrays[0])})


def _check_joinable(first: GuardReport, other: GuardReport) -> None:
    """Refuse to join reports of different policies, classes, modes or score settings."""
    for what in ("policy", "aggregation", "coordinates"):
        if getattr(other, what) != getattr(first, what):
            raise SedContractError(f"reports with different {what} cannot be joined")
    if other.facts.classes != first.facts.classes or set(other.modes) != \
            set(first.modes) or (other.scores is None) != (first.scores is None):
        raise SedContractError("reports of different classes, trace modes or score "
                               "settings cannot be joined")


def system_events(ref: EventList, pred: Any, policy: AuditPolicy,
                  classes: Sequence[str] | None) -> tuple[Any, AuditPolicy]:
    """The system's events and the policy that says how they were made: score tables in
    memory (clip → DataFrame in sed_scores_eval's layout, or a table source such as a
    :class:`~sedcontract.traces.scores.ScoreFolder`) become events under the policy's decision
    (the default one when it has none), which the report then names, by the command line's
    rule (:func:`~sedcontract.traces.given.detections`); events, and a path (always an event
    file), are taken as they are."""
    if isinstance(pred, str | os.PathLike) or not is_score_tables(pred):
        return pred, policy
    decision = policy.decision or DecisionPolicy()
    source = score_source(pred, ref.clips)
    events = detections(source, ref, decision, "scores", declared=classes)
    return events, policy.but(decision=decision)


def _coordinates(coordinates: Sequence[str] | str | None, guard: tuple[str, ...]
                 ) -> tuple[str, ...]:
    """The chosen coordinates: a sequence of names or one comma-separated string; each once."""
    if not coordinates:
        return guard
    if isinstance(coordinates, str):
        coordinates = [c.strip() for c in coordinates.split(",")]
    chosen = tuple(coordinates)
    for name in chosen:
        if not isinstance(name, str):
            raise ContractCheckError(f"coordinate {name!r} is not a clause name")
    unknown = [c for c in chosen if c not in guard]
    if unknown:
        raise ContractCheckError(f"unknown coordinate(s) {', '.join(map(repr, unknown))}; "
                                 f"the contract's coordinates are {', '.join(guard)}")
    twice = [c for c in dict.fromkeys(chosen) if chosen.count(c) > 1]
    if twice:
        raise ContractCheckError(f"coordinate {twice[0]!r} is listed twice (logic would weigh "
                                 "it twice)")
    return chosen


@dataclass(frozen=True)
class Prepared:
    """What every report of a reference/prediction pair starts from: the events, durations
    and their traces on the policy's grid."""

    ref: EventList
    pred: EventList
    durations: Mapping[str, float] | None
    traces: TraceSet
    cut: Mapping[str, Cut] | None = None  # side → events cut at their clip's end
    given: tuple[EventList, EventList] | None = None  # the events before the cut

    def facts(self) -> TraceFacts:
        """The counts behind the ``traces`` section of a report."""
        return TraceFacts.of(self.traces, self.durations is not None, self.cut_per_clip())

    def cut_per_clip(self) -> tuple[dict[str, np.ndarray], dict[str, str]] | None:
        """Per side the events cut at their clip's end, per clip of the traces, and where the
        first one is."""
        if not self.cut:
            return None
        index = {c: i for i, c in enumerate(self.traces.clips)}
        counts, first = {}, {}
        for side, events in (("ref", self.ref), ("pred", self.pred)):
            cut = self.cut[side]
            counts[side] = np.bincount(events.positions("clip", index)[cut.cut],
                                       minlength=len(index)).astype(np.int64)
            if cut.first is not None:
                first[side] = cut.first
        return counts, first


@dataclass(frozen=True)
class Corpus:
    """A reference/prediction pair checked once, whole, before any trace is made: the events
    (cut at their clips' durations when known), the durations, the clips and classes every
    block shares, the cuts and the events as given. A block of it needs no check again."""

    ref: EventList
    pred: EventList
    durations: Mapping[str, float] | None
    clips: tuple[str, ...]
    classes: tuple[str, ...]
    cut: Mapping[str, Cut] | None = None  # side → events cut at their clip's end
    given: tuple[EventList, EventList] | None = None  # the events before the cut

    def block(self, first: int, stop: int) -> Corpus:
        """The clips ``[first, stop)``: their events, cuts and durations."""
        if (first, stop) == (0, len(self.clips)):
            return self
        clips = self.clips[first:stop]
        cut = None if self.cut is None else {
            side: Cut(self.cut[side].cut[events.among("clip", clips)], self.cut[side].first)
            for side, events in (("ref", self.ref), ("pred", self.pred))}
        ref, pred = self.ref.select(clips=clips), self.pred.select(clips=clips)
        given = None if self.given is None else tuple(
            mine if whole is events else whole.select(clips=clips)  # nothing cut: one list
            for whole, events, mine in zip(self.given, (self.ref, self.pred), (ref, pred),
                                           strict=True))
        durations = None if self.durations is None else {
            c: self.durations[c] for c in clips if c in self.durations}
        return Corpus(ref, pred, durations, clips, self.classes, cut, given)

    def project(self, policy: AuditPolicy) -> Prepared:
        """The events' traces on the policy's grid."""
        traces = TraceSet.from_events(self.ref, self.pred, hop=policy.hop,
                                      durations=self.durations, classes=self.classes,
                                      projection=policy.projection,
                                      max_frames=policy.max_frames)
        return Prepared(self.ref, self.pred, self.durations, traces, self.cut, self.given)


def check_corpus(ref: Any, pred: Any, policy: AuditPolicy, *, durations: Any = None,
                 classes: Sequence[str] | None = None) -> Corpus:
    """Every check of a reference/prediction pair, in one place and once for the whole
    corpus, without projecting it: the events and durations read, events past their clip's
    end cut and counted (or refused), clips and classes settled, and a grid that sees no
    reference event refused. Every path of an audit starts here."""
    ref_events, pred_events = events_of(ref, "ref"), events_of(pred, "pred")
    durations = durations_of(durations)
    cut, given = None, (ref_events, pred_events)
    if durations is not None:  # events past their clip's end: cut, counted, or refused
        ref_events, ref_cut = fit_to_durations(ref_events, durations, "ref",
                                               tolerance=policy.duration_tolerance,
                                               strict=policy.strict_durations)
        pred_events, pred_cut = fit_to_durations(pred_events, durations, "pred",
                                                 tolerance=policy.duration_tolerance,
                                                 strict=policy.strict_durations)
        cut = {"ref": ref_cut, "pred": pred_cut}
    clips, declared, lengths, rows = TraceSet.layout(ref_events, pred_events, hop=policy.hop,
                                                     durations=durations, classes=classes,
                                                     max_frames=policy.max_frames)
    refuse_unseen(ref_events, TraceSet.sees(ref_events, rows["ref"], lengths, policy.hop,
                                            policy.projection), policy.hop, policy.projection)
    return Corpus(ref_events, pred_events, durations, clips, tuple(declared), cut, given)


def prepare_traces(ref: Any, pred: Any, policy: AuditPolicy, *, durations: Any = None,
                   classes: Sequence[str] | None = None) -> Prepared:
    """Read and check the events (:func:`check_corpus`) and project them on the policy's
    grid."""
    return check_corpus(ref, pred, policy, durations=durations, classes=classes).project(policy)


def standard_results(prepared: Prepared, policy: AuditPolicy
                     ) -> dict[str, MetricResult] | None:
    """The standard scores the policy asks for, on the prepared traces (None when it asks
    for none)."""
    settings = policy.score_settings()
    return None if settings is None else standard_scores(
        prepared.ref, prepared.pred, prepared.traces, settings, durations=prepared.durations,
        edges=policy.edges, given=prepared.given)


def audit(ref: EventList | str | Path | Any, pred: EventList | str | Path | Any,
          policy: AuditPolicy | Mapping[str, Any] | None = None, *,
          durations: Mapping[str, float] | str | Path | Any = None, mode: str = "both",
          coordinates: Sequence[str] | str | None = None,
          classes: Sequence[str] | None = None,
          psds: PsdsRequest | None = None, auroc: AurocRequest | None = None,
          backend: str = "runs", jobs: int = 1, shard: tuple[int, int] | None = None,
          executor: Any = None, blocks: int | None = None,
          **settings: Any) -> GuardReport:
    """Run a contract on reference and prediction events; typed and union side by side.

    ``ref`` and ``pred``: event files, event lists, clip → [(onset, offset, label)] or
    DataFrames of DCASE rows; ``pred`` may be score tables instead (clip → DataFrame in
    sed_scores_eval's layout, or ``ScoreFolder.open(folder)``), made events by the policy's
    ``decision`` (threshold 0.5 when it has none). ``durations``: clip → seconds, a file or
    a DataFrame.
    ``policy`` (an :class:`AuditPolicy`, a mapping of its settings, or the defaults) decides
    every number; keywords such as ``contract=``, ``eps='100ms'``, ``hop=``, ``matching=``,
    ``decision=``, ``scores=ScoreSettings()`` change single settings of it. ``coordinates``
    selects and orders the vector (names, or one comma-separated string); ``classes``
    declares the classes. ``backend``: ``runs`` (default) evaluates the contract on run-length
    traces, all rows at once, at a cost that follows the events, not the frames; ``dense``
    on frame arrays a chunk of rows at a time (the reference; the same counts). ``jobs`` > 1:
    a pool of that many processes as the executor (below; the same report for any number).
    ``shard=(i, n)``: the report of the i-th of n consecutive, nearly equal blocks of the
    corpus's clips (numbered from 0); :meth:`GuardReport.concat` of all n is the corpus's
    report. Inputs are read and checked whole (:func:`check_corpus`: checks and classes are
    the corpus's); each block is projected alone, and one process is one block.
    ``executor``: anything with ``submit(fn, *args, **kwargs)`` returning a future (a
    ``concurrent.futures`` pool, a Dask ``distributed.Client``, …) audits ``blocks``
    consecutive blocks of the clips, each given only its clips' events; the joined report is
    the one process's, byte for byte (PSDS, from operating points or from score files, is
    joined from the blocks' whole counts). ``psds`` and ``auroc`` (an
    :class:`~sedcontract.scores.segment_roc.AurocRequest`: segment-based mAUC and mpAUC of
    score tables) add those curves' values, computed over the whole corpus.
    """
    policy = policy_of(policy, **settings)
    if backend not in BACKENDS:
        raise ContractCheckError(f"unknown monitor backend {backend!r}; choose one of "
                                 f"{', '.join(BACKENDS)}")
    check_jobs(jobs)
    if mode not in (*MODES, "both"):
        raise ContractCheckError(f"unknown mode {mode!r}; choose typed, union or both")
    if executor is not None and shard is not None:
        raise ContractCheckError("an executor audits blocks of the clips itself: give shard "
                                 "or executor, not both")
    if blocks is not None and (not is_whole(blocks)
                               or blocks < 1):
        raise ContractCheckError(f"blocks must be a whole number >= 1, got {blocks!r}")
    if executor is not None or jobs == 1:
        return _audit(ref, pred, policy, durations, mode, coordinates, classes, psds, auroc,
                      backend, shard, executor, blocks)
    return on_processes(jobs, __name__, lambda pool: _audit(
        ref, pred, policy, durations, mode, coordinates, classes, psds, auroc, backend, shard,
        pool, blocks or jobs))


def _audit(ref: Any, pred: Any, policy: AuditPolicy, durations: Any, mode: str,
           coordinates: Sequence[str] | str | None, classes: Sequence[str] | None,
           psds: PsdsRequest | None, auroc: AurocRequest | None, backend: str,
           shard: tuple[int, int] | None, executor: Any, blocks: int | None) -> GuardReport:
    """:func:`audit` once its arguments are checked: one process is one block, else blocks of
    the clips on ``executor``."""
    ref = events_of(ref, "ref")
    pred, policy = system_events(ref, pred, policy, classes)
    corpus = check_corpus(ref, pred, policy, durations=durations, classes=classes)
    chosen = _coordinates(coordinates, clause_names(policy.parsed)[0])
    clips = len(corpus.clips)
    first, stop = (0, clips) if shard is None else clip_range(clips, *shard)
    if shard is not None and (psds is not None or auroc is not None):
        raise ContractCheckError("PSDS and AUROC are curves over the whole corpus, not sums of "
                                 "counts: audit without shards to compute them")
    corpus_blocks = corpus.block(first, stop)
    if executor is None:  # one process is one block
        report = audit_block(corpus_blocks, policy, mode, chosen, backend)
    else:
        blocks = blocks or EXECUTOR_BLOCKS
        report = _on_executor(executor, blocks, corpus_blocks, policy, mode, chosen, backend)
    if psds is not None:
        report = replace(report, psds=corpus_psds(corpus, psds, classes, executor, blocks))
    return _with_auroc(report, corpus, auroc)


def _with_auroc(report: GuardReport, corpus: Corpus,
                auroc: AurocRequest | None) -> GuardReport:
    return report if auroc is None else replace(report, auroc=corpus_auroc(corpus, auroc))


def audit_block(block: Corpus, policy: AuditPolicy, mode: str, chosen: tuple[str, ...],
                backend: str) -> GuardReport:
    """The report of one block of a checked corpus (the whole corpus in one process), without
    PSDS: its traces, the contract's rows (``chosen``: the vector's coordinates, checked),
    and the standard scores the policy asks for."""
    prepared = block.project(policy)
    resolver = prepare_contract(policy, prepared.traces.classes)
    reports = mode_reports(policy, resolver, prepared.traces,
                           MODES if mode == "both" else (mode,), backend=backend)
    return GuardReport(policy.report(list(resolver.conversions.values())), prepared.facts(),
                       reports, policy.aggregation, chosen, standard_results(prepared, policy),
                       None)


def _on_executor(executor: Any, blocks: int, corpus: Corpus, policy: AuditPolicy, mode: str,
                 chosen: tuple[str, ...], backend: str) -> GuardReport:
    """:func:`audit_block` of consecutive blocks of the corpus's clips on ``executor``,
    joined; each block is given only its clips' events."""
    def task(a: int, b: int) -> Any:
        return executor.submit(audit_block, corpus.block(a, b), policy, mode, chosen, backend)

    return GuardReport.concat(block_results(len(corpus.clips), blocks, task, empty=True))


def corpus_psds(corpus: Corpus, psds: PsdsRequest, classes: Sequence[str] | None,
                executor: Any = None, blocks: int | None = None) -> dict[str, Any]:
    """PSDS of the whole corpus (or a note why not), on ``executor`` in ``blocks`` when
    given; the reference as given (PSDS has its own cut rule)."""
    given_ref = corpus.given[0] if corpus.given is not None else corpus.ref
    try:
        return psds.compute(given_ref, corpus.durations, classes, executor=executor,
                            blocks=blocks)
    except PsdsUnavailable as exc:
        return {"note": str(exc)}


def corpus_auroc(corpus: Corpus, auroc: AurocRequest) -> dict[str, Any]:
    """Segment-based mAUC and mpAUC of the whole corpus; the reference as given (as PSDS)."""
    given_ref = corpus.given[0] if corpus.given is not None else corpus.ref
    return auroc.compute(given_ref, corpus.durations)


def clause_names(contract: Contract) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    """The guard clauses, the diagnostics and each clause's sort (``frame`` or ``event``)."""
    return (tuple(c.name for c in contract.clauses if not c.diagnostic),
            tuple(c.name for c in contract.clauses if c.diagnostic),
            {c.name: ("event" if isinstance(c, EventClause) else "frame")
             for c in contract.clauses})


def prepare_contract(policy: AuditPolicy, classes: Sequence[str]) -> BoundResolver:
    """Check the policy's contract for ``classes`` once: the resolver its runs share (it
    records the time → frame conversions for the report's policy section)."""
    resolver = policy.resolver()
    check_atom_classes(policy.parsed, classes)
    return resolver


def mode_reports(policy: AuditPolicy, resolver: BoundResolver, traces: TraceSet,
                 modes: Sequence[str] = MODES, *, backend: str = "runs"
                 ) -> dict[str, ModeReport]:
    """The contract's counts on the traces, per mode, with a resolver from
    :func:`prepare_contract`."""
    contract = policy.parsed
    guard, diagnostics, sorts = clause_names(contract)
    needed = needed_signals(contract) | {"ref.active"}  # ref.active gives the table its shape
    reports = {}
    for name in modes:
        row_classes = traces.row_classes(name)
        if backend == "runs":  # every row at once
            result = run_rows(contract, traces.run_signals(name, needed),
                              traces.row_lengths(name), policy.edges, resolver, row_classes,
                              traces.classes, policy.matching)
        else:
            results = []
            for first, stop in traces.chunks(name):
                signals, lengths = traces.signals(name, (first, stop), needed)
                dense = SignalTable(signals, lengths=lengths, edges=policy.edges)
                results.append(run_contract(contract, dense, resolver,
                                            row_classes=row_classes[first:stop],
                                            classes=traces.classes, matching=policy.matching))
            result = ContractResult.concat(results)
        reports[name] = ModeReport(
            name, guard, diagnostics, sorts, traces.row_labels(name),
            {k: v.satisfied_per_row for k, v in result.clauses.items()},
            {k: v.obligations_per_row for k, v in result.clauses.items()},
            {k: MatchingCounts(k, m.method, m.greedy_per_row, m.exact_per_row)
             for k, m in result.matchings.items()})
    return reports


def clip_counts(ref: EventList, pred: EventList, policy: AuditPolicy, resolver: BoundResolver,
                *, durations: Mapping[str, float], classes: Sequence[str]
                ) -> dict[str, np.ndarray]:
    """``audit(ref, pred, policy, ...).arrays()`` (both modes) with the contract checked once
    (``resolver`` from :func:`prepare_contract`)."""
    prepared = prepare_traces(ref, pred, policy, durations=durations, classes=classes)
    return GuardReport({}, prepared.facts(), mode_reports(policy, resolver, prepared.traces),
                       scores=standard_results(prepared, policy)).arrays()


def empty_report(policy: AuditPolicy, classes: Sequence[str], modes: Sequence[str] = MODES, *,
                 conversions: Sequence[Conversion] = (), durations_given: bool = True
                 ) -> GuardReport:
    """The report of no clips, made without a run: the structure of every report of this
    policy and classes (:meth:`GuardReport.rebuild` fills it with clips' counts)."""
    contract, classes, n = policy.parsed, tuple(classes), len(classes)
    guard, diagnostics, sorts = clause_names(contract)
    none, table = np.zeros(0, dtype=np.int64), np.zeros((0, n), dtype=np.int64)
    facts = TraceFacts((), classes, policy.hop, policy.projection, durations_given,
                       dict.fromkeys(SIDES, table), dict.fromkeys(SIDES, none),
                       dict.fromkeys(SIDES, none), none, np.zeros((0, n + 1), dtype=np.int64),
                       dict.fromkeys(SIDES, none) if durations_given else None)
    paired = dict.fromkeys(c.match for c in contract.clauses
                           if isinstance(c, EventClause) and c.each == "pair")
    matchings = {m: MatchingCounts(m, policy.matching or contract.matches[m].method, none, none)
                 for m in paired}  # the matchings a run audits: those pair clauses use
    counts = dict.fromkeys((*guard, *diagnostics), none)
    reports = {mode: ModeReport(mode, guard, diagnostics, sorts, [], counts, counts, matchings)
               for mode in modes}
    scores = None if policy.scores is None else {
        name: MetricResult((), classes, table, table, table, none,
                           none if name == "event" else None) for name in SCORE_NAMES}
    return GuardReport(policy.report(list(conversions)), facts, reports, policy.aggregation,
                       guard, scores)


def count_layout(policy: AuditPolicy, classes: Sequence[str], modes: Sequence[str] = MODES
                 ) -> dict[str, int]:
    """The counts one clip adds to a report (:meth:`GuardReport.arrays`, in order): name →
    numbers per clip, without a run."""
    return {k: v.shape[1] for k, v in empty_report(policy, classes, modes).arrays().items()}

def run_rows(contract: Contract, signals: Mapping[str, Intervals], lengths: np.ndarray,
             edges: str, resolver: BoundResolver, row_classes: np.ndarray,
             classes: Sequence[str], matching: str | None) -> ContractResult:
    """A checked contract on rows of run-length traces."""
    table = RunTable(signals, lengths, edges=edges)
    return run_contract(contract, table, resolver, row_classes=row_classes, classes=classes,
                        matching=matching)


@dataclass(frozen=True)
class ScoresReport:
    """The standard scores of one system alone (``sedcontract scores``): no contract runs."""

    policy: dict[str, Any]
    traces: dict[str, Any]
    scores: dict[str, MetricResult]
    psds: dict[str, Any] | None = None
    auroc: dict[str, Any] | None = None


def score(ref: EventList | str | Path | Any, pred: EventList | str | Path | Any,
          policy: AuditPolicy | Mapping[str, Any] | None = None, *,
          durations: Mapping[str, float] | str | Path | None = None,
          classes: Sequence[str] | None = None,
          psds: PsdsRequest | None = None, auroc: AurocRequest | None = None,
          **settings: Any) -> ScoresReport:
    """The standard scores (``policy.scores``, default settings when None) on the policy's
    traces, without running the contract; the policy section is the guard report's. The
    inputs are taken in every form :func:`audit` takes."""
    policy = policy_of(policy, **settings)
    if policy.scores is None:
        policy = policy.but(scores=ScoreSettings())
    ref = events_of(ref, "ref")
    pred, policy = system_events(ref, pred, policy, classes)
    corpus = check_corpus(ref, pred, policy, durations=durations, classes=classes)
    prepared = corpus.project(policy)
    return ScoresReport(policy.report(policy.conversions()), prepared.facts().as_dict(),
                        standard_results(prepared, policy) or {},
                        None if psds is None else corpus_psds(corpus, psds, classes),
                        None if auroc is None else corpus_auroc(corpus, auroc))
