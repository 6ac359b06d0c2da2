"""Frame scores (sed_scores_eval layout: one tsv per clip, ``onset offset <class…>``) and the
declared decision policy that turns them into events: optional median filter, then a
threshold (active iff score > threshold), optionally with hysteresis (a run, once above the
threshold, continues while the score stays at or above ``low``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.activity import runs
from sedcontract.traces.classmap import ClassMap
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS, to_us
from sedcontract.traces.tsv import clip_id, parse_number, read_durations, read_fields
from sedcontract.traces.windows import Piece, check_windows, overlap_average, parse_window_id


@dataclass(frozen=True)
class DecisionPolicy:
    """How scores become events; part of every report."""

    threshold: float = 0.5
    median_filter: float = 0.0  # seconds; 0 = off
    source: str = ""            # what made the scores (e.g. a detector's sigmoid), if known
    low: float | None = None    # hysteresis: a run continues while score >= low; None = off

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TraceFormatError(f"the decision's source must be text, got {self.source!r}")
        if self.low is not None and (isinstance(self.low, bool)
                                     or not isinstance(self.low, int | float)
                                     or not math.isfinite(self.low)):
            raise TraceFormatError(f"the hysteresis threshold (decision low) must be a finite "
                                   f"number, got {self.low!r}")
        for name in ("threshold", "median_filter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TraceFormatError(f"decision {name} must be a number, got {value!r}")
        if not math.isfinite(self.threshold):
            raise TraceFormatError(f"decision threshold must be a finite number, got "
                                   f"{self.threshold!r}")
        if not math.isfinite(self.median_filter) or self.median_filter < 0:
            raise TraceFormatError(f"median filter must be a non-negative number of seconds, "
                                   f"got {self.median_filter!r}")
        if self.low is not None and self.low > self.threshold:
            raise TraceFormatError(f"the hysteresis threshold (decision low, {self.low:g}) "
                                   f"must not exceed the decision threshold "
                                   f"({self.threshold:g})")

    def describe(self) -> str:
        mf = f", median filter {self.median_filter:g} s" if self.median_filter else ""
        rule = f"active iff score > {self.threshold:g}{mf}"
        if self.low is not None:
            rule = (f"active from score > {self.threshold:g} while score >= {self.low:g} "
                    f"(hysteresis){mf}")
        return f"{self.source}; {rule}" if self.source else rule


@dataclass(frozen=True)
class ScoreTable:
    """One clip's frame scores: frame times and a ``[frames, classes]`` array."""

    onset: np.ndarray
    offset: np.ndarray
    classes: tuple[str, ...]
    scores: np.ndarray
    lines: np.ndarray  # the file line of every frame


def read_scores(path: str | Path) -> ScoreTable:
    """Read one score tsv; names the file, row and column of any bad value. Frames must tile
    time: in order, each starting where the previous one ends (a gap, an overlap or a
    shuffled row is an error, as sed_scores_eval's PSDS would refuse it)."""
    path = Path(path)
    numbered = read_fields(path)
    if not numbered or [c for c in numbered[0][1][:2]] != ["onset", "offset"] \
            or len(numbered[0][1]) < 3:
        raise TraceFormatError("a score file starts with the header 'onset offset <class…>' "
                               "(tab-separated)", path=str(path),
                               row=numbered[0][0] if numbered else 1)
    header_row, header = numbered.pop(0)
    counts = Counter(header)
    for column in header[2:]:
        if not column:
            raise TraceFormatError("a class column has no name", path=str(path),
                                   row=header_row)
        if counts[column] > 1:
            raise TraceFormatError(f"the header names class {column!r} twice", path=str(path),
                                   row=header_row, column=column)
    lines_of = np.array([line for line, _ in numbered], dtype=np.int64)
    values = _fast_values(numbered, len(header))
    if values is not None and np.isfinite(values).all() and \
            (np.abs(values) <= MAX_SECONDS).all():
        _check_tiling(values[:, 0], values[:, 1], lines_of, path)
        return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:],
                          lines_of)
    values = np.empty((len(numbered), len(header)))  # a bad value: find and name it
    for k, (r, fields) in enumerate(numbered):
        if len(fields) != len(header):
            raise TraceFormatError(f"{len(fields)} columns, the header has {len(header)}",
                                   path=str(path), row=r)
        for c, text in enumerate(fields):
            number = parse_number(text)
            if number is None:
                raise TraceFormatError(f"{text!r} is not a number", path=str(path), row=r,
                                       column=header[c])
            if not math.isfinite(number) or abs(number) > MAX_SECONDS:
                raise TraceFormatError(f"{text!r} is not a finite number within "
                                       f"±{MAX_SECONDS:g}", path=str(path), row=r,
                                       column=header[c])
            values[k, c] = number
    _check_tiling(values[:, 0], values[:, 1], lines_of, path)
    return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:], lines_of)


