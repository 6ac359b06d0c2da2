"""What the family functions share (``collar_based.fscore``, ``intersection_based.fscore``,
``segment_based.fscore``): system output taken as score tables at a threshold or as detections,
and results in sed_scores_eval's shape — ``f, p, r, stats``, each a dict over the classes with
``macro_average`` and ``micro_average``.

Declared deviation from sed_scores_eval: a class without reference events has recall and F1
NaN (sed_scores_eval reports 0), and ``macro_average`` is the mean over the classes where F1
is defined, their number in ``stats["macro_average"]["classes"]``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sedcontract.blocks import block_results, with_jobs
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import detections, events_of, is_score_tables, score_source

Thresholds = float | Mapping[str, float]


def _thresholded(source: Any, ground_truth: EventList, where: str,
                 classes: Sequence[str] | None, threshold: Thresholds) -> EventList:
    """The detections of some clips' score tables: the task a process runs."""
    return detections(source, ground_truth, DecisionPolicy(), where, declared=classes,
                      thresholds=threshold)


def _in_blocks(source: Any, ground_truth: EventList, where: str,
               classes: Sequence[str] | None, threshold: Thresholds, num_jobs: int
               ) -> EventList:
    """:func:`_thresholded` of the whole corpus, on ``num_jobs`` processes in as many blocks
    of clips (one process: at once)."""
    def work(executor: Any, blocks: int | None) -> EventList:
        if executor is None:
            return _thresholded(source, ground_truth, where, classes, threshold)
        clips = list(ground_truth.clips)

        def task(a: int, b: int) -> Any:
            return executor.submit(_thresholded, source.select(clips[a:b]),
                                   ground_truth.select(clips=clips[a:b]), where, classes,
                                   threshold)

        parts = list(block_results(len(clips), blocks, task))
        return EventList.from_rows([row for part in parts for row in part.to_rows()],
                                   clips=tuple(clips))

    return with_jobs(num_jobs, __name__, work)


def system_output(scores: Any, threshold: Thresholds | None, ground_truth: EventList,
                  classes: Sequence[str] | None = None, *, num_jobs: int = 1
                  ) -> tuple[EventList, tuple[str, ...]]:
    """The detections and the scored classes: score tables (a folder, a
    :class:`~sedcontract.traces.score_files.ScoreFolder`, or clip → DataFrame in sed_scores_eval's
    layout) thresholded strictly above ``threshold`` (one, or one per class), their columns
    the classes; or detections as they are (an event file, an event list, clip → [(onset,
    offset, label)], a DataFrame of DCASE rows), the classes those of both sides unless
    given. ``num_jobs`` (sed_scores_eval's keyword) processes threshold blocks of the tables:
    the same result."""
    if is_score_tables(scores) or (threshold is not None and isinstance(scores, Mapping)
                                   and not scores):
        if threshold is None:
            raise SedContractError("score tables become detections at a threshold: give "
                                   "threshold (one, or a mapping of class → threshold)")
        source = score_source(scores, ground_truth.clips)
        where = str(scores) if isinstance(scores, str | os.PathLike) else "scores"
        events = _in_blocks(source, ground_truth, where, classes, threshold, num_jobs)
        return events, tuple(source.columns if classes is None else classes)
    if threshold is not None:
        raise SedContractError("a threshold is for score tables; these are detections (give "
                               "threshold=None)")
    given = events_of(scores, "detections")
    names = tuple(sorted({*ground_truth.classes, *given.classes})) if classes is None \
        else tuple(classes)
    return given, names


def _f(counts: Counts) -> tuple[float, float, float]:
    return counts.f1, counts.precision, counts.recall


