"""The exact monitor on run-length traces: a value is the set of frames where it holds, as
sorted maximal runs per row (:class:`~sedcontract.traces.intervals.Intervals`), and every
operator of the frame sort is computed from runs, for all rows at once. The cost grows with
the number of runs, not of frames: a 1 ms grid or an hour-long clip costs what its events
cost. Semantics, truncation at each row's own length and clip edges are the dense monitor's
(tests hold the two equal).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.monitor import evaluate_trees, missing_atom
from sedcontract.contracts.syntax import Atom, Formula
from sedcontract.errors import SignalError
from sedcontract.traces.activity import EDGES
from sedcontract.traces.intervals import Intervals, expand_ranges, overlap_ranges
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

    def not_(self, x: Intervals) -> Intervals:
        """The complement within each row's ``[0, length)``."""
        first = np.ones(len(x), dtype=bool)
        first[1:] = x.row[1:] != x.row[:-1]
        gap_start = np.where(first, 0, np.roll(x.end, 1))
        last = np.ones(len(x), dtype=bool)
        last[:-1] = x.row[1:] != x.row[:-1]
        tail_end = np.zeros(self.rows, dtype=np.int64)
        tail_end[x.row[last]] = x.end[last]
        rows = np.arange(self.rows, dtype=np.int64)
        return Intervals.merged(np.concatenate([x.row, rows]),
                                np.concatenate([gap_start, tail_end]),
                                np.concatenate([x.start, self.lengths]))

    def and_(self, x: Intervals, y: Intervals) -> Intervals:
        """Intersection: each run of ``x`` with the runs of ``y`` it shares frames with (at
        most ``len(x) + len(y)`` pairs, found by sorted search)."""
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
