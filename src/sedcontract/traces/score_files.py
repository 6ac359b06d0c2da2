"""Frame scores (sed_scores_eval layout: one tsv per clip, ``onset offset <class…>``), read one
clip at a time, and the events the declared decision policy
(:mod:`sedcontract.traces.decision`) makes of them."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.activity import runs
from sedcontract.traces.classmap import ClassMap
from sedcontract.traces.decision import DecisionPolicy, decide
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS, to_us
from sedcontract.traces.tsv import (
    EVENT_COLUMNS,
    clip_id,
    first_line,
    header_names,
    iter_lines,
    parse_number,
    read_durations,
    scan_lines,
    split_fields,
)
from sedcontract.traces.windows import Piece, check_windows, overlap_average, parse_window_id


@dataclass(frozen=True)
class ScoreTable:
    """One clip's frame scores: frame times and a ``[frames, classes]`` array."""

    onset: np.ndarray
    offset: np.ndarray
    classes: tuple[str, ...]
    scores: np.ndarray
    lines: np.ndarray  # the file line of every frame

    @property
    def hop(self) -> float:
        """The rows' length as a median filter counts frames of it: the median row, in whole
        microseconds (so float noise in the times never moves a filter by a frame)."""
        return float(np.median(to_us(self.offset) - to_us(self.onset))) / 1e6


# numbers one score file may hold (frames × columns): 512 MB as float64. A 10 s clip of 64 ms
# frames and 456 classes holds 72,000; a day of 20 ms frames and 10 classes 52 million
MAX_SCORE_CELLS = 1 << 26


def read_score_header(path: str | Path) -> tuple[int, list[str]]:
    """A score file's header row and fields, ``onset offset <class…>``, read from its first
    lines alone (a folder's classes are known without reading its first table)."""
    path = Path(path)
    first = first_line(path)
    header = split_fields(first[1], path, first[0]) if first is not None else []
    if header[:2] != ["onset", "offset"] or len(header) < 3:
        hint = (": this is a table of events (an operating point, or a system's output), not "
                "frame scores; give a folder of such tables with --pred-points, one table with "
                "--pred") if set(EVENT_COLUMNS) <= set(header_names(path)) else ""
        raise TraceFormatError("a score file starts with the header 'onset offset <class…>' "
                               f"(tab-separated){hint}", path=str(path),
                               row=first[0] if first is not None else 1)
    header_row = first[0]
    counts = Counter(header)
    for column in header[2:]:
        if not column:
            raise TraceFormatError("a class column has no name", path=str(path),
                                   row=header_row)
        if counts[column] > 1:
            raise TraceFormatError(f"the header names class {column!r} twice", path=str(path),
                                   row=header_row, column=column)
    return header_row, header


def read_scores(path: str | Path) -> ScoreTable:
    """Read one score tsv; names the file, row and column of any bad value. Frames must tile
    time: in order, each starting where the previous one ends (a gap, an overlap or a
    shuffled row is an error, as sed_scores_eval's PSDS would refuse it). A file of more
    than :data:`MAX_SCORE_CELLS` numbers is refused from its line count, before it is read;
    memory follows its numbers (8 bytes each), not its text."""
    path = Path(path)
    header_row, header = read_score_header(path)
    lines, plain = scan_lines(path)
    frames = lines - header_row  # at most: blank lines are not frames
    if frames * len(header) > MAX_SCORE_CELLS:
        raise TraceFormatError(f"{frames:,} frames × {len(header)} columns is more than the "
                               f"{MAX_SCORE_CELLS:,} numbers one score file may hold; score a "
                               "long recording in windows (--windows) or on a coarser grid",
                               path=str(path))
    values = _fast_values(path, header_row, len(header), frames) if plain else None
    if values is not None and score_cells_ok(values[:, :2], values[:, 2:]):
        lines_of = np.arange(header_row + 1, header_row + 1 + len(values), dtype=np.int64)
        check_tiling(values[:, 0], values[:, 1], lines_of, path)
        return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:],
                          lines_of)
    values = np.empty((frames, len(header)))  # a bad value (or blank lines): read line by line
    lines_of = np.empty(frames, dtype=np.int64)
    k = 0
    for r, line in iter_lines(path):
        if r <= header_row:
            continue
        fields = split_fields(line, path, r)
        if len(fields) != len(header):
            raise TraceFormatError(f"{len(fields)} columns, the header has {len(header)}",
                                   path=str(path), row=r)
        for c, text in enumerate(fields):
            number = parse_number(text)
            if number is None:
                raise TraceFormatError(f"{text!r} is not a number", path=str(path), row=r,
                                       column=header[c])
            problem = cell_problem(number, time=c < 2)
            if problem:
                raise TraceFormatError(f"{text!r} {problem}", path=str(path), row=r,
                                       column=header[c])
            values[k, c] = number
        lines_of[k] = r
        k += 1
    values, lines_of = values[:k], lines_of[:k]
    check_tiling(values[:, 0], values[:, 1], lines_of, path)
    return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:], lines_of)


