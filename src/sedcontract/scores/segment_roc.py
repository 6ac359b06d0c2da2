"""Segment-based ROC and (partial) AUROC from score tables, as sed_scores_eval's
``segment_based.roc_curve`` / ``auroc`` compute them (DCASE 2024 Task 4 ranks MAESTRO by its
mean partial AUROC, "mpAUC": 1 s segments, ``max_fpr`` 0.1).

Each clip is cut into ``ceil(duration / segment_length)`` segments. A segment is positive for a
class when a reference event of that class overlaps it (touching does not count); its score is
the largest score of the frames that overlap it, and 0 when no frame reaches it (as in
sed_scores_eval, whatever the scores' range). Every distinct segment score is an operating
point (``score >= threshold`` is a detection); TPR = detected positive segments over all
positive ones, FPR = detected negative segments over all negative ones. The area is summed
under the staircase held to the right of each point up to ``max_fpr`` and divided by it (no
McClish correction, unlike scikit-learn's ``roc_auc_score(max_fpr=)``).

Segments are kept as runs that share their frames, so a clip costs its frames and events,
never its duration: a long frame or a long stretch without frames is one run. Times are
compared in whole microseconds, as everywhere here (sed_scores_eval rounds segment bounds to
``time_decimals=6``; it divides ``duration / segment_length`` in floating point, which can add
a segment, e.g. 12 segments of 0.1 s for 1.1 s, where this counts 11)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sedcontract.blocks import EXECUTOR_BLOCKS, block_results
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number
from sedcontract.resampling import (
    draw_counts,
    index_chunks,
    interval_dicts,
    percentile_intervals,
    resampling,
)
from sedcontract.scores.psds.roc import staircase_area
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.grid import MAX_SECONDS, to_us
from sedcontract.traces.intervals import distinct
from sedcontract.traces.score_files import ScoreTable

DCASE_SEGMENT = 1.0   # seconds: DCASE 2024 Task 4's segment length for MAESTRO
DCASE_MAX_FPR = 0.1   # DCASE 2024 Task 4's partial AUROC bound (mpAUC)


@dataclass(frozen=True)
class AurocSettings:
    """Segment length (seconds) and the partial AUROC's FPR bound: DCASE 2024's by default."""

    segment_length: float = DCASE_SEGMENT
    max_fpr: float = DCASE_MAX_FPR

    def __post_init__(self) -> None:
        for name in ("segment_length", "max_fpr"):
            value = getattr(self, name)
            if not is_number(value, numpy=True) \
                    or not np.isfinite(value):
                raise SedContractError(f"AUROC {name} must be a number, got {value!r}")
        if not 0 < self.segment_length <= MAX_SECONDS or to_us(self.segment_length) <= 0:
            raise SedContractError(f"AUROC segment_length must be at least 1 µs, got "
                                   f"{self.segment_length!r} s")
        if not 0 < self.max_fpr <= 1:
            raise SedContractError(f"AUROC max_fpr must be in (0, 1], got {self.max_fpr!r}")

    def as_dict(self) -> dict[str, float]:
        return {"segment_length": float(self.segment_length), "max_fpr": float(self.max_fpr)}

    @classmethod
    def given(cls, settings: AurocSettings | None) -> AurocSettings:
        """The settings a function is given (None: DCASE's), anything else refused by name."""
        if settings is None:
            return cls()
        if not isinstance(settings, cls):
            raise SedContractError(f"AUROC settings are an AurocSettings, got "
                                   f"{type(settings).__name__}")
        return settings


@dataclass(frozen=True)
class SegmentRuns:
    """Segments of some clips as runs: each row is ``length`` consecutive segments of clip
    ``clip`` that share one score per class (``score``), ``positives`` of them active in the
    reference per class. Runs of disjoint blocks of clips concatenate."""

    clip: np.ndarray       # [runs] clip index
    length: np.ndarray     # [runs] segments in the run
    score: np.ndarray      # [runs, classes]
    positives: np.ndarray  # [runs, classes]

    @staticmethod
    def concat(parts: Sequence[SegmentRuns], n_classes: int) -> SegmentRuns:
        if not parts:
            return SegmentRuns(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                 np.zeros((0, n_classes)), np.zeros((0, n_classes), np.int64))
        return SegmentRuns(*(np.concatenate([getattr(p, k) for p in parts])
                               for k in ("clip", "length", "score", "positives")))


def clip_segments(table: ScoreTable, duration_us: int, segment_us: int, onset_us: np.ndarray,
                  offset_us: np.ndarray, cls: np.ndarray, clip: int = 0) -> SegmentRuns:
    """One clip's segment runs: ``table``'s frames (tiling time from 0), the clip's duration
    and segment length in µs, and its reference events (µs, class index)."""
    n_classes = table.scores.shape[1]
    n_seg = -(-int(duration_us) // segment_us)
    if n_seg <= 0:
        return SegmentRuns.concat([], n_classes)
    on, off = to_us(table.onset), to_us(table.offset)
    first = on // segment_us               # first segment each frame overlaps
    last = -(-off // segment_us) - 1        # its last
    breaks = distinct(np.clip(np.concatenate([[0, n_seg], first, last + 1]), 0, n_seg))
    start, length = breaks[:-1], np.diff(breaks)
    lo = np.searchsorted(last, start, side="left")    # first frame reaching the run
    hi = np.searchsorted(first, start, side="right")  # frames starting in or before it
    score = np.zeros((len(start), n_classes))
    some = hi > lo
    if some.any() and len(on):
        # the maximum over frames [lo, hi) of each run, by one reduceat on (lo, hi) pairs
        padded = np.concatenate([table.scores, table.scores[-1:]])
        pairs = np.stack([lo[some], hi[some]], axis=1).reshape(-1)
        score[some] = np.maximum.reduceat(padded, pairs, axis=0)[::2]
    # reference segments per class: event [a, b) overlaps segments floor(a/L) .. ceil(b/L)-1,
    # laid on one line (class c's segment k at c·n_seg + k) and merged there
    seg_a = np.clip(onset_us // segment_us, 0, n_seg)
    seg_b = np.clip(-(-offset_us // segment_us), 0, n_seg)
    keep = seg_b > seg_a
    line_a = cls[keep] * n_seg + seg_a[keep]
    line_b = cls[keep] * n_seg + seg_b[keep]
    order = np.argsort(line_a, kind="stable")
    line_a, line_b = line_a[order], line_b[order]
    base = np.arange(n_classes, dtype=np.int64)[None, :] * n_seg
    positives = np.zeros((len(start), n_classes), dtype=np.int64)
    if len(line_a):
        new = np.ones(len(line_a), dtype=bool)  # a range past every earlier one's end
        new[1:] = line_a[1:] > np.maximum.accumulate(line_b)[:-1]
        starts = line_a[new]
        ends = np.maximum.reduceat(line_b, np.flatnonzero(new))
        before = np.concatenate([[0], np.cumsum(ends - starts)])  # covered before range k

        def coverage(x: np.ndarray) -> np.ndarray:  # covered segments on the line before x
            k = np.maximum(np.searchsorted(starts, x, side="right") - 1, 0)
            inside = np.clip(x - starts[k], 0, ends[k] - starts[k])
            return before[k] + inside

        positives = coverage(base + (start + length)[:, None]) - coverage(base + start[:, None])
    return SegmentRuns(np.full(len(start), clip, dtype=np.int64), length.astype(np.int64),
                         score, positives)


def segment_counts(tables: Iterable[ScoreTable], truth: ClipTruth,
                   durations: Sequence[float | None], settings: AurocSettings,
                   n_classes: int) -> SegmentRuns:
    """The segment runs of the clips of ``truth`` (tables in its clip order, ``n_classes``
    columns; a duration of None is sed_scores_eval's default, the end of the scores or of the
    last reference event, whichever is later)."""
    segment_us = int(to_us(settings.segment_length))
    parts = []
    lo_hi = np.searchsorted(truth.clip, np.arange(len(truth.clips) + 1))
    for k, table in enumerate(tables):
        a, b = lo_hi[k], lo_hi[k + 1]
        on, off = to_us(truth.onset[a:b]), to_us(truth.offset[a:b])
        duration = durations[k]
        if duration is None:
            ends = [to_us(table.offset[-1])] if len(table.offset) else []
            duration_us = int(max([*ends, *off.tolist(), 0]))
        else:
            duration_us = int(to_us(duration))
        parts.append(clip_segments(table, duration_us, segment_us, on, off, truth.cls[a:b],
                                   k))
    return SegmentRuns.concat(parts, n_classes)


def class_counts(score: np.ndarray, positives: np.ndarray, length: np.ndarray
                 ) -> tuple[np.ndarray, dict[str, Any]]:
    """One class's segment counts at each threshold as sed_scores_eval keeps them: the
    distinct segment scores ascending then ``inf`` (detected: ``score >= threshold``), and
    ``tps``, ``fps``, ``n_sys``, ``tns`` there (float arrays) with ``n_ref``."""
    values, inverse = np.unique(score, return_inverse=True)
    pos = np.bincount(inverse, weights=positives, minlength=len(values))
    neg = np.bincount(inverse, weights=length - positives, minlength=len(values))
    tps = np.append(np.cumsum(pos[::-1])[::-1], 0.0)
    fps = np.append(np.cumsum(neg[::-1])[::-1], 0.0)
    n_ref, n_neg = float(pos.sum()), float(neg.sum())
    return np.append(values, np.inf), {"tps": tps, "fps": fps, "n_sys": tps + fps,
                                       "n_ref": n_ref, "tns": n_neg - fps}


def class_roc(score: np.ndarray, positives: np.ndarray, length: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """One class's ROC as sed_scores_eval returns it: ``(tpr, fpr, thresholds, stats)`` sorted
    by FPR, then TPR, a point per distinct segment score (detected: ``score >= threshold``)
    and the empty detection at threshold ``inf``; ``stats``: :func:`class_counts` in that
    order. NaN rates where the class has no positive (TPR) or no negative (FPR) segment."""
    thresholds, stats = class_counts(score, positives, length)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = stats["tps"] / stats["n_ref"]
        fpr = stats["fps"] / (stats["tns"] + stats["fps"])
    order = np.lexsort((tpr, fpr))
    return (tpr[order], fpr[order], thresholds[order],
            {k: v[order] if isinstance(v, np.ndarray) else v for k, v in stats.items()})


def auroc_draws(counts: SegmentRuns, n_clips: int, settings: AurocSettings,
                resamples: int, seed: int) -> np.ndarray:
    """``[resamples, 2]``: mAUC and mpAUC of each bootstrap resample of the clips (the draws of
    :func:`sedcontract.resampling.index_chunks`, the same as every other interval of these
    clips and seed), each clip's runs counted as often as it was drawn. A chunk of resamples
    is counted at once per class: its weighted positives and negatives per score value as one
    product, the ROC points already in FPR order down from the top threshold, each area
    summed point after point as :func:`area` sums it (the same numbers)."""
    from scipy import sparse

    n = counts.score.shape[1]
    negatives = counts.length[:, None] - counts.positives
    columns = []  # per class: each clip's positive and negative segments per score value
    for c in range(n):
        values, inverse = np.unique(counts.score[:, c], return_inverse=True)
        shape = (n_clips, len(values))
        columns.append((sparse.csr_matrix((counts.positives[:, c].astype(np.float64),
                                           (counts.clip, inverse)), shape=shape),
                        sparse.csr_matrix((negatives[:, c].astype(np.float64),
                                           (counts.clip, inverse)), shape=shape)))
    out = np.empty((resamples, 2))
    k = 0
    for chunk in index_chunks(n_clips, resamples, seed):
        weights = draw_counts(chunk, n_clips).astype(np.float64)
        full, partial = np.empty((len(chunk), n)), np.empty((len(chunk), n))
        for c, (pos, neg) in enumerate(columns):
            tpr, fpr = _rates(np.asarray((pos.T @ weights.T).T), np.asarray((neg.T @ weights.T).T))
            full[:, c], partial[:, c] = _areas(tpr, fpr, 1.0), _areas(tpr, fpr, settings.max_fpr)
        for row in range(len(chunk)):
            out[k] = [_mean_defined(list(full[row])), _mean_defined(list(partial[row]))]
            k += 1
    return out


def _rates(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TPR and FPR ``[draws, points]`` from positives and negatives per score value
    ``[draws, values]``: the points from the empty detection down to the lowest value (FPR,
    then TPR, non-decreasing), NaN rows where a draw has no positive (or negative) segment."""
    tps = np.concatenate([np.zeros((len(pos), 1)), np.cumsum(pos[:, ::-1], axis=1)], axis=1)
    fps = np.concatenate([np.zeros((len(neg), 1)), np.cumsum(neg[:, ::-1], axis=1)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return tps / tps[:, -1:], fps / fps[:, -1:]


def _areas(tpr: np.ndarray, fpr: np.ndarray, bound: float) -> np.ndarray:
    """:func:`area` of each row (points in FPR order), summed point after point as it sums."""
    x = np.where(fpr < bound, fpr, bound)  # a point at or past the bound adds no area
    widths = np.diff(np.concatenate([x, np.full((len(x), 1), bound)], axis=1), axis=1)
    areas = np.cumsum(widths * np.where(fpr < bound, tpr, 0.0), axis=1)[:, -1] / bound
    bad = np.isnan(tpr).any(axis=1) | np.isnan(fpr).any(axis=1)
    return np.where(bad, np.nan, areas)


def _mean_defined(values: Sequence[float]) -> float:
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else float("nan")


def auroc_of(counts: SegmentRuns, classes: Sequence[str], max_fpr: float | None = None
             ) -> dict[str, float]:
    """``{class: AUROC, "mean": …}`` of segment runs, the area up to ``max_fpr`` divided by it
    when given. A class without positive or negative segments is NaN and left out of the mean
    (the mean of no class is NaN)."""
    out: dict[str, float] = {}
    for c, name in enumerate(classes):
        out[name] = area(*class_roc(counts.score[:, c], counts.positives[:, c],
                                    counts.length)[:2], max_fpr)
    out["mean"] = _mean_defined(list(out.values()))
    return out


def area(tpr: np.ndarray, fpr: np.ndarray, max_fpr: float | None = None) -> float:
    """The staircase area under ``(fpr, tpr)`` (sorted by FPR, then TPR) up to ``max_fpr``
    (default 1), divided by it, summed in sed_scores_eval's order; NaN for undefined rates."""
    if not len(tpr) or np.isnan(tpr).any() or np.isnan(fpr).any():
        return float("nan")
    bound = 1.0 if max_fpr is None else float(max_fpr)
    return staircase_area(fpr, tpr, bound, in_order=True) / bound


def classes_defined(values: Mapping[str, float], classes: Sequence[str]) -> int:
    """How many of ``classes`` have a defined (non-NaN) value."""
    return sum(not np.isnan(values[c]) for c in classes)


NO_DURATIONS = "the end of each clip's scores or last reference event (none given)"


def auroc_result(counts: SegmentRuns, classes: Sequence[str], settings: AurocSettings,
                 durations: str = "given") -> dict[str, Any]:
    """mAUC and mpAUC with their per-class values, how many classes they average, the
    settings and where the clips' durations came from."""
    full = auroc_of(counts, classes)
    partial = auroc_of(counts, classes, settings.max_fpr)
    return {"mauc": full["mean"], "mpauc": partial["mean"],
            "classes": classes_defined(full, classes),
            "per_class": {c: {"auc": full[c], "pauc": partial[c]} for c in classes},
            "settings": settings.as_dict(), "durations": durations, "rule": "sed_scores_eval"}


def block_segment_counts(source: Any, truth: ClipTruth, durations: Sequence[float | None],
                         settings: AurocSettings, n_classes: int, first: int) -> SegmentRuns:
    """:func:`segment_counts` of a block of clips starting at clip ``first`` (numbered as in
    the whole corpus): the task a process runs."""
    runs = segment_counts(source.stream(truth.clips), truth, durations, settings, n_classes)
    return SegmentRuns(runs.clip + first, runs.length, runs.score, runs.positives)


def corpus_auroc_counts(scores: Any, ref: Any, durations: Any,
                        settings: AurocSettings, *, executor: Any = None,
                        blocks: int | None = None) -> tuple[SegmentRuns, tuple[str, ...]]:
    """The segment runs of score tables (a folder, a table source, or clip → DataFrame in
    sed_scores_eval's layout; every reference clip scored, no other) against the reference
    (any form :func:`~sedcontract.traces.given.events_of` takes) and ``durations`` (clip →
    seconds, a durations file or DataFrame; None: sed_scores_eval's default per clip), and
    the classes (the score columns). With an ``executor``, ``blocks`` of clips are counted
    where it runs (the same result)."""
    ref = events_of(ref, "ground truth")
    given = durations_of(durations)
    source = score_source(scores, ref.clips)
    classes = tuple(source.columns)
    clips = tuple(ref.clips)
    if given is not None:
        missing = [c for c in clips if c not in given]
        if missing:
            raise SedContractError(f"no duration for clip {missing[0]!r} "
                                   f"({len(missing)} clip(s) without one)")
    truth = ClipTruth.of(ref, clips, classes)
    seconds = [None if given is None else given[c] for c in clips]
    if executor is None:
        return segment_counts(source.stream(clips), truth, seconds, settings,
                              len(classes)), classes

    def task(a: int, b: int) -> Any:
        return executor.submit(block_segment_counts, source.select(clips[a:b]),
                               truth.block(a, b), seconds[a:b], settings, len(classes), a)

    parts = list(block_results(len(clips), blocks or EXECUTOR_BLOCKS, task))
    return SegmentRuns.concat(parts, len(classes)), classes


def segment_auroc(scores: Any, ref: Any, durations: Any,
                  settings: AurocSettings | None = None, *, resamples: int = 0, seed: int = 0,
                  level: float = 0.95) -> dict[str, Any]:
    """mAUC and mpAUC of score tables against the reference (:func:`corpus_auroc_counts`):
    ``{"mauc", "mpauc", "classes", "per_class": {class: {"auc", "pauc"}}, "settings",
    "durations", "rule"}``; with ``resamples``, ``"intervals"``: each one's percentile
    bootstrap interval over the clips (:func:`auroc_draws`)."""
    settings = AurocSettings.given(settings)
    counts, classes = corpus_auroc_counts(scores, ref, durations, settings)
    result = auroc_result(counts, classes, settings,
                          "given" if durations is not None else NO_DURATIONS)
    if resamples:
        n_clips = len(events_of(ref, "ground truth").clips)
        resamples, seed = resampling(resamples, seed, level, n_clips)
        draws = auroc_draws(counts, n_clips, settings, resamples, seed)
        result["intervals"] = interval_dicts(percentile_intervals(
            ("mauc", "mpauc"), (result["mauc"], result["mpauc"]), draws, level, resamples),
            seed)
        result["draws"] = {"mauc": draws[:, 0], "mpauc": draws[:, 1]}  # for source rows
    return result


def paired_auroc(scores: Any, other: Any, ref: Any, durations: Any,
                 settings: AurocSettings | None = None, *, resamples: int = 2000,
                 seed: int = 0, level: float = 0.95) -> dict[str, dict[str, Any]]:
    """The differences ``scores`` − ``other`` (two systems' tables of the same clips) of mAUC
    and mpAUC, each with its paired percentile bootstrap interval: every resample draws the
    same clips for both systems."""
    settings = AurocSettings.given(settings)
    a, classes = corpus_auroc_counts(scores, ref, durations, settings)
    b, other_classes = corpus_auroc_counts(other, ref, durations, settings)
    if classes != other_classes:
        raise SedContractError(f"the two systems score different classes ({', '.join(classes)}"
                               f" against {', '.join(other_classes)})")
    n_clips = len(events_of(ref, "ground truth").clips)
    resamples, seed = resampling(resamples, seed, level, n_clips)
    points = [auroc_result(x, classes, settings) for x in (a, b)]
    diff = auroc_draws(a, n_clips, settings, resamples, seed) - \
        auroc_draws(b, n_clips, settings, resamples, seed)
    return interval_dicts(percentile_intervals(
        ("mauc", "mpauc"), [points[0][k] - points[1][k] for k in ("mauc", "mpauc")], diff,
        level, resamples), seed)


@dataclass(frozen=True)
class AurocRequest:
    """mAUC and mpAUC beside the standard scores, from score tables (``scores``: a folder, a
    table source or clip → table), with ``settings``; the reference taken as given. With
    ``resamples``, their bootstrap intervals over the clips (``seed``, ``level``)."""

    scores: Any
    settings: AurocSettings = field(default_factory=AurocSettings)
    resamples: int = 0
    seed: int = 0
    level: float = 0.95

    def compute(self, ref: Any, durations: Mapping[str, float] | None) -> dict[str, Any]:
        """The result of :func:`segment_auroc` on the request's tables."""
        return segment_auroc(self.scores, ref, durations, self.settings,
                             resamples=self.resamples, seed=self.seed, level=self.level)
