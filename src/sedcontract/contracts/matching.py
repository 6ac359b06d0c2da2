"""Interval matching: greedy (references by onset, each takes the first unmatched prediction
by onset that satisfies the relation) and exact maximum-cardinality bipartite matching
(Hopcroft–Karp, scipy), both deterministic, plus the audit of where greedy falls short."""

from __future__ import annotations

import numpy as np

from sedcontract.contracts.syntax import METHODS

__all__ = ["METHODS", "exact", "greedy", "match"]


def greedy(ref_index: np.ndarray, pred_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy matching over candidate pairs given in (ref onset, pred onset) order."""
    taken_ref: set[int] = set()
    taken_pred: set[int] = set()
    out_ref, out_pred = [], []
    for r, p in zip(ref_index.tolist(), pred_index.tolist(), strict=True):
        if r in taken_ref or p in taken_pred:
            continue
        taken_ref.add(r)
        taken_pred.add(p)
        out_ref.append(r)
        out_pred.append(p)
    return np.asarray(out_ref, dtype=np.int64), np.asarray(out_pred, dtype=np.int64)


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


def match(method: str, ref_index: np.ndarray, pred_index: np.ndarray, n_ref: int,
          n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on ``greedy`` / ``exact``."""
    if method == "greedy":
        return greedy(ref_index, pred_index)
    if method == "exact":
        return exact(ref_index, pred_index, n_ref, n_pred)
    raise ValueError(f"unknown matching method {method!r}; choose one of {', '.join(METHODS)}")
