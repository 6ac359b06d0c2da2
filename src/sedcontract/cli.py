"""Command line: ``sedcontract audit | scores | check | demo``.

User mistakes (bad files, bad contracts, bad options) print one clear message and exit with
status 2; nothing is half-written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sedcontract.audit import AuditPolicy, ScoreSettings, audit, score, to_csv, to_json, to_markdown
from sedcontract.audit.render import policy_id, psds_line, scores_json, scores_markdown
from sedcontract.audit.shards import corpus_key, merge_shards, parse_shard, shard_json
from sedcontract.contracts import (
    ROUNDINGS,
    check_contract,
    contract_hash,
    format_contract,
    load_contract,
)
from sedcontract.contracts.policy import AGGREGATIONS, EVENT_MATCHINGS
from sedcontract.contracts.runs import BACKENDS
from sedcontract.contracts.syntax import METHODS
from sedcontract.data import PATHOLOGIES, pathology_set, write_pathology_set
from sedcontract.data.options import SPEECH_SOURCES, SPLITS
from sedcontract.errors import SedContractError
from sedcontract.outputs import atomic_write, check_output
from sedcontract.traces import (
    EDGES,
    MODES,
    PROJECTIONS,
    EventList,
    read_durations,
    read_events,
)
from sedcontract.traces.classmap import ClassMap, read_class_map
from sedcontract.traces.scores import (
    DecisionPolicy,
    read_score_dir,
    score_files,
    select_columns,
    tables_to_events,
)
from sedcontract.traces.soft import read_soft_tsv
from sedcontract.traces.traceset import MAX_CLIP_FRAMES
from sedcontract.traces.tsv import CLIP_LISTS, with_clips

EXAMPLES = Path(__file__).parent / "examples"
RENDER = {"md": to_markdown, "json": to_json, "csv": to_csv}
SYSTEM_FORMATS = {"csv"}  # formats whose rows carry the system's name


def _policy(args: argparse.Namespace, decision: DecisionPolicy | None) -> AuditPolicy:
    """The audit policy of the command-line options (checked in one place)."""
    scores = None
    if getattr(args, "with_scores", False):
        scores = ScoreSettings(args.t_collar, args.percentage_of_length, args.evaluate_onset,
                               args.evaluate_offset, args.event_matching, args.segment,
                               args.dtc, args.gtc)
    return AuditPolicy(contract=args.contract, eps=args.eps, hop=args.hop,
                       projection=args.projection, edges=args.edges, rounding=args.rounding,
                       matching=args.matching, aggregation=args.aggregation,
                       decision=decision, scores=scores, max_frames=args.max_frames)


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
    if getattr(args, "classes", None):
        return [c.strip() for c in args.classes.split(",")]
    return list(class_map.kept) if class_map is not None else None


def _predictions(args: argparse.Namespace, ref: EventList, class_map: ClassMap | None,
                 declared: list[str] | None
                 ) -> tuple[EventList | str, DecisionPolicy | None, dict | None]:
    """The system's events (a path when nothing needs changing), the decision policy of
    scores, and the score tables when PSDS is asked for."""
    if args.pred_scores is None:
        if args.windows:
            raise SedContractError("--windows merges score files (--pred-scores); events of "
                                   "overlapping windows cannot be averaged")
        if class_map is None:
            return args.pred, None, None
        return class_map.events(read_events(args.pred)), None, None
    decision = DecisionPolicy(args.threshold, args.median_filter)
    skipped: list[str] | None = [] if args.skip_unlisted else None
    tables = read_score_dir(args.pred_scores, ref.clips, class_map=class_map,
                            windows=args.windows, skipped=skipped)
    if skipped:
        print(f"sedcontract: skipped {len(skipped)} score file(s) of clips the reference does "
              f"not list (first: {Path(skipped[0]).name})", file=sys.stderr)
    if declared is not None:  # the declared classes' columns only (PSDS scores each column)
        tables = {clip: (select_columns(table, declared, path), path)
                  for clip, (table, path) in tables.items()}
    pred = tables_to_events(tables, decision, args.pred_scores)
    return pred, decision, tables if args.with_scores else None


def _overlap_warnings(events: EventList | str | Path, name: str) -> None:
    """Name the first of the events that overlap or touch an earlier one of their class: the
    audit merges them (and counts them in its traces section)."""
    if not isinstance(events, EventList):
        events = read_events(events)
    found = events.overlapping()
    if len(found):
        where = events.where(int(found[0]))
        print(f"sedcontract: warning: {len(found)} {name} event(s) overlap or touch an earlier "
              "event of their clip and class and are merged with it (first: "
              f"{where['path']}, row {where['row']})", file=sys.stderr)


def _audit(args: argparse.Namespace) -> str:
    ref = _reference(args)
    class_map = read_class_map(args.class_map) if args.class_map else None
    classes = _classes(args, class_map)
    pred, decision, psds_scores = _predictions(args, ref, class_map, classes)
    _overlap_warnings(ref, "reference")
    policy = _policy(args, decision)
    shard = getattr(args, "shard", None)
    if shard is not None:
        shard = parse_shard(shard)
        if args.format != "json":
            raise SedContractError("--shard writes a JSON shard report for sedcontract merge: "
                                   "add --format json")
    if args.command == "scores":  # the score functions alone: no contract runs
        report = score(ref, pred, policy, durations=args.durations, psds_scores=psds_scores,
                       classes=classes)
    else:
        report = audit(ref, pred, policy, durations=args.durations, mode=args.mode,
                       coordinates=args.coordinates, psds_scores=psds_scores,
                       classes=classes,
                       backend=args.backend, jobs=args.jobs, shard=shard)
    for warning in report.traces["warnings"]:
        print(f"sedcontract: warning: {warning}", file=sys.stderr)
    if shard is not None:
        durations = read_durations(args.durations) if args.durations else None
        if not isinstance(pred, EventList):
            pred = read_events(pred)
        corpus = corpus_key(ref, pred, report.facts.classes, durations)
        return shard_json(report, *shard, corpus)
    if args.command == "scores":
        if args.format == "json":
            return scores_json(report)
        text = scores_markdown(report.scores)
        return text + (psds_line(report.psds) + "\n" if report.psds is not None else "")
    soft = read_soft_tsv(args.soft) if getattr(args, "soft", None) else None
    confidence = None
    if soft is not None:
        if args.format == "json":
            raise SedContractError("--soft adds the table by annotation confidence (--format "
                                   "md) or softness and confidence rows (--format csv)")
        from sedcontract.audit.confidence import by_confidence

        confidence = by_confidence(ref, pred, policy, soft, durations=args.durations,
                                   classes=classes)
    if args.format in SYSTEM_FORMATS:
        extra = ()
        if confidence is not None:
            from sedcontract.audit.confidence import confidence_rows

            extra = confidence_rows(confidence, _system(args), policy_id(report.policy))
        return to_csv(report, _system(args), soft, extra)
    text = RENDER[args.format](report)
    if confidence is not None:
        from sedcontract.audit.confidence import confidence_markdown

        text += "\n" + confidence_markdown(confidence)
    return text


def _system(args: argparse.Namespace) -> str:
    """The name of the audited system in source rows: --system, else the prediction's stem."""
    if getattr(args, "system", None):
        return args.system
    source = args.pred if args.pred is not None else args.pred_scores
    return Path(source).stem if source else "system"


