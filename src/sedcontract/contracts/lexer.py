"""Tokenizer for contract text: identifiers, bounds with units, strings, punctuation."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sedcontract.contracts.syntax import UNITS
from sedcontract.errors import ContractSyntaxError

KEYWORDS = frozenset({
    "let", "clause", "on", "require", "true", "false", "ref", "pred",
    "diagnostic", "each", "match", "when", "using", "where", "pair", "overlapping",
})

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+|\#[^\n]*)
  | (?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>[A-Za-z_][A-Za-z0-9_]*)?
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>->|<=|>=|==|!=|[!&|()\[\]:.=,~<>+\-*/])
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    """One token; ``kind`` is ``number``, ``ident``, ``keyword``, ``string``, a punctuation
    string, or ``eof``."""

    kind: str
    text: str
    start: int
    end: int
    unit: str | None = None


def tokenize(source: str, name: str = "<contract>") -> list[Token]:
    """Split ``source`` into tokens, ending with an ``eof`` token."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            char = source[pos]
            hint = " (strings are closed on the same line)" if char == '"' else ""
            raise ContractSyntaxError(f"unexpected character {char!r}{hint}", source=source,
                                      offset=pos, name=name)
        kind = m.lastgroup
        if kind == "unit":
            kind = "number"
        text = m.group(0)
        if kind == "number":
            unit = m.group("unit")
            if unit is not None and unit not in UNITS:
                raise ContractSyntaxError(
                    f"unknown unit {unit!r} in {text!r}; write a whole number of frames or a "
                    f"time in {' or '.join(UNITS)}", source=source, offset=m.start("unit"),
                    name=name)
            tokens.append(Token("number", m.group("number"), m.start(), m.end(), unit))
        elif kind == "ident":
            tokens.append(Token("keyword" if text in KEYWORDS else "ident", text, m.start(),
                                m.end()))
        elif kind == "string":
            tokens.append(Token("string", text, m.start(), m.end()))
        elif kind == "punct":
            tokens.append(Token(text, text, m.start(), m.end()))
        pos = m.end()
    tokens.append(Token("eof", "", len(source), len(source)))
    return tokens


def unquote(text: str) -> str:
    """Value of a string token (inverse of ``traces.names.quote``)."""
    return re.sub(r"\\(.)", r"\1", text[1:-1])
