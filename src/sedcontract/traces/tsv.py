"""DCASE tab-separated files: events ``filename onset offset event_label`` and durations
``filename duration``. The clip id is the filename without its audio extension."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.events import EventList

EVENT_COLUMNS = ("filename", "onset", "offset", "event_label")
DURATION_COLUMNS = ("filename", "duration")
AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac")


def clip_id(filename: str) -> str:
    """``Y1.wav`` → ``Y1``; names without an audio extension are kept whole (``a_1.000``)."""
    name = filename.strip()
    for ext in AUDIO_EXTENSIONS:
        if name.lower().endswith(ext):
            return name[: -len(ext)]
    return name


def _read_table(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows as ``(line number, {column: text})``; a header row is optional."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not data
    except FileNotFoundError:
        raise TraceFormatError("file not found", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                               path=str(path)) from None
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    lines = text.splitlines()
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    start, names = 0, list(columns)
    if rows and rows[0] and rows[0][0].strip().lower() == columns[0]:
        names = [c.strip().lower() for c in rows[0]]
        missing = [c for c in columns if c not in names]
        if missing:
            raise TraceFormatError(f"header lacks column(s) {', '.join(missing)}; expected "
                                   f"{' '.join(columns)} (tab-separated)", path=str(path), row=1)
        start = 1
    table = []
    for index in range(start, len(rows)):
        fields = rows[index]
        if not any(f.strip() for f in fields):
            continue
        if len(fields) == 1 and len(fields[0].split()) > 1:
            raise TraceFormatError(f"one column {fields[0]!r}: fields must be separated by tabs, "
                                   "not spaces", path=str(path), row=index + 1)
        if start == 0 and len(fields) > len(names) and any(f.strip() for f in fields[len(names):]):
            raise TraceFormatError(f"{len(fields)} columns; expected {' '.join(columns)} "
                                   "(tab-separated)", path=str(path), row=index + 1)
        table.append((index + 1, {name: (fields[i].strip() if i < len(fields) else "")
                                  for i, name in enumerate(names)}))
    return table


def _time(value: str, *, path: Path, row: int, column: str) -> float:
    if value == "":
        raise TraceFormatError("missing value", path=str(path), row=row, column=column)
    try:
        return float(value)
    except ValueError:
        raise TraceFormatError(f"{value!r} is not a number", path=str(path), row=row,
                               column=column) from None


def read_events(path: str | Path) -> EventList:
    """Read a DCASE event tsv; a row with only a filename declares a clip without events."""
    path = Path(path)
    clips, onsets, offsets, labels, lines = [], [], [], [], []
    seen: dict[str, tuple[str, int]] = {}
    for line, row in _read_table(path, EVENT_COLUMNS):
        name = row.get("filename", "")
        if not name:
            raise TraceFormatError("missing value", path=str(path), row=line, column="filename")
        clip = clip_id(name)
        seen.setdefault(clip, (str(path), line))
        rest = [row.get(c, "") for c in EVENT_COLUMNS[1:]]
        if not any(rest):
            continue
        for column, value in zip(EVENT_COLUMNS[1:], rest, strict=True):
            if value == "":
                raise TraceFormatError("missing value (a row needs filename, onset, offset and "
                                       "event_label, or a filename alone)", path=str(path),
                                       row=line, column=column)
        clips.append(clip)
        onsets.append(_time(rest[0], path=path, row=line, column="onset"))
        offsets.append(_time(rest[1], path=path, row=line, column="offset"))
        labels.append(rest[2])
        lines.append(line)
    return EventList(np.asarray(clips, dtype=object), np.asarray(onsets, dtype=np.float64),
                     np.asarray(offsets, dtype=np.float64), np.asarray(labels, dtype=object),
                     clips=tuple(seen), path=str(path), rows=np.asarray(lines, dtype=np.int64),
                     clip_rows=seen)


def write_events(path: str | Path, events: EventList, *, extension: str = ".wav") -> None:
    """Write a DCASE event tsv with a header; clips without events get a filename-only row."""
    path = Path(path)
    with_events = set(events.clip.tolist())
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(EVENT_COLUMNS) + "\n")
        for clip, onset, offset, label in events.to_rows():
            f.write(f"{clip}{extension}\t{onset!r}\t{offset!r}\t{label}\n")
        for clip in events.clips:
            if clip not in with_events:
                f.write(f"{clip}{extension}\t\t\t\n")


def read_durations(path: str | Path) -> dict[str, float]:
    """Read a durations tsv into ``{clip: seconds}``."""
    path = Path(path)
    durations: dict[str, float] = {}
    for line, row in _read_table(path, DURATION_COLUMNS):
        name = row.get("filename", "")
        if not name:
            raise TraceFormatError("missing value", path=str(path), row=line, column="filename")
        value = _time(row.get("duration", ""), path=path, row=line, column="duration")
        if not math.isfinite(value) or value < 0:
            raise TraceFormatError(f"duration {value!r} is not a finite non-negative time",
                                   path=str(path), row=line, column="duration")
        clip = clip_id(name)
        if clip in durations and durations[clip] != value:
            raise TraceFormatError(f"clip {clip!r} listed twice with different durations",
                                   path=str(path), row=line, column="duration")
        durations[clip] = value
    return durations


def write_durations(path: str | Path, durations: dict[str, float], *,
                    extension: str = ".wav") -> None:
    """Write a durations tsv with a header."""
    with Path(path).open("w", encoding="utf-8", newline="") as f:
        f.write("\t".join(DURATION_COLUMNS) + "\n")
        for clip, duration in durations.items():
            f.write(f"{clip}{extension}\t{float(duration)!r}\n")