def cell_problem(value: float, *, time: bool) -> str:
    """What is wrong with one number of a score table, '' if nothing: a time must be finite
    and within ±:data:`MAX_SECONDS`; a score may also be ``-inf`` or ``+inf`` (SEBB
    post-processing writes ``-inf`` outside its boxes; sed_scores_eval reads them), never
    NaN."""
    if math.isnan(value):
        return "is not a number (NaN)" + ("" if time else "; a score may be -inf or +inf, "
                                          "never NaN")
    if abs(value) > MAX_SECONDS and (time or math.isfinite(value)):
        return f"is not a finite number within ±{MAX_SECONDS:g}" if time else \
            f"is beyond ±{MAX_SECONDS:g} (an infinite score is written -inf or inf)"
    return ""


def bad_scores(scores: np.ndarray) -> np.ndarray:
    """Where scores fail :func:`cell_problem`: NaN, or finite beyond ±:data:`MAX_SECONDS`."""
    return np.isnan(scores) | (np.isfinite(scores) & (np.abs(scores) > MAX_SECONDS))


def score_cells_ok(times: np.ndarray, scores: np.ndarray) -> bool:
    """Whether every cell of a table passes :func:`cell_problem`, checked on whole arrays."""
    return bool((np.abs(times) <= MAX_SECONDS).all() and not bad_scores(scores).any())


def _fast_values(path: Path, header_row: int, width: int, frames: int) -> np.ndarray | None:
    """Every row below the header of a plain file (:func:`~sedcontract.traces.tsv.scan_lines`)
    as numbers at once, by numpy's parser (on such text it reads exactly the decimal numbers
    of :func:`~sedcontract.traces.tsv.parse_number`, and ``inf``/``nan``, refused after);
    None when a row is not ``width`` numbers, or when blank lines make the rows' line numbers
    other than consecutive, so the line-by-line path names them."""
    if frames == 0:
        return np.empty((0, width))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's "input contained no data"
            values = np.loadtxt(path, delimiter="\t", skiprows=header_row, comments=None,
                                dtype=np.float64, ndmin=2, encoding="utf-8-sig")
    except (ValueError, UnicodeDecodeError):
        return None
    return values if values.shape == (frames, width) else None


def check_tiling(onset: np.ndarray, offset: np.ndarray, lines: np.ndarray,
                 path: Path | str) -> None:
    """Frames in time order, each of positive length, each starting where the previous ends,
    the first at 0 s (compared in microseconds); an error names ``path`` and the frame's
    line."""
    def fail(message: str, k: int, column: str = "onset") -> None:
        raise TraceFormatError(message, path=str(path), row=int(lines[k]), column=column)

    on, off = to_us(onset), to_us(offset)
    onset, offset = _Floats(onset), _Floats(offset)  # Python floats only for a message
    bad = np.flatnonzero(on < 0)
    if bad.size:
        fail(f"negative time {onset[bad[0]]!r}", bad[0])
    bad = np.flatnonzero(on[1:] < on[:-1])
    if bad.size:
        k = bad[0] + 1
        fail(f"rows are not in time order: this frame starts at {onset[k]!r} s, before the "
             f"frame of row {lines[k - 1]} ({onset[k - 1]!r} s); sort the rows by onset", k)
    bad = np.flatnonzero(off <= on)
    if bad.size:
        k = bad[0]
        fail(f"offset {offset[k]!r} is not after onset {onset[k]!r}", k, "offset")
    bad = np.flatnonzero(on[1:] != off[:-1])
    if bad.size:
        k = bad[0] + 1
        kind = "a gap after" if on[k] > off[k - 1] else "an overlap with"
        fail(f"this frame starts at {onset[k]!r} s but the frame of row {lines[k - 1]} ends "
             f"at {offset[k - 1]!r} s ({kind} it): score frames must follow each other "
             "without gaps or overlaps", k)
    if len(on) and on[0] > 0:
        fail(f"the first frame starts at {onset[0]!r} s, not at 0 s: score frames cover the "
             "clip from its start (PSDS would count nothing before this frame, and the "
             "decision no event there); add the frames before it", 0)


