"""sed_scores_eval's ``io`` under its names and return shapes, on this project's readers (so a
bad row is named by file, row and column): ground truth as ``{clip: [[onset, offset, label],
…]}``, durations as ``{clip: seconds}``, and score DataFrames made, checked, written and read.
The DataFrame functions need pandas (as sed_scores_eval does); the others do not."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.outputs import atomic_write
from sedcontract.requires import need
from sedcontract.traces.given import events_of, is_frame, table_of_frame
from sedcontract.traces.score_files import ScoreTable, check_tiling, read_scores, score_files
from sedcontract.traces.tsv import read_durations

PANDAS = "pip install pandas"


def read_ground_truth_events(filepath: str | os.PathLike | Any) -> dict[str, list[list[Any]]]:
    """``{clip: [[onset, offset, label], …]}`` of a DCASE event file (tsv or csv) or a
    DataFrame of its rows, events as listed; a clip with a row but no event maps to ``[]``."""
    events = events_of(filepath, "ground truth")
    out: dict[str, list[list[Any]]] = {clip: [] for clip in events.clips}
    for clip, onset, offset, label in events.to_rows():
        out[clip].append([onset, offset, label])
    return out


def read_audio_durations(filepath: str | os.PathLike) -> dict[str, float]:
    """``{clip: seconds}`` of a durations file (``filename duration``)."""
    return read_durations(filepath)


def _table(scores: Any, timestamps: Any, event_classes: Sequence[Any], where: str
           ) -> ScoreTable:
    """A score array ``[frames, classes]`` with ``frames + 1`` timestamps as a checked table."""
    values = np.asarray(scores, dtype=np.float64)
    times = np.asarray(timestamps, dtype=np.float64)
    if values.ndim != 2:
        raise TraceFormatError(f"scores must be a 2-d array (frames, classes), got shape "
                               f"{values.shape}", path=where)
    if times.shape != (len(values) + 1,):
        raise TraceFormatError(f"{len(values)} frames need {len(values) + 1} timestamps, got "
                               f"shape {times.shape}", path=where)
    classes = [str(c) if isinstance(c, int | np.integer) else c for c in event_classes]
    if len(classes) != values.shape[1] or not all(isinstance(c, str) for c in classes):
        raise TraceFormatError(f"{values.shape[1]} score columns need as many class names "
                               f"(str or int), got {list(event_classes)!r}", path=where)
    rows = np.arange(len(values), dtype=np.int64) + 1
    check_tiling(times[:-1], times[1:], rows, where)
    return ScoreTable(times[:-1], times[1:], tuple(classes), values, rows)


def _frame(table: ScoreTable, classes: Sequence[Any] | None = None) -> Any:
    pd = need("pandas", "a score DataFrame", PANDAS)
    frame = pd.DataFrame(table.scores, columns=list(classes or table.classes))
    frame.insert(0, "offset", table.offset)
    frame.insert(0, "onset", table.onset)
    return frame


def create_score_dataframe(scores: Any, timestamps: Any, event_classes: Sequence[Any]) -> Any:
    """A score DataFrame in sed_scores_eval's layout: ``onset``, ``offset`` (frame ``k`` from
    ``timestamps[k]`` to ``timestamps[k + 1]``), then one column per class."""
    return _frame(_table(scores, timestamps, event_classes, "scores"), list(event_classes))


def validate_score_dataframe(scores: Any, timestamps: Any = None,
                             event_classes: Sequence[str] | None = None
                             ) -> tuple[np.ndarray, list[str]]:
    """``(timestamps, event_classes)`` of a score DataFrame, which must tile time (and match
    the ``timestamps`` and ``event_classes`` given); refused by row and column otherwise."""
    if not is_frame(scores):
        raise TraceFormatError(f"scores must be a DataFrame, got {type(scores).__name__}")
    table = table_of_frame(scores, "scores")
    times = np.append(table.onset, table.offset[-1:])
    if timestamps is not None and not np.array_equal(times, np.asarray(timestamps, float)):
        raise TraceFormatError("the DataFrame's onsets and offsets are not the timestamps "
                               "given", path="scores")
    if event_classes is not None and list(table.classes) != list(event_classes):
        raise TraceFormatError(f"the DataFrame's classes {list(table.classes)} are not "
                               f"{list(event_classes)}", path="scores")
    return times, list(table.classes)


def _tsv(table: ScoreTable) -> str:
    """A score table's text: floats as Python writes them, so it reads back exactly."""
    lines = ["\t".join(("onset", "offset", *table.classes))]
    lines += ["\t".join(map(repr, row)) for row in
              np.column_stack([table.onset, table.offset, table.scores]).tolist()]
    return "\n".join(lines) + "\n"


def write_sed_scores(scores: Mapping[str, Any] | Any, storage_path: str | os.PathLike, *,
                     timestamps: Any = None, event_classes: Sequence[Any] | None = None
                     ) -> None:
    """Score DataFrames ``{clip: DataFrame}`` as ``<clip>.tsv`` in the folder ``storage_path``
    (made if missing), or one table (a DataFrame, or an array with its ``timestamps`` and
    ``event_classes``) as the file ``storage_path``. Each file is written whole or not at
    all."""
    path = Path(storage_path)
    if isinstance(scores, Mapping) and not is_frame(scores):
        tables = {clip: table_of_frame(frame, f"scores[{clip!r}]") if is_frame(frame) else
                  _refuse(clip, frame) for clip, frame in scores.items()}
        path.mkdir(parents=True, exist_ok=True)
        for clip, table in tables.items():
            atomic_write(path / f"{clip}.tsv", _tsv(table))
        return
    if is_frame(scores):
        table = table_of_frame(scores, "scores")
    elif timestamps is not None and event_classes is not None:
        table = _table(scores, timestamps, event_classes, "scores")
    else:
        raise SedContractError("write_sed_scores takes {clip: DataFrame}, a DataFrame, or an "
                               "array with its timestamps and event_classes")
    atomic_write(path, _tsv(table))


def _refuse(clip: str, value: Any) -> ScoreTable:
    raise TraceFormatError(f"scores[{clip!r}] is {type(value).__name__}, not a score "
                           "DataFrame")


def read_sed_scores(filepath: str | os.PathLike) -> Any:
    """A score file as a DataFrame, or a folder of them as ``{clip: DataFrame}`` (by file
    stem; every file of the folder a score file)."""
    path = Path(filepath)
    if path.is_dir():
        return {f.stem: _frame(read_scores(f)) for f in score_files(path)}
    return _frame(read_scores(path))
