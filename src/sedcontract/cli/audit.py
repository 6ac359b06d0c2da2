"""``sedcontract audit``, ``scores`` and ``demo``: the guard vector (and the standard scores)
of a system's output against a reference. Each command turns its options into one
:class:`Asked` (the library's request with the format and the files written beside it, checked
as a whole: every option clash before any file is read), has the library compute the request
(:mod:`sedcontract.analysis.audit_request`) and writes what the result renders."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sedcontract.analysis.audit_request import AuditRequest, ScoresRequest
from sedcontract.analysis.curve_request import CurvesRequest
from sedcontract.cli import audit_options as opt
from sedcontract.cli import options
from sedcontract.cli.command import Command, contract_read, emit, given
from sedcontract.errors import SedContractError
from sedcontract.guard.shards import parse_shard
from sedcontract.outputs import Named, Outputs
from sedcontract.scores.psds.operating_points import point_files
from sedcontract.traces.score_files import score_files

EXAMPLES = Path(__file__).parents[1] / "examples"
SYSTEM_FORMATS = {"csv"}  # formats whose rows carry the system's name
CURVE_READERS = ("--curves-targets", "--curves-decision", "--curves-figure",
                 "--curves-duration-at", "--curves-certify")  # options that read the curves
OPTIONS = {name: "--" + name.replace("_", "-") for name in (  # request field -> its option
    "pred", "pred_scores", "pred_points", "durations", "clips", "windows", "compare_scores",
    "with_scores", "bootstrap", "curves", "shard", "compare", "jobs")} | \
    {"max_rate": "--curves-max-rate"}


@dataclass(frozen=True)
class Asked:
    """What ``audit`` or ``scores`` is asked: the library's request (an
    :class:`~sedcontract.analysis.audit_request.AuditRequest` for ``audit``), the format and
    the files written beside the report: the PSD-ROC, the curves' figure and decision file.
    ``given`` names the options given that :meth:`check` weighs against each other."""

    request: ScoresRequest
    format: str
    out: str | None = None
    psd_roc: str | None = None
    decision_file: str | None = None  # --decision: read
    targets_file: str | None = None  # --curves-targets naming a risk order: read
    curves_decision: str | None = None
    curves_figure: str | None = None
    given: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, args: argparse.Namespace, *, audit: bool) -> Asked:
        """The parsed options of ``audit`` (or of ``scores``, which has none of the audit's
        own options but the bootstrap's), checked."""
        own: dict[str, Any] = {}
        curve_flags: tuple[str, ...] = ()
        if audit:
            curves = _curves(args)
            curve_flags = tuple(flag for flag, value in (
                ("--curves-targets", args.curves_targets),
                ("--curves-decision", args.curves_decision),
                ("--curves-figure", args.curves_figure),
                ("--curves-duration-at", args.curves_duration_at),
                ("--curves-certify", args.curves_certify is not None),
                ("--curves-max-rate", args.curves_max_rate is not None)) if value)
            own = {"mode": args.mode, "system": args.system, "soft": args.soft,
                   "backend": args.backend, "jobs": args.jobs, "compare": args.compare,
                   "with_scores": args.with_scores,
                   "coordinates": tuple(args.coordinates.split(",")) if args.coordinates
                   else None,
                   "shard": parse_shard(args.shard) if args.shard is not None else None,
                   "curves": curves, "intervals": args.format not in SYSTEM_FORMATS}
        policy = options.policy(args, scores=own.get("with_scores", True))
        if args.pred_scores is not None:
            policy = policy.but(decision=options.decision(args))
        kind = AuditRequest if audit else ScoresRequest
        request = kind(
            ref=args.ref, policy=policy, pred=args.pred, pred_scores=args.pred_scores,
            pred_points=tuple(args.pred_points) if args.pred_points else None,
            durations=args.durations, clips=args.clips,
            classes=tuple(c.strip() for c in args.classes.split(",")) if args.classes
            else None, class_map=args.class_map, windows=args.windows,
            skip_unlisted=args.skip_unlisted, psds=opt.psds_settings(args),
            psds_cut=args.psds_cut, auroc=opt.auroc_settings(args), bootstrap=args.bootstrap,
            bootstrap_seed=args.bootstrap_seed, level=args.level,
            compare_scores=args.compare_scores, **own)
        asked = cls(request, args.format, args.out, args.psd_roc, args.decision,
                    opt.targets_file(getattr(args, "curves_targets", None)),
                    getattr(args, "curves_decision", None),
                    getattr(args, "curves_figure", None),
                    {"psds": opt.psds_asked(args), "auroc": opt.auroc_asked(args),
                     "decision": options.decision_asked(args), "curves": curve_flags})
        asked.check()
        return asked

    @property
    def audit(self) -> AuditRequest | None:
        """The request when it is the audit's."""
        return self.request if isinstance(self.request, AuditRequest) else None

    def check(self) -> None:
        """Every clash of options, in one place: the request's own checks (in its options'
        names) and the options' that only the command line has, in the order a user meets
        them."""
        r, given = self.request, self.given
        if given.get("decision") and r.pred_scores is None:
            raise SedContractError(f"{' and '.join(given['decision'])} decide how score files "
                                   "(--pred-scores) become events; events given with --pred "
                                   "are taken as they are")
        r.check_inputs(OPTIONS)
        self._check_asked()
        r.check_compare(OPTIONS)
        self._check_curves()
        self._check_format()
        if self.audit is not None:
            self.audit.check_shard(OPTIONS)

    def _check_asked(self) -> None:
        """PSDS and AUROC options need what they set."""
        r, given = self.request, self.given
        scored = r.pred_scores is not None and r.with_scores
        if given.get("psds") and not r.pred_points and not scored:
            source = "--pred-scores (its frame scores: add --with-scores)" \
                if r.pred_scores is not None else "--pred-scores with --with-scores"
            raise SedContractError(f"{' and '.join(given['psds'])} set PSDS, which these "
                                   f"inputs do not give: PSDS comes from --pred-points "
                                   f"(operating-point tables) or {source}; events at one "
                                   "threshold (--pred) have no curve")
        if given.get("auroc") and not scored:
            source = "its frame scores: add --with-scores" if r.pred_scores is not None \
                else "--pred-scores with --with-scores"
            raise SedContractError(f"{' and '.join(given['auroc'])} set the segment-based "
                                   f"AUROC, which comes from score files ({source}); events "
                                   "at one threshold and operating points have no segment "
                                   "scores")

    def _check_curves(self) -> None:
        r, flags = self.audit, self.given.get("curves", ())
        curves = None if r is None else r.curves
        if curves is None:
            if set(flags) & set(CURVE_READERS):
                raise SedContractError("--curves-targets, --curves-decision, --curves-figure, "
                                       "--curves-duration-at and --curves-certify read the "
                                       "curves: add --curves")
            if "--curves-max-rate" in flags:
                raise SedContractError("--curves-max-rate sets the budgets of --curves: add "
                                       "it")
            return
        if self.curves_decision and not curves.targets:
            raise SedContractError("--curves-decision writes the thresholds that meet "
                                   "--curves-targets: give the targets")
        r.check_curves(OPTIONS)

    def _check_format(self) -> None:
        r, audit = self.request, self.audit
        if audit is None:
            return
        if audit.shard is not None and self.format != "json":
            raise SedContractError("--shard writes a JSON shard report for sedcontract merge: "
                                   "add --format json")
        if audit.soft is not None and self.format == "json":
            raise SedContractError("--soft adds the table by annotation confidence (--format "
                                   "md) or softness and confidence rows (--format csv)")
        if self.format in SYSTEM_FORMATS and (audit.compare or r.compare_scores):
            raise SedContractError("--compare and --compare-scores add paired intervals to "
                                   "--format md or json; csv rows are the per-clip counts "
                                   "they are computed from (sedcontract report --baseline "
                                   "pairs systems from their rows)")
        if self.format in SYSTEM_FORMATS and r.bootstrap and not (
                r.pred_scores is not None and (r.with_scores or audit.curves is not None)):
            raise SedContractError("--bootstrap with --format csv writes the bootstrap draws of "
                                   "PSDS, mAUC and mpAUC and of the guard curves' areas, which "
                                   "come from score files (--pred-scores with --with-scores "
                                   "or --curves); the guard coordinates' and F1 intervals are "
                                   "computed by sedcontract report from the per-clip rows")

    def reads(self, contract: list[Path]) -> Named:
        """The paths the request reads, by option (``contract``: the contract's file)."""
        r, audit = self.request, self.audit
        scores = score_files(r.pred_scores) if r.pred_scores is not None else []
        points = point_files(r.pred_points, r.point_others()) if r.pred_points else []
        return {"--ref": r.ref, "--pred": r.pred,
                "--compare": audit.compare if audit is not None else None,
                "--compare-scores": score_files(r.compare_scores)
                if r.compare_scores is not None else [],
                "--durations": r.durations, "--pred-points": points,
                "--contract": contract, "--pred-scores": scores,
                "--class-map": r.class_map, "--soft": audit.soft if audit is not None else None,
                "--decision": self.decision_file, "--curves-targets": self.targets_file}

    def writes(self) -> Named:
        return {"--out": given(self.out), "--psd-roc": given(self.psd_roc),
                "--curves-decision": given(self.curves_decision),
                "--curves-figure": given(self.curves_figure)}

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

    def run(self, out: Outputs | None) -> str:
        """Compute and render the request; the PSD-ROC figure (``--psd-roc``), the curves'
        figure and decision file go to ``out``."""
        done = replace(self.request, shown=self.shown()).compute(names=OPTIONS)
        if self.psd_roc and out is not None and done.psds is not None:
            from sedcontract.scores.psds.request import psd_roc_png

            out.write(self.psd_roc, psd_roc_png(done.psds))
        if out is not None and done.curves is not None and done.corpus is None:
            write_curve_files(out, done.curves, self.curves_figure, self.curves_decision)
        return done.render(self.format)


def _curves(args: argparse.Namespace) -> CurvesRequest | None:
    """``--curves`` and its options as the library's request (read before the policy, as
    the risk order's file names coordinates to check)."""
    targets = opt.curve_targets(args.curves_targets)
    thresholds = opt.curve_thresholds(args.curves_duration_at)
    if not args.curves:
        return None
    return CurvesRequest(
        max_rate=100.0 if args.curves_max_rate is None else args.curves_max_rate,
        targets=targets, thresholds=thresholds, certify=args.curves_certify)


def write_curve_files(out: Outputs, summary: Mapping[str, Any], figure: str | None,
                      decision: str | None) -> None:
    """The curves' figure (``--curves-figure``) and the decision file of their targets
    (``--curves-decision``), from the curves' summary."""
    from sedcontract.analysis.curve_summaries import curves_png, decision_file

    if figure:
        out.write(figure, curves_png(summary["curves"], summary["hours"], summary["max_rate"]))
    if decision:
        out.write(decision, decision_file(summary))


def _command(audit: bool) -> Command:
    def execute(args: argparse.Namespace, out: Outputs) -> int:
        asked = Asked.of(args, audit=audit)
        return emit(out, asked.out, asked.run(out))

    def reads(args: argparse.Namespace) -> Named:
        return Asked.of(args, audit=audit).reads(contract_read(args))

    def writes(args: argparse.Namespace) -> Named:
        return Asked.of(args, audit=audit).writes()

    if not audit:
        return Command("scores", "standard SED scores (frame, segment, collar event, "
                       "intersection, boundary F1, error rates; PSDS from score files or "
                       "operating-point tables; mAUC and mpAUC from score files)",
                       opt.add_scores_options, execute, reads, writes)
    return Command("audit", "guard vector of a system output against a reference",
                   opt.add_audit_options, execute, reads, writes)


def _run_demo(args: argparse.Namespace, out: Outputs) -> int:
    """The audit of the shipped example with the demo's policy and monitor options."""
    example = [f"--ref={EXAMPLES / 'demo_ref.tsv'}", f"--pred={EXAMPLES / 'demo_pred.tsv'}",
               f"--durations={EXAMPLES / 'demo_durations.tsv'}"]
    parser = argparse.ArgumentParser(add_help=False)
    opt.add_audit_options(parser)
    audit_args = parser.parse_args(example)
    for name, value in vars(args).items():  # the demo's own options: policy and monitor
        if hasattr(audit_args, name) and name != "command":
            setattr(audit_args, name, value)
    print(f"Reference:  {audit_args.ref}\nPrediction: {audit_args.pred}\n")
    sys.stdout.write(Asked.of(audit_args, audit=True).run(None))
    return 0


COMMANDS = [_command(audit=True), _command(audit=False),
            Command("demo", "audit the shipped example (the README's main job)",
                    opt.add_demo_options, _run_demo)]
