"""Inputs as the field holds them, taken as they come: paths, this project's event lists, and
sed_scores_eval's in-memory layouts — ``{clip: DataFrame}`` score tables (columns ``onset``,
``offset``, one per class), ``{clip: [(onset, offset, label), …]}`` ground truth or
detections, DataFrames of DCASE rows (``filename onset offset event_label``) and
``{clip: duration}``. pandas is never imported: a DataFrame is known by what it has, so the
evaluation half runs without it."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.numbers import is_number
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS
from sedcontract.traces.score_files import (
    ScoreFolder,
    ScoreTable,
    bad_scores,
    cell_problem,
    check_score_classes,
    check_tiling,
    tables_to_events,
)
from sedcontract.traces.tsv import clip_id, read_durations, read_events

PathLike = str | os.PathLike


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (known by its attributes, pandas not imported)."""
    return all(hasattr(value, name) for name in ("columns", "to_numpy", "iloc", "dtypes"))


def _columns(frame: Any) -> list[str]:
    return [str(c) for c in frame.columns]


def _needs(frame: Any, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in _columns(frame)]
    if missing:
        raise TraceFormatError(f"{what}: a DataFrame without column(s) {', '.join(missing)} "
                               f"(it has {', '.join(_columns(frame)) or 'none'}); DCASE rows "
                               f"are {' '.join(columns)}")


def _times(frame: Any, column: str, what: str, missing_ok: bool = False) -> np.ndarray:
    """A column of seconds as float64; a value that is not a number is named by its row (the
    DataFrame's position, from 1)."""
    values = frame[column].to_numpy()
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        for i, v in enumerate(values):
            try:
                float(v)
            except (TypeError, ValueError):
                raise TraceFormatError(f"{v!r} is not a number of seconds", path=what,
                                       row=i + 1, column=column) from None
        raise
    if not missing_ok:
        bad = np.flatnonzero(np.isnan(out))
        if bad.size:
            raise TraceFormatError("missing value", path=what, row=int(bad[0]) + 1,
                                   column=column)
    return out


def _events_of_frame(frame: Any, what: str) -> EventList:
    """DCASE rows in a DataFrame; a row with a filename and no onset, offset or label
    declares a clip without events (as in DESED's ground truth)."""
    _needs(frame, ("filename", "onset", "offset", "event_label"), what)
    names = frame["filename"].to_numpy()
    onset = _times(frame, "onset", what, missing_ok=True)
    offset = _times(frame, "offset", what, missing_ok=True)
    labels = frame["event_label"].to_numpy()
    clips = []
    rows = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise TraceFormatError(f"filename {name!r} is not a clip id", path=what, row=i + 1,
                                   column="filename")
        clip = clip_id(name)
        clips.append(clip)
        empty = math.isnan(onset[i]) and math.isnan(offset[i]) and not isinstance(labels[i],
                                                                                   str)
        if empty:
            continue
        for column, value in (("onset", onset[i]), ("offset", offset[i])):
            if math.isnan(value):
                raise TraceFormatError("missing value", path=what, row=i + 1, column=column)
        rows.append(i)
    keep = np.asarray(rows, dtype=np.int64)
    return EventList(np.asarray(clips, dtype=object)[keep], onset[keep], offset[keep],
                     np.asarray(labels, dtype=object)[keep], clips=tuple(dict.fromkeys(clips)),
                     path=what, rows=keep + 1)


def _events_of_mapping(events: Mapping[Any, Any], what: str) -> EventList:
    """``{clip: [(onset, offset, label), …]}``; a clip with an empty list has no events."""
    rows: list[tuple[str, float, float, str]] = []
    where: list[str] = []
    number: list[int] = []
    for clip, listed in events.items():
        if not isinstance(clip, str) or not clip:
            raise TraceFormatError(f"{what}: clip id {clip!r} is not a non-empty string")
        if isinstance(listed, str) or not isinstance(listed, Sequence | np.ndarray):
            raise TraceFormatError(f"{what}[{clip!r}] is {type(listed).__name__}; a clip's "
                                   "events are a list of (onset, offset, label) tuples")
        for k, event in enumerate(listed):
            if not isinstance(event, tuple | list) or len(event) != 3:
                raise TraceFormatError(f"{what}[{clip!r}] event {k + 1} is {event!r}; an event "
                                       "is an (onset, offset, label) tuple")
            on, off, label = event
            for column, value in (("onset", on), ("offset", off)):
                if not is_number(value, numpy=True):
                    raise TraceFormatError(f"{what}[{clip!r}] event {k + 1}: {column} {value!r} "
                                           "is not a number of seconds")
            rows.append((clip, float(on), float(off), label))
            where.append(f"{what}[{clip!r}]")
            number.append(k + 1)
    # a later error names the clip and the event's number in its list
    return EventList.from_rows(rows, clips=tuple(events), path=what,
                               files=np.asarray(where, dtype=object),
                               rows=np.asarray(number, dtype=np.int64))


