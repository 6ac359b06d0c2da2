"""The exact monitor: frame-sort formulas evaluated on Boolean traces.

``evaluate_tree`` walks the syntax tree over any backend (numpy here, z3 in the proofs);
``evaluate_formula`` is the public numpy entry point over named signals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from sedcontract.contracts import temporal
from sedcontract.contracts.backend import NumpyOps
from sedcontract.contracts.bounds import BoundResolver, Rounding
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.syntax import (
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
    children,
    postorder,
    structure,
)
from sedcontract.errors import ContractCheckError, ContractSyntaxError, SignalError
from sedcontract.traces.activity import EDGES, Edges, offset, onset, valid_mask
from sedcontract.traces.names import signal_name

_UNARY = {"F": temporal.eventually, "G": temporal.always, "P": temporal.once,
          "H": temporal.historically}


def evaluate_tree(formula: Formula, ops: temporal.Ops, lookup: Callable[[Atom], Any],
                  resolver: BoundResolver) -> Any:
    """Value of ``formula`` at every frame, on backend ``ops`` (:func:`evaluate_trees` of
    one formula)."""
    return next(evaluate_trees((formula,), ops, lookup, resolver))


def evaluate_trees(formulas: Iterable[Formula], ops: temporal.Ops,
                   lookup: Callable[[Atom], Any], resolver: BoundResolver) -> Iterator[Any]:
    """Values of several formulas, in order, each computed when asked for. Iterative (a
    formula of any depth), equal sub-formulas of all of them run once, and a value is
    dropped once its last user (a parent, or a formula given) has run."""
    formulas = tuple(formulas)
    nodes = [node for formula in formulas for node in postorder(formula, children)]
    keys = structure(nodes, children)
    first: dict[int, Any] = {}
    for node in nodes:  # first occurrences keep children before parents
        first.setdefault(keys[id(node)], node)
    pending = iter(first.values())
    uses = Counter(keys[id(c)] for node in first.values() for c in children(node))
    uses.update(keys[id(formula)] for formula in formulas)
    values: dict[int, Any] = {}
    for formula in formulas:
        target = keys[id(formula)]
        while target not in values:
            node = next(pending)
            values[keys[id(node)]] = _node_value(node, [values[keys[id(c)]]
                                                        for c in children(node)],
                                                 ops, lookup, resolver)
            for child in children(node):
                _release(values, uses, keys[id(child)])
        value = values[target]
        _release(values, uses, target)
        yield value


def _release(values: dict[int, Any], uses: Counter, key: int) -> None:
    """One user of the value under ``key`` is done; the last one drops it."""
    uses[key] -= 1
    if uses[key] == 0:
        del values[key]


def _node_value(node: Formula, args: list[Any], ops: temporal.Ops,
                lookup: Callable[[Atom], Any], resolver: BoundResolver) -> Any:
    """One node's value from its children's values ``args``."""
    if isinstance(node, Atom):
        return lookup(node)
    if isinstance(node, Const):
        return ops.const(node.value)
    if isinstance(node, Not):
        return ops.not_(args[0])
    if isinstance(node, And):
        return ops.and_(*args)
    if isinstance(node, Or):
        return ops.or_(*args)
    if isinstance(node, Implies):
        return ops.or_(ops.not_(args[0]), args[1])
    if isinstance(node, Temporal):
        lo, hi = resolver.window(node.window)
        if node.op == "N":
            return temporal.neighbourhood(ops, args[0], hi)
        return _UNARY[node.op](ops, args[0], lo, hi)
    if isinstance(node, Until):
        lo, hi = resolver.window(node.window)
        return temporal.until(ops, args[0], args[1], lo, hi)
    raise TypeError(f"not a formula node: {node!r}")


class SignalTable:
    """Named Boolean traces of one shape ``[..., n]``; onset/offset atoms not given are derived
    from the matching ``active`` trace under the declared clip-edge policy."""

    def __init__(self, signals: Mapping[str, Any], *, lengths: Any = None,
                 edges: Edges = "open") -> None:
        if edges not in EDGES:
            raise SignalError(f"unknown clip-edge policy {edges!r}; choose one of "
                              f"{', '.join(EDGES)}")
        if not signals:
            raise SignalError("no signals given; pass e.g. {'ref.onset': ..., 'pred.onset': ...}")
        self.edges = edges
        self.arrays: dict[str, np.ndarray] = {}
        shape = None
        for name, value in signals.items():
            array = _boolean(name, value)
            atom = _atom(name)
            key = atom.name
            if shape is None:
                shape, first = array.shape, key
            elif array.shape != shape:
                raise SignalError(f"signals have different shapes: {first!r} is {shape}, "
                                  f"{key!r} is {array.shape}; every signal needs the same "
                                  "[clips, frames] shape")
            self.arrays[key] = array
        self.shape = shape
        self.lengths = None if lengths is None else np.asarray(lengths, dtype=np.int64)
        self.valid = valid_mask(shape, self.lengths)

    def lookup(self, atom: Atom, *, source: str | None = None,
               name: str = "<formula>") -> np.ndarray:
        key = atom.name
        if key in self.arrays:
            return self.arrays[key]
        active = signal_name(atom.side, "active", atom.cls)
        if atom.kind != "active" and active in self.arrays:
            derive = onset if atom.kind == "onset" else offset
            self.arrays[key] = derive(self.arrays[active], self.edges, self.lengths)
            return self.arrays[key]
        raise missing_atom(atom, self.arrays, source=source, name=name)


def missing_atom(atom: Atom, given: Iterable[str], *, source: str | None,
                 name: str) -> ContractCheckError:
    """The error for an atom no signal provides: an unknown class, or the atoms there are
    (``given`` ``active`` signals and the onset/offset atoms derived from them)."""
    given = list(given)
    classes = sorted({a.cls for a in map(_atom, given) if a.cls is not None})
    if atom.cls is not None and atom.cls not in classes:
        message = (f"unknown class {atom.cls!r} in {atom.name!r}; known classes: "
                   f"{', '.join(classes) or 'none (no class-indexed signals given)'}")
    else:
        known = set(given)
        for item in given:
            if ".active" in item:
                known.update(item.replace(".active", f".{k}") for k in ("onset", "offset"))
        message = f"unknown atom {atom.name!r}; known atoms: {', '.join(sorted(known))}"
    return ContractCheckError(message, source=source, offset=atom.span[0] if source else None,
                              name=name)


def _atom(name: str) -> Atom:
    try:
        node = parse_formula(name, name="signal name")
    except ContractSyntaxError:
        node = None
    if not isinstance(node, Atom):
        raise SignalError(f"signal name {name!r} is not an atom name such as 'ref.onset' or "
                          "'pred.active[speech]'")
    return node


def _boolean(name: str, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim == 0:
        raise SignalError(f"signal {name!r} is a scalar; give a [frames] or [clips, frames] array")
    if array.dtype == bool:
        return array
    if np.issubdtype(array.dtype, np.integer) and np.all((array == 0) | (array == 1)):
        return array.astype(bool)
    raise SignalError(f"signal {name!r} must be Boolean (or 0/1 integers), got dtype "
                      f"{array.dtype}; threshold scores with a declared decision policy first")


def evaluate_formula(formula: Formula | str, signals: Mapping[str, Any], *,
                     hop: float | None = None,
                     bindings: Mapping[str, Bound | int | str] | None = None,
                     rounding: Rounding = "nearest", edges: Edges = "open",
                     lengths: Any = None) -> np.ndarray:
    """Boolean value of ``formula`` at every frame of every clip (rows of ``signals``).

    Bounds without units are frames; times (``200ms``) need ``hop`` (seconds per frame).
    ``lengths`` gives each row's own number of frames when clips differ in length.
    """
    source = formula if isinstance(formula, str) else None
    if isinstance(formula, str):
        formula = parse_formula(formula)
    if not isinstance(formula, Atom | Const | Not | And | Or | Implies | Temporal | Until):
        raise ContractCheckError(f"not a formula: {formula!r} (give its text or a parsed tree)")
    table = SignalTable(signals, lengths=lengths, edges=edges)
    resolver = BoundResolver(hop=hop, bindings=bindings, rounding=rounding, source=source,
                             name="<formula>")
    return run(formula, table, resolver, source=source)


def run(formula: Formula, table: SignalTable, resolver: BoundResolver, *,
        source: str | None = None, name: str = "<formula>") -> np.ndarray:
    """Evaluate a parsed formula on a signal table with the numpy backend."""
    return next(run_each((formula,), table, resolver, source=source, name=name))


def run_each(formulas: Iterable[Formula], table: SignalTable, resolver: BoundResolver, *,
             source: str | None = None, name: str = "<formula>") -> Iterator[np.ndarray]:
    """:func:`run` of several formulas, in order; equal sub-formulas of all run once."""
    ops = NumpyOps(table.shape, table.valid)
    for value in evaluate_trees(formulas, ops, lambda atom: table.lookup(
            atom, source=source, name=name), resolver):
        value = np.broadcast_to(value, table.shape)
        yield value & table.valid if table.valid is not None else value.copy()
