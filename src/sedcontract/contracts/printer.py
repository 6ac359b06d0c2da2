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
    children,
    expr_children,
    postorder,
)
from sedcontract.traces.names import quote

# binding strength: larger binds tighter
_IMPLIES, _OR, _AND, _UNTIL, _UNARY, _ATOM = range(1, 7)


def _precedence(node: Formula) -> int:
    return {Implies: _IMPLIES, Or: _OR, And: _AND, Until: _UNTIL, Not: _UNARY,
            Temporal: _UNARY}.get(type(node), _ATOM)


Rope = list  # text pieces: strings and nested ropes, flattened once at the end


def _flatten(rope: Rope) -> str:
    """The text of a rope, iteratively (a deep formula nests ropes deeply)."""
    out: list[str] = []
    stack: list[Rope | str] = [rope]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        else:
            stack.extend(reversed(item))
    return "".join(out)


def _render(root, children_of, piece) -> str:
    """Text of a tree: ``piece(node, parts)`` gives a node's precedence level and rope from its
    children's ``(level, rope)``; a child is parenthesised by the caller of :func:`_wrap`."""
    parts: dict[int, tuple[int, Rope]] = {}
    for node in postorder(root, children_of):
        parts[id(node)] = piece(node, [parts[id(c)] for c in children_of(node)])
    return _flatten(parts[id(root)][1])


def _wrap(part: tuple[int, Rope], context: int) -> Rope:
    level, rope = part
    return ["(", rope, ")"] if level < context else rope


def format_formula(node: Formula) -> str:
    """Canonical text of a formula."""
    return _render(node, children, _formula_piece)


def _formula_piece(node: Formula, args: list[tuple[int, Rope]]) -> tuple[int, Rope]:
    if isinstance(node, Atom):
        rope: Rope = [node.name]
    elif isinstance(node, Const):
        rope = ["true" if node.value else "false"]
    elif isinstance(node, Not):
        rope = ["!", _wrap(args[0], _UNARY)]
    elif isinstance(node, Temporal):
        rope = [f"{node.op}{node.window} ", _wrap(args[0], _UNARY)]
    elif isinstance(node, Implies):
        rope = [_wrap(args[0], _IMPLIES + 1), " -> ", _wrap(args[1], _IMPLIES)]
    elif isinstance(node, Or):
        rope = [_wrap(args[0], _OR), " | ", _wrap(args[1], _OR + 1)]
    elif isinstance(node, And):
        rope = [_wrap(args[0], _AND), " & ", _wrap(args[1], _AND + 1)]
    elif isinstance(node, Until):
        rope = [_wrap(args[0], _UNTIL + 1), f" U{node.window} ", _wrap(args[1], _UNTIL)]
    else:
        raise TypeError(f"not a formula node: {node!r}")
    return _precedence(node), rope


# event expressions: binding strength, larger binds tighter
_E_LEVEL = {"->": 1, "|": 2, "&": 3, **dict.fromkeys(COMPARISONS, 5), "+": 6, "-": 6, "*": 7,
            "/": 7}
_E_NOT, _E_TERM = 4, 8


def format_expr(node: Expr) -> str:
    """Canonical text of an event-sort expression."""
    return _render(node, expr_children, _expr_piece)


def _expr_piece(node: Expr, args: list[tuple[int, Rope]]) -> tuple[int, Rope]:
    level = _E_TERM
    if isinstance(node, Var):
        rope: Rope = [node.name]
    elif isinstance(node, Number):
        rope = [node.text]
    elif isinstance(node, Time):
        rope = [str(node.bound)]
    elif isinstance(node, ClassName):
        rope = [quote(node.value)]
    elif isinstance(node, Flag):
        rope = [node.name]
    elif isinstance(node, BoolLit):
        rope = ["true" if node.value else "false"]
    elif isinstance(node, Call):
        rope = [f"{node.fn}("]
        for i, arg in enumerate(args):
            rope += [", "] * (i > 0) + [_wrap(arg, 0)]
        rope.append(")")
    elif isinstance(node, Count):
        rope = [f"count({node.counted} overlapping {node.around})"]
    elif isinstance(node, Negation):
        level = _E_NOT
        rope = ["!", _wrap(args[0], _E_NOT)]
    elif isinstance(node, Binary):
        level = _E_LEVEL[node.op]
        if node.op == "->":        # right-associative
            sides = (level + 1, level)
        elif node.op in COMPARISONS:  # non-associative
            sides = (level + 1, level + 1)
        else:                      # left-associative
            sides = (level, level + 1)
        rope = [_wrap(args[0], sides[0]), f" {node.op} ", _wrap(args[1], sides[1])]
    else:
        raise TypeError(f"not an expression node: {node!r}")
    return level, rope


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
