"""``sedcontract select``, ``sweep``, ``show`` and ``report``: the audit protocol — the
smallest separating contract, the vector against the tolerance, one clip's timeline, and the
report regenerated from source rows. Each command turns its options into one request (its
checks made before any file is read), calls one library function, and writes what it
returns."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from sedcontract.cli import options
from sedcontract.cli.command import Command, contract_read, emit, given
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, audit
from sedcontract.outputs import Named, Outputs
from sedcontract.traces import MODES, read_events
from sedcontract.traces.tsv import regular_file

CALIBRATION = ("ref", "pred", "durations", "labels")  # the files of a pathology set
REPORT_MARK = ".sedcontract-report"  # a report folder's mark: only such folders are replaced


@dataclass(frozen=True)
class SelectRequest:
    """``select``: a calibration folder, a risk order, the search's mode and coordinates, the
    policy and the two outputs."""

    calibration: dict[str, Path]
    risk_order: str
    policy: AuditPolicy
    mode: str
    coordinates: list[str] | None
    out: str
    table: str | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> SelectRequest:
        folder = Path(args.calibration)
        return cls({name: folder / f"{name}.tsv" for name in CALIBRATION}, args.risk_order,
                   options.policy(args), args.mode, _names(args.coordinates), args.out,
                   args.table)

    def reads(self, contract: list[Path]) -> Named:
        return {"--calibration": list(self.calibration.values()),
                "--risk-order": self.risk_order, "--contract": contract}


def _names(text: str | None) -> list[str] | None:
    """A comma-separated list of names (None when not given)."""
    return [c.strip() for c in text.split(",")] if text else None


def _run_select(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.selection import (
        known_kinds,
        read_labels,
        read_risk_order,
        select,
        selected_contract,
        selection_markdown,
    )
    from sedcontract.data import PATHOLOGIES

    request = SelectRequest.of(args)
    files = request.calibration
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise SedContractError(f"the calibration folder lacks {', '.join(missing)} (sedcontract "
                               "data pathologies writes all four)")
    ref = read_events(files["ref"])
    report = audit(ref, files["pred"], request.policy, durations=files["durations"],
                   mode=request.mode)
    labels = read_labels(files["labels"], ref.clips)
    risk = read_risk_order(request.risk_order, known_kinds(PATHOLOGIES, report, request.mode))
    selection = select(report, labels, risk, mode=request.mode,
                       coordinates=request.coordinates)
    table = selection_markdown(selection)
    if not selection.chosen:
        raise SedContractError("no coordinate flags any high-risk case without flagging a "
                               "low-risk one: nothing to write\n" + table)
    sys.stdout.write(table)
    out.write(request.out, selected_contract(request.policy.parsed, selection))
    if request.table:
        out.write(request.table, table)
    return 0


def _select_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibration", required=True, help="a folder written by sedcontract "
                        "data pathologies (ref.tsv, pred.tsv, durations.tsv, labels.tsv)")
    parser.add_argument("--risk-order", required=True, help="YAML: order (most harmful first) "
                        "and high (how many, or which, are high risk)")
    parser.add_argument("--out", required=True, help="the selected contract file to write")
    parser.add_argument("--table", default=None, help="also write the Markdown table here")
    parser.add_argument("--mode", choices=MODES, default="typed")
    parser.add_argument("--coordinates", default=None,
                        help="comma-separated coordinates to search among (default: every "
                             "clause of the contract)")
    options.add_options(parser, AuditPolicy)


def _select_reads(args: argparse.Namespace) -> Named:
    return SelectRequest.of(args).reads(contract_read(args))


@dataclass(frozen=True)
class SweepRequest:
    """``sweep``: the reference, the systems by name, the radii (parsed), the policy, the
    intervals asked for, and the outputs."""

    ref: str
    systems: dict[str, str]
    radii: list[str]
    policy: AuditPolicy
    durations: str | None
    mode: str
    resamples: int
    seed: int
    level: float
    baseline: str | None
    out: str | None
    csv: str | None
    figure: str | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> SweepRequest:
        from sedcontract.analysis.sweep import parse_radii

        systems: dict[str, str] = {}  # --pred FILE or NAME=FILE, each name once
        for text in args.pred:
            name, _, path = text.rpartition("=") if "=" in text else ("", "", text)
            name = name or Path(path).stem
            if name in systems:
                raise SedContractError(f"two systems named {name!r}: give NAME=FILE")
            systems[name] = path
        return cls(args.ref, systems, parse_radii(args.radii), options.policy(args),
                   args.durations, args.mode, args.bootstrap or (2000 if args.baseline else 0),
                   args.bootstrap_seed, args.level, args.baseline, args.out, args.csv,
                   args.figure)

    def reads(self, contract: list[Path]) -> Named:
        return {"--ref": self.ref, "--pred": list(self.systems.values()),
                "--durations": self.durations, "--contract": contract}

    def writes(self) -> Named:
        return {"--out": given(self.out), "--csv": given(self.csv),
                "--figure": given(self.figure)}


def _run_sweep(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.sweep import sweep, sweep_csv, sweep_markdown, sweep_png

    request = SweepRequest.of(args)
    result = sweep(read_events(request.ref),
                   {name: read_events(path) for name, path in request.systems.items()},
                   request.policy, request.radii, durations=request.durations,
                   mode=request.mode, resamples=request.resamples, seed=request.seed,
                   level=request.level, baseline=request.baseline)
    emit(out, request.out, sweep_markdown(result))
    if request.csv:
        out.write(request.csv, sweep_csv(result))
    if request.figure:
        out.write(request.figure, sweep_png(result))
    return 0


def _sweep_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", action="append", required=True,
                        help="a system's events, FILE or NAME=FILE; repeat for several systems")
    parser.add_argument("--durations", default=None, help="clip durations (tsv)")
    parser.add_argument("--eps", dest="radii", required=True,
                        help="radii, e.g. 0,20ms,40ms,...,500ms ('...' continues the step)")
    parser.add_argument("--mode", choices=MODES, default="typed")
    parser.add_argument("--out", default=None, help="Markdown tables (default: standard output)")
    parser.add_argument("--csv", default=None, help="source rows: system, eps, coordinate, "
                        "counts")
    parser.add_argument("--figure", default=None, help="PNG: a panel per coordinate")
    options.add_bootstrap_options(parser, default=0, what="every score and logic at every "
                                  "radius (tables and figure bands)")
    parser.add_argument("--baseline", default=None, metavar="NAME",
                        help="a system of --pred: add every other system's paired difference "
                             "from it at each radius, with its paired bootstrap interval "
                             "(--bootstrap N resamples, default 2000)")
    options.add_options(parser, AuditPolicy, without=("eps",))


def _sweep_reads(args: argparse.Namespace) -> Named:
    return SweepRequest.of(args).reads(contract_read(args))


@dataclass(frozen=True)
class ShowRequest:
    """``show``: the inputs, the clip, the policy, the mode, the coordinates to draw and the
    figure's path."""

    ref: str
    pred: str
    durations: str | None
    clip: str
    policy: AuditPolicy
    mode: str
    coordinates: list[str] | None
    out: str | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> ShowRequest:
        return cls(args.ref, args.pred, args.durations, args.clip, options.policy(args),
                   args.mode, _names(args.coordinates), args.out)


