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
from dataclasses import dataclass, field, replace

import numpy as np

from sedcontract.contracts.contract import compact_counts
from sedcontract.contracts.matching import exact, greedy, sweep
from sedcontract.contracts.policy import EVENT_MATCHINGS, TIME_COMPARISONS, ScoreSettings
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import EventList, TraceSet
from sedcontract.traces.events import index_of
from sedcontract.traces.grid import US_PER_SECOND, to_us
from sedcontract.traces.intervals import (
    MAX_PAIRS,
    Intervals,
    expand_ranges,
    overlap_ranges,
    row_keys,
)


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
    """Counts per clip × class (true positives, references, system outputs) and substitutions
    per clip. Overall and per-class scores are sums of them, so the results of disjoint sets
    of clips join by concatenation (shards, processes, validation batches)."""

    clips: tuple[str, ...]
    classes: tuple[str, ...]
    tp: np.ndarray    # [clips, classes]
    ref: np.ndarray   # [clips, classes]
    sys: np.ndarray   # [clips, classes]
    subs: np.ndarray  # [clips]: collar event S; segment S (so fn, fp are D, I)
    # collar event scores, [clips]: the (ref, pred) pairs whose collar conditions the two
    # time comparisons decide differently (None for the other scores)
    ties: np.ndarray | None = field(default=None, compare=False)

    @classmethod
    def of_rows(cls, clips: Sequence[str], classes: Sequence[str], tp: np.ndarray,
                ref: np.ndarray, sys: np.ndarray, subs: np.ndarray | None = None
                ) -> MetricResult:
        """From flat per-row counts (row ``clip · C + class``; float sums of whole numbers are
        made integers)."""
        shape = (len(clips), len(classes))

        def whole(x: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
            return compact_counts(np.rint(np.asarray(x, dtype=np.float64))).reshape(size)

        return cls(tuple(clips), tuple(classes), whole(tp, shape), whole(ref, shape),
                   whole(sys, shape),
                   whole(np.zeros(len(clips)) if subs is None else subs, (len(clips),)))

    @property
    def overall(self) -> Counts:
        return Counts(int(self.tp.sum()), int(self.ref.sum()), int(self.sys.sum()),
                      int(self.subs.sum()))

    @property
    def per_class(self) -> dict[str, Counts]:
        tp, ref, sys = self.tp.sum(axis=0), self.ref.sum(axis=0), self.sys.sum(axis=0)
        return {c: Counts(int(tp[k]), int(ref[k]), int(sys[k]))
                for k, c in enumerate(self.classes)}

    @property
    def error_rate(self) -> float:
        return self.overall.error_rate

    def macro(self, name: str) -> tuple[float, int]:
        """Mean of a per-class score over classes where it is defined, and their number."""
        values = [getattr(c, name) for c in self.per_class.values()]
        values = [v for v in values if not math.isnan(v)]
        return (float(np.mean(values)) if values else math.nan), len(values)

    @staticmethod
    def concat(parts: Sequence[MetricResult]) -> MetricResult:
        """One result from the results of disjoint clip sets (in order), same classes."""
        classes = parts[0].classes
        if any(p.classes != classes for p in parts):
            raise SedContractError("standard scores of different class lists cannot be joined")
        ties = None if any(p.ties is None for p in parts) else \
            np.concatenate([p.ties for p in parts])
        return MetricResult(tuple(c for p in parts for c in p.clips), classes,
                            *(np.concatenate([getattr(p, k) for p in parts])
                              for k in ("tp", "ref", "sys", "subs")), ties=ties)


def _clip_extent_us(ref: EventList, pred: EventList, clips: Sequence[str],
                    durations: Mapping[str, float] | None) -> np.ndarray:
    """Each clip's length in µs: its duration, else the latest offset of either side."""
    if durations is not None:
        missing = [c for c in clips if c not in durations]
        if missing:
            raise TraceFormatError(f"no duration for clip {missing[0]!r}")
        return to_us(np.array([durations[c] for c in clips], dtype=np.float64))
    index = {c: i for i, c in enumerate(clips)}
    extent = np.zeros(len(clips), dtype=np.int64)
    for events in (ref, pred):
        rows = np.array([index[c] for c in events.clip], dtype=np.int64)
        np.maximum.at(extent, rows, to_us(events.offset))
    return extent


def _rows(events: EventList, clips: Sequence[str], classes: Sequence[str]) -> np.ndarray:
    """Row ``clip · C + class`` of every event; a label outside ``classes`` is an error."""
    clip_index = {c: i for i, c in enumerate(clips)}
    class_index = {c: k for k, c in enumerate(classes)}
    try:
        label = index_of(events.label, class_index)
    except KeyError:
        i = next(i for i, lab in enumerate(events.label) if lab not in class_index)
        raise TraceFormatError(f"label {events.label[i]!r} is not one of the scored classes "
                               f"{', '.join(classes)}", **events.where(i),
                               column="event_label") from None
    return index_of(events.clip, clip_index) * len(classes) + label


def _overlap(a: Intervals, b: Intervals) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of overlapping intervals (same row) and the length each pair shares."""
    ia, ib = expand_ranges(*overlap_ranges(a, b))
    shared = np.minimum(a.end[ia], b.end[ib]) - np.maximum(a.start[ia], b.start[ib])
    return ia, ib, shared


def _count(rows: np.ndarray, weights: np.ndarray | None, n: int) -> np.ndarray:
    """Sums of ``weights`` (counts when None) per row ``0 … n−1``."""
    return np.bincount(rows, weights=weights, minlength=n)[:n]


def segment_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                    time_resolution: float = 1.0,
                    durations: Mapping[str, float] | None = None) -> MetricResult:
    """Segment-based F1 / error rate: a class is active in a segment its events touch.

    Computed on segment ranges (one per event), never on an array of segments, so a long clip
    costs what its events cost."""
    res = int(to_us(time_resolution))
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    n_seg = -(-_clip_extent_us(ref, pred, clips, durations) // res)
    per = len(classes)
    active = {}
    for side, events in (("ref", ref), ("pred", pred)):
        rows = _rows(events, clips, classes)
        limit = n_seg[rows // per] if per else np.zeros(0, dtype=np.int64)
        first = np.minimum(to_us(events.onset) // res, limit)
        end = np.minimum(-(-to_us(events.offset) // res), limit)
        active[side] = Intervals.merged(rows, first, end)
    a, s = active["ref"], active["pred"]
    ia, ib, shared = _overlap(a, s)
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
    order = np.lexsort((position, clip))
    clip, position, level = clip[order], position[order], np.cumsum(steps[order], axis=0)
    width = np.zeros(len(position), dtype=np.int64)
    same = clip[1:] == clip[:-1]
    width[:-1] = np.where(same, position[1:] - position[:-1], 0)
    r, y, t = level[:, 0], level[:, 1], level[:, 2]
    # S per segment is min(r, y) − t; then fn = ref − tp − S sums max(0, r − y) (deletions)
    # and fp sums max(0, y − r) (insertions): the pooled error rate is DCASE's S + D + I
    subs = _count(clip, width * (np.minimum(r, y) - t), len(clips))
    return MetricResult.of_rows(clips, classes, _count(a.row[ia], shared, n_rows),
                                _count(a.row, a.end - a.start, n_rows),
                                _count(s.row, s.end - s.start, n_rows), subs)


def _greedy_in_rows(refs: np.ndarray, preds: np.ndarray, r_row: np.ndarray,
                    p_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy matching of pairs that join only events of one row (clip, or clip and class):
    numbered row by row, each row keeps its order, and candidates of one row that other rows'
    events interleave in storage become contiguous, so the sweep applies where it can."""
    r_order = np.argsort(r_row, kind="stable")
    p_order = np.argsort(p_row, kind="stable")
    r_rank, p_rank = np.empty_like(r_order), np.empty_like(p_order)
    r_rank[r_order] = np.arange(len(r_order))
    p_rank[p_order] = np.arange(len(p_order))
    a, b = r_rank[refs], p_rank[preds]
    by_pair = np.lexsort((b, a))
    hit_r, hit_p = greedy(a[by_pair], b[by_pair])
    return r_order[hit_r], p_order[hit_p]


def _collar_pairs(ref: EventList, pred: EventList, r_clip: np.ndarray, p_clip: np.ndarray, *,
                  t_collar: float, percentage_of_length: float, evaluate_onset: bool,
                  evaluate_offset: bool, time_comparison: str = "sed_scores_eval"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ref, pred) index pairs in the same clip meeting the onset/offset conditions (labels
    not compared), ordered by ref then pred; found for all clips at once by sorted search in a
    window around each reference boundary (1 µs wider than the collar), never over a cross
    product. ``time_comparison``: ``sed_scores_eval`` compares whole microseconds (its times
    rounded to 6 decimals), ``sed_eval`` subtracts float64 seconds as sed_eval does; the
    third value counts, per clip, the candidate pairs the two rules decide differently."""
    collar = int(to_us(t_collar))
    r_off, p_off = to_us(ref.offset), to_us(pred.offset)
    tolerance = np.maximum(collar, to_us(percentage_of_length * (ref.offset - ref.onset)))
    if evaluate_onset:
        key, centre, radius = to_us(pred.onset), to_us(ref.onset), collar
    else:  # only offsets are compared
        key, centre, radius = p_off, r_off, tolerance
    low, high = centre - radius - 1, centre + radius + 1  # the float rule's ties are inside
    row_key = row_keys(np.concatenate([p_clip, r_clip]), key, low, high)
    by_clip = row_key(p_clip, key)
    order = np.argsort(by_clip, kind="stable")
    lo = np.searchsorted(by_clip[order], row_key(r_clip, low), side="left")
    hi = np.searchsorted(by_clip[order], row_key(r_clip, high), side="right")
    crowded = np.bincount(r_clip, weights=hi - lo)
    if len(crowded) and crowded.max() > MAX_PAIRS:
        clip = ref.clip[np.flatnonzero(r_clip == np.argmax(crowded))[0]]
        raise SedContractError(f"clip {clip!r}: {int(crowded.max())} reference/prediction "
                               f"pairs lie within the collar, more than the limit of "
                               f"{MAX_PAIRS}; the events of this clip crowd together (are they "
                               "duplicated?)")
    refs, k = expand_ranges(lo, hi)
    preds = order[k]
    decided = {rule: collar_conditions(ref, pred, refs, preds, t_collar=t_collar,
                                       percentage_of_length=percentage_of_length,
                                       evaluate_onset=evaluate_onset,
                                       evaluate_offset=evaluate_offset, time_comparison=rule)
               for rule in TIME_COMPARISONS}
    ok = decided[time_comparison]
    apart = decided["sed_eval"] != decided["sed_scores_eval"]
    ties = np.bincount(r_clip[refs[apart]], minlength=int(max(r_clip.max(initial=-1),
                                                              p_clip.max(initial=-1))) + 1)
    refs, preds = refs[ok], preds[ok]
    by_pair = np.lexsort((preds, refs))
    return refs[by_pair], preds[by_pair], ties


def collar_conditions(ref: EventList, pred: EventList, refs: np.ndarray, preds: np.ndarray, *,
                      t_collar: float, percentage_of_length: float, evaluate_onset: bool,
                      evaluate_offset: bool, time_comparison: str) -> np.ndarray:
    """Whether each (ref, pred) pair meets the onset and offset collars under the rule."""
    ok = np.ones(len(refs), dtype=bool)
    if time_comparison == "sed_eval":  # float64 seconds, as sed_eval's event-based metrics
        if evaluate_onset:
            ok &= np.abs(ref.onset[refs] - pred.onset[preds]) <= t_collar
        if evaluate_offset:
            length = ref.offset[refs] - ref.onset[refs]
            ok &= np.abs(ref.offset[refs] - pred.offset[preds]) <= np.maximum(
                t_collar, percentage_of_length * length)
        return ok
    collar = int(to_us(t_collar))
    if evaluate_onset:
        ok &= np.abs(to_us(ref.onset)[refs] - to_us(pred.onset)[preds]) <= collar
    if evaluate_offset:
        tolerance = np.maximum(collar, to_us(percentage_of_length
                                             * (ref.offset[refs] - ref.onset[refs])))
        ok &= np.abs(to_us(ref.offset)[refs] - to_us(pred.offset)[preds]) <= tolerance
    return ok


def event_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                  t_collar: float = 0.2, percentage_of_length: float = 0.2,
                  evaluate_onset: bool = True, evaluate_offset: bool = True,
                  matching: str = "optimal", time_comparison: str = "sed_scores_eval"
                  ) -> MetricResult:
    """Collar event-based F1 / error rate (label, onset and offset conditions), sed_eval's
    semantics: matched pairs are true positives; leftover references and predictions that meet
    the time conditions with another label are substitutions. Matching is the guard vector's
    matcher (``optimal`` = exact maximum cardinality, ``greedy`` = references in order, each
    taking the first free prediction in stored order).

    Pairs never cross clips, so one matching of the whole corpus is the union of the clips'
    matchings: all clips are scored at once, with no loop over clips."""
    if matching not in EVENT_MATCHINGS:
        raise SedContractError(f"unknown event matching {matching!r}; choose optimal or "
                               "greedy")
    method = "exact" if matching == "optimal" else "greedy"
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    per, n_rows = len(classes), len(clips) * len(classes)
    r_row, p_row = _rows(ref, clips, classes), _rows(pred, clips, classes)
    r_clip, p_clip = r_row // max(per, 1), p_row // max(per, 1)
    if evaluate_onset or evaluate_offset:
        refs, preds, ties = _collar_pairs(ref, pred, r_clip, p_clip, t_collar=t_collar,
                                    percentage_of_length=percentage_of_length,
                                    evaluate_onset=evaluate_onset,
                                    evaluate_offset=evaluate_offset,
                                    time_comparison=time_comparison)
        same = r_row[refs] == p_row[preds]
        if method == "greedy":
            hit_r, hit_p = _greedy_in_rows(refs[same], preds[same], r_row, p_row)
        else:
            hit_r, hit_p = exact(refs[same], preds[same], len(ref), len(pred))
        ref_left = np.ones(len(ref), dtype=bool)
        ref_left[hit_r] = False
        pred_free = np.ones(len(pred), dtype=bool)
        pred_free[hit_p] = False
        keep = ref_left[refs] & pred_free[preds]  # leftovers, first free prediction in order
        sub_r, _ = _greedy_in_rows(refs[keep], preds[keep], r_clip, p_clip)
        tp, subs = _count(r_row[hit_r], None, n_rows), _count(r_clip[sub_r], None, len(clips))
    else:  # no time condition: every pair of a clip and class hits, so counts alone decide
        ties = np.zeros(len(clips), dtype=np.int64)
        n_r, n_p = _count(r_row, None, n_rows), _count(p_row, None, n_rows)
        tp = np.minimum(n_r, n_p)
        subs = np.minimum((n_r - tp).reshape(len(clips), per).sum(axis=1),
                          (n_p - tp).reshape(len(clips), per).sum(axis=1))
    counted = MetricResult.of_rows(clips, classes, tp, _count(r_row, None, n_rows),
                                   _count(p_row, None, n_rows), subs)
    whole = np.zeros(len(clips), dtype=np.int64)
    whole[:len(ties)] = ties[:len(clips)]
    return replace(counted, ties=whole)


def frame_metrics(traces: TraceSet) -> MetricResult:
    """Frame-based F1 on the contract grid (the same projection the guard vector uses),
    counted on the runs."""
    ref, pred = traces.runs["ref"], traces.runs["pred"]
    n_rows = traces.rows("typed")
    ia, _, shared = _overlap(ref, pred)
    return MetricResult.of_rows(traces.clips, traces.classes, _count(ref.row[ia], shared, n_rows),
                                _count(ref.row, ref.end - ref.start, n_rows),
                                _count(pred.row, pred.end - pred.start, n_rows))


def _boundaries(runs: Intervals, lengths: np.ndarray, kind: str,
                edges: str) -> tuple[np.ndarray, np.ndarray]:
    """``(row, frame)`` of every onset (a run's first frame) or offset (the first frame after
    it) under the clip-edge policy: ``open`` drops those at the clip edges, ``closed`` keeps
    onsets at frame 0 and puts an offset at the clip end on the clip's last frame."""
    length = lengths[runs.row]
    if kind == "onset":
        keep = (runs.start > 0) | (edges == "closed")
        return runs.row[keep], runs.start[keep]
    position = np.where(runs.end >= length, length - 1, runs.end)
    keep = (runs.end < length) | (edges == "closed")
    return runs.row[keep], position[keep]


def boundary_metrics(traces: TraceSet, *, frames: int, kind: str = "onset",
                     edges: str = "open") -> MetricResult:
    """Boundary F1: reference onsets (or offsets) detected by a predicted one of the same class
    within ``frames`` frames, one to one, on the contract grid (the guard vector's grid and
    clip-edge policy)."""
    lengths = traces.row_lengths("typed")
    r_row, r_pos = _boundaries(traces.runs["ref"], lengths, kind, edges)
    p_row, p_pos = _boundaries(traces.runs["pred"], lengths, kind, edges)
    # rows are sorted and positions sorted within a row, so each reference's predictions in
    # reach are one range and the ranges move forward: earliest-first (the sweep) is optimal
    key = row_keys(np.concatenate([p_row, r_row]), p_pos, r_pos - frames, r_pos + frames)
    placed = key(p_row, p_pos)
    lo = np.searchsorted(placed, key(r_row, r_pos - frames), side="left")
    hi = np.searchsorted(placed, key(r_row, r_pos + frames), side="right")
    hit, _ = sweep(np.arange(len(r_row), dtype=np.int64), lo, hi)
    n_rows = traces.rows("typed")
    return MetricResult.of_rows(traces.clips, traces.classes, _count(r_row[hit], None, n_rows),
                                _count(r_row, None, n_rows), _count(p_row, None, n_rows))


SCORE_NAMES: tuple[str, ...] = ("frame", "segment", "event", "intersection", "onset_boundary",
                               "offset_boundary")  # the keys of standard_scores, in order


def standard_scores(ref: EventList, pred: EventList, traces: TraceSet,
                    settings: ScoreSettings, *,
                    durations: Mapping[str, float] | None = None,
                    edges: str = "open",
                    given: tuple[EventList, EventList] | None = None
                    ) -> dict[str, MetricResult]:
    """Frame, segment, collar-event, intersection and boundary scores of one system on the
    same traces. Under ``time_comparison="sed_eval"`` the segment and collar-event scores are
    sed_eval's: on the events as ``given`` (before any cut at a clip's end) and, for segments,
    without durations (sed_eval reads none: each file's segments run to its latest event)."""
    classes = list(traces.classes)
    seg_ref, seg_pred, seg_durations = ref, pred, durations
    if settings.time_comparison == "sed_eval":
        if given is not None:
            ref, pred = given
        seg_ref, seg_pred, seg_durations = ref, pred, None
    return {
        "frame": frame_metrics(traces),
        "segment": segment_metrics(seg_ref, seg_pred, classes=classes,
                                   time_resolution=settings.segment, durations=seg_durations),
        "event": event_metrics(ref, pred, classes=classes, t_collar=settings.t_collar,
                               percentage_of_length=settings.percentage_of_length,
                               evaluate_onset=settings.evaluate_onset,
                               evaluate_offset=settings.evaluate_offset,
                               matching=settings.matching,
                               time_comparison=settings.time_comparison),
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
    rounded to ``time_decimals`` as in sed_scores_eval (times in integer µs, as everywhere
    here). ``Counts.sys`` is ``tp + fp`` here, so
    precision = tp / (tp + fp). Overlapping same-class events are first merged on both sides
    (a detection is activity, not a count), and a zero-length reference cannot be covered.
    Only overlapping pairs are visited (merged events of a class are disjoint).
    """
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    r, p = (Intervals.merged(_rows(e, clips, classes), to_us(e.onset), to_us(e.offset),
                             keep_empty=True) for e in (ref, pred))
    ip, ir, shared = _overlap(p, r)
    n_rows = len(clips) * len(classes)
    p_len, r_len = p.end - p.start, r.end - r.start

    def seconds(us: np.ndarray) -> np.ndarray:  # µs sums are exact; compared as sed_scores_eval
        return np.round(us / US_PER_SECOND, time_decimals)

    relevant = (seconds(np.bincount(ip, weights=shared, minlength=len(p)))
                >= seconds(dtc_threshold * p_len)) & (p_len > 0)
    covered = seconds(np.bincount(ir, weights=shared * relevant[ip], minlength=len(r)))
    hit = (covered >= seconds(gtc_threshold * r_len)) & (r_len > 0)
    false = (p_len > 0) & ~relevant
    tp = _count(r.row[hit], None, n_rows)
    return MetricResult.of_rows(clips, classes, tp, _count(r.row, None, n_rows),
                                tp + _count(p.row[false], None, n_rows))
