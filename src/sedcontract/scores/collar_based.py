"""Collar-based event F1 / error rate (sed_eval's ``EventBasedMetrics``, sed_scores_eval's
``collar_based``): onset and offset within a collar, one-to-one matching."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from sedcontract.contracts.matching import exact, greedy
from sedcontract.contracts.policy import EVENT_MATCHINGS, TIME_COMPARISONS
from sedcontract.errors import SedContractError
from sedcontract.numbers import number_in
from sedcontract.scores.counts import MetricResult, by_row, event_rows, row_sums
from sedcontract.scores.fscores import Thresholds, fscore_dicts, microseconds, system_output
from sedcontract.traces import EventList
from sedcontract.traces.given import events_of
from sedcontract.traces.grid import MAX_SECONDS, to_us
from sedcontract.traces.intervals import MAX_PAIRS, expand_ranges, row_keys


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
    by_pair = by_row(a, b)
    hit_r, hit_p = greedy(a[by_pair], b[by_pair])
    return r_order[hit_r], p_order[hit_p]


# within this many microseconds of a collar the two time rules may decide a pair apart (each
# time rounds to 0.5 µs, and below MAX_SECONDS float seconds err by under 0.2 µs): beyond
# it they agree, so the float rule is asked only there
NEAR_US = 3


def _collar_pairs(ref: EventList, pred: EventList, r_clip: np.ndarray, p_clip: np.ndarray, *,
                  t_collar: float, percentage_of_length: float, evaluate_onset: bool,
                  evaluate_offset: bool, time_comparison: str = "sed_scores_eval",
                  offset_collar: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ref, pred) index pairs in the same clip meeting the onset/offset conditions (labels
    not compared), ordered by ref then pred; found for all clips at once by sorted search in a
    window around each reference boundary (1 µs wider than the collar), never over a cross
    product. ``time_comparison``: ``sed_scores_eval`` compares whole microseconds (its times
    rounded to 6 decimals), ``sed_eval`` subtracts float64 seconds as sed_eval does; the
    third value counts, per clip, the candidate pairs the two rules decide differently;
    ``offset_collar`` (default ``t_collar``) is the offset's least tolerance."""
    times = {rule: collar_times(ref, pred, rule, t_collar=t_collar,
                                percentage_of_length=percentage_of_length,
                                offset_collar=offset_collar) for rule in TIME_COMPARISONS}
    collar, r_on, p_on, r_off, p_off, tolerance = times["sed_scores_eval"]
    if evaluate_onset:
        key, centre, radius = p_on, r_on, collar
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
    decided, near = collar_conditions(times["sed_scores_eval"], refs, preds,
                                      evaluate_onset=evaluate_onset,
                                      evaluate_offset=evaluate_offset, near=NEAR_US)
    # the float rule can decide otherwise only near a limit: asked there alone
    floats = decided.copy()
    floats[near] = collar_conditions(times["sed_eval"], refs[near], preds[near],
                                     evaluate_onset=evaluate_onset,
                                     evaluate_offset=evaluate_offset)[0]
    ok = floats if time_comparison == "sed_eval" else decided
    apart = floats != decided
    ties = np.bincount(r_clip[refs[apart]], minlength=int(max(r_clip.max(initial=-1),
                                                              p_clip.max(initial=-1))) + 1)
    refs, preds = refs[ok], preds[ok]
    by_pair = by_row(refs, preds)
    return refs[by_pair], preds[by_pair], ties


CollarTimes = tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def collar_times(ref: EventList, pred: EventList, time_comparison: str, *, t_collar: float,
                 percentage_of_length: float, offset_collar: float | None = None
                 ) -> CollarTimes:
    """The onset collar, the onsets and offsets of both sides and each reference's offset
    tolerance (``offset_collar``, default ``t_collar``, or its share of the reference's
    length) as the rule compares them: float64 seconds (``sed_eval``, as sed_eval's
    event-based metrics) or whole microseconds. Made once per event, read once per pair."""
    off_collar = t_collar if offset_collar is None else offset_collar
    length = ref.offset - ref.onset
    if time_comparison == "sed_eval":
        return (t_collar, ref.onset, pred.onset, ref.offset, pred.offset,
                np.maximum(off_collar, percentage_of_length * length))
    return (int(to_us(t_collar)), to_us(ref.onset), to_us(pred.onset), to_us(ref.offset),
            to_us(pred.offset), np.maximum(int(to_us(off_collar)),
                                           to_us(percentage_of_length * length)))


