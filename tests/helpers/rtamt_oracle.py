"""RTAMT, the frame formulas' independent oracle: our formulas in its STL syntax and its
offline verdict per frame."""

from __future__ import annotations

import numpy as np

from sedcontract.contracts.syntax import And, Atom, Const, Formula, Implies, Not, Or, Until


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
