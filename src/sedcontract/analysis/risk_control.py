"""Finite-sample risk control, the statistics a certified decision rests on: p-values of the
hypothesis "the risk exceeds α" from exchangeable units' bounded losses, and fixed-sequence
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

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number, is_whole


def _divergence(a: float, b: float) -> float:
    """The Bernoulli relative entropy ``h1(a, b) = a log(a/b) + (1 − a) log((1 − a)/(1 − b))``
    (``0 log 0 = 0``)."""
    out = 0.0
    if a > 0:
        out += a * math.log(a / b)
    if a < 1:
        out += (1 - a) * math.log((1 - a) / (1 - b))
    return out


def risk_p_value(losses: float, units: int, alpha: float, *, binary: bool = False) -> float:
    """The p-value of "the risk exceeds ``alpha``" from ``units`` exchangeable units whose
    losses, each in [0, 1], sum to ``losses``. With ``binary`` (every loss 0 or 1, so
    ``losses`` is a whole count) the exact binomial tail ``P(Bin(units, α) ≤ losses)``;
    otherwise the Hoeffding–Bentkus bound ``min(exp(−n·h1(r̂ ∧ α, α)), e·P(Bin(n, α) ≤
    ⌈n·r̂⌉))`` (the Hoeffding–Bentkus p-value of both papers above). No unit: 1."""
    from scipy.stats import binom  # imported where used: ``import sedcontract`` stays light

    if not is_whole(units, numpy=True) or units < 0:
        raise SedContractError(f"units must be a whole number >= 0, got {units!r}")
    if not is_number(alpha, numpy=True) or not 0 < alpha < 1:
        raise SedContractError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if not is_number(losses, numpy=True) or not 0 <= losses <= units:
        raise SedContractError(f"losses must sum to a number in [0, units={units}], got "
                               f"{losses!r}")
    if binary and not is_whole(losses, numpy=True):
        raise SedContractError(f"binary losses sum to a whole count, got {losses!r}")
    if units == 0:
        return 1.0
    if binary:
        return min(1.0, float(binom.cdf(int(losses), units, alpha)))
    mean = losses / units
    hoeffding = math.exp(-units * _divergence(min(mean, alpha), alpha))
    bentkus = math.e * float(binom.cdf(math.ceil(losses), units, alpha))
    return min(1.0, hoeffding, bentkus)


def fixed_sequence(p_values: Sequence[float], delta: float) -> int:
    """How many hypotheses, tested in the given order (fixed before the data: the most
    conservative threshold first), are rejected at level ``delta``: those before the first
    ``p > delta``. The family-wise error rate is at most ``delta`` under any dependence."""
    if not is_number(delta, numpy=True) or not 0 < delta < 1:
        raise SedContractError(f"delta must be a number in (0, 1), got {delta!r}")
    for k, p in enumerate(p_values):
        if not is_number(p, numpy=True) or math.isnan(p) or p > delta:
            return k
    return len(p_values)
