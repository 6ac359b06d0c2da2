"""Standard SED scores on the same event lists as the guard vector: segment-based and collar
event-based F1 / error rate with sed_eval's semantics (``t_collar``, ``percentage_of_length``,
greedy or optimal matching, micro and macro).

Declared edge-case policy (where this differs from sed_eval, tests show the difference):
times are compared in integer microseconds (sed_eval compares raw float64, so 0.3 / 0.1 lands
in segment 2); precision with no system output is 0 (DCASE's ``zero_score``); a score with
no reference is NaN and a macro mean skips it, reporting how many classes it averaged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import EventList, TraceSet
from sedcontract.traces.activity import offset, onset
from sedcontract.traces.grid import to_us


@dataclass(frozen=True)
class Counts:
    """Pooled detection counts; S/D/I as in the DCASE error rate."""

    tp: int
    ref: int
    sys: int
    subs: int = 0

    @property
    def fn(self) -> int:
        return self.ref - self.tp - self.subs

    @property
    def fp(self) -> int:
        return self.sys - self.tp - self.subs

    @property
    def precision(self) -> float:
        return 0.0 if self.sys == 0 else self.tp / self.sys

    @property
    def recall(self) -> float:
        return math.nan if self.ref == 0 else self.tp / self.ref

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        if math.isnan(r):
            return math.nan
        return 0.0 if p == 0 and r == 0 else 2 * p * r / (p + r)

    @property
    def error_rate(self) -> float:
        return math.nan if self.ref == 0 else (self.subs + self.fn + self.fp) / self.ref

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.ref + other.ref, self.sys + other.sys,
                      self.subs + other.subs)


@dataclass(frozen=True)
class MetricResult:
    """Overall (micro) counts, per-class counts and the macro means over classes."""

    overall: Counts
    per_class: dict[str, Counts]
    overall_error_rate: float | None = None  # segment-based S/D/I differ from the pooled form

    @property
    def error_rate(self) -> float:
        return self.overall.error_rate if self.overall_error_rate is None \
            else self.overall_error_rate

    def macro(self, name: str) -> tuple[float, int]:
        """Mean of a per-class score over classes where it is defined, and their number."""
        values = [getattr(c, name) for c in self.per_class.values()]
        values = [v for v in values if not math.isnan(v)]
        return (float(np.mean(values)) if values else math.nan), len(values)


def _by_clip(events: EventList) -> dict[str, np.ndarray]:
    order: dict[str, list[int]] = {}
    for i, clip in enumerate(events.clip.tolist()):
        order.setdefault(clip, []).append(i)
    return {clip: np.asarray(idx, dtype=np.int64) for clip, idx in order.items()}


def segment_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                    time_resolution: float = 1.0,
                    durations: Mapping[str, float] | None = None) -> MetricResult:
    """Segment-based F1 / error rate: a class is active in a segment its events touch."""
    res = int(to_us(time_resolution))
    class_index = {c: k for k, c in enumerate(classes)}
    ref_clips, pred_clips = _by_clip(ref), _by_clip(pred)
    totals = np.zeros((len(classes), 3), dtype=np.int64)  # tp, ref, sys per class
    s_total = d_total = i_total = 0
    for clip in dict.fromkeys([*ref.clips, *pred.clips]):
        r_idx = ref_clips.get(clip, np.zeros(0, dtype=np.int64))
        p_idx = pred_clips.get(clip, np.zeros(0, dtype=np.int64))
        if durations is not None:
            if clip not in durations:
                raise TraceFormatError(f"no duration for clip {clip!r}")
            length_us = int(to_us(durations[clip]))
        else:
            ends = np.concatenate([to_us(ref.offset[r_idx]), to_us(pred.offset[p_idx])])
            length_us = int(ends.max()) if ends.size else 0
        n = -(-length_us // res)
        rolls = []
        for events, idx in ((ref, r_idx), (pred, p_idx)):
            roll = np.zeros((n + 1, len(classes)), dtype=np.int32)
            first = np.minimum(to_us(events.onset[idx]) // res, n)
            end = np.minimum(-(-to_us(events.offset[idx]) // res), n)
            cols = np.array([class_index[c] for c in events.label[idx]], dtype=np.int64)
            np.add.at(roll, (first, cols), 1)
            np.add.at(roll, (end, cols), -1)
            rolls.append(np.cumsum(roll, axis=0)[:n] > 0)
        a, s = rolls
        totals[:, 0] += np.count_nonzero(a & s, axis=0)
        totals[:, 1] += np.count_nonzero(a, axis=0)
        totals[:, 2] += np.count_nonzero(s, axis=0)
        tp, n_ref, n_sys = (a & s).sum(1), a.sum(1), s.sum(1)
        s_total += int(np.sum(np.minimum(n_ref, n_sys) - tp))
        d_total += int(np.sum(np.maximum(0, n_ref - n_sys)))
        i_total += int(np.sum(np.maximum(0, n_sys - n_ref)))
    per_class = {c: Counts(int(t), int(r), int(s)) for c, (t, r, s) in zip(classes, totals,
                                                                          strict=True)}
    overall = Counts(int(totals[:, 0].sum()), int(totals[:, 1].sum()), int(totals[:, 2].sum()))
    n_ref = overall.ref
    er = math.nan if n_ref == 0 else (s_total + d_total + i_total) / n_ref
    return MetricResult(overall, per_class, er)


def _hits(ref: EventList, pred: EventList, r_idx: np.ndarray, p_idx: np.ndarray, *,
          t_collar: float, percentage_of_length: float, evaluate_onset: bool,
          evaluate_offset: bool) -> np.ndarray:
    """``[refs, preds]`` onset/offset conditions (labels not compared), in integer µs."""
    r_on, r_off = to_us(ref.onset[r_idx])[:, None], to_us(ref.offset[r_idx])[:, None]
    p_on, p_off = to_us(pred.onset[p_idx])[None], to_us(pred.offset[p_idx])[None]
    ok = np.ones((len(r_idx), len(p_idx)), dtype=bool)
    collar = int(to_us(t_collar))
    if evaluate_onset:
        ok &= np.abs(r_on - p_on) <= collar
    if evaluate_offset:
        tolerance = np.maximum(collar, to_us(percentage_of_length * (ref.offset[r_idx] -
                                                                     ref.onset[r_idx])))[:, None]
        ok &= np.abs(r_off - p_off) <= tolerance
    return ok


def _greedy(hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """References in stored order, each takes the first unmatched prediction it hits."""
    taken = np.zeros(hit.shape[1], dtype=bool)
    refs, preds = [], []
    for j in range(hit.shape[0]):
        free = np.flatnonzero(hit[j] & ~taken)
        if free.size:
            taken[free[0]] = True
            refs.append(j)
            preds.append(int(free[0]))
    return np.asarray(refs, dtype=np.int64), np.asarray(preds, dtype=np.int64)


def _optimal(hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A maximum-cardinality matching (Hopcroft–Karp)."""
    if not hit.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    match = maximum_bipartite_matching(csr_matrix(hit.astype(np.int8)), perm_type="column")
    refs = np.flatnonzero(match >= 0)
    return refs.astype(np.int64), match[refs].astype(np.int64)


