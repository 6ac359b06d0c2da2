"""Cross-check with RTAMT's discrete-time offline STL monitor: random formulas (every
operator, nested at least 3 deep) on random traces of length 2..200 agree frame by frame."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sedcontract.contracts import evaluate_formula, format_formula
from sedcontract.contracts.syntax import And, Const, Implies, Not, Or, Temporal, Until, children
from tests.helpers.formulas import ATOMS, random_formula, window
from tests.helpers.rtamt_oracle import rtamt_verdict

pytest.importorskip("rtamt")

CASES = 600


def depth(node) -> int:
    subs = children(node)
    return 1 + max(map(depth, subs)) if subs else 0


def operator_names(node) -> set[str]:
    found = {node.op if isinstance(node, Temporal) else type(node).__name__}
    for sub in children(node):
        found |= operator_names(sub)
    return found


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    formula = random_formula(rng, depth=int(rng.integers(3, 6)), max_bound=12)
    n = int(rng.integers(2, 201))
    density = rng.uniform(0.1, 0.9)
    signals = {atom.name: rng.random(n) < density for atom in ATOMS}
    return formula, signals


@pytest.mark.parametrize("seeds", [
    range(CASES),
    pytest.param(range(CASES, 20 * CASES), marks=pytest.mark.slow, id="slow-12000"),
], ids=lambda seeds: f"{len(seeds)}-cases")
def test_random_formulas_agree_with_rtamt(seeds):
    seen: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RTAMT warns about its antlr runtime version
        for seed in seeds:
            formula, signals = random_case(seed)
            assert depth(formula) >= 3
            seen |= operator_names(formula)
            ours = evaluate_formula(formula, signals)
            theirs = rtamt_verdict(formula, signals)
            mismatch = np.flatnonzero(ours != theirs)
            assert mismatch.size == 0, (
                f"seed {seed}: {format_formula(formula)} differs from RTAMT at frames "
                f"{mismatch[:10].tolist()} (n={len(theirs)})")
    expected = {"N", "F", "G", "P", "H", Until.__name__, Not.__name__, And.__name__,
                Or.__name__, Implies.__name__, "Atom", Const.__name__}
    assert expected <= seen, f"operators never generated: {expected - seen}"


def test_the_cross_check_can_fail():
    """A formula evaluated with a wrong bound disagrees with RTAMT somewhere."""
    rng = np.random.default_rng(7)
    signals = {atom.name: rng.random(60) < 0.3 for atom in ATOMS}
    ours = evaluate_formula("N[3] ref.onset", signals)
    theirs = rtamt_verdict(Temporal("N", window(None, 4), ATOMS[1]), signals)
    assert np.any(ours != theirs)
