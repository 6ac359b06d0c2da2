"""``sedcontract audit``, ``scores`` and ``demo``: the guard vector (and the standard scores)
of a system's output against a reference. Each command turns its options into one
:class:`AuditRequest` (every option check and clash in one place, before any file is read),
computes an :class:`Audited` with the library's functions, and renders it."""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sedcontract.analysis.confidence import (
    ConfidenceTable,
    by_confidence,
    confidence_markdown,
    confidence_rows,
)
from sedcontract.blocks import clip_range
from sedcontract.cli import options
from sedcontract.cli.command import Command, contract_read, emit, given
from sedcontract.errors import SedContractError
from sedcontract.guard import (
    AuditPolicy,
    GuardReport,
    ScoreSettings,
    ScoresReport,
    audit,
    bootstrap_intervals,
    paired_bootstrap,
    score,
    score_intervals,
    to_csv,
    to_dict,
    to_json,
    to_markdown,
)
from sedcontract.guard.render import (
    auroc_markdown,
    intervals_dict,
    intervals_markdown,
    policy_id,
    psds_markdown,
    ranking_dict,
    ranking_markdown,
    scores_json,
    scores_markdown,
)
from sedcontract.guard.shards import corpus_key, curves_section, parse_shard, shard_json
from sedcontract.outputs import Named, Outputs
from sedcontract.scores.psds.operating_points import point_files, read_points
from sedcontract.scores.psds.request import PsdsRequest, paired_psds, psd_roc_png
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings, without_curves
from sedcontract.scores.segment_roc import AurocRequest, AurocSettings, paired_auroc
from sedcontract.traces import MODES, EventList, read_durations, read_events
from sedcontract.traces.classmap import ClassMap, read_class_map
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import detections
from sedcontract.traces.grid import SECONDS_PER_HOUR
from sedcontract.traces.overrun import fit_to_durations
from sedcontract.traces.score_files import ScoreFolder, score_files
from sedcontract.traces.soft import SoftLabels, read_soft_tsv
from sedcontract.traces.tsv import CLIP_LISTS, with_clips

EXAMPLES = Path(__file__).parents[1] / "examples"
PSDS_PARAMETERS = {  # PsdsSettings field -> help of its --psds-* option
    "dtc": "PSDS detection tolerance criterion (default: the scenario's)",
    "gtc": "PSDS ground-truth intersection criterion",
    "cttc": "PSDS cross-trigger tolerance criterion",
    "alpha_ct": "PSDS weight of the cross-trigger rate in the effective FP rate",
    "alpha_st": "PSDS weight of the spread of TPR across classes",
    "max_efpr": "PSDS: the eFPR per hour up to which the area is taken",
}
DEFAULT_PSDS = "psds1,psds2"
AUROC_PARAMETERS = {  # AurocSettings field -> help of its --auroc-* option
    "segment_length": "segment-based AUROC: segment length in seconds (default 1, DCASE 2024's "
                      "for MAESTRO)",
    "max_fpr": "segment-based AUROC: the FPR up to which the partial AUROC (mpAUC) is taken "
               "(default 0.1, DCASE 2024's)",
}
RENDER = {"md": to_markdown, "json": to_json, "csv": to_csv}  # a report in each format
FORMATS = tuple(RENDER)
SYSTEM_FORMATS = {"csv"}  # formats whose rows carry the system's name


def _psds_settings(args: argparse.Namespace) -> dict[str, PsdsSettings]:
    """The scenarios ``--psds`` names (presets, or ``custom``: psds_eval's defaults), each with
    the ``--psds-*`` values given."""
    overrides = {name: getattr(args, f"psds_{name}") for name in PSDS_PARAMETERS
                 if getattr(args, f"psds_{name}") is not None}
    out = {}
    for name in (n.strip() for n in (args.psds or DEFAULT_PSDS).split(",")):
        if name not in (*PRESETS, "custom"):
            raise SedContractError(f"unknown PSDS scenario {name!r} (--psds): choose among "
                                   f"{', '.join(PRESETS)} and custom")
        base = PRESETS.get(name, PsdsSettings())
        settings = replace(base, **overrides)
        changed = [f"{k} {v:g}" for k, v in settings.as_dict().items()
                   if v != base.as_dict()[k]]
        if changed and name != "custom":  # a preset with other values is not the preset
            name = f"{name} ({', '.join(changed)})"
        out[name] = settings
    return out


def _psds_asked(args: argparse.Namespace) -> tuple[str, ...]:
    """The PSDS options given on the command line."""
    given_options = [f"--psds-{n.replace('_', '-')}" for n in PSDS_PARAMETERS
                     if getattr(args, f"psds_{n}") is not None]
    return (*(["--psds"] if args.psds is not None else []), *given_options,
            *(["--psds-cut"] if args.psds_cut else []), *(["--psd-roc"] if args.psd_roc else []))


def _auroc_settings(args: argparse.Namespace) -> AurocSettings:
    """DCASE 2024's segment-based AUROC settings with the ``--auroc-*`` values given."""
    return AurocSettings(**{name: getattr(args, f"auroc_{name}") for name in AUROC_PARAMETERS
                            if getattr(args, f"auroc_{name}") is not None})


def _thresholds(text: str | None) -> tuple[float, ...]:
    """``--curves-duration-at 0.3,0.5,0.7``: finite thresholds, ascending, each once."""
    if not text:
        return ()
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value in out:
            raise SedContractError(f"--curves-duration-at: {part.strip()!r} is not a finite "
                                   "threshold given once (e.g. 0.3,0.5,0.7)")
        out.append(value)
    return tuple(sorted(out))


