"""Interval matching: greedy (references by onset, each takes the first unmatched prediction
by onset that satisfies the relation) and exact maximum-cardinality bipartite matching
(Hopcroft–Karp, scipy), both deterministic, plus the audit of where greedy falls short.

When each reference's candidates are one contiguous run of predictions and the runs move
forward with the references (the overlap relation between disjoint same-class intervals
sorted by onset), the graph is convex with monotone ends: there greedy *is* a maximum
matching (a reference never takes a prediction a later one needed more, since every later
reference reaches at least as far), and :func:`sweep` finds it for all rows at once."""

from __future__ import annotations

import numpy as np

from sedcontract.contracts.syntax import METHODS

_EMPTY = np.zeros(0, dtype=np.int64)

__all__ = ["METHODS", "exact", "greedy", "match", "monotone_ranges", "sweep"]

SWEEP_ROUNDS = 64  # rounds of the vectorised sweep before the loop finishes the rest


def greedy(ref_index: np.ndarray, pred_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy matching over candidate pairs given in (ref onset, pred onset) order; on a convex
    graph with monotone ends (references in increasing order) by the vectorised sweep."""
    if len(ref_index) and np.all(ref_index[1:] >= ref_index[:-1]):
        # "first free in order" only compares predictions: renumbering the ones that occur
        # densely, in order, lets a run of candidates with gaps between them look contiguous
        present, dense = np.unique(pred_index, return_inverse=True)
        ranges = monotone_ranges(ref_index, dense.astype(np.int64))
        if ranges is not None:
            refs, taken = sweep(*ranges)
            return refs, present[taken].astype(np.int64)
    # an edge whose ends have no other candidate is matched whatever the order: only the
    # rest is walked in order
    kept = (_degree(ref_index)[ref_index] == 1) & (_degree(pred_index)[pred_index] == 1)
    rest = np.flatnonzero(~kept)
    taken_ref: set[int] = set()
    taken_pred: set[int] = set()
    for k, r, p in zip(rest.tolist(), ref_index[rest].tolist(), pred_index[rest].tolist(),
                       strict=True):
        if r in taken_ref or p in taken_pred:
            continue
        taken_ref.add(r)
        taken_pred.add(p)
        kept[k] = True
    return ref_index[kept].astype(np.int64), pred_index[kept].astype(np.int64)


def _degree(index: np.ndarray) -> np.ndarray:
    """How often each index occurs."""
    return np.bincount(index) if len(index) else _EMPTY


def exact(ref_index: np.ndarray, pred_index: np.ndarray, n_ref: int,
          n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """A maximum-cardinality matching of the candidate graph (Hopcroft–Karp).

    Deterministic: the graph is built from candidates in (ref onset, pred onset) order and
    scipy's Hopcroft–Karp visits them in that order; an edge alone in its component is kept
    without it (the pairs are the same); pairs are returned sorted by reference.
    """
    if len(ref_index) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # an edge whose ends have no other candidate is in every maximum matching, and the search
    # is local to a component (tests/unit/contracts/test_matching.py checks it against the
    # whole graph): only the rest goes to scipy, whose import alone costs a quarter of a second
    alone = (_degree(ref_index)[ref_index] == 1) & (_degree(pred_index)[pred_index] == 1)
    refs, preds = _hopcroft_karp(ref_index[~alone], pred_index[~alone], n_ref, n_pred) \
        if not alone.all() else (_EMPTY, _EMPTY)
    refs = np.concatenate([ref_index[alone], refs]).astype(np.int64)
    preds = np.concatenate([pred_index[alone], preds]).astype(np.int64)
    order = np.argsort(refs, kind="stable")
    return refs[order], preds[order]


def _hopcroft_karp(ref_index: np.ndarray, pred_index: np.ndarray, n_ref: int,
                   n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """scipy's Hopcroft–Karp on the candidate graph, pairs sorted by reference."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    graph = csr_matrix((np.ones(len(ref_index), dtype=np.int8), (ref_index, pred_index)),
                       shape=(n_ref, n_pred))
    graph.sort_indices()
    match = maximum_bipartite_matching(graph, perm_type="column")
    refs = np.flatnonzero(match >= 0)
    return refs.astype(np.int64), match[refs].astype(np.int64)