def _fast_values(numbered: list[tuple[int, list[str]]], width: int) -> np.ndarray | None:
    """Every field as a number at once when the rows are all ``width`` wide and hold only
    ASCII without underscores (where Python's ``float`` reads exactly the decimal numbers of
    :func:`~sedcontract.traces.tsv.parse_number`); None otherwise, or when a field is not a
    number, so the slow path names it."""
    rows = [fields for _, fields in numbered]
    if any(len(fields) != width for fields in rows):
        return None
    try:
        values = np.array(rows, dtype=np.float64) if rows else np.empty((0, width))
    except ValueError:
        return None
    text = "".join("".join(fields) for fields in rows)
    return values if text.isascii() and "_" not in text else None


def _check_tiling(onset: np.ndarray, offset: np.ndarray, lines: np.ndarray, path: Path) -> None:
    """Frames in time order, each of positive length, each starting where the previous ends
    (compared in microseconds)."""
    def fail(message: str, k: int, column: str = "onset") -> None:
        raise TraceFormatError(message, path=str(path), row=int(lines[k]), column=column)

    on, off = to_us(onset), to_us(offset)
    onset, offset = onset.tolist(), offset.tolist()
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


def filter_frames(policy: DecisionPolicy, hop: float, frames: int) -> int:
    """The median filter's length in frames of ``hop`` (1 = off); a filter longer than the
    clip's ``frames`` is refused (its cost would grow with the filter, not the clip)."""
    if policy.median_filter <= 0:
        return 1
    size = max(1, round(policy.median_filter / hop))
    if frames > 0 and size > frames:
        raise TraceFormatError(f"median filter of {policy.median_filter:g} s is {size} frames "
                               f"of {hop:g} s, longer than the clip ({frames} frames)")
    return size


def decide(scores: np.ndarray, policy: DecisionPolicy, hop: float) -> np.ndarray:
    """Boolean activity from frame scores ``[..., frames, classes]`` under ``policy``: the
    median filter (its length in seconds rounded to frames of ``hop``) along frames, then
    the threshold (strictly above)."""
    scores = np.asarray(scores, dtype=np.float64)
    size = filter_frames(policy, hop, scores.shape[-2])
    if size > 1 and scores.shape[-2] > 0:
        from scipy.ndimage import median_filter  # imported where it is used: a slow import

        sizes = (1,) * (scores.ndim - 2) + (size, 1)
        scores = median_filter(scores, size=sizes, mode="nearest")
    if policy.low is not None:
        return hysteresis(scores, policy.low, policy.threshold)
    return scores > policy.threshold


def hysteresis(scores: np.ndarray, low: float, high: float) -> np.ndarray:
    """Boolean activity from scores ``[..., frames, classes]``: a run switches on at a frame
    above ``high`` and stays on while the score is at least ``low`` (``low <= high``); the
    frames of a run of ``>= low`` before its first frame above ``high`` stay off."""
    x = np.moveaxis(np.asarray(scores), -2, -1)  # frames last
    kept = x >= low
    start = kept & ~np.concatenate([np.zeros_like(kept[..., :1]), kept[..., :-1]], -1)
    high_seen = np.cumsum(kept & (x > high), -1)
    # high frames seen before each run's start, carried along the run (nondecreasing)
    before = np.maximum.accumulate(np.where(start, high_seen - (x > high), 0), -1)
    return np.moveaxis(kept & (high_seen > before), -1, -2)


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