def _inputs_read(args: argparse.Namespace) -> list[str | Path]:
    """Every file an audit reads: an output path must not be one of them."""
    files: list[str | Path] = [p for p in (args.ref, args.pred, args.durations) if p]
    if Path(args.contract).is_file():
        files.append(args.contract)
    if args.pred_scores is not None:
        files += score_files(args.pred_scores)
    for extra in ("class_map", "soft"):
        if getattr(args, extra, None):
            files.append(getattr(args, extra))
    return files


def _cmd_audit(args: argparse.Namespace) -> int:
    if (args.pred is None) == (args.pred_scores is None):
        raise SedContractError("give exactly one of --pred (event tsv) or --pred-scores (a "
                               "directory of score tsv files)")
    if args.out is None:
        sys.stdout.write(_audit(args))
        return 0
    inputs = _inputs_read(args)
    check_output(args.out, inputs=inputs)  # refuse a bad output before the work, not after
    atomic_write(args.out, _audit(args), inputs=inputs)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _cmd_select(args: argparse.Namespace) -> int:
    from sedcontract.audit.selection import (
        known_kinds,
        read_labels,
        read_risk_order,
        select,
        selected_contract,
        selection_markdown,
    )

    folder = Path(args.calibration)
    files = {name: folder / f"{name}.tsv" for name in ("ref", "pred", "durations", "labels")}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise SedContractError(f"the calibration folder lacks {', '.join(missing)} (sedcontract "
                               "data pathologies writes all four)")
    inputs = [*files.values(), args.risk_order]
    outputs = [p for p in (args.out, args.table) if p]
    for path in outputs:
        check_output(path, inputs=inputs)
    policy = _policy(args, None)
    ref = read_events(files["ref"])
    report = audit(ref, files["pred"], policy, durations=files["durations"], mode=args.mode)
    labels = read_labels(files["labels"], ref.clips)
    risk = read_risk_order(args.risk_order, known_kinds(PATHOLOGIES, report, args.mode))
    selection = select(report, labels, risk, mode=args.mode)
    if not selection.chosen:
        raise SedContractError("no coordinate flags any high-risk case without flagging a "
                               "low-risk one: nothing to write (see the table above)\n"
                               + selection_markdown(selection))
    table = selection_markdown(selection)
    sys.stdout.write(table)
    atomic_write(args.out, selected_contract(policy.parsed, selection), inputs=inputs)
    print(f"wrote {args.out}", file=sys.stderr)
    if args.table:
        atomic_write(args.table, table, inputs=inputs)
        print(f"wrote {args.table}", file=sys.stderr)
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from sedcontract.audit.sweep import parse_radii, sweep, sweep_csv, sweep_markdown, sweep_png

    radii = parse_radii(args.eps)
    systems: dict[str, str] = {}
    for given in args.pred:
        name, _, path = given.rpartition("=") if "=" in given else ("", "", given)
        name = name or Path(path).stem
        if name in systems:
            raise SedContractError(f"two systems named {name!r}: give NAME=FILE")
        systems[name] = path
    inputs = [args.ref, *systems.values(), args.durations]
    outputs = {"out": args.out, "csv": args.csv, "figure": args.figure}
    for path in outputs.values():
        if path:
            check_output(path, inputs=inputs)
    args.eps = None
    result = sweep(read_events(args.ref), {n: read_events(p) for n, p in systems.items()},
                   _policy(args, None), radii, durations=args.durations, mode=args.mode)
    table = sweep_markdown(result)
    if args.out:
        atomic_write(args.out, table, inputs=inputs)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(table)
    if args.csv:
        atomic_write(args.csv, sweep_csv(result), inputs=inputs)
        print(f"wrote {args.csv}", file=sys.stderr)
    if args.figure:
        atomic_write(args.figure, sweep_png(result), inputs=inputs)
        print(f"wrote {args.figure}", file=sys.stderr)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from sedcontract.audit.timeline import timeline, timeline_png, timeline_text

    inputs = [args.ref, args.pred, args.durations]
    if args.out:
        check_output(args.out, inputs=inputs)
    names = [c.strip() for c in args.coordinates.split(",")] if args.coordinates else None
    tl = timeline(args.ref, args.pred, _policy(args, None), args.clip,
                  durations=args.durations, mode=args.mode)
    unknown = [n for n in names or [] if n not in tl.outcomes]
    if unknown:
        raise SedContractError(f"unknown coordinate {unknown[0]!r}; the contract's are "
                               f"{', '.join(tl.outcomes)}")
    sys.stdout.write(timeline_text(tl, names))
    if args.out:
        atomic_write(args.out, timeline_png(tl, names), inputs=inputs)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


