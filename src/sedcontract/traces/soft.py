"""Soft labels on a segment grid (MAESTRO Real: the annotators' agreement per 1 s segment and
class, in [0, 1]), the hard reference they give (``soft > threshold``, strictly, as the DCASE
2023 Task 4B evaluation binarises them) and how soft the annotation is.

Files: a MAESTRO annotation ``.txt`` (tab-separated, no header: ``onset offset label soft``)
or a soft-label tsv ``filename onset offset event_label confidence`` (the DCASE 2024 baseline's
MAESTRO metadata, and what ``sedcontract data maestro`` writes)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS
from sedcontract.traces.tsv import clip_id, parse_number, read_fields

SEGMENT = 1.0     # seconds: the annotation grid
THRESHOLD = 0.5   # hard label iff soft > 0.5
SOFT_COLUMNS = ("filename", "onset", "offset", "event_label", "confidence")
_TOLERANCE = 1e-3  # seconds: how far a row's times may sit from the grid


@dataclass(frozen=True)
class SoftRow:
    """One annotation row, with where it was read."""

    file: str
    onset: float
    offset: float
    label: str
    value: float
    path: str
    line: int


@dataclass(frozen=True)
class SoftClip:
    """One file's soft labels as rows (segment, class index, value, file line; by segment and
    class), so memory follows the rows, not the time they span."""

    clip: str
    path: str
    segment: np.ndarray  # int64
    column: np.ndarray   # int64
    value: np.ndarray    # float64
    line: np.ndarray     # int64
    segments: int
    end: float
    width: int           # classes in the class list


@dataclass(frozen=True)
class SoftLabels:
    """Soft labels of several clips over one class list."""

    classes: tuple[str, ...]
    clips: dict[str, SoftClip]
    duplicates: int = 0  # rows that repeat another row's segment, class and value

    def hard(self, threshold: float = THRESHOLD,
             durations: dict[str, float] | None = None) -> EventList:
        """Hard reference events: maximal runs of segments with ``soft > threshold`` per clip
        and class; an event ends at its last segment's end, cut at the clip's duration. Each
        event names the file and row of its first segment."""
        if not 0 <= threshold < 1:
            raise TraceFormatError(f"the hard threshold must lie in [0, 1), got {threshold!r}")
        events, files, lines = [], [], []
        for clip, soft in self.clips.items():
            end = durations.get(clip, soft.end) if durations else soft.end
            on = soft.value > threshold
            order = np.lexsort((soft.segment[on], soft.column[on]))  # by class, then segment
            column, segment, line = (a[on][order] for a in (soft.column, soft.segment,
                                                            soft.line))
            first = np.ones(len(segment), dtype=bool)
            first[1:] = (column[1:] != column[:-1]) | (segment[1:] != segment[:-1] + 1)
            last = np.ones(len(segment), dtype=bool)
            last[:-1] = first[1:]
            for a, b in zip(np.flatnonzero(first).tolist(), np.flatnonzero(last).tolist(),
                            strict=True):
                onset, offset = int(segment[a]) * SEGMENT, min((int(segment[b]) + 1) * SEGMENT,
                                                               end)
                if offset > onset:
                    events.append((clip, onset, offset, self.classes[int(column[a])]))
                    files.append(soft.path)
                    lines.append(int(line[a]))
        return EventList.from_rows(events, clips=tuple(self.clips),
                                   files=np.asarray(files, dtype=object),
                                   rows=np.asarray(lines, dtype=np.int64),
                                   clip_rows={c: (s.path, 1) for c, s in self.clips.items()})

    def select(self, clips: Sequence[str]) -> SoftLabels:
        """The soft labels of those of ``clips`` that have any, in that order."""
        return SoftLabels(self.classes, {c: self.clips[c] for c in clips if c in self.clips},
                          self.duplicates)

    def check_covers(self, clips: Sequence[str]) -> None:
        """Refuse soft labels that name none of ``clips`` (those of another corpus); a clip
        they do not name has no annotated segment."""
        if clips and not any(c in self.clips for c in clips):
            raise TraceFormatError(f"the soft labels name none of the audited clips (first: "
                                   f"{clips[0]!r}); give the soft labels of the audited "
                                   "reference")

    def softness(self, clips: Sequence[str], classes: Sequence[str]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Per clip × class: the summed ambiguity ``1 − |2s − 1|`` of the annotated segments
        (``s > 0``) in thousandths, and their number (0 for a clip or class without soft
        labels). Their ratio (over clips) is the class's mean ambiguity: 0 when every
        annotated segment is certain (``s = 1``), 1 when every one sits at 0.5."""
        units = np.zeros((len(clips), len(classes)), dtype=np.int64)
        counts = np.zeros_like(units)
        column = {c: k for k, c in enumerate(self.classes)}
        for i, clip in enumerate(clips):
            soft = self.clips.get(clip)
            for j, cls in enumerate(classes):
                if soft is None or cls not in column:
                    continue
                values = soft.value[(soft.column == column[cls]) & (soft.value > 0)]
                units[i, j] = int(np.rint(1000 * (1 - np.abs(2 * values - 1))).sum())
                counts[i, j] = len(values)
        return units, counts

    def rows(self) -> list[tuple[str, float, float, str, float]]:
        """``(clip, onset, offset, class, soft)`` of every non-zero value, by clip, segment and
        class: the rows of a soft-label tsv."""
        out = []
        for clip, soft in self.clips.items():
            keep = soft.value != 0
            for k, j, v in zip(soft.segment[keep].tolist(), soft.column[keep].tolist(),
                               soft.value[keep].tolist(), strict=True):
                out.append((clip, k * SEGMENT, float(min((k + 1) * SEGMENT, soft.end)),
                            self.classes[j], v))
        return out


