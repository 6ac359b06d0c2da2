"""The exact monitor on hand-computed traces, its bound conversion, clause scoring and its
errors on bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sedcontract
from sedcontract.contracts import evaluate_contract, parse_contract
from sedcontract.errors import ContractCheckError, SignalError


def bits(text: str) -> np.ndarray:
    return np.array([c == "1" for c in text])


def show(x: np.ndarray) -> str:
    return "".join("1" if v else "0" for v in x)


X = bits("0010000100")


@pytest.mark.parametrize(("formula", "expected"), [
    ("N[1] ref.active", "0111001110"),
    ("N[0] ref.active", "0010000100"),
    ("F[1:2] ref.active", "1100011000"),     # t+1..t+2; empty window at the end → false
    ("F[2] ref.active", "1110011100"),
    ("G[0:1] !ref.active", "1001110011"),    # weak: last frame's window [9, 10] → [9]
    ("G[1:3] !ref.active", "0011000111"),    # empty window at the last frame → true
    ("P[1:2] ref.active", "0001100011"),
    ("H[1:2] !ref.active", "1110011100"),    # empty window at frame 0 → true
    ("ref.active -> F[1] ref.active", "1111111111"),
    ("ref.active -> F[1:2] ref.active", "1101111011"),
    ("true", "1111111111"),
    ("!false & !ref.active", "1101111011"),
])
def test_operators_by_hand(formula, expected):
    assert show(sedcontract.evaluate_formula(formula, {"ref.active": X})) == expected


def test_until_is_strong_and_half_open():
    phi, psi = bits("1110111100"), bits("0001000010")
    signals = {"ref.active": phi, "pred.active": psi}
    # t=0: witness s=3 within [0,3], phi on [0,3) → true; t=4: s=8, phi on [4,8) true, 8 > 4+3
    assert show(sedcontract.evaluate_formula("ref.active U[0:3] pred.active", signals)) == \
        "1111011110"
    # witness needs to be at least 1 frame ahead
    assert show(sedcontract.evaluate_formula("ref.active U[1:3] pred.active", signals)) == \
        "1110011100"
    # no witness inside the trace at the end: strong until is false there
    assert not sedcontract.evaluate_formula("true U[0:5] pred.active", signals)[-1]


def test_derived_onset_offset_and_clip_edges():
    active = bits("1100011100")
    sig = {"ref.active": active}
    assert show(sedcontract.evaluate_formula("ref.onset", sig)) == "0000010000"   # open start
    assert show(sedcontract.evaluate_formula("ref.offset", sig)) == "0010000010"
    assert show(sedcontract.evaluate_formula("ref.onset", sig, edges="closed")) == "1000010000"
    end = {"ref.active": bits("0000000111")}
    assert show(sedcontract.evaluate_formula("ref.offset", end)) == "0000000000"
    assert show(sedcontract.evaluate_formula("ref.offset", end, edges="closed")) == "0000000001"


def test_given_onset_signal_is_used_as_given():
    sig = {"ref.active": bits("0110"), "ref.onset": bits("1000")}
    assert show(sedcontract.evaluate_formula("ref.onset", sig)) == "1000"


def test_two_dimensional_and_ragged_batches():
    batch = np.array([bits("0100000000"), bits("0000000001")])
    out = sedcontract.evaluate_formula("F[1:3] ref.active", {"ref.active": batch})
    assert [show(r) for r in out] == ["1000000000", "0000001110"]
    out = sedcontract.evaluate_formula("F[1:3] ref.active", {"ref.active": batch},
                                       lengths=[10, 8])
    assert [show(r) for r in out] == ["1000000000", "00000000" + "00"]


def test_time_bounds_convert_through_the_hop():
    x = bits("0000010000")
    assert show(sedcontract.evaluate_formula("N[40ms] ref.active", {"ref.active": x},
                                             hop=0.02)) == "0001111100"
    assert show(sedcontract.evaluate_formula("N[0.04s] ref.active", {"ref.active": x},
                                             hop=0.02)) == "0001111100"
    assert show(sedcontract.evaluate_formula("N[eps] ref.active", {"ref.active": x},
                                             bindings={"eps": 1})) == "0000111000"


@pytest.mark.parametrize(("rounding", "frames"), [("nearest", 2), ("floor", 1), ("ceil", 2)])
def test_rounding_policies(rounding, frames):
    x = bits("0000010000")
    out = sedcontract.evaluate_formula("F[30ms] ref.active", {"ref.active": x}, hop=0.02,
                                       rounding=rounding)
    assert show(out) == "0" * (5 - frames) + "1" * (frames + 1) + "0000"


def test_rounding_is_reported():
    contract = parse_contract("let eps = 30ms\nclause c: on ref.onset require N[eps] pred.onset")
    result = evaluate_contract(contract, {"ref.active": bits("0110"), "pred.active": bits("0110")},
                               hop=0.02)
    (conversion,) = result.conversions
    assert (conversion.frames, conversion.exact) == (2, False)
    assert "rounded nearest: 0.04 s" in str(conversion)


def test_bound_errors():
    x = {"ref.active": bits("0100")}
    with pytest.raises(ContractCheckError, match=r"1.5 frames .* not a whole number") as info:
        sedcontract.evaluate_formula("F[30ms] ref.active", x, hop=0.02, rounding="exact")
    assert (info.value.line, info.value.column) == (1, 3)
    with pytest.raises(ContractCheckError, match="give the grid hop"):
        sedcontract.evaluate_formula("F[30ms] ref.active", x)
    with pytest.raises(ContractCheckError, match="negative"):
        sedcontract.evaluate_formula("F[e] ref.active", x, bindings={"e": -1})
    with pytest.raises(ContractCheckError, match="unknown bound name 'e'"):
        sedcontract.evaluate_formula("F[e] ref.active", x)
    with pytest.raises(ContractCheckError, match="lower bound 5 frames exceeds upper"):
        sedcontract.evaluate_formula("F[5:2] ref.active", x)


def test_unknown_atoms_and_classes_list_the_known_ones():
    sig = {"ref.active[speech]": bits("01"), "pred.active[speech]": bits("01"),
           "ref.active": bits("01")}
    with pytest.raises(ContractCheckError, match=r"unknown class 'tone'.*known classes: speech"):
        sedcontract.evaluate_formula("ref.active[tone]", sig)
    with pytest.raises(ContractCheckError,
                       match=r"unknown atom 'pred.onset'; known atoms: pred.active\[speech\]"):
        sedcontract.evaluate_formula("ref.active & pred.onset", sig)
    with pytest.raises(ContractCheckError) as info:
        sedcontract.evaluate_formula("ref.active & pred.onset", sig)
    assert (info.value.line, info.value.column) == (1, 14)


def test_signal_errors():
    with pytest.raises(SignalError, match="different shapes"):
        sedcontract.evaluate_formula("ref.active & pred.active",
                                     {"ref.active": bits("010"), "pred.active": bits("01")})
    with pytest.raises(SignalError, match="must be Boolean"):
        sedcontract.evaluate_formula("ref.active", {"ref.active": np.array([0.2, 0.9])})
    with pytest.raises(SignalError, match="not an atom name"):
        sedcontract.evaluate_formula("ref.active", {"ref.actve": bits("01")})
    with pytest.raises(SignalError, match="no signals"):
        sedcontract.evaluate_formula("true", {})
    with pytest.raises(SignalError, match="lengths must lie"):
        sedcontract.evaluate_formula("ref.active", {"ref.active": bits("01")[None]}, lengths=[3])
    # 0/1 integers are accepted as Booleans
    out = sedcontract.evaluate_formula("ref.active", {"ref.active": np.array([0, 1])})
    assert out.dtype == bool and show(out) == "01"


def test_empty_traces_give_empty_results():
    empty = np.zeros(0, dtype=bool)
    for formula in ("N[3] ref.active", "ref.active U[0:2] pred.onset", "H[1:4] ref.offset",
                    "true"):
        out = sedcontract.evaluate_formula(formula, {"ref.active": empty, "pred.active": empty})
        assert out.shape == (0,)
    batch = np.zeros((3, 0), dtype=bool)
    assert sedcontract.evaluate_formula("G[2] ref.active", {"ref.active": batch}).shape == (3, 0)


def test_clause_scores_are_obligation_restricted_and_vacuous_is_nan():
    contract = parse_contract("clause onset: on ref.onset require N[1] pred.onset\n"
                              "clause never: on false require pred.active")
    result = evaluate_contract(contract, {"ref.active": bits("0011000110"),
                                          "pred.active": bits("0001100000")})
    onset = result["onset"]
    assert (onset.satisfied, onset.obligations, onset.score) == (1, 2, 0.5)
    never = result["never"]
    assert never.vacuous and never.obligations == 0 and math.isnan(never.score)
    assert "vacuous" in str(never)


def test_clause_counts_stay_per_row():
    contract = parse_contract("clause silence: on !ref.active require !pred.active")
    result = evaluate_contract(contract, {
        "ref.active": np.array([bits("1100"), bits("0000")]),
        "pred.active": np.array([bits("0010"), bits("0110")])}, lengths=[4, 3])
    score = result["silence"]
    assert score.satisfied_per_row.tolist() == [1, 1]
    assert score.obligations_per_row.tolist() == [2, 3]


def test_contract_overrides_and_duplicate_names():
    contract = parse_contract("let eps = 200ms\nclause c: on ref.onset require N[eps] pred.onset")
    sig = {"ref.active": bits("00001111"), "pred.active": bits("01111111")}
    assert evaluate_contract(contract, sig, hop=0.02)["c"].satisfied == 1
    assert evaluate_contract(contract, sig, hop=0.02, overrides={"eps": "40ms"})["c"].satisfied == 0
    with pytest.raises(ContractCheckError, match="cannot override 'tol'"):
        evaluate_contract(contract, sig, hop=0.02, overrides={"tol": 3})
    with pytest.raises(ContractCheckError, match="'c' is defined twice") as info:
        evaluate_contract("clause c: on true require true\nclause c: on true require false",
                          sig)
    assert (info.value.line, info.value.column) == (2, 1)
    with pytest.raises(ContractCheckError, match="used before it is defined"):
        evaluate_contract("let a = b\nlet b = 3\nclause c: on true require F[a] true", sig)


def test_formulas_and_expressions_of_any_depth_evaluate():
    """Every walk is iterative: a chain of 5,000 operators runs (it crashed with a
    RecursionError), equal sub-formulas are shared, and the values are right."""
    rng = np.random.default_rng(0)
    signals = {name: rng.random((3, 400)) < 0.2 for name in ("ref.active", "pred.active")}
    chain = " & ".join(["ref.active", "pred.active"] * 2500)
    assert np.array_equal(sedcontract.evaluate_formula(chain, signals),
                          signals["ref.active"] & signals["pred.active"])
    windows = " | ".join(f"F[{k}:{k}] pred.active" for k in range(300))
    assert np.array_equal(sedcontract.evaluate_formula(windows, signals),
                          sedcontract.evaluate_formula("F[0:299] pred.active", signals))
    with pytest.raises(ContractCheckError, match="not a formula: None"):
        sedcontract.evaluate_formula(None, signals)
    total = " + ".join(["dur(ref)"] * 5000)
    result = evaluate_contract(f"clause c: each ref require {total} == 5000 * dur(ref)",
                               signals)
    assert result["c"].satisfied == result["c"].obligations > 0


def test_formulas_evaluated_together_share_sub_formulas_and_equal_each_alone():
    """A contract's frame formulas run as one forest: a sub-formula several of them share
    runs once, and every value is the one its formula has alone."""
    from sedcontract.contracts import parse_formula
    from sedcontract.contracts.backend import NumpyOps
    from sedcontract.contracts.bounds import BoundResolver
    from sedcontract.contracts.monitor import evaluate_tree, evaluate_trees

    rng = np.random.default_rng(1)
    signals = {name: rng.random((2, 300)) < 0.2 for name in ("ref.active", "pred.active")}
    texts = ["N[3] pred.active", "ref.active & N[3] pred.active", "N[3] pred.active",
             "!N[3] pred.active | ref.active", "ref.active"]
    formulas = [parse_formula(t) for t in texts]
    looked_up = []

    def lookup(atom):
        looked_up.append(atom.name)
        return signals[atom.name]

    together = list(evaluate_trees(formulas, NumpyOps((2, 300), None), lookup,
                                   BoundResolver()))
    assert sorted(looked_up) == ["pred.active", "ref.active"]  # each atom once, for all
    for formula, value in zip(formulas, together, strict=True):
        alone = evaluate_tree(formula, NumpyOps((2, 300), None),
                              lambda atom: signals[atom.name], BoundResolver())
        assert np.array_equal(value, alone)
