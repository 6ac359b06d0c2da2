"""Event lists: rows of ``(clip, onset, offset, label)`` with half-open ``[onset, offset)``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sedcontract.errors import TraceFormatError


@dataclass(frozen=True, eq=False)
class EventList:
    """Validated events; ``clips`` also lists clips that have no events at all.

    ``path`` and ``rows`` (1-based line numbers) travel with the events so that later
    errors can still name the file and row an event came from.
    """

    clip: np.ndarray
    onset: np.ndarray
    offset: np.ndarray
    label: np.ndarray
    clips: tuple[str, ...] = ()
    path: str | None = None
    rows: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        n = len(self.clip)
        for name in ("onset", "offset", "label"):
            if len(getattr(self, name)) != n:
                raise TraceFormatError(f"event list column {name!r} has {len(getattr(self, name))}"
                                       f" entries, 'clip' has {n}", path=self.path)
        object.__setattr__(self, "clip", np.asarray(self.clip, dtype=object))
        object.__setattr__(self, "label", np.asarray(self.label, dtype=object))
        object.__setattr__(self, "onset", np.asarray(self.onset, dtype=np.float64))
        object.__setattr__(self, "offset", np.asarray(self.offset, dtype=np.float64))
        clips = dict.fromkeys(self.clips)
        clips.update(dict.fromkeys(self.clip.tolist()))
        object.__setattr__(self, "clips", tuple(clips))
        self._validate()

    def _row(self, i: int) -> int:
        return int(self.rows[i]) if self.rows is not None else i + 1

    def _validate(self) -> None:
        for column in ("onset", "offset"):
            values = getattr(self, column)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                raise TraceFormatError(f"{float(values[bad[0]])!r} is not a finite time",
                                       path=self.path, row=self._row(bad[0]), column=column)
            bad = np.flatnonzero(values < 0)
            if bad.size:
                raise TraceFormatError(f"negative time {float(values[bad[0]])!r}",
                                       path=self.path, row=self._row(bad[0]), column=column)
        bad = np.flatnonzero(self.offset < self.onset)
        if bad.size:
            i = bad[0]
            raise TraceFormatError(f"offset {float(self.offset[i])!r} is before onset "
                                   f"{float(self.onset[i])!r}",
                                   path=self.path, row=self._row(i), column="offset")
        for i, value in enumerate(self.label):
            if not isinstance(value, str) or not value:
                raise TraceFormatError(f"event label {value!r} is not a non-empty string",
                                       path=self.path, row=self._row(i), column="event_label")

    def __len__(self) -> int:
        return len(self.clip)

    @property
    def classes(self) -> tuple[str, ...]:
        """Labels in sorted order."""
        return tuple(sorted(set(self.label.tolist())))

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, float, float, str]], *,
                  clips: Sequence[str] = (), path: str | None = None) -> EventList:
        """Build from ``(clip, onset, offset, label)`` tuples."""
        rows = list(rows)
        columns = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
        return cls(np.asarray(columns[0], dtype=object), np.asarray(columns[1], dtype=np.float64),
                   np.asarray(columns[2], dtype=np.float64), np.asarray(columns[3], dtype=object),
                   clips=tuple(clips), path=path)

    def to_rows(self) -> list[tuple[str, float, float, str]]:
        """``(clip, onset, offset, label)`` tuples in stored order."""
        return list(zip(self.clip.tolist(), self.onset.tolist(), self.offset.tolist(),
                        self.label.tolist(), strict=True))

    def for_clip(self, clip: str) -> EventList:
        """The events of one clip."""
        keep = self.clip == clip
        rows = self.rows[keep] if self.rows is not None else np.flatnonzero(keep) + 1
        return EventList(self.clip[keep], self.onset[keep], self.offset[keep], self.label[keep],
                         clips=(clip,), path=self.path, rows=rows)