def event_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                  t_collar: float = 0.2, percentage_of_length: float = 0.2,
                  evaluate_onset: bool = True, evaluate_offset: bool = True,
                  matching: str = "optimal") -> MetricResult:
    """Collar event-based F1 / error rate (label, onset and offset conditions), sed_eval's
    semantics: matched pairs are true positives; leftover references and predictions that meet
    the time conditions with another label are substitutions."""
    if matching not in ("optimal", "greedy"):
        raise ValueError(f"unknown matching {matching!r}; choose optimal or greedy")
    pick = _optimal if matching == "optimal" else _greedy
    ref_clips, pred_clips = _by_clip(ref), _by_clip(pred)
    per_class = {c: Counts(0, 0, 0) for c in classes}
    overall = Counts(0, 0, 0)
    for clip in dict.fromkeys([*ref.clips, *pred.clips]):
        r_idx = ref_clips.get(clip, np.zeros(0, dtype=np.int64))
        p_idx = pred_clips.get(clip, np.zeros(0, dtype=np.int64))
        timing = _hits(ref, pred, r_idx, p_idx, t_collar=t_collar,
                       percentage_of_length=percentage_of_length,
                       evaluate_onset=evaluate_onset, evaluate_offset=evaluate_offset)
        same = ref.label[r_idx][:, None] == pred.label[p_idx][None]
        refs, preds = pick(timing & same)
        ref_left = np.setdiff1d(np.arange(len(r_idx)), refs)
        pred_free = np.ones(len(p_idx), dtype=bool)
        pred_free[preds] = False
        subs = 0
        for j in ref_left:  # leftovers in stored order, first free prediction in time
            free = np.flatnonzero(timing[j] & pred_free)
            if free.size:
                pred_free[free[0]] = False
                subs += 1
        overall = overall + Counts(len(refs), len(r_idx), len(p_idx), subs)
        for c in classes:
            rc, pc = ref.label[r_idx] == c, pred.label[p_idx] == c
            tp = len(pick((timing & same)[np.ix_(rc, pc)])[0])
            per_class[c] = per_class[c] + Counts(tp, int(rc.sum()), int(pc.sum()))
    return MetricResult(overall, per_class)


