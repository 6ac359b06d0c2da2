"""The bounded temporal operators, written once over an element-generic backend.

Each operator is a few whole-trace shifts padded with the identity element of its
combination (False for ∃, True for ∀), so truncated windows at the trace ends come out as
docs/architecture.md states: strong F/P/N/U (false on an empty window), weak G/H (true). Windows of
length L cost O(log L) shifts by doubling. The same code runs on numpy arrays (the monitor),
on torch tensors, and on lists of z3 Booleans (the bounded-equivalence proofs).
"""

from __future__ import annotations

from typing import Any, Protocol

T = Any


class Ops(Protocol):
    """Element-wise Boolean algebra plus a shift along time on one backend."""

    def shift(self, x: T, k: int, fill: bool) -> T:
        """``y[t] = x[t+k]`` where ``t+k`` is inside the trace, else ``fill``."""

    def and_(self, x: T, y: T) -> T: ...

    def or_(self, x: T, y: T) -> T: ...

    def not_(self, x: T) -> T: ...

    def const(self, value: bool) -> T: ...


# A backend whose combination is not idempotent (soft logic, where a frame counted twice
# changes the value) brings its own ``window_any``, ``window_all`` and ``until`` methods with
# the same signatures; the functions below defer to them.


def _sliding(ops: Ops, x: T, length: int, combine, fill: bool, step: int = 1) -> T:
    """``y[t] = combine(x[t], x[t+step], …)`` over ``length`` frames (``step`` = ±1), frames
    outside the trace counting as ``fill``; O(log length) shifts by doubling."""
    span, acc = 1, x
    while 2 * span <= length:
        acc = combine(acc, ops.shift(acc, step * span, fill))
        span *= 2
    if length > span:  # two overlapping power-of-two windows cover the rest (idempotent)
        acc = combine(acc, ops.shift(acc, step * (length - span), fill))
    return acc


def _window(ops: Ops, x: T, a: int, b: int, combine, fill: bool) -> T:
    """``combine`` of ``x`` over ``[t+a, t+b]`` clipped to the trace (``fill`` if empty).

    A window is anchored at the end that can still be inside the trace: future windows run
    forward from ``t+a``, past windows backward from ``t+b``, and a window around ``t`` is
    the union of a backward and a forward half, so clipping at either end is exact.
    """
    if a >= 0:
        return ops.shift(_sliding(ops, x, b - a + 1, combine, fill), a, fill)
    if b <= 0:
        return ops.shift(_sliding(ops, x, b - a + 1, combine, fill, step=-1), b, fill)
    return combine(_sliding(ops, x, 1 - a, combine, fill, step=-1),
                   _sliding(ops, x, b + 1, combine, fill))


def window_any(ops: Ops, x: T, a: int, b: int) -> T:
    """``∃ s ∈ [t+a, t+b]`` inside the trace with ``x[s]``; False on an empty window."""
    if hasattr(ops, "window_any"):
        return ops.window_any(x, a, b)
    return _window(ops, x, a, b, ops.or_, False)


def window_all(ops: Ops, x: T, a: int, b: int) -> T:
    """``∀ s ∈ [t+a, t+b]`` inside the trace, ``x[s]``; True on an empty window."""
    if hasattr(ops, "window_all"):
        return ops.window_all(x, a, b)
    return _window(ops, x, a, b, ops.and_, True)


def neighbourhood(ops: Ops, x: T, e: int) -> T:
    """``N[e] x``: some frame within ``e`` of ``t`` on either side."""
    return window_any(ops, x, -e, e)


def eventually(ops: Ops, x: T, a: int, b: int) -> T:
    """``F[a:b] x``."""
    return window_any(ops, x, a, b)


def always(ops: Ops, x: T, a: int, b: int) -> T:
    """``G[a:b] x``."""
    return window_all(ops, x, a, b)


def once(ops: Ops, x: T, a: int, b: int) -> T:
    """``P[a:b] x``: ``∃ s ∈ [t−b, t−a]``."""
    return window_any(ops, x, -b, -a)


def historically(ops: Ops, x: T, a: int, b: int) -> T:
    """``H[a:b] x``: ``∀ s ∈ [t−b, t−a]``."""
    return window_all(ops, x, -b, -a)


def until(ops: Ops, phi: T, psi: T, a: int, b: int) -> T:
    """``phi U[a:b] psi``: ``∃ s ∈ [t+a, t+b]`` with ``psi[s]`` and ``phi`` on ``[t, s)``.

    Built from pairs ``(U_m, A_m)``: ``U_m`` = a witness among the next ``m`` frames with
    ``phi`` before it, ``A_m`` = ``phi`` on all of the next ``m`` frames. Pairs compose as
    ``U_{m+k} = U_m ∨ (A_m ∧ U_k≫m)``, ``A_{m+k} = A_m ∧ A_k≫m``, giving O(log(b−a)) shifts.
    """
    if hasattr(ops, "until"):
        return ops.until(phi, psi, a, b)

    def compose(first, second, m):
        u1, a1 = first
        u2, a2 = second
        return (ops.or_(u1, ops.and_(a1, ops.shift(u2, m, False))),
                ops.and_(a1, ops.shift(a2, m, True)))

    length = b - a + 1
    power, size = (psi, phi), 1
    acc, acc_size = None, 0
    while True:
        if length & size:
            acc = power if acc is None else compose(acc, power, acc_size)
            acc_size += size
        if 2 * size > length:
            break
        power = compose(power, power, size)
        size *= 2
    witness = ops.shift(acc[0], a, False)
    if a == 0:
        return witness
    return ops.and_(window_all(ops, phi, 0, a - 1), witness)
