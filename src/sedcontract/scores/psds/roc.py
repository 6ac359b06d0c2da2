"""The PSD-ROC's step curves, written once for both PSDS routes: a class's TPR held to the right
of each eFPR it reaches, and the area under such a staircase up to ``max_efpr`` (summed as the
route's reference tool sums it)."""

from __future__ import annotations

import numpy as np


def staircase_at(x: np.ndarray, xp: np.ndarray, yp: np.ndarray) -> np.ndarray:
    """``y`` at each ``x`` of the staircase through ``(xp, yp)``: the best ``yp`` of the points
    with ``xp`` at most ``x`` (the highest TPR per eFPR, made non-decreasing, held to the
    right; 0 left of the first point)."""
    ux, inverse = np.unique(xp, return_inverse=True)
    best = np.full(len(ux), -np.inf)
    np.maximum.at(best, inverse, yp)
    best = np.maximum.accumulate(best)
    at = np.searchsorted(ux, x, side="right") - 1
    return np.where(at >= 0, best[np.maximum(at, 0)], 0.0)


def staircase_area(x: np.ndarray, y: np.ndarray, max_x: float, *,
                   in_order: bool = False) -> float:
    """The area under the staircase through ``(x, y)`` (each ``y`` held until the next ``x``;
    the points need not be sorted) up to ``max_x``: its rectangles summed as numpy sums them
    (psds_eval's rule), or one after another with ``in_order`` (sed_scores_eval's), so each
    route's value is its tool's to the last bit."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    below = int(np.searchsorted(x, max_x, side="left"))  # a point at max_x adds no area
    areas = np.diff(np.append(x[:below], max_x)) * y[:below]
    return float(sum(areas)) if in_order else float(np.sum(areas))