def monotone_ranges(ref_index: np.ndarray, pred_index: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(refs, lo, hi)`` when candidate pairs (in (ref, pred) order) give each reference one
    contiguous run ``[lo, hi)`` of predictions with ``lo`` and ``hi`` non-decreasing over the
    references; None otherwise (the general matchers apply)."""
    if len(ref_index) == 0:
        return _EMPTY, _EMPTY, _EMPTY
    first = np.ones(len(ref_index), dtype=bool)
    first[1:] = ref_index[1:] != ref_index[:-1]
    starts = np.flatnonzero(first)
    refs = ref_index[starts]
    lo = pred_index[starts]
    width = np.diff(np.append(starts, len(ref_index)))
    hi = lo + width
    inside = ~first
    contiguous = np.all(pred_index[1:][inside[1:]] == pred_index[:-1][inside[1:]] + 1)
    if not contiguous or np.any(np.diff(lo) < 0) or np.any(np.diff(hi) < 0):
        return None
    return refs, lo, hi


def sweep(refs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy on a convex graph with monotone ends (see the module text): each reference in
    order takes ``max(lo, last taken + 1)`` when that is below its ``hi``.

    Vectorised by *segments*: a reference known to take its own ``lo`` starts one, and within
    a segment every reference takes one more than the last (as long as each finds one), so
    ``taken[i] − i`` is the segment's running maximum of ``lo[k] − k``. A reference with an
    empty range takes nothing and changes nothing: it is left out. A segment in which every
    reference finds one is final; in the others the first that finds nothing is truly
    unmatched, so each round drops it and goes on with those segments alone."""
    taken = np.full(len(refs), -1, dtype=np.int64)
    live = np.flatnonzero(lo < hi)
    known = np.zeros(len(live), dtype=bool)  # segment starts proven in earlier rounds
    for _ in range(SWEEP_ROUNDS):
        if len(live) == 0:
            break
        a, b = lo[live], hi[live]
        starts = _segment_starts(a, b, known)
        take, starts = _segment_takes(a, starts)
        short = take >= b
        segment = np.cumsum(starts) - 1
        unfinished = np.zeros(int(segment[-1]) + 1, dtype=bool)
        unfinished[segment[short]] = True
        settled = ~unfinished[segment]
        taken[live[settled]] = take[settled]
        shorts = np.flatnonzero(short)
        first = np.ones(len(shorts), dtype=bool)
        first[1:] = segment[shorts[1:]] != segment[shorts[:-1]]
        settled[shorts[first]] = True  # truly unmatched: dropped
        live, known = live[~settled], starts[~settled]
    else:  # segments with very many references left without a prediction: finish in order
        last = -1
        for i, a_, b_ in zip(live.tolist(), lo[live].tolist(), hi[live].tolist(), strict=True):
            if max(a_, last + 1) < b_:
                last = taken[i] = max(a_, last + 1)
    matched = np.flatnonzero(taken >= 0)
    return refs[matched].astype(np.int64), taken[matched]


def _segment_starts(lo: np.ndarray, hi: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The known segment starts and every reference whose range begins at or after the end
    of the one before it (no earlier reference reaches its ``lo``, as ``hi`` never falls)."""
    starts = known.copy()
    starts[1:] |= lo[1:] >= hi[:-1]
    starts[0] = True
    return starts


def _segment_takes(lo: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What each reference takes while every reference of its segment finds one, and the
    starts with those added that take their own ``lo`` (it reaches their segment's running
    maximum of ``lo[k] − k``)."""
    rank = np.arange(len(lo))
    offset = lo - rank
    segment = np.cumsum(starts) - 1
    span = int(offset.max()) - int(offset.min()) + 1  # lifts each segment above the last
    best = np.maximum.accumulate(offset + segment * span) - segment * span
    starts = starts.copy()
    starts[1:] |= offset[1:] >= best[:-1]
    return best + rank, starts


def match(method: str, ref_index: np.ndarray, pred_index: np.ndarray, n_ref: int,
          n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on ``greedy`` / ``exact``."""
    if method == "greedy":
        return greedy(ref_index, pred_index)
    if method == "exact":
        return exact(ref_index, pred_index, n_ref, n_pred)
    raise ValueError(f"unknown matching method {method!r}; choose one of {', '.join(METHODS)}")
