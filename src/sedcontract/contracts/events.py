"""The event sort at run time: typed expressions over maximal intervals, evaluated for all
quantified intervals (or matched pairs) at once, and the matchings they refer to."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sedcontract.contracts import matching
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.syntax import (
    SIDES,
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
    expr_children,
    postorder,
)
from sedcontract.traces.intervals import (
    MAX_PAIRS,
    Intervals,
    expand_ranges,
    overlap_counts,
    overlap_ranges,
    same_row_ranges,
)

BLOCK_PAIRS = 1 << 20  # candidate pairs evaluated at once
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
            self._counts[key] = overlap_counts(self.side(around), self.side(counted))
        return self._counts[key]

    def candidates(self, relation: Expr) -> tuple[np.ndarray, np.ndarray]:
        """Per reference interval, the index range of the predictions that may satisfy
        ``relation``: those near it when the relation says how near (see
        :func:`relation_reach`), else every prediction of its row."""
        reach = relation_reach(relation, self)
        if reach is None:
            return same_row_ranges(self.ref, self.pred, self.rows)
        return overlap_ranges(self.ref, self.pred, reach)

    def pairs(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The (ref, pred) index pairs that satisfy matching ``name``'s relation, by ref then
        pred onset; the relation is evaluated a block of candidates at a time."""
        relation = self.matches[name].relation
        lo, hi = self.candidates(relation)
        width = hi - lo
        total = int(width.sum())
        if total > MAX_PAIRS:
            raise self.resolver.error(
                f"matching {name!r} has {total} candidate pairs, more than the limit of "
                f"{MAX_PAIRS}: its relation does not say how near a prediction must be "
                "(add 'overlaps', or a bound such as abs(onset(ref) - onset(pred)) <= 200ms)",
                self.matches[name])
        ends = np.cumsum(width)
        kept_ref, kept_pred = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        first = 0
        while first < len(lo):  # blocks of whole references, about BLOCK_PAIRS pairs each
            before = ends[first - 1] if first else 0
            stop = max(first + 1, int(np.searchsorted(ends, before + BLOCK_PAIRS, "right")))
            ref_index, pred_index = expand_ranges(lo[first:stop], hi[first:stop])
            ref_index += first
            keep = evaluate_expr(relation, self, {"ref": ref_index, "pred": pred_index},
                                 len(ref_index)).astype(bool)
            kept_ref.append(ref_index[keep])
            kept_pred.append(pred_index[keep])
            first = stop
        return np.concatenate(kept_ref), np.concatenate(kept_pred)

    def matching(self, name: str) -> MatchingAudit:
        if name not in self.audits:
            ref_index, pred_index = self.pairs(name)
            ranges = matching.monotone_ranges(ref_index, pred_index)
            if ranges is not None:  # convex, monotone: greedy is a maximum matching
                swept = matching.sweep(*ranges)
                found = {method: swept for method in matching.METHODS}
            else:
                found = {method: matching.match(method, ref_index, pred_index, len(self.ref),
                                                len(self.pred)) for method in matching.METHODS}
            per_row = {method: np.bincount(self.ref.row[pairs[0]], minlength=self.rows)
                       for method, pairs in found.items()}
            method = self.method or self.matches[name].method
            chosen = found[method]
            self.audits[name] = MatchingAudit(name, method, chosen[0], chosen[1],
                                              per_row["greedy"], per_row["exact"])
        return self.audits[name]


def _conjuncts(expr: Expr) -> list[Expr]:
    """The operands of a top-level chain of ``&``."""
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Binary) and node.op == "&":
            stack += [node.right, node.left]
        else:
            out.append(node)
    return out


def _about_ref_only(expr: Expr) -> bool:
    """Whether ``expr`` can be evaluated with only ``ref`` bound."""
    for node in postorder(expr, expr_children):
        if (isinstance(node, Var) and node.name == "pred") or isinstance(node, Flag) \
                or (isinstance(node, Count) and node.around == "pred"):
            return False
    return True


def _boundary_distance(node: Expr) -> bool:
    """``abs(f(ref) - f(pred))`` (either order) with ``f`` = onset or offset."""
    if not (isinstance(node, Call) and node.fn == "abs" and isinstance(node.args[0], Binary)
            and node.args[0].op == "-"):
        return False
    left, right = node.args[0].left, node.args[0].right
    calls = [x for x in (left, right) if isinstance(x, Call) and x.fn in ("onset", "offset")
             and isinstance(x.args[0], Var)]
    return (len(calls) == 2 and left.fn == right.fn
            and {left.args[0].name, right.args[0].name} == {"ref", "pred"})


def relation_reach(relation: Expr, ctx: EventContext) -> np.ndarray | None:
    """Frames by which each reference interval may be widened on both sides and still hold
    every prediction that satisfies ``relation`` (None: the relation does not say). Read off
    its top-level ``&`` operands: ``overlaps``; ``overlap(ref, pred)`` or ``iou(ref, pred)``
    above a non-negative constant (reach 0); ``abs(onset(ref) - onset(pred)) <= T`` (or
    offsets) with ``T`` about ``ref`` alone (reach T: a boundary within T frames keeps the
    two intervals within T frames of each other)."""
    reach = None
    for node in _conjuncts(relation):
        found = None
        if isinstance(node, Flag) and node.name == "overlaps":
            found = np.zeros(len(ctx.ref))
        elif isinstance(node, Binary) and node.op in ("<=", "<", ">=", ">"):
            small, big, strict = ((node.left, node.right, node.op == "<")
                                  if node.op in ("<=", "<") else
                                  (node.right, node.left, node.op == ">"))
            if _boundary_distance(small) and _about_ref_only(big):
                limit = evaluate_expr(big, ctx, {"ref": np.arange(len(ctx.ref))}, len(ctx.ref))
                found = np.where(np.isnan(limit), np.inf, np.floor(limit + TOLERANCE))
            elif isinstance(big, Call) and big.fn in ("overlap", "iou") \
                    and isinstance(small, Number | Time):
                value = float(small.text) if isinstance(small, Number) \
                    else ctx.resolver.frames(small.bound)
                if value > 0 or (strict and value >= 0):
                    found = np.zeros(len(ctx.ref))
        if found is not None:
            reach = found if reach is None else np.minimum(reach, found)
    if reach is None:
        return None
    return np.clip(reach, 0, np.iinfo(np.int32).max).astype(np.int64)


