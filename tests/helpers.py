"""Shared test machinery: random formulas, the RTAMT translation, the z3 backend and a
per-frame reference definition written straight from the semantics table of DESIGN.md."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import z3
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


# -- RTAMT --------------------------------------------------------------------------------------
def to_rtamt(node: Formula) -> str:
    """The same formula in RTAMT's STL syntax (``N[e]φ`` as ``once[0:e]φ or eventually[0:e]φ``)."""
    if isinstance(node, Atom):
        return f"({node.side}_{node.kind} > 0.5)"
    if isinstance(node, Const):  # RTAMT has no constants; atoms are 0/1 so these are exact
        return "(ref_active > -1)" if node.value else "(ref_active < -1)"
    if isinstance(node, Not):
        return f"(not {to_rtamt(node.arg)})"
    if isinstance(node, And | Or | Implies):
        op = {And: "and", Or: "or", Implies: "implies"}[type(node)]
        return f"({to_rtamt(node.left)} {op} {to_rtamt(node.right)})"
    lo = 0 if node.window.lo is None else int(node.window.lo.number)
    hi = int(node.window.hi.number)
    if isinstance(node, Until):
        return f"({to_rtamt(node.left)} until[{lo}:{hi}] {to_rtamt(node.right)})"
    arg = to_rtamt(node.arg)
    if node.op == "N":
        return f"(once[0:{hi}] {arg} or eventually[0:{hi}] {arg})"
    name = {"F": "eventually", "G": "always", "P": "once", "H": "historically"}[node.op]
    return f"({name}[{lo}:{hi}] {arg})"


def rtamt_verdict(node: Formula, signals: dict[str, np.ndarray]) -> np.ndarray:
    """RTAMT's discrete-time offline robustness, as a Boolean verdict (> 0) per frame."""
    import rtamt

    spec = rtamt.StlDiscreteTimeOfflineSpecification()
    for name in signals:
        spec.declare_var(name.replace(".", "_"), "float")
    spec.spec = to_rtamt(node)
    spec.parse()
    n = len(next(iter(signals.values())))
    data = {"time": list(range(n))}
    data.update({k.replace(".", "_"): v.astype(float).tolist() for k, v in signals.items()})
    return np.array([r > 0 for _, r in spec.evaluate(data)])


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


# -- z3 backend of the monitor's operators ---------------------------------------------------
class Z3Ops:
    """The monitor's backend interface over lists of z3 Booleans: one trace of ``n`` cells
    whose true length may be a symbolic ``length`` ≤ n (as the numpy backend's per-row
    lengths: a look-ahead past the end reads the fill value)."""

    def __init__(self, n: int, length=None) -> None:
        self.n, self.length = n, length

    def shift(self, x: list, k: int, fill: bool) -> list:
        out = []
        for t in range(self.n):
            if not 0 <= t + k < self.n:
                out.append(z3.BoolVal(fill))
            elif k > 0 and self.length is not None:
                out.append(z3.If(t + k < self.length, x[t + k], z3.BoolVal(fill)))
            else:
                out.append(x[t + k])
        return out

    def and_(self, x: list, y: list) -> list:
        return [z3.And(a, b) for a, b in zip(x, y, strict=True)]

    def or_(self, x: list, y: list) -> list:
        return [z3.Or(a, b) for a, b in zip(x, y, strict=True)]

    def not_(self, x: list) -> list:
        return [z3.Not(a) for a in x]

    def const(self, value: bool) -> list:
        return [z3.BoolVal(value)] * self.n

    def count(self, x: list):
        if self.length is not None:
            x = [z3.And(t < self.length, a) for t, a in enumerate(x)]
        return z3.Sum([z3.If(a, 1, 0) for a in x]) if x else z3.IntVal(0)


def z3_any(values: list):
    return z3.Or(*values) if values else z3.BoolVal(False)


def z3_all(values: list):
    return z3.And(*values) if values else z3.BoolVal(True)


def prove(claim, *assumptions) -> z3.CheckSatResult:
    """``unsat`` when ``claim`` holds under ``assumptions`` for every assignment."""
    solver = z3.Solver()
    solver.add(*assumptions)
    solver.add(z3.Not(claim))
    return solver.check()


# -- DESIGN.md's worked example -----------------------------------------------------------------
def worked_example():
    """Reference and prediction of DESIGN.md's worked example (one 4 s clip 'c')."""
    from sedcontract.traces import EventList

    ref = EventList.from_rows([("c", 0.5, 1.5, "speech"), ("c", 2.0, 2.6, "tone")])
    pred = EventList.from_rows([("c", 0.6, 1.0, "speech"), ("c", 1.1, 1.8, "speech"),
                                ("c", 2.0, 2.6, "speech"), ("c", 3.2, 3.4, "tone")])
    return ref, pred


def write_worked_example(folder) -> list[str]:
    """Write the worked example as DCASE files; returns ``--ref`` and ``--durations`` options
    (the prediction is ``folder / 'pred.tsv'``)."""
    from sedcontract.traces import write_durations, write_events

    ref, pred = worked_example()
    write_events(folder / "ref.tsv", ref)
    write_events(folder / "pred.tsv", pred)
    write_durations(folder / "dur.tsv", {"c": 4.0})
    return [f"--ref={folder / 'ref.tsv'}", f"--durations={folder / 'dur.tsv'}"]


# -- running code under a memory limit --------------------------------------------------------
def run_limited(args: list[str], limit_mb: int, timeout: float = 300):
    """Run ``python args…`` in a fresh process whose address space is capped at ``limit_mb``
    MiB (one BLAS thread, so the cap does not depend on the machine's core count)."""
    import os
    import subprocess
    import sys

    code = (f"import resource, runpy, sys; limit = {limit_mb} * 2**20; "
            f"resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); sys.argv = {args!r}; "
            "runpy.run_path(sys.argv[0], run_name='__main__') if sys.argv[0] != '-c' "
            "else exec(sys.argv[1])")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout)