def _targets_file(text: str | None) -> str | None:
    """The risk order ``--curves-targets`` names, when it names a file (one that exists, or a
    ``.yaml`` / ``.yml`` name) rather than targets."""
    if not text:
        return None
    return text if "=" not in text or Path(text).is_file() or \
        text.endswith((".yaml", ".yml")) else None


def _targets(text: str | None) -> tuple[tuple[str, float], ...] | None:
    """``--curves-targets missed=0.8,false=0.8``: coordinate → the least score, each in
    [0, 1]; or a risk order's file whose ``targets:`` give them."""
    if not text:
        return None
    if _targets_file(text):
        from sedcontract.analysis.selection import read_risk_order
        from sedcontract.contracts.contract import load_contract
        from sedcontract.guard.curves import CURVE_COORDINATES
        from sedcontract.guard.pipeline import clause_names

        coordinates, diagnostics, _ = clause_names(load_contract("standard"))
        risk = read_risk_order(text, [*coordinates, *diagnostics])
        if not risk.targets:
            raise SedContractError(f"{text}: the risk order gives no targets; add, e.g., "
                                   "targets: {missed: 0.8, \"false\": 0.8, onset: 0.5}")
        other = [name for name, _ in risk.targets if name not in CURVE_COORDINATES]
        if other:
            raise SedContractError(f"{text}: no curve of {other[0]!r} to set a target on; the "
                                   f"curves hold {', '.join(CURVE_COORDINATES)}")
        return risk.targets
    out = []
    for part in text.split(","):
        name, equals, value = part.strip().partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not equals or not name or not 0 <= number <= 1:
            raise SedContractError(f"--curves-targets: {part.strip()!r} is not COORDINATE=SCORE "
                                   "with a score in [0, 1] (e.g. missed=0.8,false=0.8), nor a "
                                   "risk order's file")
        if name.strip() in dict(out):
            raise SedContractError(f"--curves-targets names {name.strip()} twice")
        out.append((name.strip(), number))
    return tuple(out)