def _run_show(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.timeline import timeline, timeline_png, timeline_text

    request = ShowRequest.of(args)
    names = request.coordinates
    tl = timeline(request.ref, request.pred, request.policy, request.clip,
                  durations=request.durations, mode=request.mode)
    unknown = [n for n in names or [] if n not in tl.outcomes]
    if unknown:
        raise SedContractError(f"unknown coordinate {unknown[0]!r}; the contract's are "
                               f"{', '.join(tl.outcomes)}")
    sys.stdout.write(timeline_text(tl, names))
    if request.out:
        out.write(request.out, timeline_png(tl, names))
    return 0


def _show_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ref", required=True, help="reference events (DCASE tsv)")
    parser.add_argument("--pred", required=True, help="predicted events (DCASE tsv)")
    parser.add_argument("--durations", default=None, help="clip durations (tsv)")
    parser.add_argument("--clip", required=True, help="the clip id (filename without extension)")
    parser.add_argument("--mode", choices=MODES, default="typed")
    parser.add_argument("--coordinates", default=None,
                        help="comma-separated coordinates to show (default: all clauses)")
    parser.add_argument("--out", default=None, help="write the timeline as a PNG here")
    options.add_options(parser, AuditPolicy)


def _show_reads(args: argparse.Namespace) -> Named:
    return {"--ref": args.ref, "--pred": args.pred, "--durations": args.durations,
            "--contract": contract_read(args)}


@dataclass(frozen=True)
class ReportRequest:
    """``report``: the rows files or run folders (read for their ``*_report.csv``), the clip
    groups, the sweep rows, the timeline images, the intervals asked for and the folder."""

    sources: list[str]  # rows files or run folders, as given
    groups: str | None
    sweep: str | None
    timelines: dict[str, list[Path]]
    several_policies: bool
    resamples: int
    seed: int
    level: float
    baseline: str | None
    out: str
    title: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> ReportRequest:
        timelines = {}  # the PNG files of each --timelines folder
        for folder in args.timelines or []:
            images = sorted(Path(folder).rglob("*.png"))
            if not images:
                raise SedContractError(f"{folder}: no timeline images (*.png) here")
            timelines[folder] = images
        if args.title is not None and not args.title.strip():
            raise SedContractError("--title is empty: name the data the systems ran on")
        return cls(list(args.rows), args.groups, args.sweep, timelines, args.several_policies,
                   args.bootstrap, args.bootstrap_seed, args.level, args.baseline, args.out,
                   args.title)

    def reads(self) -> Named:
        rows = [p for source in self.sources for p in
                (sorted(Path(source).rglob("*_report.csv")) if Path(source).is_dir()
                 else [source])]
        return {"rows": rows, "--groups": self.groups, "--sweep": self.sweep,
                "--timelines": [p for images in self.timelines.values() for p in images]}


def _run_report(args: argparse.Namespace, out: Outputs) -> int:
    from sedcontract.analysis.report import read_groups, read_rows, report_files
    from sedcontract.analysis.sweep import read_sweep

    request = ReportRequest.of(args)
    rows = read_rows(request.sources, several_policies=request.several_policies)
    groups = read_groups(request.groups) if request.groups else None
    timelines = [(str(p.relative_to(folder)), regular_file(p).read_bytes())
                 for folder, images in request.timelines.items() for p in images]
    files = report_files(rows, groups, sweep=read_sweep(request.sweep) if request.sweep
                         else None, timelines=timelines, resamples=request.resamples,
                         seed=request.seed, level=request.level, baseline=request.baseline,
                         title=request.title)
    out.folder(request.out, {REPORT_MARK: "written by sedcontract report; replaced by it\n",
                             **files})
    print(f"{len(files)} files: open {Path(request.out) / 'report.html'}", file=sys.stderr)
    return 0


def _report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rows", nargs="+", help="rows files (CSV; Parquet with pyarrow) or run "
                        "folders holding *_report.csv")
    parser.add_argument("--out", required=True, help="the report folder (new, empty, or an "
                        "earlier report's, which is replaced whole)")
    parser.add_argument("--groups", default=None, help="clip groups: labels.tsv of a pathology "
                        "set, or any tsv filename<TAB>group with a header")
    parser.add_argument("--sweep", default=None, help="sweep rows (sedcontract sweep --csv): "
                        "its tables and figure join the report")
    parser.add_argument("--timelines", action="append", default=None,
                        help="a folder of timeline images (*.png) to embed; repeatable")
    parser.add_argument("--several-policies", action="store_true",
                        help="compare rows of several policies (else refused)")
    options.add_bootstrap_options(parser, default=1000, what="every cell of the overview (0: "
                                  "scores without intervals)")
    parser.add_argument("--baseline", default=None, metavar="SYSTEM",
                        help="add every other system minus SYSTEM per coordinate and logic, "
                             "typed and union, and the standard scores' micro and macro F1, "
                             "with paired bootstrap intervals (the systems must be of the "
                             "same clips)")
    parser.add_argument("--title", default=None, metavar="TEXT",
                        help="the page's title: the data the systems ran on, e.g. 'DESED "
                             "validation' (default: the systems, clips and classes alone)")


