"""Detectors compared over their whole trade-off, with intervals over training seeds and clips.

A detector read at one operating point mixes how well it ranks frames with where its threshold
sits. Here each run is read at every threshold of a grid: for each coordinate of the guard
vector, its false-activity budget curve (:mod:`sedcontract.analysis.curve_summaries`: the area
up to ``max_rate`` false events per hour, and the score at chosen budgets), and PSDS.

- **The grid.** Thresholds uniform in logit from −15 to 15 (1,201 of them, a step of 0.025 in
  logit, finer than 0.007 in probability everywhere), then −∞ (everything active); above them
  nothing is active. Every count is exact at each grid threshold; a deployer who sets one of
  them gets what the table says. Against every distinct score (the exact curves), the areas
  and PSDS move in the third decimal at most (measured and printed by the experiment).
- **Seeds and clips.** A run's reading on clips weighed by how often a bootstrap draw took them
  is one matrix product of the weights by its per-clip counts at the grid. A system's value is
  the mean over its training seeds of each seed's reading; a draw resamples the seeds, then the
  clips within each drawn seed (:func:`~sedcontract.guard.bootstrap.seed_clip_draws`, the draws
  of the guard vector's intervals), the same draws for every system of a benchmark, so
  differences are paired.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.analysis.curve_summaries import budget_areas
from sedcontract.errors import SedContractError
from sedcontract.guard.bootstrap import seed_clip_draws
from sedcontract.guard.curves import clip_changes
from sedcontract.resampling import Interval, percentile_intervals, resampling
from sedcontract.scores.psds.of_scores import ScoredCorpus, block_task, psds_from_counts
from sedcontract.scores.psds.resampled import ClipRows
from sedcontract.scores.psds.score_counts import ScoreChanges, summed
from sedcontract.scores.psds.settings import PsdsSettings
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.grid import SECONDS_PER_HOUR

__all__ = ["BUDGETS", "GUARD", "GridMaterial", "grid_material", "logit_grid", "reading_names",
           "readings", "seed_clip_readings", "tradeoff_intervals"]

GUARD = ("onset", "offset", "missed", "false", "silence", "fragmentation")
BUDGETS = (10.0, 30.0, 100.0)
RATE = "false"       # the coordinate whose failures are the false activity
DENSE_CELLS = 1 << 21  # weights rows × clips, or rows × grid thresholds, held at once


def logit_grid(lo: float = -15.0, hi: float = 15.0, count: int = 1201) -> np.ndarray:
    """The grid's finite thresholds, descending: ``sigmoid`` of ``count`` logits from ``hi``
    down to ``lo``."""
    return 1.0 / (1.0 + np.exp(-np.linspace(hi, lo, count)))


@dataclass(frozen=True)
class GridMaterial:
    """One run's counts at every grid threshold, clip by clip, kept as the changes between
    consecutive thresholds (``bin`` ``j``: the counts that turn on between threshold ``j − 1``
    and ``j``; ``thresholds`` descending, first nothing active, last ``-inf``).

    ``guard[coordinate]``: ``(base [clips, keys, 2], clip, key, bin, satisfied, obligations)``,
    key ``len(classes)`` the union trace; ``psds[scenario]``: ``(clip, class, bin, tp, fp)``
    and ``(clip, class, other, bin, ct)``; ``in_psds`` marks the clips PSDS counts (those of
    its ground truth), ``truth`` its reference events by clip."""

    classes: tuple[str, ...]
    clips: tuple[str, ...]
    seconds: np.ndarray
    thresholds: np.ndarray
    guard: dict[str, tuple[np.ndarray, ...]]
    psds: dict[str, tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]
    settings: dict[str, PsdsSettings]
    truth: Any
    in_psds: np.ndarray
    psds_clip: np.ndarray  # each PSDS clip's index among ``clips``


def _bins(thresholds: np.ndarray, values: np.ndarray, strict: bool) -> np.ndarray:
    """For each value, the first threshold (descending) at which it counts: ``value >
    threshold`` (``strict``, the guard curves' rule) or ``value >= threshold`` (PSDS's);
    ``len(thresholds)`` where none."""
    return np.searchsorted(-thresholds, -values, side="right" if strict else "left")


def _summed(keys: Sequence[np.ndarray], values: Sequence[np.ndarray]
            ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Values summed over equal key tuples (rows beyond the grid dropped by the caller)."""
    order = np.lexsort(keys[::-1])
    keys, sums = summed(tuple(k[order] for k in keys), tuple(v[order] for v in values))
    return list(keys), list(sums)