def evaluate_expr(expr: Expr, ctx: EventContext, binding: dict[str, np.ndarray],
                  size: int) -> np.ndarray:
    """Value of a (type-checked) expression for ``size`` elements; ``binding`` maps ``ref`` /
    ``pred`` to interval indices. Durations are in frames. Iterative (any depth); a value is
    dropped once its parent has used it."""
    nodes = postorder(expr, expr_children)
    uses = Counter(id(c) for node in nodes for c in expr_children(node))
    values: dict[int, np.ndarray] = {}
    for node in nodes:
        args = [values[id(c)] for c in expr_children(node)]
        for child in expr_children(node):
            uses[id(child)] -= 1
            if uses[id(child)] == 0:
                del values[id(child)]
        values[id(node)] = _value(node, args, ctx, binding, size)
    return np.asarray(values[id(expr)])


def _interval(ctx: EventContext, binding: dict[str, np.ndarray],
              node: Expr) -> tuple[Intervals, np.ndarray]:
    assert isinstance(node, Var)
    return ctx.side(node.name), binding[node.name]


def _shared(ctx: EventContext, binding: dict[str, np.ndarray], first: Expr,
            second: Expr) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames shared by two bound intervals (0 across rows), and the two lengths."""
    (a, ia), (b, ib) = _interval(ctx, binding, first), _interval(ctx, binding, second)
    shared = np.maximum(0, np.minimum(a.end[ia], b.end[ib]) - np.maximum(a.start[ia], b.start[ib]))
    shared = np.where(a.row[ia] == b.row[ib], shared, 0).astype(float)
    return shared, a.end[ia] - a.start[ia], b.end[ib] - b.start[ib]


def _value(node: Expr, args: list[np.ndarray], ctx: EventContext,
           binding: dict[str, np.ndarray], size: int) -> np.ndarray:
    """One node's value from its children's values."""
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
            ref, pred = (_interval(ctx, binding, Var(n)) for n in SIDES)
            return ctx.row_class[ref[0].row[ref[1]]] == ctx.row_class[pred[0].row[pred[1]]]
        return _shared(ctx, binding, Var("ref"), Var("pred"))[0] >= 1  # ≥ 1 shared frame
    if isinstance(node, Count):
        return ctx.count(node.counted, node.around)[binding[node.around]].astype(float)
    if isinstance(node, Negation):
        return ~args[0]
    if isinstance(node, Var):
        return np.zeros(size)  # an interval is only read through a function of it
    if isinstance(node, Call):
        if node.fn in ("dur", "onset", "offset", "class"):
            side, index = _interval(ctx, binding, node.args[0])
            if node.fn == "dur":
                return (side.end[index] - side.start[index]).astype(float)
            if node.fn == "onset":
                return side.start[index].astype(float)
            if node.fn == "offset":
                return side.end[index].astype(float)
            return ctx.row_class[side.row[index]]
        if node.fn in ("iou", "overlap"):
            shared, length_a, length_b = _shared(ctx, binding, *node.args)
            if node.fn == "overlap":
                return shared
            union = length_a + length_b - shared
            return np.divide(shared, union, out=np.zeros(size), where=union > 0)
        if node.fn == "abs":
            return np.abs(args[0])
        return (np.minimum if node.fn == "min" else np.maximum)(*args)
    if isinstance(node, Binary):
        return _binary(node.op, args[0], args[1], size)
    raise TypeError(f"cannot evaluate {node!r}")


def _binary(op: str, left: np.ndarray, right: np.ndarray, size: int) -> np.ndarray:
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


def clause_elements(clause: EventClause, ctx: EventContext
                    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The quantified elements of a clause: variable binding and the row of each element."""
    if clause.each == "pair":
        audit = ctx.matching(clause.match)
        return ({"ref": audit.ref_index, "pred": audit.pred_index},
                ctx.ref.row[audit.ref_index])
    side = ctx.side(clause.each)
    return {clause.each: np.arange(len(side))}, side.row


def event_outcomes(clause: EventClause, ctx: EventContext
                   ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """Every quantified element of an event clause: its binding, its row, whether it is
    obliged (``where``) and whether its requirement holds."""
    binding, rows = clause_elements(clause, ctx)
    size = len(rows)
    obliged = (np.ones(size, dtype=bool) if clause.where is None
               else evaluate_expr(clause.where, ctx, binding, size))
    required = evaluate_expr(clause.requirement, ctx, binding, size).astype(bool)
    return binding, rows, obliged.astype(bool), required


def element_counts(rows: np.ndarray, obliged: np.ndarray, required: np.ndarray,
                   n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-row ``(satisfied, obligations)`` of quantified elements."""
    satisfied = np.bincount(rows[obliged & required], minlength=n_rows)
    obligations = np.bincount(rows[obliged], minlength=n_rows)
    return satisfied, obligations

