"""Typed syntax tree of the contract language.

Nodes are frozen dataclasses compared by content; ``span`` (source offsets) is carried for
error messages but ignored by equality, so ``parse(print(tree)) == tree`` is a real identity.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from typing import Any

from sedcontract.traces.names import SIDES as SIDES  # the language names the two sides
from sedcontract.traces.names import signal_name

KINDS = ("active", "onset", "offset")
MODALITIES = ("N", "F", "G", "P", "H")
UNITS = ("ms", "s")
METHODS = ("greedy", "exact")  # of a matching: `using greedy|exact`

Span = tuple[int, int]


@dataclass(frozen=True)
class Bound:
    """A window bound: a literal (``10`` frames, ``200ms``, ``0.2s``) or a ``let`` name."""

    number: str | None = None
    unit: str | None = None
    name: str | None = None
    span: Span = field(default=(0, 0), compare=False, repr=False)

    def __str__(self) -> str:
        return self.name if self.name is not None else f"{self.number}{self.unit or ''}"


@dataclass(frozen=True)
class Window:
    """``[hi]`` (``lo`` omitted) or ``[lo:hi]``."""

    hi: Bound
    lo: Bound | None = None
    span: Span = field(default=(0, 0), compare=False, repr=False)

    def __str__(self) -> str:
        return f"[{self.hi}]" if self.lo is None else f"[{self.lo}:{self.hi}]"


@dataclass(frozen=True)
class Atom:
    """``ref|pred`` . ``active|onset|offset`` with an optional class index."""

    side: str
    kind: str
    cls: str | None = None
    span: Span = field(default=(0, 0), compare=False, repr=False)

    @property
    def name(self) -> str:
        """Canonical signal name, e.g. ``pred.active[speech]``, ``ref.active["dog bark"]``."""
        return signal_name(self.side, self.kind, self.cls)


@dataclass(frozen=True)
class Const:
    value: bool
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Not:
    arg: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class And:
    left: Formula
    right: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Or:
    left: Formula
    right: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Implies:
    left: Formula
    right: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Temporal:
    """A unary bounded modality ``N F G P H`` applied to ``arg``."""

    op: str
    window: Window
    arg: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Until:
    """``left U[a:b] right`` (strong: needs a witness inside the window)."""

    left: Formula
    window: Window
    right: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


Formula = Atom | Const | Not | And | Or | Implies | Temporal | Until


# -- event sort: expressions over intervals ------------------------------------------------
FUNCTIONS = {  # name → number of arguments
    "dur": 1, "onset": 1, "offset": 1, "class": 1, "abs": 1, "min": 2, "max": 2,
    "iou": 2, "overlap": 2,
}
FLAGS = ("overlaps", "same_class")
COMPARISONS = ("<=", "<", ">=", ">", "==", "!=")


@dataclass(frozen=True)
class Var:
    """The quantified interval ``ref`` or ``pred``."""

    name: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Number:
    """A unitless number (a scalar such as ``0.2`` or a count such as ``1``)."""

    text: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Time:
    """A duration: a literal with a unit (``200ms``) or a ``let`` name (``eps``)."""

    bound: Bound
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class ClassName:
    """A class literal, ``"speech"``."""

    value: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Flag:
    """Relation shorthands: ``overlaps`` (≥ 1 shared frame), ``same_class``."""

    name: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class BoolLit:
    value: bool
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Call:
    """``dur(x)``, ``onset(x)``, ``offset(x)``, ``class(x)``, ``abs``, ``min``, ``max``,
    ``iou(x, y)``, ``overlap(x, y)``."""

    fn: str
    args: tuple[Expr, ...]
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Count:
    """``count(pred overlapping ref)``: intervals of one side sharing a frame with the other."""

    counted: str
    around: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Binary:
    """Arithmetic (``+ - * /``), comparison (``<= < >= > == !=``) or logic (``& | ->``)."""

    op: str
    left: Expr
    right: Expr
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Negation:
    """``!e`` on a Boolean expression."""

    arg: Expr
    span: Span = field(default=(0, 0), compare=False, repr=False)


Expr = Var | Number | Time | ClassName | Flag | BoolLit | Call | Count | Binary | Negation


def expr_children(node: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions, left to right."""
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Negation):
        return (node.arg,)
    return ()


