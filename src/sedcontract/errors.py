"""Exceptions a user can act on: every one names where the problem is (file, row, line, column)."""

from __future__ import annotations

import re
from typing import Any

LONGEST = 300  # characters of one name (a clip id, a path, a value) a message shows whole
_LONG = re.compile(rf"\S{{{LONGEST + 1},}}")


def shortened(text: str) -> str:
    """``text`` with every run of non-space characters longer than :data:`LONGEST` cut in its
    middle, saying how long it was: a 100,000-character clip id is named, not printed."""
    return _LONG.sub(lambda m: f"{m[0][:200]}…[{len(m[0]):,} characters]…{m[0][-60:]}", text)


class SedContractError(ValueError):
    """Base class for every error sedcontract raises on bad input: a ``ValueError``, so a
    caller catching the standard exception for a bad argument value catches these too. Its
    text shows long names :func:`shortened`."""

    def __str__(self) -> str:
        return shortened(super().__str__())


def of_kind(name: str, value: Any, kind: type | tuple[type, ...], *,
            optional: bool = False) -> Any:
    """``value`` when it is a ``kind`` (or None, ``optional``), else an error naming ``name``:
    a wrong object is refused where it is given, not met later as a missing attribute."""
    if (optional and value is None) or isinstance(value, kind):
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    wanted = " or ".join(k.__name__ for k in kinds) + (" or None" if optional else "")
    article = "an" if wanted[0] in "AEIOU" else "a"
    raise SedContractError(f"{name} must be {article} {wanted}, got {type(value).__name__}")


class ProtocolError(SedContractError):
    """A step of the held-out protocol is refused (a late choice, a missing lock, a run that
    did not finish); scripts end with it as ``sys.exit(message)`` did: the message, status 1."""

    status = 1


class TraceFormatError(SedContractError):
    """A trace file (tsv) or event list is malformed; names the file, row and column."""

    def __init__(self, message: str, *, path: str | None = None, row: int | None = None,
                 column: str | None = None) -> None:
        self.message, self.path, self.row, self.column = message, path, row, column
        where = []
        if path is not None:
            where.append(str(path))
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class SignalError(SedContractError):
    """Signals handed to the monitor are inconsistent (shape, dtype, missing atoms)."""


class ContractError(SedContractError):
    """A contract problem at a known position of its source text; renders a caret line."""

    kind = "contract error"

    def __init__(self, message: str, *, source: str | None = None, offset: int | None = None,
                 name: str = "<contract>") -> None:
        self.message, self.source, self.offset, self.name = message, source, offset, name
        self.line = self.column = None
        if source is not None and offset is not None:
            offset = max(0, min(offset, len(source)))
            self.line = source.count("\n", 0, offset) + 1
            start = source.rfind("\n", 0, offset) + 1
            self.column = offset - start + 1
        super().__init__(self._render())

    def _render(self) -> str:
        if self.line is None or self.source is None:
            return f"{self.kind}: {self.message}"
        start = self.source.rfind("\n", 0, self.offset) + 1
        end = self.source.find("\n", start)
        text = self.source[start:] if end < 0 else self.source[start:end]
        text, column = _excerpt(text.removesuffix("\r"), self.column - 1)
        # the caret line repeats the tabs of the source line so the caret lands under the column
        caret = "".join(c if c == "\t" else " " for c in text[:column]) + "^"
        return (f"{self.name}:{self.line}:{self.column}: {self.kind}: {self.message}\n"
                f"    {text}\n    {caret}")


def _excerpt(text: str, column: int, before: int = 60, after: int = 40) -> tuple[str, int]:
    """A long source line cut around ``column`` (0-based) with ``…`` marks, and the column's
    place in the excerpt."""
    if len(text) <= before + after:
        return text, column
    first = max(0, column - before)
    last = min(len(text), column + after)
    head, tail = ("…" if first > 0 else ""), ("…" if last < len(text) else "")
    return head + text[first:last] + tail, column - first + len(head)


class ContractSyntaxError(ContractError):
    """The contract text does not parse."""

    kind = "syntax error"


class ContractCheckError(ContractError):
    """The contract parses but cannot run: unknown atom or class, bad bound, bad clause."""

    kind = "check error"
