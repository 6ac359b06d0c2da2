"""Contracts as programs: check (names, bounds, atoms) and run every clause on traces."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.contracts.backend import NumpyOps
from sedcontract.contracts.bounds import BoundResolver, Conversion, Rounding
from sedcontract.contracts.events import (
    EventContext,
    MatchingAudit,
    element_counts,
    event_outcomes,
)
from sedcontract.contracts.matching import METHODS
from sedcontract.contracts.monitor import SignalTable, run_each
from sedcontract.contracts.parser import parse_contract
from sedcontract.contracts.printer import format_contract
from sedcontract.contracts.runs import (
    AtPoints,
    RunTable,
    evaluate_runs_at,
    evaluate_runs_each,
    single_framed,
)
from sedcontract.contracts.scoring import ClauseScore, clause_counts
from sedcontract.contracts.syntax import (
    SIDES,
    Atom,
    Bound,
    Contract,
    EventClause,
    Expr,
    Formula,
    FrameClause,
    Let,
    Match,
    Temporal,
    Time,
    Until,
    atoms,
    children,
    expr_children,
    postorder,
    structure,
)
from sedcontract.contracts.typecheck import BOOL, infer
from sedcontract.errors import ContractCheckError, SignalError, of_kind
from sedcontract.traces.activity import Edges
from sedcontract.traces.intervals import Intervals
from sedcontract.traces.tsv import regular_file

LIBRARY = Path(__file__).parent / "library"


def _source(name_or_path: str | os.PathLike) -> Path:
    """The file a contract name or path reads: a bare shipped name means the shipped file."""
    text = os.fspath(name_or_path)
    shipped = LIBRARY / f"{text}.contract"
    bare = isinstance(name_or_path, str) and Path(text).name == text \
        and not text.endswith(".contract")
    return shipped if bare and shipped.is_file() else Path(text)


def contract_file(name_or_path: str | os.PathLike) -> Path | None:
    """The file :func:`load_contract` reads for this name or path (a shipped one included):
    what a command counts among its inputs; None for no usable name."""
    if not isinstance(name_or_path, str | os.PathLike) or os.fspath(name_or_path) == "":
        return None
    return _source(name_or_path)


def load_contract(name_or_path: str | Path) -> Contract:
    """A shipped contract by name (``standard``) or a contract file.

    A bare name (no folder, no ``.contract`` suffix) that a shipped contract has always means
    the shipped one, so a file of that name in the working directory cannot stand in for it
    unnoticed; name such a file with a folder (``./standard``).
    """
    if not isinstance(name_or_path, str | os.PathLike) or os.fspath(name_or_path) == "":
        raise ContractCheckError(f"a contract is a shipped name such as 'standard' or the path "
                                 f"of a .contract file, got {name_or_path!r}")
    text = os.fspath(name_or_path)
    path = _source(name_or_path)
    if not path.exists():
        names = ", ".join(sorted(p.stem for p in LIBRARY.glob("*.contract")))
        raise ContractCheckError(f"no contract file {text!r} and no shipped contract of that "
                                 f"name (shipped: {names})")
    if path.is_dir():
        raise ContractCheckError(f"{path}: is a directory, not a contract file")
    try:
        source = regular_file(path).read_text(encoding="utf-8-sig")  # a BOM is not text
    except UnicodeDecodeError as exc:
        raise ContractCheckError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                                 ) from None
    except OSError as exc:
        raise ContractCheckError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_contract(source, name=str(path))


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
    """Static checks: unique names; bounds defined before use and convertible; atoms known;
    matchings declared before use; event expressions well typed.

    Returns the time → frame conversions (empty when ``hop`` is None and no time is used).
    """
    of_kind("contract", contract, Contract)
    seen: set[str] = set()
    defined: dict[str, Bound] = {}
    matches: set[str] = set()
    resolver = resolver_for(contract, hop=hop, overrides=overrides, rounding=rounding)

    def error(message: str, node) -> ContractCheckError:
        return resolver.error(message, node)

    for statement in contract.statements:
        if statement.name in seen:
            raise ContractCheckError(f"{statement.name!r} is defined twice",
                                     source=contract.source, offset=statement.span[0],
                                     name=contract.name)
        seen.add(statement.name)
        if isinstance(statement, Let):
            defined[statement.name] = statement.value
            resolver.check(statement.value)  # too large or too fine, with or without a hop
            if statement.value.name is not None and statement.value.name not in defined:
                raise resolver.error(f"{statement.value.name!r} is used before it is defined",
                                     statement.value)
        elif isinstance(statement, Match):
            _check_expr(statement.relation, SIDES, defined, resolver, hop, error,
                        "a matching relation")
            matches.add(statement.name)
        elif isinstance(statement, EventClause):
            if statement.each == "pair" and statement.match not in matches:
                known = ", ".join(sorted(matches)) or "none declared before this clause"
                raise ContractCheckError(
                    f"unknown matching {statement.match!r} (matchings: {known})",
                    source=contract.source, offset=statement.span[0], name=contract.name)
            scope = SIDES if statement.each == "pair" else (statement.each,)
            if statement.where is not None:
                _check_expr(statement.where, scope, defined, resolver, hop, error, "'where'")
            _check_expr(statement.requirement, scope, defined, resolver, hop, error,
                        "'require'")
        else:
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


def _check_expr(expr: Expr, scope: tuple[str, ...], defined: dict[str, Bound],
                resolver: BoundResolver, hop: float | None, error, what: str) -> None:
    kind = infer(expr, scope, lets=defined, error=error)
    if kind != BOOL:
        raise error(f"{what} must be a condition (true/false), got a {kind}", expr)
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Time):
            resolver.check(node.bound)
        if isinstance(node, Time) and (hop is not None or not _uses_time_bound(node.bound,
                                                                               resolver)):
            resolver.frames(node.bound)
        stack.extend(expr_children(node))


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
                if bound is not None:
                    resolver.check(bound)
            if hop is not None or not any(_uses_time_bound(b, resolver)
                                          for b in (node.window.lo, node.window.hi)):
                resolver.window(node.window)
        stack.extend(children(node))


def _uses_time_bound(bound: Bound | None, resolver: BoundResolver) -> bool:
    while bound is not None and bound.name is not None:
        bound = resolver.bindings.get(bound.name)
        if not isinstance(bound, Bound):
            bound = None
    return bound is not None and bound.unit is not None


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
    """Per-clause scores of one run, the conversions that produced the windows, and the
    matchings the event clauses used (with the greedy-versus-exact audit)."""

    clauses: dict[str, ClauseScore]
    conversions: list[Conversion]
    matchings: dict[str, MatchingAudit] = field(default_factory=dict)
    intervals: tuple[int, int] = (0, 0)  # ref and pred intervals the event clauses saw

    def __getitem__(self, name: str) -> ClauseScore:
        return self.clauses[name]

    @staticmethod
    def concat(results: Sequence[ContractResult]) -> ContractResult:
        """One result from the results of consecutive row ranges (chunks) of one evaluation:
        counts are per row, so they line up; matching indices are renumbered to index the
        intervals of all rows."""
        first = results[0]
        if len(results) == 1:  # nothing to join: no copy of every per-row array
            return first
        clauses = {name: ClauseScore(
            name, np.concatenate([r[name].satisfied_per_row for r in results]),
            np.concatenate([r[name].obligations_per_row for r in results]), score.sort,
            score.diagnostic) for name, score in first.clauses.items()}
        matchings = {}
        for name, audit in first.matchings.items():
            ref_offset = np.cumsum([0] + [r.intervals[0] for r in results[:-1]])
            pred_offset = np.cumsum([0] + [r.intervals[1] for r in results[:-1]])
            parts = [r.matchings[name] for r in results]
            matchings[name] = MatchingAudit(
                name, audit.method,
                np.concatenate([p.ref_index + o for p, o in zip(parts, ref_offset, strict=True)]),
                np.concatenate([p.pred_index + o
                                for p, o in zip(parts, pred_offset, strict=True)]),
                np.concatenate([p.greedy_per_row for p in parts]),
                np.concatenate([p.exact_per_row for p in parts]))
        return ContractResult(clauses, results[-1].conversions, matchings,
                              (sum(r.intervals[0] for r in results),
                               sum(r.intervals[1] for r in results)))


def evaluate_contract(contract: Contract | str, signals: Mapping[str, Any], *,
                      hop: float | None = None,
                      overrides: Mapping[str, Bound | int | str] | None = None,
                      rounding: Rounding = "nearest", edges: Edges = "open",
                      lengths: Any = None, row_classes: Sequence[int] | None = None,
                      classes: Sequence[str] = (), matching: str | None = None
                      ) -> ContractResult:
    """Run every clause of ``contract`` on ``signals``; counts are kept per row.

    Event clauses take the maximal intervals of ``ref.active`` / ``pred.active`` row by row;
    ``row_classes`` (index into ``classes``, −1 for none) gives ``class(x)`` its value;
    ``matching`` (greedy | exact) overrides the method every ``match`` declares.
    """
    if isinstance(contract, str):
        contract = parse_contract(contract)
    resolver = prepare(contract, hop=hop, overrides=overrides, rounding=rounding,
                       matching=matching)
    table = SignalTable(signals, lengths=lengths, edges=edges)
    return run_contract(contract, table, resolver, row_classes=row_classes, classes=classes,
                        matching=matching)


def prepare(contract: Contract, *, hop: float | None,
            overrides: Mapping[str, Bound | int | str] | None, rounding: Rounding,
            matching: str | None) -> BoundResolver:
    """Check ``contract`` once and return the bound resolver that every run of it shares."""
    if not isinstance(contract, Contract):
        raise ContractCheckError(f"not a contract: {contract!r} (parse_contract or "
                                 "load_contract make one)")
    if matching is not None and matching not in METHODS:
        raise ContractCheckError(f"unknown matching method {matching!r}; choose one of "
                                 f"{', '.join(METHODS)}")
    check_contract(contract, hop=hop, overrides=overrides, rounding=rounding)
    return resolver_for(contract, hop=hop, overrides=overrides, rounding=rounding)


def compact_counts(counts: Any) -> np.ndarray:
    """Per-row counts, flat, as 32-bit integers when they fit (a row counts at most its frames;
    a clip is refused past ``max_frames``): 17,000 clips × 456 classes of them cost half."""
    counts = np.asarray(counts).reshape(-1)
    if counts.size and int(counts.max()) > np.iinfo(np.int32).max:
        return counts.astype(np.int64)
    return counts.astype(np.int32)


def run_contract(contract: Contract, table: SignalTable | RunTable, resolver: BoundResolver, *,
                 row_classes: Sequence[int] | None = None, classes: Sequence[str] = (),
                 matching: str | None = None) -> ContractResult:
    """Run a checked contract (see :func:`prepare`) on one signal table: dense frame arrays
    (:class:`SignalTable`) or run-length traces (:class:`RunTable`), with the same counts."""
    on_runs = isinstance(table, RunTable)
    ops = table.ops if on_runs else NumpyOps(table.shape, table.valid)
    scores: dict[str, ClauseScore] = {}
    context: EventContext | None = None
    for clause, context, parts in _evaluated(contract, table, resolver, row_classes, classes,
                                             matching):
        if isinstance(clause, EventClause):
            satisfied, total = element_counts(*parts[1:], context.rows)
            sort = "event"
        else:
            satisfied, total = clause_counts(ops, *parts)
            sort = "frame"
        scores[clause.name] = ClauseScore(clause.name, compact_counts(satisfied),
                                          compact_counts(total), sort=sort,
                                          diagnostic=clause.diagnostic)
    seen = (len(context.ref), len(context.pred)) if context is not None else (0, 0)
    return ContractResult(scores, list(resolver.conversions.values()),
                          dict(context.audits) if context is not None else {}, seen)


def _evaluated(contract: Contract, table: SignalTable | RunTable, resolver: BoundResolver,
               row_classes: Sequence[int] | None, classes: Sequence[str],
               matching: str | None) -> Iterator[tuple[Any, EventContext | None, tuple]]:
    """Each clause with the event context so far and what scoring it needs: a frame clause's
    obligation and requirement values; an event clause's elements (binding, row, obliged,
    required). The event context is built once, at the first event clause; the frame
    clauses' formulas are evaluated together, so a sub-formula they share runs once. On
    runs, a clause obliged only on single frames (``on ref.onset``) gets its requirement
    valued at those frames alone (:func:`evaluate_runs_at`), which is all scoring reads
    (obligation ∧ requirement, obligation ∧ ¬requirement)."""
    frame = [c for c in contract.clauses if not isinstance(c, EventClause)]
    groups = _point_groups(frame) if isinstance(table, RunTable) else {}
    evaluate = evaluate_runs_each if isinstance(table, RunTable) else run_each
    values = evaluate([f for clause in frame for f in (
        (clause.obligation,) if clause.name in groups else
        (clause.obligation, clause.requirement))], table, resolver, source=contract.source,
        name=contract.name)
    held: dict[str, AtPoints] = {}  # requirements at points, by clause, until yielded
    context: EventContext | None = None
    for clause in contract.clauses:
        if isinstance(clause, EventClause):
            if context is None:
                context = _event_context(contract, table, resolver, row_classes, classes,
                                         matching)
            yield clause, context, event_outcomes(clause, context)
            continue
        obligation = next(values)
        group = groups.get(clause.name)
        if group is None:
            yield clause, context, (obligation, next(values))
            continue
        if clause.name not in held:  # the group's first clause: all of it at these points
            held.update(zip((c.name for c in group), evaluate_runs_at(
                [c.requirement for c in group], obligation, table, resolver,
                source=contract.source, name=contract.name), strict=True))
        yield clause, context, (obligation, held.pop(clause.name))


def _point_groups(frame: Sequence[FrameClause]) -> dict[str, list[FrameClause]]:
    """The frame clauses obliged only on single frames (:func:`single_framed`), each with
    every such clause of the same obligation: their requirements are valued at its frames
    together."""
    obliged = [c for c in frame if single_framed(c.obligation)]
    keys = structure([n for c in obliged for n in postorder(c.obligation, children)],
                     children)
    by_key: dict[int, list[FrameClause]] = {}
    for clause in obliged:
        by_key.setdefault(keys[id(clause.obligation)], []).append(clause)
    return {c.name: by_key[keys[id(c.obligation)]] for c in obliged}


@dataclass(frozen=True)
class Outcome:
    """Where one clause was obliged and where it failed, on run-length traces: frame clauses
    as frame runs per row; event clauses per quantified element (its interval in frames, on
    the reference for ``ref`` and ``pair`` clauses, else on the prediction)."""

    name: str
    sort: str
    obligations: Intervals
    failures: Intervals


def clause_outcomes(contract: Contract, table: RunTable, resolver: BoundResolver, *,
                    row_classes: Sequence[int] | None = None, classes: Sequence[str] = (),
                    matching: str | None = None) -> dict[str, Outcome]:
    """Every clause's obligations and failures as intervals (what a failure timeline draws);
    their lengths (frames) or numbers (elements) are the counts :func:`run_contract` gives."""
    ops = table.ops
    out: dict[str, Outcome] = {}
    for clause, context, parts in _evaluated(contract, table, resolver, row_classes, classes,
                                             matching):
        if isinstance(clause, EventClause):
            binding, _, obliged, required = parts
            side = "pred" if clause.each == "pred" else "ref"
            runs, index = context.side(side), binding[side]
            out[clause.name] = Outcome(clause.name, "event", _elements(runs, index[obliged]),
                                       _elements(runs, index[obliged & ~required]))
        else:
            obligation, requirement = parts
            out[clause.name] = Outcome(clause.name, "frame", obligation,
                                       ops.and_(obligation, ops.not_(requirement)))
    return out


def _elements(runs: Intervals, index: np.ndarray) -> Intervals:
    """The intervals ``runs[index]`` in (row, start) order (a pair clause may repeat one)."""
    order = np.lexsort((runs.start[index], runs.row[index]))
    index = index[order]
    return Intervals(runs.row[index], runs.start[index], runs.end[index])


def check_atom_classes(contract: Contract, classes: Sequence[str]) -> None:
    """Every class-indexed atom names one of ``classes`` (else an error pointing at it)."""
    for clause in contract.clauses:
        if isinstance(clause, EventClause):
            continue
        for formula in (clause.obligation, clause.requirement):
            for node in postorder(formula, children):
                if isinstance(node, Atom) and node.cls is not None and node.cls not in classes:
                    raise ContractCheckError(
                        f"unknown class {node.cls!r} in {node.name!r}; known classes: "
                        f"{', '.join(classes) or 'none'}", source=contract.source,
                        offset=node.span[0], name=contract.name)


def needed_signals(contract: Contract) -> set[str]:
    """The ``active`` signals a run of ``contract`` reads (onset and offset atoms derive from
    them; event clauses read ``ref.active`` and ``pred.active``)."""
    names = set()
    for clause in contract.clauses:
        if isinstance(clause, EventClause):
            names |= {"ref.active", "pred.active"}
        else:
            for formula in (clause.obligation, clause.requirement):
                names |= {Atom(a.side, "active", a.cls).name for a in atoms(formula)}
    return names


def _event_context(contract: Contract, table: SignalTable | RunTable,
                   resolver: BoundResolver, row_classes: Sequence[int] | None,
                   classes: Sequence[str], matching: str | None) -> EventContext:
    given = table.signals if isinstance(table, RunTable) else table.arrays
    missing = [k for k in ("ref.active", "pred.active") if k not in given]
    if missing:
        raise SignalError(f"event clauses need the signals {', '.join(missing)} (maximal "
                          "intervals are taken from them)")
    if isinstance(table, RunTable):
        rows, sides = table.ops.rows, (given["ref.active"], given["pred.active"])
    else:
        rows = int(np.prod(table.shape[:-1], dtype=np.int64))
        lengths = None if table.lengths is None else table.lengths.reshape(-1)
        sides = (Intervals.of(given["ref.active"], lengths),
                 Intervals.of(given["pred.active"], lengths))
    if row_classes is None:
        row_class = np.full(rows, -1, dtype=np.int64)
    else:
        row_class = np.asarray(row_classes, dtype=np.int64).reshape(-1)
        if row_class.shape != (rows,):
            raise SignalError(f"row_classes has {row_class.size} entries for {rows} rows")
    return EventContext(*sides, rows, row_class, tuple(classes), resolver, contract.matches,
                        matching)
