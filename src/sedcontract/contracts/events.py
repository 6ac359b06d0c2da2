"""The event sort at run time: typed expressions over maximal intervals, evaluated for all
quantified intervals (or matched pairs) at once, and the matchings they refer to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sedcontract.contracts import matching
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.intervals import Intervals, overlap_counts, same_row_pairs
from sedcontract.contracts.syntax import (
    Binary,
    BoolLit,
    Call,
    ClassName,
    Count,
    EventClause,
    Expr,
    Flag,
    Match,
    Negation,
    Number,
    Time,
    Var,
)

TOLERANCE = 1e-9  # frames: products such as 0.2 * dur are compared up to float rounding


@dataclass(frozen=True)
class MatchingAudit:
    """Pairs found by the declared method, and greedy against exact, per row."""

    name: str
    method: str
    ref_index: np.ndarray
    pred_index: np.ndarray
    greedy_per_row: np.ndarray
    exact_per_row: np.ndarray

    @property
    def short_rows(self) -> np.ndarray:
        """Rows where greedy finds fewer pairs than the maximum."""
        return np.flatnonzero(self.greedy_per_row < self.exact_per_row)


@dataclass
class EventContext:
    """Intervals of one evaluation (typed or union rows) and what is derived from them."""

    ref: Intervals
    pred: Intervals
    rows: int
    n: int
    row_class: np.ndarray          # class index per row, -1 on the union trace
    classes: Sequence[str]
    resolver: BoundResolver
    matches: dict[str, Match]
    method: str | None = None      # overrides every matching's declared method when given
    _counts: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    audits: dict[str, MatchingAudit] = field(default_factory=dict)

    def side(self, name: str) -> Intervals:
        return self.ref if name == "ref" else self.pred

    def count(self, counted: str, around: str) -> np.ndarray:
        key = (counted, around)
        if key not in self._counts:
            self._counts[key] = overlap_counts(self.side(around), self.side(counted), self.n)
        return self._counts[key]

    def matching(self, name: str) -> MatchingAudit:
        if name not in self.audits:
            declared = self.matches[name]
            ref_index, pred_index = same_row_pairs(self.ref, self.pred, self.rows)
            keep = evaluate_expr(declared.relation, self, {"ref": ref_index, "pred": pred_index},
                                 len(ref_index))
            ref_index, pred_index = ref_index[keep], pred_index[keep]
            found = {method: matching.match(method, ref_index, pred_index, len(self.ref),
                                            len(self.pred)) for method in matching.METHODS}
            per_row = {method: np.bincount(self.ref.row[pairs[0]], minlength=self.rows)
                       for method, pairs in found.items()}
            method = self.method or declared.method
            chosen = found[method]
            self.audits[name] = MatchingAudit(name, method, chosen[0], chosen[1],
                                              per_row["greedy"], per_row["exact"])
        return self.audits[name]


def evaluate_expr(expr: Expr, ctx: EventContext, binding: dict[str, np.ndarray],
                  size: int) -> np.ndarray:
    """Value of a (type-checked) expression for ``size`` elements; ``binding`` maps ``ref`` /
    ``pred`` to interval indices. Durations are in frames."""

    def interval(node: Expr) -> tuple[Intervals, np.ndarray]:
        assert isinstance(node, Var)
        return ctx.side(node.name), binding[node.name]

    def go(node: Expr) -> np.ndarray:
        if isinstance(node, Number):
            return np.full(size, float(node.text))
        if isinstance(node, Time):
            return np.full(size, float(ctx.resolver.frames(node.bound)))
        if isinstance(node, BoolLit):
            return np.full(size, node.value)
        if isinstance(node, ClassName):
            if node.value not in ctx.classes:
                raise ctx.resolver.error(f"unknown class {node.value!r}; known classes: "
                                         f"{', '.join(ctx.classes) or 'none'}", node)
            return np.full(size, list(ctx.classes).index(node.value))
        if isinstance(node, Flag):
            if node.name == "same_class":
                return go(Call("class", (Var("ref"),))) == go(Call("class", (Var("pred"),)))
            return go(Call("overlap", (Var("ref"), Var("pred")))) >= 1
        if isinstance(node, Count):
            return ctx.count(node.counted, node.around)[binding[node.around]].astype(float)
        if isinstance(node, Negation):
            return ~go(node.arg)
        if isinstance(node, Call):
            return call(node)
        if isinstance(node, Binary):
            return binary(node)
        raise TypeError(f"cannot evaluate {node!r}")

    def call(node: Call) -> np.ndarray:
        if node.fn in ("dur", "onset", "offset", "class"):
            side, index = interval(node.args[0])
            if node.fn == "dur":
                return (side.end[index] - side.start[index]).astype(float)
            if node.fn == "onset":
                return side.start[index].astype(float)
            if node.fn == "offset":
                return side.end[index].astype(float)
            return ctx.row_class[side.row[index]]
        if node.fn in ("iou", "overlap"):
            (a, ia), (b, ib) = interval(node.args[0]), interval(node.args[1])
            shared = np.maximum(0, np.minimum(a.end[ia], b.end[ib])
                                - np.maximum(a.start[ia], b.start[ib]))
            same_row = a.row[ia] == b.row[ib]
            shared = np.where(same_row, shared, 0).astype(float)
            if node.fn == "overlap":
                return shared
            union = (a.end[ia] - a.start[ia]) + (b.end[ib] - b.start[ib]) - shared
            return np.divide(shared, union, out=np.zeros(size), where=union > 0)
        values = [go(a) for a in node.args]
        if node.fn == "abs":
            return np.abs(values[0])
        return (np.minimum if node.fn == "min" else np.maximum)(*values)

    def binary(node: Binary) -> np.ndarray:
        left, right = go(node.left), go(node.right)
        op = node.op
        if op == "&":
            return left & right
        if op == "|":
            return left | right
        if op == "->":
            return ~left | right
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "/":  # division by zero is undefined (NaN): every comparison with it fails
            return np.divide(left, right, out=np.full(size, np.nan), where=right != 0)
        if left.dtype == bool or np.issubdtype(left.dtype, np.integer):
            return left == right if op == "==" else left != right
        return {"<=": lambda: left <= right + TOLERANCE, "<": lambda: left < right - TOLERANCE,
                ">=": lambda: left >= right - TOLERANCE, ">": lambda: left > right + TOLERANCE,
                "==": lambda: np.abs(left - right) <= TOLERANCE,
                "!=": lambda: np.abs(left - right) > TOLERANCE}[op]()

    return np.asarray(go(expr))


def clause_elements(clause: EventClause, ctx: EventContext
                    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The quantified elements of a clause: variable binding and the row of each element."""
    if clause.each == "pair":
        audit = ctx.matching(clause.match)
        return ({"ref": audit.ref_index, "pred": audit.pred_index},
                ctx.ref.row[audit.ref_index])
    side = ctx.side(clause.each)
    return {clause.each: np.arange(len(side))}, side.row


def event_counts(clause: EventClause, ctx: EventContext) -> tuple[np.ndarray, np.ndarray]:
    """Per-row ``(satisfied, obligations)`` of an event clause."""
    binding, rows = clause_elements(clause, ctx)
    size = len(rows)
    obliged = (np.ones(size, dtype=bool) if clause.where is None
               else evaluate_expr(clause.where, ctx, binding, size))
    required = evaluate_expr(clause.requirement, ctx, binding, size)
    satisfied = np.bincount(rows[obliged & required], minlength=ctx.rows)
    obligations = np.bincount(rows[obliged], minlength=ctx.rows)
    return satisfied, obligations

