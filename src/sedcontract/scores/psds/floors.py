"""Score floors of PSDS from score tables: below its class's floor every threshold already
counts more false positives than ``max_efpr`` allows, so the counts there can be left out and
the PSD-ROC, which stops at ``max_efpr``, is the same to the last bit.

A column without reference events of its class holds a run, and so a false positive, at every
threshold up to its highest score (no reference event can make a run of it relevant when
every run needs some overlap with one). With ``n`` the fewest false positives whose rate
passes ``max_efpr``, the ``n``-th highest top among such columns is a floor: every threshold
below it counts ``n`` or more. Dense scores (a sigmoid output scores every class on every
frame) then cost the runs above the floors, about those of sparse tables, instead of every
frame; finding the floors takes one read of the tables' highest scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sedcontract.scores.psds.settings import PsdsSettings
from sedcontract.traces.grid import SECONDS_PER_HOUR


def false_needed(total: float, settings: Sequence[PsdsSettings]) -> int:
    """The fewest false positives whose rate per hour passes every scenario's ``max_efpr``,
    the rate reckoned in floats as the PSD-ROC reckons it (``count / total · 3600``; the
    cross-trigger term it adds is never negative)."""
    need = 1
    for chosen in settings:
        n = max(int(chosen.max_efpr * total / SECONDS_PER_HOUR), 1)
        while n / total * SECONDS_PER_HOUR <= chosen.max_efpr:
            n += 1
        while n > 1 and (n - 1) / total * SECONDS_PER_HOUR > chosen.max_efpr:
            n -= 1
        need = max(need, n)
    return need


def highest(tops: Sequence[np.ndarray], keep: int) -> np.ndarray:
    """Per class (column), the ``keep`` highest of the rows of ``tops`` (−inf where fewer):
    what a block of clips hands on, so that memory follows ``keep``, not the clips."""
    stacked = np.vstack(tops)
    if len(stacked) > keep:
        stacked = np.partition(stacked, len(stacked) - keep, axis=0)[len(stacked) - keep:]
    elif len(stacked) < keep:
        pad = np.full((keep - len(stacked), stacked.shape[1]), -np.inf)
        stacked = np.vstack([stacked, pad])
    return stacked


def free_tops(scores: np.ndarray, has_reference: np.ndarray) -> np.ndarray:
    """A clip's highest score per column, −inf where the column's class has reference events
    in the clip (its runs may be relevant, so it vouches for no false positive)."""
    tops = scores.max(axis=0)
    return np.where(has_reference, -np.inf, tops)


def floors_of(tops: Sequence[np.ndarray], keep: int) -> np.ndarray | None:
    """Each class's floor from the blocks' :func:`highest` tops: the ``keep``-th highest top
    of the columns without reference events (−inf where fewer); ``None`` when no class has
    one, and nothing is left out."""
    best = highest(tops, keep)
    floor = best.min(axis=0)
    return floor if np.isfinite(floor).any() else None


def masked(scores: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """The scores below their class's floor made −inf: no run is born there, and the runs
    above it (all that is counted) are the same."""
    low = scores < floor
    return np.where(low, -np.inf, scores) if low.any() else scores