def grid_material(ref: Any, scores: Any, durations: Any, *,
                  settings: Mapping[str, PsdsSettings], policy: Any = None,
                  decision: DecisionPolicy | None = None,
                  grid: np.ndarray | None = None,
                  coordinates: Sequence[str] = GUARD) -> GridMaterial:
    """A run's :class:`GridMaterial` from its reference events, score tables (a folder or
    :func:`~sedcontract.traces.score_files.read_score_dir`'s tables) and clip durations (files or
    read), after the median filters of ``decision`` (its thresholds are the grid's business):
    the guard curves' changes (:func:`~sedcontract.guard.curves.clip_changes`, the standard
    contract of ``policy``) and PSDS's per-clip counts under each of ``settings``, binned on
    the grid."""
    from sedcontract.traces.decision import filtered
    from sedcontract.traces.given import durations_of, events_of, score_source
    from sedcontract.traces.score_files import ScoreTable

    ref, durations = events_of(ref, "reference"), durations_of(durations)
    if durations is None:
        raise SedContractError("the trade-off reading needs the clips' durations")
    grid = logit_grid() if grid is None else np.asarray(grid, dtype=np.float64)
    if len(grid) == 0 or np.any(np.diff(grid) >= 0) or not np.isfinite(grid).all():
        raise SedContractError("a threshold grid is finite and strictly descending")
    thresholds = np.r_[math.inf, grid, -math.inf]
    decision = decision or DecisionPolicy()
    changes = clip_changes(ref, scores, durations, policy, decision=decision)
    classes, clips = changes.classes, changes.clips
    guard = {}
    for name in dict.fromkeys((*coordinates, RATE)):
        if name not in changes.changes:
            raise SedContractError(f"no curve of {name!r}; the curves hold "
                                   f"{', '.join(changes.changes)}")
        clip, key, value, sat, obl = changes.changes[name]
        where = _bins(thresholds, value, strict=True)
        live = where < len(thresholds)
        (c, k, b), (s, o) = _summed((clip[live], key[live], where[live]),
                                    (sat[live], obl[live]))
        guard[name] = (changes.base[name].astype(np.int64), c, k, b, s, o)
    # PSDS's counts, clip by clip, from the same tables after the same median filters
    filters = decision.resolve(classes).median_filter
    made = {}
    for clip, table in zip(clips, score_source(scores, list(clips)).stream(list(clips)),
                           strict=True):
        values = table.scores[:, [table.classes.index(c) for c in classes]]
        if np.any(filters > 0):
            values = filtered(values, filters, table.hop, decision.median_edge)
        made[clip] = ScoreTable(table.onset, table.offset, tuple(classes), values, table.lines)
    tables = score_source(made, list(clips))
    corpus = ScoredCorpus.of(tables, ref, durations, classes)
    keyed, _ = block_task(tables, corpus.truth, corpus.classes, list(settings.values()),
                          None, per_clip=True)
    psds = {}
    for name, part in zip(settings, keyed, strict=True):
        rows = ClipRows.of(part, len(classes))
        b = _bins(thresholds, rows.score[rows.group], strict=False)
        live = b < len(thresholds)
        tp_fp = _summed((rows.clip[live], rows.label[rows.group][live], b[live]),
                        (rows.tp[live], rows.fp[live]))
        cb = _bins(thresholds, rows.ct_score[rows.ct_group], strict=False)
        cl = cb < len(thresholds)
        cts = _summed((rows.ct_clip[cl], rows.ct_label[rows.ct_group][cl],
                       rows.ct_other[rows.ct_group][cl], cb[cl]), (rows.ct[cl],))
        psds[name] = (tuple(tp_fp[0] + tp_fp[1]), tuple(cts[0] + cts[1]))
    index = {c: k for k, c in enumerate(clips)}
    psds_clip = np.array([index[c] for c in corpus.clips], dtype=np.int64)
    in_psds = np.zeros(len(clips), dtype=bool)
    in_psds[psds_clip] = True
    return GridMaterial(tuple(classes), tuple(clips), changes.seconds.astype(np.float64),
                        thresholds, guard, psds, dict(settings), corpus.truth, in_psds,
                        psds_clip)


