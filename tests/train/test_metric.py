"""``SoftClauseMetric``: the soft relaxation's validation numbers as sum states per clause, so
``1 − Σ violations / Σ obligations`` is the same on 1 or N processes, and a clause without
obligations is left out (never NaN, never 1.0)."""

from __future__ import annotations

import math

import pytest
import torch

from sedcontract.contracts.soft import ClauseTerms
from sedcontract.errors import SedContractError
from sedcontract.lightning.metric import SoftClauseMetric
from tests.helpers.torch_scores import HostCopies

NAMES = ["onset", "missed", "silence"]


def terms(**values: tuple[float, float]) -> dict[str, ClauseTerms]:
    """Hand-made terms, violations in float32 with a gradient as a training step makes them."""
    return {n: ClauseTerms(torch.tensor(v, requires_grad=True), torch.tensor(o))
            for n, (v, o) in values.items()}


BATCHES = [terms(onset=(1.5, 4.0), missed=(0.25, 2.0), silence=(0.0, 0.0)),
           terms(onset=(0.5, 4.0), silence=(0.0, 0.0)),  # no 'missed' term in this batch
           terms(onset=(0.1, 2.0), missed=(1.0, 3.0), silence=(0.0, 0.0))]


def test_each_clause_is_one_minus_pooled_violations_over_pooled_obligations():
    metric = SoftClauseMetric(NAMES)
    with HostCopies() as copies:
        for batch in BATCHES:
            metric.update(batch)
    assert copies.copies == 0  # updates stay on the device; compute reads the sums
    got = metric.compute()
    assert list(got) == ["onset", "missed"]  # silence had no obligations: left out
    expected = {}
    for name in ("onset", "missed"):  # the accumulator it replaces: float sums on the host
        v = sum(float(b[name].violations.detach()) for b in BATCHES if name in b)
        o = sum(float(b[name].obligations) for b in BATCHES if name in b)
        expected[name] = 1 - v / o
    assert got == expected
    assert got["onset"] == pytest.approx(1 - 2.1 / 10)
    assert not metric.violations.requires_grad and metric.violations.dtype == torch.float64


def test_merged_states_equal_one_metric_over_all_batches():
    single = SoftClauseMetric(NAMES)
    for batch in BATCHES:
        single.update(batch)
    first, second = SoftClauseMetric(NAMES), SoftClauseMetric(NAMES)
    first.update(BATCHES[0])
    second.update(BATCHES[1])
    second.update(BATCHES[2])
    summed = {k: getattr(first, k) + getattr(second, k) for k in ("violations", "obligations")}
    first.merge_state(second)  # what the sum reduction does across processes
    assert first.compute() == single.compute()
    assert all(torch.equal(getattr(first, k), v) for k, v in summed.items())


def test_no_obligations_anywhere_gives_no_numbers_and_reset_clears():
    metric = SoftClauseMetric(NAMES)
    metric.update(terms(onset=(0.0, 0.0)))
    assert metric.compute() == {}
    metric.update(terms(onset=(1.0, 2.0)))
    assert metric.compute() == {"onset": 0.5}
    metric.reset()
    metric.update(terms(missed=(1.0, 4.0)))
    value = metric.compute()
    assert value == {"missed": 0.75} and not any(math.isnan(v) for v in value.values())


def test_unknown_or_repeated_clauses_are_refused():
    with pytest.raises(SedContractError, match="distinct"):
        SoftClauseMetric(["onset", "onset"])
    with pytest.raises(SedContractError, match="'offset' is not one of the monitored"):
        SoftClauseMetric(NAMES).update(terms(offset=(1.0, 2.0)))