REPORT_MARK = ".sedcontract-report"  # a report folder's mark: only such folders are rewritten


def _cmd_report(args: argparse.Namespace) -> int:
    from sedcontract.audit.report import read_groups, read_rows, report_files

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and
                                              not (out / REPORT_MARK).exists())):
        raise SedContractError(f"{out} exists and is not a report folder written by sedcontract "
                               "report: choose a new or empty folder")
    rows = read_rows(args.rows, several_policies=args.several_policies)
    groups = read_groups(args.groups) if args.groups else None
    timelines = []
    for folder in args.timelines or []:
        found = sorted(Path(folder).rglob("*.png"))
        if not found:
            raise SedContractError(f"{folder}: no timeline images (*.png) here")
        timelines += [(str(p.relative_to(folder)), p.read_bytes()) for p in found]
    from sedcontract.audit.sweep import read_sweep

    files = report_files(rows, groups, sweep=read_sweep(args.sweep) if args.sweep else None,
                         timelines=timelines)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / REPORT_MARK, "written by sedcontract report; rewritten by it\n")
    inputs = [*args.rows, args.groups, args.sweep]
    for name, data in files.items():
        atomic_write(out / name, data, inputs=inputs)
    print(f"wrote {len(files)} files to {out}: open {out / 'report.html'}", file=sys.stderr)
    return 0


