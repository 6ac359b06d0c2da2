"""Pretty-printer: syntax tree → canonical text, with the fewest parentheses that parse back
to the same tree (``parse ∘ print = identity``)."""

from __future__ import annotations

import re

from sedcontract.contracts.lexer import quote
from sedcontract.contracts.syntax import (
    And,
    Atom,
    Const,
    Contract,
    Formula,
    FrameClause,
    Implies,
    Let,
    Not,
    Or,
    Temporal,
    Until,
)

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# binding strength: larger binds tighter
_IMPLIES, _OR, _AND, _UNTIL, _UNARY, _ATOM = range(1, 7)


def _precedence(node: Formula) -> int:
    return {Implies: _IMPLIES, Or: _OR, And: _AND, Until: _UNTIL, Not: _UNARY,
            Temporal: _UNARY}.get(type(node), _ATOM)


def format_formula(node: Formula) -> str:
    """Canonical text of a formula."""
    return _format(node, 0)


def _format(node: Formula, context: int) -> str:
    if isinstance(node, Atom):
        text = f"{node.side}.{node.kind}"
        if node.cls is not None:
            text += f"[{node.cls if _BARE.match(node.cls) else quote(node.cls)}]"
    elif isinstance(node, Const):
        text = "true" if node.value else "false"
    elif isinstance(node, Not):
        text = "!" + _format(node.arg, _UNARY)
    elif isinstance(node, Temporal):
        text = f"{node.op}{node.window} " + _format(node.arg, _UNARY)
    elif isinstance(node, Implies):
        text = f"{_format(node.left, _IMPLIES + 1)} -> {_format(node.right, _IMPLIES)}"
    elif isinstance(node, Or):
        text = f"{_format(node.left, _OR)} | {_format(node.right, _OR + 1)}"
    elif isinstance(node, And):
        text = f"{_format(node.left, _AND)} & {_format(node.right, _AND + 1)}"
    elif isinstance(node, Until):
        text = f"{_format(node.left, _UNTIL + 1)} U{node.window} {_format(node.right, _UNTIL)}"
    else:
        raise TypeError(f"not a formula node: {node!r}")
    return f"({text})" if _precedence(node) < context else text


def format_contract(contract: Contract) -> str:
    """Canonical text of a contract, one statement per line."""
    lines = []
    for statement in contract.statements:
        if isinstance(statement, Let):
            lines.append(f"let {statement.name} = {statement.value}")
        elif isinstance(statement, FrameClause):
            lines.append(f"clause {statement.name}: on {format_formula(statement.obligation)} "
                         f"require {format_formula(statement.requirement)}")
        else:
            raise TypeError(f"not a statement: {statement!r}")
    return "\n".join(lines) + ("\n" if lines else "")
