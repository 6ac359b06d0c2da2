"""``sedcontract audit``, ``scores`` and ``demo``: the guard vector (and the standard scores)
of a system's output against a reference."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from sedcontract.audit import (
    AuditPolicy,
    GuardReport,
    ScoreSettings,
    audit,
    score,
    to_csv,
    to_json,
    to_markdown,
)
from sedcontract.audit.operating_points import point_files, read_points
from sedcontract.audit.psds import PRESETS, PsdsRequest, PsdsSettings, psd_roc_png, without_curves
from sedcontract.audit.render import policy_id, psds_markdown, scores_json, scores_markdown
from sedcontract.audit.shards import corpus_key, parse_shard, shard_json
from sedcontract.cli import options
from sedcontract.cli.command import Command, contract_read, given
from sedcontract.errors import SedContractError
from sedcontract.outputs import Named, Outputs
from sedcontract.traces import MODES, EventList, read_durations, read_events
from sedcontract.traces.classmap import ClassMap, read_class_map
from sedcontract.traces.scores import (
    DecisionPolicy,
    ScoreFolder,
    check_score_classes,
    score_files,
    tables_to_events,
)
from sedcontract.traces.soft import read_soft_tsv
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
RENDER = {"md": to_markdown, "json": to_json, "csv": to_csv}
SYSTEM_FORMATS = {"csv"}  # formats whose rows carry the system's name


def _reference(args: argparse.Namespace) -> EventList:
    """The reference events; with ``--clips durations`` also the clips only the durations file
    lists (clips without events)."""
    ref = read_events(args.ref)
    if args.clips == "durations":
        if not args.durations:
            raise SedContractError("--clips durations needs --durations")
        ref = with_clips(ref, read_durations(args.durations))
    return ref


def _classes(args: argparse.Namespace, class_map: ClassMap | None) -> list[str] | None:
    """The declared classes: ``--classes``, else the targets of the class map, else those
    the files name (None)."""
    if args.classes:
        return [c.strip() for c in args.classes.split(",")]
    return list(class_map.kept) if class_map is not None else None


def _predictions(args: argparse.Namespace, ref: EventList, class_map: ClassMap | None,
                 declared: list[str] | None
                 ) -> tuple[EventList | str, DecisionPolicy | None, ScoreFolder | None]:
    """The system's events (a path when nothing needs changing), the decision policy of
    scores, and the score folder (read again, clip by clip) when PSDS is asked for."""
    if args.pred_scores is None:
        if args.windows:
            raise SedContractError("--windows merges score files (--pred-scores); events of "
                                   "overlapping windows cannot be averaged")
        if class_map is None:
            return args.pred, None, None
        return class_map.events(read_events(args.pred)), None, None
    decision = options.build(DecisionPolicy, args)
    skipped: list[str] | None = [] if args.skip_unlisted else None
    folder = ScoreFolder.open(args.pred_scores, ref.clips, class_map=class_map,
                              windows=args.windows, skipped=skipped, durations=args.durations)
    # a reference class without a column would count as missed (a label outside the declared
    # classes is refused by the audit, naming its row)
    check_score_classes(folder, [c for c in ref.classes if declared is None or c in declared])
    if skipped:
        print(f"sedcontract: skipped {len(skipped)} score file(s) of clips the reference does "
              f"not list (first: {Path(skipped[0]).name})", file=sys.stderr)
    if declared is not None:  # the declared classes' columns only (PSDS scores each column)
        folder = folder.only(declared)
    # read one clip at a time here, and again for PSDS: never every table at once
    pred = tables_to_events(folder.tables(), decision, args.pred_scores)
    return pred, decision, folder if args.with_scores else None


def _warn(text: str) -> None:
    print(f"sedcontract: warning: {text}", file=sys.stderr)


def _overlap_warnings(events: EventList, name: str) -> None:
    """Name the first of the events that overlap or touch an earlier one of their class: the
    audit merges them (and counts them in its traces section), PSDS joins them."""
    found = events.overlapping()
    if len(found):
        where = events.where(int(found[0]))
        _warn(f"{len(found)} {name} event(s) overlap or touch an earlier event of their clip "
              f"and class and are merged with it (first: {where['path']}, row {where['row']})")


def _psds_warnings(args: argparse.Namespace, result: dict | None) -> None:
    """Say on standard error what PSDS from operating points joined in the tables (the
    reference's overlaps are warned of with the reference), once: not when the Markdown
    report, whose PSDS table says it, goes to the same terminal or file."""
    if not result or "note" in result or _shown(args):
        return
    joined = next(iter(result.values())).get("joined") or {}
    if joined.get("points"):
        _warn(f"{joined['points']} detection(s) of the operating points overlap an earlier one "
              "of their clip and class and are joined with it for PSDS (psds_eval refuses "
              "them)")


def _report_warnings(args: argparse.Namespace, report: GuardReport, source: str = "") -> None:
    """The report's warnings on standard error, once: not when the audit's Markdown report,
    which shows them above the vector, goes to the same terminal or file (the scores' tables
    do not show them)."""
    if not source and not args.scores_only and _shown(args):
        return
    for warning in report.traces["warnings"]:
        _warn(f"{source}{warning}")


def _shown(args: argparse.Namespace) -> bool:
    """Whether the Markdown report goes to standard output and that is standard error's
    terminal, pipe or file: what it shows is not said again there."""
    if args.out is not None or args.format != "md":
        return False
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino)


def _system(args: argparse.Namespace) -> str:
    """The name of the audited system in source rows: --system, else the prediction's stem."""
    if args.system:
        return args.system
    source = args.pred if args.pred is not None else args.pred_scores
    return Path(source).stem if source else "system"


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


def _psds_asked(args: argparse.Namespace) -> list[str]:
    """The PSDS options given on the command line."""
    given = [f"--psds-{n.replace('_', '-')}" for n in PSDS_PARAMETERS
             if getattr(args, f"psds_{n}") is not None]
    return [*(["--psds"] if args.psds is not None else []), *given,
            *(["--psds-cut"] if args.psds_cut else []),
            *(["--psd-roc"] if args.psd_roc else [])]


def _psds_request(args: argparse.Namespace, folder: ScoreFolder | None,
                  class_map: ClassMap | None) -> PsdsRequest | None:
    """What PSDS to compute: from the score files (``--with-scores``) or ``--pred-points``
    (mapped through ``--class-map`` like the other predictions)."""
    if args.pred_points:
        points = read_points(args.pred_points, _point_others(args))
        if class_map is not None:
            points = [class_map.events(table) for table in points]
        return PsdsRequest(points=points, settings=_psds_settings(args), cut=args.psds_cut)
    if folder is not None:
        return PsdsRequest(scores=folder, settings=_psds_settings(args), cut=args.psds_cut)
    asked = _psds_asked(args)
    if asked:
        source = "--pred-scores (its frame scores: add --with-scores)" \
            if args.pred_scores is not None else "--pred-scores with --with-scores"
        raise SedContractError(f"{' and '.join(asked)} set PSDS, which these inputs do not "
                               f"give: PSDS comes from --pred-points (operating-point "
                               f"tables) or {source}; events at one threshold (--pred) have "
                               "no curve")
    return None


def _psd_roc(args: argparse.Namespace, out: Outputs | None, result: dict | None) -> None:
    """Write the PSD-ROC figure (``--psd-roc``) of a computed PSDS."""
    if args.psd_roc and out is not None and result is not None:
        out.write(args.psd_roc, psd_roc_png(result))


def _points_only(args: argparse.Namespace, out: Outputs | None, ref: EventList,
                 policy: AuditPolicy, classes: list[str] | None,
                 class_map: ClassMap | None) -> str:
    """``scores --pred-points`` without one system output: PSDS of the operating points alone,
    the reference checked against the durations as the audit checks it."""
    if not args.scores_only:
        raise SedContractError("the guard vector needs one system output: give --pred or "
                               "--pred-scores (--pred-points adds PSDS)")
    if not args.pred_points:
        raise SedContractError("give --pred (event tsv), --pred-scores (a directory of score "
                               "tsv files) or --pred-points (operating-point tables)")
    if not args.durations:
        raise SedContractError("PSDS needs clip durations: add --durations")
    from sedcontract.traces.overrun import fit_to_durations

    durations = read_durations(args.durations)
    fit_to_durations(ref, durations, "ref", tolerance=policy.duration_tolerance,
                     strict=policy.strict_durations)  # refused beyond the tolerance
    _overlap_warnings(ref, "reference")
    result = _psds_request(args, None, class_map).compute(ref, durations, classes)
    _psds_warnings(args, result)
    _psd_roc(args, out, result)
    if args.format == "json":
        return json.dumps({"psds": without_curves(result)}, indent=2, allow_nan=False) + "\n"
    return psds_markdown(result)


def _text(args: argparse.Namespace, policy: AuditPolicy, out: Outputs | None = None) -> str:
    """The audit (or the scores) of the arguments, rendered in ``--format``; figures go to
    ``out``."""
    ref = _reference(args)
    class_map = read_class_map(args.class_map) if args.class_map else None
    classes = _classes(args, class_map)
    if args.pred is None and args.pred_scores is None:  # PSDS of operating points alone
        return _points_only(args, out, ref, policy, classes, class_map)
    pred, decision, psds_scores = _predictions(args, ref, class_map, classes)
    _overlap_warnings(ref, "reference")
    policy = policy.but(decision=decision)
    psds = _psds_request(args, psds_scores, class_map)
    shard = parse_shard(args.shard) if args.shard is not None else None
    if shard is not None and args.format != "json":
        raise SedContractError("--shard writes a JSON shard report for sedcontract merge: add "
                               "--format json")
    if args.scores_only:  # the score functions alone: no contract runs
        report = score(ref, pred, policy, durations=args.durations, psds=psds,
                       classes=classes)
    else:
        coordinates = args.coordinates.split(",") if args.coordinates else None
        report = audit(ref, pred, policy, durations=args.durations, mode=args.mode,
                       coordinates=coordinates, psds=psds, classes=classes,
                       backend=args.backend, jobs=args.jobs, shard=shard)
    _report_warnings(args, report)
    _psds_warnings(args, report.psds)
    _psd_roc(args, out, report.psds)
    if shard is not None:
        durations = read_durations(args.durations) if args.durations else None
        events = pred if isinstance(pred, EventList) else read_events(pred)
        return shard_json(report, *shard, corpus_key(ref, events, report.facts.classes,
                                                     durations))
    if args.scores_only:
        if args.format == "json":
            return scores_json(report)
        text = scores_markdown(report.scores)
        return text + ("\n" + psds_markdown(report.psds) if report.psds is not None else "")
    return _rendered(args, report, ref, pred, policy, classes)


def _rendered(args: argparse.Namespace, report: GuardReport, ref: EventList,
              pred: EventList | str, policy: AuditPolicy, classes: list[str] | None) -> str:
    """The audit report in ``--format``, with the vector by annotation confidence (``--soft``)."""
    soft = read_soft_tsv(args.soft) if args.soft else None
    confidence = None
    if soft is not None:
        if args.format == "json":
            raise SedContractError("--soft adds the table by annotation confidence (--format "
                                   "md) or softness and confidence rows (--format csv)")
        from sedcontract.audit.confidence import by_confidence

        confidence = by_confidence(ref, pred, policy, soft, durations=args.durations,
                                   classes=classes)
    if args.format in SYSTEM_FORMATS:
        if args.bootstrap or args.compare:
            raise SedContractError("--bootstrap and --compare add intervals to --format md or "
                                   "json; csv rows are the per-clip counts they are computed "
                                   "from")
        extra = ()
        if confidence is not None:
            from sedcontract.audit.confidence import confidence_rows

            extra = confidence_rows(confidence, _system(args), policy_id(report.policy))
        return to_csv(report, _system(args), soft, extra)
    text = RENDER[args.format](report)
    if args.bootstrap or args.compare:
        text = _with_intervals(args, report, text, ref, policy, classes)
    if confidence is not None:
        from sedcontract.audit.confidence import confidence_markdown

        text += "\n" + confidence_markdown(confidence)
    return text


def _with_intervals(args: argparse.Namespace, report: GuardReport, text: str,
                    ref: EventList, policy: AuditPolicy, classes: list[str] | None) -> str:
    """The rendered report with bootstrap intervals (``--bootstrap N``) and the paired
    comparison with a second system (``--compare``): tables after the Markdown, ``intervals``
    and ``comparison`` sections in JSON."""
    from sedcontract.audit import bootstrap_intervals, paired_bootstrap
    from sedcontract.audit.render import intervals_dict, intervals_markdown

    resamples = args.bootstrap or 2000
    sections: dict[str, dict] = {}
    if args.bootstrap:
        sections["intervals"] = {
            mode: bootstrap_intervals(report, mode=mode, resamples=resamples,
                                      seed=args.bootstrap_seed, level=args.level)
            for mode in report.modes}
    if args.compare:
        coordinates = args.coordinates.split(",") if args.coordinates else None
        other = audit(ref, args.compare, policy, durations=args.durations, mode=args.mode,
                      coordinates=coordinates, classes=classes or list(report.facts.classes),
                      backend=args.backend, jobs=args.jobs)
        _report_warnings(args, other, f"--compare {args.compare}: ")
        sections["comparison"] = {
            mode: paired_bootstrap(report, other, mode=mode, resamples=resamples,
                                   seed=args.bootstrap_seed, level=args.level)
            for mode in report.modes}
    if args.format == "json":
        data = json.loads(text)
        data |= {name: intervals_dict(value) for name, value in sections.items()}
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    titles = {"intervals": "Bootstrap intervals",
              "comparison": f"Paired difference, {_pair_title(args)}" if args.compare else ""}
    return text + "".join(intervals_markdown(value, args.bootstrap_seed, titles[name],
                                             signed=name == "comparison")
                          for name, value in sections.items())


def _pair_title(args: argparse.Namespace) -> str:
    """``--pred A minus --compare B``, by file name, or by path where the names are one."""
    option, given = ("--pred", args.pred) if args.pred is not None else \
        ("--pred-scores", args.pred_scores)
    a, b = Path(given), Path(args.compare)
    same = a.name == b.name
    return f"{option} {a if same else a.name} minus --compare {b if same else b.name}"


def _emit(args: argparse.Namespace, out: Outputs, text: str) -> int:
    if args.out is None:
        sys.stdout.write(text)
    else:
        out.write(args.out, text)
    return 0


def _run_audit(args: argparse.Namespace, out: Outputs) -> int:
    if args.pred is not None and args.pred_scores is not None:
        raise SedContractError("give one of --pred (event tsv) or --pred-scores (a directory "
                               "of score tsv files), not both")
    if args.pred_points and args.pred_scores is not None:
        raise SedContractError("PSDS comes from --pred-scores or from --pred-points, not both")
    return _emit(args, out, _text(args, options.policy(args, scores=args.with_scores), out))


def _reads(args: argparse.Namespace) -> Named:
    scores = score_files(args.pred_scores) if args.pred_scores is not None else []
    points = point_files(args.pred_points, _point_others(args)) if args.pred_points else []
    return {"--ref": args.ref, "--pred": args.pred, "--compare": getattr(args, "compare", None),
            "--durations": args.durations, "--pred-points": points,
            "--contract": contract_read(args), "--pred-scores": scores,
            "--class-map": args.class_map, "--soft": args.soft}


def _point_others(args: argparse.Namespace) -> dict[str, str | None]:
    """The inputs that must not stand among the operating-point tables."""
    return {"--ref": args.ref, "--durations": args.durations}


def _writes(args: argparse.Namespace) -> Named:
    return {"--out": given(args.out), "--psd-roc": given(args.psd_roc)}


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", default=None, help="predicted events (DCASE tsv)")
    parser.add_argument("--pred-scores", default=None,
                        help="directory of sed_scores_eval score files (one tsv per clip)")
    options.add_options(parser, DecisionPolicy)
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
    parser.add_argument("--out", default=None, help="write here instead of standard output")
    options.add_options(parser, AuditPolicy)
    options.add_options(parser, ScoreSettings)


def _audit_options(parser: argparse.ArgumentParser) -> None:
    _inputs(parser)
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    options.add_monitor_options(parser)
    parser.add_argument("--coordinates", default=None,
                        help="comma-separated coordinates to report (default: all)")
    parser.add_argument("--format", choices=tuple(RENDER), default="md")
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
                             "intersection, boundary F1; PSDS with --pred-scores; "
                             "--pred-points adds PSDS whatever this says)")
    options.add_bootstrap_options(parser, default=0, what="every coordinate, logic and "
                                  "standard score (md, json)")
    parser.add_argument("--compare", default=None, metavar="PRED_B",
                        help="a second system's predicted events (DCASE tsv or CSV) on the same "
                             "clips: adds the paired difference (--pred minus PRED_B) of every "
                             "coordinate and logic with its paired bootstrap interval "
                             "(--bootstrap N resamples, default 2000)")
    parser.set_defaults(scores_only=False)


def _scores_options(parser: argparse.ArgumentParser) -> None:
    _inputs(parser)
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.set_defaults(scores_only=True, with_scores=True, mode="typed", coordinates=None,
                        soft=None, shard=None, system=None, backend="runs", jobs=1)


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
    sys.stdout.write(_text(audit_args, options.policy(audit_args)))
    return 0


def _demo_options(parser: argparse.ArgumentParser) -> None:
    options.add_options(parser, AuditPolicy)
    options.add_monitor_options(parser)


COMMANDS = [
    Command("audit", "guard vector of a system output against a reference", _audit_options,
            _run_audit, _reads, _writes),
    Command("scores", "standard SED scores (frame, segment, collar event, intersection, "
            "boundary F1, error rates; PSDS from score files or operating-point tables)",
            _scores_options, _run_audit,
            _reads, _writes),
    Command("demo", "audit the shipped example (the README's main job)", _demo_options,
            _run_demo),
]