def _cmd_merge(args: argparse.Namespace) -> int:
    report = merge_shards(args.shards)
    text = RENDER[args.format](report, args.system) if args.format in SYSTEM_FORMATS else \
        RENDER[args.format](report)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    atomic_write(args.out, text, inputs=args.shards)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    args.ref = EXAMPLES / "demo_ref.tsv"
    args.pred = EXAMPLES / "demo_pred.tsv"
    args.durations = EXAMPLES / "demo_durations.tsv"
    args.pred_scores, args.mode, args.format, args.coordinates = None, "both", "md", None
    args.clips, args.class_map, args.windows, args.skip_unlisted = "ref", None, False, False
    args.classes = None
    args.with_scores = False
    print(f"Reference:  {args.ref}\nPrediction: {args.pred}\n")
    sys.stdout.write(_audit(args))
    return 0


def _cmd_pathologies(args: argparse.Namespace) -> int:
    ref = read_events(args.ref)
    durations = read_durations(args.durations) if args.durations else None
    chosen = None
    if args.pathologies:
        chosen = {}
        for name in args.pathologies.split(","):
            if name not in PATHOLOGIES:
                raise SedContractError(f"unknown pathology {name!r}; known: "
                                       f"{', '.join(PATHOLOGIES)}")
            chosen[name] = PATHOLOGIES[name]
    data = pathology_set(ref, durations, seed=args.seed, pathologies=chosen)
    for path in write_pathology_set(args.out, data, inputs=(args.ref, args.durations)):
        print(f"wrote {path}")
    if data.unchanged:
        print("left out, the corruption found no room in the clip (the prediction would equal "
              "the reference): " + ", ".join(f"{k} {v}" for k, v in data.unchanged.items()))
    print(f"{len(data.labels)} corrupted clips from {len(ref.clips)} reference clips; audit "
          f"them with: sedcontract audit --ref {Path(args.out) / 'ref.tsv'} --pred "
          f"{Path(args.out) / 'pred.tsv'} --durations {Path(args.out) / 'durations.tsv'} "
          "--format csv")
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from sedcontract.data.build import build_controlled  # the generator: imported when used

    sizes = {"train": args.train, "validation": args.validation, "test": args.test}
    build_controlled(args.root, seed=args.seed, sizes=sizes, speech_source=args.speech_source,
                     librispeech_root=args.librispeech_root)
    return 0


