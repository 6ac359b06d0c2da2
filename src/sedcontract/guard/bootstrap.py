"""Paired bootstrap over test clips: how sure is the difference between two systems' guard
vectors, given which clips happened to be in the test set?

Both reports are of the same clips under the same contract; every resample draws clips with
replacement, the *same* clips for both systems, and recomputes each system's scores from its
per-clip counts exactly as the report aggregates them (micro: pooled counts; macro: the mean
of the non-vacuous per-class scores), then ``logic`` (the mean of the non-vacuous
coordinates). Nothing is re-audited: a resample is a weighted sum of per-clip counts, one
matrix product per block of resamples.

The core works on plain per-clip count arrays (:func:`resampled_scores`, :func:`resampled_f1`,
:func:`percentile_intervals`), so the report's intervals from source rows
(:mod:`sedcontract.analysis.report`) are computed by the same code as an audit's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from sedcontract.errors import SedContractError, of_kind
from sedcontract.guard.report import GuardReport
from sedcontract.resampling import (
    CHUNK_CELLS,
    Interval,
    draw_counts,
    index_chunks,
    percentile_intervals,
    resampling,
    whole,
)
from sedcontract.scores.counts import MetricResult

__all__ = [
    "POLICY_KEYS",
    "bootstrap_intervals",
    "count_scores",
    "f1_scores",
    "hierarchical_bootstrap",
    "macro_f1",
    "paired_bootstrap",
    "resampled_f1",
    "resampled_macro_f1",
    "resampled_scores",
    "score_intervals",
    "seed_clip_draws",
    "stratified_bootstrap",
]

# The policy settings that decide what a count means; two reports compared clip by clip must
# agree on all of them. (``decision`` and ``scores`` may differ: how each system's posteriors
# became events, and which standard scores were computed beside the vector.)
POLICY_KEYS = ("contract_sha256", "hop", "projection", "edges", "rounding", "eps", "bounds",
               "matching", "aggregation", "logic")


def _check_paired(a: GuardReport, b: GuardReport, mode: str) -> None:
    """Refuse, naming what differs, two reports that are not of the same clips and contract."""
    if a.clips != b.clips:
        if len(a.clips) != len(b.clips):
            raise SedContractError(f"the reports are of different clips: {len(a.clips)} and "
                                   f"{len(b.clips)} clips; a paired bootstrap needs the same "
                                   "clips in the same order")
        i = next(i for i, (x, y) in enumerate(zip(a.clips, b.clips, strict=True)) if x != y)
        raise SedContractError(f"the reports are of different clips: clip {i} is {a.clips[i]!r} "
                               f"in a and {b.clips[i]!r} in b; a paired bootstrap needs the "
                               "same clips in the same order")
    if a.facts.classes != b.facts.classes:
        raise SedContractError(f"the reports have different classes: {list(a.facts.classes)} "
                               f"and {list(b.facts.classes)}")
    if a.coordinates != b.coordinates:
        raise SedContractError(f"the reports have different coordinates: "
                               f"{', '.join(a.coordinates)} and {', '.join(b.coordinates)}")
    if a.aggregation != b.aggregation:
        raise SedContractError(f"the reports have different aggregation: {a.aggregation} and "
                               f"{b.aggregation}")
    differ = [k for k in POLICY_KEYS if a.policy.get(k) != b.policy.get(k)]
    if differ:
        raise SedContractError("the reports come from different policies: " + "; ".join(
            f"{k} {a.policy.get(k)!r} and {b.policy.get(k)!r}" for k in differ))
    for name, report in (("a", a), ("b", b)):
        if mode not in report.modes:
            raise SedContractError(f"report {name} has no {mode!r} trace mode (it has "
                                   f"{', '.join(report.modes) or 'none'})")
    if "logic" in a.coordinates:
        raise SedContractError("a coordinate is named 'logic', the name of the mean of the "
                               "coordinates in the result; rename the clause")


def _counts(report: GuardReport, mode: str, groups: bool) -> np.ndarray:
    """``[clips, 2, coordinates, groups]``: satisfied then obligations per clip, per class when
    ``groups`` (macro on the typed trace), else summed over the clip's rows."""
    n, per = len(report.clips), len(report.facts.classes) if mode == "typed" else 1
    m = report.modes[mode]
    out = np.stack([np.stack([counts[c].reshape(n, per) for c in report.coordinates], axis=1)
                    for counts in (m.satisfied, m.obligations)], axis=1).astype(np.int64)
    return out if groups else out.sum(axis=3, keepdims=True)