def reading_names(material: GridMaterial, budgets: Sequence[float] = BUDGETS) -> list[str]:
    """The quantities :func:`readings` returns, in order: per coordinate and trace mode
    (``typed``: the mean over classes; ``union``) its budget area and its score at each
    budget, then each PSDS scenario."""
    return [f"{name}/{mode}/{what}" for name in material.guard for mode in ("typed", "union")
            for what in ("area", *(f"at_{b:g}" for b in budgets))] + list(material.psds)


def _dense(n: int, points: int, clip: np.ndarray, where: np.ndarray, delta: np.ndarray,
           base: np.ndarray | None = None) -> np.ndarray:
    """``[clips, points]`` float64 counts at each threshold: ``base`` plus the changes that
    turned on at that threshold or above."""
    out = np.zeros((n, points))
    np.add.at(out, (clip, where), delta)
    np.cumsum(out, axis=1, out=out)
    if base is not None:
        out += base[:, None]
    return out


def _areas_and_levels(rates: np.ndarray, scores: np.ndarray, max_rate: float,
                      budgets: Sequence[float]) -> np.ndarray:
    """``[rows, 1 + budgets]``: the budget area (the mean score over budgets 0 … ``max_rate``,
    vacuous budgets left out) and the score at each budget, for each row of ``rates`` and
    ``scores`` ``[rows, thresholds]`` (:func:`~sedcontract.analysis.curve_summaries.
    budget_curve`'s rule ``first``, the one the round-2 protocol was locked under)."""
    reached = np.maximum.accumulate(rates, axis=1)
    out = np.empty((len(rates), 1 + len(budgets)))
    out[:, 0] = budget_areas(rates, scores, max_rate, rule="first")
    rows = np.arange(len(rates))
    for j, budget in enumerate(budgets, start=1):
        at = np.maximum((reached <= budget).sum(axis=1) - 1, 0)
        out[:, j] = scores[rows, at]
    return out


