"""Finite-sample risk control, the statistics a certified decision rests on: p-values of the
hypothesis "the risk exceeds α" from independent units' bounded losses, and fixed-sequence
testing along an order fixed before the data (Learn then Test: Angelopoulos, Bates, Candès,
Jordan and Lei, 2021, arXiv 2110.01052; risk-controlling prediction sets: Bates, Angelopoulos,
Lei, Malik and Jordan, 2021, arXiv 2101.02703).

A p-value ``p`` is valid when ``P(p ≤ u) ≤ u`` for every ``u`` whenever the risk is above α.
Testing the thresholds in a fixed order and stopping at the first ``p > δ`` rejects a true
hypothesis with probability at most δ (fixed-sequence testing, Bauer 1991), so every threshold
it passes has risk ≤ α with probability ≥ 1 − δ over the calibration draw. Losses are summed as
given; whole counts (0/1 losses) give the exact binomial tail, others the Hoeffding–Bentkus
bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number, is_whole


def _divergence(a: np.ndarray, b: float) -> np.ndarray:
    """The Bernoulli relative entropy ``h1(a, b) = a log(a/b) + (1 − a) log((1 − a)/(1 − b))``
    (``0 log 0 = 0``), elementwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(a > 0, a * np.log(a / b), 0.0)
        right = np.where(a < 1, (1 - a) * np.log((1 - a) / (1 - b)), 0.0)
    return left + right


def risk_p_value(losses: Any, units: Any, alpha: float, *, binary: bool = False) -> Any:
    """The p-value of "the risk exceeds ``alpha``" from ``units`` independent, identically
    distributed units whose losses, each in [0, 1], sum to ``losses`` (a number, or an array
    of sums with one count of units each, or one for all: a p-value each). With ``binary``
    (every loss 0 or 1, known before the data, so ``losses`` is a whole count) the exact
    binomial tail ``P(Bin(units, α) ≤ losses)``; otherwise the Hoeffding–Bentkus bound
    ``min(exp(−n·h1(r̂ ∧ α, α)), e·P(Bin(n, α) ≤ ⌈n·r̂⌉))`` (the Hoeffding–Bentkus p-value of
    both papers above; ``n·r̂`` is the sum itself, never a mean multiplied back). No unit: 1."""
    from scipy.stats import binom  # imported where used: ``import sedcontract`` stays light

    if np.ndim(units) == 0:
        if not is_whole(units, numpy=True) or units < 0:
            raise SedContractError(f"units must be a whole number >= 0, got {units!r}")
    elif not (np.issubdtype(np.asarray(units).dtype, np.integer) and np.all(
            np.asarray(units) >= 0) and np.shape(units) == np.shape(losses)):
        raise SedContractError("units must be whole numbers >= 0, one per sum of losses")
    if not is_number(alpha, numpy=True) or not 0 < alpha < 1:
        raise SedContractError(f"alpha must be a number in (0, 1), got {alpha!r}")
    scalar = np.ndim(losses) == 0
    if scalar and not is_number(losses, numpy=True):
        raise SedContractError(f"losses must sum to a number in [0, units={units}], got "
                               f"{losses!r}")
    sums = np.asarray(losses, dtype=np.float64)
    n = np.asarray(units, dtype=np.int64)
    if not np.all((sums >= 0) & (sums <= n)):  # NaN fails too
        raise SedContractError(f"losses must sum to a number in [0, units={units}], got "
                               f"{losses!r}" if scalar else
                               "losses must sum to numbers in [0, their units]")
    if binary and (np.any(sums != np.floor(sums)) or (scalar and not is_whole(
            losses, numpy=True))):
        raise SedContractError(f"binary losses sum to a whole count, got {losses!r}")
    if binary:
        out = binom.cdf(sums, n, alpha)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(n > 0, sums / np.maximum(n, 1), 0.0)
        hoeffding = np.exp(-n * _divergence(np.minimum(mean, alpha), alpha))
        bentkus = math.e * binom.cdf(np.ceil(sums), n, alpha)
        out = np.minimum(hoeffding, bentkus)
    out = np.where(n > 0, np.minimum(1.0, out), 1.0)
    return float(out) if scalar else out


def fixed_sequence(p_values: Sequence[float], delta: float) -> int:
    """How many hypotheses, tested in the given order (fixed before the data: the most
    conservative threshold first), are rejected at level ``delta``: those before the first
    ``p > delta``. The family-wise error rate is at most ``delta`` under any dependence."""
    check_delta(delta)
    for k, p in enumerate(p_values):
        if not is_number(p, numpy=True) or math.isnan(p) or p > delta:
            return k
    return len(p_values)


def holm(p_values: Sequence[float], delta: float) -> np.ndarray:
    """Which hypotheses Holm's step-down procedure rejects at level ``delta`` (the k-th
    smallest p-value against ``delta / (m − k)``, stopping at the first that fails): the
    family-wise error rate is at most ``delta`` under any dependence (Holm 1979). A NaN
    p-value is never rejected and counts in ``m``."""
    check_delta(delta)
    p = np.asarray(p_values, dtype=np.float64)
    rejected = np.zeros(len(p), dtype=bool)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    for k, i in enumerate(order):
        if not p[i] <= delta / (len(p) - k):
            break
        rejected[i] = True
    return rejected


def bonferroni(p_values: Sequence[float], delta: float) -> np.ndarray:
    """Which hypotheses Bonferroni's correction rejects at level ``delta``: ``p ≤ δ/m``."""
    check_delta(delta)
    p = np.asarray(p_values, dtype=np.float64)
    return p <= delta / max(len(p), 1)


def check_delta(delta: Any, name: str = "delta") -> None:
    """Refuse a δ (the chance a guarantee may fail) outside (0, 1), naming it as ``name``."""
    if not is_number(delta, numpy=True) or not 0 < delta < 1:
        raise SedContractError(f"{name} must be a number in (0, 1), got {delta!r}")