def _mean_defined(scores: np.ndarray) -> np.ndarray:
    """Mean over the last axis of the non-NaN values, in order (NaN when none is)."""
    total = np.zeros(scores.shape[:-1])
    count = np.zeros(scores.shape[:-1], dtype=np.int64)
    for j in range(scores.shape[-1]):
        s = scores[..., j]
        ok = ~np.isnan(s)
        total += np.where(ok, s, 0.0)
        count += ok
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def count_scores(totals: np.ndarray) -> np.ndarray:
    """``[…, 2, K, G]`` totals (satisfied, obligations) → ``[…, K + 1]``: each coordinate's
    score (mean of the non-vacuous groups when there are several; NaN when vacuous), then
    logic, the mean of the non-vacuous coordinates."""
    satisfied, obligations = totals[..., 0, :, :], totals[..., 1, :, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        cells = np.where(obligations > 0, satisfied / np.maximum(obligations, 1), np.nan)
    vector = cells[..., 0] if cells.shape[-1] == 1 else _mean_defined(cells)
    return np.concatenate([vector, _mean_defined(vector)[..., None]], axis=-1)


def f1_scores(totals: np.ndarray) -> np.ndarray:
    """``[…, 3]`` totals (tp, references, outputs) → ``[…]``: micro F1 ``2 tp / (ref + sys)``,
    as :attr:`~sedcontract.scores.counts.Counts.f1`, NaN without references."""
    tp, ref, sys = totals[..., 0], totals[..., 1], totals[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ref > 0, 2 * tp / np.maximum(ref + sys, 1), np.nan)


def resampled_scores(counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Per-clip counts ``[clips, …, 2, K, G]`` → ``[resamples, …, K + 1]``: every resample's
    :func:`count_scores`, the clips drawn by :func:`resample_indices` (one draw for all the
    leading systems, so they are paired)."""
    return np.concatenate([count_scores(t) for t in _resampled_totals(counts, resamples, seed)])


def resampled_f1(parts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Per-clip (tp, references, outputs) ``[clips, …, 3]`` → ``[resamples, …]``: every
    resample's :func:`f1_scores`, the same draws as :func:`resampled_scores`."""
    return np.concatenate([f1_scores(t) for t in _resampled_totals(parts, resamples, seed)])


def macro_f1(totals: np.ndarray) -> np.ndarray:
    """``[…, classes, 3]`` totals → ``[…]``: the mean of the per-class F1 over the classes
    where it is defined (:meth:`~sedcontract.scores.counts.MetricResult.macro`), NaN where
    none is."""
    f1 = f1_scores(totals)
    defined = (~np.isnan(f1)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined > 0, np.nansum(f1, axis=-1) / np.maximum(defined, 1), np.nan)


def resampled_macro_f1(parts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Per-clip (tp, references, outputs) per class ``[clips, …, classes, 3]`` →
    ``[resamples, …]``: every resample's :func:`macro_f1`, the same draws as
    :func:`resampled_f1`."""
    return np.concatenate([macro_f1(t) for t in _resampled_totals(parts, resamples, seed)])


def paired_bootstrap(a: GuardReport | Sequence[GuardReport],
                     b: GuardReport | Sequence[GuardReport], *, mode: str = "typed",
                     resamples: int = 2000, seed: int = 0, level: float = 0.95
                     ) -> dict[str, Interval]:
    """The difference a − b of two systems' guard vectors on the same clips, per coordinate
    and for ``logic``, with paired percentile bootstrap intervals over the clips.

    Each of ``resamples`` resamples draws ``len(a.clips)`` clip positions with replacement
    (:func:`resample_indices`; the same ones for both systems) and recomputes both vectors
    from the per-clip counts under the reports' aggregation — micro: pooled satisfied /
    obligations; macro (typed trace): mean of the non-vacuous per-class scores — and logic,
    the mean of each system's non-vacuous coordinates. A resample in which a coordinate is
    vacuous for either system gives no difference for it: it is left out of that coordinate's
    interval and counted (``Interval.undefined``). ``[lo, hi]`` are the ``(1 − level)/2`` and
    ``(1 + level)/2`` quantiles (numpy's linear method) of the defined differences; NaN when
    none is. ``point`` is ``a.vector(mode)`` − ``b.vector(mode)`` (``a.logic(mode)`` −
    ``b.logic(mode)``). Deterministic from ``seed``; memory O(clips × counts + a block of
    resamples × clips + resamples × coordinates).

    A system given as a sequence of reports (its runs over training seeds, all of the same
    clips) is scored on its counts summed over the runs, clip by clip: a resample draws clips,
    each with every seed's counts, so the interval covers clip sampling with the seeds pooled;
    ``point`` is then the difference of the pooled vectors.
    """
    if not isinstance(mode, str):
        raise SedContractError(f"mode must be 'typed' or 'union', got {mode!r}")
    runs_a = [a] if isinstance(a, GuardReport) else list(a)
    runs_b = [b] if isinstance(b, GuardReport) else list(b)
    if not runs_a or not runs_b:
        raise SedContractError("each system needs at least one report")
    for run in (*runs_a, *runs_b):
        of_kind("each report", run, GuardReport)
    for other in (*runs_a[1:], *runs_b):
        _check_paired(runs_a[0], other, mode)
    pooled = len(runs_a) > 1 or len(runs_b) > 1
    a, b = runs_a[0], runs_b[0]
    resamples, seed = resampling(resamples, seed, level, len(a.clips))
    groups = a.aggregation == "macro" and mode == "typed"
    counts = np.stack([sum(_counts(r, mode, groups) for r in runs_a),
                       sum(_counts(r, mode, groups) for r in runs_b)], axis=1)
    # [clips, 2 systems, 2, K, G]: a's satisfied and obligations, then b's
    scores = resampled_scores(counts, resamples, seed)
    diff = scores[:, 0] - scores[:, 1]
    if pooled:
        totals = count_scores(counts.sum(axis=0))
        points = list(totals[0] - totals[1])
    else:
        points = [x - y for x, y in zip(a.vector(mode).values(), b.vector(mode).values(),
                                        strict=True)] + [a.logic(mode) - b.logic(mode)]
    return percentile_intervals((*a.coordinates, "logic"), points, diff, level, resamples)


def seed_clip_draws(seeds: int, clips: int, resamples: int = 2000, seed: int = 0
                    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The draws of :func:`hierarchical_bootstrap`, in blocks of consecutive resamples: per
    resample, ``seeds`` training-seed positions with replacement ``[rows, seeds]``, and for
    each drawn seed ``clips`` clip positions with replacement ``[rows, seeds, clips]``; from
    ``numpy.random.default_rng(seed)``, a pure function of the four numbers."""
    seeds, clips = whole(seeds, "seeds", 1), whole(clips, "clips", 1)
    resamples, seed = whole(resamples, "resamples", 1), whole(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_CELLS // (seeds * clips))
    for first in range(0, resamples, rows):
        count = min(rows, resamples - first)
        yield (rng.integers(0, seeds, size=(count, seeds)),
               rng.integers(0, clips, size=(count, seeds, clips)))


def hierarchical_bootstrap(a: Sequence[GuardReport], b: Sequence[GuardReport], *,
                           mode: str = "typed", resamples: int = 2000, seed: int = 0,
                           level: float = 0.95) -> dict[str, Interval]:
    """The difference a − b of two systems trained on the same seeds (``a[i]`` and ``b[i]``
    the runs of training seed ``i``, all of the same clips), per coordinate and ``logic``
    (and ``<score>_f1`` for the standard scores both carry), with a two-stage paired
    bootstrap: each resample draws the training seeds with replacement, then within each
    drawn seed the clips with replacement — the same seeds and clips for both systems — and
    scores each system on the counts of the drawn (seed, clip) cells pooled, as
    :func:`paired_bootstrap` scores pooled runs. Its interval covers the variance over
    training seeds as well as over test clips (:func:`paired_bootstrap` of the pooled runs
    holds the trained models fixed). ``point`` is the difference of the vectors pooled over
    every seed and clip. Draws: :func:`seed_clip_draws`."""
    names, points, diffs = _hierarchical(a, b, mode, resamples, seed, level)
    return percentile_intervals(names, points, diffs, level, len(diffs))


def stratified_bootstrap(strata: Sequence[tuple[Sequence[GuardReport], Sequence[GuardReport]]],
                         *, mode: str = "typed", resamples: int = 2000, seed: int = 0,
                         level: float = 0.95) -> dict[str, Interval]:
    """The mean over strata (benchmarks) of the differences a − b, each stratum ``(a, b)`` as
    in :func:`hierarchical_bootstrap`: every resample draws seeds and clips within each
    stratum independently (stratum ``k`` from ``seed + k``) and averages the strata's
    differences; a resample where a stratum's difference is undefined is left out. For a
    handful of benchmarks, whose own resampling would say nothing, this is the pooled
    interval: the variance of the mean over seeds and clips, the benchmarks held fixed."""
    strata = list(strata)
    if not strata:
        raise SedContractError("a stratified bootstrap needs at least one stratum")
    parts = [_hierarchical(a, b, mode, resamples, whole(seed, "seed", 0) + k, level)
             for k, (a, b) in enumerate(strata)]
    names = parts[0][0]
    for k, (other, _, _) in enumerate(parts[1:], start=1):
        if other != names:
            raise SedContractError(f"stratum {k} scores {', '.join(other)}, stratum 0 "
                                   f"{', '.join(names)}: the strata must score the same")
    points = np.mean([p for _, p, _ in parts], axis=0)
    diffs = np.mean([d for _, _, d in parts], axis=0)  # NaN in any stratum: left out
    return percentile_intervals(names, list(points), diffs, level, len(diffs))


def _hierarchical(a: Sequence[GuardReport], b: Sequence[GuardReport], mode: str,
                  resamples: int, seed: int, level: float
                  ) -> tuple[list[str], list[float], np.ndarray]:
    """Names, points and ``[resamples, names]`` drawn differences of
    :func:`hierarchical_bootstrap`."""
    if not isinstance(mode, str):
        raise SedContractError(f"mode must be 'typed' or 'union', got {mode!r}")
    runs_a, runs_b = list(a), list(b)
    if len(runs_a) != len(runs_b) or not runs_a:
        raise SedContractError(f"a hierarchical bootstrap pairs the systems' runs seed by "
                               f"seed: give both the same number of runs (>= 1), got "
                               f"{len(runs_a)} and {len(runs_b)}")
    for run in (*runs_a, *runs_b):
        of_kind("each run", run, GuardReport)
    for other in (*runs_a[1:], *runs_b):
        _check_paired(runs_a[0], other, mode)
    first = runs_a[0]
    resamples, seed = resampling(resamples, seed, level, len(first.clips))
    groups = first.aggregation == "macro" and mode == "typed"
    counts = np.stack([np.stack([_counts(x, mode, groups), _counts(y, mode, groups)], axis=1)
                       for x, y in zip(runs_a, runs_b, strict=True)])
    # [seeds, clips, 2 systems, 2, K, G]
    scores = np.concatenate([count_scores(t) for t in _seed_clip_totals(counts, resamples,
                                                                        seed)])
    totals = count_scores(counts.sum(axis=(0, 1)))
    names = [*first.coordinates, "logic"]
    points = list(totals[0] - totals[1])
    diffs = scores[:, 0] - scores[:, 1]
    scored = [k for k in first.scores or {}
              if all(k in (r.scores or {}) for r in (*runs_a, *runs_b))]
    settings = {repr(r.policy.get("scores")) for r in (*runs_a, *runs_b)}
    if scored and len(settings) > 1:
        raise SedContractError(f"the reports' standard scores were computed with other score "
                               f"settings ({' and '.join(sorted(settings))}); their F1 "
                               "differences would be the settings', not the systems'")
    if scored:  # [seeds, clips, 2 systems, scores, 3]: tp, references, outputs per clip
        parts = np.stack([np.stack([_score_parts(x.scores, scored),
                                    _score_parts(y.scores, scored)], axis=1)
                          for x, y in zip(runs_a, runs_b, strict=True)])
        f1 = np.concatenate([f1_scores(t) for t in _seed_clip_totals(parts, resamples, seed)])
        total_f1 = f1_scores(parts.sum(axis=(0, 1)))
        names += [f"{k}_f1" for k in scored]
        points += list(total_f1[0] - total_f1[1])
        diffs = np.concatenate([diffs, f1[:, 0] - f1[:, 1]], axis=1)
    return names, points, diffs


def _score_parts(scores: Mapping[str, MetricResult], scored: Sequence[str]) -> np.ndarray:
    """``[clips, scores, 3]``: each standard score's tp, references and outputs per clip."""
    return np.stack([np.stack([getattr(scores[k], part).sum(axis=1)
                               for part in SCORE_PARTS], axis=1) for k in scored], axis=1)


def score_intervals(scores: Mapping[str, MetricResult], *, resamples: int, seed: int,
                    level: float) -> dict[str, Interval]:
    """Each standard score's micro F1 (``<score>_f1``) with its percentile bootstrap interval
    over the clips (the draws of every other interval of these clips and seed)."""
    if not scores:
        return {}
    names = list(scores)
    parts = _score_parts(scores, names)  # [clips, scores, 3]
    return percentile_intervals([f"{name}_f1" for name in names],
                                [r.overall.f1 for r in scores.values()],
                                resampled_f1(parts, resamples, seed), level, resamples)


def _seed_clip_totals(counts: np.ndarray, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Per block of resamples, the ``counts`` ``[seeds, clips, …]`` summed over each
    resample's drawn (seed, clip) cells (:func:`seed_clip_draws`)."""
    seeds, clips = counts.shape[:2]
    draws = (drawn_seeds[:, :, None] * clips + drawn_clips
             for drawn_seeds, drawn_clips in seed_clip_draws(seeds, clips, resamples, seed))
    return _drawn_totals(counts.reshape(seeds * clips, *counts.shape[2:]), draws)


def _resampled_totals(counts: np.ndarray, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Per block of resamples, the per-clip ``counts`` ``[clips, …]`` summed over each
    resample's drawn clips (:func:`resample_indices`)."""
    return _drawn_totals(counts, index_chunks(counts.shape[0], resamples, seed))


def _drawn_totals(counts: np.ndarray, draws: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """For each block of draws ``[rows, …]`` (positions along the first axis of ``counts``),
    the counts summed over each row's drawn positions: ``[rows, counts.shape[1:]]``, one
    matrix product of draw counts by the count matrix per block."""
    n, shape = counts.shape[0], counts.shape[1:]
    flat = counts.reshape(n, -1)
    # Integer-valued float64 sums are exact below 2**53 whatever BLAS's order; above, integers,
    # which hold any resample's sum while n times the largest count stays below 2**63.
    if float(flat.max(initial=0)) * n >= 2.0 ** 63:
        raise SedContractError("counts too large to resample: a resample drawing the largest "
                               "clip's count every time would pass 2^63 − 1")
    exact = float(flat.max(initial=0)) * n < 2.0 ** 53
    matrix = flat.astype(np.float64) if exact else flat
    for drawn in draws:
        yield (draw_counts(drawn, n).astype(matrix.dtype) @ matrix).reshape(len(drawn), *shape)


SCORE_PARTS = ("tp", "ref", "sys")


def bootstrap_intervals(report: GuardReport, *, mode: str = "typed", resamples: int = 2000,
                        seed: int = 0, level: float = 0.95,
                        scores: bool = True) -> dict[str, Interval]:
    """One system's guard vector, logic and standard scores (micro F1, ``<score>_f1``) with
    percentile bootstrap intervals over its clips: each resample draws the clips with
    replacement (:func:`resample_indices`, the same draws as :func:`paired_bootstrap` for the
    same clips and seed) and recomputes every score from the per-clip counts under the
    report's aggregation. What the interval means: the spread of the score over test sets like
    this one (clips drawn from the same population), not over retrainings of the system."""
    of_kind("report", report, GuardReport)
    of_kind("scores", scores, bool)
    if not isinstance(mode, str) or mode not in report.modes:
        raise SedContractError(f"report has no {mode!r} trace mode (it has "
                               f"{', '.join(report.modes) or 'none'})")
    resamples, seed = resampling(resamples, seed, level, len(report.clips))
    groups = report.aggregation == "macro" and mode == "typed"
    vector = resampled_scores(_counts(report, mode, groups), resamples, seed)
    names = [*report.coordinates, "logic"]
    points = [*report.vector(mode).values(), report.logic(mode)]
    out = percentile_intervals(names, points, vector, level, resamples)
    if not scores:  # the standard scores' intervals apart (they do not depend on the mode)
        return out
    return out | score_intervals(report.scores or {}, resamples=resamples, seed=seed,
                                 level=level)
