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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.blocks import EXECUTOR_BLOCKS, block_results
from sedcontract.errors import SedContractError
from sedcontract.scores.psds.floors import false_needed, floors_of
from sedcontract.scores.psds.roc import staircase_area, staircase_at
from sedcontract.scores.psds.score_counts import (
    Gathered,
    ScoreChanges,
    block_counts,
    block_tops,
    criterion_us,
    summed,
)
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable, audio_seconds
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.grid import SECONDS_PER_HOUR
from sedcontract.traces.overrun import cut_at_durations
from sedcontract.traces.score_files import ScoreTable, cut_table

# ---- the run tree of score columns ----



# ---- counts of one batch ----



# ---- the PSD-ROC, as sed_scores_eval forms it ----

def _class_curve(parts: Sequence[ScoreChanges], c: int, n_ref: int, weights: np.ndarray | None,
                 total: float, settings: PsdsSettings, n_classes: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class ``c``'s TPR, eFPR and threshold (detected: score >= it; ``inf`` detects nothing)
    over every threshold (the parts' counts joined), reduced to the staircase sed_scores_eval
    keeps: sorted by eFPR, the running maximum of the TPR, the last point of each eFPR, up to
    ``max_efpr``."""
    rows = [p.of_class(c) for p in parts]
    if len(rows) == 1:  # one part's rows are sorted by score, each score once
        score, tp, fp = rows[0][0], rows[0][1].astype(np.int64), rows[0][2].astype(np.int64)
    else:
        score = np.concatenate([x[0] for x in rows])
        order = np.argsort(score, kind="stable")
        (score,), (tp, fp) = summed((score[order],),
                                    (np.concatenate([x[1] for x in rows])[order],
                                     np.concatenate([x[2] for x in rows])[order]))
    ct_rate = None
    if weights is not None:
        cs = np.concatenate([x[3] for x in rows])
        co = np.concatenate([x[4] for x in rows])
        cn = np.concatenate([x[5] for x in rows])
        order = np.lexsort((co, cs))
        (cs, co), (cn,) = summed((cs[order], co[order]), (cn[order],))
        both = np.union1d(score, cs)
        at = np.searchsorted(both, score)
        tp_all, fp_all = np.zeros(len(both), dtype=np.int64), np.zeros(len(both), dtype=np.int64)
        tp_all[at], fp_all[at] = tp, fp
        rate = cn * weights[co]
        ct_rate = np.zeros(len(both))
        if len(cs):
            starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
            ct_rate[np.searchsorted(both, cs[starts])] = np.add.reduceat(rate, starts)
        score, tp, fp = both, tp_all, fp_all
    # counts at each score: the changes at that score and above; none above the highest
    tps = np.concatenate((np.cumsum(tp[::-1])[::-1], [0]))
    fps = np.concatenate((np.cumsum(fp[::-1])[::-1], [0]))
    tpr = tps / max(n_ref, 1)
    efpr = fps / total
    if ct_rate is not None:
        cross = np.append(np.cumsum(ct_rate[::-1])[::-1], 0.0) / (n_classes - 1)
        efpr = efpr + settings.alpha_ct * cross
    efpr = efpr * SECONDS_PER_HOUR
    threshold = np.append(score, np.inf)
    order = np.lexsort((tpr, efpr))
    tpr, efpr, threshold = tpr[order], efpr[order], threshold[order]
    running = np.maximum.accumulate(tpr)
    rise = np.concatenate(([0], np.flatnonzero(running[1:] > running[:-1]) + 1))
    tpr, efpr, threshold = tpr[rise], efpr[rise], threshold[rise]
    # the last point of each eFPR (sorted: the end of each run of equal ones)
    last = np.flatnonzero(np.concatenate((efpr[1:] != efpr[:-1], [True])))
    tpr, efpr, threshold = tpr[last], efpr[last], threshold[last]
    keep = np.searchsorted(efpr, settings.max_efpr, side="right")
    return tpr[:keep], efpr[:keep], threshold[:keep]


def _roc(curves: Sequence[tuple[np.ndarray, ...]], settings: PsdsSettings
         ) -> dict[str, np.ndarray]:
    """The PSD-ROC of the classes' staircases: the union of their eFPRs, each class's TPR
    there, the mean and spread, and ``etpr = max(mean − alpha_st · std, 0)``."""
    axis = np.unique(np.concatenate([efpr for _, efpr, _ in curves]))
    values = [staircase_at(axis, efpr, tpr, reduced=True) for tpr, efpr, _ in curves]
    mean, std = np.mean(values, axis=0), np.std(values, axis=0)
    etpr = np.maximum(mean - settings.alpha_st * std, 0.0)
    return {"efpr": np.append(axis, settings.max_efpr), "etpr": np.append(etpr, etpr[-1]),
            "mean": np.append(mean, mean[-1]), "std": np.append(std, std[-1])}


def psds_from_counts(parts: Sequence[ScoreChanges], truth: ClipTruth, classes: Sequence[str],
                     total: float, settings: PsdsSettings,
                     clip_weights: np.ndarray | None = None, *,
                     value_only: bool = False) -> dict[str, Any]:
    """One scenario's PSDS, per-class PSDS and PSD-ROC from its counts (of a resample: each
    clip's reference events counted ``clip_weights[clip]`` times, as its counts were; a
    resample without events of some class has no PSDS: ``{"value": nan}``); ``value_only``:
    the value alone (a bootstrap draw), the same number."""
    K = len(classes)
    if clip_weights is None:
        n_ref = np.bincount(truth.cls, minlength=K)
        lengths = truth.offset - truth.onset
    else:
        n_ref = np.bincount(truth.cls, weights=clip_weights[truth.clip],
                            minlength=K).astype(np.int64)
        if (n_ref == 0).any():  # undefined, as for the corpus (counted as such by intervals)
            return {"value": math.nan}
        lengths = (truth.offset - truth.onset) * clip_weights[truth.clip]
    seconds = np.zeros(K)
    np.add.at(seconds, truth.cls, lengths)
    weights = 1.0 / np.maximum(seconds, 1e-12) if settings.alpha_ct > 0 and K > 1 else None
    curves = [_class_curve(parts, c, int(n_ref[c]), weights, total, settings, K)
              for c in range(K)]
    roc = _roc(curves, settings)
    m = settings.max_efpr
    value = staircase_area(roc["efpr"], roc["etpr"], m, in_order=True) / m
    if value_only:
        return {"value": value}
    return {"value": value,
            "per_class": {name: staircase_area(efpr, tpr, m, in_order=True) / m
                          for name, (tpr, efpr, _) in zip(classes, curves, strict=True)},
            "settings": settings.as_dict(), "rule": "sed_scores_eval",
            "roc": {**{k: v.tolist() for k, v in roc.items()},
                    # each class's staircase: at most one point per reference event + 1
                    "classes": {name: {"tpr": tpr.tolist(), "efpr": efpr.tolist(),
                                       "thresholds": threshold.tolist()}
                                for name, (tpr, efpr, threshold)
                                in zip(classes, curves, strict=True)}}}


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