def collar_conditions(times: CollarTimes, refs: np.ndarray, preds: np.ndarray, *,
                      evaluate_onset: bool, evaluate_offset: bool, near: float = 0
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Whether each (ref, pred) pair meets the onset and offset collars, on the times of one
    rule (:func:`collar_times`); and whether a difference lies within ``near`` of its limit."""
    collar, r_on, p_on, r_off, p_off, tolerance = times
    ok = np.ones(len(refs), dtype=bool)
    close = np.zeros(len(refs), dtype=bool)
    if evaluate_onset:
        apart = np.abs(r_on[refs] - p_on[preds]) - collar
        ok &= apart <= 0
        close |= np.abs(apart) <= near
    if evaluate_offset:
        apart = np.abs(r_off[refs] - p_off[preds]) - tolerance[refs]
        ok &= apart <= 0
        close |= np.abs(apart) <= near
    return ok, close


def event_metrics(ref: EventList, pred: EventList, *, classes: Sequence[str],
                  t_collar: float = 0.2, percentage_of_length: float = 0.2,
                  evaluate_onset: bool = True, evaluate_offset: bool = True,
                  matching: str = "optimal", time_comparison: str = "sed_scores_eval",
                  offset_collar: float | None = None) -> MetricResult:
    """Collar event-based F1 / error rate (label, onset and offset conditions), sed_eval's
    semantics: matched pairs are true positives; leftover references and predictions that meet
    the time conditions with another label are substitutions. Matching is the guard vector's
    matcher (``optimal`` = exact maximum cardinality, ``greedy`` = references in order, each
    taking the first free prediction in stored order). ``offset_collar`` (default
    ``t_collar``): the offset's least tolerance, when it differs from the onset's collar.

    Pairs never cross clips, so one matching of the whole corpus is the union of the clips'
    matchings: all clips are scored at once, with no loop over clips."""
    if matching not in EVENT_MATCHINGS:
        raise SedContractError(f"unknown event matching {matching!r}; choose optimal or "
                               "greedy")
    method = "exact" if matching == "optimal" else "greedy"
    clips = list(dict.fromkeys([*ref.clips, *pred.clips]))
    per, n_rows = len(classes), len(clips) * len(classes)
    r_row, p_row = event_rows(ref, clips, classes), event_rows(pred, clips, classes)
    r_clip, p_clip = r_row // max(per, 1), p_row // max(per, 1)
    if evaluate_onset or evaluate_offset:
        refs, preds, ties = _collar_pairs(ref, pred, r_clip, p_clip, t_collar=t_collar,
                                    percentage_of_length=percentage_of_length,
                                    evaluate_onset=evaluate_onset,
                                    evaluate_offset=evaluate_offset,
                                    time_comparison=time_comparison,
                                    offset_collar=offset_collar)
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
        tp, subs = row_sums(r_row[hit_r], None, n_rows), row_sums(r_clip[sub_r], None, len(clips))
    else:  # no time condition: every pair of a clip and class hits, so counts alone decide
        ties = np.zeros(len(clips), dtype=np.int64)
        n_r, n_p = row_sums(r_row, None, n_rows), row_sums(p_row, None, n_rows)
        tp = np.minimum(n_r, n_p)
        subs = np.minimum((n_r - tp).reshape(len(clips), per).sum(axis=1),
                          (n_p - tp).reshape(len(clips), per).sum(axis=1))
    counted = MetricResult.of_rows(clips, classes, tp, row_sums(r_row, None, n_rows),
                                   row_sums(p_row, None, n_rows), subs)
    whole = np.zeros(len(clips), dtype=np.int64)
    whole[:len(ties)] = ties[:len(clips)]
    return replace(counted, ties=whole)


def fscore(scores: Any, ground_truth: Any, threshold: Thresholds | None = None, *,
           onset_collar: float, offset_collar: float, offset_collar_rate: float = 0.0,
           classes: Sequence[str] | None = None, time_decimals: int = 6, num_jobs: int = 1,
           matching: str = "optimal", time_comparison: str = "sed_scores_eval"
           ) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict[str, Any]]:
    """Collar-based ``f, p, r, stats`` per class, ``macro_average`` and ``micro_average``,
    as sed_scores_eval's ``collar_based.fscore`` names them: score tables (a folder, or clip
    → DataFrame) at ``threshold`` (one, or class → threshold), or detections as they are
    (threshold None), against ``ground_truth`` (clip → [(onset, offset, label)], an event
    file or list, a DataFrame). An onset within ``onset_collar`` s, an offset within
    ``max(offset_collar, offset_collar_rate · length)`` s: keywords and defaults as
    sed_scores_eval's (DCASE: 0.2, 0.2, 0.2), ``time_decimals`` its default only (times are
    whole microseconds), ``num_jobs`` processes. See :mod:`sedcontract.scores.fscores` for
    the one declared deviation."""
    onset_collar, offset_collar = (number_in(name, value, 0.0, MAX_SECONDS) for name, value in
                                   (("onset_collar", onset_collar),
                                    ("offset_collar", offset_collar)))
    offset_collar_rate = number_in("offset_collar_rate", offset_collar_rate, 0.0)
    microseconds(time_decimals)
    truth = events_of(ground_truth, "ground truth")
    detections, names = system_output(scores, threshold, truth, classes, num_jobs=num_jobs)
    return fscore_dicts(event_metrics(
        truth, detections, classes=names, t_collar=onset_collar, offset_collar=offset_collar,
        percentage_of_length=offset_collar_rate, matching=matching,
        time_comparison=time_comparison))
