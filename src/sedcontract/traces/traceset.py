"""Reference and prediction event lists projected onto one frame grid per clip.

A :class:`TraceSet` holds ``[clips, classes, n]`` activity for both sides (``n`` = the longest
clip; each clip keeps its own length) and hands the monitor signals for the *typed* trace (one
row per clip × class) or the *union* trace (one row per clip, active = OR over classes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.activity import runs
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import Grid, Projection, frames_covering, project, to_us
from sedcontract.traces.names import signal_name

Mode = Literal["typed", "union"]
MODES: tuple[str, ...] = ("typed", "union")
SIDES: tuple[str, ...] = ("ref", "pred")


@dataclass(frozen=True)
class TraceSet:
    """Activity of both sides on the declared grid, plus what projection lost."""

    clips: tuple[str, ...]
    classes: tuple[str, ...]
    hop: float
    lengths: np.ndarray            # [clips] frames per clip
    active: dict[str, np.ndarray]  # side → [clips, classes, n] bool
    projection: str
    vanished: dict[str, int]       # side → events that cover no frame under the projection
    merged: dict[str, int]         # side → events that share their grid interval with
                                   # another event of the same clip and class

    @classmethod
    def from_events(cls, ref: EventList, pred: EventList, *, hop: float,
                    durations: Mapping[str, float] | None = None,
                    classes: Sequence[str] | None = None,
                    projection: Projection = "center") -> TraceSet:
        """Project both event lists; a clip's length comes from ``durations`` when given,
        else from the latest offset of either side in that clip."""
        clips = tuple(ref.clips)
        known = set(clips)
        stray = np.flatnonzero([c not in known for c in pred.clip])
        if stray.size:
            i = stray[0]
            raise TraceFormatError(f"prediction for clip {pred.clip[i]!r}, which the reference "
                                   "does not list", **pred.where(i), column="filename")
        for clip in pred.clips:
            if clip not in known:
                raise TraceFormatError(f"the predictions list clip {clip!r}, which the "
                                       "reference does not list", **pred.where_clip(clip),
                                       column="filename")
        labels = sorted(set(ref.classes) | set(pred.classes))
        if classes is None:
            classes = labels
        else:
            classes = list(classes)
            for events in (ref, pred):
                bad = np.flatnonzero([lab not in classes for lab in events.label])
                if bad.size:
                    i = bad[0]
                    raise TraceFormatError(f"label {events.label[i]!r} is not one of the declared "
                                           f"classes {', '.join(classes)}", **events.where(i),
                                           column="event_label")
        clip_index = {c: i for i, c in enumerate(clips)}
        rows = {side: np.array([clip_index[c] for c in events.clip], dtype=np.int64)
                for side, events in zip(SIDES, (ref, pred), strict=True)}
        if durations is None:  # the latest offset of either side
            extent_us = np.zeros(len(clips), dtype=np.int64)
            for side, events in zip(SIDES, (ref, pred), strict=True):
                np.maximum.at(extent_us, rows[side], to_us(events.offset))
        else:
            missing = [c for c in clips if c not in durations]
            if missing:
                raise TraceFormatError(f"no duration for clip(s) {', '.join(missing[:5])}"
                                       + (" …" if len(missing) > 5 else ""))
            extent_us = to_us(np.array([durations[c] for c in clips], dtype=np.float64))
            for side, events in zip(SIDES, (ref, pred), strict=True):
                late = np.flatnonzero(to_us(events.offset) > extent_us[rows[side]])
                if late.size:
                    i = late[0]
                    raise TraceFormatError(f"offset {float(events.offset[i])!r} is past the "
                                           f"clip duration {durations[events.clip[i]]!r}",
                                           **events.where(i), column="offset")
        lengths = frames_covering(extent_us, Grid(hop, 0).hop_us)
        n = int(lengths.max()) if len(clips) else 0
        class_index = {c: i for i, c in enumerate(classes)}
        active, vanished, merged = {}, {}, {}
        for side, events in zip(SIDES, (ref, pred), strict=True):
            grid = np.zeros((len(clips), len(classes), n + 1), dtype=np.int8)
            first, end = project(events.onset, events.offset, hop, projection)
            cols = np.array([class_index[c] for c in events.label], dtype=np.int64)
            end = np.minimum(end, lengths[rows[side]])
            first = np.minimum(first, end)
            vanished[side] = int(np.count_nonzero(first == end))
            # difference array: +1 at the first frame, −1 at the end, then a running sum
            np.add.at(grid, (rows[side], cols, first), 1)
            np.add.at(grid, (rows[side], cols, end), -1)
            active[side] = np.cumsum(grid, axis=-1, dtype=np.int32)[..., :n] > 0
            # overlapping, touching or grid-adjacent events become one maximal run
            intervals = len(runs(active[side].reshape(len(clips) * len(classes), n))[0])
            merged[side] = len(events) - vanished[side] - intervals
        return cls(clips, tuple(classes), float(hop), lengths, active, projection, vanished,
                   merged)

    def signals(self, mode: Mode = "typed") -> tuple[dict[str, np.ndarray], np.ndarray]:
        """``(signals, lengths)`` for the monitor.

        ``typed``: rows are clip × class (row ``i·C + c``); ``ref.active`` is that class's
        trace and ``ref.active[k]`` class ``k`` of the same clip. ``union``: rows are clips;
        ``ref.active`` is the OR over classes.
        """
        if mode not in MODES:
            raise ValueError(f"unknown trace mode {mode!r}; choose one of {', '.join(MODES)}")
        n_clips, n_classes = len(self.clips), len(self.classes)
        signals: dict[str, np.ndarray] = {}
        for side in SIDES:
            act = self.active[side]
            if mode == "typed":
                signals[signal_name(side, "active")] = act.reshape(n_clips * n_classes,
                                                                   act.shape[-1])
                for k, name in enumerate(self.classes):
                    signals[signal_name(side, "active", name)] = np.repeat(act[:, k], n_classes,
                                                                          axis=0)
            else:
                signals[signal_name(side, "active")] = act.any(axis=1)
                for k, name in enumerate(self.classes):
                    signals[signal_name(side, "active", name)] = act[:, k]
        lengths = np.repeat(self.lengths, n_classes) if mode == "typed" else self.lengths
        return signals, lengths

    def row_classes(self, mode: Mode = "typed") -> np.ndarray:
        """Class index of every row of :meth:`signals` (−1 on the union trace)."""
        if mode == "typed":
            return np.tile(np.arange(len(self.classes)), len(self.clips))
        return np.full(len(self.clips), -1, dtype=np.int64)

    def row_labels(self, mode: Mode = "typed") -> list[tuple[str, str | None]]:
        """``(clip, class)`` of every row of :meth:`signals` (class None on the union trace)."""
        if mode == "typed":
            return [(clip, c) for clip in self.clips for c in self.classes]
        return [(clip, None) for clip in self.clips]
