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

from sedcontract.errors import SedContractError
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import detections, events_of, is_score_tables, score_source

Thresholds = float | Mapping[str, float]


def system_output(scores: Any, threshold: Thresholds | None, ground_truth: EventList,
                  classes: Sequence[str] | None = None
                  ) -> tuple[EventList, tuple[str, ...]]:
    """The detections and the scored classes: score tables (a folder, a
    :class:`~sedcontract.traces.score_files.ScoreFolder`, or clip → DataFrame in sed_scores_eval's
    layout) thresholded strictly above ``threshold`` (one, or one per class), their columns
    the classes; or detections as they are (an event file, an event list, clip → [(onset,
    offset, label)], a DataFrame of DCASE rows), the classes those of both sides unless
    given."""
    if is_score_tables(scores) or (threshold is not None and isinstance(scores, Mapping)
                                   and not scores):
        if threshold is None:
            raise SedContractError("score tables become detections at a threshold: give "
                                   "threshold (one, or a mapping of class → threshold)")
        source = score_source(scores, ground_truth.clips)
        where = str(scores) if isinstance(scores, str | os.PathLike) else "scores"
        events = detections(source, ground_truth, DecisionPolicy(), where, declared=classes,
                            thresholds=threshold)
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
