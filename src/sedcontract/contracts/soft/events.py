"""Event-sort clauses relaxed over soft predictions. Reference intervals are crisp (maximal
runs of the reference); predicted intervals do not exist as objects. Three relaxations
(``EVENT_RELAXATIONS``), chosen per loss:

``expected`` — each predicate over predicted intervals is replaced by its expectation under
independent frames:

- ``count(pred overlapping ref)``: ``p[start] + Σ onsets inside`` (expected number of predicted
  runs touching the interval); ``count(…) >= 1`` is the coverage ``1 − ∏(1 − p)``;
- ``dur(pred)`` in a pair clause: the soft activity mass in the reference interval dilated by
  the clause's tolerance (never into a neighbouring reference interval);
- ``each pred require count(ref overlapping pred) >= 1``: the expected number of predicted runs
  that start outside every reference interval and end before reaching one, over the expected
  number of runs.

Comparisons of counts with whole numbers are piecewise linear (exact on whole counts);
comparisons of real values are ``exp(−excess/scale)``. Exact on crisp 0/1 inputs only: at
logits ±4 a perfect prediction already expects ~1.7 dropouts in 100 frames, so the
fragmentation loss sits on the flat side of its clamp (1.0, gradient 0) and ~5 spurious runs
in 300 silent frames.

``decided`` — the value is the exact monitor's on the decision (logit above the threshold):
counts, coverage, durations and spurious runs of the thresholded prediction, for any logits.
The gradient is a straight-through one, taken only where the clause is broken, from the
frames whose flip repairs it (the *repair set*), each through a softplus toward its repaired
side (gradient ≥ 1/2 on a wrong-side frame, at any logit): a spurious run's frames are pushed
down (mean over the run), the gaps between the pieces of a fragmented interval pushed up (mean
over the gaps), a missed interval's frames pushed up (mean), and ``dur(pred)`` — the total
length of the predicted runs overlapping the interval, seen in full, not through a dilation
— moves through the frames of those runs outside the interval and the interval's undetected
frames (sum: a frame is a frame of duration). Comparisons: the exact truth value, with the
gradient of the linear slack ``(bound − value) / max(|bound|, 1)`` where broken. Pairs are the
reference intervals a predicted run overlaps, which is the monitor's matching wherever each
reference interval overlaps at most one prediction and vice versa.

``straight`` — the decided values, with the gradient of the expected relaxation added to the
repair gradient (a straight-through estimator of the expectation): the same numbers as
``decided``, plus the expectation's dense push on every frame (the spurious-run expectation
lowers sub-threshold activity in the gaps before it becomes a run).

Everything, the reference's runs included, is computed with torch ops on the predictions' own
device: nothing is copied to the host during a training step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.events import TOLERANCE
from sedcontract.contracts.soft.logic import shift
from sedcontract.contracts.syntax import (
    Binary,
    BoolLit,
    Call,
    ClassName,
    Count,
    EventClause,
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

Tensor = torch.Tensor
EVENT_RELAXATIONS = ("expected", "decided", "straight")


class NoRelaxation(ContractCheckError):
    """A clause (or part of one) has no soft relaxation; train it with weight 0."""


def reference_runs(active: Tensor, lengths: Tensor | None = None
                   ) -> tuple[Tensor, Tensor, Tensor]:
    """Maximal runs of True of ``[rows, frames]`` ``active`` (frames at or past a row's
    ``lengths`` ignored) as ``(row, start, end)``, ``end`` exclusive, in row-major order, on
    ``active``'s device: ``traces.activity.runs`` in torch. One ``nonzero`` over the changes
    of the zero-padded rows; in each row they alternate start, end, start, …"""
    active = active.bool()
    if lengths is not None:
        active = active & (torch.arange(active.shape[-1], device=active.device)
                           < lengths.to(active.device)[:, None])
    padded = F.pad(active.to(torch.int8), (1, 1))
    row, at = torch.nonzero(padded[:, 1:] != padded[:, :-1], as_tuple=True)
    return row[0::2], at[0::2], at[1::2]


def next_reference(active: Tensor) -> Tensor:
    """The first active frame at or after each frame of ``[rows, frames]`` ``active``
    (``frames`` where there is none): a reversed running minimum."""
    n = active.shape[-1]
    at = torch.where(active, torch.arange(n, device=active.device), n)
    return at.flip(-1).cummin(-1).values.flip(-1)


def last_active(active: Tensor) -> Tensor:
    """The last active frame at or before each frame of ``[rows, frames]`` ``active`` (−1
    where there is none): a running maximum."""
    at = torch.where(active, torch.arange(active.shape[-1], device=active.device), -1)
    return at.cummax(-1).values


def straight(exact: Tensor, surrogate: Tensor) -> Tensor:
    """``exact`` in the forward pass with the gradient of ``surrogate`` (straight-through)."""
    return exact + (surrogate - surrogate.detach())


def interval_sums(x: Tensor, row: Tensor, start: Tensor, end: Tensor) -> Tensor:
    """``Σ x[row, start:end]`` for each interval (``0 ≤ start``, ``end ≤ frames``; an empty or
    reversed one sums to 0), by binary lifting over a table of power-of-two block sums:
    O(frames · log frames) memory, no subtraction (so ``−inf`` log values stay exact). The
    block sizes go up to the number of frames, not to the longest interval, so nothing is read
    back from the device."""
    n = x.shape[-1]
    total = torch.zeros(row.shape, dtype=x.dtype, device=x.device)
    if n == 0 or row.numel() == 0:
        return total
    length = (end - start).clamp(min=0)
    position = start.clone()
    block, size = x, 1
    while size <= n:
        take = (length & size) != 0
        at = position.clamp(0, n - 1)
        total = total + torch.where(take, block[row, at], torch.zeros_like(total))
        position = position + torch.where(take, size, 0)
        block = block + shift(block, size, 0.0)
        size *= 2
    return total


@dataclass
class Soft:
    """A value per element: ``crisp`` (from references and constants only), a soft count (with
    its coverage), or a soft truth degree."""

    value: Tensor
    crisp: bool
    coverage: Tensor | None = None  # a count: P(count >= 1)
    decided: bool = False  # exact forward value, repair gradient (the ``decided`` relaxation)


@dataclass
class ClauseTerms:
    """What a relaxed clause contributes: soft violations (with gradient) and the number of
    obligations (no gradient) — loss ``violations / obligations``, 0 without obligations."""

    violations: Tensor
    obligations: Tensor

    def loss(self) -> Tensor:
        # chosen on the device (no host sync); the divisor of the branch not taken is 1, so
        # its gradient is 0, never 0/0
        some = ~(self.obligations <= 0)
        return torch.where(some, self.violations / torch.where(some, self.obligations, 1.0),
                           self.violations * 0.0)


class SoftEvents:
    """The soft event sort of one batch of rows: crisp reference runs, soft predicted
    activity ``p`` (``log p`` and ``log(1−p)`` given, zero activity past each row's length).
    ``reference`` ``[rows, frames]``, ``lengths`` ``[rows]`` and ``row_class`` ``[rows]`` are
    tensors (arrays are accepted and copied to ``log_p``'s device once). ``relaxation``: one
    of ``EVENT_RELAXATIONS``; ``decided`` reads ``logits``, the rows' logits recentred on the
    decision threshold (active above 0)."""

    def __init__(self, reference: Tensor | np.ndarray, lengths: Tensor | np.ndarray,
                 log_p: Tensor, log_q: Tensor, row_class: Tensor | np.ndarray,
                 classes: Sequence[str], resolver: BoundResolver, *,
                 relaxation: str = "expected", logits: Tensor | None = None) -> None:
        if relaxation not in EVENT_RELAXATIONS:
            raise ValueError(f"unknown event relaxation {relaxation!r}; choose one of "
                             f"{', '.join(EVENT_RELAXATIONS)}")
        if relaxation == "decided" and logits is None:
            raise ValueError("the decided relaxation reads the rows' logits")
        device = log_p.device
        self.log_p, self.log_q = log_p, log_q
        self.p = torch.exp(log_p)
        self.lengths = torch.as_tensor(lengths, device=device)
        self.row_class = torch.as_tensor(row_class, device=device)
        self.classes, self.resolver = tuple(classes), resolver
        reference = torch.as_tensor(reference, device=device).bool()
        self.inside = torch.arange(reference.shape[-1], device=device) < self.lengths[:, None]
        self.reference = reference & self.inside  # frames past a row's length are ignored
        self.row, self.start, self.end = reference_runs(self.reference)
        # a predicted run starts at t: active at t, inactive at t−1 (frame 0 starts any run)
        self.starts = torch.exp(log_p + shift(log_q, -1, 0.0))
        self.device = device
        self.decided = relaxation in ("decided", "straight")
        self.dense = relaxation == "straight"  # the expectation's gradient added
        if self.decided:
            assert logits is not None
            self.active = (logits > 0) & self.inside  # the monitor's decision
            self.d = self.active.to(log_p.dtype)
            self.push_up = F.softplus(-logits)    # falls as a frame rises
            self.push_down = F.softplus(logits)   # falls as a frame falls

    # -- the decided relaxation: exact values, repair gradients ----------------------------
    def _mean(self, x: Tensor, mask: Tensor, row: Tensor, start: Tensor, end: Tensor
              ) -> Tensor:
        """Mean of ``x`` over the ``mask`` frames of each interval (0 where there are none)."""
        total = interval_sums(torch.where(mask, x, torch.zeros_like(x)), row, start, end)
        count = interval_sums(mask.to(x.dtype), row, start, end)
        return total / count.clamp(min=1)

    def _decided_coverage(self) -> Tensor:
        """1 where a predicted run shares a frame with the interval; where none does, the
        gradient raises the interval's frames (mean softplus)."""
        hard = (interval_sums(self.d, self.row, self.start, self.end) > 0).to(self.d.dtype)
        raise_ = -self._mean(self.push_up, self.reference, self.row, self.start, self.end)
        return torch.where(hard > 0, hard, straight(hard, raise_))

    def _between(self, outer: Tensor, inner: Tensor) -> Tensor:
        """Frames of ``outer``'s runs where ``inner`` is off but on somewhere before and after
        them in the same run: the gaps between a reference interval's pieces (outer the
        reference, inner the prediction), or the bridges of a predicted run over several
        reference intervals (the other way round)."""
        n = outer.shape[-1]
        at = torch.arange(n, device=self.device)
        first = outer & ~shift(outer, -1, False)
        last = outer & ~shift(outer, 1, False)
        start_at = torch.where(first, at, 0).cummax(-1).values  # the run's first frame
        end_at = next_reference(last).clamp(max=n - 1)          # and its last
        on = inner.to(self.d.dtype)
        cum = on.cumsum(-1)
        before = cum - (cum.gather(-1, start_at) - on.gather(-1, start_at))
        after = cum.gather(-1, end_at) - cum
        return outer & ~inner & (before > 0) & (after > 0)

    def _decided_count(self) -> Tensor:
        """The number of predicted runs sharing a frame with each interval; its gradient
        closes the gaps between them (mean softplus over the gaps, which falls as they
        rise)."""
        starts = self.d * (1 - shift(self.d, -1, 0.0))
        first = self.d[self.row, self.start]
        hard = first + interval_sums(starts, self.row, self.start + 1, self.end)
        gaps = self._between(self.reference, self.active)
        gaps = self._mean(self.push_up, gaps, self.row, self.start, self.end)
        return straight(hard, gaps)

    def _decided_duration(self) -> Tensor:
        """Total length of the predicted runs overlapping each interval, in full; its gradient
        comes from those runs' frames outside the interval and the interval's undetected
        frames (sum of softplus toward longer)."""
        n = self.reference.shape[-1]
        nxt = next_reference(self.active)   # first active frame at or after each frame
        prev = last_active(self.active)     # last active frame at or before each frame
        first = nxt[self.row, self.start]
        last = prev[self.row, (self.end - 1).clamp(min=0)]
        some = (first < self.end) & (last >= self.start)
        run_start = last_active(~self.active)   # the frame before each run's start
        run_end = next_reference(~self.active)  # each run's end (exclusive)
        lo = torch.where(some, run_start[self.row, first.clamp(max=n - 1)] + 1, self.start)
        hi = torch.where(some, run_end[self.row, last.clamp(min=0)], self.start)
        hard = interval_sums(self.d, self.row, lo, hi)
        outside = self.active & ~self.reference
        longer = interval_sums(torch.where(outside, self.push_down, 0.0), self.row,
                               lo, hi)
        longer = longer - interval_sums(torch.where(self.reference & ~self.active,
                                                    self.push_up, 0.0),
                                        self.row, self.start, self.end)
        return straight(hard, longer)

    def _decided_false_runs(self) -> ClauseTerms:
        """Predicted runs sharing no frame with a reference interval over all predicted runs;
        a spurious run's gradient lowers its frames (mean softplus)."""
        row, start, end = reference_runs(self.active)
        touch = interval_sums(self.reference.to(self.d.dtype), row, start, end) > 0
        lower = self._mean(self.push_down, self.active, row, start, end)
        one = torch.ones_like(lower)
        violations = torch.where(touch, torch.zeros_like(lower), straight(one, lower)).sum()
        return ClauseTerms(violations, torch.tensor(float(row.numel()), dtype=self.d.dtype,
                                                    device=self.device))

    def _decided_merges(self) -> ClauseTerms:
        """Predicted runs sharing frames with two or more reference intervals over those
        sharing frames with at least one; a merging run's gradient lowers its bridges between
        them (mean softplus)."""
        row, start, end = reference_runs(self.active)
        ref = self.reference.to(self.d.dtype)
        starts = ref * (1 - shift(ref, -1, 0.0))
        count = ref[row, start] + interval_sums(starts, row, start + 1, end)
        bridges = self._mean(self.push_down, self._between(self.active, self.reference),
                             row, start, end)
        one = torch.ones_like(bridges)
        violations = torch.where(count > 1, straight(one, bridges), torch.zeros_like(one))
        return ClauseTerms(violations.sum(), (count >= 1).to(ref.dtype).sum())

    # -- per reference interval ------------------------------------------------------------
    def coverage(self) -> Tensor:
        """``1 − ∏(1 − p)`` over each reference interval (decided: whether a run covers it)."""
        expected = -torch.expm1(interval_sums(self.log_q, self.row, self.start, self.end))
        if self.decided:
            return self._dense(self._decided_coverage(), expected)
        return expected

    def count(self) -> Tensor:
        """Expected number of predicted runs sharing a frame with each reference interval
        (decided: the number)."""
        if self.row.numel() == 0:
            return torch.zeros(0, dtype=self.p.dtype, device=self.device)
        first = self.p[self.row, self.start]
        expected = first + interval_sums(self.starts, self.row, self.start + 1, self.end)
        if self.decided:
            return self._dense(self._decided_count(), expected)
        return expected

    def _dense(self, decided: Tensor, expected: Tensor) -> Tensor:
        """``straight``: the decided value with the expectation's gradient added to the
        repair's; ``decided``: the decided value as it is."""
        return straight(decided, expected) if self.dense else decided

    def mass(self, dilation: Tensor) -> Tensor:
        """Soft activity in each reference interval dilated by ``dilation`` frames on both
        sides, never past the clip or into a neighbouring reference interval of the row."""
        same_prev = torch.zeros_like(self.row, dtype=torch.bool)
        same_prev[1:] = self.row[1:] == self.row[:-1]
        prev_end = torch.where(same_prev, torch.roll(self.end, 1), 0)
        same_next = torch.zeros_like(same_prev)
        same_next[:-1] = same_prev[1:]
        length = self.lengths[self.row]
        next_start = torch.where(same_next, torch.roll(self.start, -1), length)
        lo = torch.maximum(self.start - dilation, prev_end)
        hi = torch.minimum(self.end + dilation, next_start)
        return interval_sums(self.p, self.row, lo, hi)

    # -- predicted runs outside the reference ---------------------------------------------
    def false_runs(self) -> ClauseTerms:
        """Expected predicted runs that share no frame with a reference interval, over the
        expected number of predicted runs."""
        if self.decided:
            decided = self._decided_false_runs()
            if not self.dense:
                return decided
            expected = self._expected_false_runs()
            ratio = expected.violations / expected.obligations.clamp(min=1e-12)
            return ClauseTerms(straight(decided.violations, decided.obligations * ratio),
                               decided.obligations)
        return self._expected_false_runs()

    def _expected_false_runs(self) -> ClauseTerms:
        rows, n = self.reference.shape
        # the first reference frame at or after each frame (n where none): a run starting in
        # a gap overlaps a reference iff it stays active up to and including that frame
        nxt = next_reference(self.reference)
        reachable = nxt < self.lengths[:, None]
        row = torch.arange(rows, device=self.device)[:, None].expand(rows, n)
        start = torch.arange(n, device=self.device)[None].expand(rows, n) + 1
        reach = torch.exp(interval_sums(self.log_p, row.reshape(-1), start.reshape(-1),
                                        (nxt + 1).clamp(max=n).reshape(-1)).reshape(rows, n))
        reach = torch.where(reachable, reach, torch.zeros_like(reach))
        in_gap = ~self.reference & self.inside
        starts = torch.where(self.inside, self.starts, torch.zeros_like(self.starts))
        violations = (starts * torch.where(in_gap, 1 - reach, torch.zeros_like(reach))).sum()
        return ClauseTerms(violations, starts.sum().detach())

    # -- clauses ---------------------------------------------------------------------------
    def clause(self, clause: EventClause) -> ClauseTerms:
        """Soft violations and obligations of an event clause."""
        if clause.each == "pred":
            if clause.where is None and _at_least_one(clause.requirement, "ref", "pred"):
                return self.false_runs()
            if self.decided and clause.where is not None and \
                    _at_least_one(clause.where, "ref", "pred") and \
                    _at_most_one(clause.requirement, "ref", "pred"):
                return self._decided_merges()
            raise NoRelaxation(f"clause {clause.name!r}: 'each pred' is relaxed only as "
                               "'each pred require count(ref overlapping pred) >= 1' and, "
                               "decided, 'each pred where count(ref overlapping pred) >= 1 "
                               "require count(ref overlapping pred) <= 1'")
        size = int(self.row.numel())
        weight = torch.ones(size, dtype=self.p.dtype, device=self.device)
        dilation = None
        if clause.each == "pair":
            weight = self.coverage().detach()
            dilation = self._tolerance(clause)
        if clause.where is not None:
            weight = weight * self.evaluate(clause.where, clause, dilation).value.detach()
        satisfied = self.evaluate(clause.requirement, clause, dilation).value
        return ClauseTerms((weight * (1 - satisfied)).sum(), weight.sum().detach())

    def _tolerance(self, clause: EventClause) -> Tensor:
        """Frames to dilate reference intervals by for ``dur(pred)``: the reference-only side
        of the comparison that reads ``dur(pred)`` (0 when there is none)."""
        for node in postorder(clause.requirement, expr_children):
            if isinstance(node, Binary) and node.op in ("<=", "<") and \
                    _mentions_pred(node.left) and not _mentions_pred(node.right):
                value = self.evaluate(node.right, clause, None)
                return torch.ceil(value.value.detach()).clamp(min=0).long()
        return torch.zeros_like(self.row)

    def evaluate(self, expr: Expr, clause: EventClause, dilation: Tensor | None) -> Soft:
        """Soft value of a reference-scoped expression, for every reference interval."""
        size = int(self.row.numel())
        values: dict[int, Soft] = {}
        for node in postorder(expr, expr_children):
            args = [values[id(c)] for c in expr_children(node)]
            values[id(node)] = self._node(node, args, clause, dilation, size)
        return values[id(expr)]

    def _const(self, value: float, size: int) -> Soft:
        return Soft(torch.full((size,), float(value), dtype=self.p.dtype, device=self.device),
                    True)

    def _node(self, node: Expr, args: list[Soft], clause: EventClause,
              dilation: Tensor | None, size: int) -> Soft:
        if isinstance(node, Number):
            return self._const(float(node.text), size)
        if isinstance(node, Time):
            return self._const(self.resolver.frames(node.bound), size)
        if isinstance(node, BoolLit):
            return self._const(float(node.value), size)
        if isinstance(node, ClassName):
            if node.value not in self.classes:
                raise self.resolver.error(f"unknown class {node.value!r}; known classes: "
                                          f"{', '.join(self.classes) or 'none'}", node)
            return self._const(self.classes.index(node.value), size)
        if isinstance(node, Var):
            return self._const(0.0, size)
        if isinstance(node, Count):
            if (node.counted, node.around) != ("pred", "ref"):
                raise NoRelaxation(f"clause {clause.name!r}: count({node.counted} overlapping "
                                   f"{node.around}) has no relaxation over reference intervals")
            return Soft(self.count(), False, self.coverage(), self.decided)
        if isinstance(node, Flag):
            if node.name == "overlaps":
                return Soft(self.coverage(), False, decided=self.decided)
            return self._const(1.0, size)  # surrogate pairs share the reference's row
        if isinstance(node, Call):
            return self._call(node, args, clause, dilation, size)
        if isinstance(node, Negation):
            return Soft(1 - args[0].value, args[0].crisp, decided=args[0].decided)
        if isinstance(node, Binary):
            return _binary(node.op, args[0], args[1], clause)
        raise NoRelaxation(f"clause {clause.name!r}: no relaxation for {node!r}")

    def _call(self, node: Call, args: list[Soft], clause: EventClause,
              dilation: Tensor | None, size: int) -> Soft:
        if node.fn in ("dur", "onset", "offset", "class"):
            var = node.args[0]
            assert isinstance(var, Var)
            if var.name == "pred":
                if node.fn == "dur" and dilation is not None:
                    if self.decided:
                        return Soft(self._dense(self._decided_duration(),
                                                self.mass(dilation)), False, decided=True)
                    return Soft(self.mass(dilation), False)
                raise NoRelaxation(f"clause {clause.name!r}: {node.fn}(pred) has no relaxation "
                                   "(dur(pred) has one in pair clauses)")
            if node.fn == "dur":
                value = self.end - self.start
            elif node.fn == "onset":
                value = self.start
            elif node.fn == "offset":
                value = self.end
            else:
                value = self.row_class[self.row]
            return Soft(value.to(self.p.dtype), True)
        if node.fn == "abs":
            return Soft(args[0].value.abs(), args[0].crisp, decided=args[0].decided)
        if node.fn in ("min", "max"):
            pick = torch.minimum if node.fn == "min" else torch.maximum
            return Soft(pick(args[0].value, args[1].value), args[0].crisp and args[1].crisp,
                        decided=args[0].decided or args[1].decided)
        raise NoRelaxation(f"clause {clause.name!r}: {node.fn}(…) has no relaxation")


def _mentions_pred(expr: Expr) -> bool:
    return any(isinstance(n, Var) and n.name == "pred" for n in postorder(expr, expr_children))


def _count_bound(expr: Expr, counted: str, around: str,
                 forms: tuple[tuple[str, float], ...]) -> bool:
    """``count(counted overlapping around) <op> <k>`` for one of the ``(op, k)`` forms."""
    return (isinstance(expr, Binary) and isinstance(expr.left, Count)
            and (expr.left.counted, expr.left.around) == (counted, around)
            and isinstance(expr.right, Number)
            and (expr.op, float(expr.right.text)) in forms)


def _at_least_one(expr: Expr, counted: str, around: str) -> bool:
    """``count(counted overlapping around) >= 1`` (or ``> 0``)."""
    return _count_bound(expr, counted, around, ((">=", 1.0), (">", 0.0)))


def _at_most_one(expr: Expr, counted: str, around: str) -> bool:
    """``count(counted overlapping around) <= 1`` (or ``< 2``)."""
    return _count_bound(expr, counted, around, (("<=", 1.0), ("<", 2.0)))


_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "==", "!=": "!="}


def _exact(op: str, a: Tensor, b: Tensor) -> Tensor:
    """The monitor's comparison (within ``TOLERANCE``), as 0/1 of ``a``'s dtype."""
    return {"<=": a <= b + TOLERANCE, "<": a < b - TOLERANCE, ">=": a >= b - TOLERANCE,
            ">": a > b + TOLERANCE, "==": (a - b).abs() <= TOLERANCE,
            "!=": (a - b).abs() > TOLERANCE}[op].to(a.dtype)


def _decided_compare(op: str, left: Soft, right: Soft) -> Soft:
    """The exact comparison of decided values; where it fails, the gradient of the linear
    slack ``(bound − value) / max(|bound|, 1)`` toward it. ``count(…) >= 1`` is the decided
    coverage (whose gradient raises the interval, where a count's would close gaps)."""
    a, b = left.value, right.value
    exact = _exact(op, a.detach(), b.detach())
    scale = b.detach().abs().clamp(min=1.0)
    if op in ("<=", "<"):
        slack = (b - a) / scale
    elif op in (">=", ">"):
        slack = (a - b) / scale
    elif op == "==":
        slack = -(a - b).abs() / scale
    else:
        slack = (a - b).abs()
    value = torch.where(exact > 0, exact, straight(exact, slack))
    if left.coverage is not None and right.crisp and op in (">=", ">"):
        k = right.value.detach()
        value = torch.where((k == 1) if op == ">=" else (k == 0), left.coverage, value)
    return Soft(value, False, decided=True)


def _binary(op: str, left: Soft, right: Soft, clause: EventClause) -> Soft:
    a, b = left.value, right.value
    crisp = left.crisp and right.crisp
    decided = left.decided or right.decided
    if op == "&":
        return Soft(a * b, crisp, decided=decided)
    if op == "|":
        return Soft(a + b - a * b, crisp, decided=decided)
    if op == "->":
        return Soft(1 - a + a * b, crisp, decided=decided)
    if op in ("+", "-", "*"):
        return Soft({"+": a + b, "-": a - b, "*": a * b}[op], crisp, decided=decided)
    if op == "/":
        return Soft(a / b, crisp, decided=decided)
    if crisp:
        return Soft(_exact(op, a, b), True)
    if decided:
        return _decided_compare(op, left, right)
    if (right.coverage is None and left.coverage is not None) or \
            (right.crisp and left.coverage is not None):
        return _count_compare(op, left, b, clause)
    if left.crisp and right.coverage is not None:
        return _count_compare(_FLIP[op], right, a, clause)
    return _real_compare(op, a, b, clause)


def _count_compare(op: str, count: Soft, k: Tensor, clause: EventClause) -> Soft:
    """A soft count against whole numbers: piecewise linear, exact on whole counts;
    ``>= 1`` is the coverage. Against other numbers, the real comparison — picked on the
    device (no host sync), except for ``!=``, which has no real relaxation to fall back on."""
    whole = torch.all(k == torch.round(k))
    if op == "!=" and not whole:
        return _real_compare(op, count.value, k, clause)  # refuses it, by name
    real = None if op == "!=" else _real_compare(op, count.value, k, clause).value
    c = count.value
    if op == ">":
        op, k = ">=", k + 1
    elif op == "<":
        op, k = "<=", k - 1
    if op == ">=":
        linear = (c - k + 1).clamp(0, 1)
        value = torch.where(k == 1, count.coverage, torch.where(k <= 0, 1.0, linear))
    elif op == "<=":
        value = (k + 1 - c).clamp(0, 1)
    elif op == "==":
        value = (1 - (c - k).abs()).clamp(0, 1)
    else:
        value = 1 - (1 - (c - k).abs()).clamp(0, 1)
    return Soft(value if real is None else torch.where(whole, value, real), False)


def _real_compare(op: str, a: Tensor, b: Tensor, clause: EventClause) -> Soft:
    """``a <= b`` as ``exp(−max(0, a − b) / max(|b|, 1))``: 1 within the bound, decaying with
    the relative excess (a gradient at every excess)."""
    def at_most(x: Tensor, y: Tensor) -> Tensor:
        return torch.exp(-torch.relu(x - y) / y.abs().clamp(min=1.0))
    if op in ("<=", "<"):
        return Soft(at_most(a, b), False)
    if op in (">=", ">"):
        return Soft(at_most(b, a), False)
    if op == "==":
        return Soft(at_most(a, b) * at_most(b, a), False)
    raise NoRelaxation(f"clause {clause.name!r}: '{op}' between soft values has no relaxation")
