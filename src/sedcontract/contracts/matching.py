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
    scipy's Hopcroft–Karp visits them in that order; pairs are returned sorted by reference.
    """
    if len(ref_index) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # scipy's graph code costs a tenth of a second to import: only when a matching is made
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

    Vectorised: while every reference takes one, ``taken[i] − i`` is a running maximum of
    ``lo[k] − k``. A reference whose ``lo`` beats that maximum starts a *segment* that owes
    nothing to earlier ones; the first reference of a segment that finds nothing left is truly
    unmatched, so each round drops the first one of every segment and recomputes."""
    keep = np.ones(len(refs), dtype=bool)
    for _ in range(SWEEP_ROUNDS):
        idx = np.flatnonzero(keep)
        rank = np.arange(len(idx))
        offset = lo[idx] - rank
        best = np.maximum.accumulate(offset)
        taken = best + rank
        short = np.flatnonzero(taken >= hi[idx])
        if len(short) == 0:
            return refs[idx].astype(np.int64), taken.astype(np.int64)
        start = np.ones(len(idx), dtype=bool)
        start[1:] = offset[1:] > best[:-1]
        segment = np.cumsum(start)
        _, first = np.unique(segment[short], return_index=True)
        keep[idx[short[first]]] = False
    # a segment with very many references left without a prediction: finish it in order
    out_ref, out_pred, last = [], [], -1
    for r, a, b in zip(refs[keep].tolist(), lo[keep].tolist(), hi[keep].tolist(), strict=True):
        take = max(a, last + 1)
        if take < b:
            out_ref.append(r)
            out_pred.append(take)
            last = take
    return np.asarray(out_ref, dtype=np.int64), np.asarray(out_pred, dtype=np.int64)


def match(method: str, ref_index: np.ndarray, pred_index: np.ndarray, n_ref: int,
          n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on ``greedy`` / ``exact``."""
    if method == "greedy":
        return greedy(ref_index, pred_index)
    if method == "exact":
        return exact(ref_index, pred_index, n_ref, n_pred)
    raise ValueError(f"unknown matching method {method!r}; choose one of {', '.join(METHODS)}")