def _cmd_maestro(args: argparse.Namespace) -> int:
    from sedcontract.data.maestro import read_corpus, write_corpus_files

    corpus = read_corpus(args.root, soft=args.soft, classes=args.classes,
                         durations=args.durations)
    written = write_corpus_files(args.out, corpus, inputs=(args.soft, args.durations))
    for path in written:
        print(f"wrote {path}")
    events = len(corpus.reference)
    print(f"{len(corpus.durations)} files, {len(corpus.soft.classes)} classes, {events} hard "
          f"reference events (soft > 0.5); durations: {corpus.duration_source}"
          + (f"; {corpus.soft.duplicates} repeated annotation row(s) ignored"
             if corpus.soft.duplicates else ""))
    ref, durations, soft = written
    print(f"audit a system with: sedcontract audit --ref {ref} --durations {durations} "
          f"--pred <events.tsv> (or --pred-scores <dir> [--windows] [--class-map <map.tsv>]); "
          f"add --soft {soft} for the vector by annotation confidence (and, with --format "
          "csv, the report's softness and confidence rows)")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    contract = load_contract(args.contract)
    conversions = check_contract(contract, hop=args.hop, rounding=args.rounding)
    print(format_contract(contract), end="")
    guard = [c.name for c in contract.clauses if not c.diagnostic]
    print(f"# ok: {len(guard)} coordinate(s) ({', '.join(guard) or 'none'}), "
          f"{len(contract.clauses) - len(guard)} diagnostic(s), sha256 {contract_hash(contract)}")
    for conversion in conversions:
        print(f"# {conversion}")
    return 0


def _policy_options(parser: argparse.ArgumentParser, *, eps: bool = True) -> None:
    parser.add_argument("--contract", default="standard",
                        help="shipped contract name or a .contract file (standard)")
    if eps:
        parser.add_argument("--eps", default=None,
                            help="override the contract's eps, e.g. 100ms")
    parser.add_argument("--hop", type=float, default=0.02, help="grid hop in seconds (0.02)")
    parser.add_argument("--projection", choices=PROJECTIONS, default="center")
    parser.add_argument("--edges", choices=EDGES, default="open", help="clip-edge policy")
    parser.add_argument("--rounding", choices=ROUNDINGS, default="nearest",
                        help="how time bounds become whole frames (nearest)")
    parser.add_argument("--matching", choices=METHODS, default=None,
                        help="override the method of every matching in the contract")
    parser.add_argument("--aggregation", choices=AGGREGATIONS, default="micro")
    parser.add_argument("--max-frames", type=int, default=MAX_CLIP_FRAMES,
                        help="refuse a clip of more frames than this (default "
                        f"{MAX_CLIP_FRAMES}: {MAX_CLIP_FRAMES * 0.02 / 3600:.0f} h at hop 20 ms)")


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", default=None, help="predicted events (DCASE tsv)")
    parser.add_argument("--pred-scores", default=None,
                        help="directory of sed_scores_eval score files (one tsv per clip)")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="decision threshold for --pred-scores (active iff score > it)")
    parser.add_argument("--median-filter", type=float, default=0.0,
                        help="median filter in seconds applied to scores before the threshold")
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
    parser.add_argument("--out", default=None, help="write here instead of standard output")