def frame_metrics(traces: TraceSet) -> MetricResult:
    """Frame-based F1 on the contract grid (the same projection the guard vector uses)."""
    ref, pred = traces.active["ref"], traces.active["pred"]
    tp = np.count_nonzero(ref & pred, axis=(0, 2))
    n_ref, n_sys = np.count_nonzero(ref, axis=(0, 2)), np.count_nonzero(pred, axis=(0, 2))
    per_class = {c: Counts(int(t), int(r), int(s))
                 for c, t, r, s in zip(traces.classes, tp, n_ref, n_sys, strict=True)}
    return MetricResult(sum(per_class.values(), Counts(0, 0, 0)), per_class)


def _tolerance_matches(ref: np.ndarray, pred: np.ndarray, tolerance: int) -> int:
    """Largest one-to-one matching of sorted frame positions with ``|r − p| <= tolerance``
    (earliest-first on a line is optimal)."""
    matched, k = 0, 0
    for r in ref.tolist():
        while k < len(pred) and pred[k] < r - tolerance:
            k += 1
        if k < len(pred) and pred[k] <= r + tolerance:
            matched += 1
            k += 1
    return matched


def boundary_metrics(traces: TraceSet, *, frames: int, kind: str = "onset",
                     edges: str = "open") -> MetricResult:
    """Boundary F1: reference onsets (or offsets) detected by a predicted one of the same class
    within ``frames`` frames, one to one, on the contract grid (the guard vector's grid and
    clip-edge policy)."""
    derive = onset if kind == "onset" else offset
    per_class = {}
    for k, c in enumerate(traces.classes):
        lengths = traces.lengths
        r = derive(traces.active["ref"][:, k], edges, lengths)
        p = derive(traces.active["pred"][:, k], edges, lengths)
        tp = sum(_tolerance_matches(np.flatnonzero(r[i]), np.flatnonzero(p[i]), frames)
                 for i in range(len(traces.clips)))
        per_class[c] = Counts(tp, int(r.sum()), int(p.sum()))
    return MetricResult(sum(per_class.values(), Counts(0, 0, 0)), per_class)


@dataclass(frozen=True)
class ScoreSettings:
    """Parameters of the standard scores, named as in the literature; part of every report."""

    t_collar: float = 0.2
    percentage_of_length: float = 0.2
    evaluate_onset: bool = True
    evaluate_offset: bool = True
    matching: str = "optimal"
    segment: float = 1.0
    dtc_threshold: float = 0.5
    gtc_threshold: float = 0.5
    boundary_frames: int = 10  # t_collar on the contract grid

    def __post_init__(self) -> None:
        checks = [("t_collar", self.t_collar >= 0), ("percentage_of_length",
                                                    self.percentage_of_length >= 0),
                  ("segment", self.segment > 0 and to_us(self.segment) > 0),
                  ("dtc_threshold", 0 <= self.dtc_threshold <= 1),
                  ("gtc_threshold", 0 <= self.gtc_threshold <= 1)]
        for name, ok in checks:
            value = getattr(self, name)
            if not (math.isfinite(value) and ok):
                raise SedContractError(f"score setting {name} = {value!r} is out of range")
        if self.matching not in ("optimal", "greedy"):
            raise SedContractError(f"unknown event matching {self.matching!r}; choose optimal "
                                   "or greedy")