def events_of(value: EventList | PathLike | Mapping[str, Any] | Any, what: str) -> EventList:
    """Events from an event list, an event file (tsv or csv), a ``{clip: [(onset, offset,
    label)]}`` mapping or a DataFrame of DCASE rows; ``what`` names the input in errors."""
    if isinstance(value, EventList):
        return value
    if isinstance(value, str | os.PathLike):
        return read_events(value)
    if is_frame(value):
        return _events_of_frame(value, what)
    if isinstance(value, Mapping):
        return _events_of_mapping(value, what)
    raise TraceFormatError(f"{what} must be an event file, an EventList, a mapping of clip → "
                           f"[(onset, offset, label)] or a DataFrame of DCASE rows, got "
                           f"{type(value).__name__}")


def durations_of(value: Mapping[str, float] | PathLike | Any | None
                 ) -> dict[str, float] | None:
    """Clip durations from ``{clip: seconds}``, a durations file or a DataFrame with columns
    ``filename duration`` (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str | os.PathLike):
        return read_durations(value)
    if is_frame(value):
        _needs(value, ("filename", "duration"), "durations")
        seconds = _times(value, "duration", "durations")
        pairs = [(str(n), t, f"durations row {k + 1}") for k, (n, t) in
                 enumerate(zip(value["filename"].to_numpy(), seconds.tolist(), strict=True))]
    elif isinstance(value, Mapping):
        pairs = [(str(clip), t, f"durations[{clip!r}]") for clip, t in value.items()]
    else:
        raise TraceFormatError(f"durations must map clips to seconds or be the path of a "
                               f"durations tsv, got {type(value).__name__}")
    out: dict[str, float] = {}
    for name, seconds, where in pairs:
        if not is_number(seconds, numpy=True) \
                or not math.isfinite(seconds) or not 0 <= seconds <= MAX_SECONDS:
            raise TraceFormatError(f"{where} is {seconds!r}, not a number of seconds in "
                                   f"[0, {MAX_SECONDS:g}]")
        clip = clip_id(name)  # a.wav and a are one clip, as the durations file reads them
        if clip in out and out[clip] != float(seconds):
            raise TraceFormatError(f"{where}: clip {clip!r} listed twice with different "
                                   f"durations ({out[clip]:g} s and {float(seconds):g} s)")
        out[clip] = float(seconds)
    return out


def _first_text(frame: Any, classes: Sequence[str]) -> tuple[int, str, Any]:
    """The first score cell that is no number (row from 1, its class, its value): the error
    path only, so a cell at a time is fine."""
    for k in range(len(frame)):
        for c, cls in enumerate(classes):
            value = frame.iat[k, c + 2]
            try:
                float(value)
            except (TypeError, ValueError):
                return k + 1, cls, value
    return 0, classes[0], None  # numpy refused the whole block, not a cell


def table_of_frame(frame: Any, where: str) -> ScoreTable:
    """One clip's score table from a DataFrame in sed_scores_eval's layout: ``onset``,
    ``offset``, then one column per class."""
    names = _columns(frame)
    if names[:2] != ["onset", "offset"]:
        raise TraceFormatError(f"a score table's first columns are onset and offset "
                               f"(sed_scores_eval's layout), got {', '.join(names[:2]) or 'none'}",
                               path=where)
    classes = tuple(names[2:])
    if not classes:
        raise TraceFormatError("a score table with no class column", path=where)
    onset, offset = (_times(frame, c, where) for c in ("onset", "offset"))
    try:
        scores = np.asarray(frame[list(frame.columns[2:])].to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        row, cls, value = _first_text(frame, classes)
        raise TraceFormatError(f"score {value!r} is not a number", path=where, row=row,
                               column=cls) from None
    scores = scores.reshape(len(onset), len(classes))
    rows = np.arange(len(onset), dtype=np.int64) + 1  # the DataFrame's positions, from 1
    bad = np.argwhere(bad_scores(scores))
    if bad.size:
        k, c = bad[0]
        value = float(scores[k, c])
        raise TraceFormatError(f"score {value!r} {cell_problem(value, time=False)}",
                               path=where, row=int(rows[k]), column=classes[c])
    check_tiling(onset, offset, rows, where)
    return ScoreTable(onset, offset, classes, scores, rows)


@dataclass(frozen=True)
class TableMapping:
    """Score tables already in memory (clip → DataFrame in sed_scores_eval's layout, table, or
    (table, source)) as a table source, like :class:`~sedcontract.traces.score_files.ScoreFolder`:
    ``header`` is the first table's classes, which every table must have in that order, and
    ``only`` cuts every table to some of them."""

    mapping: Mapping[str, Any]
    keep: tuple[str, ...] | None = None
    in_memory: ClassVar[bool] = True  # reading a table twice costs nothing

    def __contains__(self, clip: object) -> bool:
        return clip in self.mapping

    def __len__(self) -> int:
        return len(self.mapping)

    def __iter__(self) -> Iterator[str]:
        return iter(self.mapping)

    @cached_property
    def first(self) -> str | None:
        """The source errors about the columns name: the first table."""
        first = next(iter(self.mapping), None)
        return None if first is None else self._table(first)[1]

    @cached_property
    def header(self) -> tuple[str, ...]:
        """The classes of the first table."""
        first = next(iter(self.mapping), None)
        if first is None:
            raise TraceFormatError("no score tables given")
        return self._table(first)[0].classes

    @property
    def columns(self) -> tuple[str, ...]:
        """The classes of every table read (the kept ones, else the header's)."""
        return self.keep if self.keep is not None else self.header

    def select(self, clips: Sequence[str]) -> TableMapping:
        return TableMapping({c: self.mapping[c] for c in clips}, self.keep)

    def only(self, classes: Sequence[str]) -> TableMapping:
        """Every table cut to the columns of ``classes``, in that order."""
        missing = [c for c in classes if c not in self.header]
        if missing:
            raise TraceFormatError(f"no score column for declared class {missing[0]!r} (the "
                                   f"columns are {', '.join(self.header)})", path=self.first,
                                   row=1)
        return TableMapping(self.mapping, tuple(classes))

    def _table(self, clip: str) -> tuple[ScoreTable, str]:
        value = self.mapping[clip]
        if isinstance(value, tuple):
            return value
        where = f"scores[{clip!r}]"
        if is_frame(value):
            return table_of_frame(value, where), where
        if not isinstance(value, ScoreTable):
            raise TraceFormatError(f"{where} is {type(value).__name__}; a score table is a "
                                   "DataFrame in sed_scores_eval's layout (onset, offset, a "
                                   "column per class)")
        return value, where

    def table(self, clip: str) -> tuple[ScoreTable, str]:
        """Clip's table and the name its errors give as the source; its classes must be the
        first table's, in order."""
        table, where = self._table(clip)
        if table.classes != self.header:
            raise TraceFormatError(f"the score table of clip {clip!r} has the columns "
                                   f"{', '.join(table.classes)}, not {', '.join(self.header)}: "
                                   "every table scores the same classes")
        if self.keep is not None:
            index = [table.classes.index(c) for c in self.keep]
            table = ScoreTable(table.onset, table.offset, self.keep, table.scores[:, index],
                               table.lines)
        return table, where

    def tables(self, clips: Sequence[str] | None = None
               ) -> Iterator[tuple[str, tuple[ScoreTable, str]]]:
        """``(clip, (table, source))`` of ``clips`` (all by default), one at a time, as
        :meth:`ScoreFolder.tables` gives them."""
        for clip in self.mapping if clips is None else clips:
            yield clip, self.table(clip)

    def stream(self, clips: Sequence[str]) -> Iterator[ScoreTable]:
        for clip in clips:
            yield self.table(clip)[0]


HELD_BYTES = 64 * 2 ** 20  # a score folder of at most this many bytes is read once and held


def held(folder: ScoreFolder) -> ScoreFolder | TableMapping:
    """The folder's tables read once and held in memory when its files total at most
    :data:`HELD_BYTES` (a command reads them for the events, PSDS, AUROC and curves); a
    larger folder stays one clip at a time, read again by each."""
    size = sum(path.stat().st_size for paths in folder.files.values() for path in paths)
    if size > HELD_BYTES:
        return folder
    mapping = TableMapping({clip: folder.table(clip) for clip in folder.files})
    return mapping if folder.keep is None else mapping.only(folder.keep)


def is_score_tables(value: Any) -> bool:
    """Whether ``value`` holds score tables (a folder of score files, a table source, or
    clip → DataFrame / :class:`ScoreTable`) rather than events."""
    if hasattr(value, "stream") and hasattr(value, "tables"):
        return True
    if isinstance(value, str | os.PathLike):
        return Path(value).is_dir()
    if isinstance(value, Mapping) and not is_frame(value):  # one table makes them tables:
        return any(is_frame(v) or isinstance(v, ScoreTable)  # the others are named as not
                   for v in (v[0] if isinstance(v, tuple) and v else v
                             for v in value.values()))
    return False


def score_source(value: PathLike | ScoreFolder | Mapping[str, Any] | Any,
                 expected: Sequence[str]) -> Any:
    """A table source (``columns``, ``select``, ``stream``, ``tables``, ``in``) of score tables
    for the ``expected`` clips (the reference's): a folder of score files, a
    :class:`ScoreFolder`, or a mapping of clip → DataFrame (sed_scores_eval's layout),
    :class:`ScoreTable` or ``(table, source)``. Each expected clip must have a table and no
    table another clip, as sed_scores_eval and the command line ask (a folder opened by
    the caller decides for itself)."""
    if isinstance(value, str | os.PathLike):
        return ScoreFolder.open(Path(value), expected)
    if hasattr(value, "stream"):
        return value
    if not isinstance(value, Mapping):
        raise TraceFormatError(f"scores must be a folder of score files or a mapping of clip → "
                               f"DataFrame (sed_scores_eval's layout), got "
                               f"{type(value).__name__}")
    wanted = set(expected)
    missing = [c for c in expected if c not in value]
    extra = [c for c in value if c not in wanted]
    for clips, what in ((missing, "no score table for clip(s)"),
                        (extra, "score tables for clip(s) the reference does not list:")):
        if clips:
            raise TraceFormatError(f"{what} {', '.join(map(repr, clips[:5]))}"
                                   f"{' …' if len(clips) > 5 else ''} ({len(clips)} in all); "
                                   "the scores and the reference name the same clips")
    return TableMapping(value)


def detections(source: Any, ref: EventList, decision: DecisionPolicy, where: str, *,
               declared: Sequence[str] | None = None,
               thresholds: float | Mapping[str, float] | None = None) -> EventList:
    """The events of a table source under ``decision`` (``thresholds``, one or class →
    threshold, in place of its thresholds): every reference class among the ``declared`` ones
    must have a column (its events would all count as missed), and only the declared
    classes' columns are read. One rule for the command line, ``audit`` and ``fscore``."""
    check_score_classes(source, [c for c in ref.classes if declared is None or c in declared])
    decision.resolve(source.columns)  # a class it sets must be a column: refused up front
    if declared is not None:  # the declared classes' columns only (PSDS scores each column)
        source = source.only(declared)
        decision = decision.restricted(declared)
    if thresholds is not None:
        if isinstance(thresholds, Mapping):
            missing = [c for c in source.columns if c not in thresholds]
            if missing:
                raise TraceFormatError(f"no threshold for class(es) {', '.join(missing)}")
            thresholds = {c: thresholds[c] for c in source.columns}  # others ignored, as there
        decision = decision.with_thresholds(thresholds)
    # read one clip at a time: never every table at once
    return tables_to_events(source.tables(), decision, where)
