"""Soft truth values on torch, as backends of the generic tree walk (``monitor.evaluate_tree``).

``ProductOps``: product logic in log space. A value is the pair ``(log u, log(1−u))``, so ``¬`` is
a swap, ``∧`` adds the first halves and ``∨`` the second, and a window of thousands of frames is
a sum of logs: nothing underflows, and crisp inputs (``0``/``−inf``) give the exact monitor's
values bit for bit. ``SoundOps``: smooth robustness as a certified interval ``[lower, upper]``
around the exact robustness, from log-sum-exp bounds with a temperature per node.
Windows are truncated at each row's own length exactly as the exact monitor truncates them:
frames outside a clip take the identity of the combination, which is a plain number here (0 in
a sum of logs, ``∓limit`` for a max/min), never a ``−inf`` that ``logsumexp`` would turn into
NaN gradients.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

Tensor = torch.Tensor
NEG_INF = float("-inf")
LN2 = math.log(2.0)
UNTIL_CELLS = 1 << 22  # rows × frames × window cells of one until block
# witness relaxations of the existential windows N/F/P (product logic), per clause
WITNESSES = ("noisy_or", "exactly_one", "linear_softmax", "softmax_max", "rise")
SOFTMAX_TEMPERATURE = 0.1  # τ of ``softmax_max``
FLOOR = -1e30  # a finite "log 0" where logsumexp needs an identity (−inf has NaN gradients)


def log1mexp(x: Tensor) -> Tensor:
    """``log(1 − eˣ)`` for ``x ≤ 0``: ``−inf`` at 0 and 0 at ``−inf``, with finite gradients
    everywhere (an input closer to 0 than ``√tiny`` — 1e-19 in float32 — counts as ``−√tiny``,
    which bounds the gradient by ``1/√tiny``)."""
    inside = x < 0
    edge = -torch.finfo(x.dtype).tiny ** 0.5
    safe = torch.where(inside, x.clamp(max=edge), torch.full_like(x, -1.0))
    # each branch sees only inputs where it is finite, so the branch torch.where does not pick
    # has a finite gradient too (0 × inf would be NaN)
    near = torch.log(-torch.expm1(safe.clamp(min=-LN2)))
    far = torch.log1p(-torch.exp(safe.clamp(max=-LN2)))
    out = torch.where(safe > -LN2, near, far)
    return torch.where(inside, out, torch.full_like(x, NEG_INF))


def safe_log(p: Tensor) -> Tensor:
    """``log p`` for ``p ∈ [0, 1]``: ``−inf`` at 0 with a zero (not infinite) gradient there."""
    floor = torch.finfo(p.dtype).tiny ** 0.5
    positive = p > 0
    return torch.where(positive, torch.log(torch.where(positive, p, 1.0).clamp(min=floor)),
                       torch.full_like(p, NEG_INF))


def shift(x: Tensor, k: int, fill: float) -> Tensor:
    """``y[…, t] = x[…, t+k]`` where ``t+k`` is inside the last axis, else ``fill``."""
    if k == 0:
        return x
    n = x.shape[-1]
    if abs(k) >= n:
        return torch.full_like(x, fill)
    if k > 0:
        return F.pad(x[..., k:], (0, k), value=fill)
    return F.pad(x[..., : n + k], (-k, 0), value=fill)


def _run(x: Tensor, length: int, combine: Callable[[Tensor, Tensor], Tensor], fill: float,
         step: int) -> Tensor:
    """``combine`` of ``x[t], x[t+step], …`` over ``length`` frames (``step`` = ±1) from
    disjoint power-of-two blocks, so ``combine`` need not be idempotent (a sum)."""
    out, offset, block, size = None, 0, x, 1
    while True:
        if length & size:
            part = shift(block, step * offset, fill)
            out = part if out is None else combine(out, part)
            offset += size
        if 2 * size > length:
            return out
        block = combine(block, shift(block, step * size, fill))
        size *= 2


def window_reduce(x: Tensor, lo: int, hi: int, combine: Callable[[Tensor, Tensor], Tensor],
                  fill: float) -> Tensor:
    """``combine`` of ``x`` over ``[t+lo, t+hi]``, frames outside the axis counting as ``fill``
    (the identity of ``combine``): O(log window) shifts, O(frames · log window) memory.

    As in the exact monitor, a window is anchored at the end that can still be inside the
    axis (future windows run forward from ``t+lo``, past ones backward from ``t+hi``); a
    window around ``t`` is a backward and a disjoint forward part."""
    if lo >= 0:
        return shift(_run(x, hi - lo + 1, combine, fill, 1), lo, fill)
    if hi <= 0:
        return shift(_run(x, hi - lo + 1, combine, fill, -1), hi, fill)
    return combine(_run(x, 1 - lo, combine, fill, -1),
                   shift(_run(x, hi, combine, fill, 1), 1, fill))


@dataclass(frozen=True)
class LogPair:
    """A product-logic value: ``true = log u``, ``false = log(1 − u)``, tensors of one shape."""

    true: Tensor
    false: Tensor
    # an onset/offset atom's rise: ``max(0, p_t − p_{t−1})`` (onset) or ``max(0, p_{t−1} − p_t)``
    # (offset) of its activity, read by the ``rise`` witness; None for any other value
    rise: Tensor | None = None

    @property
    def value(self) -> Tensor:
        """The truth degree ``u`` in [0, 1]."""
        return torch.exp(self.true)


class _Rows:
    """``[rows, frames]`` values whose rows have their own lengths (None: all full)."""

    def __init__(self, shape: torch.Size, lengths: Tensor | None, *, dtype: torch.dtype,
                 device: torch.device) -> None:
        self.shape, self.dtype, self.device = shape, dtype, device
        self.lengths = None if lengths is None else lengths.to(device).reshape(-1, 1)
        self.valid = self.inside(0) if lengths is not None else None

    def inside(self, k: int) -> Tensor:
        """``t + k`` is a frame of the row's clip, ``[rows, frames]`` (or ``[1, frames]``)."""
        at = torch.arange(self.shape[-1], device=self.device) + k
        if self.lengths is None:
            return ((at >= 0) & (at < self.shape[-1]))[None]
        return (at >= 0) & (at < self.lengths)