def _number(text: str, path: str, line: int, column: str) -> float:
    value = parse_number(text)
    if value is None or not math.isfinite(value):
        raise TraceFormatError(f"{text!r} is not a finite number", path=path, row=line,
                               column=column)
    return value


def soft_row(fields: Sequence[str], file: str, path: str, line: int,
              names: Sequence[str]) -> SoftRow:
    """One row's fields (``onset offset label soft`` of ``file``) checked: times on the
    segment grid, a value in [0, 1]."""
    onset_name, offset_name, label_name, value_name = names
    onset = _number(fields[0], path, line, onset_name)
    offset = _number(fields[1], path, line, offset_name)
    value = _number(fields[3], path, line, value_name)
    if not 0 <= value <= 1:
        raise TraceFormatError(f"soft value {fields[3]!r} is outside [0, 1]", path=path,
                               row=line, column=value_name)
    k = round(onset / SEGMENT)
    if onset < 0 or abs(onset - k * SEGMENT) > _TOLERANCE:
        raise TraceFormatError(f"onset {fields[0]!r} is not on the {SEGMENT:g} s grid of soft "
                               "labels", path=path, row=line, column=onset_name)
    if offset > MAX_SECONDS:
        raise TraceFormatError(f"time {fields[1]!r} s is past the latest supported time "
                               f"({MAX_SECONDS:g} s)", path=path, row=line, column=offset_name)
    if not onset < offset <= onset + SEGMENT + _TOLERANCE:
        raise TraceFormatError(f"row from {fields[0]} to {fields[1]} s is not one segment of "
                               f"at most {SEGMENT:g} s", path=path, row=line, column=offset_name)
    if not fields[2]:
        raise TraceFormatError("missing class name", path=path, row=line, column=label_name)
    return SoftRow(file, k * SEGMENT, offset, fields[2], value, path, line)


