"""``sedcontract merge``: the corpus's report from the JSON reports of all its shards."""

from __future__ import annotations

import argparse

from sedcontract.analysis.audited import FORMATS, Audited
from sedcontract.cli.audit import write_curve_files
from sedcontract.cli.command import Command, emit, given
from sedcontract.errors import SedContractError
from sedcontract.guard.shards import merge_shard_files
from sedcontract.outputs import Outputs


def _run(args: argparse.Namespace, out: Outputs) -> int:
    report, curves = merge_shard_files(args.shards)
    if curves is None and (args.curves_figure or args.curves_decision):
        raise SedContractError("--curves-figure and --curves-decision read the shards' curves: "
                               "audit them with --curves")
    summary = None
    if curves is not None:
        from sedcontract.analysis.curve_summaries import curve_summary

        summary = curve_summary(curves["curves"], curves["hours"], **curves["settings"])
        if args.curves_decision and "targets" not in summary:
            raise SedContractError("--curves-decision writes the thresholds that meet the "
                                   "targets the shards were audited with (--curves-targets): "
                                   "they had none")
        write_curve_files(out, summary, args.curves_figure, args.curves_decision)
    merged = Audited(report, report.psds, curves=summary, system=args.system)
    return emit(out, args.out, merged.render(args.format))


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", help="shard reports (audit --shard I/N --format "
                        "json), any order")
    parser.add_argument("--format", choices=FORMATS["audit"], default="json")
    parser.add_argument("--out", default=None, help="output file (default: standard output)")
    parser.add_argument("--system", default="system",
                        help="the system's name in source rows (--format csv)")
    parser.add_argument("--curves-figure", default=None, metavar="PNG",
                        help="shards audited with --curves: draw the joined curves")
    parser.add_argument("--curves-decision", default=None, metavar="FILE",
                        help="shards audited with --curves-targets: write the decision file of "
                             "the joined curves")


COMMANDS = [Command("merge", "join the JSON reports of all shards of an audit into the "
                    "corpus's report (the bytes of one unsharded run)", _options, _run,
                    lambda a: {"shards": a.shards},
                    lambda a: {"--out": given(a.out), "--curves-figure": given(a.curves_figure),
                               "--curves-decision": given(a.curves_decision)})]
