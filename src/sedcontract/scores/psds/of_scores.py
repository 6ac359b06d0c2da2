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
from sedcontract.scores.psds.floors import false_needed, floors_of, free_tops, highest, masked
from sedcontract.scores.psds.roc import staircase_area, staircase_at
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable, audio_seconds
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.grid import SECONDS_PER_HOUR, to_us
from sedcontract.traces.intervals import distinct, expand_ranges
from sedcontract.traces.overrun import cut_at_durations
from sedcontract.traces.score_files import ScoreTable, bad_scores, check_tiling, cut_table

BATCH_SEGMENTS = 100_000  # score segments (runs of equal scores) processed as one batch
JOIN_ROWS = 1_000_000     # counts kept apart before they are joined (whole sums at a score)


@dataclass(frozen=True)
class ScoreChanges:
    """One scenario's counts as changes when the threshold falls to a score, class by class
    (rows ``ptr[c]:ptr[c+1]`` are class ``c``'s, sorted by score): true and false positives,
    and cross-triggers against another class (``ct_ptr``, sorted by other class, then
    score)."""

    ptr: np.ndarray
    score: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    ct_ptr: np.ndarray
    ct_score: np.ndarray
    ct_other: np.ndarray
    ct: np.ndarray

    @classmethod
    def of(cls, n_classes: int, label: np.ndarray, score: np.ndarray, tp: np.ndarray,
           fp: np.ndarray, ct_label: np.ndarray, ct_score: np.ndarray, ct_other: np.ndarray,
           ct: np.ndarray) -> ScoreChanges:
        """Changes summed per (class, score) and per (class, other class, score); the ones
        that sum to zero left out."""
        live = (tp != 0) | (fp != 0)
        label, score, tp, fp = label[live], score[live], tp[live], fp[live]
        order = _by_class(label, score, n_classes)
        keys, sums = _summed((label[order], score[order]), (tp[order], fp[order]))
        keep = (sums[0] != 0) | (sums[1] != 0)
        label_k, score_k = keys[0][keep], keys[1][keep]
        order = _by_class(ct_label, ct_score, n_classes, ct_other)
        ct_keys, (ct_sum,) = _summed((ct_label[order], ct_other[order], ct_score[order]),
                                     (ct[order],))
        ct_keep = ct_sum != 0
        classes = np.arange(n_classes + 1)
        return cls(np.searchsorted(label_k, classes), score_k, sums[0][keep].astype(np.int32),
                   sums[1][keep].astype(np.int32),
                   np.searchsorted(ct_keys[0][ct_keep], classes), ct_keys[2][ct_keep],
                   ct_keys[1][ct_keep].astype(np.int32), ct_sum[ct_keep].astype(np.int32))

    @classmethod
    def join(cls, parts: Sequence[ScoreChanges]) -> ScoreChanges:
        """The counts of several blocks as one: the same whatever the blocks were."""
        if len(parts) == 1:
            return parts[0]
        n = len(parts[0].ptr) - 1

        def labels(name: str) -> np.ndarray:
            return np.concatenate([np.repeat(np.arange(n), np.diff(getattr(p, name)))
                                   for p in parts])

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts])

        return cls.of(n, labels("ptr"), joined("score"), joined("tp"), joined("fp"),
                      labels("ct_ptr"), joined("ct_score"), joined("ct_other"), joined("ct"))

    @property
    def rows(self) -> int:
        """How many changes are kept (the memory these counts take, 16 bytes each)."""
        return len(self.score) + len(self.ct_score)

    def of_class(self, c: int) -> tuple[np.ndarray, ...]:
        """Class ``c``'s rows: score, tp, fp, then cross-trigger score, other class, count."""
        a, b = self.ptr[c], self.ptr[c + 1]
        x, y = self.ct_ptr[c], self.ct_ptr[c + 1]
        return (self.score[a:b], self.tp[a:b], self.fp[a:b], self.ct_score[x:y],
                self.ct_other[x:y], self.ct[x:y])


