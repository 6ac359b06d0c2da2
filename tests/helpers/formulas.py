"""Formulas for the tests: random formulas (numpy RNG and hypothesis) and a per-frame
reference definition written straight from the semantics table of docs/architecture.md."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from sedcontract.contracts.syntax import (
    KINDS,
    MODALITIES,
    SIDES,
    And,
    Atom,
    Bound,
    Const,
    Formula,
    Implies,
    Not,
    Or,
    Temporal,
    Until,
    Window,
)

ATOMS = [Atom(side, kind) for side in SIDES for kind in KINDS]


def frames(k: int) -> Bound:
    return Bound(number=str(k))


def window(lo: int | None, hi: int) -> Window:
    return Window(frames(hi), None if lo is None else frames(lo))


# -- random formulas (numpy RNG; deterministic per seed) -------------------------------------
def random_formula(rng: np.random.Generator, depth: int, max_bound: int = 12) -> Formula:
    """A random formula exactly ``depth`` operators deep along its first branch."""
    if depth == 0:
        if rng.random() < 0.08:
            return Const(bool(rng.integers(2)))
        return ATOMS[rng.integers(len(ATOMS))]
    choice = rng.integers(10)
    def sub():
        return random_formula(rng, depth - 1 if rng.random() < 0.7 else rng.integers(depth),
                                     max_bound)
    first = random_formula(rng, depth - 1, max_bound)
    if choice == 0:
        return Not(first)
    if choice in (1, 2, 3):
        return (And, Or, Implies)[choice - 1](first, sub())
    a, b = sorted(int(x) for x in rng.integers(0, max_bound + 1, size=2))
    lo = None if rng.random() < 0.3 else a
    if choice == 4:
        return Temporal("N", window(None, b), first)
    if choice == 9:
        return Until(first, window(lo, b), sub())
    return Temporal(MODALITIES[choice - 4], window(lo, b), first)


def formula_strategy(max_bound: int = 6, classes: tuple[str, ...] = ()) -> st.SearchStrategy:
    """Hypothesis strategy over syntax trees (optionally with class-indexed atoms)."""
    atom = st.builds(Atom, st.sampled_from(SIDES), st.sampled_from(KINDS),
                     st.sampled_from((None, *classes)) if classes else st.none())
    leaf = atom | st.builds(Const, st.booleans())
    bound = st.integers(0, max_bound)

    def windows(allow_lo: bool) -> st.SearchStrategy:
        return st.tuples(bound, bound, st.booleans()).map(
            lambda t: window(min(t[0], t[1]) if (allow_lo and t[2]) else None, max(t[0], t[1])))

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return (st.builds(Not, children)
                | st.builds(And, children, children)
                | st.builds(Or, children, children)
                | st.builds(Implies, children, children)
                | st.builds(Temporal, st.just("N"), windows(False), children)
                | st.builds(Temporal, st.sampled_from("FGPH"), windows(True), children)
                | st.builds(Until, children, windows(True), children))

    return st.recursive(leaf, extend, max_leaves=12)


# -- per-frame reference definition --------------------------------------------------------
def frame_definition(node: Formula, lookup: Callable[[Atom], list], n: int, *,
                     length=None, any_: Callable = any, all_: Callable = all,
                     not_: Callable = lambda x: not x) -> list:
    """Value of ``node`` at each frame t < n, computed frame by frame from the semantics table.

    Generic: Python bools by default; z3 Booleans with z3 reducers, where ``length`` may be a
    symbolic trace length ≤ n (frames at or past it are outside the trace).
    """
    memo: dict[tuple[Formula, int], object] = {}

    def inside(s: int, value, reducer):
        if length is None:
            return value
        # outside the trace a frame is dropped: neutral for ∃ (False), for ∀ (True)
        import z3  # only the proofs pass a symbolic length

        return z3.And(s < length, value) if reducer is any_ else z3.Or(s >= length, value)

    def bounds(w: Window) -> tuple[int, int]:
        return (0 if w.lo is None else int(w.lo.number)), int(w.hi.number)

    def v(f: Formula, t: int):
        key = (f, t)
        if key in memo:
            return memo[key]
        if isinstance(f, Atom):
            r = lookup(f)[t]
        elif isinstance(f, Const):
            r = any_([]) if not f.value else all_([])
        elif isinstance(f, Not):
            r = not_(v(f.arg, t))
        elif isinstance(f, And):
            r = all_([v(f.left, t), v(f.right, t)])
        elif isinstance(f, Or):
            r = any_([v(f.left, t), v(f.right, t)])
        elif isinstance(f, Implies):
            r = any_([not_(v(f.left, t)), v(f.right, t)])
        elif isinstance(f, Until):
            a, b = bounds(f.window)
            r = any_([inside(s, all_([v(f.right, s)] + [v(f.left, i) for i in range(t, s)]),
                             any_)
                      for s in range(max(0, t + a), min(n - 1, t + b) + 1)])
        else:
            a, b = bounds(f.window)
            lo, hi = {"N": (t - b, t + b), "F": (t + a, t + b), "G": (t + a, t + b),
                      "P": (t - b, t - a), "H": (t - b, t - a)}[f.op]
            reducer = all_ if f.op in "GH" else any_
            r = reducer([inside(s, v(f.arg, s), reducer)
                         for s in range(max(0, lo), min(n - 1, hi) + 1)])
        memo[key] = r
        return r

    return [v(node, t) for t in range(n)]
