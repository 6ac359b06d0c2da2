"""Guard vectors: the standard-contract audit of a reference/prediction pair, per coordinate,
per class and per clip, on the typed and union traces, with the policy that produced it."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.audit.psds import PsdsUnavailable, psds
from sedcontract.audit.scores import MetricResult, standard_scores
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.contract import (
    ContractResult,
    check_atom_classes,
    needed_signals,
    run_contract,
)
from sedcontract.contracts.events import MatchingAudit
from sedcontract.contracts.monitor import SignalTable
from sedcontract.contracts.policy import AGGREGATIONS, AuditPolicy, ScoreSettings, policy_of
from sedcontract.contracts.runs import BACKENDS, RunTable
from sedcontract.contracts.syntax import Contract, EventClause
from sedcontract.errors import ContractCheckError, SedContractError, TraceFormatError
from sedcontract.traces import MODES, EventList, TraceSet, read_durations, read_events
from sedcontract.traces.intervals import Intervals
from sedcontract.traces.names import shorten

__all__ = ["AGGREGATIONS", "Cell", "GuardReport", "ModeReport", "ScoresReport", "audit",
           "score"]


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
class ModeReport:
    """All clause counts of one trace mode (typed or union), kept per row."""

    mode: str
    coordinates: tuple[str, ...]
    diagnostics: tuple[str, ...]
    sorts: dict[str, str]
    rows: list[tuple[str, str | None]]          # (clip, class) per row; class None on union
    satisfied: dict[str, np.ndarray]
    obligations: dict[str, np.ndarray]
    matchings: dict[str, MatchingAudit] = field(default_factory=dict)

    def micro(self, name: str) -> Cell:
        """Counts pooled over every clip and class."""
        return Cell(int(self.satisfied[name].sum()), int(self.obligations[name].sum()))

    def _grouped(self, name: str, key: int) -> dict[Any, Cell]:
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
    """Guard vectors of one audit, by mode, with the policy and trace facts behind them."""

    policy: dict[str, Any]
    traces: dict[str, Any]
    modes: dict[str, ModeReport]
    aggregation: str = "micro"
    coordinates: tuple[str, ...] = ()
    scores: dict[str, MetricResult] | None = None  # standard scores on the same traces
    psds: dict[str, Any] | None = None  # PSDS1/PSDS2 from score files, or a note why not

    def vector(self, mode: str) -> dict[str, float]:
        """``{coordinate: score}`` under the report's aggregation."""
        report = self.modes[mode]
        return {name: report.score(name, self.aggregation) for name in self.coordinates}

    def logic(self, mode: str) -> float:
        return self.modes[mode].logic(self.aggregation, self.coordinates)


def _load(value: EventList | str | Path, what: str) -> EventList:
    if isinstance(value, EventList):
        return value
    if isinstance(value, str | os.PathLike):
        return read_events(value)
    raise SedContractError(f"{what} must be an EventList or the path of a DCASE event tsv, got "
                           f"{type(value).__name__}")


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


def class_warnings(ref: EventList, pred: EventList) -> list[str]:
    """Class sets that cannot be meant: classes that differ only in case, or a prediction with
    no class of the reference."""
    ref_classes, pred_classes = set(ref.classes), set(pred.classes)
    notes = []
    lower = {c.lower(): c for c in ref_classes}
    for c in sorted(pred_classes - ref_classes):
        if c.lower() in lower:
            notes.append(f"predicted class {shorten(c, 40)!r} and reference class "
                         f"{shorten(lower[c.lower()], 40)!r} differ only in case: they are "
                         "different classes")
    if ref_classes and pred_classes and not ref_classes & pred_classes:
        notes.append(f"the predictions share no class with the reference (reference: "
                     f"{_names(ref_classes)}; predictions: {_names(pred_classes)})")
    return notes


def _names(classes: set[str], most: int = 8) -> str:
    """Some class names for a message, shortened."""
    shown = [shorten(c, 40) for c in sorted(classes)[:most]]
    return ", ".join(shown) + (f" and {len(classes) - most} more" if len(classes) > most else "")


