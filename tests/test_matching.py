"""Matching: greedy against exact on hand-made and random candidate graphs; exact is maximum
(checked by brute force); the audit reports where greedy falls short."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sedcontract.contracts import evaluate_contract
from sedcontract.contracts.matching import exact, greedy

SIMILAR = ("let tol = 20ms\n"
           "match m: ref ~ pred when abs(dur(pred) - dur(ref)) <= tol using {method}\n"
           "clause paired: each ref require true\n"
           "clause d: each pair(m) require true\n")


def trace(n: int, intervals: list[tuple[int, int]]) -> np.ndarray:
    x = np.zeros(n, dtype=bool)
    for s, e in intervals:
        x[s:e] = True
    return x


def test_greedy_falls_short_where_exact_does_not():
    # refs A (4 frames), B (2 frames); P1 (3 frames, first) suits both, P2 (5 frames) suits A
    ref = trace(40, [(0, 4), (10, 12)])
    pred = trace(40, [(20, 23), (30, 35)])
    results = {}
    for method in ("greedy", "exact"):
        result = evaluate_contract(SIMILAR.format(method=method),
                                   {"ref.active": ref, "pred.active": pred}, hop=0.02)
        results[method] = result
        audit = result.matchings["m"]
        assert (int(audit.greedy_per_row.sum()), int(audit.exact_per_row.sum())) == (1, 2)
        assert audit.short_rows.tolist() == [0]
    assert results["greedy"]["d"].obligations == 1
    assert results["exact"]["d"].obligations == 2
    pairs = results["exact"].matchings["m"]
    assert sorted(zip(pairs.ref_index.tolist(), pairs.pred_index.tolist(), strict=True)) == [
        (0, 1), (1, 0)]
    # the override reaches the contract's declared method
    overridden = evaluate_contract(SIMILAR.format(method="exact"),
                                   {"ref.active": ref, "pred.active": pred}, hop=0.02,
                                   matching="greedy")
    assert overridden["d"].obligations == 1 and overridden.matchings["m"].method == "greedy"


def maximum_by_brute_force(edges: list[tuple[int, int]]) -> int:
    best = 0
    for size in range(len(edges), 0, -1):
        for subset in itertools.combinations(edges, size):
            refs = [r for r, _ in subset]
            preds = [p for _, p in subset]
            if len(set(refs)) == size and len(set(preds)) == size:
                return size
    return best


@settings(max_examples=300)
@given(st.sets(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=9))
def test_exact_is_maximum_and_greedy_never_exceeds_it(edge_set):
    edges = sorted(edge_set)  # candidate order: by ref, then by pred
    r = np.array([e[0] for e in edges], dtype=np.int64)
    p = np.array([e[1] for e in edges], dtype=np.int64)
    g_ref, g_pred = greedy(r, p)
    x_ref, x_pred = exact(r, p, 5, 5)
    assert len(x_ref) == maximum_by_brute_force(edges)
    assert len(g_ref) <= len(x_ref)
    for refs, preds in ((g_ref, g_pred), (x_ref, x_pred)):
        assert len(set(refs.tolist())) == len(refs) and len(set(preds.tolist())) == len(preds)
        assert set(zip(refs.tolist(), preds.tolist(), strict=True)) <= set(edges)


@settings(max_examples=100)
@given(st.lists(st.booleans(), min_size=1, max_size=80), st.lists(st.booleans(), min_size=1,
                                                                   max_size=80))
def test_greedy_at_most_exact_on_traces(ref_bits, pred_bits):
    n = max(len(ref_bits), len(pred_bits))
    ref = np.zeros(n, dtype=bool)
    pred = np.zeros(n, dtype=bool)
    ref[: len(ref_bits)] = ref_bits
    pred[: len(pred_bits)] = pred_bits
    result = evaluate_contract(SIMILAR.format(method="exact"),
                               {"ref.active": ref, "pred.active": pred}, hop=0.02)
    audit = result.matchings["m"]
    assert np.all(audit.greedy_per_row <= audit.exact_per_row)
    again = evaluate_contract(SIMILAR.format(method="exact"),
                              {"ref.active": ref, "pred.active": pred}, hop=0.02)
    assert np.array_equal(again.matchings["m"].pred_index, audit.pred_index)
