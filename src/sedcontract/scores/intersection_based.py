"""Intersection-based F1 (the DCASE / PSDS detection and ground-truth criteria) at given
detections."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.numbers import number_in
from sedcontract.scores.counts import MetricResult, event_rows, overlapping, row_sums
from sedcontract.scores.fscores import Thresholds, fscore_dicts, system_output
from sedcontract.scores.psds.request import psds as psds_of_scenarios
from sedcontract.scores.psds.settings import PsdsSettings
from sedcontract.traces import EventList
from sedcontract.traces.given import events_of
from sedcontract.traces.grid import US_PER_SECOND, to_us
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
           classes: Sequence[str] | None = None, time_decimals: int = 6
           ) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, Any]]:
    """Intersection-based ``f, p, r, stats`` (as sed_scores_eval's
    ``intersection_based.fscore``) of score tables at ``threshold`` or of detections
    (threshold None): the inputs as :func:`sedcontract.scores.collar_based.fscore` takes
    them; ``dtc_threshold``, ``gtc_threshold`` as in PSDS (DCASE: 0.5, 0.5), required as
    sed_scores_eval requires them."""
    dtc_threshold = number_in("dtc_threshold", dtc_threshold, 0.0, 1.0)
    gtc_threshold = number_in("gtc_threshold", gtc_threshold, 0.0, 1.0)
    truth = events_of(ground_truth, "ground truth")
    detections, names = system_output(scores, threshold, truth, classes)
    return fscore_dicts(intersection_metrics(truth, detections, classes=names,
                                             dtc_threshold=dtc_threshold,
                                             gtc_threshold=gtc_threshold,
                                             time_decimals=time_decimals))


def _settings(dtc_threshold: float, gtc_threshold: float, cttc_threshold: float | None,
              alpha_ct: float, alpha_st: float, max_efpr: float) -> PsdsSettings:
    if cttc_threshold is None and alpha_ct > 0:
        raise SedContractError("a cross-trigger weight (alpha_ct > 0) needs cttc_threshold")
    return PsdsSettings(dtc=dtc_threshold, gtc=gtc_threshold,
                        cttc=0.3 if cttc_threshold is None else cttc_threshold,
                        alpha_ct=alpha_ct, alpha_st=alpha_st, max_efpr=max_efpr)


def psd_roc(scores: Any, ground_truth: Any, audio_durations: Any, *, dtc_threshold: float,
            gtc_threshold: float, cttc_threshold: float | None = None, alpha_ct: float = 0.0,
            alpha_st: float = 0.0, max_efpr: float = 100.0
            ) -> tuple[tuple[np.ndarray, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The PSD-ROC as sed_scores_eval's ``intersection_based.psd_roc`` returns it:
    ``((etpr, efpr), {class: (tpr, efpr)})`` (eFPR per hour; the class curves without
    sed_scores_eval's third element, the thresholds), of score tables against the ground
    truth."""
    settings = _settings(dtc_threshold, gtc_threshold, cttc_threshold, alpha_ct, alpha_st,
                         max_efpr)
    roc = psds_of_scenarios(scores, ground_truth, audio_durations,
                            {"psds": settings})["psds"]["roc"]
    return ((np.asarray(roc["etpr"]), np.asarray(roc["efpr"])),
            {name: (np.asarray(c["tpr"]), np.asarray(c["efpr"]))
             for name, c in roc["classes"].items()})


def psds(scores: Any, ground_truth: Any, audio_durations: Any, *, dtc_threshold: float,
               gtc_threshold: float, cttc_threshold: float | None = None,
               alpha_ct: float = 0.0, alpha_st: float = 0.0, max_efpr: float = 100.0
               ) -> tuple[float, dict[str, float], tuple[np.ndarray, np.ndarray],
                          dict[str, tuple[np.ndarray, np.ndarray]]]:
    """PSDS as sed_scores_eval's ``intersection_based.psds`` returns it: ``(psds,
    {class: psds}, (etpr, efpr), {class: (tpr, efpr)})``, of score tables (a folder, or clip →
    DataFrame) against the ground truth and ``audio_durations``.
    :func:`sedcontract.scores.psds.psds` computes several scenarios at once."""
    settings = _settings(dtc_threshold, gtc_threshold, cttc_threshold, alpha_ct, alpha_st,
                         max_efpr)
    result = psds_of_scenarios(scores, ground_truth, audio_durations,
                               {"psds": settings})["psds"]
    roc = result["roc"]
    return (result["value"], dict(result["per_class"]),
            (np.asarray(roc["etpr"]), np.asarray(roc["efpr"])),
            {name: (np.asarray(c["tpr"]), np.asarray(c["efpr"]))
             for name, c in roc["classes"].items()})