def read_score_dir(directory: str | Path, expected: Sequence[str] | None = None, *,
                   class_map: ClassMap | None = None, windows: bool = False,
                   skipped: list[str] | None = None,
                   durations: Mapping[str, float] | str | Path | None = None
                   ) -> dict[str, tuple[ScoreTable, str]]:
    """Every score file of ``directory`` as ``{clip: (table, source path)}`` (clip id = file
    stem without an audio extension), its columns mapped by ``class_map``. With ``windows``,
    files named as windows (``F-SSSSSS-EEEEEE``, frame times relative to the window) are
    merged back to file ``F``'s time (:func:`~sedcontract.traces.windows.overlap_average`);
    frames past a window's end (a short last window scored as a whole one) are cut off.
    ``expected`` (the reference clips) must each have scores, and a file of another clip is
    an error unless ``skipped`` is a list, which then receives its path (the DCASE 2024
    baseline writes DESED clips and MAESTRO chunks into one folder). All files name the same
    classes. A file's windows must start at 0 s and, with its duration in ``durations`` (a
    mapping or a durations tsv), reach its end (:func:`~.windows.check_windows`)."""
    if isinstance(durations, str | Path):
        durations = read_durations(durations)
    directory = Path(directory)
    tables: dict[str, tuple[ScoreTable, str]] = {}
    pieces: dict[str, list[tuple[Piece, Path]]] = {}
    spans: dict[str, list[tuple[float, float, str]]] = {}
    expected = None if expected is None else set(expected)
    classes: tuple[tuple[str, ...], Path] | None = None
    for path in score_files(directory):
        clip = clip_id(path.stem)
        window = parse_window_id(clip) if windows else None
        if expected is not None and skipped is not None and \
                (clip if window is None else window[0]) not in expected:
            skipped.append(str(path))
            continue
        table = read_scores(path)
        if class_map is not None:
            table = replace(table, **dict(zip(("classes", "scores"), class_map.columns(
                table.classes, table.scores, path=str(path)), strict=True)))
        if classes is None:
            classes = (table.classes, path)
        elif table.classes != classes[0]:
            raise TraceFormatError(f"classes {', '.join(table.classes)} differ from those of "
                                   f"{classes[1].name} ({', '.join(classes[0])})",
                                   path=str(path), row=1)
        if window is not None:
            file, start, end = window
            keep = table.onset < end - start
            offset = np.minimum(table.offset[keep], end - start)
            pieces.setdefault(file, []).append(
                (Piece(table.onset[keep] + start, offset + start, table.scores[keep]), path))
            spans.setdefault(file, []).append((start, end, str(path)))
            clip = file
        elif clip in tables:
            raise TraceFormatError(f"{Path(tables[clip][1]).name} and {path.name} are both the "
                                   f"scores of clip {clip!r}", path=str(directory))
        else:
            tables[clip] = (table, str(path))
        if expected is not None and clip not in expected:
            raise TraceFormatError(f"scores of clip {clip!r}, which the reference does not "
                                   "list", path=str(path))
    for file, parts in pieces.items():
        if file in tables:
            raise TraceFormatError(f"clip {file!r} has both a whole score file and window "
                                   "score files", path=tables[file][1])
        check_windows(file, spans[file], (durations or {}).get(file))
        parts.sort(key=lambda part: part[0].onset[0] if len(part[0].onset) else 0.0)
        merged = overlap_average([p for p, _ in parts], where=f"{directory} (clip {file!r})")
        lines = np.zeros(len(merged.onset), dtype=np.int64)
        tables[file] = (ScoreTable(merged.onset, merged.offset, classes[0], merged.scores,
                                   lines), str(parts[0][1]))
    missing = sorted(c for c in expected or () if c not in tables)
    if missing:
        raise TraceFormatError(f"no score file for reference clip(s) "
                               f"{', '.join(map(repr, missing[:5]))}"
                               f"{' …' if len(missing) > 5 else ''} (expected e.g. "
                               f"{directory / (missing[0] + '.tsv')}); a system scores every "
                               "clip", path=str(directory))
    return dict(sorted(tables.items()))


def check_score_classes(tables: Mapping[str, tuple[ScoreTable, str]],
                        classes: Sequence[str]) -> None:
    """Refuse score tables (:func:`read_score_dir`, one column set) without a column for one
    of the reference's ``classes``: its events would all count as missed, silently."""
    if not tables:
        return
    table, path = next(iter(tables.values()))
    missing = [c for c in classes if c not in table.classes]
    if missing:
        raise TraceFormatError(f"no score column for reference class {missing[0]!r} (the "
                               f"columns are {', '.join(table.classes)}): every reference "
                               "event of it would count as missed; add its column (zeros "
                               "if the system never predicts it) or map the columns with a "
                               "class map", path=path, row=1)


def select_columns(table: ScoreTable, classes: Sequence[str], path: str) -> ScoreTable:
    """The table's columns of ``classes``, in that order; a class without a column is an
    error naming the file."""
    missing = [c for c in classes if c not in table.classes]
    if missing:
        raise TraceFormatError(f"no score column for declared class {missing[0]!r} (the "
                               f"columns are {', '.join(table.classes)})", path=path, row=1)
    index = [table.classes.index(c) for c in classes]
    return replace(table, classes=tuple(classes), scores=table.scores[:, index])


def tables_to_events(tables: dict[str, tuple[ScoreTable, str]], policy: DecisionPolicy,
                     directory: str | Path) -> EventList:
    """Events of score tables (:func:`read_score_dir`) under the decision policy; each event
    names the score file and row it starts on."""
    events: list[tuple[str, float, float, str]] = []
    sources, lines, clips = [], [], {}
    for clip, (table, path) in tables.items():
        clips[clip] = (path, 1)
        if table.scores.shape[0] == 0:
            continue
        hop = float(np.median(table.offset - table.onset))
        try:
            active = decide(table.scores, policy, hop)
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
    """Events of every score file in ``directory`` (see :func:`read_score_dir`) under the
    decision policy."""
    return tables_to_events(read_score_dir(directory, expected, class_map=class_map,
                                           windows=windows), policy, directory)
