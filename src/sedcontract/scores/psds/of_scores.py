"""Intersection-based PSDS from frame scores, every threshold at once, as sed_scores_eval
computes it (Ebbers, Serizel and Haeb-Umbach, ICASSP 2022), with memory that follows the
information instead of clips × classes × thresholds × classes.

Over all thresholds, a score column's detections form a tree of runs: the run around a score
segment is born when the threshold falls to that segment's score and replaced when it falls to
the larger of the two scores beside the run, by the run born there around it. Counts change
only where runs are born (a run's counts come in, those of the runs it replaces go out), so a
clip costs its score changes (run-length segments) and the reference events its runs
overlap. Counts are whole numbers kept per (class, score) and per
(class, other class, score) only where a cross-trigger occurs; the counts of disjoint blocks of
clips add up to the corpus's exactly, so an executor gives the same value as one process, bit
for bit. Times are compared in whole microseconds after the criteria are rounded to 1 µs, as
sed_scores_eval rounds them (``time_decimals=6``): equal to it for times given to 1 µs. A
``-inf`` score (SEBB post-processing writes it outside its boxes) is never detected and no run
grows across it; ``+inf`` is detected at every threshold, as sed_scores_eval reads both."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from sedcontract.blocks import EXECUTOR_BLOCKS, block_results
from sedcontract.errors import SedContractError
from sedcontract.resampling import CHUNK_CELLS
from sedcontract.scores.psds.floors import false_needed, floors_of
from sedcontract.scores.psds.roc import staircase_area
from sedcontract.scores.psds.score_counts import (
    Gathered,
    ScoreChanges,
    block_counts,
    block_tops,
    criterion_us,
    new_runs,
)
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable, audio_seconds
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.grid import SECONDS_PER_HOUR
from sedcontract.traces.overrun import cut_at_durations
from sedcontract.traces.score_files import ScoreTable, cut_table

# ---- the PSD-ROC, as sed_scores_eval forms it, of one resample or many at once ----
# Curve d·K + c is class c's of resample d; rows of counts are sorted by curve, then score.
# Each value is the one a curve formed alone gives, bit for bit: whole counts are summed
# freely, floats one after another in the order a single class's arrays sum them.

BLOCK_ROWS = 1 << 18  # counts whose staircases are formed at once (≈ 20 arrays of as many)


def _staircases(parts: Sequence[ScoreChanges], n_ref: np.ndarray, total: np.ndarray,
                weights: np.ndarray | None, settings: PsdsSettings
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each curve's TPR, eFPR and threshold (detected: score >= it; ``inf`` detects nothing)
    over every threshold, reduced to the staircase sed_scores_eval keeps: sorted by eFPR, the
    running maximum of the TPR, the last point of each eFPR, up to ``max_efpr``. ``parts``:
    the counts, in blocks of clips; ``n_ref``: ``[resamples, K]`` reference events;
    ``total``: each resample's seconds; ``weights``: ``[resamples, K]`` cross-trigger weights
    (1 / the class's reference seconds) or None. Returns each point's curve, TPR, eFPR and
    threshold, sorted by curve, then eFPR. Curves are formed in blocks of about
    :data:`BLOCK_ROWS` counts, the parts' rows of a block joined alone, so memory follows a
    block, not every class's counts at once."""
    rows = sum(p.ptr + p.ct_ptr for p in parts)  # counts before each curve
    out, first = [], 0
    while first < n_ref.size:
        stop = int(np.searchsorted(rows, rows[first] + BLOCK_ROWS, side="right")) - 1
        stop = min(max(stop, first + 1), n_ref.size)
        block = ScoreChanges.join([_curves_of(p, first, stop) for p in parts])
        out.append(_staircase_block(block, first, n_ref, total, weights, settings))
        first = stop
    if not out:
        return tuple(np.zeros(0, dtype=t) for t in (np.int64, float, float, float))
    return tuple(np.concatenate(column) for column in zip(*out, strict=True))


def _curves_of(counts: ScoreChanges, first: int, stop: int) -> ScoreChanges:
    """The counts of curves ``first`` … ``stop − 1`` alone (numbered from 0)."""
    a, b = counts.ptr[first], counts.ptr[stop]
    x, y = counts.ct_ptr[first], counts.ct_ptr[stop]
    return ScoreChanges(counts.ptr[first:stop + 1] - a, counts.score[a:b], counts.tp[a:b],
                        counts.fp[a:b], counts.ct_ptr[first:stop + 1] - x, counts.ct_score[x:y],
                        counts.ct_other[x:y], counts.ct[x:y])


