"""Typed syntax tree of the contract language.

Nodes are frozen dataclasses compared by content; ``span`` (source offsets) is carried for
error messages but ignored by equality, so ``parse(print(tree)) == tree`` is a real identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SIDES = ("ref", "pred")
KINDS = ("active", "onset", "offset")
MODALITIES = ("N", "F", "G", "P", "H")
UNITS = ("ms", "s")

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
        """Canonical signal name, e.g. ``pred.active[speech]``."""
        return f"{self.side}.{self.kind}" + ("" if self.cls is None else f"[{self.cls}]")


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


@dataclass(frozen=True)
class Let:
    """``let name = bound``: a named bound usable in any later window."""

    name: str
    value: Bound
    span: Span = field(default=(0, 0), compare=False, repr=False)


@dataclass(frozen=True)
class FrameClause:
    """``clause name: on OBLIGATION require REQUIREMENT``: scored over obligation frames."""

    name: str
    obligation: Formula
    requirement: Formula
    span: Span = field(default=(0, 0), compare=False, repr=False)


Statement = Let | FrameClause


@dataclass(frozen=True)
class Contract:
    """A parsed contract: ``let`` bindings and clauses in source order."""

    statements: tuple[Statement, ...]
    source: str | None = field(default=None, compare=False, repr=False)
    name: str = field(default="<contract>", compare=False, repr=False)

    @property
    def lets(self) -> dict[str, Bound]:
        return {s.name: s.value for s in self.statements if isinstance(s, Let)}

    @property
    def clauses(self) -> tuple[FrameClause, ...]:
        return tuple(s for s in self.statements if isinstance(s, FrameClause))


def children(node: Formula) -> tuple[Formula, ...]:
    """Direct sub-formulas, left to right."""
    if isinstance(node, Not | Temporal):
        return (node.arg,)
    if isinstance(node, And | Or | Implies | Until):
        return (node.left, node.right)
    return ()


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
