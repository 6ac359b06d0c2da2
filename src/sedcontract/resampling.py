"""Bootstrap draws over clips and percentile intervals: one set of draws for every interval of
the project (guard vectors, standard scores, PSDS, AUROC), so intervals of one set of clips
under one seed are of the same resamples."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number, is_whole

MAX_INDEX_CELLS = 50_000_000   # resamples × clips that resample_indices materialises at most
# resamples of one interval at most: each keeps a score per coordinate, mode and system (100,000
# resamples of a 7-coordinate vector, typed and union, paired: about 25 MB); percentile
# intervals settle at a few thousand
MAX_RESAMPLES = 100_000
CHUNK_CELLS = 1 << 22         # resamples × clips drawn and weighed at once (≈ 32 MiB each)


@dataclass(frozen=True)
class Interval:
    """A difference a − b: ``point`` on the full set of clips, the percentile interval
    ``[lo, hi]`` at ``level`` over the resamples where the difference was defined, and how
    many were (``defined`` of ``resamples``; the others were vacuous for a system)."""

    point: float
    lo: float
    hi: float
    level: float
    defined: int
    resamples: int

    @property
    def undefined(self) -> int:
        """Resamples left out: a system had no obligations for this coordinate in them."""
        return self.resamples - self.defined

    @property
    def excludes_zero(self) -> bool:
        """The interval lies strictly on one side of 0 (False when it is undefined)."""
        return bool(self.lo > 0 or self.hi < 0)


def whole(value: object, what: str, least: int) -> int:
    if not is_whole(value, numpy=True) or value < least:
        raise SedContractError(f"{what} must be a whole number >= {least}, got {value!r}")
    return int(value)


def resampling(resamples: object, seed: object, level: object, clips: int) -> tuple[int, int]:
    """The checked resample count and seed; the level and a non-empty set of clips checked."""
    resamples, seed = whole(resamples, "resamples", 1), whole(seed, "seed", 0)
    if resamples > MAX_RESAMPLES:
        raise SedContractError(f"resamples must be at most {MAX_RESAMPLES:,} (each keeps a score "
                               f"per coordinate; percentile intervals settle at a few "
                               f"thousand), got {resamples:,}")
    if not is_number(level) or not 0 < level < 1:
        raise SedContractError(f"level must be a number strictly between 0 and 1, got "
                               f"{level!r}")
    if clips == 0:
        raise SedContractError("the reports have no clips to resample")
    return resamples, seed


def index_chunks(clips: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resampled clip positions, ``[rows, clips]`` blocks of consecutive resamples, drawn
    from ``numpy.random.default_rng(seed)`` — a pure function of (clips, resamples, seed)."""
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_CELLS // clips)
    for first in range(0, resamples, rows):
        yield rng.integers(0, clips, size=(min(rows, resamples - first), clips))


def draw_counts(drawn: np.ndarray, n: int) -> np.ndarray:
    """``[rows, n]``: how often each of ``n`` positions was drawn in each row of ``drawn``
    (a block of :func:`index_chunks`, each row's draws on its trailing axes)."""
    rows = len(drawn)
    where = (drawn.reshape(rows, -1) + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(where, minlength=rows * n).reshape(rows, n)


def resample_indices(clips: int, resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """``[resamples, clips]``: the clip positions :func:`paired_bootstrap` draws for this many
    clips, resamples and seed (the same for any pair of systems, contract or tolerance), for
    checks and for reuse; refused above :data:`MAX_INDEX_CELLS` cells."""
    clips, resamples = whole(clips, "clips", 1), whole(resamples, "resamples", 1)
    if clips * resamples > MAX_INDEX_CELLS:
        raise SedContractError(f"{resamples} resamples × {clips} clips = {clips * resamples} "
                               f"indices, more than {MAX_INDEX_CELLS} to hold at once; "
                               "paired_bootstrap draws them in blocks")
    return np.concatenate(list(index_chunks(clips, resamples, whole(seed, "seed", 0))))


def percentile_intervals(names: Sequence[str], points: Sequence[float], values: np.ndarray,
                         level: float, resamples: int) -> dict[str, Interval]:
    """Percentile intervals of the columns of ``values`` ``[resamples, names]`` (NaN rows left
    out and counted) around ``points``: the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles
    (numpy's linear method); NaN where no resample is defined."""
    quantiles = ((1 - level) / 2, (1 + level) / 2)
    out = {}
    for j, name in enumerate(names):
        column = values[:, j][~np.isnan(values[:, j])]
        lo, hi = (np.quantile(column, quantiles) if len(column) else (math.nan, math.nan))
        out[name] = Interval(float(points[j]), float(lo), float(hi), float(level), len(column),
                             resamples)
    return out


def interval_dicts(intervals: Mapping[str, Interval], seed: int) -> dict[str, dict[str, Any]]:
    """Intervals as plain data, with the seed of their draws (an undefined bound is NaN)."""
    return {name: {"point": i.point, "lo": i.lo, "hi": i.hi, "level": i.level,
                   "defined": i.defined, "resamples": i.resamples, "seed": seed}
            for name, i in intervals.items()}
