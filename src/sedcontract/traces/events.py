"""Event lists: rows of ``(clip, onset, offset, label)`` with half-open ``[onset, offset)``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.numbers import is_number
from sedcontract.traces.grid import MAX_SECONDS


@dataclass(frozen=True, eq=False)
class EventList:
    """Validated events; ``clips`` also lists clips that have no events at all.

    Where the events came from travels with them so that later errors can still name the file
    and row: ``path`` (one file) or ``files`` (one per event, e.g. a score file per clip),
    ``rows`` (1-based line numbers) and ``clip_rows`` (the first line naming each clip).
    """

    clip: np.ndarray
    onset: np.ndarray
    offset: np.ndarray
    label: np.ndarray
    clips: tuple[str, ...] = ()
    path: str | None = None
    rows: np.ndarray | None = field(default=None)
    files: np.ndarray | None = field(default=None)
    clip_rows: dict[str, tuple[str | None, int]] | None = field(default=None)

    def __post_init__(self) -> None:
        n = len(self.clip)
        for name in ("onset", "offset", "label"):
            if len(getattr(self, name)) != n:
                raise TraceFormatError(f"event list column {name!r} has {len(getattr(self, name))}"
                                       f" entries, 'clip' has {n}", path=self.path)
        object.__setattr__(self, "clip", np.asarray(self.clip, dtype=object))
        object.__setattr__(self, "label", np.asarray(self.label, dtype=object))
        for name in ("onset", "offset"):
            try:
                object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.float64))
            except (TypeError, ValueError):
                raise TraceFormatError(f"event list column {name!r} holds values that are not "
                                       "numbers of seconds", path=self.path) from None
        if isinstance(self.clips, str):
            raise TraceFormatError(f"clips must be a sequence of clip ids, got the string "
                                   f"{self.clips!r}")
        clips = dict.fromkeys(self.clips)
        clips.update(dict.fromkeys(self.clip.tolist()))
        object.__setattr__(self, "clips", tuple(clips))
        self._validate()

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickled with its text columns as codes into their distinct values: an executor's task
        carries 240k events in milliseconds, not the seconds of one string object each."""
        return (_unpickle, (self.codes("clip"), self.onset, self.offset, self.codes("label"),
                            self.clips, self.path, self.rows,
                            None if self.files is None else _codes(self.files), self.clip_rows))

    def where(self, i: int) -> dict[str, str | int | None]:
        """``path`` and ``row`` of event ``i``, as keyword arguments for TraceFormatError."""
        path = str(self.files[i]) if self.files is not None else self.path
        return {"path": path, "row": int(self.rows[i]) if self.rows is not None else i + 1}

    def where_clip(self, clip: str) -> dict[str, str | int | None]:
        """``path`` and ``row`` where ``clip`` is first named (row None when unknown)."""
        path, row = (self.clip_rows or {}).get(clip, (self.path, None))
        return {"path": path, "row": row}

    def _validate(self) -> None:
        for column in ("onset", "offset"):
            values = getattr(self, column)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                raise TraceFormatError(f"{float(values[bad[0]])!r} is not a finite time",
                                       **self.where(bad[0]), column=column)
            bad = np.flatnonzero(values < 0)
            if bad.size:
                raise TraceFormatError(f"negative time {float(values[bad[0]])!r}",
                                       **self.where(bad[0]), column=column)
            bad = np.flatnonzero(values > MAX_SECONDS)
            if bad.size:
                raise TraceFormatError(f"time {float(values[bad[0]])!r} s is past the latest "
                                       f"supported time ({MAX_SECONDS:g} s)",
                                       **self.where(bad[0]), column=column)
        for i, value in enumerate(self.clip):
            if not isinstance(value, str) or not value:
                raise TraceFormatError(f"clip id {value!r} is not a non-empty string",
                                       **self.where(i), column="filename")
        for value in self.clips:
            if not isinstance(value, str) or not value:
                raise TraceFormatError(f"clip id {value!r} is not a non-empty string",
                                       path=self.path)
        bad = np.flatnonzero(self.offset < self.onset)
        if bad.size:
            i = bad[0]
            raise TraceFormatError(f"offset {float(self.offset[i])!r} is before onset "
                                   f"{float(self.onset[i])!r}",
                                   **self.where(i), column="offset")
        for i, value in enumerate(self.label):
            if not isinstance(value, str) or not value:
                raise TraceFormatError(f"event label {value!r} is not a non-empty string",
                                       **self.where(i), column="event_label")

    def __len__(self) -> int:
        return len(self.clip)

    @cached_property
    def _code_cache(self) -> dict[str, tuple[list[Any], np.ndarray]]:
        return {}

    def codes(self, column: str) -> tuple[list[Any], np.ndarray]:
        """The ``clip`` or ``label`` column as its distinct values and a code per event, made
        once per list (a list selected from another keeps its codes): every later lookup costs
        one per distinct value."""
        cache = self._code_cache
        if column not in cache:
            cache[column] = _codes(getattr(self, column))
        return cache[column]

    def positions(self, column: str, index: Mapping[str, int]) -> np.ndarray:
        """The position in ``index`` of every event's clip or label (``KeyError`` for the
        first unknown distinct value), by :meth:`codes`."""
        distinct, codes = self.codes(column)
        return index_of(distinct, index)[codes]

    def among(self, column: str, values: Iterable[Any]) -> np.ndarray:
        """Which events' clip or label is one of ``values`` (by :meth:`codes`: a look-up per
        distinct value, whatever the number of events or values)."""
        distinct, codes = self.codes(column)
        wanted = set(values)
        return np.array([v in wanted for v in distinct], dtype=bool)[codes]

    @property
    def classes(self) -> tuple[str, ...]:
        """Labels in sorted order."""
        return tuple(sorted(set(self.codes("label")[0])))

    @classmethod
    def from_rows(cls, events: Iterable[tuple[str, float, float, str]], /, *,
                  clips: Sequence[str] = (), **sources: Any) -> EventList:
        """Build from ``(clip, onset, offset, label)`` tuples; ``sources`` are the
        ``path``/``rows``/``files``/``clip_rows`` fields."""
        if isinstance(events, str) or not isinstance(events, Iterable):
            raise TraceFormatError(f"events must be a sequence of (clip, onset, offset, label) "
                                   f"tuples, got {type(events).__name__}")
        events = list(events)
        for i, event in enumerate(events):
            if not isinstance(event, tuple | list) or len(event) != 4:
                raise TraceFormatError(f"event {i + 1} is {event!r}; an event is a (clip, onset, "
                                       "offset, label) tuple")
            for column, value in zip(("onset", "offset"), event[1:3], strict=True):
                if not is_number(value, numpy=True):
                    raise TraceFormatError(f"event {i + 1}: {column} {value!r} is not a number "
                                           "of seconds", column=column)
        columns = list(zip(*events, strict=True)) if events else [[], [], [], []]
        return cls(np.asarray(columns[0], dtype=object), np.asarray(columns[1], dtype=np.float64),
                   np.asarray(columns[2], dtype=np.float64), np.asarray(columns[3], dtype=object),
                   clips=clips if isinstance(clips, str) else tuple(clips), **sources)

    def to_rows(self) -> list[tuple[str, float, float, str]]:
        """``(clip, onset, offset, label)`` tuples in stored order."""
        return list(zip(self.clip.tolist(), self.onset.tolist(), self.offset.tolist(),
                        self.label.tolist(), strict=True))

    def merged(self) -> EventList:
        """Overlapping or touching events of one clip and class joined into one (sorted by clip,
        label, onset): the events as an activity trace sees them."""
        out: list[list] = []
        for clip, on, off, label in sorted(self.to_rows(), key=lambda e: (e[0], e[3], e[1])):
            if out and out[-1][0] == clip and out[-1][3] == label and on <= out[-1][2]:
                out[-1][2] = max(out[-1][2], off)
            else:
                out.append([clip, on, off, label])
        return EventList.from_rows([tuple(e) for e in out], clips=self.clips, path=self.path)

    def overlapping(self) -> np.ndarray:
        """Indices of the events that overlap or touch an earlier event (by onset) of their
        clip and class, sorted: the ones an activity trace merges and that sed_scores_eval
        refuses."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        _, clip = np.unique(self.clip.astype(str), return_inverse=True)
        _, label = np.unique(self.label.astype(str), return_inverse=True)
        order = np.lexsort((self.onset, label, clip))
        group = (clip[order] * (label.max() + 1) + label[order]).tolist()
        onset, offset = self.onset[order].tolist(), self.offset[order].tolist()
        found, reach = [], -1.0
        for k in range(len(order)):
            if k and group[k] == group[k - 1] and onset[k] <= reach:
                found.append(int(order[k]))
            reach = offset[k] if not k or group[k] != group[k - 1] else max(reach, offset[k])
        return np.sort(np.asarray(found, dtype=np.int64))

    def select(self, *, clips: Sequence[str] | None = None,
               classes: Sequence[str] | None = None) -> EventList:
        """The events of some clips (listed in that order) and/or of some classes, keeping
        their source rows."""
        keep = np.ones(len(self), dtype=bool)
        if clips is not None:
            keep &= self.among("clip", clips)
        if classes is not None:
            keep &= self.among("label", classes)
        listed = self.clips
        if clips is not None:
            listed = tuple(dict.fromkeys(clips))
            EventList((), (), (), (), clips=listed)  # the listed clips checked, not the events
        return self.kept(keep, clips=listed)

    def kept(self, keep: np.ndarray, *, clips: tuple[str, ...] | None = None) -> EventList:
        """The events where ``keep`` is true, with their source rows (the row numbers of the
        whole list); the clips listed stay (or are ``clips``). Codes already made
        (:meth:`codes`) are kept for the events kept."""
        out = EventList._checked(self.clip[keep], self.onset[keep], self.offset[keep],
                                 self.label[keep], clips=self.clips if clips is None else clips,
                                 path=self.path,
                                 rows=self.rows[keep] if self.rows is not None
                                 else np.flatnonzero(keep) + 1,  # rows of the whole list
                                 files=self.files[keep] if self.files is not None else None,
                                 clip_rows=self.clip_rows)
        for column, (distinct, codes) in self._code_cache.items():
            codes = codes[keep]
            used = np.flatnonzero(np.bincount(codes, minlength=len(distinct)))
            renumber = np.zeros(len(distinct), dtype=np.int32)
            renumber[used] = np.arange(len(used), dtype=np.int32)
            out._code_cache[column] = ([distinct[i] for i in used.tolist()], renumber[codes])
        return out

    @classmethod
    def _checked(cls, clip: np.ndarray, onset: np.ndarray, offset: np.ndarray,
                 label: np.ndarray, *, clips: tuple[str, ...], **sources: Any) -> EventList:
        """Events already checked (a subset of an event list, or one unpickled), with
        ``clips`` listing every clip they name: built without checking every event again."""
        out = object.__new__(cls)
        for name, value in (("clip", clip), ("onset", onset), ("offset", offset),
                            ("label", label), ("clips", clips),
                            *((k, sources.get(k)) for k in ("path", "rows", "files",
                                                             "clip_rows"))):
            object.__setattr__(out, name, value)
        return out

    def for_clip(self, clip: str) -> EventList:
        """The events of one clip."""
        keep = self.clip == clip
        rows = self.rows[keep] if self.rows is not None else np.flatnonzero(keep) + 1
        files = self.files[keep] if self.files is not None else None
        return EventList(self.clip[keep], self.onset[keep], self.offset[keep], self.label[keep],
                         clips=(clip,), path=self.path, rows=rows, files=files)


def _codes(values: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """An object column as its distinct values (in first-seen order) and a code per entry
    (passes in C, no Python step per entry); only the first entry of each run of equal ones
    is hashed (files list a clip's events together: a few hashes per clip)."""
    if not len(values):
        return [], np.zeros(0, dtype=np.int32)
    head = np.ones(len(values), dtype=bool)
    head[1:] = values[1:] != values[:-1]
    first = np.flatnonzero(head)
    items = values[first].tolist()
    index: dict[Any, int] = dict.fromkeys(items)
    for code, value in enumerate(index):
        index[value] = code
    codes = np.fromiter(map(index.__getitem__, items), dtype=np.int32, count=len(items))
    return list(index), np.repeat(codes, np.diff(np.append(first, len(values))))


def _decoded(column: tuple[list[Any], np.ndarray]) -> np.ndarray:
    values = np.empty(len(column[0]), dtype=object)
    values[:] = column[0]
    return values[column[1]]


def _unpickle(clip: tuple, onset: np.ndarray, offset: np.ndarray, label: tuple,
              clips: tuple[str, ...], path: str | None, rows: np.ndarray | None,
              files: tuple | None, clip_rows: dict | None) -> EventList:
    return EventList._checked(_decoded(clip), onset, offset, _decoded(label), clips=clips,
                              path=path, rows=rows,
                              files=None if files is None else _decoded(files),
                              clip_rows=clip_rows)


def index_of(values: Sequence[Any], index: Mapping[str, int]) -> np.ndarray:
    """The position in ``index`` of every value (``KeyError`` for the first unknown one)."""
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
