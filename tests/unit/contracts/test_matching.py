"""Matching: greedy against exact on hand-made and random candidate graphs; exact is maximum
(checked by brute force); the audit reports where greedy falls short."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedcontract.contracts import evaluate_contract, parse_contract
from sedcontract.contracts.matching import exact, greedy
from sedcontract.errors import ContractCheckError

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


def greedy_by_hand(ref_index, pred_index) -> tuple[list[int], list[int]]:
    """The definition: pairs in the given order, each taken when both ends are still free."""
    out_ref, out_pred = [], []
    for r, p in zip(ref_index.tolist(), pred_index.tolist(), strict=True):
        if r not in out_ref and p not in out_pred:
            out_ref.append(r)
            out_pred.append(p)
    return out_ref, out_pred


@settings(max_examples=400)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14), st.booleans())
def test_greedy_is_the_pair_by_pair_definition(pairs, by_ref):
    """Whichever path greedy takes (the sweep on convex graphs, isolated edges at once, the
    loop), it returns the pairs the definition takes, in the same order."""
    if by_ref:  # references in order, as the matchers give them: the sweep may apply
        pairs = sorted(pairs, key=lambda pair: pair[0])
    r = np.array([a for a, _ in pairs], dtype=np.int64)
    p = np.array([b for _, b in pairs], dtype=np.int64)
    refs, preds = greedy(r, p)
    assert (refs.tolist(), preds.tolist()) == greedy_by_hand(r, p)


def test_greedy_on_convex_graphs_with_gaps_is_the_definition():
    """Candidates of a run with predictions of other rows between them (renumbered densely
    for the sweep) and monotone graphs of many references."""
    from sedcontract.contracts import matching

    rng = np.random.default_rng(7)
    for _ in range(500):
        ref_index, pred_index = monotone_graph(rng, int(rng.integers(0, 15)),
                                               int(rng.integers(0, 15)))
        spread = pred_index * 3 + 1  # holes no reference reaches
        refs, preds = matching.greedy(ref_index, spread)
        assert (refs.tolist(), preds.tolist()) == greedy_by_hand(ref_index, spread)


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


# -- candidate pairs: found near each reference, never over the cross product ---------------

RELATIONS = [
    "overlaps & same_class",
    "abs(onset(ref) - onset(pred)) <= 30ms",
    "abs(onset(pred) - onset(ref)) < 40ms & same_class",
    "20ms >= abs(offset(ref) - offset(pred))",
    "abs(offset(ref) - offset(pred)) <= max(20ms, 0.5 * dur(ref))",
    "iou(ref, pred) >= 0.3",
    "overlap(ref, pred) > 0s",
    "overlap(ref, pred) >= 20ms & same_class",
    "10ms <= overlap(pred, ref) | dur(pred) > 30ms",  # not a conjunction: every pair
    "abs(dur(pred) - dur(ref)) <= 10ms",              # says nothing about where: every pair
]


def context(relation: str, active: dict[str, np.ndarray]):
    from sedcontract.contracts.contract import _event_context, prepare
    from sedcontract.contracts.monitor import SignalTable

    contract = parse_contract(f"match m: ref ~ pred when {relation} using exact\n"
                              "clause d: each pair(m) require true\n")
    resolver = prepare(contract, hop=0.01, overrides=None, rounding="nearest", matching=None)
    table = SignalTable(active)
    rows = active["ref.active"].shape[0]
    return _event_context(contract, table, resolver, np.arange(rows) % 2, ("a", "b"), None)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.sampled_from(RELATIONS))
def test_candidate_pairs_equal_the_cross_product(seed, relation):
    from sedcontract.contracts.events import evaluate_expr
    from sedcontract.traces.intervals import expand_ranges, same_row_ranges

    rng = np.random.default_rng(seed)
    active = {side: rng.random((4, 60)) < rng.uniform(0.2, 0.7) for side in ("ref", "pred")}
    ctx = context(relation, {f"{k}.active": v for k, v in active.items()})
    found = ctx.pairs("m")
    every = expand_ranges(*same_row_ranges(ctx.ref, ctx.pred, ctx.rows))
    keep = evaluate_expr(ctx.matches["m"].relation, ctx, {"ref": every[0], "pred": every[1]},
                         len(every[0])).astype(bool)
    assert found[0].tolist() == every[0][keep].tolist()
    assert found[1].tolist() == every[1][keep].tolist()


def test_a_relation_that_relates_everything_is_refused_past_the_limit(monkeypatch):
    from sedcontract.contracts import events

    monkeypatch.setattr(events, "MAX_PAIRS", 10)
    active = {"ref.active": trace(40, [(0, 2), (4, 6), (8, 10), (12, 14)]),
              "pred.active": trace(40, [(20, 22), (24, 26), (28, 30)])}
    with pytest.raises(ContractCheckError, match="12 candidate pairs, more than the limit"):
        evaluate_contract("match m: ref ~ pred when true using exact\n"
                          "clause d: each pair(m) require true\n", active)
    near = evaluate_contract("match m: ref ~ pred when overlaps using exact\n"
                             "clause d: each pair(m) require true\n", active)
    assert near["d"].obligations == 0  # a relation that says how near is never refused


def test_one_shared_frame_is_an_overlap():
    active = {"ref.active": trace(20, [(0, 5)]), "pred.active": trace(20, [(4, 9)])}
    result = evaluate_contract("match m: ref ~ pred when overlaps using exact\n"
                               "clause d: each pair(m) require overlap(ref, pred) == 20ms\n"
                               "clause c: each ref require count(pred overlapping ref) == 1\n",
                               active, hop=0.02)
    assert (result["d"].satisfied, result["d"].obligations) == (1, 1)
    assert result["c"].satisfied == 1


# ---- convex graphs with monotone ends: the sweep -------------------------------------------

def monotone_graph(rng, n_ref: int, n_pred: int):
    lo = np.sort(rng.integers(0, n_pred + 1, n_ref))
    hi = np.maximum.accumulate(np.maximum(np.sort(rng.integers(0, n_pred + 1, n_ref)), lo))
    ref_index = np.repeat(np.arange(n_ref), hi - lo).astype(np.int64)
    pred_index = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]
                                or [np.zeros(0)]).astype(np.int64)
    return ref_index, pred_index


def test_the_sweep_is_greedy_and_as_large_as_hopcroft_karp_on_convex_graphs():
    from sedcontract.contracts import matching

    rng = np.random.default_rng(4)
    for _ in range(2000):
        n_ref, n_pred = int(rng.integers(0, 15)), int(rng.integers(0, 15))
        ref_index, pred_index = monotone_graph(rng, n_ref, n_pred)
        ranges = matching.monotone_ranges(ref_index, pred_index)
        assert ranges is not None
        refs, preds = matching.sweep(*ranges)
        exact = matching.exact(ref_index, pred_index, n_ref, n_pred)
        assert (refs.tolist(), preds.tolist()) == greedy_by_hand(ref_index, pred_index)
        assert len(refs) == len(exact[0])
        assert len(set(preds.tolist())) == len(preds)
        assert set(zip(refs.tolist(), preds.tolist(), strict=True)) <= \
            set(zip(ref_index.tolist(), pred_index.tolist(), strict=True))


def test_the_sweep_finishes_when_many_references_find_nothing(monkeypatch):
    from sedcontract.contracts import matching

    monkeypatch.setattr(matching, "SWEEP_ROUNDS", 3)
    ref_index = np.arange(40, dtype=np.int64)  # 40 references all reaching prediction 0 only
    pred_index = np.zeros(40, dtype=np.int64)
    ref_index = np.concatenate([ref_index, [40, 40]])
    pred_index = np.concatenate([pred_index, [1, 2]])
    refs, preds = matching.sweep(*matching.monotone_ranges(ref_index, pred_index))
    assert refs.tolist() == [0, 40] and preds.tolist() == [0, 1]


def test_graphs_that_are_not_convex_and_monotone_go_to_the_general_matchers():
    from sedcontract.contracts import matching

    gap = (np.array([0, 0]), np.array([0, 2]))             # a hole in a reference's run
    backwards = (np.array([0, 1]), np.array([3, 1]))       # a later reference reaches less
    for ref_index, pred_index in (gap, backwards):
        assert matching.monotone_ranges(ref_index, pred_index) is None


def test_the_sweep_equals_the_greedy_loop_on_long_crowded_graphs(monkeypatch):
    """Many references competing for few predictions in long segments, whatever the rounds
    the vectorised sweep gets before the loop finishes (references with nothing in reach
    included)."""
    from sedcontract.contracts import matching

    rng = np.random.default_rng(7)
    for rounds in (1, 2, 64):
        monkeypatch.setattr(matching, "SWEEP_ROUNDS", rounds)
        for _ in range(300):
            n, n_pred = int(rng.integers(0, 80)), int(rng.integers(0, 60))
            lo = np.sort(rng.integers(0, n_pred + 1, n))
            hi = np.maximum.accumulate(np.minimum(lo + rng.integers(0, 4, n), n_pred))
            ref_index = np.repeat(np.arange(n), hi - lo).astype(np.int64)
            pred_index = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]
                                        or [np.zeros(0)]).astype(np.int64)
            refs, preds = matching.sweep(np.arange(n), lo, hi)
            assert (refs.tolist(), preds.tolist()) == greedy_by_hand(ref_index, pred_index)


def test_exact_keeps_lone_edges_and_matches_the_rest_as_on_the_whole_graph():
    # exact hands scipy only the edges that share an end with another edge; the pairs must be
    # those of Hopcroft–Karp on the whole graph (its search is local to a component), on
    # graphs that mix lone edges with crowded components, duplicates and empty rows
    from sedcontract.contracts.matching import _hopcroft_karp

    rng = np.random.default_rng(5)
    shared = lone = 0
    for _ in range(400):
        n_ref, n_pred = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        edges = set(zip(rng.integers(0, n_ref, rng.integers(1, 50)).tolist(),
                        rng.integers(0, n_pred, rng.integers(1, 50)).tolist(), strict=False))
        ref_index = np.array(sorted(edges))[:, 0]
        pred_index = np.array(sorted(edges))[:, 1]
        got = exact(ref_index, pred_index, n_ref, n_pred)
        # given in another order, some edges twice: the same pairs
        again = rng.permutation(np.r_[np.arange(len(ref_index)),
                                      rng.integers(0, len(ref_index), 3)])
        shuffled = exact(ref_index[again], pred_index[again], n_ref, n_pred)
        assert all(np.array_equal(a, b) for a, b in zip(shuffled, got, strict=True))
        whole = _hopcroft_karp(ref_index, pred_index, n_ref, n_pred)
        assert np.array_equal(got[0], whole[0]) and np.array_equal(got[1], whole[1])
        degree_r, degree_p = np.bincount(ref_index), np.bincount(pred_index)
        alone = (degree_r[ref_index] == 1) & (degree_p[pred_index] == 1)
        lone += int(alone.sum())
        shared += int((~alone).sum())
    assert lone > 500 and shared > 5000  # both kinds of edge were exercised
    # a graph of lone edges alone, given out of reference order, comes back sorted
    refs, preds = exact(np.array([3, 0, 2]), np.array([1, 2, 0]), 4, 3)
    assert refs.tolist() == [0, 2, 3] and preds.tolist() == [2, 0, 1]