def fscore_dicts(result: MetricResult) -> tuple[dict[str, float], dict[str, float],
                                                 dict[str, float], dict[str, dict[str, Any]]]:
    """``f, p, r, stats`` as sed_scores_eval returns them: per class, ``macro_average`` (over
    classes with reference events) and ``micro_average`` (the pooled counts); ``stats`` holds
    ``tps``, ``fps`` and ``n_ref`` per class (and ``n_sys``)."""
    f: dict[str, float] = {}
    p: dict[str, float] = {}
    r: dict[str, float] = {}
    stats: dict[str, dict[str, Any]] = {}
    for name, counts in result.per_class.items():
        f[name], p[name], r[name] = _f(counts)
        stats[name] = {"tps": counts.tp, "fps": counts.sys - counts.tp, "n_ref": counts.ref,
                       "n_sys": counts.sys}
    (f["macro_average"], n), (p["macro_average"], _), (r["macro_average"], _) = (
        result.macro(k) for k in ("f1", "precision", "recall"))
    stats["macro_average"] = {"classes": n}
    overall = result.overall
    f["micro_average"], p["micro_average"], r["micro_average"] = _f(overall)
    stats["micro_average"] = {"tps": overall.tp, "fps": overall.sys - overall.tp,
                              "n_ref": overall.ref, "n_sys": overall.sys}
    return f, p, r, stats


def _fbeta(p: np.ndarray | float, r: np.ndarray | float, beta: float) -> Any:
    """sed_scores_eval's F-beta of precision and recall."""
    return (1 + beta ** 2) * p * r / np.maximum(beta ** 2 * p + r, 1e-15)


def best_fscores(curves: Mapping[str, tuple[np.ndarray, dict[str, Any]]], *, beta: float = 1.0,
                 min_precision: float = 0.0, min_recall: float = 0.0
                 ) -> tuple[dict[str, float], dict[str, float], dict[str, float],
                            dict[str, float], dict[str, dict[str, float]]]:
    """``f, p, r, thresholds, stats`` as sed_scores_eval's ``best_fscore`` returns them, from
    each class's counts at every threshold (``curves[class]``: the thresholds ascending, and
    ``tps``, ``fps`` there with ``n_ref``): the highest F (the highest threshold among equal
    ones) where precision and recall reach their minimums; its threshold halfway to the next
    lower one (``-inf`` below the lowest); the macro average over the classes and the micro
    average of their summed counts at their own thresholds."""
    f, p, r, thresholds, stats = {}, {}, {}, {}, {}
    for name, (scores, counts) in curves.items():
        if counts["n_ref"] == 0:
            raise SedContractError(f"class {name!r} has no reference events: its recall, and "
                                   "so its best threshold, is undefined")
        tps, fps = counts["tps"], counts["fps"]
        precision = tps / np.maximum(tps + fps, 1)
        precision[(tps + fps) == 0] = 1.0
        recall = tps / counts["n_ref"]
        fbeta = _fbeta(precision, recall, beta)
        fbeta[(precision < min_precision) | (recall < min_recall)] = 0.0
        best = len(fbeta) - 1 - int(np.argmax(fbeta[::-1]))
        f[name], p[name], r[name] = float(fbeta[best]), float(precision[best]), \
            float(recall[best])
        thresholds[name] = float((scores[best] + scores[best - 1]) / 2) if best > 0 \
            else -np.inf
        stats[name] = {k: float(v[best]) if isinstance(v, np.ndarray) else float(v)
                       for k, v in counts.items()}
    for out in (f, p, r):
        out["macro_average"] = float(np.mean([out[c] for c in curves]))
    tps, fps, n_ref = (sum(stats[c][k] for c in curves) for k in ("tps", "fps", "n_ref"))
    p["micro_average"] = tps / max(tps + fps, 1)
    r["micro_average"] = tps / max(n_ref, 1)
    f["micro_average"] = float(_fbeta(p["micro_average"], r["micro_average"], beta))
    return f, p, r, thresholds, stats


def microseconds(time_decimals: Any) -> None:
    """PSDS, AUROC and the collar and segment scores count time in whole microseconds here,
    which is sed_scores_eval's default ``time_decimals=6``; another value is refused, not
    ignored (intersection-based F1 takes any)."""
    if time_decimals != 6 or not is_whole(time_decimals):
        raise SedContractError(f"time_decimals={time_decimals!r}: times are whole "
                               "microseconds here (sed_scores_eval's default, 6)")