# -- statements -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Let:
    """``let name = bound``: a named bound usable in any later window or expression."""

    name: str
    value: Bound
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class Match:
    """``match m: ref ~ pred when RELATION using greedy|exact``."""

    name: str
    relation: Expr
    method: str
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class FrameClause:
    """``clause name: on OBLIGATION require REQUIREMENT``: scored over obligation frames.

    ``diagnostic`` clauses (written ``diagnostic name: …``) are reported beside the guard
    vector but are not coordinates of it.
    """

    name: str
    obligation: Formula
    requirement: Formula
    diagnostic: bool = False
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class EventClause:
    """``clause name: each ref|pred|pair(m) [where COND] require COND``: scored over the
    quantified intervals (or matched pairs) for which ``where`` holds."""

    name: str
    each: str
    match: str | None
    where: Expr | None
    requirement: Expr
    diagnostic: bool = False
    span: Span = field(default=(0, 0), compare=False, repr=False)


Clause = FrameClause | EventClause
Statement = Let | Match | FrameClause | EventClause


@dataclass(frozen=True)
class Contract:
    """A parsed contract: ``let`` bindings, matchings and clauses in source order."""

    statements: tuple[Statement, ...]
    source: str | None = field(default=None, compare=False, repr=False)
    name: str = field(default="<contract>", compare=False, repr=False)

    @property
    def lets(self) -> dict[str, Bound]:
        return {s.name: s.value for s in self.statements if isinstance(s, Let)}

    @property
    def matches(self) -> dict[str, Match]:
        return {s.name: s for s in self.statements if isinstance(s, Match)}

    @property
    def clauses(self) -> tuple[Clause, ...]:
        """Every clause, guard coordinates and diagnostics, in source order."""
        return tuple(s for s in self.statements if isinstance(s, FrameClause | EventClause))


def children(node: Formula) -> tuple[Formula, ...]:
    """Direct sub-formulas, left to right."""
    if isinstance(node, Not | Temporal):
        return (node.arg,)
    if isinstance(node, And | Or | Implies | Until):
        return (node.left, node.right)
    return ()


def postorder(root: Any, children_of: Callable[[Any], tuple[Any, ...]]) -> list[Any]:
    """Every node under ``root`` once (by identity), children before their parent, left to
    right; iterative, so a tree of any depth (a chain of 5,000 ``&``) is walked safely."""
    out: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children_of(node))
                     if id(child) not in seen)
    return out


_CHILD_FIELDS = frozenset({"arg", "left", "right", "args"})


def _label(node: Any) -> Hashable:
    """What a node holds besides its children: its type and its other compared fields (an
    atom's name, a window, an operator; spans ignored)."""
    return (type(node).__name__, *(getattr(node, f.name) for f in fields(node)
                                   if f.compare and f.name not in _CHILD_FIELDS))


def structure(nodes: list[Any], children_of: Callable[[Any], tuple[Any, ...]]
              ) -> dict[int, int]:
    """A key per node of a :func:`postorder` list (by identity): equal keys for equal
    sub-trees, found without recursive ``==`` or ``hash``."""
    keys: dict[int, int] = {}
    table: dict[Hashable, int] = {}
    for node in nodes:
        signature = (_label(node), tuple(keys[id(c)] for c in children_of(node)))
        keys[id(node)] = table.setdefault(signature, len(table))
    return keys


def atoms(node: Formula) -> set[Atom]:
    """Every atom occurring in ``node`` (spans ignored)."""
    found: set[Atom] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Atom):
            found.add(Atom(item.side, item.kind, item.cls))
        stack.extend(children(item))
    return found