def _by_class(label: np.ndarray, score: np.ndarray, n_classes: int,
              other: np.ndarray | None = None) -> np.ndarray:
    """The order of rows by class (then ``other`` class), then score; ties in any order, as
    only whole numbers are summed over them. A quick sort of the scores, then stable (radix)
    sorts of the class numbers."""
    order = np.argsort(score)
    small = np.int16 if n_classes < 2 ** 15 else np.int64
    for key in (other, label):
        if key is not None:
            order = order[np.argsort(key[order].astype(small), kind="stable")]
    return order


def _summed(keys: tuple[np.ndarray, ...], values: tuple[np.ndarray, ...]
            ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Values of rows sorted by ``keys`` summed over each run of equal keys (whole numbers:
    the sums do not depend on how the rows were cut or ordered within a run)."""
    n = len(keys[0])
    if n == 0:
        return tuple(k[:0] for k in keys), tuple(v[:0].astype(np.int64) for v in values)
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for k in keys:
        new[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(new)
    return (tuple(k[starts] for k in keys),
            tuple(np.add.reduceat(v.astype(np.int64), starts) for v in values))


# ---- the run tree of score columns ----

@dataclass(frozen=True)
class _Runs:
    """Every run of every score column of a batch of clips, with when it lives: from the
    threshold ``birth`` down to (not including) ``death`` (none when ``dies`` is false)."""

    col: np.ndarray        # clip-in-batch · classes + class
    start: np.ndarray      # seconds, as the score table gives them
    end: np.ndarray
    start_us: np.ndarray
    end_us: np.ndarray
    birth: np.ndarray
    death: np.ndarray
    dies: np.ndarray
    parent: np.ndarray     # the run that replaces it (at its death), −1 for none
    top: np.ndarray        # the highest score of each column (clip-in-batch · classes + class)


def _segments(tables: Sequence[ScoreTable], n_classes: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run-length segments of every column: column, score, start and end time (seconds), each
    column's segments together and in time order; and each column's highest score."""
    cols, values, starts, ends = [], [], [], []
    top = np.full(len(tables) * n_classes, -np.inf)
    for b, table in enumerate(tables):
        s = table.scores
        n = s.shape[0]
        if n == 0:
            continue
        moving = np.flatnonzero((s[1:] != s[:-1]).any(axis=0))
        still = np.ones(n_classes, dtype=bool)
        still[moving] = False
        still = np.flatnonzero(still)  # one segment each
        head = np.empty((len(moving), n), dtype=bool)
        head[:, 0] = True
        sub = s[:, moving].T
        np.not_equal(sub[:, 1:], sub[:, :-1], out=head[:, 1:])
        k, t = np.nonzero(head)
        stop = np.empty_like(t)
        stop[:-1] = t[1:]
        last = np.ones(len(k), dtype=bool)
        last[:-1] = k[1:] != k[:-1]
        stop[last] = n
        j = np.concatenate([still, moving[k]])
        t = np.concatenate([np.zeros(len(still), dtype=t.dtype), t])
        stop = np.concatenate([np.full(len(still), n, dtype=t.dtype), stop])
        cols.append(b * n_classes + j)
        values.append(s[t, j])
        starts.append(table.onset[t])
        ends.append(table.offset[stop - 1])
        top[b * n_classes:(b + 1) * n_classes] = s.max(axis=0)
    if not cols:
        empty = np.zeros(0)
        return np.zeros(0, dtype=np.int64), empty, empty, empty, top
    return (np.concatenate(cols), np.concatenate(values), np.concatenate(starts),
            np.concatenate(ends), top)


def _nearest(value: np.ndarray, bound: np.ndarray, step: int, strict: bool) -> np.ndarray:
    """For each segment, the index of the nearest one in its column (towards ``step``, −1 or
    +1, up to ``bound``) whose score is below it (``strict``) or at most it; ``bound − step``
    when there is none. Binary lifting over windowed minima: a pass per power of two."""
    n = len(value)
    idx = np.arange(n)
    reach = int(np.max(np.abs(idx - bound))) + 1 if n else 1
    levels = max(1, int(reach).bit_length())
    minima = [value]
    for p in range(1, levels):
        w = 1 << (p - 1)
        prev = minima[-1]
        shifted = np.full(n, np.inf)
        if step < 0:
            shifted[w:] = prev[:-w] if w < n else shifted[w:]
        else:
            shifted[:-w] = prev[w:] if w < n else shifted[:-w]
        minima.append(np.minimum(prev, shifted))
    cur = idx + step
    for p in reversed(range(levels)):
        w = 1 << p
        far = cur + step * (w - 1)  # the window's far end
        ok = far >= bound if step < 0 else far <= bound
        m = minima[p][np.clip(cur, 0, n - 1)] if n else value
        ok &= (m >= value) if strict else (m > value)
        cur = np.where(ok, cur + step * w, cur)
    return cur


def _runs(tables: Sequence[ScoreTable], n_classes: int) -> _Runs:
    """The run tree of every column of ``tables``: one run per segment that is the leftmost
    of its score in its run."""
    col, value, start, end, top = _segments(tables, n_classes)
    idx = np.arange(len(col))
    new = np.ones(len(col), dtype=bool)
    new[1:] = col[1:] != col[:-1]
    lo = np.maximum.accumulate(np.where(new, idx, 0))
    end_of = np.ones(len(col), dtype=bool)
    end_of[:-1] = new[1:]
    hi = np.minimum.accumulate(np.where(end_of, idx, len(col))[::-1])[::-1]
    left = _nearest(value, lo, -1, strict=True)
    right = _nearest(value, hi, +1, strict=True)
    equal = _nearest(value, lo, -1, strict=False)
    first = (equal < lo) | (value[np.maximum(equal, 0)] < value)
    rep = np.where(first, idx, equal)  # the run's leftmost segment of this score, by jumps
    while True:
        jumped = rep[rep]
        if np.array_equal(jumped, rep):
            break
        rep = jumped
    # a -inf segment is never detected (sed_scores_eval's rule): no run of its own, and a
    # barrier no run grows across
    first &= value > -np.inf
    run_of = np.full(len(col), -1, dtype=np.int64)
    run_of[first] = np.arange(int(first.sum()))
    left, right, lo, hi = left[first], right[first], lo[first], hi[first]
    has_left = (left >= lo) & (value[np.maximum(left, 0)] > -np.inf)
    has_right = (right <= hi) & (value[np.minimum(right, len(value) - 1)] > -np.inf)
    v_left = np.where(has_left, value[np.maximum(left, 0)], -np.inf)
    v_right = np.where(has_right, value[np.minimum(right, len(value) - 1)], -np.inf)
    # replaced by the run around the higher neighbour, born at that neighbour's score
    beside = np.where(v_left >= v_right, np.maximum(left, 0), np.minimum(right, len(col) - 1))
    dies = has_left | has_right
    parent = np.where(dies, run_of[rep[beside]], -1)
    s, e = start[left + 1], end[right - 1]
    return _Runs(col[first], s, e, to_us(s), to_us(e), value[first],
                 np.maximum(v_left, v_right), dies, parent, top)


# ---- counts of one batch ----

def _criterion_us(fraction: float, seconds: np.ndarray) -> np.ndarray:
    """A criterion ``fraction × length`` rounded to 1 µs as sed_scores_eval rounds it, in µs."""
    return np.rint(np.round(fraction * seconds, 6) * 1e6).astype(np.int64)


def _batch_counts(tables: Sequence[ScoreTable], truth: ClipTruth, n_classes: int,
                  settings: Sequence[PsdsSettings], by_clip: bool = False,
                  floor: np.ndarray | None = None) -> list[ScoreChanges]:
    """Each scenario's counts of a batch of clips (``truth`` numbered from 0 like
    ``tables``); ``by_clip``: keyed by (clip in the batch, class) as ``clip · K + class``,
    ``K`` × clips classes in all, so that a bootstrap can weigh each clip's. With ``floor``
    (:mod:`~sedcontract.scores.psds.floors`, the tables masked below it) the changes below
    their class's floor are left out."""
    runs = _runs(tables, n_classes)
    K = n_classes
    n = len(runs.col)
    # each run against the reference events it overlaps: of every class where a scenario
    # counts cross-triggers, of its own class otherwise (rows: clip, or clip and class)
    cross_any = K > 1 and any(chosen.alpha_ct > 0 for chosen in settings)
    g_row = truth.clip if cross_any else truth.clip * K + truth.cls
    r_row = runs.col // K if cross_any else runs.col
    order = np.lexsort((truth.onset, g_row))
    g_row, g_idx = g_row[order], order
    g_on, g_off = to_us(truth.onset), to_us(truth.offset)
    span = int(max(runs.end_us.max(initial=0), g_off.max(initial=0))) + 1
    g_key = g_row * span
    reach = np.maximum.accumulate(g_key + g_off[g_idx]) if len(g_key) else g_key
    lo = np.searchsorted(reach, r_row * span + runs.start_us, side="right")
    hi = np.maximum(np.searchsorted(g_key + g_on[g_idx], r_row * span + runs.end_us,
                                    side="left"), lo)
    r, g = expand_ranges(lo, hi)
    g = g_idx[g]
    inter = np.minimum(runs.end_us[r], g_off[g]) - np.maximum(runs.start_us[r], g_on[g])
    live = inter > 0
    r, g, inter = r[live], g[live], inter[live]
    run_cls = runs.col % K
    same = truth.cls[g] == run_cls[r]
    target_col = truth.clip * K + truth.cls
    has_target = np.zeros(len(tables) * K, dtype=bool)
    has_target[target_col] = True
    length = runs.end - runs.start
    mortal = np.flatnonzero(runs.dies)
    i_target = np.bincount(r[same], weights=inter[same], minlength=n)
    # the classes each clip's reference names (for a cross-trigger criterion that rounds to 0)
    present = distinct(truth.clip * K + truth.cls)
    out = []
    for chosen in settings:
        relevant = i_target >= _criterion_us(chosen.dtc, length)
        cross = chosen.alpha_ct > 0 and K > 1
        if not cross:  # sed_scores_eval counts every detection of a column without reference
            relevant &= has_target[runs.col]  # events as false when it needs no cross-triggers
        fp = (~relevant).astype(np.int64)
        # a run's false positive counts from its birth; at the same score the runs it
        # replaces stop counting
        fp_change = fp - np.bincount(runs.parent[mortal], weights=fp[mortal],
                                     minlength=n).astype(np.int64)
        tp_event, tp_score, tp_change = _true_positives(runs, truth, r, g, inter,
                                                        same & relevant[r], chosen.gtc, K)
        tp_label = truth.cls[tp_event] + (truth.clip[tp_event] * K if by_clip else 0)
        if cross:
            ct = _cross_triggers(runs, truth, r, g, inter, ~same & ~relevant[r],
                                 _criterion_us(chosen.cttc, length), present, K)
        else:
            ct = (np.zeros(0, dtype=np.int64),) * 3 + (np.zeros(0),)
        if not by_clip:
            ct = (ct[0] % K, *ct[1:])
        rows = (np.concatenate([runs.col if by_clip else run_cls, tp_label]),
                np.concatenate([runs.birth, tp_score]),
                np.concatenate([np.zeros(n, dtype=np.int64), tp_change]),
                np.concatenate([fp_change, np.zeros(len(tp_label), dtype=np.int64)]))
        if floor is not None:  # a reference event never found above the floor changes at -inf
            keep = rows[1] >= floor[rows[0] % K]
            rows = tuple(x[keep] for x in rows)
            keep = ct[3] >= floor[ct[0] % K]
            ct = tuple(x[keep] for x in ct)
        out.append(ScoreChanges.of(K * (len(tables) if by_clip else 1), *rows,
                                  ct[0], ct[3], ct[1], ct[2]))
    return out


def _true_positives(runs: _Runs, truth: ClipTruth, r: np.ndarray, g: np.ndarray,
                    inter: np.ndarray, counted: np.ndarray, gtc: float, K: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Changes of the true positives (the event, score, change): a reference event is found
    at a threshold when the relevant detections cover at least ``gtc`` of it (in µs, the
    criterion rounded to 1 µs). Its coverage changes where a relevant run overlapping it is
    born or replaced, and its state is first seen at its column's highest score."""
    rc, gc, ic = r[counted], g[counted], inter[counted]
    dies = runs.dies[rc]
    events = np.arange(len(truth.cls))
    g_all = np.concatenate([gc, gc[dies], events])
    level = np.concatenate([runs.birth[rc], runs.death[rc[dies]],
                            runs.top[truth.clip * K + truth.cls]])
    delta = np.concatenate([ic, -ic[dies], np.zeros(len(events), dtype=np.int64)])
    if len(g_all) == 0:
        return g_all, level, delta
    order = np.lexsort((-level, g_all))
    g_all, level, delta = g_all[order], level[order], delta[order]
    covered = np.cumsum(delta)
    first_of_event = np.searchsorted(g_all, g_all, side="left")
    base = np.where(first_of_event > 0, covered[np.maximum(first_of_event - 1, 0)], 0)
    covered = covered - base
    last = np.ones(len(g_all), dtype=bool)  # the last change at each (event, score)
    last[:-1] = (g_all[1:] != g_all[:-1]) | (level[1:] != level[:-1])
    g_all, level, covered = g_all[last], level[last], covered[last]
    need = _criterion_us(gtc, truth.offset - truth.onset)
    found = (covered >= need[g_all]).astype(np.int64)
    before = np.zeros(len(found), dtype=np.int64)
    before[1:] = found[:-1]
    before[np.r_[True, g_all[1:] != g_all[:-1]]] = 0
    change = found - before
    keep = change != 0
    return g_all[keep], level[keep], change[keep]


def _cross_triggers(runs: _Runs, truth: ClipTruth, r: np.ndarray, g: np.ndarray,
                    inter: np.ndarray, counted: np.ndarray, need: np.ndarray,
                    present: np.ndarray, K: int) -> tuple[np.ndarray, ...]:
    """Changes of the cross-triggers (the run's column, other class, count, score): a
    detection that is not relevant cross-triggers another class when that class's reference
    covers at least ``cttc`` of it. A criterion that rounds to 0 µs counts every class the
    clip's reference names, as sed_scores_eval's ``>=`` does."""
    rc, gc = r[counted], g[counted]
    key = rc * K + truth.cls[gc]
    keys, inverse = np.unique(key, return_inverse=True)
    covered = np.bincount(inverse, weights=inter[counted], minlength=len(keys))
    hit = keys[covered >= need[keys // K]]
    zero = np.flatnonzero(need <= 0)
    if len(zero):
        run_clip = runs.col[zero] // K
        a = np.searchsorted(present, run_clip * K, side="left")
        b = np.searchsorted(present, run_clip * K + K, side="left")
        i, j = expand_ranges(a, b)
        other = present[j] % K
        keep = other != runs.col[zero][i] % K
        hit = np.union1d(hit, zero[i][keep] * K + other[keep])
    run, other = hit // K, hit % K
    label = runs.col[run]
    dies = runs.dies[run]
    return (np.concatenate([label, label[dies]]), np.concatenate([other, other[dies]]),
            np.concatenate([np.ones(len(run), dtype=np.int64),
                            -np.ones(int(dies.sum()), dtype=np.int64)]),
            np.concatenate([runs.birth[run], runs.death[run[dies]]]))


def block_counts(tables: Iterable[ScoreTable], truth: ClipTruth, classes: tuple[str, ...],
                 settings: Sequence[PsdsSettings], *, per_clip: bool = False,
                 floor: np.ndarray | None = None) -> list[list[ScoreChanges]]:
    """Each scenario's counts of consecutive clips (``tables`` in ``truth``'s clip order, read
    one at a time), as a few parts (:class:`Gathered`): a task an executor runs. Clips are
    counted in batches of about :data:`BATCH_SEGMENTS` score segments; with ``per_clip``, each
    batch's counts keyed by clip (:class:`ClipKeyed`, what a bootstrap weighs); with
    ``floor``, only the counts at or above each class's floor."""
    out = [Gathered(joining=not per_clip) for _ in settings]  # per scenario
    batch: list[ScoreTable] = []
    segments = first = 0
    firsts: list[int] = []  # with per_clip, each part's first clip

    def flush() -> None:
        nonlocal first, batch, segments
        stop = first + len(batch)
        for k, counts in enumerate(_batch_counts(batch, truth.block(first, stop),
                                                 len(classes), settings, by_clip=per_clip,
                                                 floor=floor)):
            out[k].add([counts])
        firsts.append(first)
        first, batch, segments = stop, [], 0

    for table in tables:
        clip = truth.clips[first + len(batch)] if first + len(batch) < len(truth.clips) \
            else None
        _check_table(table, clip, classes)
        if floor is not None:
            table = ScoreTable(table.onset, table.offset, table.classes,
                               masked(table.scores, floor), table.lines)
        segments += _segments_of(table.scores)
        batch.append(table)
        if segments >= BATCH_SEGMENTS:
            flush()
    if batch:
        flush()
    if first != len(truth.clips):
        raise SedContractError(f"{first} score tables for {len(truth.clips)} clips")
    if per_clip:
        return [[ClipKeyed(part, a, len(classes)) for part, a in zip(g.parts, firsts,
                                                                      strict=True)]
                for g in out]
    return [g.parts for g in out]


@dataclass(frozen=True)
class ClipKeyed:
    """A batch's counts keyed by (clip, class) as ``clip · K + class`` (clips numbered from
    ``first``): what a bootstrap weighs clip by clip."""

    counts: ScoreChanges
    first: int
    n_classes: int


class Gathered:
    """One scenario's counts as they come, in parts. The parts are joined into one when they
    hold more rows than the last join kept and than :data:`JOIN_ROWS`, as long as joining pays:
    a join that keeps most rows (scores seldom shared across clips) stops it, so that rows are
    joined a few times at most, and counts at a score many clips share are kept once."""

    def __init__(self, joining: bool = True) -> None:
        self.parts: list[ScoreChanges] = []
        self.kept = 0  # rows of the joined first part
        self.joining = joining

    def add(self, more: Sequence[ScoreChanges]) -> None:
        self.parts += more
        rows = sum(p.rows for p in self.parts)
        if self.joining and len(self.parts) > 1 and rows - self.kept > max(self.kept,
                                                                           JOIN_ROWS):
            self.parts = [ScoreChanges.join(self.parts)]
            self.kept = self.parts[0].rows
            self.joining = self.kept < 0.8 * rows


def block_tops(tables: Iterable[ScoreTable], truth: ClipTruth, classes: tuple[str, ...],
               keep: int) -> tuple[np.ndarray, float]:
    """The first read of the tables when floors are sought (:mod:`~.floors`): per class,
    the ``keep`` highest tops of columns without reference events (``keep`` × classes), and
    the shortest frame (a run's least length); each table checked as :func:`block_counts`
    checks it. A task an executor runs."""
    K = len(classes)
    has_reference = np.zeros((len(truth.clips), K), dtype=bool)
    has_reference[truth.clip, truth.cls] = True
    best = np.full((keep, K), -np.inf)
    pending: list[np.ndarray] = []
    shortest = math.inf
    done = 0
    for table in tables:
        _check_table(table, truth.clips[done] if done < len(truth.clips) else None, classes)
        pending.append(free_tops(table.scores, has_reference[done]))
        shortest = min(shortest, float(np.min(table.offset - table.onset)))
        done += 1
        if len(pending) >= max(keep, 256):
            best, pending = highest([best, *pending], keep), []
    if done != len(truth.clips):
        raise SedContractError(f"{done} score tables for {len(truth.clips)} clips")
    return highest([best, *pending], keep), shortest


def _segments_of(scores: np.ndarray) -> int:
    """A table's number of score segments (runs of equal scores over its columns)."""
    return scores.shape[1] + int(np.count_nonzero(scores[1:] != scores[:-1]))


def _check_table(table: ScoreTable, clip: str | None, classes: tuple[str, ...]) -> None:
    """Refuse a table sed_scores_eval could not score (no frames, a NaN score, other columns,
    frames that do not tile time from 0 s)."""
    where = f"the score table of clip {clip!r}"
    if clip is None:
        raise SedContractError("more score tables than clips")
    if tuple(table.classes) != classes:
        raise SedContractError(f"{where} has the columns {', '.join(table.classes)}, not "
                               f"{', '.join(classes)}: every table scores the same classes")
    n = table.scores.shape[0]
    if n == 0:
        raise PsdsUnavailable(f"{where} has no frames: PSDS needs every clip's scores")
    if bad_scores(table.scores).any():  # -inf and +inf are scores (sed_scores_eval's too)
        raise SedContractError(f"{where} holds a score that is NaN or beyond ±1e9")
    lines = table.lines if table.lines is not None else np.arange(n) + 2
    check_tiling(np.asarray(table.onset, dtype=float), np.asarray(table.offset, dtype=float),
                 np.asarray(lines), where)


# ---- the PSD-ROC, as sed_scores_eval forms it ----

def _class_curve(parts: Sequence[ScoreChanges], c: int, n_ref: int, weights: np.ndarray | None,
                 total: float, settings: PsdsSettings, n_classes: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Class ``c``'s TPR and eFPR over every threshold (the parts' counts joined), reduced to
    the staircase sed_scores_eval keeps: sorted by eFPR, the running maximum of the TPR, the
    last point of each eFPR, up to ``max_efpr``."""
    rows = [p.of_class(c) for p in parts]
    score = np.concatenate([x[0] for x in rows])
    order = np.argsort(score, kind="stable")
    (score,), (tp, fp) = _summed((score[order],), (np.concatenate([x[1] for x in rows])[order],
                                                   np.concatenate([x[2] for x in rows])[order]))
    ct_rate = None
    if weights is not None:
        cs = np.concatenate([x[3] for x in rows])
        co = np.concatenate([x[4] for x in rows])
        cn = np.concatenate([x[5] for x in rows])
        order = np.lexsort((co, cs))
        (cs, co), (cn,) = _summed((cs[order], co[order]), (cn[order],))
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
    tps = np.append(np.cumsum(tp[::-1])[::-1], 0)
    fps = np.append(np.cumsum(fp[::-1])[::-1], 0)
    tpr = tps / max(n_ref, 1)
    efpr = fps / total
    if ct_rate is not None:
        cross = np.append(np.cumsum(ct_rate[::-1])[::-1], 0.0) / (n_classes - 1)
        efpr = efpr + settings.alpha_ct * cross
    efpr = efpr * SECONDS_PER_HOUR
    order = np.lexsort((tpr, efpr))
    tpr, efpr = tpr[order], efpr[order]
    running = np.maximum.accumulate(tpr)
    rise = np.r_[0, np.flatnonzero(running[1:] > running[:-1]) + 1]
    tpr, efpr = tpr[rise], efpr[rise]
    efpr, last = np.unique(efpr[::-1], return_index=True)
    tpr = tpr[::-1][last]
    keep = np.searchsorted(efpr, settings.max_efpr, side="right")
    return tpr[:keep], efpr[:keep]


def _roc(curves: Sequence[tuple[np.ndarray, np.ndarray]], settings: PsdsSettings
         ) -> dict[str, np.ndarray]:
    """The PSD-ROC of the classes' staircases: the union of their eFPRs, each class's TPR
    there, the mean and spread, and ``etpr = max(mean − alpha_st · std, 0)``."""
    axis = np.unique(np.concatenate([efpr for _, efpr in curves]))
    values = [staircase_at(axis, efpr, tpr) for tpr, efpr in curves]
    mean, std = np.mean(values, axis=0), np.std(values, axis=0)
    etpr = np.maximum(mean - settings.alpha_st * std, 0.0)
    return {"efpr": np.append(axis, settings.max_efpr), "etpr": np.append(etpr, etpr[-1]),
            "mean": np.append(mean, mean[-1]), "std": np.append(std, std[-1])}


def psds_from_counts(parts: Sequence[ScoreChanges], truth: ClipTruth, classes: Sequence[str],
                     total: float, settings: PsdsSettings,
                     clip_weights: np.ndarray | None = None) -> dict[str, Any]:
    """One scenario's PSDS, per-class PSDS and PSD-ROC from its counts (of a resample: each
    clip's reference events counted ``clip_weights[clip]`` times, as its counts were; a
    resample without events of some class has no PSDS: ``{"value": nan}``)."""
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
    return {"value": staircase_area(roc["efpr"], roc["etpr"], m, in_order=True) / m,
            "per_class": {name: staircase_area(efpr, tpr, m, in_order=True) / m
                          for name, (tpr, efpr) in zip(classes, curves, strict=True)},
            "settings": settings.as_dict(), "rule": "sed_scores_eval",
            "roc": {**{k: v.tolist() for k, v in roc.items()},
                    # each class's staircase: at most one point per reference event + 1
                    "classes": {name: {"tpr": tpr.tolist(), "efpr": efpr.tolist()}
                                for name, (tpr, efpr) in zip(classes, curves, strict=True)}}}


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
               and _criterion_us(chosen.dtc, shortest)[0] <= 0 for chosen in settings):
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