def collect(rows: Iterable[SoftRow], classes: Sequence[str] | None = None,
            known: Sequence[str] | None = None) -> SoftLabels:
    """Soft labels of ``classes`` (default: every class named, sorted) from checked rows: a
    class outside ``known`` (when given) is an error; a class not in ``classes`` is left out;
    two rows of one segment and class must agree (a repeat is counted, a conflict names both
    rows)."""
    rows = list(rows)
    if classes is None:
        classes = sorted({r.label for r in rows})
    known_set, column = set(known or ()), {c: k for k, c in enumerate(classes)}
    by_clip: dict[str, list[SoftRow]] = {}
    for row in rows:
        if known is not None and row.label not in known_set:
            raise TraceFormatError(f"unknown class {row.label!r}; the soft labels know "
                                   f"{', '.join(map(repr, known))}", path=row.path,
                                   row=row.line, column="event_label")
        by_clip.setdefault(row.file, []).append(row)
    clips, duplicates = {}, 0
    for clip, items in by_clip.items():
        kept: list[SoftRow] = []
        seen: dict[tuple[int, str], SoftRow] = {}
        for row in items:
            k = round(row.onset / SEGMENT)
            first = seen.setdefault((k, row.label), row)
            if first is not row:
                if first.value != row.value:
                    raise TraceFormatError(
                        f"segment {row.onset:g}–{row.onset + SEGMENT:g} s of {row.label!r} "
                        f"has soft value {row.value:g} here and {first.value:g} on row "
                        f"{first.line} of {Path(first.path).name}", path=row.path, row=row.line,
                        column="confidence")
                duplicates += 1
            elif row.label in column:
                kept.append(row)
        segment = np.array([round(r.onset / SEGMENT) for r in kept], dtype=np.int64)
        col = np.array([column[r.label] for r in kept], dtype=np.int64)
        order = np.lexsort((col, segment))
        clips[clip] = SoftClip(
            clip, items[0].path, segment[order], col[order],
            np.array([r.value for r in kept], dtype=np.float64)[order],
            np.array([r.line for r in kept], dtype=np.int64)[order],
            max(round(r.onset / SEGMENT) for r in items) + 1, max(r.offset for r in items),
            len(classes))
    return SoftLabels(tuple(classes), clips, duplicates)


def annotation_rows(path: str | Path, clip: str) -> list[SoftRow]:
    """The rows of one MAESTRO annotation file (``onset offset label soft``, no header)."""
    path = Path(path)
    out = []
    for line, fields in read_fields(path):
        if len(fields) != 4:
            raise TraceFormatError(f"{len(fields)} columns; a soft-label row is 'onset offset "
                                   "label soft' (tab-separated)", path=str(path), row=line)
        out.append(soft_row(fields, clip, str(path), line,
                             ("onset", "offset", "label", "soft")))
    return out


def read_soft_tsv(path: str | Path, classes: Sequence[str] | None = None,
                  known: Sequence[str] | None = None) -> SoftLabels:
    """A soft-label tsv ``filename onset offset event_label confidence`` (header required)."""
    path = Path(path)
    numbered = read_fields(path)
    header = [f.lower() for f in numbered[0][1]] if numbered else []
    if not set(SOFT_COLUMNS) <= set(header):
        raise TraceFormatError(f"a soft-label tsv has the header {' '.join(SOFT_COLUMNS)} "
                               "(tab-separated)", path=str(path), row=numbered[0][0] if numbered
                               else 1)
    where = [header.index(c) for c in SOFT_COLUMNS]
    rows = []
    for line, fields in numbered[1:]:
        if len(fields) != len(header):
            raise TraceFormatError(f"{len(fields)} columns, the header has {len(header)}",
                                   path=str(path), row=line)
        values = [fields[k] for k in where]
        if not values[0]:
            raise TraceFormatError("missing value", path=str(path), row=line,
                                   column="filename")
        rows.append(soft_row(values[1:], clip_id(values[0]), str(path), line,
                              SOFT_COLUMNS[1:]))
    return collect(rows, classes, known)


def soft_tsv(labels: SoftLabels, *, extension: str = ".wav") -> str:
    """The text of a soft-label tsv with a header."""
    lines = ["\t".join(SOFT_COLUMNS)]
    lines += [f"{clip}{extension}\t{on!r}\t{off!r}\t{label}\t{value!r}"
              for clip, on, off, label, value in labels.rows()]
    return "\n".join(lines) + "\n"
