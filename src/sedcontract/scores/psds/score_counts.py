"""The counts a score table gives as the threshold falls, class by class: true and false
positives and cross-triggers as changes at each score (:class:`ScoreChanges`), computed from the
tree of detection runs over all thresholds at once (see :mod:`sedcontract.scores.psds.of_scores`);
the counts of disjoint blocks of clips add up to the corpus's."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.scores.psds.floors import free_tops, highest, masked
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces.grid import to_us
from sedcontract.traces.intervals import distinct, expand_ranges
from sedcontract.traces.score_files import ScoreTable, bad_scores, check_tiling

BATCH_SEGMENTS = 100_000  # score segments (runs of equal scores) processed as one batch
JOIN_ROWS = 1_000_000     # counts kept apart before they are joined (whole sums at a score)


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
           ct: np.ndarray, fold: int | None = None, kept: bool = False) -> ScoreChanges:
        """Changes summed per (label, score) and per (label, other class, score); the ones
        that sum to zero left out. With ``fold``, the labels (clip · fold + class) are then
        summed per class, keeping a score where some clip's counts change even when the
        clips' changes cancel: sed_scores_eval's change points, so each ROC point keeps its
        threshold. ``kept``: the rows are such sums already (of blocks), none left out."""
        def changes(label: np.ndarray, score: np.ndarray, values: tuple[np.ndarray, ...],
                    n: int, other: np.ndarray | None = None, drop: bool = True
                    ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
            order = _by_class(label, score, n, other)
            keys = (label[order], score[order]) if other is None else \
                (label[order], other[order], score[order])
            keys, sums = summed(keys, tuple(v[order] for v in values))
            keep = np.logical_or.reduce([v != 0 for v in sums]) if drop else \
                np.ones(len(keys[0]), dtype=bool)
            return tuple(k[keep] for k in keys), tuple(v[keep] for v in sums)

        live = np.ones(len(tp), dtype=bool) if kept else (tp != 0) | (fp != 0)
        (label, score), (tp, fp) = changes(label[live], score[live], (tp[live], fp[live]),
                                           n_classes, drop=not kept)
        (ct_label, ct_other, ct_score), (ct,) = changes(ct_label, ct_score, (ct,), n_classes,
                                                        ct_other, drop=not kept)
        if fold is not None:
            n_classes = fold
            (label, score), (tp, fp) = changes(label % fold, score, (tp, fp), fold,
                                               drop=False)
            (ct_label, ct_other, ct_score), (ct,) = changes(ct_label % fold, ct_score, (ct,),
                                                            fold, ct_other, drop=False)
        classes = np.arange(n_classes + 1)
        return cls(np.searchsorted(label, classes), score, tp.astype(np.int32),
                   fp.astype(np.int32), np.searchsorted(ct_label, classes), ct_score,
                   ct_other.astype(np.int32), ct.astype(np.int32))

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
                      labels("ct_ptr"), joined("ct_score"), joined("ct_other"), joined("ct"),
                      kept=True)

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


def new_runs(*keys: np.ndarray) -> np.ndarray:
    """Which rows start a run of equal keys, the rows sorted by them."""
    new = np.zeros(len(keys[0]), dtype=bool)
    new[:1] = True
    for k in keys:
        new[1:] |= k[1:] != k[:-1]
    return new


def summed(keys: tuple[np.ndarray, ...], values: tuple[np.ndarray, ...]
            ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Values of rows sorted by ``keys`` summed over each run of equal keys (whole numbers:
    the sums do not depend on how the rows were cut or ordered within a run)."""
    if len(keys[0]) == 0:
        return tuple(k[:0] for k in keys), tuple(v[:0].astype(np.int64) for v in values)
    starts = np.flatnonzero(new_runs(*keys))
    return (tuple(k[starts] for k in keys),
            tuple(np.add.reduceat(v.astype(np.int64), starts) for v in values))


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


def criterion_us(fraction: float, seconds: np.ndarray) -> np.ndarray:
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
        relevant = i_target >= criterion_us(chosen.dtc, length)
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
        tp_label = truth.cls[tp_event] + truth.clip[tp_event] * K
        if cross:
            ct = _cross_triggers(runs, truth, r, g, inter, ~same & ~relevant[r],
                                 criterion_us(chosen.cttc, length), present, K)
        else:
            ct = (np.zeros(0, dtype=np.int64),) * 3 + (np.zeros(0),)
        rows = (np.concatenate([runs.col, tp_label]),
                np.concatenate([runs.birth, tp_score]),
                np.concatenate([np.zeros(n, dtype=np.int64), tp_change]),
                np.concatenate([fp_change, np.zeros(len(tp_label), dtype=np.int64)]))
        if floor is not None:  # a reference event never found above the floor changes at -inf
            keep = rows[1] >= floor[rows[0] % K]
            rows = tuple(x[keep] for x in rows)
            keep = ct[3] >= floor[ct[0] % K]
            ct = tuple(x[keep] for x in ct)
        out.append(ScoreChanges.of(K * len(tables), *rows, ct[0], ct[3], ct[1], ct[2],
                                  fold=None if by_clip else K))
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
    need = criterion_us(gtc, truth.offset - truth.onset)
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