def _score_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--t-collar", type=float, default=0.2,
                        help="collar in seconds for event and boundary scores (0.2)")
    parser.add_argument("--percentage-of-length", type=float, default=0.2,
                        help="offset collar as a fraction of the reference length (0.2)")
    parser.add_argument("--evaluate-onset", action=argparse.BooleanOptionalAction,
                        default=True)
    parser.add_argument("--evaluate-offset", action=argparse.BooleanOptionalAction,
                        default=True)
    parser.add_argument("--event-matching", choices=EVENT_MATCHINGS, default="optimal",
                        help="event matching of the collar event scores (sed_eval's)")
    parser.add_argument("--segment", type=float, default=1.0,
                        help="segment length in seconds for segment-based scores (1.0)")
    parser.add_argument("--dtc", type=float, default=0.5,
                        help="detection tolerance criterion of the intersection F1 (0.5)")
    parser.add_argument("--gtc", type=float, default=0.5,
                        help="ground-truth intersection criterion of the intersection F1 (0.5)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sedcontract", description="Executable boundary contracts for sound event "
        "detection: guard vectors, standard scores and contract checks.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("audit", help="guard vector of a system output against a reference")
    _inputs(run)
    run.add_argument("--mode", choices=(*MODES, "both"), default="both")
    _monitor_options(run)
    run.add_argument("--coordinates", default=None,
                     help="comma-separated coordinates to report (default: all)")
    run.add_argument("--format", choices=tuple(RENDER), default="md")
    run.add_argument("--system", default=None,
                     help="the system's name in source rows (--format csv; default: the "
                          "prediction file's stem)")
    run.add_argument("--soft", default=None,
                     help="soft labels of the reference (tsv filename onset offset event_label "
                          "confidence, e.g. sedcontract data maestro's): adds the vector by "
                          "annotation confidence (md), or softness and confidence rows (csv) "
                          "for the report")
    run.add_argument("--shard", default=None, metavar="I/N",
                     help="audit block I (from 0) of N consecutive blocks of the clips and write "
                          "a JSON shard report; sedcontract merge joins all N")
    run.add_argument("--with-scores", action="store_true",
                     help="add the standard scores (frame, segment, collar event, intersection, "
                "boundary F1; PSDS with --pred-scores)")
    _policy_options(run)
    _score_options(run)
    run.set_defaults(run=_cmd_audit)

    scores = sub.add_parser("scores", help="standard SED scores (frame, segment, collar event, "
                            "intersection, boundary F1, error rates; PSDS from score files)")
    _inputs(scores)
    scores.add_argument("--format", choices=("md", "json"), default="md")
    _policy_options(scores)
    _score_options(scores)
    scores.set_defaults(run=_cmd_audit, with_scores=True, mode="typed", coordinates=None)

    merge = sub.add_parser("merge", help="join the JSON reports of all shards of an audit "
                           "into the corpus's report (the bytes of one unsharded run)")
    merge.add_argument("shards", nargs="+", help="shard reports (audit --shard I/N --format "
                       "json), any order")
    merge.add_argument("--format", choices=tuple(RENDER), default="json")
    merge.add_argument("--out", default=None, help="output file (default: standard output)")
    merge.add_argument("--system", default="system",
                       help="the system's name in source rows (--format csv)")
    merge.set_defaults(run=_cmd_merge)

    pick = sub.add_parser("select", help="the smallest contract that flags every high-risk "
                          "case of a calibration set and no low-risk one, under a risk order")
    pick.add_argument("--calibration", required=True, help="a folder written by sedcontract "
                      "data pathologies (ref.tsv, pred.tsv, durations.tsv, labels.tsv)")
    pick.add_argument("--risk-order", required=True, help="YAML: order (most harmful first) "
                      "and high (how many, or which, are high risk)")
    pick.add_argument("--out", required=True, help="the selected contract file to write")
    pick.add_argument("--table", default=None, help="also write the Markdown table here")
    pick.add_argument("--mode", choices=MODES, default="typed")
    _policy_options(pick)
    pick.set_defaults(run=_cmd_select, with_scores=False)

    sw = sub.add_parser("sweep", help="guard vectors of one or several systems against the "
                        "tolerance radius eps (table, source rows, figure)")
    sw.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    sw.add_argument("--pred", action="append", required=True,
                    help="a system's events, FILE or NAME=FILE; repeat for several systems")
    sw.add_argument("--durations", default=None, help="clip durations (tsv)")
    sw.add_argument("--eps", required=True,
                    help="radii, e.g. 0,20ms,40ms,...,500ms ('...' continues the step)")
    sw.add_argument("--mode", choices=MODES, default="typed")
    sw.add_argument("--out", default=None, help="Markdown tables (default: standard output)")
    sw.add_argument("--csv", default=None, help="source rows: system, eps, coordinate, counts")
    sw.add_argument("--figure", default=None, help="PNG: a panel per coordinate")
    _policy_options(sw, eps=False)
    sw.set_defaults(run=_cmd_sweep, with_scores=False)

    show = sub.add_parser("show", help="one clip's failure timeline: where each coordinate was "
                          "obliged and where it failed (text; a PNG with --out)")
    show.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    show.add_argument("--pred", required=True, help="predicted events (DCASE tsv)")
    show.add_argument("--durations", default=None, help="clip durations (tsv)")
    show.add_argument("--clip", required=True, help="the clip id (filename without extension)")
    show.add_argument("--mode", choices=MODES, default="typed")
    show.add_argument("--coordinates", default=None,
                      help="comma-separated coordinates to show (default: all clauses)")
    show.add_argument("--out", default=None, help="write the timeline as a PNG here")
    _policy_options(show)
    show.set_defaults(run=_cmd_show, with_scores=False)

    rep = sub.add_parser("report", help="regenerate every table, a figure and report.html from "
                         "source rows (audit --format csv, or run folders)")
    rep.add_argument("rows", nargs="+", help="rows files (CSV; Parquet with pyarrow) or run "
                     "folders holding *_report.csv")
    rep.add_argument("--out", required=True, help="the report folder (new, empty, or an "
                     "earlier report's)")
    rep.add_argument("--groups", default=None, help="clip groups: labels.tsv of a pathology "
                     "set, or any tsv filename<TAB>group with a header")
    rep.add_argument("--sweep", default=None, help="sweep rows (sedcontract sweep --csv): its "
                     "tables and figure join the report")
    rep.add_argument("--timelines", action="append", default=None,
                     help="a folder of timeline images (*.png) to embed; repeatable")
    rep.add_argument("--several-policies", action="store_true",
                     help="compare rows of several policies (else refused)")
    rep.set_defaults(run=_cmd_report)

    check = sub.add_parser("check", help="parse and type-check a contract, print it canonically")
    check.add_argument("contract", help="shipped name (standard) or a .contract file")
    check.add_argument("--hop", type=float, default=0.02, help="grid hop in seconds (0.02)")
    check.add_argument("--rounding", choices=ROUNDINGS, default="nearest")
    check.set_defaults(run=_cmd_check)

    data = sub.add_parser("data", help="data sets: the controlled benchmark, pathology sets")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    patho = data_sub.add_parser("pathologies", help="corrupt a reference into predictions with "
                                "known pathologies at graded severity")
    patho.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    patho.add_argument("--durations", default=None, help="clip durations (tsv)")
    patho.add_argument("--out", required=True, help="output folder")
    patho.add_argument("--seed", type=int, default=0)
    patho.add_argument("--pathologies", default=None,
                       help=f"comma-separated subset of: {', '.join(PATHOLOGIES)}")
    patho.set_defaults(run=_cmd_pathologies)
    build = data_sub.add_parser("build", help="build a benchmark deterministically from a seed")
    build.add_argument("name", choices=("controlled",), help="which benchmark")
    build.add_argument("--root", default="data", help="data root (default: data/)")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--train", type=int, default=SPLITS["train"])
    build.add_argument("--validation", type=int, default=SPLITS["validation"])
    build.add_argument("--test", type=int, default=SPLITS["test"])
    build.add_argument("--speech-source", choices=SPEECH_SOURCES, default="auto",
                       help="auto: a local Mini LibriSpeech copy when given, else synthetic")
    build.add_argument("--librispeech-root", default=None,
                       help="folder holding LibriSpeech/train-clean-5 and dev-clean-2")
    build.set_defaults(run=_cmd_build)

    maestro = data_sub.add_parser("maestro", help="MAESTRO Real soft labels → hard reference "
                                  "(soft > 0.5), durations and soft-label tsv files")
    source = maestro.add_mutually_exclusive_group(required=True)
    source.add_argument("--root", default=None, help="the extracted development set "
                        "(development_annotation/, development_audio/)")
    source.add_argument("--soft", default=None, help="a soft-label tsv instead (filename onset "
                        "offset event_label confidence)")
    maestro.add_argument("--classes", choices=("evaluated", "all"), default="evaluated",
                         help="the 11 classes DCASE evaluates (default) or all 17")
    maestro.add_argument("--durations", default=None,
                         help="file durations (tsv) for files whose audio is not there")
    maestro.add_argument("--out", required=True, help="output folder")
    maestro.set_defaults(run=_cmd_maestro)

    demo = sub.add_parser("demo", help="audit the shipped example (the README's main job)")
    _policy_options(demo)
    _monitor_options(demo)
    demo.set_defaults(run=_cmd_demo)
    return parser


def _monitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default="runs",
                        help="monitor on run-length traces (default; cost follows the events) "
                             "or on frame arrays (the reference); the counts are the same")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes sharing the clips (run-length backend); the report is "
                             "the same for any number")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except SedContractError as exc:
        print(f"sedcontract: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable/unwritable paths named by the user
        print(f"sedcontract: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # every file is written atomically: nothing is half-written
        print("sedcontract: interrupted; files already completed are kept, none is "
              "half-written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
