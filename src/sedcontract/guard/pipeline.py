"""The audit pipeline: the standard-contract audit of a reference/prediction pair, per
coordinate, per class and per clip, on the typed and union traces (one process is one block,
else blocks on an executor), and the standard scores alone."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

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
from sedcontract.contracts.policy import AuditPolicy, ScoreSettings, policy_of
from sedcontract.contracts.runs import BACKENDS, RunTable
from sedcontract.contracts.syntax import Contract, EventClause
from sedcontract.errors import ContractCheckError, of_kind
from sedcontract.guard.facts import TraceFacts, refuse_unseen
from sedcontract.guard.report import GuardReport, MatchingCounts, ModeReport, ScoresReport
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

__all__ = ["audit", "clip_counts", "count_layout", "empty_report", "mode_reports",
           "prepare_contract", "score"]


def system_events(ref: EventList, pred: Any, policy: AuditPolicy,
                  classes: Sequence[str] | None) -> tuple[Any, AuditPolicy]:
    """The system's events and the policy that says how they were made: score tables in
    memory (clip → DataFrame in sed_scores_eval's layout, or a table source such as a
    :class:`~sedcontract.traces.score_files.ScoreFolder`) become events under the policy's decision
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
    of_kind("psds", psds, PsdsRequest, optional=True)
    of_kind("auroc", auroc, AurocRequest, optional=True)
    if shard is not None and not (isinstance(shard, tuple | list) and len(shard) == 2):
        raise ContractCheckError(f"shard must be a pair (index, count), got {shard!r}")
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
    of_kind("psds", psds, PsdsRequest, optional=True)
    of_kind("auroc", auroc, AurocRequest, optional=True)
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
