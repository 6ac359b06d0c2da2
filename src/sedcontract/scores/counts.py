"""The counts every standard score is made of: pooled :class:`Counts` and per clip × class
:class:`MetricResult` (sums, so results of disjoint clip sets join), and the row helpers the
families share.

Declared edge-case policy (where this differs from sed_eval, tests show the difference):
times are compared in integer microseconds (sed_eval compares raw float64, so 0.3 / 0.1 lands
in segment 2); precision with no system output is 0 (DCASE's ``zero_score``); a score with
no reference is NaN and a macro mean skips it, reporting how many classes it averaged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sedcontract.contracts.contract import compact_counts
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import EventList
from sedcontract.traces.grid import to_us
from sedcontract.traces.intervals import Intervals, expand_ranges, overlap_ranges, row_keys


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
        return self.mean_of([getattr(c, name) for c in self.per_class.values()])

    @staticmethod
    def mean_of(values: Sequence[float]) -> tuple[float, int]:
        """The macro rule: the mean of the defined values (NaN when none is), and how many."""
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


def clip_extent_us(ref: EventList, pred: EventList, clips: Sequence[str],
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


def event_rows(events: EventList, clips: Sequence[str], classes: Sequence[str]) -> np.ndarray:
    """Row ``clip · C + class`` of every event; a label outside ``classes`` is an error."""
    clip_index = {c: i for i, c in enumerate(clips)}
    class_index = {c: k for k, c in enumerate(classes)}
    try:
        label = events.positions("label", class_index)
    except KeyError:
        i = next(i for i, lab in enumerate(events.label) if lab not in class_index)
        raise TraceFormatError(f"label {events.label[i]!r} is not one of the scored classes "
                               f"{', '.join(classes)}", **events.where(i),
                               column="event_label") from None
    return events.positions("clip", clip_index) * len(classes) + label


def overlapping(a: Intervals, b: Intervals) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of overlapping intervals (same row) and the length each pair shares."""
    ia, ib = expand_ranges(*overlap_ranges(a, b))
    shared = np.minimum(a.end[ia], b.end[ib]) - np.maximum(a.start[ia], b.start[ib])
    return ia, ib, shared


def by_row(rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The order of integer (row, position) pairs by row, then position, ties kept in place:
    ``np.lexsort((positions, rows))`` as one stable sort of one key, many times faster."""
    return np.argsort(row_keys(rows, positions)(rows, positions), kind="stable")


def row_sums(rows: np.ndarray, weights: np.ndarray | None, n: int) -> np.ndarray:
    """Sums of ``weights`` (counts when None) per row ``0 … n−1``."""
    return np.bincount(rows, weights=weights, minlength=n)[:n]