def _report_reads(args: argparse.Namespace) -> Named:
    return ReportRequest.of(args).reads()


def _report_folder(args: argparse.Namespace) -> Named:
    """The report folder, refused unless it is new, empty or an earlier report's."""
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and
                                              not (out / REPORT_MARK).exists())):
        raise SedContractError(f"{out} exists and is not a report folder written by sedcontract "
                               "report: choose a new or empty folder")
    return {"--out": args.out}


COMMANDS = [
    Command("select", "the smallest contract that flags every high-risk case of a calibration "
            "set and no low-risk one, under a risk order", _select_options, _run_select,
            _select_reads, lambda a: {"--out": a.out, "--table": given(a.table)}),
    Command("sweep", "guard vectors of one or several systems against the tolerance radius eps "
            "(table, source rows, figure)", _sweep_options, _run_sweep, _sweep_reads,
            lambda a: SweepRequest.of(a).writes()),
    Command("show", "one clip's failure timeline: where each coordinate was obliged and where "
            "it failed (text; a PNG with --out)", _show_options, _run_show, _show_reads,
            lambda a: {"--out": given(a.out)}),
    Command("report", "regenerate report.html (an overview of every system's vector with "
            "bootstrap intervals over clips, the figures, every table) and the tables as "
            "Markdown and CSV from source rows (audit --format csv, or run folders)",
            _report_options, _run_report,
            _report_reads, folders=_report_folder),
]
