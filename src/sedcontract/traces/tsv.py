"""DCASE tab-separated files: events ``filename onset offset event_label`` and durations
``filename duration``. The clip id is the filename without its audio extension."""

from __future__ import annotations

import math
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from sedcontract.errors import SedContractError, TraceFormatError, of_kind
from sedcontract.outputs import atomic_write
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS
from sedcontract.traces.names import shorten

EVENT_COLUMNS = ("filename", "onset", "offset", "event_label")
DURATION_COLUMNS = ("filename", "duration")
GROUP_COLUMNS = ("filename", "group")
AUDIO_EXTENSIONS = (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac")


def clip_id(filename: str) -> str:
    """``Y1.wav`` → ``Y1``; names without an audio extension are kept whole (``a_1.000``)."""
    name = filename.strip()
    for ext in AUDIO_EXTENSIONS:
        if name.lower().endswith(ext):
            return name[: -len(ext)]
    return name


def given_files(paths: Iterable[str | Path], find: Callable[[Path], list[Path]], *,
                none_here: str, missing: str) -> list[Path]:
    """Each of ``paths`` a file, or a folder whose files ``find`` lists (sorted); a folder
    where it finds none, or a path that is neither, is an error: ``{path}: {none_here}`` or
    ``{path}: {missing}``."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(find(path))
            if not found:
                raise SedContractError(f"{path}: {none_here}")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise SedContractError(f"{path}: {missing}")
    return out


def regular_file(path: Path) -> Path:
    """``path`` if it is a regular file (checked before opening: a pipe would block the
    reader forever), else an error naming it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise TraceFormatError("file not found", path=str(path)) from None
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    if not stat.S_ISREG(mode):
        raise TraceFormatError("not a regular file (a folder, pipe, device or socket); give "
                               "a file", path=str(path))
    return path


def read_fields(path: Path) -> list[tuple[int, list[str]]]:
    """The non-blank lines of a tab-separated file as ``(line number, fields)``.

    The format rules (docs/guard-report.md, "How tsv files are read"): UTF-8, a byte-order
    mark is ignored; lines end at ``\\n`` (or ``\\r\\n``) only, so a label may hold any other
    character; fields are separated by tabs and stripped of surrounding spaces; a field written
    in double quotes is unquoted (``""`` inside stands for one quote); a line starting with
    ``#`` is an error, not a comment (the format has none).
    """
    return [(number, split_fields(line, path, number)) for number, line in iter_lines(path)]


def split_fields(line: str, path: Path, row: int) -> list[str]:
    """One line's tab-separated fields, stripped and unquoted (:func:`read_fields`)."""
    if _TO_STRIP.search(line):
        return [_unquote(f, path, row) for f in line.split("\t")]
    return line.split("\t")  # nothing to strip or unquote (score files: all numbers)


_TO_STRIP = re.compile(r'"|[^\S\t]')  # a quote, or whitespace other than the separator


def read_lines(path: Path) -> list[tuple[int, str]]:
    """The non-blank lines of a text file as ``(line number, text)`` (the rules of
    :func:`read_fields`, before the line is split)."""
    return list(iter_lines(path))


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """:func:`read_lines` one line at a time (the text is read whole, the lines are not
    kept)."""
    try:
        text = regular_file(path).read_text(encoding="utf-8-sig")  # a BOM is not data
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                               path=str(path)) from None
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    start, number = 0, 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line, start, number = text[start:end].removesuffix("\r"), end + 1, number + 1
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            raise TraceFormatError(f"{shorten(line)!r} starts with '#': the format has no "
                                   "comment lines; delete the line", path=str(path),
                                   row=number)
        yield number, line


MAX_HEADER_BYTES = 1 << 24  # a header line longer than this is not a header
BOM = b"\xef\xbb\xbf"


def first_line(path: Path) -> tuple[int, str] | None:
    """The first non-blank line of a file as ``(line number, text)`` (None for none), read
    from the file's start alone, by the rules of :func:`read_lines`."""
    data = b""
    try:
        with open(regular_file(path), "rb") as f:
            while True:
                block = f.read(1 << 16)
                data += block
                cut = data.rfind(b"\n")
                if not block or (cut >= 0 and data[:cut].removeprefix(BOM).strip()):
                    break
                if len(data) > MAX_HEADER_BYTES:
                    raise TraceFormatError(f"no line break in the first {MAX_HEADER_BYTES:,} "
                                           "bytes: not a table of lines", path=str(path))
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    end = data.rfind(b"\n")
    head = data if not block else data[:end]  # complete lines only, unless the file ended
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                               path=str(path)) from None
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            if line.lstrip().startswith("#"):
                raise TraceFormatError(f"{shorten(line)!r} starts with '#': the format has no "
                                       "comment lines; delete the line", path=str(path),
                                       row=number)
            return number, line
    return None


