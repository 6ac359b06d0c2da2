"""The torch backend of the exact monitor equals the numpy monitor on random formulas and
ragged batches (the same semantics inside validation)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sedcontract.contracts import evaluate_formula
from sedcontract.contracts.torch_backend import evaluate_formula_torch
from sedcontract.errors import SignalError
from tests.helpers.formulas import ATOMS, formula_strategy


@settings(max_examples=150)
@given(formula_strategy(max_bound=8), st.lists(st.integers(0, 30), min_size=1, max_size=4),
       st.data())
def test_torch_equals_numpy(formula, lengths, data):
    n = max(lengths)
    batch = {a.name: data.draw(arrays(bool, (len(lengths), n))) for a in ATOMS}
    expected = evaluate_formula(formula, batch, lengths=lengths)
    got = evaluate_formula_torch(formula, {k: torch.from_numpy(v) for k, v in batch.items()},
                                 lengths=torch.tensor(lengths))
    assert np.array_equal(got.numpy(), expected)


def test_time_bounds_and_unknown_atoms():
    x = torch.tensor([[False, False, True, False, False]])
    out = evaluate_formula_torch("N[20ms] ref.active", {"ref.active": x}, hop=0.02)
    assert out.tolist() == [[False, True, True, True, False]]
    with pytest.raises(SignalError, match=r"unknown atom 'pred\.active'"):
        evaluate_formula_torch("pred.active", {"ref.active": x})