def standard_scores(ref: EventList, pred: EventList, traces: TraceSet,
                    settings: ScoreSettings, *,
                    durations: Mapping[str, float] | None = None,
                    edges: str = "open") -> dict[str, MetricResult]:
    """Frame, segment, collar-event, intersection and boundary scores of one system on the
    same traces."""
    classes = list(traces.classes)
    return {
        "frame": frame_metrics(traces),
        "segment": segment_metrics(ref, pred, classes=classes,
                                   time_resolution=settings.segment, durations=durations),
        "event": event_metrics(ref, pred, classes=classes, t_collar=settings.t_collar,
                               percentage_of_length=settings.percentage_of_length,
                               evaluate_onset=settings.evaluate_onset,
                               evaluate_offset=settings.evaluate_offset,
                               matching=settings.matching),
        "intersection": intersection_metrics(ref, pred, classes=classes,
                                             dtc_threshold=settings.dtc_threshold,
                                             gtc_threshold=settings.gtc_threshold),
        "onset_boundary": boundary_metrics(traces, frames=settings.boundary_frames,
                                           kind="onset", edges=edges),
        "offset_boundary": boundary_metrics(traces, frames=settings.boundary_frames,
                                            kind="offset", edges=edges),
    }


def intersection_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                         dtc_threshold: float = 0.5, gtc_threshold: float = 0.5,
                         time_decimals: int = 6) -> MetricResult:
    """Intersection-based F1 (DCASE / PSDS criteria) at the given detections.

    A detection whose overlap with same-class references covers at least ``dtc_threshold`` of
    it is relevant, otherwise a false positive; a reference covered by relevant detections for
    at least ``gtc_threshold`` of its length is a true positive. Sums and thresholds are
    rounded to ``time_decimals`` as in sed_scores_eval. ``Counts.sys`` is ``tp + fp`` here, so
    precision = tp / (tp + fp). Overlapping same-class events are first merged on both sides
    (a detection is activity, not a count), and a zero-length reference cannot be covered.
    """
    ref, pred = ref.merged(), pred.merged()
    ref_clips, pred_clips = _by_clip(ref), _by_clip(pred)
    per_class = {c: Counts(0, 0, 0) for c in classes}
    for clip in dict.fromkeys([*ref.clips, *pred.clips]):
        r_idx = ref_clips.get(clip, np.zeros(0, dtype=np.int64))
        p_idx = pred_clips.get(clip, np.zeros(0, dtype=np.int64))
        for c in classes:
            r = r_idx[ref.label[r_idx] == c]
            p = p_idx[pred.label[p_idx] == c]
            r_on, r_off = ref.onset[r], ref.offset[r]
            p_on, p_off = pred.onset[p][:, None], pred.offset[p][:, None]
            shared = np.maximum(np.minimum(p_off, r_off) - np.maximum(p_on, r_on), 0.0)
            relevant = (np.round(shared.sum(1), time_decimals)
                        >= np.round(dtc_threshold * (p_off - p_on)[:, 0], time_decimals))
            relevant &= (p_off > p_on)[:, 0]
            covered = np.round((relevant[:, None] * shared).sum(0), time_decimals)
            tp = int(np.count_nonzero((covered >= np.round(gtc_threshold * (r_off - r_on),
                                                           time_decimals)) & (r_off > r_on)))
            fp = int(np.count_nonzero((p_off > p_on)[:, 0] & ~relevant))
            per_class[c] = per_class[c] + Counts(tp, len(r), tp + fp)
    return MetricResult(sum(per_class.values(), Counts(0, 0, 0)), per_class)