def _typed(values: np.ndarray) -> np.ndarray:
    """The mean over classes (axis 1) of the defined values; NaN where none is."""
    defined = ~np.isnan(values)
    count = defined.sum(axis=1)
    total = np.where(defined, values, 0.0).sum(axis=1)
    out = np.full(total.shape, math.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def _weighed(material: GridMaterial, name: str, key: int, weights: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """``name``'s satisfied and obligation counts of trace ``key`` at each grid threshold,
    summed over the clips as each row of ``weights`` weighs them: ``[rows, thresholds]``."""
    base, clip, k, where, sat, obl = material.guard[name]
    mine = k == key
    n, points = len(material.clips), len(material.thresholds)
    return tuple(weights @ _dense(n, points, clip[mine], where[mine], delta[mine],
                                  base[:, key, part])
                 for part, delta in enumerate((sat, obl)))


def readings(material: GridMaterial, weights: np.ndarray, *, max_rate: float = 100.0,
             budgets: Sequence[float] = BUDGETS) -> np.ndarray:
    """``[rows, names]`` (:func:`reading_names`): the run's readings on its clips weighed by
    each row of ``weights`` ``[rows, clips]`` (how often a draw took each clip; all ones: the
    run itself). NaN where a row leaves a quantity vacuous (PSDS: a class without events)."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != len(material.clips):
        raise SedContractError(f"weights must be [rows, {len(material.clips)} clips], got "
                               f"{weights.shape}")
    n, points, keys = len(material.clips), len(material.thresholds), len(material.classes) + 1
    rows = len(weights)
    step = max(1, DENSE_CELLS // max(points, n))
    names = reading_names(material, budgets)
    out = np.full((rows, len(names)), math.nan)
    coordinates = [name for name in material.guard]
    per = 2 * (1 + len(budgets))  # typed and union, area then the budgets
    for first in range(0, rows, step):
        w = weights[first:first + step]
        hours = w @ material.seconds / SECONDS_PER_HOUR
        block = np.full((len(w), len(coordinates), keys, 1 + len(budgets)), math.nan)
        for key in range(keys):
            f_sat, f_obl = _weighed(material, RATE, key, w)
            with np.errstate(divide="ignore", invalid="ignore"):
                rates = (f_obl - f_sat) / np.maximum(hours, 1e-300)[:, None]
            for i, name in enumerate(coordinates):
                sat, obl = (f_sat, f_obl) if name == RATE else _weighed(material, name, key, w)
                scores = np.full(sat.shape, math.nan)
                np.divide(sat, obl, out=scores, where=obl > 0)
                block[:, i, key] = _areas_and_levels(rates, scores, max_rate, budgets)
        for i in range(len(coordinates)):
            typed = np.stack([_typed(block[:, i, :-1, j]) for j in range(1 + len(budgets))],
                             axis=1)
            union = block[:, i, -1]
            out[first:first + len(w), i * per:(i + 1) * per] = np.concatenate([typed, union],
                                                                              axis=1)
    for j, name in enumerate(material.psds, start=len(coordinates) * per):
        out[:, j] = _psds_rows(material, name, weights)
    return out


def _psds_rows(material: GridMaterial, name: str, weights: np.ndarray) -> np.ndarray:
    """PSDS of scenario ``name`` on each row of ``weights``: the per-clip counts at the grid
    weighed and summed (one matrix product per class), then the PSD-ROC formed by
    :func:`~sedcontract.scores.psds.of_scores.psds_from_counts`, the grid thresholds as the
    scores."""
    (clip, label, where, tp, fp), (cclip, clabel, cother, cwhere, ct) = material.psds[name]
    K, points = len(material.classes), len(material.thresholds)
    n = len(material.clips)
    grid_score = np.where(np.isfinite(material.thresholds), material.thresholds, 0.0)
    grid_score[0] = np.inf  # nothing turns on there (bins start at the first finite one)
    psds_weights = weights[:, material.psds_clip]
    totals = weights[:, material.in_psds] @ material.seconds[material.in_psds]
    out = np.full(len(weights), math.nan)

    def moves(mask: np.ndarray, rows: np.ndarray, bins: np.ndarray, delta: np.ndarray
              ) -> np.ndarray:
        """``[clips, points]``: each clip's changes at each grid threshold."""
        out = np.zeros((n, points))
        np.add.at(out, (rows[mask], bins[mask]), delta[mask])
        return out

    tp_moves = [moves(label == c, clip, where, tp) for c in range(K)]
    fp_moves = [moves(label == c, clip, where, fp) for c in range(K)]
    pairs = [(c, o) for c in range(K) for o in range(K) if c != o]
    ct_moves = {(c, o): moves((clabel == c) & (cother == o), cclip, cwhere, ct)
                for c, o in pairs}
    settings = material.settings[name]
    step = max(1, DENSE_CELLS // points)
    for first in range(0, len(weights), step):
        w = weights[first:first + step]
        tps = np.stack([w @ m for m in tp_moves], axis=1)  # [rows, K, points]
        fps = np.stack([w @ m for m in fp_moves], axis=1)
        cts = {pair: w @ m for pair, m in ct_moves.items()}
        for r in range(len(w)):
            live = (tps[r] != 0) | (fps[r] != 0)
            cls_, bins = np.nonzero(live)
            ct_rows = [(c, o, np.nonzero(cts[(c, o)][r])[0]) for c, o in pairs]
            ct_label = np.concatenate([np.full(len(b), c) for c, _, b in ct_rows] or [[]])
            ct_other = np.concatenate([np.full(len(b), o) for _, o, b in ct_rows] or [[]])
            ct_bin = np.concatenate([b for _, _, b in ct_rows] or [[]]).astype(np.int64)
            ct_value = np.concatenate([cts[(c, o)][r][b] for c, o, b in ct_rows] or [[]])
            counts = ScoreChanges.of(K, cls_, grid_score[bins], np.rint(tps[r][live]).astype(
                np.int64), np.rint(fps[r][live]).astype(np.int64), ct_label.astype(np.int64),
                grid_score[ct_bin], ct_other.astype(np.int64),
                np.rint(ct_value).astype(np.int64))
            out[first + r] = psds_from_counts([counts], material.truth, material.classes,
                                              float(totals[first + r]), settings,
                                              psds_weights[first + r])["value"]
    return out


def seed_clip_readings(runs: Sequence[Callable[[], GridMaterial]], *, resamples: int,
                       seed: int, max_rate: float = 100.0,
                       budgets: Sequence[float] = BUDGETS
                       ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """One system's readings over its training seeds: the names, each seed's reading on all
    its clips ``[seeds, names]`` (the system's point is their mean) and ``[resamples, names]``
    draws (the mean over the drawn seeds of each one's reading on its drawn clips;
    :func:`~sedcontract.guard.bootstrap.seed_clip_draws` from ``seed``, the same draws for
    any system of the same seeds and clips). ``runs[i]`` makes seed ``i``'s material; each
    is made once and dropped after use, so memory holds one run at a time."""
    if not runs:
        raise SedContractError("a system needs at least one run")
    first = runs[0]()
    names, clips = reading_names(first, budgets), first.clips
    resamples, seed = resampling(resamples, seed, 0.95, len(clips))
    n_seeds = len(runs)
    points = np.empty((n_seeds, len(names)))
    slots = np.full((resamples, n_seeds, len(names)), math.nan)
    draws = list(seed_clip_draws(n_seeds, len(clips), resamples, seed))
    for s in range(n_seeds):
        material = first if s == 0 else runs[s]()
        if material.clips != clips or reading_names(material, budgets) != names:
            raise SedContractError(f"run {s} is of other clips or quantities than run 0: a "
                                   "system's runs are read on the same clips")
        points[s] = readings(material, np.ones((1, len(clips))), max_rate=max_rate,
                             budgets=budgets)[0]
        row0 = 0
        for drawn_seeds, drawn_clips in draws:
            rows, slot = np.nonzero(drawn_seeds == s)
            if len(rows):
                picked = drawn_clips[rows, slot]  # [m, clips] positions
                weights = np.zeros((len(rows), len(clips)))
                np.add.at(weights, (np.repeat(np.arange(len(rows)), len(clips)),
                                    picked.ravel()), 1.0)
                slots[row0 + rows, slot] = readings(material, weights, max_rate=max_rate,
                                                    budgets=budgets)
            row0 += len(drawn_seeds)
        del material
    return names, points, slots.mean(axis=1)


def tradeoff_intervals(names: Sequence[str], point: np.ndarray, draws: np.ndarray,
                       level: float = 0.95) -> dict[str, Interval]:
    """Percentile intervals of each quantity (of a system, of a difference of two systems'
    draws, or of the mean of benchmarks' draws) around its point."""
    return percentile_intervals(list(names), list(point), np.asarray(draws), level,
                                len(draws))
