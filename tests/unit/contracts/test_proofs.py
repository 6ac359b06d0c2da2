"""Bounded proofs with z3: the vectorised operators, run symbolically, equal the per-frame
definition for every trace of every length 1..64 (one symbolic length), bounds up to 8; plus
the three properties of the original Lean checks."""

from __future__ import annotations

import functools

import pytest
import z3

from sedcontract.contracts import temporal
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_tree
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.scoring import clause_counts
from sedcontract.contracts.syntax import Atom, Temporal, Until
from tests.helpers.formulas import frame_definition, window
from tests.helpers.z3_backend import Z3Ops, prove, z3_all, z3_any

N = 64        # longest trace proved (every length 1..N at once)
MAX_BOUND = 8
X, Y = Atom("ref", "active"), Atom("pred", "active")
LENGTH = z3.Int("length")


@functools.cache
def variables(n: int) -> tuple[list, list]:
    """Symbolic traces x, y of n cells each."""
    return [z3.Bool(f"x{t}") for t in range(n)], [z3.Bool(f"y{t}") for t in range(n)]


XS, YS = variables(N)
IN_RANGE = (LENGTH >= 1, LENGTH <= N)


def lookup(atom: Atom) -> list:
    return XS if atom == X else YS


def equivalence(formula, n: int = N) -> z3.CheckSatResult:
    """Implementation vs per-frame definition, for every trace of every length 1..n."""
    xs, ys = variables(n)

    def atom_trace(atom: Atom) -> list:
        return xs if atom == X else ys

    impl = evaluate_tree(formula, Z3Ops(n, LENGTH), atom_trace, BoundResolver())
    spec = frame_definition(formula, atom_trace, n, length=LENGTH, any_=z3_any, all_=z3_all,
                            not_=z3.Not)
    pairs = enumerate(zip(impl, spec, strict=True))
    claim = z3.And([z3.Implies(t < LENGTH, a == b) for t, (a, b) in pairs])
    return prove(claim, LENGTH >= 1, n >= LENGTH)


def operators(a: int, b: int) -> list:
    found = [Temporal(op, window(a, b), X) for op in "FGPH"] + [Until(X, window(a, b), Y)]
    if a == 0:
        found.append(Temporal("N", window(None, b), X))
    return found


@pytest.mark.parametrize("b", range(MAX_BOUND + 1))
def test_each_operator_equals_its_per_frame_definition(b):
    for a in range(b + 1):
        for formula in operators(a, b):
            assert equivalence(formula) == z3.unsat, formula


def test_a_seeded_end_of_trace_bug_is_caught(monkeypatch):
    """The proof can fail: clip windows at the wrong end and z3 finds a counterexample."""
    def forward_only(ops, x, a, b, combine, fill):
        return ops.shift(temporal._sliding(ops, x, b - a + 1, combine, fill), a, fill)

    monkeypatch.setattr(temporal, "_window", forward_only)
    assert equivalence(Temporal("N", window(None, 3), X)) == z3.sat


COUNT_N = 20  # z3's integer reasoning over sums grows steeply (n=32 fixed length: ~100 s)


def test_obligation_counting_every_length_up_to_20():
    """satisfied ≤ obligations, and satisfied = #frames with obligation ∧ requirement, running
    ``clause_counts`` symbolically on every trace of every length 1..20."""
    length = z3.Int("count_length")
    ops = Z3Ops(COUNT_N, length)
    satisfied, obligations = clause_counts(ops, XS[:COUNT_N], YS[:COUNT_N])
    direct = z3.Sum([z3.If(z3.And(t < length, XS[t], YS[t]), 1, 0) for t in range(COUNT_N)])
    bounds = (length >= 1, length <= COUNT_N)
    assert prove(satisfied <= obligations, *bounds) == z3.unsat
    assert prove(satisfied == direct, *bounds) == z3.unsat


def test_obligation_counting_by_induction_on_length():
    """Any length: counts are additive over frames, and one more frame keeps the invariant
    (``satisfied ≤ obligations``, ``satisfied = #(obligation ∧ requirement)``)."""
    s_prev, o_prev, d_prev = z3.Ints("s_prev o_prev d_prev")
    x, y = z3.Bools("x_new y_new")
    s_new, o_new = clause_counts(Z3Ops(1), [x], [y])
    step = z3.Implies(z3.And(s_prev <= o_prev, s_prev == d_prev),
                      z3.And(s_prev + s_new <= o_prev + o_new,
                             s_prev + s_new == d_prev + z3.If(z3.And(x, y), 1, 0)))
    assert prove(step) == z3.unsat
    base_s, base_o = clause_counts(Z3Ops(0), [], [])
    assert prove(z3.And(base_s == 0, base_o == 0)) == z3.unsat
    # additivity of the count the invariant rests on, on concrete splits of a symbolic trace
    whole = clause_counts(Z3Ops(8), XS[:8], YS[:8])
    head, tail = clause_counts(Z3Ops(7), XS[:7], YS[:7]), clause_counts(Z3Ops(1), XS[7:8],
                                                                        YS[7:8])
    assert prove(z3.And(whole[0] == head[0] + tail[0], whole[1] == head[1] + tail[1])) == z3.unsat


@pytest.mark.parametrize("e", range(MAX_BOUND))
def test_neighbourhood_witness_monotone(e):
    """e ≤ e' ⇒ (N[e] φ → N[e'] φ) at every frame of every trace."""
    small = evaluate_tree(Temporal("N", window(None, e), X), Z3Ops(N, LENGTH), lookup,
                          BoundResolver())
    for wider in range(e, MAX_BOUND + 1):
        large = evaluate_tree(Temporal("N", window(None, wider), X), Z3Ops(N, LENGTH), lookup,
                              BoundResolver())
        claim = z3.And([z3.Implies(t < LENGTH, z3.Implies(s, g))
                        for t, (s, g) in enumerate(zip(small, large, strict=True))])
        assert prove(claim, *IN_RANGE) == z3.unsat


def test_implication_evaluator():
    """``a -> b`` evaluates exactly as ``!a | b`` per frame (also nested under modalities)."""
    resolver, ops = BoundResolver(), Z3Ops(N, LENGTH)
    for left, right in [("ref.active -> pred.active", "!ref.active | pred.active"),
                        ("F[2:5] (ref.active -> pred.active)",
                         "F[2:5] (!ref.active | pred.active)")]:
        impl = evaluate_tree(parse_formula(left), ops, lookup, resolver)
        expected = evaluate_tree(parse_formula(right), ops, lookup, resolver)
        claim = z3.And([z3.Implies(t < LENGTH, a == b)
                        for t, (a, b) in enumerate(zip(impl, expected, strict=True))])
        assert prove(claim, *IN_RANGE) == z3.unsat


@pytest.mark.slow
@pytest.mark.parametrize("b", range(9, 13))
def test_longer_traces_and_wider_windows(b):
    """Slow target: every length 1..128 and bounds up to 12."""
    for a in range(b + 1):
        for formula in operators(a, b):
            assert equivalence(formula, n=128) == z3.unsat, formula
