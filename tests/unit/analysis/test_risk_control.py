"""p-values of "the risk exceeds α" and fixed-sequence testing (the statistics of certified
decisions): exact validity for 0/1 losses at the boundary of the null (every outcome's
probability summed, no simulation), a hand-computed case, the Hoeffding–Bentkus bound never
below the binomial tail it relaxes, and what the naive rule (accept when the empirical risk is
at most α) does instead."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from sedcontract.analysis.risk_control import fixed_sequence, risk_p_value
from sedcontract.errors import SedContractError


@pytest.mark.parametrize("units", [1, 7, 50, 212])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3])
@pytest.mark.parametrize("binary", [True, False])
def test_the_p_value_is_valid_at_the_boundary_of_the_null(units, alpha, binary):
    """With risk exactly α (the hardest true hypothesis), P(p ≤ u) ≤ u for every level u:
    summed exactly over the binomial's outcomes. The naive rule, empirical risk ≤ α, accepts
    with probability near one half instead."""
    outcomes = np.arange(units + 1)
    chance = binom.pmf(outcomes, units, alpha)
    p = np.array([risk_p_value(int(k), units, alpha, binary=binary) for k in outcomes])
    for level in (0.01, 0.05, 0.1, 0.2, 0.5):
        assert chance[p <= level].sum() <= level + 1e-12, level
    naive = chance[outcomes <= alpha * units].sum()
    if units >= 50:  # a threshold at the edge is accepted about half the time: far above δ
        assert naive > 0.45


def test_a_hand_computed_case():
    """No loss among 10 units, α = 1/2: the binomial tail is 2⁻¹⁰, and Hoeffding gives
    exp(−10·log 2) = 2⁻¹⁰ too; the Bentkus term is e times larger."""
    assert risk_p_value(0, 10, 0.5, binary=True) == pytest.approx(2 ** -10, rel=1e-12)
    assert risk_p_value(0, 10, 0.5) == pytest.approx(2 ** -10, rel=1e-12)
    assert risk_p_value(5, 10, 0.5) == 1.0  # an empirical risk at α: no evidence at all


def test_bounded_losses_are_never_more_certain_than_whole_counts():
    """The Hoeffding–Bentkus p-value of losses in [0, 1] is at least the exact tail of the
    same sum counted as 0/1 losses: the price of not knowing the losses are binary; and the
    p-value grows with the losses."""
    for units, alpha in ((30, 0.1), (200, 0.05)):
        previous = 0.0
        for losses in np.linspace(0, units, 41):
            p = risk_p_value(float(losses), units, alpha)
            assert p >= previous - 1e-15
            previous = p
            whole = math.floor(losses)
            assert p >= risk_p_value(whole, units, alpha, binary=True) - 1e-15


def test_fixed_sequence_stops_at_the_first_failure():
    assert fixed_sequence([0.01, 0.02, 0.3, 0.01], 0.1) == 2
    assert fixed_sequence([0.2, 0.01], 0.1) == 0
    assert fixed_sequence([0.05, 0.1], 0.1) == 2  # p = δ is rejected (P(p ≤ δ) ≤ δ)
    assert fixed_sequence([0.01, math.nan, 0.01], 0.1) == 1  # no p-value: no certificate
    assert fixed_sequence([], 0.1) == 0


def test_no_unit_gives_no_evidence_and_bad_arguments_are_refused():
    assert risk_p_value(0, 0, 0.1) == 1.0
    for args, kwargs, message in (((1, 5, 0.0), {}, "alpha"), ((1, 5, 1.5), {}, "alpha"),
                                  ((6, 5, 0.1), {}, "losses"), ((-1, 5, 0.1), {}, "losses"),
                                  ((1, -5, 0.1), {}, "units"), ((1.5, 5, 0.1),
                                                                 {"binary": True}, "whole"),
                                  ((math.nan, 5, 0.1), {}, "losses")):
        with pytest.raises(SedContractError, match=message):
            risk_p_value(*args, **kwargs)
    with pytest.raises(SedContractError, match="delta"):
        fixed_sequence([0.01], 1.0)


def test_one_count_of_units_per_sum_gives_each_its_own_p_value():
    """The units counted may differ per threshold (a clip counts where it has an
    obligation): an array of counts gives each sum the p-value of its own count."""
    sums = np.array([0.0, 3.5, 0.0, 0.0])
    units = np.array([10, 40, 0, 7])
    got = risk_p_value(sums, units, 0.2)
    want = [risk_p_value(float(s), int(n), 0.2) for s, n in zip(sums, units, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[2] == 1.0  # no unit, no evidence
    with pytest.raises(SedContractError, match="one per sum"):
        risk_p_value(sums, units[:3], 0.2)
    with pytest.raises(SedContractError, match="their units"):
        risk_p_value(np.array([5.0]), np.array([4]), 0.2)
