"""Command line: ``sedcontract audit | scores | merge | select | sweep | show | report | tune |
certify | check | data | demo``, one module per command group.

Each command declares the paths it reads and writes (:class:`~sedcontract.cli.command.Command`);
one guard refuses unsafe outputs before any work, and outputs are put in place only when the
command succeeded. User mistakes (bad files, bad contracts, bad options) print one clear message
and exit with status 2; nothing is half-written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sedcontract import __version__
from sedcontract.cli import analysis, audit, certify, check, data, merge, tune
from sedcontract.cli.audit import EXAMPLES
from sedcontract.cli.command import execute, reported

__all__ = ["EXAMPLES", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sedcontract", description="Executable boundary contracts for sound event "
        "detection: guard vectors, standard scores and contract checks.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="name", required=True)
    for module in (audit, merge, analysis, tune, certify, check):
        for command in module.COMMANDS:
            command.add_to(sub)
    group = sub.add_parser("data", help="data sets: the controlled benchmark, pathology sets, "
                           "MAESTRO Real")
    data_sub = group.add_subparsers(dest="data_command", required=True)
    for command in data.COMMANDS:
        command.add_to(data_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return reported("sedcontract", _run, argv)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # a bare `sedcontract`: what it does
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    return execute(args.command, args)


if __name__ == "__main__":
    sys.exit(main())
