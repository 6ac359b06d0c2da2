"""Scoring and auditing a system's output from its files, as one request: what ``sedcontract
scores`` and ``sedcontract audit`` compute, from Python. A request holds paths and settings;
:meth:`ScoresRequest.compute` reads the files and returns an :class:`~sedcontract.analysis.
audited.Audited`, which renders itself."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from sedcontract.analysis.audited import Audited
from sedcontract.analysis.curve_request import CurvesRequest
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError, shortened
from sedcontract.guard import (
    GuardReport,
    ScoreSettings,
    ScoresReport,
    audit,
    score,
    score_intervals,
)
from sedcontract.scores.psds.operating_points import read_points
from sedcontract.scores.psds.request import PsdsRequest, paired_psds
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.scores.segment_roc import AurocRequest, AurocSettings, paired_auroc
from sedcontract.traces import EventList, read_durations, read_events
from sedcontract.traces.classmap import ClassMap, read_class_map
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import detections, held
from sedcontract.traces.overrun import fit_to_durations
from sedcontract.traces.score_files import ScoreFolder
from sedcontract.traces.tsv import with_clips

__all__ = ["AuditRequest", "ScoresRequest", "say_on_stderr"]

Say = Callable[[str], None]
Names = Mapping[str, str] | None  # field -> how the caller calls it (the CLI: its options)


def _namer(names: Names) -> Callable[[str], str]:
    return lambda name: (names or {}).get(name, name)


def say_on_stderr(text: str) -> None:
    """What a request says while it computes (warnings, skipped files), as the CLI says it."""
    print(f"sedcontract: {shortened(text)}", file=sys.stderr)


class _Inputs(NamedTuple):
    """The reference as read, the class map and the declared classes."""

    ref: EventList
    class_map: ClassMap | None
    classes: list[str] | None


@dataclass(frozen=True)
class ScoresRequest:
    """The standard scores of a system's output against the reference ``ref``: events
    (``pred``), score files (``pred_scores``: events under the policy's decision, PSDS, mAUC
    and mpAUC from their scores with ``with_scores``) or operating-point tables
    (``pred_points``: PSDS by psds_eval's rule), all paths. ``with_scores``: the standard
    scores (the policy's settings, default ones when it has none), and PSDS, mAUC and mpAUC
    of score files. ``bootstrap`` draws give intervals; ``compare_scores`` a second system's
    score files for paired differences. ``shown``: the Markdown report goes where ``say``
    writes, so what it shows is not said."""

    ref: str
    policy: AuditPolicy = field(default_factory=AuditPolicy)
    pred: str | None = None
    pred_scores: str | None = None
    pred_points: tuple[str, ...] | None = None
    durations: str | None = None
    clips: str = "ref"
    classes: tuple[str, ...] | None = None
    class_map: str | None = None
    windows: bool = False
    skip_unlisted: bool = False
    psds: Mapping[str, PsdsSettings] = field(default_factory=lambda: dict(PRESETS))
    psds_cut: bool = False
    auroc: AurocSettings = field(default_factory=AurocSettings)
    with_scores: bool = True
    bootstrap: int = 0
    bootstrap_seed: int = 0
    level: float = 0.95
    compare_scores: str | None = None
    shown: bool = False

    def compute(self, say: Say = say_on_stderr, names: Names = None) -> Audited:
        """Check the request, read the inputs and compute what it asks; ``say`` hears the
        warnings; ``names``: how the caller calls the fields, in messages."""
        self.check(names)
        n = _namer(names)
        inputs = self._inputs()
        if self.pred is None and self.pred_scores is None:
            return self._points_alone(inputs, say)
        pred, tables = self._predictions(inputs, say)
        folder = tables if self.with_scores else None  # PSDS and AUROC read the scores
        _overlap_warnings(inputs.ref, "reference", say)
        report = self._report(inputs, pred, self._psds_request(folder, inputs.class_map),
                              self._auroc_request(folder))
        self._report_warnings(report, say)
        self._psds_warnings(report.psds, say)
        if self.bootstrap and self.pred_points:
            say(f"warning: {n('bootstrap')}: PSDS from operating points (psds_eval's rule) "
                f"gets no interval; PSDS from score files ({n('pred_scores')}) does")
        return self._finish(inputs, report, pred, tables, folder, say)

    def check(self, names: Names = None) -> None:
        """Refuse contradicting inputs before any file is read (``names``: how the caller
        calls each field; by default the fields' names)."""
        self.check_inputs(names)
        self.check_compare(names)

    def check_inputs(self, names: Names = None) -> None:
        """One system output, one PSDS source, the files the clips and windows need."""
        n = _namer(names)
        if self.pred is not None and self.pred_scores is not None:
            raise SedContractError(f"give one of {n('pred')} (event tsv) or {n('pred_scores')} "
                                   "(a directory of score tsv files), not both")
        if self.pred_points and self.pred_scores is not None:
            raise SedContractError(f"PSDS comes from {n('pred_scores')} or from "
                                   f"{n('pred_points')}, not both")
        if self.clips == "durations" and not self.durations:
            raise SedContractError(f"{n('clips')} durations needs {n('durations')}")
        if self.pred is None and self.pred_scores is None:
            self._check_without_events(n)
        if self.windows and self.pred_scores is None:
            raise SedContractError(f"{n('windows')} merges score files ({n('pred_scores')}); "
                                   "events of overlapping windows cannot be averaged")

    def _check_without_events(self, n: Callable[[str], str]) -> None:
        """PSDS of operating points alone needs the points and the clips' durations."""
        if not self.pred_points:
            raise SedContractError(f"give {n('pred')} (event tsv), {n('pred_scores')} (a "
                                   f"directory of score tsv files) or {n('pred_points')} "
                                   "(operating-point tables)")
        if not self.durations:
            raise SedContractError(f"PSDS needs clip durations: add {n('durations')}")

    def check_compare(self, names: Names = None) -> None:
        """A second system's score files are compared on the first one's, over durations."""
        n = _namer(names)
        if self.compare_scores is not None and not (self.pred_scores is not None
                                                    and self.with_scores and self.durations):
            raise SedContractError(f"{n('compare_scores')} compares PSDS, mAUC and mpAUC of "
                                   f"two systems' score files: give {n('pred_scores')} (with "
                                   f"{n('with_scores')} in audit) and {n('durations')}")

    def _inputs(self) -> _Inputs:
        """The reference events (with ``clips="durations"``, also the clips only the durations
        file lists: clips without events), the class map and the declared classes."""
        ref = read_events(self.ref)
        if self.clips == "durations":
            ref = with_clips(ref, read_durations(self.durations))
        class_map = read_class_map(self.class_map) if self.class_map else None
        classes = list(self.classes) if self.classes else \
            (list(class_map.kept) if class_map is not None else None)
        return _Inputs(ref, class_map, classes)

    def _points_alone(self, inputs: _Inputs, say: Say) -> Audited:
        """PSDS of operating-point tables alone (no events at one threshold)."""
        durations = read_durations(self.durations)
        fit_to_durations(inputs.ref, durations, "ref",  # refused beyond the tolerance
                         tolerance=self.policy.duration_tolerance,
                         strict=self.policy.strict_durations)
        _overlap_warnings(inputs.ref, "reference", say)
        result = self._psds_request(None, inputs.class_map).compute(inputs.ref, durations,
                                                                    inputs.classes)
        self._psds_warnings(result, say)
        return Audited(None, result)

    def _predictions(self, inputs: _Inputs, say: Say
                     ) -> tuple[EventList | str, ScoreFolder | None]:
        """The system's events (a path when nothing needs changing) and the score folder (read
        again, clip by clip) when score files are given."""
        if self.pred_scores is None:
            if inputs.class_map is None:
                return self.pred, None
            return inputs.class_map.events(read_events(self.pred)), None
        skipped: list[str] | None = [] if self.skip_unlisted else None
        folder = ScoreFolder.open(self.pred_scores, inputs.ref.clips,
                                  class_map=inputs.class_map, windows=self.windows,
                                  skipped=skipped, durations=self.durations)
        if skipped:
            say(f"skipped {len(skipped)} score file(s) of clips the reference does not list "
                f"(first: {Path(skipped[0]).name})")
        folder = held(folder)  # read once for the events, PSDS, AUROC and curves
        pred = detections(folder, inputs.ref, self._policy.decision, self.pred_scores,
                          declared=inputs.classes)
        if inputs.classes is not None:  # the declared classes' columns (PSDS scores each)
            folder = folder.only(inputs.classes)
        return pred, folder

    @cached_property
    def _policy(self) -> AuditPolicy:
        """The policy, with the standard scores' default settings when ``with_scores`` and it
        has none; score files are thresholded under its decision (the default one when it has
        none), which the report names."""
        policy = self.policy
        if self.with_scores and policy.scores is None:
            policy = policy.but(scores=ScoreSettings())
        if self.pred_scores is not None and policy.decision is None:
            policy = policy.but(decision=DecisionPolicy())
        return policy

    def _psds_request(self, folder: ScoreFolder | None,
                      class_map: ClassMap | None) -> PsdsRequest | None:
        """PSDS from the score files or from ``pred_points`` (mapped through the class map
        like the other predictions)."""
        if self.pred_points:
            points = read_points(self.pred_points, self.point_others())
            if class_map is not None:
                points = [class_map.events(table) for table in points]
            return PsdsRequest(points=points, settings=self.psds, cut=self.psds_cut)
        if folder is not None:
            return PsdsRequest(scores=folder, settings=self.psds, cut=self.psds_cut,
                               resamples=self.bootstrap, seed=self.bootstrap_seed,
                               level=self.level)
        return None

    def point_others(self) -> dict[str, str | None]:
        """The inputs that must not stand among the operating-point tables."""
        return {"--ref": self.ref, "--durations": self.durations}

    def _auroc_request(self, folder: ScoreFolder | None) -> AurocRequest | None:
        if folder is None:
            return None
        return AurocRequest(folder, self.auroc, self.bootstrap, self.bootstrap_seed,
                            self.level)

    def _report(self, inputs: _Inputs, pred: Any, psds: PsdsRequest | None,
                auroc: AurocRequest | None) -> GuardReport | ScoresReport:
        """The score functions alone: no contract runs."""
        return score(inputs.ref, pred, self._policy, durations=self.durations, psds=psds,
                     auroc=auroc, classes=inputs.classes)

    def _report_warnings(self, report: GuardReport | ScoresReport, say: Say,
                         source: str = "") -> None:
        """The report's warnings (the scores' tables do not show them)."""
        for warning in report.traces["warnings"]:
            say(f"warning: {source}{warning}")

    def _psds_warnings(self, result: dict | None, say: Say) -> None:
        """What PSDS from operating points joined in the tables, once: not when the Markdown
        report, whose PSDS table says it, is shown where ``say`` writes."""
        if not result or "note" in result or self.shown:
            return
        joined = next(iter(result.values())).get("joined") or {}
        if joined.get("points"):
            say(f"warning: {joined['points']} detection(s) of the operating points overlap an "
                "earlier one of their clip and class and are joined with it for PSDS "
                "(psds_eval refuses them)")

    def _finish(self, inputs: _Inputs, report: Any, pred: Any, tables: ScoreFolder | None,
                folder: ScoreFolder | None, say: Say) -> Audited:
        """The bootstrap intervals of the scores and the paired ranking differences."""
        sections = {} if not self.bootstrap else {"intervals": {"scores": score_intervals(
            report.scores, resamples=self.bootstrap, seed=self.bootstrap_seed,
            level=self.level)}}
        return Audited(report, report.psds, sections, ranking=self._ranking(inputs, folder),
                       seed=self.bootstrap_seed, titles=self._titles())

    def _ranking(self, inputs: _Inputs, folder: ScoreFolder | None
                 ) -> dict[str, dict[str, Any]] | None:
        """PSDS (each scenario), mAUC and mpAUC of ``pred_scores`` minus those of
        ``compare_scores``, each with its paired bootstrap interval (the same clips drawn for
        both; ``bootstrap`` resamples, default 2000)."""
        if self.compare_scores is None:
            return None
        other = ScoreFolder.open(self.compare_scores, inputs.ref.clips,
                                 class_map=inputs.class_map, windows=self.windows,
                                 durations=self.durations,
                                 skipped=[] if self.skip_unlisted else None)
        if inputs.classes is not None:
            other = other.only(inputs.classes)
        durations = read_durations(self.durations)
        keywords = {"resamples": self.bootstrap or 2000, "seed": self.bootstrap_seed,
                    "level": self.level}
        return {**paired_psds(folder, other, inputs.ref, durations, self.psds,
                              cut=self.psds_cut, **keywords),
                **paired_auroc(folder, other, inputs.ref, durations, self.auroc, **keywords)}

    def _titles(self) -> dict[str, str]:
        """The titles of the paired sections."""
        if self.compare_scores is None:
            return {}
        return {"ranking": "Paired difference of the ranking metrics, "
                + self._pair_title("--compare-scores", self.compare_scores)}

    def _pair_title(self, option: str, against: str) -> str:
        """``--pred A minus <option> B``, by file name, or by path where the names are one."""
        mine, named = ("--pred", self.pred) if self.pred is not None else \
            ("--pred-scores", self.pred_scores)
        a, b = Path(named), Path(against)
        same = a.name == b.name
        return f"{mine} {a if same else a.name} minus {option} {b if same else b.name}"

    @property
    def system_name(self) -> str:
        """The system's name (in an audit's source rows): the prediction's stem."""
        source = self.pred if self.pred is not None else self.pred_scores
        return Path(source).stem if source else "system"


@dataclass(frozen=True)
class AuditRequest(ScoresRequest):
    """The guard vector of a system's output (:class:`ScoresRequest`'s inputs; the standard
    scores with ``with_scores``) in ``mode`` for ``coordinates``; ``soft`` labels add the
    table by annotation confidence; ``compare``: a second system's events for paired
    differences; ``curves``: the guard vector at every threshold of the score files;
    ``shard`` (I, N): block I of N for ``sedcontract merge``; ``bootstrap``, ``jobs`` and
    ``shard`` apply to the curves too; ``intervals``: the bootstrap intervals and the
    ``compare`` comparison, computed on the report (source rows leave both to ``sedcontract
    report``)."""

    with_scores: bool = False
    mode: str = "both"
    coordinates: tuple[str, ...] | None = None
    system: str | None = None
    soft: str | None = None
    shard: tuple[int, int] | None = None
    backend: str = "runs"
    jobs: int = 1
    compare: str | None = None
    curves: CurvesRequest | None = None
    intervals: bool = True

    def check(self, names: Names = None) -> None:
        super().check(names)
        self.check_curves(names)
        self.check_shard(names)

    def _check_without_events(self, n: Callable[[str], str]) -> None:
        raise SedContractError(f"the guard vector needs one system output: give {n('pred')} "
                               f"or {n('pred_scores')} ({n('pred_points')} adds PSDS)")

    def check_shard(self, names: Names = None) -> None:
        """A shard carries counts that merge into the corpus's; what needs the whole corpus
        (intervals over its clips, paired differences) is refused, not dropped."""
        n = _namer(names)
        whole = [n(name) for name, value in (("bootstrap", self.bootstrap),
                                             ("compare", self.compare),
                                             ("compare_scores", self.compare_scores)) if value]
        if self.shard is not None and whole:
            raise SedContractError(f"{' and '.join(whole)} resample or pair the whole corpus, "
                                   f"which a shard ({n('shard')}) does not hold: audit the "
                                   f"corpus without {n('shard')} ({n('jobs')} shares its clips "
                                   "between processes)")

    def check_curves(self, names: Names = None) -> None:
        """The curves need score files and their durations, and a policy they are exact for."""
        if self.curves is None:
            return
        n = _namer(names)
        if not (self.pred_scores is not None and self.durations):
            raise SedContractError(f"{n('curves')} follows the guard vector over every "
                                   f"threshold of score files: give {n('pred_scores')} and "
                                   f"{n('durations')}")
        self.curves.check(self._policy, names)

    def _auroc_request(self, folder: ScoreFolder | None) -> AurocRequest | None:
        return None if self.shard is not None else super()._auroc_request(folder)

    def _report(self, inputs: _Inputs, pred: Any, psds: PsdsRequest | None,
                auroc: AurocRequest | None) -> GuardReport:
        return audit(inputs.ref, pred, self._policy, durations=self.durations,
                     mode=self.mode, coordinates=self.coordinates, psds=psds, auroc=auroc,
                     classes=inputs.classes, backend=self.backend, jobs=self.jobs,
                     shard=self.shard)

    def _report_warnings(self, report: GuardReport | ScoresReport, say: Say,
                         source: str = "") -> None:
        """Not when the Markdown report, which shows them above the vector, is shown where
        ``say`` writes."""
        if source or not self.shown:
            super()._report_warnings(report, say, source)

    def _finish(self, inputs: _Inputs, report: Any, pred: Any, tables: ScoreFolder | None,
                folder: ScoreFolder | None, say: Say) -> Audited:
        """A shard's corpus key and curves' section; else the intervals, the paired
        comparisons, the table by annotation confidence and the curves' summary."""
        keywords = {"seed": self.bootstrap_seed, "system": self.system or self.system_name,
                    "titles": self._titles(), "shard": self.shard}
        if self.shard is not None:
            corpus = self._corpus(inputs, report, pred)
            return Audited(report, report.psds, corpus=corpus,
                           curves=self._curves(inputs, tables), **keywords)
        from sedcontract.analysis.confidence import by_confidence
        from sedcontract.traces.soft import read_soft_tsv

        ranking = self._ranking(inputs, folder)
        soft = read_soft_tsv(self.soft) if self.soft else None
        confidence = None if soft is None else by_confidence(
            inputs.ref, pred, self._policy, soft, durations=self.durations,
            classes=inputs.classes)
        sections = self._sections(report, inputs, say) if self.intervals else {}
        return Audited(report, report.psds, sections, soft, confidence, ranking=ranking,
                       curves=self._curves(inputs, tables), **keywords)

    def _curves(self, inputs: _Inputs, tables: ScoreFolder | None) -> dict[str, Any] | None:
        """The curves' summary (a shard's section) of the score files, when asked."""
        if self.curves is None:
            return None
        return self.curves.compute(inputs.ref, tables, read_durations(self.durations),
                                   self._policy, resamples=self.bootstrap,
                                   seed=self.bootstrap_seed, level=self.level, jobs=self.jobs,
                                   shard=self.shard)

    def _corpus(self, inputs: _Inputs, report: GuardReport, pred: Any) -> dict[str, Any]:
        from sedcontract.guard.shards import corpus_key

        durations = read_durations(self.durations) if self.durations else None
        events = pred if isinstance(pred, EventList) else read_events(pred)
        return corpus_key(inputs.ref, events, report.facts.classes, durations)

    def _titles(self) -> dict[str, str]:
        titles = super()._titles()
        if self.compare:
            titles["comparison"] = "Paired difference, " + self._pair_title("--compare",
                                                                            self.compare)
        return titles

    def _sections(self, report: GuardReport, inputs: _Inputs, say: Say) -> dict[str, dict]:
        """Bootstrap intervals (``bootstrap`` draws) and the paired comparison with the
        second system (``compare``), computed on the report objects."""
        from sedcontract.guard import bootstrap_intervals, paired_bootstrap

        resamples, seed, level = self.bootstrap or 2000, self.bootstrap_seed, self.level
        sections: dict[str, dict] = {}
        if self.bootstrap:
            sections["intervals"] = {
                mode: bootstrap_intervals(report, mode=mode, resamples=resamples, seed=seed,
                                          level=level, scores=False)
                for mode in report.modes}
            if report.scores:  # once, not under each mode
                sections["intervals"]["scores"] = score_intervals(
                    report.scores, resamples=resamples, seed=seed, level=level)
        if self.compare:
            other = audit(inputs.ref, self.compare, self._policy, durations=self.durations,
                          mode=self.mode, coordinates=self.coordinates,
                          classes=inputs.classes or list(report.facts.classes),
                          backend=self.backend, jobs=self.jobs)
            self._report_warnings(other, say, f"--compare {self.compare}: ")
            sections["comparison"] = {
                mode: paired_bootstrap(report, other, mode=mode, resamples=resamples,
                                       seed=seed, level=level)
                for mode in report.modes}
        return sections


def _overlap_warnings(events: EventList, name: str, say: Say) -> None:
    """Name the first of the events that overlap or touch an earlier one of their class: the
    audit merges them (and counts them in its traces section), PSDS joins them."""
    found = events.overlapping()
    if len(found):
        where = events.where(int(found[0]))
        say(f"warning: {len(found)} {name} event(s) overlap or touch an earlier event of their "
            f"clip and class and are merged with it (first: {where['path']}, row "
            f"{where['row']})")
