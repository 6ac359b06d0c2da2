"""Frame scores (sed_scores_eval layout: one tsv per clip, ``onset offset <class…>``) and the
declared decision policy that turns them into events: optional median filter, then a
threshold (active iff score > threshold)."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import median_filter

from sedcontract.errors import TraceFormatError
from sedcontract.traces.activity import runs
from sedcontract.traces.events import EventList


@dataclass(frozen=True)
class DecisionPolicy:
    """How scores become events; part of every report."""

    threshold: float = 0.5
    median_filter: float = 0.0  # seconds; 0 = off

    def __post_init__(self) -> None:
        if not math.isfinite(self.threshold):
            raise TraceFormatError(f"decision threshold must be a finite number, got "
                                   f"{self.threshold!r}")
        if not math.isfinite(self.median_filter) or self.median_filter < 0:
            raise TraceFormatError(f"median filter must be a non-negative number of seconds, "
                                   f"got {self.median_filter!r}")

    def describe(self) -> str:
        mf = f", median filter {self.median_filter:g} s" if self.median_filter else ""
        return f"active iff score > {self.threshold:g}{mf}"


@dataclass(frozen=True)
class ScoreTable:
    """One clip's frame scores: frame times and a ``[frames, classes]`` array."""

    onset: np.ndarray
    offset: np.ndarray
    classes: tuple[str, ...]
    scores: np.ndarray
    lines: np.ndarray  # the file line of every frame


def read_scores(path: str | Path) -> ScoreTable:
    """Read one score tsv; names the file, row and column of any bad value."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"cannot read score file ({exc.__class__.__name__})",
                               path=str(path)) from None
    numbered = [(i + 1, fields) for i, fields in enumerate(csv.reader(lines, delimiter="\t"))
                if any(f.strip() for f in fields)]
    rows = [fields for _, fields in numbered]
    if not rows or [c.strip() for c in rows[0][:2]] != ["onset", "offset"] or len(rows[0]) < 3:
        raise TraceFormatError("a score file starts with the header 'onset offset <class…>'",
                               path=str(path), row=1)
    header = [c.strip() for c in rows[0]]
    lines_of = np.array([line for line, _ in numbered[1:]], dtype=np.int64)
    values = np.empty((len(rows) - 1, len(header)))
    for k, fields in enumerate(rows[1:]):
        r = int(lines_of[k])
        if len(fields) != len(header):
            raise TraceFormatError(f"{len(fields)} columns, the header has {len(header)}",
                                   path=str(path), row=r)
        for c, text in enumerate(fields):
            try:
                values[k, c] = float(text)
            except ValueError:
                raise TraceFormatError(f"{text!r} is not a number", path=str(path), row=r,
                                       column=header[c]) from None
            if not math.isfinite(values[k, c]):
                raise TraceFormatError(f"{text!r} is not finite", path=str(path), row=r,
                                       column=header[c])
    if values.shape[0] and np.any(values[:, 1] <= values[:, 0]):
        r = int(lines_of[np.flatnonzero(values[:, 1] <= values[:, 0])[0]])
        raise TraceFormatError("offset is not after onset", path=str(path), row=r,
                               column="offset")
    return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:], lines_of)


def decide(scores: np.ndarray, policy: DecisionPolicy, hop: float) -> np.ndarray:
    """Boolean activity from frame scores ``[..., frames, classes]`` under ``policy``: the
    median filter (its length in seconds rounded to frames of ``hop``) along frames, then
    the threshold."""
    scores = np.asarray(scores, dtype=np.float64)
    if policy.median_filter > 0 and scores.shape[-2] > 0:
        size = max(1, round(policy.median_filter / hop))
        sizes = (1,) * (scores.ndim - 2) + (size, 1)
        scores = median_filter(scores, size=sizes, mode="nearest")
    return scores > policy.threshold


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


def scores_to_events(directory: str | Path, policy: DecisionPolicy) -> EventList:
    """Events of every ``*.tsv`` score file in ``directory`` (clip id = file stem)."""
    directory = Path(directory)
    files = sorted(directory.glob("*.tsv"))
    if not files:
        raise TraceFormatError("no score files (*.tsv) in this directory", path=str(directory))
    events: list[tuple[str, float, float, str]] = []
    sources, lines, clips = [], [], {}
    for path in files:
        table = read_scores(path)
        clips[path.stem] = (str(path), 1)
        if table.scores.shape[0] == 0:
            continue
        steps = np.diff(table.onset)
        hop = float(np.median(steps)) if steps.size else float(table.offset[0] - table.onset[0])
        row, start, end = runs(decide(table.scores, policy, hop).T)
        events += [(path.stem, float(table.onset[s]), float(table.offset[e - 1]),
                    table.classes[r]) for r, s, e in zip(row, start, end, strict=True)]
        sources += [str(path)] * len(row)
        lines += table.lines[start].tolist()
    return EventList.from_rows(events, clips=tuple(clips), path=str(directory),
                               rows=np.asarray(lines, dtype=np.int64),
                               files=np.asarray(sources, dtype=object), clip_rows=clips)
