"""Frame scores (sed_scores_eval layout: one tsv per clip, ``onset offset <class…>``) and the
declared decision policy that turns them into events: optional median filter, then a
threshold (active iff score > threshold)."""

from __future__ import annotations

import csv
import math
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


def read_scores(path: str | Path) -> ScoreTable:
    """Read one score tsv; names the file, row and column of any bad value."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"cannot read score file ({exc.__class__.__name__})",
                               path=str(path)) from None
    rows = list(csv.reader(lines, delimiter="\t"))
    if not rows or [c.strip() for c in rows[0][:2]] != ["onset", "offset"] or len(rows[0]) < 3:
        raise TraceFormatError("a score file starts with the header 'onset offset <class…>'",
                               path=str(path), row=1)
    header = [c.strip() for c in rows[0]]
    values = np.empty((len(rows) - 1, len(header)))
    for r, fields in enumerate(rows[1:], start=2):
        if len(fields) != len(header):
            raise TraceFormatError(f"{len(fields)} columns, the header has {len(header)}",
                                   path=str(path), row=r)
        for c, text in enumerate(fields):
            try:
                values[r - 2, c] = float(text)
            except ValueError:
                raise TraceFormatError(f"{text!r} is not a number", path=str(path), row=r,
                                       column=header[c]) from None
            if not math.isfinite(values[r - 2, c]):
                raise TraceFormatError(f"{text!r} is not finite", path=str(path), row=r,
                                       column=header[c])
    if values.shape[0] and np.any(values[:, 1] <= values[:, 0]):
        r = int(np.flatnonzero(values[:, 1] <= values[:, 0])[0]) + 2
        raise TraceFormatError("offset is not after onset", path=str(path), row=r,
                               column="offset")
    return ScoreTable(values[:, 0], values[:, 1], tuple(header[2:]), values[:, 2:])


def scores_to_events(directory: str | Path, policy: DecisionPolicy) -> EventList:
    """Events of every ``*.tsv`` score file in ``directory`` (clip id = file stem)."""
    directory = Path(directory)
    files = sorted(directory.glob("*.tsv"))
    if not files:
        raise TraceFormatError("no score files (*.tsv) in this directory", path=str(directory))
    rows: list[tuple[str, float, float, str]] = []
    clips = []
    for path in files:
        table = read_scores(path)
        clips.append(path.stem)
        if table.scores.shape[0] == 0:
            continue
        scores = table.scores
        if policy.median_filter > 0:
            hop = float(np.median(table.offset - table.onset))
            size = max(1, round(policy.median_filter / hop))
            scores = median_filter(scores, size=(size, 1), mode="nearest")
        active = (scores > policy.threshold).T
        row, start, end = runs(active)
        rows += [(path.stem, float(table.onset[s]), float(table.offset[e - 1]),
                  table.classes[r]) for r, s, e in zip(row, start, end, strict=True)]
    return EventList.from_rows(rows, clips=clips, path=str(directory))
