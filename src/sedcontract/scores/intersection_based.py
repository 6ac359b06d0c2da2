"""Intersection-based F1 (the DCASE / PSDS detection and ground-truth criteria) at given
detections."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sedcontract.blocks import block_results, with_jobs
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_whole, number_in
from sedcontract.scores.counts import MetricResult, event_rows, overlapping, row_sums
from sedcontract.scores.fscores import (
    Thresholds,
    best_fscores,
    fscore_dicts,
    microseconds,
    system_output,
)
from sedcontract.scores.psds.of_scores import block_task
from sedcontract.scores.psds.request import psds as psds_of_scenarios
from sedcontract.scores.psds.resampled import psds_of_subsets
from sedcontract.scores.psds.score_counts import ScoreChanges
from sedcontract.scores.psds.settings import PsdsSettings
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.given import events_of, score_source
from sedcontract.traces.grid import SECONDS_PER_HOUR, US_PER_SECOND, to_us
from sedcontract.traces.intervals import Intervals


def intersection_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                         dtc_threshold: float = 0.5, gtc_threshold: float = 0.5,
                         time_decimals: int = 6) -> MetricResult:
    """Intersection-based F1 (DCASE / PSDS criteria) at the given detections.

    A detection whose overlap with same-class references covers at least ``dtc_threshold`` of
    it is relevant, otherwise a false positive; a reference covered by relevant detections for
    at least ``gtc_threshold`` of its length is a true positive. Sums and thresholds are
    rounded to ``time_decimals`` as in sed_scores_eval (times in integer µs, as everywhere
    here). ``Counts.sys`` is ``tp + fp`` here, so
    precision = tp / (tp + fp). Overlapping same-class events are first merged on both sides
    (a detection is activity, not a count), and a zero-length reference cannot be covered.
    Only overlapping pairs are visited (merged events of a class are disjoint).
    """
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    r, p = (Intervals.merged(event_rows(e, clips, classes), to_us(e.onset), to_us(e.offset),
                             keep_empty=True) for e in (ref, pred))
    ip, ir, shared = overlapping(p, r)
    n_rows = len(clips) * len(classes)
    p_len, r_len = p.end - p.start, r.end - r.start

    def seconds(us: np.ndarray) -> np.ndarray:  # µs sums are exact; compared as sed_scores_eval
        return np.round(us / US_PER_SECOND, time_decimals)

    relevant = (seconds(np.bincount(ip, weights=shared, minlength=len(p)))
                >= seconds(dtc_threshold * p_len)) & (p_len > 0)
    covered = seconds(np.bincount(ir, weights=shared * relevant[ip], minlength=len(r)))
    hit = (covered >= seconds(gtc_threshold * r_len)) & (r_len > 0)
    false = (p_len > 0) & ~relevant
    tp = row_sums(r.row[hit], None, n_rows)
    return MetricResult.of_rows(clips, classes, tp, row_sums(r.row, None, n_rows),
                                tp + row_sums(p.row[false], None, n_rows))


def fscore(scores: Any, ground_truth: Any, threshold: Thresholds | None = None, *,
           dtc_threshold: float, gtc_threshold: float,
           classes: Sequence[str] | None = None, time_decimals: int = 6, num_jobs: int = 1
           ) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, Any]]:
    """Intersection-based ``f, p, r, stats`` (as sed_scores_eval's
    ``intersection_based.fscore``) of score tables at ``threshold`` or of detections
    (threshold None): the inputs as :func:`sedcontract.scores.collar_based.fscore` takes
    them; ``dtc_threshold``, ``gtc_threshold`` as in PSDS (DCASE: 0.5, 0.5), required as
    sed_scores_eval requires them."""
    dtc_threshold = number_in("dtc_threshold", dtc_threshold, 0.0, 1.0)
    gtc_threshold = number_in("gtc_threshold", gtc_threshold, 0.0, 1.0)
    truth = events_of(ground_truth, "ground truth")
    detections, names = system_output(scores, threshold, truth, classes, num_jobs=num_jobs)
    return fscore_dicts(intersection_metrics(truth, detections, classes=names,
                                             dtc_threshold=dtc_threshold,
                                             gtc_threshold=gtc_threshold,
                                             time_decimals=time_decimals))


UNITS_OF_TIME = {"second": 1.0, "minute": 60.0, "hour": SECONDS_PER_HOUR}  # sed_scores_eval's
PsdRoc = tuple[tuple[np.ndarray, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _settings(dtc_threshold: float, gtc_threshold: float, cttc_threshold: float | None,
              alpha_ct: float, alpha_st: float, max_efpr: float, unit_of_time: str,
              time_decimals: int) -> tuple[PsdsSettings, float]:
    """The scenario (``max_efpr`` per hour, as this project counts it) and the factor that
    turns an eFPR per hour into one per ``unit_of_time``; a cross-trigger threshold goes with
    a cross-trigger weight, as sed_scores_eval requires."""
    if cttc_threshold is None and alpha_ct != 0:
        raise SedContractError("a cross-trigger weight (alpha_ct > 0) needs cttc_threshold")
    if cttc_threshold is not None and alpha_ct == 0:
        raise SedContractError("cttc_threshold is given but alpha_ct is 0: a cross-trigger "
                               "threshold needs a cross-trigger weight")
    if unit_of_time not in UNITS_OF_TIME:
        raise SedContractError(f"unit_of_time {unit_of_time!r}: choose one of "
                               f"{', '.join(UNITS_OF_TIME)}")
    microseconds(time_decimals)
    per_hour = SECONDS_PER_HOUR / UNITS_OF_TIME[unit_of_time]
    max_efpr = number_in("max_efpr", max_efpr, 0.0)
    return PsdsSettings(dtc=dtc_threshold, gtc=gtc_threshold,
                        cttc=0.3 if cttc_threshold is None else cttc_threshold,
                        alpha_ct=alpha_ct, alpha_st=alpha_st,
                        max_efpr=max_efpr * per_hour), 1.0 / per_hour


def _curves(roc: dict[str, Any], per_unit: float) -> PsdRoc:
    """``((etpr, efpr), {class: (tpr, efpr, thresholds)})`` with each eFPR per the unit."""
    return ((np.asarray(roc["etpr"]), np.asarray(roc["efpr"]) * per_unit),
            {name: (np.asarray(c["tpr"]), np.asarray(c["efpr"]) * per_unit,
                    np.asarray(c["thresholds"])) for name, c in roc["classes"].items()})


def _psds(scores: Any, ground_truth: Any, audio_durations: Any, settings: PsdsSettings,
          num_jobs: Any) -> dict[str, Any]:
    """One scenario's PSDS result, on ``num_jobs`` processes."""
    return with_jobs(num_jobs, __name__, lambda executor, blocks: psds_of_scenarios(
        scores, ground_truth, audio_durations, {"psds": settings}, executor=executor,
        blocks=blocks))["psds"]


