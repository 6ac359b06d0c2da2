"""Pretty-printer: syntax tree → canonical text, with the fewest parentheses that parse back
to the same tree (``parse ∘ print = identity``)."""

from __future__ import annotations

from sedcontract.contracts.syntax import (
    COMPARISONS,
    And,
    Atom,
    Binary,
    BoolLit,
    Call,
    ClassName,
    Const,
    Contract,
    Count,
    EventClause,
    Expr,
    Flag,
    Formula,
    FrameClause,
    Implies,
    Let,
    Match,
    Negation,
    Not,
    Number,
    Or,
    Temporal,
    Time,
    Until,
    Var,
)
from sedcontract.traces.names import quote

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
        text = node.name
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


# event expressions: binding strength, larger binds tighter
_E_LEVEL = {"->": 1, "|": 2, "&": 3, **dict.fromkeys(COMPARISONS, 5), "+": 6, "-": 6, "*": 7,
            "/": 7}
_E_NOT, _E_TERM = 4, 8


def format_expr(node: Expr) -> str:
    """Canonical text of an event-sort expression."""
    return _format_expr(node, 0)


def _format_expr(node: Expr, context: int) -> str:
    level = _E_TERM
    if isinstance(node, Var):
        text = node.name
    elif isinstance(node, Number):
        text = node.text
    elif isinstance(node, Time):
        text = str(node.bound)
    elif isinstance(node, ClassName):
        text = quote(node.value)
    elif isinstance(node, Flag):
        text = node.name
    elif isinstance(node, BoolLit):
        text = "true" if node.value else "false"
    elif isinstance(node, Call):
        text = f"{node.fn}(" + ", ".join(_format_expr(a, 0) for a in node.args) + ")"
    elif isinstance(node, Count):
        text = f"count({node.counted} overlapping {node.around})"
    elif isinstance(node, Negation):
        level = _E_NOT
        text = "!" + _format_expr(node.arg, _E_NOT)
    elif isinstance(node, Binary):
        level = _E_LEVEL[node.op]
        if node.op == "->":        # right-associative
            sides = (level + 1, level)
        elif node.op in COMPARISONS:  # non-associative
            sides = (level + 1, level + 1)
        else:                      # left-associative
            sides = (level, level + 1)
        text = (f"{_format_expr(node.left, sides[0])} {node.op} "
                f"{_format_expr(node.right, sides[1])}")
    else:
        raise TypeError(f"not an expression node: {node!r}")
    return f"({text})" if level < context else text


def format_statement(statement) -> str:
    """Canonical one-line text of a statement."""
    if isinstance(statement, Let):
        return f"let {statement.name} = {statement.value}"
    if isinstance(statement, Match):
        return (f"match {statement.name}: ref ~ pred when {format_expr(statement.relation)} "
                f"using {statement.method}")
    if isinstance(statement, FrameClause | EventClause):
        head = f"{'diagnostic' if statement.diagnostic else 'clause'} {statement.name}:"
        if isinstance(statement, FrameClause):
            return (f"{head} on {format_formula(statement.obligation)} "
                    f"require {format_formula(statement.requirement)}")
        each = f"pair({statement.match})" if statement.each == "pair" else statement.each
        where = "" if statement.where is None else f" where {format_expr(statement.where)}"
        return f"{head} each {each}{where} require {format_expr(statement.requirement)}"
    raise TypeError(f"not a statement: {statement!r}")


def format_contract(contract: Contract) -> str:
    """Canonical text of a contract, one statement per line."""
    lines = [format_statement(s) for s in contract.statements]
    return "\n".join(lines) + ("\n" if lines else "")