def projection_warnings(traces: TraceSet, ref: EventList, pred: EventList) -> list[str]:
    """Events the grid cannot see; refused outright when no reference event is left."""
    positive = int(np.count_nonzero(ref.offset > ref.onset))
    if positive and not len(traces.runs["ref"]):
        raise TraceFormatError(f"none of the {positive} reference events covers a frame at hop "
                               f"{traces.hop:g} s (projection {traces.projection}): the grid is "
                               "coarser than the events and every score would be vacuous or "
                               "perfect; choose a smaller hop", path=ref.path)
    notes = []
    for side, events in (("reference", ref), ("predicted", pred)):
        lost = traces.vanished["ref" if side == "reference" else "pred"]
        if lost:
            notes.append(f"{lost} of {len(events)} {side} events cover no frame at hop "
                         f"{traces.hop:g} s (projection {traces.projection}); the vector does "
                         "not see them")
    return notes


@dataclass(frozen=True)
class Prepared:
    """What every report of a reference/prediction pair starts from: the events, durations,
    their traces on the policy's grid and the warnings about them."""

    ref: EventList
    pred: EventList
    durations: Mapping[str, float] | None
    traces: TraceSet
    warnings: list[str]

    def facts(self) -> dict[str, Any]:
        """The ``traces`` section of a report."""
        t = self.traces
        return {"clips": len(t.clips), "classes": list(t.classes), "vanished": t.vanished,
                "merged": t.merged,
                "durations": "given" if self.durations is not None else "latest offset per clip",
                "warnings": self.warnings}


def prepare_traces(ref: EventList | str | Path, pred: EventList | str | Path,
                   policy: AuditPolicy, *,
                   durations: Mapping[str, float] | str | Path | None = None,
                   classes: Sequence[str] | None = None) -> Prepared:
    """Read the events (files or event lists) and durations and project them on the policy's
    grid."""
    ref_events, pred_events = _load(ref, "ref"), _load(pred, "pred")
    if durations is not None and not isinstance(durations, Mapping):
        if not isinstance(durations, str | os.PathLike):
            raise SedContractError(f"durations must map clips to seconds or be the path of a "
                                   f"durations tsv, got {type(durations).__name__}")
        durations = read_durations(durations)
    traces = TraceSet.from_events(ref_events, pred_events, hop=policy.hop, durations=durations,
                                  classes=classes, projection=policy.projection,
                                  max_frames=policy.max_frames)
    warnings = projection_warnings(traces, ref_events, pred_events) + class_warnings(
        ref_events, pred_events)
    return Prepared(ref_events, pred_events, durations, traces, warnings)


def standard_and_psds(prepared: Prepared, policy: AuditPolicy,
                      psds_scores: str | Path | None
                      ) -> tuple[dict[str, MetricResult] | None, dict[str, Any] | None]:
    """The standard scores the policy asks for, on the prepared traces, and PSDS from score
    files (or a note why not)."""
    settings = policy.score_settings()
    standard = None if settings is None else standard_scores(
        prepared.ref, prepared.pred, prepared.traces, settings, durations=prepared.durations,
        edges=policy.edges)
    result = None
    if psds_scores is not None:
        try:
            result = psds(psds_scores, prepared.ref, prepared.durations)
        except PsdsUnavailable as exc:
            result = {"note": str(exc)}
    return standard, result


