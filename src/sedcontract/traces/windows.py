"""Long files cut into windows, and window scores merged back to file time.

A window of file ``F`` from ``s`` to ``e`` seconds is the clip ``F-SSSSSS-EEEEEE`` (``s`` and
``e`` in centiseconds, six digits at least: the naming of the DCASE 2024 Task 4 baseline's
MAESTRO chunks). Merged scores are the mean, at every instant, of the windows covering it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces.grid import to_us

_WINDOW = re.compile(r"(?P<file>.+)-(?P<start>[0-9]{6,})-(?P<end>[0-9]{6,})\Z")


def window_id(file: str, start: float, end: float) -> str:
    """The clip id of the window ``[start, end)`` seconds of ``file``."""
    return f"{file}-{round(start * 100):06d}-{round(end * 100):06d}"


def parse_window_id(clip: str) -> tuple[str, float, float] | None:
    """``(file, start, end)`` seconds of a window clip id, None if ``clip`` is not one."""
    match = _WINDOW.match(clip)
    if match is None:
        return None
    start, end = int(match["start"]) / 100, int(match["end"]) / 100
    return (match["file"], start, end) if end > start else None


def window_starts(duration: float, length: float, hop: float) -> list[tuple[float, float]]:
    """Windows ``[start, end)`` of ``length`` seconds every ``hop`` seconds over a file of
    ``duration``; the last one ends at the file's end (it may be shorter)."""
    if not (length > 0 and 0 < hop <= length):
        raise TraceFormatError(f"windows need 0 < hop <= length, got length {length!r} s and "
                               f"hop {hop!r} s")
    if duration <= 0:
        return []
    hop_us, length_us, end_us = int(to_us(hop)), int(to_us(length)), int(to_us(duration))
    out, start = [], 0
    while True:
        end = min(start + length_us, end_us)
        out.append((start / 1e6, end / 1e6))
        if end >= end_us:
            return out
        start += hop_us


def check_windows(file: str, windows: Sequence[tuple[float, float, str]],
                  duration: float | None = None) -> None:
    """Refuse windows ``(start, end, path)`` of ``file`` that repeat one window, start after
    0 s or end before ``duration`` (less half a centisecond: names are in centiseconds)."""
    seen: dict[tuple[float, float], str] = {}
    for start, end, path in windows:
        if (start, end) in seen:
            raise TraceFormatError(f"{Path(seen[start, end]).name} and {Path(path).name} are "
                                   f"both the scores of window {start:g}–{end:g} s of file "
                                   f"{file!r}", path=path)
        seen[start, end] = path
    start, _, path = min(windows)
    if start > 0:
        raise TraceFormatError(f"no window covers 0–{start:g} s of file {file!r}: its first "
                               "window's scores are missing", path=path)
    end, path = max((e, p) for _, e, p in windows)
    if duration is not None and end < duration - 0.005:
        raise TraceFormatError(f"no window covers {end:g}–{duration:g} s of file {file!r} (its "
                               f"duration {duration:g} s): its last window's scores are "
                               "missing", path=path)


@dataclass(frozen=True)
class Piece:
    """Scores of one window on file time: frame ``k`` covers ``[onset[k], offset[k])``."""

    onset: np.ndarray
    offset: np.ndarray
    scores: np.ndarray  # [frames, classes]


def overlap_average(pieces: Sequence[Piece], *, where: str = "") -> Piece:
    """The windows' scores merged onto the union of their frame boundaries: each elementary
    span holds the mean of the frames that cover it. Time no window covers between the first
    onset and the last offset is an error (a window is missing), and so is +inf met by -inf
    (a mean that is not a number)."""
    if not pieces:
        raise TraceFormatError("no window scores to merge", path=where or None)
    on = [to_us(p.onset) for p in pieces]
    off = [to_us(p.offset) for p in pieces]
    bounds = np.unique(np.concatenate(on + off))
    width = pieces[0].scores.shape[1]
    sums = np.zeros((len(bounds) - 1, width))
    counts = np.zeros(len(bounds) - 1, dtype=np.int64)
    for piece, start, end in zip(pieces, on, off, strict=True):
        if not len(start):
            continue
        first = np.searchsorted(bounds, start[0])
        last = np.searchsorted(bounds, end[-1])
        spans = np.arange(first, last)
        frame = np.searchsorted(start, bounds[spans], side="right") - 1
        inside = bounds[spans] < end[frame]  # a gap inside one window adds nothing there
        with np.errstate(invalid="ignore"):  # +inf meeting -inf: refused below
            sums[spans[inside]] += piece.scores[frame[inside]]
        counts[spans[inside]] += 1
    gap = np.flatnonzero(counts == 0)
    if gap.size:
        k = gap[0]
        raise TraceFormatError(f"no window covers {bounds[k] / 1e6:g}–{bounds[k + 1] / 1e6:g} s:"
                               " a window's scores are missing", path=where or None)
    with np.errstate(invalid="ignore"):
        mean = sums / counts[:, None]
    undefined = np.argwhere(np.isnan(mean))
    if undefined.size:  # +inf and -inf met: scores are never NaN
        k, c = undefined[0]
        raise TraceFormatError(f"windows overlapping at {bounds[k] / 1e6:g}–"
                               f"{bounds[k + 1] / 1e6:g} s score +inf and -inf in column "
                               f"{c + 1}: their mean is undefined", path=where or None)
    return Piece(bounds[:-1] / 1e6, bounds[1:] / 1e6, mean)