def psd_roc(scores: Any, ground_truth: Any, audio_durations: Any, *, dtc_threshold: float,
            gtc_threshold: float, cttc_threshold: float | None = None, alpha_ct: float = 0.0,
            alpha_st: float = 0.0, unit_of_time: str = "hour", max_efpr: float = 100.0,
            time_decimals: int = 6, num_jobs: int = 1) -> PsdRoc:
    """The PSD-ROC as sed_scores_eval's ``intersection_based.psd_roc`` returns it:
    ``((etpr, efpr), {class: (tpr, efpr, thresholds)})``, eFPR per ``unit_of_time``, of score
    tables against the ground truth; ``num_jobs`` processes count blocks of clips."""
    settings, per_unit = _settings(dtc_threshold, gtc_threshold, cttc_threshold, alpha_ct,
                                   alpha_st, max_efpr, unit_of_time, time_decimals)
    return _curves(_psds(scores, ground_truth, audio_durations, settings, num_jobs)["roc"],
                   per_unit)


def psds(scores: Any, ground_truth: Any, audio_durations: Any, *, dtc_threshold: float,
         gtc_threshold: float, cttc_threshold: float | None = None, alpha_ct: float = 0.0,
         alpha_st: float = 0.0, unit_of_time: str = "hour", max_efpr: float = 100.0,
         time_decimals: int = 6, num_jobs: int = 1
         ) -> tuple[float, dict[str, float], tuple[np.ndarray, np.ndarray],
                    dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """PSDS as sed_scores_eval's ``intersection_based.psds`` returns it: ``(psds,
    {class: psds}, (etpr, efpr), {class: (tpr, efpr, thresholds)})``, of score tables (a
    folder, or clip → DataFrame) against the ground truth and ``audio_durations``; keywords
    and defaults as its. :func:`sedcontract.scores.psds.psds` computes several scenarios at
    once."""
    settings, per_unit = _settings(dtc_threshold, gtc_threshold, cttc_threshold, alpha_ct,
                                   alpha_st, max_efpr, unit_of_time, time_decimals)
    result = _psds(scores, ground_truth, audio_durations, settings, num_jobs)
    return (result["value"], dict(result["per_class"]), *_curves(result["roc"], per_unit))


def bootstrapped_psds(scores: Any, ground_truth: Any, audio_durations: Any, *,
                      dtc_threshold: float, gtc_threshold: float,
                      cttc_threshold: float | None = None, alpha_ct: float = 0.0,
                      alpha_st: float = 0.0, unit_of_time: str = "hour",
                      max_efpr: float = 100.0, time_decimals: int = 6, n_folds: int = 5,
                      n_iterations: int = 20, num_jobs: int = 1) -> tuple[list[Any], ...]:
    """sed_scores_eval's ``bootstrapped_psds``: :func:`psds` of each of ``n_folds ·
    n_iterations`` subsets of the clips — iteration ``i`` shuffles the sorted clip ids with
    numpy's ``RandomState(i)`` (each shuffle from the last order), and fold ``j`` leaves out
    the ``j``-th of ``n_folds`` nearly equal parts — as four lists in :func:`psds`'s order.
    The clips are counted once (on ``num_jobs`` processes); each subset only sums its clips'
    counts."""
    settings, per_unit = _settings(dtc_threshold, gtc_threshold, cttc_threshold, alpha_ct,
                                   alpha_st, max_efpr, unit_of_time, time_decimals)
    for name, value in (("n_folds", n_folds), ("n_iterations", n_iterations)):
        if not is_whole(value) or value < 1 or (name == "n_folds" and value < 2):
            raise SedContractError(f"{name} must be a whole number >= "
                                   f"{2 if name == 'n_folds' else 1}, got {value!r}")
    results = psds_of_subsets(scores, ground_truth, audio_durations, settings,
                              lambda clips: fold_subsets(clips, n_folds, n_iterations),
                              num_jobs)
    out = [(r["value"], dict(r["per_class"]), *_curves(r["roc"], per_unit)) for r in results]
    return tuple(list(column) for column in zip(*out, strict=True))


def fold_subsets(clips: Sequence[str], n_folds: int, n_iterations: int) -> list[list[str]]:
    """sed_scores_eval's bootstrap folds of ``clips``, as its ``bootstrap_from_deltas`` draws
    them."""
    ids = sorted(clips)
    split = np.linspace(0, len(ids), n_folds + 1).astype(int)
    out = []
    for i in range(n_iterations):
        np.random.RandomState(i).shuffle(ids)
        out += [ids[:split[j]] + ids[split[j + 1]:] for j in range(n_folds)]
    return out


def best_fscore(scores: Any, ground_truth: Any, *, dtc_threshold: float, gtc_threshold: float,
                min_precision: float = 0.0, min_recall: float = 0.0, beta: float = 1.0,
                time_decimals: int = 6, num_jobs: int = 1
                ) -> tuple[dict[str, float], dict[str, float], dict[str, float],
                           dict[str, float], dict[str, dict[str, float]]]:
    """The best intersection-based F per class over every threshold, as sed_scores_eval's
    ``intersection_based.best_fscore`` returns it: ``f, p, r, thresholds, stats``
    (:func:`~sedcontract.scores.fscores.best_fscores`), the true and false positives at
    each threshold counted as PSDS counts them (without cross-triggers), on ``num_jobs``
    processes."""
    microseconds(time_decimals)
    settings = PsdsSettings(dtc=number_in("dtc_threshold", dtc_threshold, 0.0, 1.0),
                            gtc=number_in("gtc_threshold", gtc_threshold, 0.0, 1.0))
    truth_events = events_of(ground_truth, "ground truth")
    source = score_source(scores, truth_events.clips)
    classes = tuple(source.columns)
    truth = ClipTruth.of(truth_events, list(truth_events.clips), classes)

    def count(executor: Any, blocks: int | None) -> ScoreChanges:
        if executor is None:
            return ScoreChanges.join(block_task(source, truth, classes, [settings])[0][0])
        clips = list(truth.clips)

        def task(a: int, b: int) -> Any:
            return executor.submit(block_task, source.select(clips[a:b]), truth.block(a, b),
                                   classes, [settings])

        return ScoreChanges.join([part for done in block_results(len(clips), blocks, task)
                                  for part in done[0][0]])

    changes = with_jobs(num_jobs, __name__, count)
    n_ref = np.bincount(truth.cls, minlength=len(classes))
    curves = {}
    for c, name in enumerate(classes):
        score, tp, fp = changes.of_class(c)[:3]
        tps = np.concatenate((np.cumsum(tp[::-1])[::-1], [0])).astype(np.float64)
        fps = np.concatenate((np.cumsum(fp[::-1])[::-1], [0])).astype(np.float64)
        curves[name] = (np.append(score, np.inf), {"tps": tps, "fps": fps,
                                                   "n_ref": float(n_ref[c])})
    return best_fscores(curves, beta=number_in("beta", beta, 0.0),
                        min_precision=number_in("min_precision", min_precision, 0.0, 1.0),
                        min_recall=number_in("min_recall", min_recall, 0.0, 1.0))