def audit(ref: EventList | str | Path, pred: EventList | str | Path,
          policy: AuditPolicy | Mapping[str, Any] | None = None, *,
          durations: Mapping[str, float] | str | Path | None = None, mode: str = "both",
          coordinates: Sequence[str] | str | None = None,
          classes: Sequence[str] | None = None, psds_scores: str | Path | None = None,
          backend: str = "runs", jobs: int = 1, **settings: Any) -> GuardReport:
    """Run a contract on reference and prediction events; typed and union side by side.

    ``policy`` (an :class:`AuditPolicy`, a mapping of its settings, or the defaults) decides
    every number; keywords such as ``contract=``, ``eps='100ms'``, ``hop=``, ``matching=``,
    ``decision=``, ``scores=ScoreSettings()`` change single settings of it. ``coordinates``
    selects and orders the vector (names, or one comma-separated string); ``classes``
    declares the classes. ``backend``: ``runs`` (default) evaluates the contract on run-length
    traces, all rows at once, at a cost that follows the events, not the frames; ``dense``
    on frame arrays a chunk of rows at a time (the reference; the same counts). ``jobs``:
    processes that share the rows of the run-length backend (the same report for any number).
    """
    policy = policy_of(policy, **settings)
    if backend not in BACKENDS:
        raise ContractCheckError(f"unknown monitor backend {backend!r}; choose one of "
                                 f"{', '.join(BACKENDS)}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ContractCheckError(f"jobs must be a whole number >= 1, got {jobs!r}")
    if mode not in (*MODES, "both"):
        raise ContractCheckError(f"unknown mode {mode!r}; choose typed, union or both")
    contract = policy.parsed
    prepared = prepare_traces(ref, pred, policy, durations=durations, classes=classes)
    traces = prepared.traces
    guard = tuple(c.name for c in contract.clauses if not c.diagnostic)
    diagnostics = tuple(c.name for c in contract.clauses if c.diagnostic)
    chosen = _coordinates(coordinates, guard)
    resolver = policy.resolver()
    check_atom_classes(contract, traces.classes)
    needed = needed_signals(contract) | {"ref.active"}  # ref.active gives the table its shape
    sorts = {c.name: ("event" if isinstance(c, EventClause) else "frame")
             for c in contract.clauses}
    reports = {}
    workers = min(jobs, len(traces.clips)) if backend == "runs" else 1
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn")) if workers > 1 \
        else None
    for name in MODES if mode == "both" else (mode,):
        row_classes = traces.row_classes(name)
        if backend == "runs":
            signals, lengths = traces.run_signals(name, needed), traces.row_lengths(name)
            per = len(traces.classes) if name == "typed" else 1
            blocks = _blocks(len(traces.clips), max(workers, 1), per)
            parts = [(contract, {k: v.rows_between(a, b) for k, v in signals.items()},
                      lengths[a:b], policy.edges, resolver, row_classes[a:b], traces.classes,
                      policy.matching) for a, b in blocks]
            if pool is None:
                results = [run_rows(*part) for part in parts]
            else:
                try:
                    results = [f.result() for f in [pool.submit(run_rows, *p) for p in parts]]
                except BaseException:
                    pool.shutdown(cancel_futures=True)
                    raise
            for conversion in results[0].conversions:  # the workers' copies of the resolver
                resolver.conversions.setdefault(conversion.text, conversion)
            result = ContractResult.concat(results)
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
            result.matchings)
    if pool is not None:
        pool.shutdown()
    standard, psds_result = standard_and_psds(prepared, policy, psds_scores)
    return GuardReport(policy.report(list(resolver.conversions.values())), prepared.facts(),
                       reports, policy.aggregation, chosen, standard, psds_result)


def _blocks(clips: int, parts: int, per: int) -> list[tuple[int, int]]:
    """``parts`` consecutive row ranges of about equal size, cut at clip boundaries (a clip's
    ``per`` rows stay together)."""
    cuts = np.unique(np.linspace(0, clips, parts + 1).round().astype(np.int64)) * per
    return [(int(a), int(b)) for a, b in pairwise(cuts)] or [(0, 0)]


def run_rows(contract: Contract, signals: Mapping[str, Intervals], lengths: np.ndarray,
             edges: str, resolver: BoundResolver, row_classes: np.ndarray,
             classes: Sequence[str], matching: str | None) -> ContractResult:
    """A checked contract on a block of rows of run-length traces (one process's share)."""
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


def score(ref: EventList | str | Path, pred: EventList | str | Path,
          policy: AuditPolicy | Mapping[str, Any] | None = None, *,
          durations: Mapping[str, float] | str | Path | None = None,
          classes: Sequence[str] | None = None, psds_scores: str | Path | None = None,
          **settings: Any) -> ScoresReport:
    """The standard scores (``policy.scores``, default settings when None) on the policy's
    traces, without running the contract; the policy section is the guard report's."""
    policy = policy_of(policy, **settings)
    if policy.scores is None:
        policy = policy.but(scores=ScoreSettings())
    prepared = prepare_traces(ref, pred, policy, durations=durations, classes=classes)
    standard, psds_result = standard_and_psds(prepared, policy, psds_scores)
    return ScoresReport(policy.report(policy.conversions()), prepared.facts(), standard or {},
                        psds_result)