class ProductOps(_Rows):
    """Product logic (``¬u = 1−u``, ``∧`` product, ``∨`` probabilistic sum, ``F/P/N`` noisy-or
    and ``G/H`` product over the window) on ``[rows, frames]`` values; ``lengths`` gives each
    row's in-clip frames (None: all). ``witness`` relaxes ``F/P/N`` otherwise
    (:meth:`with_witness`, one of ``WITNESSES``)."""

    witness = "noisy_or"

    def with_witness(self, witness: str) -> ProductOps:
        """The same rows with ``F/P/N`` relaxed by ``witness`` (a shallow copy)."""
        if witness not in WITNESSES:
            raise ValueError(f"unknown witness relaxation {witness!r}; choose one of "
                             f"{', '.join(WITNESSES)}")
        if witness == self.witness:
            return self
        other = copy.copy(self)
        other.witness = witness
        return other

    def crisp(self, value: Tensor) -> LogPair:
        """A Boolean tensor as a value (``0`` / ``−inf`` halves)."""
        zero = torch.zeros(value.shape, dtype=self.dtype, device=self.device)
        low = torch.full_like(zero, NEG_INF)
        return LogPair(torch.where(value, zero, low), torch.where(value, low, zero))

    def const(self, value: bool) -> LogPair:
        return self.crisp(torch.full(self.shape, value, dtype=torch.bool, device=self.device))

    def not_(self, x: LogPair) -> LogPair:
        return LogPair(x.false, x.true)

    def and_(self, x: LogPair, y: LogPair) -> LogPair:
        true = x.true + y.true
        return LogPair(true, log1mexp(true))

    def or_(self, x: LogPair, y: LogPair) -> LogPair:
        false = x.false + y.false
        return LogPair(log1mexp(false), false)

    and_exact, or_exact = and_, or_

    def shift(self, x: LogPair, k: int, fill: bool) -> LogPair:
        on, off = (0.0, NEG_INF) if fill else (NEG_INF, 0.0)
        true, false = shift(x.true, k, on), shift(x.false, k, off)
        if k > 0 and self.lengths is not None:  # past a row's own end: the fill
            inside = self.inside(k)
            true, false = torch.where(inside, true, on), torch.where(inside, false, off)
        return LogPair(true, false)

    def _in_clip(self, x: Tensor) -> Tensor:
        """``x`` with out-of-clip frames set to 0, the identity of a sum of logs."""
        return x if self.valid is None else torch.where(self.valid, x, torch.zeros_like(x))

    def window_any(self, x: LogPair, lo: int, hi: int) -> LogPair:
        """``∃`` over ``[t+lo, t+hi]`` inside the clip, by ``witness``; false on an empty
        window. ``noisy_or``: ``1 − ∏(1 − u)``."""
        if self.witness == "exactly_one":
            return self._exactly_one(x, lo, hi)
        if self.witness == "linear_softmax":
            return self._linear_softmax(x, lo, hi)
        if self.witness == "softmax_max":
            return self._softmax_max(x, lo, hi)
        if self.witness == "rise" and x.rise is not None:
            return self._rise(x.rise, lo, hi)
        false = window_reduce(self._in_clip(x.false), lo, hi, torch.add, 0.0)
        return LogPair(log1mexp(false), false)

    def _window_parts(self, x: LogPair) -> tuple[Tensor, Tensor, Tensor]:
        """``log u``, ``log(1 − u)`` at the full ``[rows, frames]`` shape, and the in-clip mask."""
        shape = torch.broadcast_shapes(x.true.shape, self.shape)
        inside = self.inside(0).expand(shape)
        return x.true.expand(shape), x.false.expand(shape), inside

    def _exactly_one(self, x: LogPair, lo: int, hi: int) -> LogPair:
        """P(exactly one frame of the window holds) under independent frames (the semantic
        loss of Xu et al. 2018), by the closed form ``∏(1 − u) · Σ u/(1 − u)`` in log space:
        ``Σ log(1 − u) + logsumexp(log u − log(1 − u))`` over the frames with ``u < 1``; with
        one sure frame (``u = 1``) it is the product of the others' ``1 − u``, with two or
        more 0. O(frames · log window). On crisp inputs: exactly one true frame, not at least
        one."""
        true, false, inside = self._window_parts(x)
        sure = inside & (false == NEG_INF)
        unsure = inside & ~sure
        log_q = torch.where(unsure, false, 0.0)
        ratio = torch.where(unsure, (true - false).clamp(min=FLOOR), FLOOR)
        total_q = window_reduce(log_q, lo, hi, torch.add, 0.0)
        odds = window_reduce(ratio, lo, hi, torch.logaddexp, FLOOR)
        n_sure = window_reduce(sure.to(true.dtype), lo, hi, torch.add, 0.0)
        one = torch.where(n_sure == 0, total_q + odds,
                          torch.where(n_sure == 1, total_q, NEG_INF)).clamp(max=0.0)
        one = torch.where(one <= FLOOR / 2, NEG_INF, one)  # no witness at all: exactly 0
        return LogPair(one, log1mexp(one))

    def _linear_softmax(self, x: LogPair, lo: int, hi: int) -> LogPair:
        """Linear-softmax pooling ``Σu² / Σu`` of the window (0 on an all-zero or empty one),
        its complement ``Σu(1 − u) / Σu``. O(frames · log window). On crisp inputs: at least
        one true frame (the exact monitor)."""
        true, false, inside = self._window_parts(x)
        u = torch.where(inside, torch.exp(true), 0.0)
        q = torch.exp(false)
        s1 = window_reduce(u, lo, hi, torch.add, 0.0)
        s2 = window_reduce(u * u, lo, hi, torch.add, 0.0)
        s3 = window_reduce(u * q, lo, hi, torch.add, 0.0)
        some = s1 > 0
        log_s1 = safe_log(torch.where(some, s1, 1.0))
        on = torch.where(some, (safe_log(s2) - log_s1).clamp(max=0.0), NEG_INF)
        off = torch.where(some, (safe_log(s3) - log_s1).clamp(max=0.0), 0.0)
        return LogPair(on, off)

    def _softmax_max(self, x: LogPair, lo: int, hi: int) -> LogPair:
        """Softmax-weighted max ``Σ u·e^{u/τ} / Σ e^{u/τ}`` (``τ = SOFTMAX_TEMPERATURE``), a
        weighted mean, so never above the true max; complement ``Σ (1−u)·e^{u/τ} / Σ e^{u/τ}``,
        both by logsumexp over the window. O(frames · log window). On crisp inputs with ``k``
        of ``m`` window frames true: ``k·e^{1/τ} / (k·e^{1/τ} + m − k)`` — 0 for ``k = 0``,
        1 only for ``k = m``, so *not* the exact monitor."""
        true, false, inside = self._window_parts(x)
        score = torch.exp(true) / SOFTMAX_TEMPERATURE
        weight = torch.where(inside, score, FLOOR)
        on_w = torch.where(inside, true.clamp(min=FLOOR) + score, FLOOR)
        off_w = torch.where(inside, false.clamp(min=FLOOR) + score, FLOOR)
        norm = window_reduce(weight, lo, hi, torch.logaddexp, FLOOR)
        on = window_reduce(on_w, lo, hi, torch.logaddexp, FLOOR) - norm
        off = window_reduce(off_w, lo, hi, torch.logaddexp, FLOOR) - norm
        some = window_reduce(inside.to(true.dtype), lo, hi, torch.add, 0.0) > 0
        on = torch.where(some & (on > FLOOR / 2), on.clamp(max=0.0), NEG_INF)
        off = torch.where(some, torch.where(off > FLOOR / 2, off.clamp(max=0.0), NEG_INF), 0.0)
        return LogPair(on, off)

    def _rise(self, rise: Tensor, lo: int, hi: int) -> LogPair:
        """``min(1, Σ rise)`` over the window: the activity's total rise (onsets) or fall
        (offsets) in it. A ramp counts once however many frames it spans, so weak frames inside
        a run add nothing and moving a boundary toward the window never lowers it; on crisp
        inputs it is the number of boundaries, so ``≥ 1`` exactly as the monitor. O(frames ·
        log window). Windows over other values fall back on ``noisy_or``."""
        shape = torch.broadcast_shapes(rise.shape, self.shape)
        inside = self.inside(0).expand(shape)
        total = window_reduce(torch.where(inside, rise.expand(shape), 0.0), lo, hi, torch.add,
                              0.0)
        value = total.clamp(max=1.0)
        return LogPair(safe_log(value), safe_log(1 - value))

    def window_all(self, x: LogPair, lo: int, hi: int) -> LogPair:
        """Product over ``[t+lo, t+hi]`` inside the clip; true on an empty window."""
        true = window_reduce(self._in_clip(x.true), lo, hi, torch.add, 0.0)
        return LogPair(true, log1mexp(true))

    def until(self, phi: LogPair, psi: LogPair, lo: int, hi: int) -> LogPair:
        """``1 − ∏_s (1 − ψ(t+s) · ∏_{i<s} φ(t+i))`` over ``s ∈ [lo, hi]`` inside the clip (the
        noisy-or of the strong until's witnesses). O(frames · window) time and memory, taken
        a block of frames at a time (``UNTIL_CELLS`` cells per block)."""
        shape = torch.broadcast_shapes(phi.true.shape, psi.true.shape, self.shape)
        width = hi + 1
        phi_t = phi.true.expand(shape)
        psi_t = psi.true.expand(shape)
        if self.valid is not None:  # a witness must lie inside the row's clip
            psi_t = torch.where(self.valid, psi_t, NEG_INF)
        phi_w = F.pad(phi_t, (0, width - 1)).unfold(-1, width, 1)  # [rows, frames, width]
        psi_w = F.pad(psi_t, (0, width - 1), value=NEG_INF).unfold(-1, width, 1)
        n = shape[-1]
        block = max(1, UNTIL_CELLS // max(1, width * shape[0]))
        parts = []
        for first in range(0, n, block):
            ph, ps = phi_w[:, first:first + block], psi_w[:, first:first + block]
            # Σ_{i<s} log φ(t+i): an exclusive running sum (no subtraction, so −inf is exact)
            prefix = torch.cat([torch.zeros_like(ph[..., :1]), ph[..., :-1].cumsum(-1)], -1)
            parts.append(log1mexp(ps[..., lo:] + prefix[..., lo:]).sum(-1))
        false = torch.cat(parts, -1) if parts else torch.zeros(shape, dtype=phi_t.dtype,
                                                                 device=phi_t.device)
        return LogPair(log1mexp(false), false)


@dataclass(frozen=True)
class Bounds:
    """Smooth robustness with its certificate: ``lower ≤ exact robustness ≤ upper``."""

    lower: Tensor
    upper: Tensor


class SoundOps(_Rows):
    """Smooth robustness: ``max`` by ``LSE_β − log(m)/β`` (a lower bound) and ``LSE_β`` (an
    upper bound), ``min`` likewise mirrored, with ``β = log(m)/ε`` for the ``m`` elements of
    each node, so each node widens the certified interval by at most ``ε`` (``node_eps``).
    Values saturate at ``±limit``: an empty ``F`` window is ``−limit``, an empty ``G`` ``+limit``.
    """

    def __init__(self, shape: torch.Size, lengths: Tensor | None, *, dtype: torch.dtype,
                 device: torch.device, node_eps: float, limit: float) -> None:
        super().__init__(shape, lengths, dtype=dtype, device=device)
        self.node_eps, self.limit = node_eps, limit

    def crisp(self, value: Tensor) -> Bounds:
        """A Boolean tensor as robustness ``±limit`` (certainly true or false)."""
        r = torch.where(value, self.limit, -self.limit).to(self.dtype)
        return Bounds(r, r)

    def real(self, value: Tensor) -> Bounds:
        """A real-valued signal (positive = true), saturated at ``±limit``."""
        r = value.to(self.dtype).clamp(-self.limit, self.limit)
        return Bounds(r, r)

    def const(self, value: bool) -> Bounds:
        return self.crisp(torch.full(self.shape, value, dtype=torch.bool, device=self.device))

    def not_(self, x: Bounds) -> Bounds:
        return Bounds(-x.upper, -x.lower)

    def _beta(self, m: int) -> float:
        return math.log(m) / self.node_eps

    def _smooth_max(self, lower: Tensor, upper: Tensor, m: int,
                    reduce: Callable[[Tensor, float], Tensor]) -> Bounds:
        """``reduce(z, fill)`` combines β-scaled values by ``logaddexp``; ``m`` elements."""
        if m <= 1:
            return Bounds(reduce(lower, 1.0), reduce(upper, 1.0))
        beta = self._beta(m)
        return Bounds(reduce(beta * lower, beta) / beta - math.log(m) / beta,
                      reduce(beta * upper, beta) / beta)

    def _max2(self, x: Bounds, y: Bounds) -> Bounds:
        beta = self._beta(2)
        return Bounds(torch.logaddexp(beta * x.lower, beta * y.lower) / beta - LN2 / beta,
                      torch.logaddexp(beta * x.upper, beta * y.upper) / beta)

    def or_(self, x: Bounds, y: Bounds) -> Bounds:
        return self._max2(x, y)

    def and_(self, x: Bounds, y: Bounds) -> Bounds:
        return self.not_(self._max2(self.not_(x), self.not_(y)))

    def or_exact(self, x: Bounds, y: Bounds) -> Bounds:
        return Bounds(torch.maximum(x.lower, y.lower), torch.maximum(x.upper, y.upper))

    def and_exact(self, x: Bounds, y: Bounds) -> Bounds:
        return Bounds(torch.minimum(x.lower, y.lower), torch.minimum(x.upper, y.upper))

    def shift(self, x: Bounds, k: int, fill: bool) -> Bounds:
        value = self.limit if fill else -self.limit
        lower, upper = shift(x.lower, k, value), shift(x.upper, k, value)
        if k > 0 and self.lengths is not None:
            inside = self.inside(k)
            lower = torch.where(inside, lower, value)
            upper = torch.where(inside, upper, value)
        return Bounds(lower, upper)

    def _in_clip(self, x: Tensor, value: float) -> Tensor:
        return x if self.valid is None else torch.where(self.valid, x, value)

    def window_any(self, x: Bounds, lo: int, hi: int) -> Bounds:
        """Smooth max over ``[t+lo, t+hi]`` inside the clip; ``−limit`` on an empty window."""
        def reduce(z: Tensor, beta: float) -> Tensor:
            floor = -self.limit * beta
            return window_reduce(self._in_clip(z, floor), lo, hi, torch.logaddexp, floor)
        return self._smooth_max(x.lower, x.upper, hi - lo + 1, reduce)

    def window_all(self, x: Bounds, lo: int, hi: int) -> Bounds:
        return self.not_(self.window_any(self.not_(x), lo, hi))

    def until(self, phi: Bounds, psi: Bounds, lo: int, hi: int) -> Bounds:
        """``max_s min(ψ(t+s), min_{i<s} φ(t+i))`` over ``s ∈ [lo, hi]`` inside the clip: an
        inner smooth min (at most ``hi+1`` elements) and an outer smooth max (``hi−lo+1``
        terms), so an until node spends two node budgets. O(frames · window)."""
        inner_m, outer_m = hi + 1, hi - lo + 1
        inner_b = self._beta(inner_m) if inner_m > 1 else None
        outer_b = self._beta(outer_m) if outer_m > 1 else None
        floor = -self.limit

        def bound(phi_x: Tensor, psi_x: Tensor, upper: bool) -> Tensor:
            running = None   # smooth min so far of φ(t+i), i < s, as −LSE(−β·φ)
            terms = None     # smooth max so far of the witness terms
            for s in range(hi + 1):
                if s >= lo:
                    candidate = shift(psi_x, s, floor)
                    inside = self.inside(s)
                    term = _smooth_min_join(running, candidate, inner_b, inner_m, upper)
                    term = torch.where(inside, term, floor)
                    terms = term if terms is None else _join_max(terms, term, outer_b)
                if s < hi:
                    phi_s = shift(phi_x, s, self.limit)
                    running = phi_s if running is None else _join_min(running, phi_s, inner_b)
            return _finish_max(terms, outer_b, outer_m, upper)

        return Bounds(bound(phi.lower, psi.lower, False), bound(phi.upper, psi.upper, True))


def _join_min(acc: Tensor, x: Tensor, beta: float | None) -> Tensor:
    """Running smooth min as ``−LSE_β(−·)``, unfinished (no log(m) correction)."""
    if beta is None:
        return torch.minimum(acc, x)
    return -torch.logaddexp(-beta * acc, -beta * x) / beta


def _smooth_min_join(running: Tensor | None, x: Tensor, beta: float | None, m: int,
                     upper: bool) -> Tensor:
    """Smooth min of ``running`` (a smooth min so far) and ``x``; the upper bound adds
    ``log(m)/β`` (the bound for at most ``m`` elements)."""
    value = x if running is None else _join_min(running, x, beta)
    if upper and beta is not None:
        value = value + math.log(m) / beta
    return value


def _join_max(acc: Tensor, x: Tensor, beta: float | None) -> Tensor:
    if beta is None:
        return torch.maximum(acc, x)
    return torch.logaddexp(beta * acc, beta * x) / beta


def _finish_max(acc: Tensor, beta: float | None, m: int, upper: bool) -> Tensor:
    if beta is None or upper:
        return acc
    return acc - math.log(m) / beta
