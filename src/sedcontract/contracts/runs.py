"""The exact monitor on run-length traces: a value is the set of frames where it holds, as
sorted maximal runs per row (:class:`~sedcontract.traces.intervals.Intervals`), and every
operator of the frame sort is computed from runs, for all rows at once. The cost grows with
the number of runs, not of frames: a 1 ms grid or an hour-long clip costs what its events
cost. Semantics, truncation at each row's own length and clip edges are the dense monitor's
(tests hold the two equal).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_trees, missing_atom
from sedcontract.contracts.syntax import (
    And,
    Atom,
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
from sedcontract.errors import SignalError
from sedcontract.traces.activity import EDGES
from sedcontract.traces.intervals import (
    Intervals,
    expand_ranges,
    holds_at,
    overlap_ranges,
    run_after,
)
from sedcontract.traces.names import signal_name

_EMPTY = np.zeros(0, dtype=np.int64)
BACKENDS = ("runs", "dense")  # how the audit evaluates a contract: run-length or frame arrays


def _intervals(row: np.ndarray, start: np.ndarray, end: np.ndarray) -> Intervals:
    return Intervals(row.astype(np.int64, copy=False), start.astype(np.int64, copy=False),
                     end.astype(np.int64, copy=False))


class RunOps:
    """Boolean algebra and the bounded modalities on run sets of ``rows`` rows whose lengths
    are ``lengths`` (frames past a row's length never hold)."""

    def __init__(self, lengths: np.ndarray) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
        self.rows = len(self.lengths)

    def const(self, value: bool) -> Intervals:
        if not value:
            return Intervals(_EMPTY, _EMPTY, _EMPTY)
        rows = np.flatnonzero(self.lengths > 0)
        return _intervals(rows, np.zeros(len(rows)), self.lengths[rows])

    def clip(self, row: np.ndarray, start: np.ndarray, end: np.ndarray, *,
             ordered: bool = False) -> Intervals:
        """Maximal runs of any intervals, cut to ``[0, length)`` of their rows (``ordered``:
        already sorted by row and start, as runs shifted by one amount are)."""
        return Intervals.merged(row, np.maximum(start, 0), np.minimum(end, self.lengths[row]),
                                ordered=ordered)

    def not_(self, x: Intervals | AtPoints) -> Intervals | AtPoints:
        """The complement within each row's ``[0, length)`` (of a value at points: at the
        same points)."""
        if isinstance(x, AtPoints):
            return AtPoints(x.points, ~x.held)
        first = np.ones(len(x), dtype=bool)
        first[1:] = x.row[1:] != x.row[:-1]
        gap_start = np.where(first, 0, np.roll(x.end, 1))
        last = np.ones(len(x), dtype=bool)
        last[:-1] = x.row[1:] != x.row[:-1]
        tail_end = np.zeros(self.rows, dtype=np.int64)
        tail_end[x.row[last]] = x.end[last]
        rows = np.arange(self.rows, dtype=np.int64)
        if len(x) and (np.any(x.end <= x.start) or np.any(x.row[1:] < x.row[:-1])):
            # an empty run (the gaps beside it touch), or runs out of row order
            return Intervals.merged(np.concatenate([x.row, rows]),
                                    np.concatenate([gap_start, tail_end]),
                                    np.concatenate([x.start, self.lengths]))
        # the gaps of sorted maximal runs are sorted and maximal as they come: the gap before
        # each run, then each row's tail, laid out in place (a row's tail after its runs)
        place = np.arange(len(x), dtype=np.int64) + x.row
        tail = np.cumsum(np.bincount(x.row, minlength=self.rows)) + rows
        row, start, end = (np.empty(len(x) + self.rows, dtype=np.int64) for _ in range(3))
        row[place], start[place], end[place] = x.row, gap_start, x.start
        row[tail], start[tail], end[tail] = rows, tail_end, self.lengths
        keep = end > start
        return Intervals(row[keep], start[keep], end[keep])

    def and_(self, x: Intervals, y: Intervals | AtPoints) -> Intervals:
        """Intersection: each run of ``x`` with the runs of ``y`` it shares frames with (at
        most ``len(x) + len(y)`` pairs, found by sorted search); single frames (onsets,
        offsets) are looked up in the other side's runs, one search each."""
        if isinstance(y, AtPoints):
            return x.kept(y.held) if x is y.points else self.and_(x, y.runs())
        if _single_frames(y):
            x, y = y, x
        if _single_frames(x):
            keep = holds_at(y, x.row, x.start)
            return x.kept(keep)
        lo, hi = overlap_ranges(x, y)
        i, j = expand_ranges(lo, hi)
        start = np.maximum(x.start[i], y.start[j])
        end = np.minimum(x.end[i], y.end[j])
        keep = end > start
        return _intervals(x.row[i][keep], start[keep], end[keep])

    def or_(self, x: Intervals, y: Intervals) -> Intervals:
        return Intervals.merged(np.concatenate([x.row, y.row]),
                                np.concatenate([x.start, y.start]),
                                np.concatenate([x.end, y.end]))

    def window_any(self, x: Intervals, a: int, b: int) -> Intervals:
        """``∃ s ∈ [t+a, t+b]``: a run ``[s, e)`` makes ``t ∈ [s−b, e−a)`` true, cut to the
        clip (so a window reaching past the clip sees only the clip's frames)."""
        return self.clip(x.row, x.start - b, x.end - a, ordered=True)

    def window_all(self, x: Intervals, a: int, b: int) -> Intervals:
        """``∀ s ∈ [t+a, t+b]`` inside the clip: ``¬∃¬`` (true on an empty window)."""
        return self.not_(self.window_any(self.not_(x), a, b))

    def until(self, phi: Intervals, psi: Intervals, a: int, b: int) -> Intervals:
        """``∃ s ∈ [t+a, t+b]`` with ``ψ(s)`` and ``φ`` on ``[t, s)``. For ``t`` in a ``φ`` run
        ``[p, q)`` the witness may lie in ``[t+a, min(t+b, q)]``; each ``ψ`` run ``[u, v)`` that
        reaches ``[p, q]`` makes ``t ∈ [max(p, u−b), min(q−1, min(v−1, q)−a)]`` true. For
        ``a = 0`` every ``ψ`` frame is its own witness."""
        lo, hi = overlap_ranges(phi, psi, 1)
        i, j = expand_ranges(lo, hi)
        p, q = phi.start[i], phi.end[i]
        u, v = psi.start[j], psi.end[j]
        ok = (u <= q) & (v > p)
        start = np.maximum(p, u - b)
        end = np.minimum(q - 1, np.minimum(v - 1, q) - a) + 1
        rows, starts, ends = [phi.row[i][ok]], [start[ok]], [end[ok]]
        if a == 0:
            rows.append(psi.row)
            starts.append(psi.start)
            ends.append(psi.end)
        return self.clip(np.concatenate(rows), np.concatenate(starts), np.concatenate(ends))

    def count(self, x: Intervals) -> np.ndarray:
        """Frames that hold, per row."""
        return np.bincount(x.row, weights=x.end - x.start,
                           minlength=self.rows).astype(np.int64)


@dataclass(frozen=True)
class AtPoints:
    """A value known on the single-frame runs ``points`` alone (:func:`evaluate_runs_at`):
    on which of them it holds. Scoring reads it only beside those points
    (``points ∧ value``, ``points ∧ ¬value``)."""

    points: Intervals
    held: np.ndarray

    def runs(self) -> Intervals:
        """The points where it holds."""
        return self.points.kept(self.held)


def _single_frames(x: Intervals) -> bool:
    """Every run is one frame long."""
    return bool(len(x)) and bool(np.all(x.end - x.start == 1))


class RunTable:
    """Named ``active`` run sets of one evaluation (rows with their own lengths); onset and
    offset atoms derive from them under the declared clip-edge policy."""

    def __init__(self, signals: Mapping[str, Intervals], lengths: np.ndarray, *,
                 edges: str = "open") -> None:
        if edges not in EDGES:
            raise SignalError(f"unknown clip-edge policy {edges!r}; choose one of "
                              f"{', '.join(EDGES)}")
        self.ops = RunOps(lengths)
        self.edges = edges
        self.signals = {name: self.ops.clip(x.row, x.start, x.end, ordered=True)
                        for name, x in signals.items()}
        self.cache: dict[str, Intervals] = {}

    def lookup(self, atom: Atom, *, source: str | None = None,
               name: str = "<formula>") -> Intervals:
        key = atom.name
        if key in self.cache:
            return self.cache[key]
        active_name = signal_name(atom.side, "active", atom.cls)
        if active_name not in self.signals:
            raise missing_atom(atom, self.signals, source=source, name=name)
        active = self.signals[active_name]
        if atom.kind == "active":
            value = active
        elif atom.kind == "onset":  # a run starts at s: onset there, unless open at frame 0
            keep = (active.start > 0) if self.edges == "open" else np.ones(len(active), bool)
            value = _intervals(active.row[keep], active.start[keep], active.start[keep] + 1)
        else:  # the first inactive frame after a run; closed: the last frame of the clip
            inside = active.end < self.ops.lengths[active.row]
            end = np.where(inside, active.end, active.end - 1)
            keep = inside if self.edges == "open" else np.ones(len(active), bool)
            value = _intervals(active.row[keep], end[keep], end[keep] + 1)
        self.cache[key] = value
        return value


def evaluate_runs(formula: Formula, table: RunTable, resolver: BoundResolver, *,
                  source: str | None = None, name: str = "<formula>") -> Intervals:
    """The frames where ``formula`` holds, as runs per row."""
    return next(evaluate_runs_each((formula,), table, resolver, source=source, name=name))


def evaluate_runs_each(formulas: Iterable[Formula], table: RunTable, resolver: BoundResolver,
                       *, source: str | None = None, name: str = "<formula>"
                       ) -> Iterator[Intervals]:
    """:func:`evaluate_runs` of several formulas, in order; equal sub-formulas of all run
    once."""
    return evaluate_trees(formulas, table.ops,
                          lambda atom: table.lookup(atom, source=source, name=name), resolver)


def single_framed(formula: Formula) -> bool:
    """Whether ``formula`` can hold only on single frames, whatever the traces: an onset or
    offset atom (a run of one frame each), or a conjunction with one."""
    stack = [formula]
    while stack:  # down the conjunctions only, without recursion
        node = stack.pop()
        if isinstance(node, Atom) and node.kind in ("onset", "offset"):
            return True
        if isinstance(node, And):
            stack.extend((node.left, node.right))
    return False


def evaluate_runs_at(formulas: Sequence[Formula], points: Intervals, table: RunTable,
                     resolver: BoundResolver, *, source: str | None = None,
                     name: str = "<formula>") -> list[AtPoints]:
    """Each formula's value on the single-frame runs ``points`` alone: on which of them it
    holds. The Boolean operators combine values at the points; an atom, a window of a
    modality and an until are looked up in runs (a modality's argument and an until are
    evaluated as runs, once each), so a clause obliged on onsets costs a search per onset,
    not an operation on every run of its requirement."""
    row, frame = points.row, points.start
    length = table.ops.lengths[row]
    everything = [node for formula in formulas for node in postorder(formula, children)]
    keys = structure(everything, children)
    at_points = [node for formula in formulas for node in postorder(formula, _until_modal)]
    modal = {keys[id(n)]: n for n in at_points if isinstance(n, Temporal | Until)}
    as_runs = evaluate_runs_each([n if isinstance(n, Until) else n.arg
                                  for n in modal.values()], table, resolver, source=source,
                                 name=name)
    values: dict[int, np.ndarray] = {}
    for node in at_points:
        key = keys[id(node)]
        if key in values:
            continue
        args = [values[keys[id(c)]] for c in _until_modal(node)]
        if isinstance(node, Atom):
            value = holds_at(table.lookup(node, source=source, name=name), row, frame)
        elif isinstance(node, Const):
            value = np.full(len(row), node.value)
        elif isinstance(node, Not):
            value = ~args[0]
        elif isinstance(node, And):
            value = args[0] & args[1]
        elif isinstance(node, Or):
            value = args[0] | args[1]
        elif isinstance(node, Implies):
            value = ~args[0] | args[1]
        elif isinstance(node, Until):
            value = holds_at(next(as_runs), row, frame)
        else:
            value = _window_at(node, next(as_runs), row, frame, length, resolver)
        values[key] = value
    return [AtPoints(points, values[keys[id(f)]]) for f in formulas]


def _until_modal(node: Formula) -> tuple[Formula, ...]:
    """Sub-formulas valued at the points: none below a modality or an until."""
    return () if isinstance(node, Temporal | Until) else children(node)


def _window_at(node: Temporal, runs: Intervals, row: np.ndarray, frame: np.ndarray,
               length: np.ndarray, resolver: BoundResolver) -> np.ndarray:
    """A modality at single frames from its argument's runs: the window ``[t+a, t+b]`` cut
    to the clip, and the first argument run ending inside or after it. ``∃`` (N, F, P): that
    run starts within the window (never on an empty window, as runs lie inside the clip);
    ``∀`` (G, H): it covers the window, touching runs joined (true on an empty window)."""
    lo, hi = resolver.window(node.window)
    a, b = {"N": (-hi, hi), "F": (lo, hi), "G": (lo, hi), "P": (-hi, -lo),
            "H": (-hi, -lo)}[node.op]
    first, last = np.maximum(frame + a, 0), np.minimum(frame + b, length - 1)
    every = node.op in ("G", "H")
    if every:
        runs = Intervals.merged(runs.row, runs.start, runs.end, ordered=True)
    index, found = run_after(runs, row, first)
    if len(runs):
        found &= runs.start[index] <= (first if every else last)
        if every:
            found &= runs.end[index] > last
    return (first > last) | found if every else found
