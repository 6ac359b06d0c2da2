"""``sedcontract merge``: the corpus's report from the JSON reports of all its shards."""

from __future__ import annotations

import argparse

from sedcontract.audit.shards import merge_shards
from sedcontract.cli.audit import RENDER, SYSTEM_FORMATS
from sedcontract.cli.command import Command, emit, given
from sedcontract.outputs import Outputs


def _run(args: argparse.Namespace, out: Outputs) -> int:
    report = merge_shards(args.shards)
    render = RENDER[args.format]
    return emit(out, args.out, render(report, args.system) if args.format in SYSTEM_FORMATS
                else render(report))


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", help="shard reports (audit --shard I/N --format "
                        "json), any order")
    parser.add_argument("--format", choices=tuple(RENDER), default="json")
    parser.add_argument("--out", default=None, help="output file (default: standard output)")
    parser.add_argument("--system", default="system",
                        help="the system's name in source rows (--format csv)")


COMMANDS = [Command("merge", "join the JSON reports of all shards of an audit into the "
                    "corpus's report (the bytes of one unsharded run)", _options, _run,
                    lambda a: {"shards": a.shards}, lambda a: {"--out": given(a.out)})]