def _auroc_asked(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(f"--auroc-{n.replace('_', '-')}" for n in AUROC_PARAMETERS
                 if getattr(args, f"auroc_{n}") is not None)


@dataclass(frozen=True)
class AuditRequest:
    """What ``audit``, ``scores`` and ``demo`` are asked, checked as a whole: the inputs (paths,
    not yet read), the policy, PSDS, the audit's own options and the rendering. Every clash
    of options is refused here, before any file is read."""

    ref: str
    policy: AuditPolicy
    scores_only: bool
    format: str
    pred: str | None = None
    pred_scores: str | None = None
    pred_points: tuple[str, ...] | None = None
    durations: str | None = None
    clips: str = "ref"
    classes: tuple[str, ...] | None = None
    class_map: str | None = None
    windows: bool = False
    skip_unlisted: bool = False
    decision: DecisionPolicy | None = None
    decision_file: str | None = None
    psds: dict[str, PsdsSettings] = field(default_factory=dict)
    psds_cut: bool = False
    psd_roc: str | None = None
    auroc: AurocSettings = field(default_factory=AurocSettings)
    out: str | None = None
    with_scores: bool = True
    # the audit's own options (the scores command keeps their defaults)
    mode: str = "typed"
    coordinates: tuple[str, ...] | None = None
    system: str | None = None
    soft: str | None = None
    shard: tuple[int, int] | None = None
    backend: str = "runs"
    jobs: int = 1
    bootstrap: int = 0
    bootstrap_seed: int = 0
    level: float = 0.95
    compare: str | None = None
    compare_scores: str | None = None
    curves: bool = False
    curves_max_rate: float | None = None  # None: 100 false events per hour
    curves_targets: tuple[tuple[str, float], ...] | None = None
    curves_targets_file: str | None = None  # a risk order with targets
    curves_decision: str | None = None
    curves_duration_at: tuple[float, ...] = ()  # thresholds duration is audited at
    curves_figure: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace, *, scores_only: bool) -> AuditRequest:
        """The request of the parsed options of ``audit`` (or of ``scores``, which has none
        of the audit's own options but the bootstrap's)."""
        own: dict[str, Any] = {"bootstrap": args.bootstrap,
                               "bootstrap_seed": args.bootstrap_seed, "level": args.level,
                               "compare_scores": args.compare_scores}
        if not scores_only:
            own |= {"curves": args.curves, "curves_max_rate": args.curves_max_rate,
                    "curves_targets": _targets(args.curves_targets),
                    "curves_targets_file": _targets_file(args.curves_targets),
                    "curves_decision": args.curves_decision,
                    "curves_duration_at": _thresholds(args.curves_duration_at),
                    "curves_figure": args.curves_figure}
            own |= {"mode": args.mode, "system": args.system, "soft": args.soft,
                    "backend": args.backend, "jobs": args.jobs,
                    "compare": args.compare, "with_scores": args.with_scores,
                    "coordinates": tuple(args.coordinates.split(",")) if args.coordinates
                    else None,
                    "shard": parse_shard(args.shard) if args.shard is not None else None}
        with_scores = own.get("with_scores", True)
        request = cls(
            ref=args.ref, policy=options.policy(args, scores=with_scores),
            scores_only=scores_only, format=args.format, pred=args.pred,
            pred_scores=args.pred_scores, pred_points=tuple(args.pred_points)
            if args.pred_points else None, durations=args.durations, clips=args.clips,
            classes=tuple(c.strip() for c in args.classes.split(",")) if args.classes
            else None, class_map=args.class_map, windows=args.windows,
            skip_unlisted=args.skip_unlisted,
            decision=options.decision(args) if args.pred_scores is not None else None,
            decision_file=args.decision,
            psds=_psds_settings(args), psds_cut=args.psds_cut, psd_roc=args.psd_roc,
            auroc=_auroc_settings(args), out=args.out, **own)
        request.check(_psds_asked(args), _auroc_asked(args), options.decision_asked(args))
        return request

    def check(self, psds_asked: tuple[str, ...], auroc_asked: tuple[str, ...] = (),
              decision_asked: tuple[str, ...] = ()) -> None:
        """Every clash of options, in one place."""
        if decision_asked and self.pred_scores is None:
            raise SedContractError(f"{' and '.join(decision_asked)} decide how score files "
                                   "(--pred-scores) become events; events given with --pred "
                                   "are taken as they are")
        if self.pred is not None and self.pred_scores is not None:
            raise SedContractError("give one of --pred (event tsv) or --pred-scores (a "
                                   "directory of score tsv files), not both")
        if self.pred_points and self.pred_scores is not None:
            raise SedContractError("PSDS comes from --pred-scores or from --pred-points, not "
                                   "both")
        if self.clips == "durations" and not self.durations:
            raise SedContractError("--clips durations needs --durations")
        if self.pred is None and self.pred_scores is None:  # PSDS of operating points alone
            if not self.scores_only:
                raise SedContractError("the guard vector needs one system output: give --pred "
                                       "or --pred-scores (--pred-points adds PSDS)")
            if not self.pred_points:
                raise SedContractError("give --pred (event tsv), --pred-scores (a directory of "
                                       "score tsv files) or --pred-points (operating-point "
                                       "tables)")
            if not self.durations:
                raise SedContractError("PSDS needs clip durations: add --durations")
        if self.windows and self.pred_scores is None:
            raise SedContractError("--windows merges score files (--pred-scores); events of "
                                   "overlapping windows cannot be averaged")
        if psds_asked and not self.pred_points and not (self.pred_scores is not None
                                                        and self.with_scores):
            source = "--pred-scores (its frame scores: add --with-scores)" \
                if self.pred_scores is not None else "--pred-scores with --with-scores"
            raise SedContractError(f"{' and '.join(psds_asked)} set PSDS, which these inputs "
                                   f"do not give: PSDS comes from --pred-points (operating-"
                                   f"point tables) or {source}; events at one threshold "
                                   "(--pred) have no curve")
        if auroc_asked and not (self.pred_scores is not None and self.with_scores):
            source = "its frame scores: add --with-scores" if self.pred_scores is not None \
                else "--pred-scores with --with-scores"
            raise SedContractError(f"{' and '.join(auroc_asked)} set the segment-based AUROC, "
                                   f"which comes from score files ({source}); events at one "
                                   "threshold and operating points have no segment scores")
        if self.compare_scores is not None and not (self.pred_scores is not None
                                                    and self.with_scores and self.durations):
            raise SedContractError("--compare-scores compares PSDS, mAUC and mpAUC of two "
                                   "systems' score files: give --pred-scores (with "
                                   "--with-scores in audit) and --durations")
        if (self.curves_targets or self.curves_decision or self.curves_figure
                or self.curves_duration_at) and not self.curves:
            raise SedContractError("--curves-targets, --curves-decision, --curves-figure and "
                                   "--curves-duration-at read the curves: add --curves")
        if self.curves_decision and not self.curves_targets:
            raise SedContractError("--curves-decision writes the thresholds that meet "
                                   "--curves-targets: give the targets")
        if self.curves and not (self.pred_scores is not None and self.durations):
            raise SedContractError("--curves follows the guard vector over every threshold of "
                                   "score files: give --pred-scores and --durations")
        if self.curves_max_rate is not None and not self.curves:
            raise SedContractError("--curves-max-rate sets the budgets of --curves: add it")
        if self.curves_max_rate is not None and not 0 < self.curves_max_rate < math.inf:
            raise SedContractError(f"--curves-max-rate must be a positive number of false "
                                   f"events per hour, got {self.curves_max_rate!r}")
        if self.curves:
            from sedcontract.guard.curves import check_curves

            check_curves(self.policy, self.decision or DecisionPolicy(),
                         [name for name, _ in self.curves_targets or ()])
        if self.shard is not None and self.format != "json":
            raise SedContractError("--shard writes a JSON shard report for sedcontract merge: "
                                   "add --format json")
        if self.soft is not None and self.format == "json":
            raise SedContractError("--soft adds the table by annotation confidence (--format "
                                   "md) or softness and confidence rows (--format csv)")
        if self.format in SYSTEM_FORMATS and (self.compare or self.compare_scores):
            raise SedContractError("--compare and --compare-scores add paired intervals to "
                                   "--format md or json; csv rows are the per-clip counts "
                                   "they are computed from (sedcontract report --baseline "
                                   "pairs systems from their rows)")
        if self.format in SYSTEM_FORMATS and self.bootstrap and not (
                self.pred_scores is not None and (self.with_scores or self.curves)):
            raise SedContractError("--bootstrap with --format csv writes the bootstrap draws of "
                                   "PSDS, mAUC and mpAUC and of the guard curves' areas, which "
                                   "come from score files (--pred-scores with --with-scores "
                                   "or --curves); the guard coordinates' and F1 intervals are "
                                   "computed by sedcontract report from the per-clip rows")

    def reads(self, contract: list[Path]) -> Named:
        """The paths the request reads, by option (``contract``: the contract's file)."""
        scores = score_files(self.pred_scores) if self.pred_scores is not None else []
        points = point_files(self.pred_points, self._point_others()) if self.pred_points \
            else []
        return {"--ref": self.ref, "--pred": self.pred, "--compare": self.compare,
                "--compare-scores": score_files(self.compare_scores)
                if self.compare_scores is not None else [],
                "--durations": self.durations, "--pred-points": points,
                "--contract": contract, "--pred-scores": scores,
                "--class-map": self.class_map, "--soft": self.soft,
                "--decision": self.decision_file,
                "--curves-targets": self.curves_targets_file}

    def writes(self) -> Named:
        return {"--out": given(self.out), "--psd-roc": given(self.psd_roc),
                "--curves-decision": given(self.curves_decision),
                "--curves-figure": given(self.curves_figure)}

    def _point_others(self) -> dict[str, str | None]:
        """The inputs that must not stand among the operating-point tables."""
        return {"--ref": self.ref, "--durations": self.durations}

    @property
    def system_name(self) -> str:
        """The audited system's name in source rows: --system, else the prediction's stem."""
        if self.system:
            return self.system
        source = self.pred if self.pred is not None else self.pred_scores
        return Path(source).stem if source else "system"

    def shown(self) -> bool:
        """Whether the Markdown report goes to standard output and that is standard error's
        terminal, pipe or file: what it shows is not said again there."""
        if self.out is not None or self.format != "md":
            return False
        try:
            out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            return False
        return (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


@dataclass(frozen=True)
class Audited:
    """What a request computed: the report (a guard report, or the scores alone; None for
    PSDS of operating points alone), PSDS, the bootstrap and comparison sections, the table by
    annotation confidence and, for a shard, the corpus's key."""

    report: GuardReport | ScoresReport | None
    psds: dict[str, Any] | None
    sections: dict[str, dict] = field(default_factory=dict)
    soft: SoftLabels | None = None
    confidence: ConfidenceTable | None = None
    corpus: dict[str, Any] | None = None
    ranking: dict[str, dict[str, Any]] | None = None  # --compare-scores: paired differences
    curves: dict[str, Any] | None = None  # --curves: the summaries


def _warn(text: str) -> None:
    print(f"sedcontract: warning: {text}", file=sys.stderr)


def _reference(request: AuditRequest) -> EventList:
    """The reference events; with ``--clips durations`` also the clips only the durations file
    lists (clips without events)."""
    ref = read_events(request.ref)
    if request.clips == "durations":
        ref = with_clips(ref, read_durations(request.durations))
    return ref


def _overlap_warnings(events: EventList, name: str) -> None:
    """Name the first of the events that overlap or touch an earlier one of their class: the
    audit merges them (and counts them in its traces section), PSDS joins them."""
    found = events.overlapping()
    if len(found):
        where = events.where(int(found[0]))
        _warn(f"{len(found)} {name} event(s) overlap or touch an earlier event of their clip "
              f"and class and are merged with it (first: {where['path']}, row {where['row']})")


def _psds_warnings(request: AuditRequest, result: dict | None) -> None:
    """Say on standard error what PSDS from operating points joined in the tables (the
    reference's overlaps are warned of with the reference), once: not when the Markdown
    report, whose PSDS table says it, goes to the same terminal or file."""
    if not result or "note" in result or request.shown():
        return
    joined = next(iter(result.values())).get("joined") or {}
    if joined.get("points"):
        _warn(f"{joined['points']} detection(s) of the operating points overlap an earlier one "
              "of their clip and class and are joined with it for PSDS (psds_eval refuses "
              "them)")


def _report_warnings(request: AuditRequest, report: GuardReport | ScoresReport,
                     source: str = "") -> None:
    """The report's warnings on standard error, once: not when the audit's Markdown report,
    which shows them above the vector, goes to the same terminal or file (the scores' tables
    do not show them)."""
    if not source and not request.scores_only and request.shown():
        return
    for warning in report.traces["warnings"]:
        _warn(f"{source}{warning}")


def _predictions(request: AuditRequest, ref: EventList, class_map: ClassMap | None,
                 declared: list[str] | None) -> tuple[EventList | str, ScoreFolder | None]:
    """The system's events (a path when nothing needs changing) and the score folder (read
    again, clip by clip) when PSDS is asked for."""
    if request.pred_scores is None:
        if class_map is None:
            return request.pred, None
        return class_map.events(read_events(request.pred)), None
    skipped: list[str] | None = [] if request.skip_unlisted else None
    folder = ScoreFolder.open(request.pred_scores, ref.clips, class_map=class_map,
                              windows=request.windows, skipped=skipped,
                              durations=request.durations)
    if skipped:
        print(f"sedcontract: skipped {len(skipped)} score file(s) of clips the reference does "
              f"not list (first: {Path(skipped[0]).name})", file=sys.stderr)
    pred = detections(folder, ref, request.decision, request.pred_scores, declared=declared)
    if declared is not None:  # the declared classes' columns only (PSDS scores each column)
        folder = folder.only(declared)
    return pred, folder


def _psds_request(request: AuditRequest, folder: ScoreFolder | None,
                  class_map: ClassMap | None) -> PsdsRequest | None:
    """What PSDS to compute: from the score files (``--with-scores``) or ``--pred-points``
    (mapped through ``--class-map`` like the other predictions)."""
    if request.pred_points:
        points = read_points(request.pred_points, request._point_others())
        if class_map is not None:
            points = [class_map.events(table) for table in points]
        return PsdsRequest(points=points, settings=request.psds, cut=request.psds_cut)
    if folder is not None:
        return PsdsRequest(scores=folder, settings=request.psds, cut=request.psds_cut,
                           resamples=request.bootstrap, seed=request.bootstrap_seed,
                           level=request.level)
    return None


def compute(request: AuditRequest) -> Audited:
    """Read the inputs and compute what the request asks: the library's ``audit`` or
    ``score`` (and, with ``--compare``, the second system's audit and the paired bootstrap
    of the two reports)."""
    ref = _reference(request)
    class_map = read_class_map(request.class_map) if request.class_map else None
    classes = list(request.classes) if request.classes else \
        (list(class_map.kept) if class_map is not None else None)
    if request.pred is None and request.pred_scores is None:  # PSDS of operating points alone
        durations = read_durations(request.durations)
        fit_to_durations(ref, durations, "ref", tolerance=request.policy.duration_tolerance,
                         strict=request.policy.strict_durations)  # refused beyond the tolerance
        _overlap_warnings(ref, "reference")
        result = _psds_request(request, None, class_map).compute(ref, durations, classes)
        _psds_warnings(request, result)
        return Audited(None, result)
    pred, tables = _predictions(request, ref, class_map, classes)
    folder = tables if request.with_scores else None  # PSDS and AUROC read the scores
    _overlap_warnings(ref, "reference")
    policy = request.policy.but(decision=request.decision)
    psds = _psds_request(request, folder, class_map)
    auroc = None if folder is None or request.shard is not None else \
        AurocRequest(folder, request.auroc, request.bootstrap, request.bootstrap_seed,
                     request.level)
    if request.scores_only:  # the score functions alone: no contract runs
        report = score(ref, pred, policy, durations=request.durations, psds=psds,
                       auroc=auroc, classes=classes)
    else:
        report = audit(ref, pred, policy, durations=request.durations, mode=request.mode,
                       coordinates=request.coordinates, psds=psds, auroc=auroc,
                       classes=classes, backend=request.backend, jobs=request.jobs,
                       shard=request.shard)
    _report_warnings(request, report)
    _psds_warnings(request, report.psds)
    if request.bootstrap and request.pred_points:
        _warn("--bootstrap: PSDS from operating points (psds_eval's rule) gets no interval; "
              "PSDS from score files (--pred-scores) does")
    if request.shard is not None:
        durations = read_durations(request.durations) if request.durations else None
        events = pred if isinstance(pred, EventList) else read_events(pred)
        return Audited(report, report.psds, corpus=corpus_key(ref, events,
                                                              report.facts.classes, durations),
                       curves=_curves(request, ref, tables, policy) if request.curves else None)
    ranking = None if request.compare_scores is None else \
        _ranking_comparison(request, ref, folder, class_map, classes)
    if request.scores_only:
        sections = {} if not request.bootstrap else {"intervals": {"scores": score_intervals(
            report.scores, resamples=request.bootstrap, seed=request.bootstrap_seed,
            level=request.level)}}
        return Audited(report, report.psds, sections, ranking=ranking)
    soft = read_soft_tsv(request.soft) if request.soft else None
    confidence = None if soft is None else by_confidence(
        ref, pred, policy, soft, durations=request.durations, classes=classes)
    sections = {} if request.format in SYSTEM_FORMATS else \
        _sections(request, report, ref, policy, classes)  # rows: the report resamples them
    curves = _curves(request, ref, tables, policy) if request.curves else None
    return Audited(report, report.psds, sections, soft, confidence, ranking=ranking,
                   curves=curves)


def _curve_settings(request: AuditRequest) -> dict[str, Any]:
    """What the curves' summary is made under: the largest budget and the targets."""
    return {"max_rate": request.curves_max_rate or 100.0,
            "targets": dict(request.curves_targets) if request.curves_targets else None,
            "decision": request.decision or DecisionPolicy()}


def _curves(request: AuditRequest, ref: EventList, tables: ScoreFolder | None,
            policy: AuditPolicy) -> dict[str, Any]:
    """``--curves``: the guard vector at every threshold of the score files (of the shard's
    clips with ``--shard``: the shard's ``curves`` section, :func:`curves_section`), else
    summarised."""
    from sedcontract.analysis.curve_summaries import area_draws, curve_summary
    from sedcontract.guard.curves import clip_changes, guard_curves

    durations = read_durations(request.durations)
    clips = list(ref.clips)
    if request.shard is not None:  # the shard's clips, as the audit takes them
        first, stop = clip_range(len(clips), *request.shard)
        clips = clips[first:stop]
        ref, tables = ref.select(clips=clips), tables.select(clips)
    given = {c: durations[c] for c in clips}
    settings = _curve_settings(request)
    seconds = [float(durations[c]) for c in clips]
    hours = math.fsum(seconds) / SECONDS_PER_HOUR
    if request.bootstrap and request.shard is None:  # each clip's changes, to resample them
        changes = clip_changes(ref, tables, given, policy.but(decision=None),
                               decision=request.decision,
                               thresholds=request.curves_duration_at)
        draws = area_draws(changes, settings["max_rate"], request.bootstrap,
                           request.bootstrap_seed)
        return curve_summary(changes.total(), hours, **settings, draws=draws,
                             level=request.level, seed=request.bootstrap_seed)
    curves = guard_curves(ref, tables, given, policy.but(decision=None),
                          decision=request.decision, thresholds=request.curves_duration_at,
                          jobs=request.jobs)
    if request.shard is not None:
        return curves_section(curves, seconds, settings)
    return curve_summary(curves, hours, **settings)


def _ranking_comparison(request: AuditRequest, ref: EventList, folder: ScoreFolder,
                        class_map: ClassMap | None, classes: list[str] | None
                        ) -> dict[str, dict[str, Any]]:
    """``--compare-scores``: PSDS (each scenario), mAUC and mpAUC of ``--pred-scores`` minus
    those of the other system's score files, each with its paired bootstrap interval (the same
    clips drawn for both; ``--bootstrap`` resamples, default 2000)."""
    other = ScoreFolder.open(request.compare_scores, ref.clips, class_map=class_map,
                             windows=request.windows, durations=request.durations,
                             skipped=[] if request.skip_unlisted else None)
    if classes is not None:
        other = other.only(classes)
    durations = read_durations(request.durations)
    keywords = {"resamples": request.bootstrap or 2000, "seed": request.bootstrap_seed,
                "level": request.level}
    return {**paired_psds(folder, other, ref, durations, request.psds, cut=request.psds_cut,
                          **keywords),
            **paired_auroc(folder, other, ref, durations, request.auroc, **keywords)}


def _sections(request: AuditRequest, report: GuardReport, ref: EventList,
              policy: AuditPolicy, classes: list[str] | None) -> dict[str, dict]:
    """Bootstrap intervals (``--bootstrap N``) and the paired comparison with a second system
    (``--compare``), computed on the report objects."""
    resamples = request.bootstrap or 2000
    sections: dict[str, dict] = {}
    if request.bootstrap:
        sections["intervals"] = {
            mode: bootstrap_intervals(report, mode=mode, resamples=resamples,
                                      seed=request.bootstrap_seed, level=request.level,
                                      scores=False)
            for mode in report.modes}
        if report.scores:  # once, not under each mode
            sections["intervals"]["scores"] = score_intervals(
                report.scores, resamples=resamples, seed=request.bootstrap_seed,
                level=request.level)
    if request.compare:
        other = audit(ref, request.compare, policy, durations=request.durations,
                      mode=request.mode, coordinates=request.coordinates,
                      classes=classes or list(report.facts.classes), backend=request.backend,
                      jobs=request.jobs)
        _report_warnings(request, other, f"--compare {request.compare}: ")
        sections["comparison"] = {
            mode: paired_bootstrap(report, other, mode=mode, resamples=resamples,
                                   seed=request.bootstrap_seed, level=request.level)
            for mode in report.modes}
    return sections


def _pair_title(request: AuditRequest, option: str, against: str) -> str:
    """``--pred A minus <option> B``, by file name, or by path where the names are one."""
    mine, named = ("--pred", request.pred) if request.pred is not None else \
        ("--pred-scores", request.pred_scores)
    a, b = Path(named), Path(against)
    same = a.name == b.name
    return f"{mine} {a if same else a.name} minus {option} {b if same else b.name}"


def render(request: AuditRequest, done: Audited) -> str:
    """The text of what was computed, in ``--format``."""
    report = done.report
    if report is None:  # PSDS of operating points alone
        if request.format == "json":
            return json.dumps({"psds": without_curves(done.psds)}, indent=2,
                              allow_nan=False) + "\n"
        return psds_markdown(done.psds)
    if done.corpus is not None:
        return shard_json(report, *request.shard, done.corpus, done.curves)
    ranking_title = "" if request.compare_scores is None else (
        "Paired difference of the ranking metrics, "
        + _pair_title(request, "--compare-scores", request.compare_scores))
    if request.scores_only:
        if request.format == "json":
            extra = {name: intervals_dict(value) for name, value in done.sections.items()}
            if done.ranking is not None:
                extra["ranking_comparison"] = ranking_dict(done.ranking)
            return scores_json(report, extra)
        text = scores_markdown(report.scores) + "".join(
            intervals_markdown(value, request.bootstrap_seed, "Bootstrap intervals")
            for value in done.sections.values())
        text += "\n" + psds_markdown(report.psds) if report.psds is not None else ""
        text += "\n" + auroc_markdown(report.auroc) if report.auroc is not None else ""
        return text + ("" if done.ranking is None else
                       ranking_markdown(done.ranking, ranking_title))
    if request.format in SYSTEM_FORMATS:
        extra = () if done.confidence is None else confidence_rows(
            done.confidence, request.system_name, policy_id(report.policy))
        return to_csv(report, request.system_name, done.soft, extra, curves=None
                      if done.curves is None else curve_metrics(done.curves))
    if request.format == "json":
        data = to_dict(report) | {name: intervals_dict(value)
                                  for name, value in done.sections.items()}
        if done.ranking is not None:
            data["ranking_comparison"] = ranking_dict(done.ranking)
        text = json.dumps(data, indent=2, allow_nan=False) + "\n"
        return text if done.curves is None else curves_rendered(text, "json", done.curves)
    titles = {"intervals": "Bootstrap intervals",
              "comparison": "Paired difference, "
              + _pair_title(request, "--compare", request.compare) if request.compare else ""}
    text = to_markdown(report) + "".join(
        intervals_markdown(value, request.bootstrap_seed, titles[name],
                           signed=name == "comparison")
        for name, value in done.sections.items())
    if done.ranking is not None:
        text += ranking_markdown(done.ranking, ranking_title)
    if done.confidence is not None:
        text += "\n" + confidence_markdown(done.confidence)
    return text if done.curves is None else curves_rendered(text, "md", done.curves)


def curve_metrics(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The curves' areas as ranking metrics for source rows (:func:`curve_summaries.
    curve_metrics`)."""
    from sedcontract.analysis.curve_summaries import curve_metrics as metrics

    return metrics(summary)


def write_curve_files(out: Outputs, summary: Mapping[str, Any], figure: str | None,
                      decision: str | None) -> None:
    """The curves' figure (``--curves-figure``) and the decision file of their targets
    (``--curves-decision``), from the summary of :func:`curve_summary`."""
    if figure:
        from sedcontract.analysis.curve_summaries import curves_png

        out.write(figure, curves_png(summary["curves"], summary["hours"], summary["max_rate"]))
    if decision:
        from sedcontract.traces.decision import decision_yaml

        wanted = ", ".join(f"{n} >= {v:g}" for n, v in summary["targets"].items())
        unserved, every = summary["unserved"], summary["any_threshold"]
        out.write(decision, decision_yaml(summary["decision"], (
            f"sedcontract audit --curves: each class's threshold inside its widest range "
            f"where {wanted}"
            + (f"\nno threshold serves {', '.join(unserved)}: its threshold kept"
               if unserved else "")
            + (f"\nevery threshold serves {', '.join(every)}: its threshold kept"
               if every else ""))))


def curves_rendered(text: str, fmt: str, summary: Mapping[str, Any]) -> str:
    """A rendered report (md or json) with the curves' summary added."""
    from sedcontract.analysis.curve_summaries import summary_dict, summary_markdown

    if fmt == "json":
        data = json.loads(text)
        data["curves"] = summary_dict(summary)
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    return text + "\n" + summary_markdown(summary)


def run(request: AuditRequest, out: Outputs | None) -> str:
    """Compute and render the request; the PSD-ROC figure (``--psd-roc``) goes to ``out``."""
    done = compute(request)
    if request.psd_roc and out is not None and done.psds is not None:
        out.write(request.psd_roc, psd_roc_png(done.psds))
    if out is not None and done.curves is not None and done.corpus is None:
        write_curve_files(out, done.curves, request.curves_figure, request.curves_decision)
    return render(request, done)


def _command(scores_only: bool) -> Command:
    def execute(args: argparse.Namespace, out: Outputs) -> int:
        request = AuditRequest.of(args, scores_only=scores_only)
        return emit(out, request.out, run(request, out))

    def reads(args: argparse.Namespace) -> Named:
        return AuditRequest.of(args, scores_only=scores_only).reads(contract_read(args))

    def writes(args: argparse.Namespace) -> Named:
        return AuditRequest.of(args, scores_only=scores_only).writes()

    if scores_only:
        return Command("scores", "standard SED scores (frame, segment, collar event, "
                       "intersection, boundary F1, error rates; PSDS from score files or "
                       "operating-point tables; mAUC and mpAUC from score files)",
                       _scores_options, execute, reads, writes)
    return Command("audit", "guard vector of a system output against a reference",
                   _audit_options, execute, reads, writes)


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", default=None, help="predicted events (DCASE tsv)")
    parser.add_argument("--pred-scores", default=None,
                        help="directory of sed_scores_eval score files (one tsv per clip)")
    options.add_decision_options(parser)
    parser.add_argument("--durations", default=None,
                        help="clip durations (tsv filename duration)")
    parser.add_argument("--clips", choices=CLIP_LISTS, default="ref",
                        help="which file lists the clips: the reference (default; a clip "
                             "without events is a filename-only row) or the durations file "
                             "(DCASE ground truths list only clips with events)")
    parser.add_argument("--classes", default=None,
                        help="comma-separated declared classes (default: the --class-map "
                             "targets, else the classes the files name); another label is an "
                             "error")
    parser.add_argument("--class-map", default=None,
                        help="tsv 'source target' naming every class the system outputs: its "
                             "reference class, or - to drop it (e.g. the DCASE 2024 baseline's "
                             "27 columns)")
    parser.add_argument("--windows", action="store_true",
                        help="--pred-scores files named FILE-SSSSSS-EEEEEE (window start and end "
                             "in centiseconds) are merged back to FILE's time, overlaps averaged")
    parser.add_argument("--skip-unlisted", action="store_true",
                        help="skip --pred-scores files of clips the reference does not list "
                             "(counted on standard error) instead of refusing them")
    parser.add_argument("--pred-points", nargs="+", default=None, metavar="PATH",
                        help="operating-point tables (psds_eval's input: the system's "
                             "detections at each threshold), files or folders of *.tsv/*.csv: "
                             "PSDS as psds_eval computes it")
    parser.add_argument("--psds", default=None,
                        help=f"comma-separated PSDS scenarios: psds1, psds2 (the DCASE presets) "
                             f"or custom (psds_eval's defaults); --psds-* values apply to each, "
                             f"and a preset so changed is named with them, e.g. 'psds1 (dtc "
                             f"0.5)' (default {DEFAULT_PSDS})")
    for name, text in PSDS_PARAMETERS.items():
        parser.add_argument(f"--psds-{name.replace('_', '-')}", dest=f"psds_{name}",
                            type=float, default=None, help=text)
    parser.add_argument("--psds-cut", action="store_true",
                        help="cut the reference and the predictions (score frames, "
                             "operating-point detections) at the clip durations before PSDS; by "
                             "default both are taken as they come, as sed_scores_eval and "
                             "psds_eval take them")
    parser.add_argument("--psd-roc", default=None, metavar="PNG",
                        help="write the PSD-ROC of each scenario here (a PNG)")
    for name, text in AUROC_PARAMETERS.items():
        parser.add_argument(f"--auroc-{name.replace('_', '-')}", dest=f"auroc_{name}",
                            type=float, default=None, help=text)
    parser.add_argument("--compare-scores", default=None, metavar="DIR",
                        help="a second system's score files of the same clips: adds PSDS, mAUC "
                             "and mpAUC of --pred-scores minus this system's, each with its "
                             "paired bootstrap interval (--bootstrap N resamples, default 2000)")
    parser.add_argument("--out", default=None, help="write here instead of standard output")
    options.add_options(parser, AuditPolicy)
    options.add_options(parser, ScoreSettings)


def _curve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--curves", action="store_true",
                        help="with --pred-scores: the guard vector at every threshold, exact "
                             "(docs/curves.md); reports each coordinate's area over "
                             "false-activity budgets per class (md, json)")
    parser.add_argument("--curves-max-rate", type=float, default=None, metavar="PER_HOUR",
                        help="the largest false-activity budget of the areas, false events per "
                             "hour (default 100, as PSDS's max eFPR)")
    parser.add_argument("--curves-targets", default=None, metavar="C=S,...|YAML",
                        help="targets such as missed=0.8,false=0.8,onset=0.5, or a risk order "
                             "file with targets (src/sedcontract/examples/speech_gate.yaml): "
                             "each class's threshold ranges where every one holds")
    parser.add_argument("--curves-figure", default=None, metavar="PNG",
                        help="draw the curves: each coordinate against the threshold and "
                             "against the false-activity budget, a line per class")
    parser.add_argument("--curves-duration-at", default=None, metavar="T,...",
                        help="thresholds at which duration is audited beside the curves (its "
                             "matching is no step function of the threshold)")
    parser.add_argument("--curves-decision", default=None, metavar="FILE",
                        help="write a decision file (YAML) with each class's threshold inside "
                             "its widest range (audit --decision reads it)")


def _audit_options(parser: argparse.ArgumentParser) -> None:
    _inputs(parser)
    _curve_options(parser)
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    options.add_monitor_options(parser)
    parser.add_argument("--coordinates", default=None,
                        help="comma-separated coordinates to report (default: all)")
    parser.add_argument("--format", choices=FORMATS, default="md")
    parser.add_argument("--system", default=None,
                        help="the system's name in source rows (--format csv; default: the "
                             "prediction file's stem)")
    parser.add_argument("--soft", default=None,
                        help="soft labels of the reference (tsv filename onset offset "
                             "event_label confidence, e.g. sedcontract data maestro's): adds the "
                             "vector by annotation confidence (md), or softness and confidence "
                             "rows (csv) for the report")
    parser.add_argument("--shard", default=None, metavar="I/N",
                        help="audit block I (from 0) of N consecutive blocks of the clips and "
                             "write a JSON shard report; sedcontract merge joins all N")
    parser.add_argument("--with-scores", action="store_true",
                        help="add the standard scores (frame, segment, collar event, "
                             "intersection, boundary F1; PSDS, mAUC and mpAUC with "
                             "--pred-scores; "
                             "--pred-points adds PSDS whatever this says)")
    options.add_bootstrap_options(parser, default=0, what="every coordinate, logic and "
                                  "standard score, and PSDS, mAUC and mpAUC of score files "
                                  "(md, json; csv: the draws of PSDS, mAUC and mpAUC, for "
                                  "sedcontract report)")
    parser.add_argument("--compare", default=None, metavar="PRED_B",
                        help="a second system's predicted events (DCASE tsv or CSV) on the same "
                             "clips: adds the paired difference (--pred minus PRED_B) of every "
                             "coordinate and logic with its paired bootstrap interval "
                             "(--bootstrap N resamples, default 2000)")


def _scores_options(parser: argparse.ArgumentParser) -> None:
    _inputs(parser)
    parser.add_argument("--format", choices=("md", "json"), default="md")
    options.add_bootstrap_options(parser, default=0, what="each score's micro F1, and PSDS, "
                                  "mAUC and mpAUC of score files (md, json)")


def _run_demo(args: argparse.Namespace, out: Outputs) -> int:
    """The audit of the shipped example with the demo's policy and monitor options."""
    example = [f"--ref={EXAMPLES / 'demo_ref.tsv'}", f"--pred={EXAMPLES / 'demo_pred.tsv'}",
               f"--durations={EXAMPLES / 'demo_durations.tsv'}"]
    parser = argparse.ArgumentParser(add_help=False)
    _audit_options(parser)
    audit_args = parser.parse_args(example)
    for name, value in vars(args).items():  # the demo's own options: policy and monitor
        if hasattr(audit_args, name) and name != "command":
            setattr(audit_args, name, value)
    print(f"Reference:  {audit_args.ref}\nPrediction: {audit_args.pred}\n")
    sys.stdout.write(run(AuditRequest.of(audit_args, scores_only=False), None))
    return 0


def _demo_options(parser: argparse.ArgumentParser) -> None:
    options.add_options(parser, AuditPolicy)
    options.add_monitor_options(parser)


COMMANDS = [_command(scores_only=False), _command(scores_only=True),
            Command("demo", "audit the shipped example (the README's main job)", _demo_options,
                    _run_demo)]
