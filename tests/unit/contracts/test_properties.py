"""Property tests (hypothesis): dualities, monotonicity in the bound, time reversal, clip
isolation in batches, the per-frame definition as oracle, and parse ∘ print = identity."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sedcontract.contracts import evaluate_formula, format_formula, parse_formula
from tests.helpers.formulas import ATOMS, formula_strategy, frame_definition

traces = st.integers(0, 40).flatmap(lambda n: arrays(bool, (n,)))
bounds = st.integers(0, 12)


def run(text: str, x: np.ndarray) -> np.ndarray:
    return evaluate_formula(text, {"ref.active": x})


@given(traces, bounds, bounds)
def test_always_is_not_eventually_not(x, a, b):
    a, b = min(a, b), max(a, b)
    assert np.array_equal(run(f"G[{a}:{b}] ref.active", x), run(f"!F[{a}:{b}] !ref.active", x))


@given(traces, bounds, bounds)
def test_historically_is_not_once_not(x, a, b):
    a, b = min(a, b), max(a, b)
    assert np.array_equal(run(f"H[{a}:{b}] ref.active", x), run(f"!P[{a}:{b}] !ref.active", x))


@given(traces, bounds, st.integers(0, 5))
def test_monotone_in_the_bound(x, e, extra):
    """Widening a window: ∃-operators can only gain frames, ∀-operators only lose them."""
    wider = e + extra
    for op in "NFP":
        small, large = run(f"{op}[{e}] ref.active", x), run(f"{op}[{wider}] ref.active", x)
        assert np.all(~small | large), op
    for op in "GH":
        small, large = run(f"{op}[{e}] ref.active", x), run(f"{op}[{wider}] ref.active", x)
        assert np.all(~large | small), op
    y = ~x
    small = evaluate_formula(f"ref.active U[{e}] pred.active", {"ref.active": x, "pred.active": y})
    large = evaluate_formula(f"ref.active U[{wider}] pred.active",
                             {"ref.active": x, "pred.active": y})
    assert np.all(~small | large)


@given(traces, bounds)
def test_neighbourhood_is_time_symmetric(x, e):
    assert np.array_equal(run(f"N[{e}] ref.active", x[::-1]), run(f"N[{e}] ref.active", x)[::-1])


@given(traces, bounds, bounds)
def test_future_and_past_mirror_under_reversal(x, a, b):
    a, b = min(a, b), max(a, b)
    for future, past in (("F", "P"), ("G", "H")):
        assert np.array_equal(run(f"{future}[{a}:{b}] ref.active", x[::-1]),
                              run(f"{past}[{a}:{b}] ref.active", x)[::-1])


@settings(max_examples=200)
@given(formula_strategy(max_bound=6), st.integers(0, 24), st.data())
def test_monitor_equals_the_per_frame_definition(formula, n, data):
    signals = {atom.name: data.draw(arrays(bool, (n,))) for atom in ATOMS}
    expected = frame_definition(formula, lambda atom: signals[atom.name], n)
    assert evaluate_formula(formula, signals).tolist() == expected


@settings(max_examples=100)
@given(formula_strategy(max_bound=6), st.lists(st.integers(0, 20), min_size=1, max_size=5),
       st.data())
def test_batched_clips_never_leak_into_each_other(formula, lengths, data):
    """A batch of clips of different lengths gives each clip exactly its own result."""
    n = max(lengths)
    batch = {atom.name: data.draw(arrays(bool, (len(lengths), n))) for atom in ATOMS}
    together = evaluate_formula(formula, batch, lengths=lengths)
    for row, length in enumerate(lengths):
        alone = evaluate_formula(formula, {k: v[row, :length] for k, v in batch.items()})
        assert np.array_equal(together[row, :length], alone)
        assert not together[row, length:].any()


@settings(max_examples=300)
@given(formula_strategy(max_bound=20, classes=("speech", "people talking", "a\"b\\c", "on")))
def test_parse_print_round_trip(formula):
    text = format_formula(formula)
    assert parse_formula(text) == formula
    assert format_formula(parse_formula(text)) == text
