"""The monitor's operators over z3 Booleans, for the bounded proofs."""

from __future__ import annotations

import z3


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
