"""What a command is: its options, the paths it reads and writes (declared once, where the
command is defined), and how it runs. :func:`execute` guards the declared paths before any work
and puts every output in place only when the command succeeded."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sedcontract.contracts import contract_file
from sedcontract.errors import SedContractError, shortened
from sedcontract.outputs import Named, Outputs

Paths = Callable[[argparse.Namespace], Named]


def nothing(args: argparse.Namespace) -> Named:
    return {}


@dataclass(frozen=True)
class Command:
    """One command: ``options`` adds its arguments, ``run`` does the work and writes only
    through the :class:`Outputs` it is given; ``reads``, ``writes``, ``folders`` (folders it
    replaces as a whole) and ``creates`` (folders its outputs may be made in) name the paths, by
    option, from the parsed arguments."""

    name: str
    help: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Outputs], int]
    reads: Paths = nothing
    writes: Paths = nothing
    folders: Paths = nothing
    creates: Callable[[argparse.Namespace], list[str | Path]] = lambda args: []

    def add_to(self, sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
        parser = sub.add_parser(self.name, help=self.help, description=self.help)
        self.options(parser)
        parser.set_defaults(command=self)
        return parser


def execute(command: Command, args: argparse.Namespace) -> int:
    """Run ``command``: refuse unsafe outputs first, then commit its outputs on success (each
    named on standard error) and discard them on any failure."""
    outputs = Outputs(reads=command.reads(args), writes=command.writes(args),
                      folders=command.folders(args), creates=command.creates(args))
    try:
        status = command.run(args, outputs)
    except BaseException:
        outputs.discard()
        raise
    for path in outputs.commit():
        print(f"wrote {path}", file=sys.stderr)
    return status


def reported(prog: str, run: Callable[..., int], *args: Any) -> int:
    """``run(*args)``'s status; a user mistake (bad input, a path that cannot be read or
    written, an argparse error) ends with one line, ``prog: message``, and status 2 instead of
    a traceback, an interrupt with 130. The CLI and every script in ``scripts/`` end this
    way."""
    try:
        return run(*args)
    except SystemExit as exc:  # argparse printed its usage and error (or the help)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(f"{prog}: {exc.code}", file=sys.stderr)  # sys.exit("why"): said, status 1
        return 1
    except (SedContractError, OSError) as exc:  # OSError: a path the user named
        print(f"{prog}: {shortened(str(exc))}", file=sys.stderr)
        return getattr(exc, "status", 2)
    except KeyboardInterrupt:  # outputs are put in place only on success
        print(f"{prog}: interrupted; no output was changed", file=sys.stderr)
        return 130


def contract_read(args: argparse.Namespace) -> list[Path]:
    """The contract file the ``--contract`` option reads (none for a shipped name)."""
    path = contract_file(args.policy_contract)
    return [] if path is None else [path]


def emit(out: Outputs, path: str | Path | None, text: str) -> int:
    """A command's text to ``path`` (through ``out``), else to standard output; status 0."""
    if path is None:
        sys.stdout.write(text)
    else:
        out.write(path, text)
    return 0


def given(*paths: str | Path | None) -> list[str | Path]:
    return [p for p in paths if p is not None]


def each(paths: Iterable[str | Path] | None) -> list[str | Path]:
    return list(paths or [])
