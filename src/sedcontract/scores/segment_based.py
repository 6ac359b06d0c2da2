"""Segment-based scores: F1 / error rate (sed_eval's ``SegmentBasedMetrics``: a class is active
in a segment its events touch) and, from score tables, the ROC and (partial) AUROC of
sed_scores_eval's ``segment_based`` (:mod:`sedcontract.scores.segment_roc`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sedcontract.blocks import with_jobs
from sedcontract.numbers import number_in
from sedcontract.scores.counts import (
    MetricResult,
    by_row,
    clip_extent_us,
    event_rows,
    overlapping,
    row_sums,
)
from sedcontract.scores.fscores import (
    Thresholds,
    best_fscores,
    fscore_dicts,
    microseconds,
    system_output,
)
from sedcontract.scores.segment_roc import (
    AurocSettings,
    SegmentRuns,
    auroc_of,
    class_counts,
    class_roc,
    corpus_auroc_counts,
)
from sedcontract.traces import EventList
from sedcontract.traces.given import durations_of, events_of
from sedcontract.traces.grid import MAX_SECONDS, to_us
from sedcontract.traces.intervals import Intervals


def segment_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                    time_resolution: float = 1.0,
                    durations: Mapping[str, float] | None = None) -> MetricResult:
    """Segment-based F1 / error rate: a class is active in a segment its events touch.

    Computed on segment ranges (one per event), never on an array of segments, so a long clip
    costs what its events cost."""
    res = int(to_us(time_resolution))
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    n_seg = -(-clip_extent_us(ref, pred, clips, durations) // res)
    per = len(classes)
    active = {}
    for side, events in (("ref", ref), ("pred", pred)):
        rows = event_rows(events, clips, classes)
        limit = n_seg[rows // per] if per else np.zeros(0, dtype=np.int64)
        first = np.minimum(to_us(events.onset) // res, limit)
        end = np.minimum(-(-to_us(events.offset) // res), limit)
        active[side] = Intervals.merged(rows, first, end)
    a, s = active["ref"], active["pred"]
    ia, ib, shared = overlapping(a, s)
    n_rows = len(clips) * per
    # per segment: active reference classes, system classes and hits, as step functions of
    # the segment index within each clip (+1 where a range starts, −1 where it ends)
    both = np.maximum(a.start[ia], s.start[ib]), np.minimum(a.end[ia], s.end[ib])
    clip = np.concatenate([a.row, a.row, s.row, s.row, a.row[ia], a.row[ia]]) // max(per, 1)
    position = np.concatenate([a.start, a.end, s.start, s.end, *both])
    steps = np.zeros((len(position), 3), dtype=np.int64)
    n_a, n_s, n_t = len(a), len(s), len(ia)
    steps[:n_a, 0], steps[n_a:2 * n_a, 0] = 1, -1
    steps[2 * n_a:2 * n_a + n_s, 1], steps[2 * n_a + n_s:2 * (n_a + n_s), 1] = 1, -1
    steps[2 * (n_a + n_s):2 * (n_a + n_s) + n_t, 2] = 1
    steps[2 * (n_a + n_s) + n_t:, 2] = -1
    order = by_row(clip, position)
    clip, position, level = clip[order], position[order], np.cumsum(steps[order], axis=0)
    width = np.zeros(len(position), dtype=np.int64)
    same = clip[1:] == clip[:-1]
    width[:-1] = np.where(same, position[1:] - position[:-1], 0)
    r, y, t = level[:, 0], level[:, 1], level[:, 2]
    # S per segment is min(r, y) − t; then fn = ref − tp − S sums max(0, r − y) (deletions)
    # and fp sums max(0, y − r) (insertions): the pooled error rate is DCASE's S + D + I
    subs = row_sums(clip, width * (np.minimum(r, y) - t), len(clips))
    return MetricResult.of_rows(clips, classes, row_sums(a.row[ia], shared, n_rows),
                                row_sums(a.row, a.end - a.start, n_rows),
                                row_sums(s.row, s.end - s.start, n_rows), subs)


def fscore(scores: Any, ground_truth: Any, audio_durations: Any,
           threshold: Thresholds | None = None, *, segment_length: float = 1.0,
           classes: Sequence[str] | None = None, time_decimals: int = 6, num_jobs: int = 1
           ) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, Any]]:
    """Segment-based ``f, p, r, stats`` (as sed_scores_eval's ``segment_based.fscore``): a
    class is active in a segment of ``segment_length`` s its events touch; each clip has
    ``ceil(duration / segment_length)`` segments (``audio_durations``: clip → seconds, a
    durations file or DataFrame). The system output as
    :func:`sedcontract.scores.collar_based.fscore` takes it (``num_jobs`` processes
    threshold blocks of its tables)."""
    segment_length = number_in("segment_length", segment_length, 1e-6, MAX_SECONDS)  # >= 1 µs
    microseconds(time_decimals)
    truth = events_of(ground_truth, "ground truth")
    detections, names = system_output(scores, threshold, truth, classes, num_jobs=num_jobs)
    return fscore_dicts(segment_metrics(truth, detections, classes=names,
                                        time_resolution=segment_length,
                                        durations=durations_of(audio_durations)))


def _runs(scores: Any, ground_truth: Any, audio_durations: Any, segment_length: float,
          time_decimals: int, num_jobs: int, max_fpr: float = 1.0
          ) -> tuple[SegmentRuns, tuple[str, ...]]:
    """The segment runs of score tables and their classes, on ``num_jobs`` processes."""
    microseconds(time_decimals)
    settings = AurocSettings(segment_length=segment_length, max_fpr=max_fpr)
    return with_jobs(num_jobs, __name__, lambda executor, blocks: corpus_auroc_counts(
        scores, ground_truth, audio_durations, settings, executor=executor, blocks=blocks))


def _curves(counts: SegmentRuns, classes: Sequence[str]
            ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]]:
    """Each class's ROC as sed_scores_eval's ``roc_curve``: ``(tpr, fpr, thresholds, stats)``
    sorted by FPR, then TPR."""
    return {name: class_roc(counts.score[:, c], counts.positives[:, c], counts.length)
            for c, name in enumerate(classes)}


def roc_curve(scores: Any, ground_truth: Any, audio_durations: Any, *,
              segment_length: float, time_decimals: int = 6, num_jobs: int = 1
              ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]]:
    """Segment-based ROC per class as sed_scores_eval's ``segment_based.roc_curve`` returns it,
    ``{class: (tpr, fpr, thresholds, stats)}`` sorted by FPR (``stats``: ``tps``, ``fps``,
    ``n_sys``, ``tns`` at each threshold, and ``n_ref``): score tables (a folder, or clip →
    DataFrame) against the ground truth; ``audio_durations`` None takes each clip's scores' or
    last event's end, as it does. The rules: :mod:`sedcontract.scores.segment_roc`."""
    return _curves(*_runs(scores, ground_truth, audio_durations, segment_length,
                          time_decimals, num_jobs))


def auroc(scores: Any, ground_truth: Any, audio_durations: Any, *, segment_length: float,
          max_fpr: float | None = None, time_decimals: int = 6, num_jobs: int = 1
          ) -> tuple[dict[str, float],
                     dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]]]:
    """Segment-based AUROC as sed_scores_eval's ``segment_based.auroc`` returns it: ``({class:
    AUROC, "mean": …}, {class: (tpr, fpr, thresholds, stats)})``; with ``max_fpr`` the area
    up to it divided by it (DCASE 2024's mpAUC: ``segment_length=1.0, max_fpr=0.1``, key
    ``mean``). Declared deviation: a class without positive (or negative) segments is NaN and
    ``mean`` averages the classes where AUROC is defined (sed_scores_eval refuses a class
    without reference events, and its rates are 0/0 for a class without negatives)."""
    counts, classes = _runs(scores, ground_truth, audio_durations, segment_length,
                            time_decimals, num_jobs, 1.0 if max_fpr is None else max_fpr)
    return auroc_of(counts, classes, max_fpr), _curves(counts, classes)


def best_fscore(scores: Any, ground_truth: Any, audio_durations: Any, *,
                segment_length: float = 1.0, min_precision: float = 0.0,
                min_recall: float = 0.0, beta: float = 1.0, time_decimals: int = 6,
                num_jobs: int = 1
                ) -> tuple[dict[str, float], dict[str, float], dict[str, float],
                           dict[str, float], dict[str, dict[str, float]]]:
    """The best segment-based F per class over every threshold, as sed_scores_eval's
    ``segment_based.best_fscore`` returns it: ``f, p, r, thresholds, stats``
    (:func:`~sedcontract.scores.fscores.best_fscores`), segments as :func:`auroc` scores
    them (a segment's score: the highest of the frames it overlaps)."""
    counts, classes = _runs(scores, ground_truth, audio_durations, segment_length,
                            time_decimals, num_jobs)
    curves = {name: class_counts(counts.score[:, c], counts.positives[:, c], counts.length)
              for c, name in enumerate(classes)}
    return best_fscores(curves, beta=number_in("beta", beta, 0.0),
                        min_precision=number_in("min_precision", min_precision, 0.0, 1.0),
                        min_recall=number_in("min_recall", min_recall, 0.0, 1.0))