def _staircase_block(counts: ScoreChanges, first: int, n_ref: np.ndarray, total: np.ndarray,
                     weights: np.ndarray | None, settings: PsdsSettings
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_staircases` of the curves ``first`` … ``first + len(counts.ptr) − 2``, whose
    counts are ``counts``; each curve formed as it would be alone."""
    K = n_ref.shape[1]
    S = len(counts.ptr) - 1
    label = np.repeat(np.arange(S), np.diff(counts.ptr))
    score, tp, fp = counts.score, counts.tp.astype(np.int64), counts.fp.astype(np.int64)
    ct_rate = cl = None
    if weights is not None:
        label, score, tp, fp, ct_rate, cl = _with_cross_triggers(counts, first, label, score,
                                                                 tp, fp, weights, K)
    # each curve's rows, then one at threshold inf where nothing is detected; arrays are let
    # go as soon as they are used, so a block holds a few arrays of its rows at a time
    n = len(score)
    ends = np.searchsorted(label, np.arange(S), side="right") + np.arange(S)
    row = np.arange(n) + label
    del label
    curve = np.repeat(np.arange(S), np.diff(np.r_[-1, ends]))

    def spread(values: np.ndarray, empty: float) -> np.ndarray:
        """The rows' values in place, ``empty`` on each curve's last row."""
        out = np.full(n + S, empty, dtype=values.dtype)
        out[row] = values
        return out

    def from_each_score(values: np.ndarray) -> np.ndarray:
        """Whole counts at each score of a curve: its changes there and above."""
        above = np.cumsum(spread(values, 0)[::-1])[::-1]
        return above - above[ends][curve]

    threshold = spread(score, np.inf)
    tps, fps = from_each_score(tp), from_each_score(fp)
    efpr = fps / total[(curve + first) // K]
    if ct_rate is not None:
        rates = spread(ct_rate, 0.0)
        cross = np.zeros(n + S)
        for c in np.unique(cl):  # summed as one class's column alone sums it
            a = ends[c - 1] + 1 if c else 0
            cross[a:ends[c] + 1] = np.cumsum(rates[a:ends[c] + 1][::-1])[::-1]
        del rates
        efpr = efpr + settings.alpha_ct * (cross / (K - 1))
        del cross
    efpr *= SECONDS_PER_HOUR
    # without cross-triggers, a curve's eFPR follows its false positives: whole numbers
    order = np.lexsort((tps, efpr, curve) if ct_rate is not None else
                       (tps, fps + curve * (int(fps.max(initial=0)) + 1)))
    del fps
    tps = tps[order]
    efpr = efpr[order]
    threshold = threshold[order]
    curve = curve[order]
    del order
    # the running maximum of the TPR within each curve: its counts, each curve above the last
    running = np.maximum.accumulate(tps + curve * (int(tps.max(initial=0)) + 1))
    rise = np.concatenate(([0], np.flatnonzero(running[1:] > running[:-1]) + 1))
    del running
    tps, efpr, threshold, curve = tps[rise], efpr[rise], threshold[rise], curve[rise]
    # the last point of each eFPR of a curve, up to max_efpr
    last = np.concatenate(((efpr[1:] != efpr[:-1]) | (curve[1:] != curve[:-1]), [True]))
    keep = last & (efpr <= settings.max_efpr)
    curve = curve[keep] + first
    return curve, tps[keep] / np.maximum(n_ref, 1).ravel()[curve], efpr[keep], threshold[keep]


def _with_cross_triggers(counts: ScoreChanges, first: int, label: np.ndarray,
                         score: np.ndarray, tp: np.ndarray, fp: np.ndarray,
                         weights: np.ndarray, K: int) -> tuple[np.ndarray, ...]:
    """The union of each curve's scores and its cross-trigger scores: the curve, score, true
    and false positive changes of each, its weighted cross-trigger rate (the other classes
    summed in their order), and each cross-trigger row's curve."""
    # by curve, score, then other class: a stable sort of rows sorted by curve, other
    # class, then score (one row per curve, other class and score)
    cl = np.repeat(np.arange(len(counts.ct_ptr) - 1), np.diff(counts.ct_ptr))
    order = np.lexsort((counts.ct_score, cl))
    cl, cs, co, cn = (cl[order], counts.ct_score[order],
                      counts.ct_other[order].astype(np.int64), counts.ct[order])
    starts = np.flatnonzero(new_runs(cl, cs))
    rate = cn * weights[(cl + first) // K, co]
    keys = (np.concatenate((label, cl[starts])), np.concatenate((score, cs[starts])))
    order = np.lexsort(keys[::-1])
    new = new_runs(*(k[order] for k in keys))
    heads = np.flatnonzero(new)
    at = np.empty(len(order), dtype=np.int64)
    at[order] = np.cumsum(new) - 1
    tp_all, fp_all = np.zeros(len(heads), dtype=np.int64), np.zeros(len(heads), np.int64)
    tp_all[at[:len(tp)]], fp_all[at[:len(tp)]] = tp, fp
    ct_rate = np.zeros(len(heads))
    if len(cs):
        ct_rate[at[len(tp):]] = np.add.reduceat(rate, starts)
    return keys[0][order[heads]], keys[1][order[heads]], tp_all, fp_all, ct_rate, cl


def _rocs(curve: np.ndarray, tpr: np.ndarray, efpr: np.ndarray, n_draws: int, K: int,
          alpha_st: float) -> tuple[np.ndarray, ...]:
    """Each resample's PSD-ROC of its classes' staircases: the union of their eFPRs
    (``axis``, per resample ``draw``), each class's TPR there, its mean and spread over the
    classes, and ``etpr = max(mean − alpha_st · std, 0)``. One class's TPRs are held at a
    time, so memory follows the axis, not classes × axis."""
    draw, cls = curve // K, curve % K
    order = np.lexsort((efpr, draw))
    new = new_runs(draw[order], efpr[order])
    axis_draw, axis = draw[order][new], efpr[order][new]
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.cumsum(new) - 1  # each point's place on its resample's axis
    by_class = np.argsort(cls, kind="stable")  # then by resample and eFPR: places ascend
    bounds = np.searchsorted(cls[by_class], np.arange(K + 1))
    everywhere = np.arange(len(axis))

    def at_axis(c: int) -> np.ndarray:
        """Class ``c``'s TPR at each place: its last point at or before it, same resample."""
        mine = by_class[bounds[c]:bounds[c + 1]]
        at = np.searchsorted(place[mine], everywhere, side="right") - 1
        found = mine[np.maximum(at, 0)]
        return np.where((at >= 0) & (draw[found] == axis_draw), tpr[found], 0.0)

    # summed over the classes as numpy sums one resample's [K, n] stack: row after row, and
    # pairwise where the resample's axis has one place (numpy sums a [K, 1] stack as one run)
    alone = np.flatnonzero(np.bincount(axis_draw, minlength=n_draws)[axis_draw] == 1)

    def over_classes(term: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        out = term(at_axis(0)).copy()
        stack = [out[alone]]
        for c in range(1, K):
            row = term(at_axis(c))
            out += row
            stack.append(row[alone])
        out[alone] = np.ascontiguousarray(np.array(stack).T).sum(axis=1)
        return out

    mean = over_classes(lambda row: row) / K
    std = np.sqrt(over_classes(lambda row: (row - mean) * (row - mean)) / K)
    etpr = np.maximum(mean - alpha_st * std, 0.0)
    return axis_draw, axis, etpr, mean, std


def _areas(draw: np.ndarray, x: np.ndarray, y: np.ndarray, n_draws: int,
           max_x: float) -> np.ndarray:
    """Each resample's area under its staircase through ``(x, y)`` (sorted by resample,
    then ``x``; each ``y`` held to the next ``x``) up to ``max_x``, the rectangles summed one
    after another (sed_scores_eval's rule, as :func:`staircase_area` with ``in_order``)."""
    below = x < max_x
    draw, x, y = draw[below], x[below], y[below]
    following = np.append(x[1:], max_x)
    following[np.append(draw[1:] != draw[:-1], True)] = max_x
    rank = np.arange(len(draw)) - np.searchsorted(draw, draw)
    rectangles = np.zeros((n_draws, int(rank.max(initial=-1)) + 2))
    rectangles[draw, rank] = (following - x) * y
    return np.cumsum(rectangles, axis=1)[:, -1]


def _references(truth: ClipTruth, K: int, clip_weights: np.ndarray) -> np.ndarray:
    """``[resamples, K]`` reference events of each resample, each clip's events counted
    ``clip_weights[d, clip]`` times."""
    from scipy import sparse  # imported where used: ``import sedcontract`` stays light

    events = sparse.csr_matrix((np.ones(len(truth.clip), dtype=np.int64),
                                (truth.clip, truth.cls)), shape=(clip_weights.shape[1], K))
    return np.asarray(events.T @ clip_weights.T).T


def _ct_weights(truth: ClipTruth, K: int, clip_weights: np.ndarray,
                settings: PsdsSettings) -> np.ndarray | None:
    """``[resamples, K]`` cross-trigger weights, 1 / each class's reference seconds (each
    clip's events counted ``clip_weights[d, clip]`` times, summed event after event, a block
    of resamples at a time), when cross-triggers count."""
    if settings.alpha_ct <= 0 or K < 2:
        return None
    D = len(clip_weights)
    seconds = np.zeros((D, K))
    lengths = truth.offset - truth.onset
    by_class = np.argsort(truth.cls, kind="stable")
    bounds = np.searchsorted(truth.cls[by_class], np.arange(K + 1))
    for c in range(K):
        mine = by_class[bounds[c]:bounds[c + 1]]
        step = max(1, CHUNK_CELLS // max(len(mine), 1))
        for a in range(0, D if len(mine) else 0, step):
            seconds[a:a + step, c] = np.cumsum(
                lengths[mine] * clip_weights[a:a + step, truth.clip[mine]], axis=1)[:, -1]
    return 1.0 / np.maximum(seconds, 1e-12)


def psds_values(counts: ScoreChanges, truth: ClipTruth, clip_weights: np.ndarray,
                totals: np.ndarray, settings: PsdsSettings) -> np.ndarray:
    """The PSDS of each of several resamples at once: ``counts`` of curves d·K + c (as
    :meth:`ClipRows.weighted` gives them), ``clip_weights[d]`` and ``totals[d]`` resample
    d's clip weights and seconds; NaN for a resample without events of some class. Each
    value is :func:`psds_from_counts`'s of that resample alone, bit for bit."""
    K = (len(counts.ptr) - 1) // len(clip_weights)
    n_ref = _references(truth, K, clip_weights)
    curve, tpr, efpr, _ = _staircases([counts], n_ref, totals,
                                      _ct_weights(truth, K, clip_weights, settings), settings)
    D = len(clip_weights)
    draw, axis, etpr, _, _ = _rocs(curve, tpr, efpr, D, K, settings.alpha_st)
    m = settings.max_efpr
    values = _areas(draw, axis, etpr, D, m) / m
    values[(n_ref == 0).any(axis=1)] = math.nan  # undefined, as for the corpus
    return values


def psds_from_counts(parts: Sequence[ScoreChanges], truth: ClipTruth, classes: Sequence[str],
                     total: float, settings: PsdsSettings,
                     clip_weights: np.ndarray | None = None) -> dict[str, Any]:
    """One scenario's PSDS, per-class PSDS and PSD-ROC from its counts (of a resample: each
    clip's reference events counted ``clip_weights[clip]`` times, as its counts were; a
    resample without events of some class has no PSDS: ``{"value": nan}``)."""
    K = len(classes)
    weights = (np.ones(len(truth.clips), dtype=np.int64) if clip_weights is None
               else clip_weights)
    n_ref = _references(truth, K, weights[None])
    if clip_weights is not None and (n_ref == 0).any():
        return {"value": math.nan}
    curve, tpr, efpr, threshold = _staircases(
        parts, n_ref, np.array([total]), _ct_weights(truth, K, weights[None], settings),
        settings)
    _, axis, etpr, mean, std = _rocs(curve, tpr, efpr, 1, K, settings.alpha_st)
    m = settings.max_efpr
    value = float(_areas(np.zeros(len(axis), dtype=np.int64), axis, etpr, 1, m)[0]) / m
    bounds = np.searchsorted(curve, np.arange(K + 1))
    curves = [(tpr[a:b], efpr[a:b], threshold[a:b]) for a, b in pairwise(bounds)]
    return {"value": value,
            "per_class": {name: staircase_area(x, y, m, in_order=True) / m
                          for name, (y, x, _) in zip(classes, curves, strict=True)},
            "settings": settings.as_dict(), "rule": "sed_scores_eval",
            "roc": {"efpr": np.append(axis, m).tolist(),
                    "etpr": np.append(etpr, etpr[-1]).tolist(),
                    "mean": np.append(mean, mean[-1]).tolist(),
                    "std": np.append(std, std[-1]).tolist(),
                    # each class's staircase: at most one point per reference event + 1
                    "classes": {name: {"tpr": y.tolist(), "efpr": x.tolist(),
                                       "thresholds": t.tolist()}
                                for name, (y, x, t) in zip(classes, curves, strict=True)}}}


def block_task(scores: Any, truth: ClipTruth, classes: tuple[str, ...],
               settings: Sequence[PsdsSettings], lengths: Mapping[str, float] | None = None,
               per_clip: bool = False, floor: np.ndarray | None = None
               ) -> tuple[list[list[ScoreChanges]], int]:
    """:func:`block_counts` of one block: its score tables (a table source; a folder reads
    them where the task runs), each cut at its clip's length when ``lengths`` are given; and
    how many tables were cut."""
    cut = [0]
    return block_counts(_tables(scores, truth.clips, lengths, cut), truth, classes, settings,
                        per_clip=per_clip, floor=floor), cut[0]


def tops_task(scores: Any, truth: ClipTruth, classes: tuple[str, ...], keep: int,
              lengths: Mapping[str, float] | None = None) -> tuple[np.ndarray, float]:
    """:func:`block_tops` of one block, its tables read as :func:`block_task` reads them."""
    return block_tops(_tables(scores, truth.clips, lengths, [0]), truth, classes, keep)


def _tables(scores: Any, clips: Sequence[str], lengths: Mapping[str, float] | None,
            cut: list[int]) -> Iterable[ScoreTable]:
    """The tables of ``clips`` from a table source, one at a time, each cut at its clip's
    length when ``lengths`` are given (counted in ``cut[0]``)."""
    tables: Iterable[ScoreTable] = scores.stream(clips)
    return tables if lengths is None else _cut(tables, clips, lengths, cut)


def _cut(tables: Iterable[ScoreTable], clips: Sequence[str], lengths: Mapping[str, float],
         count: list[int]) -> Iterator[ScoreTable]:
    """Each clip's table cut at its length (:func:`~sedcontract.traces.score_files.cut_table`),
    counting in ``count[0]`` the tables that reached past it."""
    for clip, table in zip(clips, tables, strict=False):
        shorter = cut_table(table, lengths[clip])
        count[0] += shorter is not None
        if shorter is not None and not len(shorter.onset):
            raise PsdsUnavailable(f"clip {clip!r} lasts {lengths[clip]:g} s: cut there "
                                  "(--psds-cut), its score table keeps no frame")
        yield table if shorter is None else shorter


@dataclass(frozen=True)
class ScoredCorpus:
    """The checked clips of a PSDS from score tables: their truth (cut with the tables when
    ``lengths`` are given), total duration, and how many reference events were cut."""

    clips: list[str]
    truth: ClipTruth
    classes: tuple[str, ...]
    total: float
    lengths: dict[str, float] | None
    ref_cut: int

    @classmethod
    def of(cls, scores: Any, ref: EventList, durations: Mapping[str, float],
           classes: Sequence[str], cut: bool = False) -> ScoredCorpus:
        """Every clip scored and with a duration, every class with reference events (else
        PSDS is unavailable, as sed_scores_eval refuses it)."""
        clips = list(ref.clips)
        missing = [c for c in clips if c not in scores]
        if missing:
            raise SedContractError(f"no score table for clip(s) "
                                   f"{', '.join(map(repr, missing[:5]))}")
        absent = [c for c in clips if c not in durations]
        if absent:
            raise SedContractError(f"no duration for clip {absent[0]!r}: PSDS needs every "
                                   "clip's duration")
        total = audio_seconds(durations, clips)
        ref_cut = 0
        if cut:
            ref, ref_cut = cut_at_durations(ref, durations)
        truth = ClipTruth.of(ref, clips, classes)
        empty = [c for c, n in zip(classes, np.bincount(truth.cls, minlength=len(classes)),
                                   strict=True) if n == 0]
        if empty:  # its TPR has no denominator (sed_scores_eval refuses it too)
            raise PsdsUnavailable(f"no reference events of class(es) {', '.join(empty[:5])}"
                                  f"{' …' if len(empty) > 5 else ''}: PSDS averages the TPR "
                                  "of every scored class (keep the classes with events, "
                                  "--classes)")
        lengths = {c: float(durations[c]) for c in clips} if cut else None
        return cls(clips, truth, tuple(classes), total, lengths, ref_cut)

    def floors(self, scores: Any, settings: Sequence[PsdsSettings], executor: Any = None,
               blocks: int | None = None) -> np.ndarray | None:
        """Each class's floor (:mod:`~sedcontract.scores.psds.floors`) from a first read of
        the tables; ``None`` when no class has one, or when a scenario counting cross-triggers
        could find a run relevant with no overlap at all (a detection criterion that rounds
        to 0 µs on the shortest frame)."""
        keep = false_needed(self.total, settings)
        if keep > len(self.clips):
            return None
        if executor is None:
            found = [tops_task(scores, self.truth, self.classes, keep, self.lengths)]
        else:
            def task(a: int, b: int) -> Any:
                return executor.submit(tops_task, scores.select(self.clips[a:b]),
                                       self.truth.block(a, b), self.classes, keep,
                                       None if self.lengths is None else
                                       {c: self.lengths[c] for c in self.clips[a:b]})

            found = list(block_results(len(self.clips), blocks if blocks is not None
                                       else EXECUTOR_BLOCKS, task))
        shortest = np.array([min(s for _, s in found)])
        if any(chosen.alpha_ct > 0 and len(self.classes) > 1
               and criterion_us(chosen.dtc, shortest)[0] <= 0 for chosen in settings):
            return None
        return floors_of([tops for tops, _ in found], keep)

    def results(self, parts: Sequence[Sequence[ScoreChanges]],
                settings: Mapping[str, PsdsSettings], pred_cut: int,
                cut: bool) -> dict[str, Any]:
        """Each scenario's PSDS of its counts (``parts[k]``: scenario ``k``'s)."""
        counted = {"ref": self.ref_cut, "pred": pred_cut} if cut else None
        return {name: {**psds_from_counts(parts[k], self.truth, self.classes, self.total,
                                          chosen), "cut": counted}
                for k, (name, chosen) in enumerate(settings.items())}


def psds_of_scores(scores: Any, ref: EventList,
                   durations: Mapping[str, float], settings: Mapping[str, PsdsSettings],
                   classes: Sequence[str], *, executor: Any = None,
                   blocks: int | None = None, cut: bool = False,
                   floors: bool | None = None) -> dict[str, Any]:
    """``{scenario: {"value", "per_class", "settings", "rule", "cut", "roc"}}`` of the score
    tables of ``ref``'s clips from a table source (:class:`TableMapping`, or a
    :class:`~sedcontract.traces.score_files.ScoreFolder` read clip by clip) whose columns are
    ``classes``: the reference and the tables as they come, or with ``cut`` both cut at the
    durations (``"cut"``: how many reference events and tables were). With ``executor``
    (anything with ``submit``) the clips are cut into ``blocks`` whose counts are joined: the
    same result as one process, bit for bit. ``floors`` (by default when the source holds
    its tables in memory, ``in_memory``, so that reading them twice costs nothing) reads the
    tables' highest scores first and leaves out the counts below each class's floor
    (:mod:`~sedcontract.scores.psds.floors`): the same result, bit for bit, with dense scores
    at the cost of sparse ones. Bootstrap intervals:
    :mod:`sedcontract.scores.psds.resampled`."""
    corpus = ScoredCorpus.of(scores, ref, durations, classes, cut)
    clips, truth, lengths = corpus.clips, corpus.truth, corpus.lengths
    chosen = list(settings.values())
    if floors is None:
        floors = bool(getattr(scores, "in_memory", False))
    floor = corpus.floors(scores, chosen, executor, blocks) if floors else None
    if executor is None:
        parts, pred_cut = block_task(scores, truth, corpus.classes, chosen, lengths,
                                     floor=floor)
    else:
        def task(a: int, b: int) -> Any:
            return executor.submit(block_task, scores.select(clips[a:b]), truth.block(a, b),
                                   corpus.classes, chosen, None if lengths is None else
                                   {c: lengths[c] for c in clips[a:b]}, floor=floor)

        gathered = [Gathered() for _ in chosen]
        pred_cut = 0
        for result, tables_cut in block_results(len(clips), blocks if blocks is not None
                                                else EXECUTOR_BLOCKS, task):
            pred_cut += tables_cut
            for k, counts in enumerate(result):
                gathered[k].add(counts)
        parts = [g.parts for g in gathered]
    return corpus.results(parts, settings, pred_cut, cut)
