"""Contracts as programs: check (names, bounds, atoms) and run every clause on traces."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sedcontract.contracts.backend import NumpyOps
from sedcontract.contracts.bounds import BoundResolver, Conversion, Rounding
from sedcontract.contracts.monitor import SignalTable, run
from sedcontract.contracts.parser import parse_contract
from sedcontract.contracts.printer import format_contract
from sedcontract.contracts.scoring import ClauseScore, clause_counts
from sedcontract.contracts.syntax import (
    Atom,
    Bound,
    Contract,
    Formula,
    FrameClause,
    Let,
    Temporal,
    Until,
    Window,
    atoms,
    children,
)
from sedcontract.errors import ContractCheckError
from sedcontract.traces.activity import Edges

LIBRARY = Path(__file__).parent / "library"


def load_contract(name_or_path: str | Path) -> Contract:
    """A shipped contract by name (``standard``) or a ``.contract`` file."""
    path = Path(name_or_path)
    if not path.exists() and (LIBRARY / f"{name_or_path}.contract").exists():
        path = LIBRARY / f"{name_or_path}.contract"
    if not path.exists():
        shipped = ", ".join(sorted(p.stem for p in LIBRARY.glob("*.contract")))
        raise ContractCheckError(f"no contract file {str(name_or_path)!r} and no shipped "
                                 f"contract of that name (shipped: {shipped})")
    return parse_contract(path.read_text(encoding="utf-8"), name=str(path))


def contract_hash(contract: Contract) -> str:
    """sha256 of the canonical text: the identity of a contract in every report."""
    return hashlib.sha256(format_contract(contract).encode()).hexdigest()


def resolver_for(contract: Contract, *, hop: float | None,
                 overrides: Mapping[str, Bound | int | str] | None = None,
                 rounding: Rounding = "nearest") -> BoundResolver:
    """Bound resolver for ``contract``; ``overrides`` replace ``let`` values (e.g. ``eps``)."""
    bindings: dict[str, Bound | int | str] = dict(contract.lets)
    for key, value in (overrides or {}).items():
        if key not in bindings:
            raise ContractCheckError(f"cannot override {key!r}: the contract defines "
                                     f"{', '.join(sorted(bindings)) or 'no names'}")
        bindings[key] = value
    return BoundResolver(hop=hop, bindings=bindings, rounding=rounding, source=contract.source,
                         name=contract.name)


def check_contract(contract: Contract, *, hop: float | None = None,
                   atoms_known: set[str] | None = None,
                   overrides: Mapping[str, Bound | int | str] | None = None,
                   rounding: Rounding = "nearest") -> list[Conversion]:
    """Static checks: unique names, bounds defined before use and convertible, atoms known.

    Returns the time → frame conversions (empty when ``hop`` is None and no time is used).
    """
    seen: dict[str, Any] = {}
    defined: dict[str, Bound] = {}
    resolver = resolver_for(contract, hop=hop, overrides=overrides, rounding=rounding)
    for statement in contract.statements:
        if statement.name in seen:
            raise ContractCheckError(f"{statement.name!r} is defined twice",
                                     source=contract.source, offset=statement.span[0],
                                     name=contract.name)
        seen[statement.name] = statement
        if isinstance(statement, Let):
            defined[statement.name] = statement.value
            if statement.value.name is not None and statement.value.name not in defined:
                raise resolver.error(f"{statement.value.name!r} is used before it is defined",
                                     statement.value)
            continue
        assert isinstance(statement, FrameClause)
        for formula in (statement.obligation, statement.requirement):
            _check_windows(formula, resolver, defined, hop)
            for atom in atoms(formula) if atoms_known is not None else ():
                if atom.name not in atoms_known:
                    known = ", ".join(sorted(atoms_known))
                    raise ContractCheckError(
                        f"unknown atom {atom.name!r}; known atoms: {known}",
                        source=contract.source, offset=_first_span(formula, atom),
                        name=contract.name)
    return list(resolver.conversions.values())


def _check_windows(formula: Formula, resolver: BoundResolver, defined: dict[str, Bound],
                   hop: float | None) -> None:
    stack = [formula]
    while stack:
        node = stack.pop()
        if isinstance(node, Temporal | Until):
            for bound in (node.window.lo, node.window.hi):
                if bound is not None and bound.name is not None and bound.name not in defined:
                    raise resolver.error(f"unknown bound name {bound.name!r} (defined before "
                                         f"this clause: {', '.join(defined) or 'none'})", bound)
            if hop is not None or not _uses_time(node.window, resolver):
                resolver.window(node.window)
        stack.extend(children(node))


def _uses_time(window: Window, resolver: BoundResolver) -> bool:
    for bound in (window.lo, window.hi):
        while bound is not None and bound.name is not None:
            bound = resolver.bindings.get(bound.name)
            if not isinstance(bound, Bound):
                bound = None
        if bound is not None and bound.unit is not None:
            return True
    return False


def _first_span(formula: Formula, atom: Atom) -> int:
    stack = [formula]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom) and node == atom:
            return node.span[0]
        stack.extend(reversed(children(node)))
    return formula.span[0]


@dataclass(frozen=True)
class ContractResult:
    """Per-clause scores of one run, with the conversions that produced the windows."""

    clauses: dict[str, ClauseScore]
    conversions: list[Conversion]

    def __getitem__(self, name: str) -> ClauseScore:
        return self.clauses[name]


def evaluate_contract(contract: Contract | str, signals: Mapping[str, Any], *,
                      hop: float | None = None,
                      overrides: Mapping[str, Bound | int | str] | None = None,
                      rounding: Rounding = "nearest", edges: Edges = "open",
                      lengths: Any = None) -> ContractResult:
    """Run every frame clause of ``contract`` on ``signals``; counts are kept per row."""
    if isinstance(contract, str):
        contract = parse_contract(contract)
    table = SignalTable(signals, lengths=lengths, edges=edges)
    check_contract(contract, hop=hop, overrides=overrides, rounding=rounding)
    resolver = resolver_for(contract, hop=hop, overrides=overrides, rounding=rounding)
    ops = NumpyOps(table.shape, table.valid)
    scores = {}
    for clause in contract.clauses:
        obligation = run(clause.obligation, table, resolver, source=contract.source,
                         name=contract.name)
        requirement = run(clause.requirement, table, resolver, source=contract.source,
                          name=contract.name)
        satisfied, total = clause_counts(ops, obligation, requirement)
        scores[clause.name] = ClauseScore(clause.name, satisfied, total)
    return ContractResult(scores, list(resolver.conversions.values()))
