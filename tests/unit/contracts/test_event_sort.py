"""The event sort: parsing and printing, the type system, and evaluation on hand-made traces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sedcontract.contracts import evaluate_contract, format_contract, parse_contract
from sedcontract.errors import ContractCheckError, ContractSyntaxError

BASIS = """let eps = 200ms
match m: ref ~ pred when overlaps & same_class using exact
clause missed: each ref require count(pred overlapping ref) >= 1
clause false: each pred require count(ref overlapping pred) >= 1
clause duration: each pair(m) require abs(dur(pred) - dur(ref)) <= max(eps, 0.2 * dur(ref))
clause fragmentation: each ref where count(pred overlapping ref) >= 1 require count(pred overlapping ref) <= 1
"""  # noqa: E501


def bits(text: str) -> np.ndarray:
    return np.array([c == "1" for c in text])


def run(contract: str, ref: str, pred: str, **kw):
    return evaluate_contract(contract, {"ref.active": bits(ref), "pred.active": bits(pred)}, **kw)


def test_event_statements_round_trip():
    contract = parse_contract(BASIS)
    assert [c.name for c in contract.clauses] == ["missed", "false", "duration", "fragmentation"]
    assert contract.matches["m"].method == "exact"
    text = format_contract(contract)
    assert parse_contract(text) == contract
    assert "each ref where count(pred overlapping ref) >= 1 require" in text


@pytest.mark.parametrize("expr", [
    "1 + 2 * 3 == 7", "(1 + 2) * 3 == 9", "10 - 4 - 3 == 3", "10 - (4 - 3) == 9",
    "!(1 > 2) & 2 > 1", "1 > 2 | 2 > 1 -> 1 == 1", "(1 > 2 -> 1 > 2) -> 1 == 1",
    "min(3, 4) == 3 & max(3, 4) == 4 & abs(1 - 3) == 2", "6 / 4 == 1.5",
])
def test_expression_precedence_and_arithmetic(expr):
    contract = parse_contract(f"clause c: each ref require {expr}")
    assert parse_contract(format_contract(contract)) == contract
    result = run(contract, "0110", "0000")
    assert (result["c"].satisfied, result["c"].obligations) == (1, 1)


def test_interval_terms_in_frames():
    # ref [1,5), pred [3,9); durations in frames; eps = 2 frames
    contract = ("let eps = 2\nmatch m: ref ~ pred when overlaps using greedy\n"
                "clause a: each pair(m) require dur(ref) == 80ms & dur(pred) == 0.12s\n"
                "clause b: each pair(m) require onset(pred) - onset(ref) == eps\n"
                "clause c: each pair(m) require overlap(ref, pred) == eps & "
                "iou(ref, pred) == 0.25\n"
                "clause d: each pair(m) require offset(pred) - offset(ref) <= 40ms\n")
    result = run(contract, "0111100000", "0001111110", hop=0.02)
    assert [result[k].satisfied for k in "abcd"] == [1, 1, 1, 0]
    assert all(result[k].obligations == 1 for k in "abcd")


def test_coverage_fragmentation_and_vacuity():
    contract = parse_contract(BASIS)
    result = run(contract, "0111111000011100000", "0110011000000000111", hop=0.02)
    # refs [1,7) and [11,14); preds [1,3), [5,7), [16,19)
    assert (result["missed"].satisfied, result["missed"].obligations) == (1, 2)
    assert (result["false"].satisfied, result["false"].obligations) == (2, 3)
    assert (result["fragmentation"].satisfied, result["fragmentation"].obligations) == (0, 1)
    empty = run(contract, "0000", "0000", hop=0.02)
    for name in ("missed", "false", "duration", "fragmentation"):
        assert empty[name].vacuous and np.isnan(empty[name].score)


def test_comparisons_tolerate_float_rounding():
    # 0.1 * 30 frames is 3.0000000000000004 in floating point; 60ms is 3 frames; it holds
    result = run("clause c: each ref require 0.1 * dur(ref) <= 60ms", "0" + "1" * 30 + "0",
                 "0" * 32, hop=0.02)
    assert result["c"].satisfied == 1


@pytest.mark.parametrize(("text", "fragment", "column"), [
    ("clause c: each ref require dur(ref) <= 5", "cannot compare a duration with a count", 28),
    ("clause c: each ref require dur(pred) > 1ms", "'pred' is not bound here", 32),
    ("clause c: each ref require overlaps", "relates ref and pred", 28),
    ("clause c: each ref require dur(ref)", "must be a condition", 28),
    ("clause c: each ref require dur(ref) * dur(ref) > 1ms", "times a duration", 28),
    ("clause c: each ref require class(ref) < \"speech\"", "cannot compare a class", 28),
    ("clause c: each ref require dur(ref) > eps", "unknown name 'eps'", 39),
    ("clause c: each pair(m) require true", "unknown matching 'm'", 1),
    ("match m: ref ~ pred when dur(ref) using exact", "must be a condition", 26),
    ("clause c: each pred require count(pred overlapping ref) >= 1", "'ref' is not bound", 29),
])
def test_type_errors_point_at_the_expression(text, fragment, column):
    with pytest.raises(ContractCheckError) as info:
        run(text, "0110", "0110", hop=0.02)
    assert fragment in str(info.value)
    assert info.value.column == column


@pytest.mark.parametrize(("text", "fragment"), [
    ("clause c: each ref require 1 < 2 < 3", "comparisons do not chain"),
    ("clause c: each ref require frob(ref) > 1", "unknown function 'frob'"),
    ("clause c: each ref require min(1) > 1", r"takes 2 argument\(s\)"),
    ("clause c: each ref require count(pred overlapping pred) > 1", "relates the two sides"),
    ("clause c: each ref require ref.onset", "belong in frame clauses"),
    ("match m: ref ~ pred when overlaps using hungarian", "matching method"),
    ("clause c: each clip require true", "after 'each'"),
])
def test_event_syntax_errors(text, fragment):
    with pytest.raises(ContractSyntaxError, match=fragment):
        parse_contract(text)


def test_class_literals_and_same_class_use_row_classes():
    contract = ("match m: ref ~ pred when overlaps & same_class using exact\n"
                "clause speechy: each ref require class(ref) == \"speech\"\n"
                "clause paired: each ref require count(pred overlapping ref) >= 1\n")
    signals = {"ref.active": np.array([bits("0110"), bits("0110")]),
               "pred.active": np.array([bits("0100"), bits("0000")])}
    result = evaluate_contract(contract, signals, row_classes=[0, 1],
                               classes=("speech", "tone"))
    assert (result["speechy"].satisfied, result["speechy"].obligations) == (1, 2)
    assert result["paired"].satisfied_per_row.tolist() == [1, 0]
    with pytest.raises(ContractCheckError, match="unknown class 'dog'; known classes: speech"):
        evaluate_contract("clause c: each ref require class(ref) == \"dog\"", signals,
                          row_classes=[0, 1], classes=("speech", "tone"))


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.booleans()), min_size=1,
                max_size=60))
def test_coverage_counts_match_a_direct_definition(cells):
    """count(pred overlapping ref) against an interval-by-interval count."""
    rows = max(c[0] for c in cells) + 1
    ref = np.zeros((rows, len(cells)), dtype=bool)
    pred = np.zeros_like(ref)
    for t, (r, a, b) in enumerate(cells):
        ref[r, t], pred[r, t] = a, b
    result = evaluate_contract("clause c: each ref require count(pred overlapping ref) >= 2\n"
                               "clause f: each pred require count(ref overlapping pred) >= 1",
                               {"ref.active": ref, "pred.active": pred})
    expected_c = expected_f = total_c = total_f = 0
    for r in range(rows):
        refs = _intervals(ref[r])
        preds = _intervals(pred[r])
        for s, e in refs:
            total_c += 1
            expected_c += sum(1 for ps, pe in preds if ps < e and pe > s) >= 2
        for s, e in preds:
            total_f += 1
            expected_f += any(rs < e and re > s for rs, re in refs)
    assert (result["c"].satisfied, result["c"].obligations) == (expected_c, total_c)
    assert (result["f"].satisfied, result["f"].obligations) == (expected_f, total_f)


def _intervals(x: np.ndarray) -> list[tuple[int, int]]:
    out, start = [], None
    for t, v in enumerate([*x.tolist(), False]):
        if v and start is None:
            start = t
        elif not v and start is not None:
            out.append((start, t))
            start = None
    return out


def test_products_compare_up_to_float_rounding():
    """0.29 * 100 is 28.999999999999996 in float64; a 29-frame prediction is within 29 % of a
    100-frame reference, so the comparisons hold (they would fail on raw floats)."""
    ref = np.zeros(200, dtype=bool)
    pred = np.zeros(200, dtype=bool)
    ref[0:100], pred[0:29] = True, True
    result = evaluate_contract("match m: ref ~ pred when overlaps using exact\n"
                               "clause le: each pair(m) require dur(pred) <= 0.29 * dur(ref)\n"
                               "clause eq: each pair(m) require dur(pred) == 0.29 * dur(ref)\n"
                               "clause lt: each pair(m) require !(dur(pred) < 0.29 * dur(ref))\n",
                               {"ref.active": ref, "pred.active": pred})
    assert [result[c].satisfied for c in ("le", "eq", "lt")] == [1, 1, 1]