def header_names(path: Path) -> list[str]:
    """The lower-case names of a table's first line, split at tabs or commas and unquoted
    (empty for an empty file): what a reader looks at to tell what kind of table it is."""
    first = first_line(path)
    return [] if first is None else [f.strip().strip('"').lower()
                                     for f in re.split("[\t,]", first[1])]


def scan_lines(path: Path) -> tuple[int, bool]:
    """How many lines a file has (a last line without its newline counts), and whether it is
    plain: printable ASCII, tabs and line ends only (``\\r`` only before ``\\n``), where
    numpy's number parser reads exactly what :func:`parse_number` does. Read in blocks, held
    nowhere: what a reader checks against its bounds before it holds anything."""
    count, last, plain = 0, b"\n", True
    try:
        with open(regular_file(path), "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                count, last = count + block.count(b"\n"), block[-1:]
                plain = plain and _UNPLAIN.search(block) is None
    except OSError as exc:
        raise TraceFormatError(f"cannot read ({exc.strerror})", path=str(path)) from None
    return count + (last != b"\n"), plain


# a byte outside printable ASCII, tabs and line ends, or a carriage return not ending a line
# (one at a block's end reads as unplain: the careful path then reads the file)
_UNPLAIN = re.compile(rb"[^\t\n\r\x20-\x7e]|\r(?!\n)")


def _unquote(field: str, path: Path, row: int) -> str:
    field = field.strip()
    if not field.startswith('"'):
        return field
    inner = field[1:-1] if len(field) > 1 and field.endswith('"') else None
    if inner is None or '"' in inner.replace('""', ""):
        raise TraceFormatError(f"unbalanced double quote in {shorten(field)!r} (a quoted field "
                               'ends with \'"\' and writes a quote inside as \'""\')',
                               path=str(path), row=row)
    return inner.replace('""', '"')


def _quote(field: str) -> str:
    """A field as written: quoted when it starts with a quote or with or ends in spaces, so
    it reads back unchanged."""
    if any(c in field for c in "\t\n\r"):
        raise TraceFormatError(f"{field!r} holds a tab or line break, which a tsv field cannot "
                               "hold")
    if field.startswith('"') or field != field.strip():
        return '"' + field.replace('"', '""') + '"'
    return field


def _split_commas(line: str, path: Path, row: int) -> list[str]:
    """One CSV line's fields: commas outside double quotes separate, each field unquoted as
    in a tsv (``""`` inside a quoted field is one quote)."""
    fields, start, quoted = [], 0, False
    for i, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            fields.append(line[start:i])
            start = i + 1
    fields.append(line[start:])
    return [_unquote(f, path, row) for f in fields]


def _comma_header(lines: list[tuple[int, str]], path: Path) -> list[str] | None:
    """The header of a comma-separated file (a first line with commas and no tab), else
    None."""
    if not lines or "\t" in lines[0][1] or "," not in lines[0][1]:
        return None
    return [f.lower() for f in _split_commas(lines[0][1], path, lines[0][0])]


def _read_table(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows as ``(line number, {column: text})``; a header row (the first non-blank line, if
    its first field is ``columns[0]`` or it names every column) is optional and may order the
    columns and add others (the DCASE 2024 baseline writes ``event_label onset offset
    filename``). A comma-separated file whose header names every column is read as CSV (pandas
    writes ``,event_label,onset,offset,filename``: the unnamed index column is ignored); one
    without that header is refused, saying what it looks like."""
    lines = read_lines(path)
    comma = _comma_header(lines, path)
    if comma is not None and not set(columns) <= set(comma):
        raise TraceFormatError(
            f"this looks comma-separated (a CSV: {shorten(lines[0][1])!r}) without a "
            f"header naming {', '.join(columns)}; give the CSV that header (any order; "
            "other columns, such as pandas' unnamed index, are ignored) or write the file "
            "tab-separated", path=str(path), row=lines[0][0])
    rows = [(number, _split_commas(line, path, number) if comma is not None
             and "\t" not in line else split_fields(line, path, number))
            for number, line in lines]
    names, header_row = list(columns), None
    if rows and (rows[0][1][0].lower() == columns[0]
                 or set(columns) <= {f.lower() for f in rows[0][1]}):
        header_row, header = rows.pop(0)
        names = [c.lower() for c in header]
        missing = [c for c in columns if c not in names]
        if missing:
            raise TraceFormatError(f"header lacks column(s) {', '.join(missing)}; expected "
                                   f"{' '.join(columns)} (tab-separated)", path=str(path),
                                   row=header_row)
        twice = sorted(c for c, count in Counter(names).items() if count > 1 and c)
        if twice:
            raise TraceFormatError(f"header names column {twice[0]!r} twice", path=str(path),
                                   row=header_row, column=twice[0])
    table = []
    for line, fields in rows:
        if len(fields) == 1 and len(fields[0].split()) > 1:
            raise TraceFormatError(f"one column {shorten(fields[0])!r}: fields must be "
                                   "separated by tabs, not spaces", path=str(path), row=line)
        if len(fields) == 1 and comma is None and len(names) > 1:
            _refuse_other_separator(fields[0], columns, path, line)
        if len(fields) > len(names) and any(fields[len(names):]):
            source = "the header names" if header_row else "expected"
            raise TraceFormatError(f"{len(fields)} columns; {source} {len(names)}: "
                                   f"{' '.join(names)} (tab-separated)", path=str(path),
                                   row=line)
        table.append((line, {name: (fields[i] if i < len(fields) else "")
                             for i, name in enumerate(names)}))
    return table


def _refuse_other_separator(field: str, columns: tuple[str, ...], path: Path, row: int) -> None:
    """Refuse a one-field line that another separator splits into the file's columns: a
    semicolon- or bar-separated file would otherwise read as clips without events."""
    for separator in (",", ";", "|"):
        if len(field.split(separator)) < len(columns):
            continue
        if separator == ",":
            raise TraceFormatError(f"one column {shorten(field)!r}: this looks comma-separated "
                                   "(a CSV) without a header; give it the header "
                                   f"{','.join(columns)} or write it tab-separated",
                                   path=str(path), row=row)
        raise TraceFormatError(f"one column {shorten(field)!r}: this looks separated by "
                               f"{separator!r}, not by tabs; write it tab-separated (or as a "
                               f"CSV with the header {','.join(columns)})", path=str(path),
                               row=row)


# a decimal number as written in tsv files: no underscores, no hex ('inf' and 'nan' are read so
# that the finiteness check can name them)
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|inf|infinity|nan)\Z", re.IGNORECASE)


def parse_number(value: str) -> float | None:
    """The value of a decimal number (``1.5``, ``-2``, ``3e-2``), None if it is not one
    (Python's ``float`` would also take ``1_5`` as 15)."""
    return float(value) if _NUMBER.match(value) else None


def _time(value: str, *, path: Path, row: int, column: str) -> float:
    if value == "":
        raise TraceFormatError("missing value", path=str(path), row=row, column=column)
    number = parse_number(value)
    if number is None:
        raise TraceFormatError(f"{shorten(value)!r} is not a number", path=str(path), row=row,
                               column=column)
    return number


class _ClipIds:
    """Clip ids of one file, one string object per clip (its rows share it, so later lookups
    hash it once); two different filenames naming one clip (``a.wav`` and ``a.flac``) are an
    error, not a silent merge."""

    def __init__(self, path: Path) -> None:
        self.path, self.first = path, {}
        self.of_name: dict[str, str] = {}

    def __call__(self, name: str, line: int) -> str:
        clip = self.of_name.get(name)
        if clip is not None:
            return clip
        clip = self.of_name[name] = clip_id(name)
        seen = self.first.setdefault(clip, (name, line))
        if seen[0] != name:
            raise TraceFormatError(f"{name!r} and {seen[0]!r} (row {seen[1]}) are both clip "
                                   f"{clip!r} (the clip id drops the audio extension); name "
                                   "each clip one way", path=str(self.path), row=line,
                                   column="filename")
        return clip


def read_events(path: str | Path) -> EventList:
    """Read a DCASE event tsv; a row with only a filename declares a clip without events."""
    path = Path(path)
    clips, onsets, offsets, labels, lines = [], [], [], [], []
    seen: dict[str, tuple[str, int]] = {}
    clip_of = _ClipIds(path)
    label_of: dict[str, str] = {}  # one string object per label, as per clip
    table = _read_table(path, EVENT_COLUMNS)
    if table and "confidence" in table[0][1]:
        raise TraceFormatError("this file holds soft labels (a 'confidence' column); derive "
                               "hard reference events first: sedcontract data maestro --soft "
                               f"{path} --out DIR", path=str(path), row=1, column="confidence")
    for line, row in table:
        name = row.get("filename", "")
        if not name:
            raise TraceFormatError("missing value", path=str(path), row=line, column="filename")
        clip = clip_of(name, line)
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
        labels.append(label_of.setdefault(rest[2], rest[2]))
        lines.append(line)
    return EventList(np.asarray(clips, dtype=object), np.asarray(onsets, dtype=np.float64),
                     np.asarray(offsets, dtype=np.float64), np.asarray(labels, dtype=object),
                     clips=tuple(seen), path=str(path), rows=np.asarray(lines, dtype=np.int64),
                     clip_rows=seen)


CLIP_LISTS = ("ref", "durations")


def with_clips(events: EventList, clips: Iterable[str]) -> EventList:
    """``events`` also listing ``clips`` (clips without events: a DCASE ground truth names only
    the clips that have events, its durations file names them all)."""
    return EventList(events.clip, events.onset, events.offset, events.label,
                     clips=(*events.clips, *clips), path=events.path, rows=events.rows,
                     files=events.files, clip_rows=events.clip_rows)


def events_tsv(events: EventList, *, extension: str = ".wav") -> str:
    """The text of a DCASE event tsv with a header; clips without events get a filename-only
    row."""
    of_kind("events", events, EventList)
    with_events = set(events.clip.tolist())
    lines = ["\t".join(EVENT_COLUMNS)]
    lines += [f"{_quote(clip + extension)}\t{onset!r}\t{offset!r}\t{_quote(label)}"
              for clip, onset, offset, label in events.to_rows()]
    lines += [f"{_quote(clip + extension)}\t\t\t" for clip in events.clips
              if clip not in with_events]
    return "\n".join(lines) + "\n"


def write_events(path: str | Path, events: EventList, *, extension: str = ".wav",
                 inputs: Iterable[str | Path | None] = ()) -> None:
    """Write :func:`events_tsv` atomically (never onto one of ``inputs``)."""
    atomic_write(path, events_tsv(events, extension=extension), inputs=inputs)


def read_durations(path: str | Path) -> dict[str, float]:
    """Read a durations tsv into ``{clip: seconds}``."""
    return {clip: value for clip, (value, _) in read_duration_rows(path).items()}


def read_duration_rows(path: str | Path) -> dict[str, tuple[float, int]]:
    """Read a durations tsv into ``{clip: (seconds, row)}``: the row names a clip in a later
    message."""
    path = Path(path)
    durations: dict[str, tuple[float, int]] = {}
    clip_of = _ClipIds(path)
    for line, row in _read_table(path, DURATION_COLUMNS):
        name = row.get("filename", "")
        if not name:
            raise TraceFormatError("missing value", path=str(path), row=line, column="filename")
        value = _time(row.get("duration", ""), path=path, row=line, column="duration")
        if not math.isfinite(value) or not 0 <= value <= MAX_SECONDS:
            raise TraceFormatError(f"duration {value!r} is not a time in [0, {MAX_SECONDS:g}] s",
                                   path=str(path), row=line, column="duration")
        clip = clip_of(name, line)
        if clip in durations and durations[clip][0] != value:
            raise TraceFormatError(f"clip {clip!r} listed twice with different durations",
                                   path=str(path), row=line, column="duration")
        durations.setdefault(clip, (value, line))
    return durations


def read_groups(path: str | Path) -> dict[str, str]:
    """Read a groups tsv (``filename  group``: the recording each clip was cut from) into
    ``{clip: group}``; a clip listed twice with two groups is an error naming the row."""
    path = Path(path)
    groups: dict[str, str] = {}
    clip_of = _ClipIds(path)
    for line, row in _read_table(path, GROUP_COLUMNS):
        for column in GROUP_COLUMNS:
            if not row.get(column, ""):
                raise TraceFormatError("missing value", path=str(path), row=line, column=column)
        clip = clip_of(row["filename"], line)
        if groups.setdefault(clip, row["group"]) != row["group"]:
            raise TraceFormatError(f"clip {clip!r} listed twice with different groups",
                                   path=str(path), row=line, column="group")
    return groups


def write_durations(path: str | Path, durations: Mapping[str, float], *,
                    extension: str = ".wav", inputs: Iterable[str | Path | None] = ()) -> None:
    """Write :func:`durations_tsv` atomically (never onto one of ``inputs``)."""
    atomic_write(path, durations_tsv(durations, extension=extension), inputs=inputs)


def durations_tsv(durations: Mapping[str, float], *, extension: str = ".wav") -> str:
    """The text of a durations tsv with a header."""
    lines = ["\t".join(DURATION_COLUMNS)]
    lines += [f"{_quote(clip + extension)}\t{float(duration)!r}"
              for clip, duration in durations.items()]
    return "\n".join(lines) + "\n"