class _Floats:
    """Items of an array as Python floats (their repr is the shortest that reads back)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __getitem__(self, k: int) -> float:
        return float(self.values[k])


def cut_table(table: ScoreTable, duration: float) -> ScoreTable | None:
    """``table`` without its frames that start at or after ``duration`` and with its last
    frame ending there (PSDS's opt-in cut rule, ``--psds-cut``); None when no frame reaches
    past it (compared in microseconds)."""
    end = int(to_us(duration))
    if not len(table.offset) or int(to_us(table.offset[-1])) <= end:
        return None
    keep = to_us(table.onset) < end
    return replace(table, onset=table.onset[keep],
                   offset=np.minimum(table.offset[keep], float(duration)),
                   scores=table.scores[keep],
                   lines=None if table.lines is None else table.lines[keep])


def scores_tsv(scores: np.ndarray, classes: Sequence[str], hop: float) -> str:
    """One clip's frame scores ``[frames, classes]`` as a score tsv (the sed_scores_eval
    layout :func:`read_scores` reads): ``onset offset <class…>``, frame ``k`` covering
    ``[k·hop, (k+1)·hop)``."""
    lines = ["\t".join(("onset", "offset", *classes))]
    for k, row in enumerate(np.asarray(scores, dtype=np.float64)):
        lines.append("\t".join((f"{k * hop:.6f}", f"{(k + 1) * hop:.6f}",
                                *(f"{v:.6g}" for v in row))))
    return "\n".join(lines) + "\n"


def activity_to_events(active: np.ndarray, clips: Sequence[str], classes: Sequence[str],
                       hop: float, lengths: np.ndarray | None = None) -> EventList:
    """Events of Boolean activity ``[clips, classes, frames]`` on a grid of ``hop`` seconds:
    each maximal run of frames ``[s, e)`` becomes ``[s·hop, e·hop)``."""
    n_clips, n_classes, n = active.shape
    rows = None if lengths is None else np.repeat(np.asarray(lengths), n_classes)
    row, start, end = runs(active.reshape(n_clips * n_classes, n), rows)
    events = [(clips[r // n_classes], s * hop, e * hop, classes[r % n_classes])
              for r, s, e in zip(row.tolist(), start.tolist(), end.tolist(), strict=True)]
    return EventList.from_rows(events, clips=tuple(clips))


def score_files(directory: str | Path) -> list[Path]:
    """The score files of a directory: every ``*.tsv`` (any case of the suffix), sorted."""
    directory = Path(directory)
    if not directory.exists():
        raise TraceFormatError("no such directory (--pred-scores names a directory of score "
                               "files, one tsv per clip)", path=str(directory))
    if not directory.is_dir():
        raise TraceFormatError("is a file, not a directory (--pred-scores names a directory of "
                               "score files, one tsv per clip; give event tsv files with "
                               "--pred)", path=str(directory))
    files = sorted(p for p in directory.iterdir() if p.suffix.lower() == ".tsv" and p.is_file())
    if not files:
        raise TraceFormatError("no score files (*.tsv) in this directory", path=str(directory))
    return files


@dataclass(frozen=True)
class ScoreFolder:
    """A folder of score files, read one clip at a time (memory: one clip's tables): each
    clip's file, or window files (``F-SSSSSS-EEEEEE``, frame times relative to the window),
    found and checked from the names before any is read; every table mapped by
    ``class_map`` and, with ``keep``, cut to those columns. ``header``: the classes of the
    first file (after the map), which every file must name."""

    directory: Path
    files: Mapping[str, tuple[Path, ...]]  # clip → its file, or its window files by start
    header: tuple[str, ...]
    first: Path | None
    class_map: ClassMap | None = None
    windows: bool = False
    keep: tuple[str, ...] | None = None

    @classmethod
    def open(cls, directory: str | Path, expected: Sequence[str] | None = None, *,
             class_map: ClassMap | None = None, windows: bool = False,
             skipped: list[str] | None = None,
             durations: Mapping[str, float] | str | Path | None = None) -> ScoreFolder:
        """The score files of ``directory`` (clip id = file stem without an audio extension).
        ``expected`` (the reference clips) must each have scores, and a file of another clip
        is an error unless ``skipped`` is a list, which then receives its path (the DCASE 2024
        baseline writes DESED clips and MAESTRO chunks into one folder). A clip's windows must
        start at 0 s and, with its duration in ``durations`` (a mapping or a durations tsv),
        reach its end (:func:`~.windows.check_windows`)."""
        if isinstance(durations, str | Path):
            durations = read_durations(durations)
        directory = Path(directory)
        whole: dict[str, Path] = {}
        parts: dict[str, list[tuple[float, float, Path]]] = {}
        wanted = None if expected is None else set(expected)
        for path in score_files(directory):
            clip = clip_id(path.stem)
            window = parse_window_id(clip) if windows else None
            owner = clip if window is None else window[0]
            if wanted is not None and owner not in wanted:
                if skipped is not None:
                    skipped.append(str(path))
                    continue
                read_score_header(path)  # a table of events says so, naming --pred-points
                raise TraceFormatError(f"scores of clip {owner!r}, which the reference does "
                                       "not list", path=str(path))
            if window is not None:
                parts.setdefault(owner, []).append((window[1], window[2], path))
            elif clip in whole:
                raise TraceFormatError(f"{whole[clip].name} and {path.name} are both the "
                                       f"scores of clip {clip!r}", path=str(directory))
            else:
                whole[clip] = path
        for file, spans in parts.items():
            if file in whole:
                raise TraceFormatError(f"clip {file!r} has both a whole score file and window "
                                       "score files", path=str(whole[file]))
            check_windows(file, [(a, b, str(p)) for a, b, p in spans],
                          (durations or {}).get(file))
        files = {clip: (path,) for clip, path in whole.items()}
        files.update({clip: tuple(p for *_, p in sorted(spans, key=lambda w: w[:2]))
                      for clip, spans in parts.items()})
        missing = sorted(c for c in expected or () if c not in files)
        if missing:
            raise TraceFormatError(f"no score file for reference clip(s) "
                                   f"{', '.join(map(repr, missing[:5]))}"
                                   f"{' …' if len(missing) > 5 else ''} (expected e.g. "
                                   f"{directory / (missing[0] + '.tsv')}); a system scores "
                                   "every clip", path=str(directory))
        files = dict(sorted(files.items()))
        first = min((p for paths in files.values() for p in paths), default=None)
        header: tuple[str, ...] = ()
        if first is not None:
            header = tuple(read_score_header(first)[1][2:])  # its first lines alone
            if class_map is not None:
                header = class_map.columns(header, np.zeros((0, len(header))),
                                           path=str(first))[0]
        return cls(directory, files, header, first, class_map, windows)

    @property
    def columns(self) -> tuple[str, ...]:
        """The classes of every table read (the kept ones, else the header's)."""
        return self.keep if self.keep is not None else self.header

    def __contains__(self, clip: object) -> bool:
        return clip in self.files

    def __len__(self) -> int:
        return len(self.files)

    def select(self, clips: Sequence[str]) -> ScoreFolder:
        """The folder's files of ``clips`` only (a block for another process to read)."""
        return replace(self, files={c: self.files[c] for c in clips})

    def only(self, classes: Sequence[str]) -> ScoreFolder:
        """Every table cut to the columns of ``classes``, in that order (a class without a
        column is an error naming the file)."""
        missing = [c for c in classes if c not in self.header]
        if missing and self.first is not None:
            raise TraceFormatError(f"no score column for declared class {missing[0]!r} (the "
                                   f"columns are {', '.join(self.header)})",
                                   path=str(self.first), row=1)
        return replace(self, keep=tuple(classes))

    def table(self, clip: str) -> tuple[ScoreTable, str]:
        """Clip ``clip``'s scores and source path; its windows merged back to its time
        (:func:`~sedcontract.traces.windows.overlap_average`), frames past a window's end (a
        short last window scored as a whole one) cut off."""
        paths = self.files[clip]
        pieces = []
        for path in paths:
            table = read_scores(path)
            classes = table.classes
            if self.class_map is not None:
                classes, scores = self.class_map.columns(classes, table.scores, path=str(path))
                table = replace(table, classes=classes, scores=scores)
            if classes != self.header:
                raise TraceFormatError(f"classes {', '.join(classes)} differ from those of "
                                       f"{self.first.name} ({', '.join(self.header)})",
                                       path=str(path), row=1)
            if self.keep is not None:  # checked against the header by only()
                index = [classes.index(c) for c in self.keep]
                table = replace(table, classes=self.keep, scores=table.scores[:, index])
            pieces.append(table)
        if not self.windows or parse_window_id(clip_id(paths[0].stem)) is None:
            return pieces[0], str(paths[0])
        merged = []
        for path, table in zip(paths, pieces, strict=True):
            _, start, end = parse_window_id(clip_id(path.stem))
            keep = table.onset < end - start
            offset = np.minimum(table.offset[keep], end - start)
            merged.append(Piece(table.onset[keep] + start, offset + start, table.scores[keep]))
        whole = overlap_average(merged, where=f"{self.directory} (clip {clip!r})")
        return (ScoreTable(whole.onset, whole.offset, self.columns, whole.scores,
                           np.zeros(len(whole.onset), dtype=np.int64)), str(paths[0]))

    def tables(self, clips: Sequence[str] | None = None
               ) -> Iterator[tuple[str, tuple[ScoreTable, str]]]:
        """``(clip, (table, path))`` of ``clips`` (default: every clip, sorted), read one at
        a time."""
        for clip in self.files if clips is None else clips:
            yield clip, self.table(clip)

    def stream(self, clips: Sequence[str]) -> Iterator[ScoreTable]:
        """The tables of ``clips`` one at a time."""
        for _, (table, _) in self.tables(clips):
            yield table


def read_score_dir(directory: str | Path, expected: Sequence[str] | None = None, *,
                   class_map: ClassMap | None = None, windows: bool = False,
                   skipped: list[str] | None = None,
                   durations: Mapping[str, float] | str | Path | None = None
                   ) -> dict[str, tuple[ScoreTable, str]]:
    """Every score table of ``directory`` at once as ``{clip: (table, source path)}``,
    sorted by clip (see :class:`ScoreFolder`, which reads them one at a time)."""
    return dict(ScoreFolder.open(directory, expected, class_map=class_map, windows=windows,
                                 skipped=skipped, durations=durations).tables())


def check_score_classes(folder: ScoreFolder | Any, classes: Sequence[str]) -> None:
    """Refuse score tables (one column set: a :class:`ScoreFolder`, or tables in memory)
    without a column for one of the reference's ``classes``: its events would all count as
    missed, silently."""
    if folder.first is None:
        return
    missing = [c for c in classes if c not in folder.header]
    if missing:
        raise TraceFormatError(f"no score column for reference class {missing[0]!r} (the "
                               f"columns are {', '.join(folder.header)}): every reference "
                               "event of it would count as missed; add its column (zeros "
                               "if the system never predicts it) or map the columns with a "
                               "class map", path=str(folder.first), row=1)


def tables_to_events(tables: Mapping[str, tuple[ScoreTable, str]]
                     | Iterable[tuple[str, tuple[ScoreTable, str]]], policy: DecisionPolicy,
                     directory: str | Path) -> EventList:
    """Events of score tables (a mapping, or ``(clip, (table, path))`` pairs read one at a
    time: :meth:`ScoreFolder.tables`) under the decision policy (its classes' own settings
    by the tables' column names); each event names the score file and row it starts on."""
    events: list[tuple[str, float, float, str]] = []
    sources, lines, clips = [], [], {}
    for clip, (table, path) in tables.items() if isinstance(tables, Mapping) else tables:
        clips[clip] = (path, 1)
        if table.scores.shape[0] == 0:
            continue
        try:
            active = decide(table.scores, policy, table.hop, table.classes)
        except TraceFormatError as exc:
            raise TraceFormatError(exc.message, path=path) from None
        row, start, end = runs(active.T)
        events += [(clip, float(table.onset[s]), float(table.offset[e - 1]),
                    table.classes[r]) for r, s, e in zip(row, start, end, strict=True)]
        sources += [path] * len(row)
        lines += table.lines[start].tolist()
    return EventList.from_rows(events, clips=tuple(clips), path=str(directory),
                               rows=np.asarray(lines, dtype=np.int64),
                               files=np.asarray(sources, dtype=object), clip_rows=clips)


def scores_to_events(directory: str | Path, policy: DecisionPolicy,
                     expected: Sequence[str] | None = None, *,
                     class_map: ClassMap | None = None, windows: bool = False) -> EventList:
    """Events of every score file in ``directory`` (see :class:`ScoreFolder`), read one clip
    at a time, under the decision policy."""
    return tables_to_events(ScoreFolder.open(directory, expected, class_map=class_map,
                                             windows=windows).tables(), policy, directory)
