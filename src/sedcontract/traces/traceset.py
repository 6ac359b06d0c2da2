"""Reference and prediction event lists projected onto one frame grid per clip.

A :class:`TraceSet` holds the maximal runs of both sides per clip × class (each clip keeps its
own length) and hands the monitor dense signals, chunk by chunk, for the *typed* trace (one
row per clip × class) or the *union* trace (one row per clip, active = OR over classes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.numbers import is_number
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS, Grid, Projection, frames_covering, project, to_us
from sedcontract.traces.intervals import Intervals
from sedcontract.traces.names import SIDES, signal_name

Mode = Literal["typed", "union"]
MODES: tuple[str, ...] = ("typed", "union")


# a clip's frames are refused above this (16,777,216 frames: 93 h at hop 20 ms, 4.7 h at 1 ms);
# raise it with max_frames= (--max-frames) when a long recording is meant
MAX_CLIP_FRAMES = 1 << 24
# frame cells per dense signal handed to the monitor at once (rows × frames of one chunk)
CHUNK_CELLS = 1 << 22


@dataclass(frozen=True)
class TraceSet:
    """Activity of both sides on the declared grid, as maximal runs, plus what projection lost.

    ``runs[side]`` holds the runs of every clip × class (row ``i·C + c``); dense frame arrays
    are made only for the rows of one chunk at a time (:meth:`signals`), so memory follows the
    events and the chunk size, not the longest clip times the number of rows.
    """

    clips: tuple[str, ...]
    classes: tuple[str, ...]
    hop: float
    lengths: np.ndarray            # [clips] frames per clip
    runs: dict[str, Intervals]     # side → runs per clip × class row
    union_runs: dict[str, Intervals]  # side → runs per clip of the activity of any class
    projection: str
    events: dict[str, np.ndarray]    # side → events per clip × class row
    vanished: dict[str, np.ndarray]  # side → events per clip that cover no frame
    merged: dict[str, np.ndarray]    # side → events per clip that share their grid interval
                                     # with another event of the same clip and class

    @staticmethod
    def layout(ref: EventList, pred: EventList, *, hop: float,
               durations: Mapping[str, float] | None = None,
               classes: Sequence[str] | None = None, max_frames: int = MAX_CLIP_FRAMES
               ) -> tuple[tuple[str, ...], list[str], np.ndarray, dict[str, np.ndarray]]:
        """Every check :meth:`from_events` makes before projecting, and what they settle: the
        clips, the classes, each clip's frames and each event's clip index (per side)."""
        grid = Grid(hop, 0)  # a usable hop, or a clear error
        clips = tuple(ref.clips)
        check_prediction_clips(ref, pred)
        if classes is None:
            classes = trace_classes(ref, pred)
        else:
            classes = check_classes(classes)
            for events in (ref, pred):
                declared = set(classes)
                distinct, codes = events.codes("label")
                bad = np.flatnonzero(np.array([lab not in declared for lab in distinct],
                                              dtype=bool)[codes])
                if bad.size:
                    i = bad[0]
                    raise TraceFormatError(f"label {events.label[i]!r} is not one of the declared "
                                           f"classes {', '.join(classes)}", **events.where(i),
                                           column="event_label")
        clip_index = {c: i for i, c in enumerate(clips)}
        rows = {side: events.positions("clip", clip_index)
                for side, events in zip(SIDES, (ref, pred), strict=True)}
        if durations is None:  # the latest offset of either side
            extent_us = np.zeros(len(clips), dtype=np.int64)
            for side, events in zip(SIDES, (ref, pred), strict=True):
                np.maximum.at(extent_us, rows[side], to_us(events.offset))
        else:
            extent_us = _duration_us(clips, durations)
            for side, events in zip(SIDES, (ref, pred), strict=True):
                late = np.flatnonzero(to_us(events.offset) > extent_us[rows[side]])
                if late.size:
                    i = late[0]
                    raise TraceFormatError(f"offset {float(events.offset[i])!r} is past the "
                                           f"clip duration {durations[events.clip[i]]!r}",
                                           **events.where(i), column="offset")
        lengths = frames_covering(extent_us, grid.hop_us)
        _check_length(lengths, max_frames, clips, hop, durations, ref, pred, rows)
        return clips, list(classes), lengths, rows

    @staticmethod
    def sees(events: EventList, rows: np.ndarray, lengths: np.ndarray, hop: float,
             projection: Projection = "center") -> bool:
        """Whether any of the events covers a frame of its clip on the grid (what
        :meth:`from_events`'s runs would show), without building the runs."""
        first, end = project(events.onset, events.offset, hop, projection)
        end = np.minimum(end, lengths[rows])
        return bool((end > np.minimum(first, end)).any())

    @classmethod
    def from_events(cls, ref: EventList, pred: EventList, *, hop: float,
                    durations: Mapping[str, float] | None = None,
                    classes: Sequence[str] | None = None,
                    projection: Projection = "center",
                    max_frames: int = MAX_CLIP_FRAMES) -> TraceSet:
        """Project both event lists; a clip's length comes from ``durations`` when given,
        else from the latest offset of either side in that clip. A clip longer than
        ``max_frames`` frames is refused."""
        clips, classes, lengths, rows = cls.layout(ref, pred, hop=hop, durations=durations,
                                                   classes=classes, max_frames=max_frames)
        class_index = {c: i for i, c in enumerate(classes)}
        runs_of, counts, vanished, merged = {}, {}, {}, {}
        n_clips, per = len(clips), len(classes)
        for side, events in zip(SIDES, (ref, pred), strict=True):
            first, end = project(events.onset, events.offset, hop, projection)
            cols = events.positions("label", class_index)
            end = np.minimum(end, lengths[rows[side]])
            first = np.minimum(first, end)
            row = rows[side] * per + cols
            counts[side] = np.bincount(row, minlength=n_clips * per)
            vanished[side] = np.bincount(rows[side][first == end], minlength=n_clips)
            # overlapping, touching or grid-adjacent events become one maximal run
            runs_of[side] = Intervals.merged(row, first, end)
            kept = np.bincount(runs_of[side].row // max(per, 1), minlength=n_clips)
            merged[side] = counts[side].reshape(n_clips, per).sum(axis=1) - vanished[side] - kept
        union = {side: Intervals.merged(runs.row // max(len(classes), 1), runs.start, runs.end)
                 for side, runs in runs_of.items()}
        return cls(clips, tuple(classes), float(hop), lengths, runs_of, union, projection,
                   counts, vanished, merged)

    def clips_between(self, first: int, stop: int) -> TraceSet:
        """The traces of clips ``[first, stop)`` (a shard of the corpus)."""
        per = len(self.classes)
        return TraceSet(self.clips[first:stop], self.classes, self.hop, self.lengths[first:stop],
                        {k: v.rows_between(first * per, stop * per) for k, v in self.runs.items()},
                        {k: v.rows_between(first, stop) for k, v in self.union_runs.items()},
                        self.projection,
                        {k: v[first * per:stop * per] for k, v in self.events.items()},
                        {k: v[first:stop] for k, v in self.vanished.items()},
                        {k: v[first:stop] for k, v in self.merged.items()})

    def rows(self, mode: Mode = "typed") -> int:
        """Number of rows: clip × class (typed) or clip (union)."""
        _check_mode(mode)
        return len(self.clips) * (len(self.classes) if mode == "typed" else 1)

    def row_lengths(self, mode: Mode = "typed") -> np.ndarray:
        """Frames of every row (its clip's length)."""
        _check_mode(mode)
        return np.repeat(self.lengths, len(self.classes)) if mode == "typed" else self.lengths

    def intervals(self, side: str, mode: Mode = "typed") -> Intervals:
        """Maximal runs of ``side`` per row: per clip × class, or per clip on the union trace
        (activity of any class)."""
        _check_mode(mode)
        return self.runs[side] if mode == "typed" else self.union_runs[side]

    def chunks(self, mode: Mode = "typed", cells: int | None = None) -> list[tuple[int, int]]:
        """Consecutive row ranges ``[first, stop)`` whose dense signals (rows × the longest of
        their frames) hold at most ``cells`` cells (default :data:`CHUNK_CELLS`); a row longer
        than that is a chunk alone."""
        cells = CHUNK_CELLS if cells is None else cells
        per = len(self.classes) if mode == "typed" else 1
        out: list[tuple[int, int]] = []
        first = width = 0
        for i, n in enumerate(self.lengths.tolist()):
            group = max(1, cells // max(n, 1))
            for r0 in range(i * per, (i + 1) * per, group):
                r1 = min(r0 + group, (i + 1) * per)
                if r0 > first and (r1 - first) * max(width, n) > cells:
                    out.append((first, r0))
                    first, width = r0, 0
                width = max(width, n)
        total = len(self.clips) * per
        if total > first or not out:  # no rows at all: one empty chunk
            out.append((first, total))
        return out

    def signals(self, mode: Mode = "typed", rows: tuple[int, int] | None = None,
                names: Iterable[str] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """``(signals, lengths)`` for the monitor, for the rows ``[first, stop)`` (default: all).

        ``typed``: rows are clip × class (row ``i·C + c``); ``ref.active`` is that class's
        trace and ``ref.active[k]`` class ``k`` of the same clip. ``union``: rows are clips;
        ``ref.active`` is the OR over classes. ``names`` limits the signals made to those
        named (``ref.active``, ``pred.active[speech]``, …); default: every one.
        """
        _check_mode(mode)
        first, stop = rows if rows is not None else (0, self.rows(mode))
        lengths = self.row_lengths(mode)[first:stop]
        n = int(lengths.max()) if len(lengths) else 0
        wanted = None if names is None else set(names)
        per = max(len(self.classes), 1) if mode == "typed" else 1
        clip0, clip1 = first // per, -(-stop // per)
        clip_of_row = np.arange(first, stop) // per - clip0
        signals: dict[str, np.ndarray] = {}
        for side in SIDES:
            name = signal_name(side, "active")
            if wanted is None or name in wanted:
                signals[name] = self.intervals(side, mode).rows_between(first, stop).paint(
                    stop - first, n)
            runs = self.runs[side].rows_between(clip0 * len(self.classes),
                                                clip1 * len(self.classes))
            for k, cls in enumerate(self.classes):
                name = signal_name(side, "active", cls)
                if wanted is not None and name not in wanted:
                    continue
                keep = runs.row % len(self.classes) == k
                of_class = Intervals(runs.row[keep] // len(self.classes), runs.start[keep],
                                     runs.end[keep])
                signals[name] = of_class.paint(clip1 - clip0, n)[clip_of_row]
        return signals, lengths

    def run_signals(self, mode: Mode = "typed", names: Iterable[str] | None = None
                    ) -> dict[str, Intervals]:
        """The signals of :meth:`signals` for every row of ``mode`` as runs (no frame arrays):
        ``side.active`` per row, and ``side.active[k]`` — class ``k`` of the row's clip — on
        each row of that clip."""
        _check_mode(mode)
        wanted = None if names is None else set(names)
        per = len(self.classes)
        out: dict[str, Intervals] = {}
        for side in SIDES:
            name = signal_name(side, "active")
            if wanted is None or name in wanted:
                out[name] = self.intervals(side, mode)
            runs = self.runs[side]
            for k, cls in enumerate(self.classes):
                name = signal_name(side, "active", cls)
                if wanted is not None and name not in wanted:
                    continue
                keep = runs.row % per == k
                clip, start, end = runs.row[keep] // per, runs.start[keep], runs.end[keep]
                if mode == "typed":  # the same runs on each class row of the clip
                    clip = clip[:, None] * per + np.arange(per)[None, :]
                    start = np.repeat(start[:, None], per, 1)
                    end = np.repeat(end[:, None], per, 1)
                out[name] = Intervals.merged(clip.ravel(), start.ravel(), end.ravel())
        return out

    def dense(self, side: str) -> np.ndarray:
        """Boolean activity ``[clips, classes, n]`` of one side (``n`` = the longest clip)."""
        n = int(self.lengths.max()) if len(self.clips) else 0
        active = self.runs[side].paint(self.rows("typed"), n)
        return active.reshape(len(self.clips), len(self.classes), n)

    def row_classes(self, mode: Mode = "typed") -> np.ndarray:
        """Class index of every row of :meth:`signals` (−1 on the union trace)."""
        if mode == "typed":
            return np.tile(np.arange(len(self.classes)), len(self.clips))
        return np.full(len(self.clips), -1, dtype=np.int64)

    def row_labels(self, mode: Mode = "typed") -> RowLabels:
        """``(clip, class)`` of every row of :meth:`signals` (class None on the union trace)."""
        return row_labels(self.clips, self.classes, mode)


class RowLabels(Sequence[tuple[str, "str | None"]]):
    """``(clip, class)`` of every row — clip × class (typed, row ``i·C + c``), or clip with
    class None (union) — made when asked for: 17,000 clips × 456 classes need no 7.8 million
    tuples."""

    def __init__(self, clips: Sequence[str], classes: Sequence[str], mode: Mode) -> None:
        _check_mode(mode)
        self.clips, self.mode = tuple(clips), mode
        self.classes: tuple[str | None, ...] = tuple(classes) if mode == "typed" else (None,)

    @property
    def per(self) -> int:
        """Rows per clip."""
        return len(self.classes)

    def __len__(self) -> int:
        return len(self.clips) * self.per

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        clip, cls = divmod(i, self.per)
        return self.clips[clip], self.classes[cls]

    def __iter__(self):
        return ((clip, c) for clip in self.clips for c in self.classes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def check_prediction_clips(ref: EventList, pred: EventList) -> None:
    """Refuse predictions (and clips the predictions list) of clips the reference lacks."""
    known = set(ref.clips)
    distinct, codes = pred.codes("clip")
    stray = np.flatnonzero(~np.fromiter(map(known.__contains__, distinct), dtype=bool,
                                        count=len(distinct))[codes])
    if stray.size:
        i = stray[0]
        raise TraceFormatError(f"prediction for clip {pred.clip[i]!r}, which the reference "
                               "does not list", **pred.where(i), column="filename")
    for clip in pred.clips:
        if clip not in known:
            raise TraceFormatError(f"the predictions list clip {clip!r}, which the "
                                   "reference does not list", **pred.where_clip(clip),
                                   column="filename")


def trace_classes(ref: EventList, pred: EventList) -> list[str]:
    """The classes of traces whose classes are not declared: every label of either side."""
    return sorted(set(ref.classes) | set(pred.classes))


def row_labels(clips: Sequence[str], classes: Sequence[str],
               mode: Mode = "typed") -> RowLabels:
    """``(clip, class)`` of every row: clip × class (typed), or clip with class None (union)."""
    return RowLabels(clips, classes, mode)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown trace mode {mode!r}; choose one of {', '.join(MODES)}")


def check_classes(classes: Sequence[str]) -> list[str]:
    """Declared class names: a sequence of distinct non-empty strings."""
    if isinstance(classes, str) or not isinstance(classes, Sequence | np.ndarray | tuple):
        raise TraceFormatError(f"classes must be a list of class names, got {classes!r}")
    classes = list(classes)
    for name in classes:
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"class name {name!r} is not a non-empty string")
    twice = sorted(c for c, count in Counter(classes).items() if count > 1)
    if twice:
        raise TraceFormatError(f"class {twice[0]!r} is declared twice")
    return classes


def _duration_us(clips: Sequence[str], durations: Mapping[str, float]) -> np.ndarray:
    """Clip durations in microseconds; each must be a finite time in [0, MAX_SECONDS]."""
    missing = [c for c in clips if c not in durations]
    if missing:
        raise TraceFormatError(f"no duration for clip(s) {', '.join(missing[:5])}"
                               + (" …" if len(missing) > 5 else ""))
    values = []
    for clip in clips:
        value = durations[clip]
        if not is_number(value, numpy=True) \
                or not np.isfinite(value) or not 0 <= value <= MAX_SECONDS:
            raise TraceFormatError(f"duration of clip {clip!r} is {value!r}, not a time in "
                                   f"[0, {MAX_SECONDS:g}] s")
        values.append(float(value))
    return to_us(np.array(values, dtype=np.float64))


def _check_length(lengths: np.ndarray, max_frames: int, clips: Sequence[str], hop: float,
                  durations: Mapping[str, float] | None, ref: EventList, pred: EventList,
                  rows: dict[str, np.ndarray]) -> None:
    """Refuse a clip of more than ``max_frames`` frames, naming where its length came from."""
    if not len(lengths) or int(lengths.max()) <= max_frames:
        return
    i = int(np.argmax(lengths))
    message = (f"clip {clips[i]!r} is {int(lengths[i])} frames of {hop:g} s, more than the "
               f"limit of {max_frames} frames per clip; use a larger hop, split the recording, "
               "or raise the limit (max_frames= / --max-frames)")
    if durations is not None:
        raise TraceFormatError(f"{message} (its duration is {durations[clips[i]]!r} s)")
    for side, events in zip(SIDES, (ref, pred), strict=True):
        mine = np.flatnonzero(rows[side] == i)
        if mine.size:
            j = mine[np.argmax(events.offset[mine])]
            if frames_covering(to_us(events.offset[j]), Grid(hop, 0).hop_us) == lengths[i]:
                raise TraceFormatError(f"{message} (the clip's length is this event's offset, "
                                       f"{float(events.offset[j])!r} s)", **events.where(j),
                                       column="offset")
    raise TraceFormatError(message)
