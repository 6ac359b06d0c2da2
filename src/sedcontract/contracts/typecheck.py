"""The event sort's type system: interval, duration, count, scalar, class, bool.

Ill-typed expressions are rejected before anything runs, with the position of the offending
sub-expression (e.g. comparing a duration with a bare number, or using ``pred`` inside
``each ref``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from sedcontract.contracts.syntax import (
    COMPARISONS,
    Binary,
    BoolLit,
    Call,
    ClassName,
    Count,
    Expr,
    Flag,
    Negation,
    Number,
    Time,
    Var,
    expr_children,
    postorder,
)
from sedcontract.errors import ContractCheckError

INTERVAL, DURATION, COUNT, SCALAR, CLASS, BOOL = (
    "interval", "duration", "count", "scalar", "class", "bool")
NUMERIC = (COUNT, SCALAR)


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def infer(expr: Expr, scope: Collection[str], *, lets: Collection[str],
          error: Callable[[str, Expr], ContractCheckError]) -> str:
    """Type of ``expr`` with the interval variables in ``scope`` bound; raises on ill-typing.
    Iterative: children are typed before their parent, so any depth is safe."""
    kinds: dict[int, str] = {}
    for node in postorder(expr, expr_children):
        kinds[id(node)] = _kind(node, [(c, kinds[id(c)]) for c in expr_children(node)], scope,
                                lets, error)
    return kinds[id(expr)]


def _kind(node: Expr, args: list[tuple[Expr, str]], scope: Collection[str],
          lets: Collection[str], error: Callable[[str, Expr], ContractCheckError]) -> str:
    """The type of one node from the types of its children."""

    def expect(index: int, kinds: tuple[str, ...], what: str) -> str:
        child, kind = args[index]
        if kind not in kinds:
            wanted = " or ".join(_article(k) for k in kinds)
            raise error(f"{what} needs {wanted}, got {_article(kind)}", child)
        return kind

    def unify(kinds: list[str]) -> str:
        if all(k == DURATION for k in kinds):
            return DURATION
        if all(k in NUMERIC for k in kinds):
            return COUNT if all(k == COUNT for k in kinds) else SCALAR
        raise error(f"cannot mix {' and '.join(_article(k) for k in kinds)} (write a duration "
                    "with a unit, e.g. 200ms)", node)

    if isinstance(node, Var):
        if node.name not in scope:
            bound = " and ".join(sorted(scope)) or "nothing"
            raise error(f"'{node.name}' is not bound here (this clause binds {bound}); "
                        f"relate the other side with count({node.name} overlapping …)", node)
        return INTERVAL
    if isinstance(node, Number):
        return COUNT if node.text.isdigit() else SCALAR
    if isinstance(node, Time):
        name = node.bound.name
        if name is not None and name not in lets:
            known = ", ".join(sorted(lets)) or "none"
            raise error(f"unknown name {name!r} (let names: {known}; functions are called "
                        "with parentheses, e.g. dur(ref))", node)
        return DURATION
    if isinstance(node, ClassName):
        return CLASS
    if isinstance(node, BoolLit):
        return BOOL
    if isinstance(node, Flag):
        if not {"ref", "pred"} <= set(scope):
            raise error(f"'{node.name}' relates ref and pred; it is only meaningful in a "
                        "matching relation or an 'each pair(m)' clause", node)
        return BOOL
    if isinstance(node, Count):
        if node.around not in scope:
            raise error(f"'{node.around}' is not bound here", node)
        return COUNT
    if isinstance(node, Negation):
        return expect(0, (BOOL,), "'!'")
    if isinstance(node, Call):
        if node.fn in ("dur", "onset", "offset"):
            expect(0, (INTERVAL,), f"{node.fn}()")
            return DURATION
        if node.fn == "class":
            expect(0, (INTERVAL,), "class()")
            return CLASS
        if node.fn in ("iou", "overlap"):
            for i in range(len(args)):
                expect(i, (INTERVAL,), f"{node.fn}()")
            return SCALAR if node.fn == "iou" else DURATION
        return unify([expect(i, (DURATION, *NUMERIC), f"{node.fn}()")
                      for i in range(len(args))])
    if isinstance(node, Binary):
        return _binary(node, args, expect, unify, error)
    raise TypeError(f"not an expression: {node!r}")


def _binary(node: Binary, args: list[tuple[Expr, str]], expect, unify, error) -> str:
    if node.op in ("&", "|", "->"):
        expect(0, (BOOL,), f"'{node.op}'")
        expect(1, (BOOL,), f"'{node.op}'")
        return BOOL
    (_, left), (_, right) = args
    if node.op in COMPARISONS:
        same = (left == right == DURATION or (left in NUMERIC and right in NUMERIC)
                or (left == right and left in (CLASS, BOOL) and node.op in ("==", "!=")))
        if not same:
            raise error(f"cannot compare {_article(left)} with {_article(right)} using "
                        f"'{node.op}'", node)
        return BOOL
    for side, kind in args:
        if kind not in (DURATION, *NUMERIC):
            raise error(f"'{node.op}' needs numbers or durations, got {_article(kind)}", side)
    if node.op in ("+", "-"):
        return unify([left, right])
    if node.op == "*":
        if DURATION in (left, right):
            if left == right:
                raise error("a duration times a duration is not a duration", node)
            return DURATION
        return unify([left, right])
    # division
    if left == DURATION:
        return SCALAR if right == DURATION else DURATION
    if right == DURATION:
        raise error("a number divided by a duration is not a duration", node)
    return SCALAR
