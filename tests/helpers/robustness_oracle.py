"""Exact robustness (max/min semantics, saturated at ±limit) for the tests of the sound soft
semantics: the monitor's generic tree walk and idempotent window operators over a numpy
max/min backend, with atoms derived here from the definitions of docs/architecture.md."""

from __future__ import annotations

import numpy as np

from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.syntax import Formula


class MaxMinOps:
    """``∧ = min``, ``∨ = max``, ``¬ = −``; frames outside a row's clip are ``±limit``."""

    def __init__(self, lengths: np.ndarray, n: int, limit: float) -> None:
        self.lengths, self.n, self.limit = lengths[:, None], n, limit

    def const(self, value: bool) -> np.ndarray:
        return np.full((len(self.lengths), self.n), self.limit if value else -self.limit)

    def shift(self, x: np.ndarray, k: int, fill: bool) -> np.ndarray:
        x = np.broadcast_to(x, (len(self.lengths), self.n))
        out = np.full_like(x, self.limit if fill else -self.limit)
        t = np.arange(self.n)
        source = t + k
        inside = (source >= 0) & (source < self.lengths)
        rows, cols = np.nonzero(inside)
        out[rows, cols] = x[rows, source[cols]]
        return out

    def and_(self, x, y):
        return np.minimum(x, y)

    def or_(self, x, y):
        return np.maximum(x, y)

    def not_(self, x):
        return -x


def derived(r: np.ndarray, lengths: np.ndarray, kind: str, edges: str,
            limit: float) -> np.ndarray:
    """Robustness of ``active``/``onset``/``offset`` from a real signal ``r`` (positive =
    active)."""
    n = r.shape[-1]
    t = np.arange(n)
    inside = t < lengths[:, None]
    active = np.where(inside, np.clip(r, -limit, limit), -limit)
    if kind == "active":
        return active
    previous = np.concatenate([np.full((len(r), 1), -limit), active[:, :-1]], axis=1)
    if kind == "onset":
        value = np.minimum(active, -previous)
        if edges == "open":
            value[:, 0] = -limit
        return np.where(inside, value, -limit)
    value = np.where(inside & (t > 0), np.minimum(-active, previous), -limit)
    if edges == "closed":
        last = (t == lengths[:, None] - 1)
        value = np.where(last, np.maximum(value, active), value)
    return value


def robustness(formula: Formula, signals: dict[str, np.ndarray], lengths: np.ndarray,
               edges: str, limit: float) -> np.ndarray:
    """Exact robustness of ``formula`` at every frame; ``signals`` maps ``ref.active`` /
    ``pred.active`` to real ``[rows, frames]`` arrays."""
    n = next(iter(signals.values())).shape[-1]
    ops = MaxMinOps(lengths, n, limit)
    return np.broadcast_to(evaluate_tree(
        formula, ops, lambda atom: derived(signals[f"{atom.side}.active"], lengths, atom.kind,
                                           edges, limit), BoundResolver()), (len(lengths), n))
