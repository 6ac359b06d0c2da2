"""A PSDS corpus long enough that every scenario's PSDS is well inside (0, 1), overall and per
class, so the agreement tests compare curves, not zeros: about two hours of audio in long clips,
four classes of different reference durations, cross-triggers between every ordered pair of
classes, plateaus of the ROC, and detections that meet the DTC, GTC and CTTC exactly.

The score tables tile each clip with frames of 125 ms around events and false alarms and with
long rows of background in between (score tables need not have equal frames), so a 20-minute
clip is about 3,000 rows. Times are on a 125 ms grid, and a detection may be an event's first
half or twice its length ending with it: shares of exactly 0.5 occur by construction. The
operating points are the tables thresholded."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import EventList
from sedcontract.traces.score_files import ScoreTable
from tests.helpers.paths import REPO

STEP = 0.125  # the time grid, in seconds (binary: shares are exact in floats)
CLASSES = ("c0", "c1", "c2", "c3")
LENGTHS = {"c0": (2, 8), "c1": (8, 24), "c2": (24, 64), "c3": (4, 40)}  # in steps
SCENARIOS = {
    **PRESETS,
    # every criterion at a share the grid meets exactly; cross-triggers and the class spread
    # both weigh in
    "custom": PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.5, alpha_ct=0.7, alpha_st=0.6,
                           max_efpr=150.0),
}


def long_corpus(seed: int, clips: int = 6, seconds: float = 1200.0, levels: int | None = 20
                ) -> tuple[EventList, dict[str, ScoreTable], dict[str, float]]:
    """The reference events, a score table per clip and the durations (``clips`` clips of
    ``seconds``); ``levels``: scores rounded to that many steps (ties between classes and
    thresholds, flat runs), None for continuous scores."""
    rng = np.random.default_rng(seed)
    rows, tables, durations = [], {}, {}
    for i in range(clips):
        clip = f"long{i}"
        needed = {(a, b) for a in range(len(CLASSES)) for b in range(len(CLASSES)) if a != b}
        cells = round(seconds / STEP)
        # each cell's score per class, painted on the grid, then joined into rows
        score = np.zeros((cells, len(CLASSES)))
        fine = np.zeros(cells, dtype=bool)  # cells near something: frames of one step
        t = int(rng.integers(40, 160))
        while True:
            k = int(rng.integers(len(CLASSES)))
            lo, hi = LENGTHS[CLASSES[k]]
            length = int(rng.integers(lo, hi + 1))
            if t + length + 40 >= cells:
                break
            on, off = t, t + length
            rows.append((clip, on * STEP, off * STEP, CLASSES[k]))
            fine[max(on - 24, 0):off + 24] = True
            _detect(rng, score, k, on, off, levels)
            # a cross-trigger: another class fires on (part of) this event; every clip
            # plants one for each ordered pair of classes first
            planted = sorted(a for a, b in needed if b == k)
            if planted or rng.random() < 0.35:
                other = planted[0] if planted else \
                    int(rng.choice([j for j in range(len(CLASSES)) if j != k]))
                needed.discard((other, k))
                a, b = _share(rng, on, off)
                score[max(a, 0):min(b, cells), other] = _level(rng, 0.3, 0.95, levels)
                fine[max(a - 8, 0):b + 8] = True
            t = off + int(rng.integers(80, 400))
        for _ in range(int(rng.integers(8, 16))):  # false alarms in the background
            a = int(rng.integers(0, cells - 40))
            b = a + int(rng.integers(2, 40))
            if not fine[a:b].any():
                score[a:b, int(rng.integers(len(CLASSES)))] = _level(rng, 0.2, 0.9, levels)
                fine[max(a - 8, 0):b + 8] = True
        # background: a low score per class held for 10 s to a minute at a time
        stretch = np.cumsum(rng.integers(80, 480, cells // 80 + 1))
        held = _level(rng, 0.0, 0.15, levels, size=(len(stretch), len(CLASSES)))
        held *= rng.random((len(stretch), 1)) < 0.5
        score = np.maximum(score, held[np.searchsorted(stretch, np.arange(cells), "right")])
        tables[clip] = _table(score, fine)
        durations[clip] = cells * STEP
    return EventList.from_rows(rows, clips=tuple(tables)), tables, durations


def _level(rng: np.random.Generator, lo: float, hi: float, levels: int | None,
           size: tuple[int, ...] | None = None) -> np.ndarray | float:
    """Scores in ``[lo, hi]``, on ``levels`` steps when given."""
    value = rng.uniform(lo, hi, size)
    return np.round(value * levels) / levels if levels else value


def _share(rng: np.random.Generator, on: int, off: int) -> tuple[int, int]:
    """A span around or inside ``[on, off)`` (in cells): the event itself, its first half,
    twice its length ending with it (half of it on the event), or a random cut."""
    length = off - on
    kind = int(rng.integers(4))
    if kind == 0:
        return on, off
    if kind == 1 and length % 2 == 0:
        return on, on + length // 2
    if kind == 2:
        return on - length, off
    a = on + int(rng.integers(-length, length))
    return a, a + int(rng.integers(1, 2 * length + 1))


def _detect(rng: np.random.Generator, score: np.ndarray, k: int, on: int, off: int,
            levels: int | None) -> None:
    """Class ``k``'s scores on its event ``[on, off)``: missed (background only) one time in
    six, else a plateau over a span like the event (sometimes with a lower stretch inside,
    so a threshold between the two splits the detection)."""
    if rng.random() < 1 / 6:
        return
    a, b = _share(rng, on, off)
    a, b = max(a, 0), min(b, len(score))
    if b <= a:
        return
    top = _level(rng, 0.25, 1.0, levels)
    score[a:b, k] = np.maximum(score[a:b, k], top)
    if b - a >= 6 and rng.random() < 0.3:
        mid = (a + b) // 2
        score[mid - 1:mid + 1, k] = _level(rng, 0.1, 0.5 * top, levels)


def _table(score: np.ndarray, fine: np.ndarray) -> ScoreTable:
    """The cells as a score table: a row per cell where ``fine``, else one row per stretch of
    equal scores (rows of background up to minutes long)."""
    cells = len(score)
    cut = np.ones(cells + 1, dtype=bool)
    cut[1:cells] = fine[1:] | fine[:-1] | np.any(score[1:] != score[:-1], axis=1)
    edges = np.flatnonzero(cut)
    onset, offset = edges[:-1] * STEP, edges[1:] * STEP
    return ScoreTable(onset, offset, CLASSES, score[edges[:-1]],
                      np.arange(len(onset)) + 2)


def operating_points(tables: dict[str, ScoreTable], thresholds: np.ndarray
                     ) -> list[EventList]:
    """The tables thresholded (a detection: a maximal run of rows scoring at least the
    threshold), one event list per threshold."""
    points = []
    for threshold in thresholds:
        rows = []
        for clip, table in tables.items():
            above = table.scores >= threshold
            for j, name in enumerate(table.classes):
                edge = np.diff(np.r_[False, above[:, j], False].astype(np.int8))
                for a, b in zip(np.flatnonzero(edge == 1), np.flatnonzero(edge == -1),
                                strict=True):
                    rows.append((clip, float(table.onset[a]), float(table.offset[b - 1]), name))
        points.append(EventList.from_rows(rows, clips=tuple(tables)))
    return points


def trivial(values: list[float]) -> int:
    """How many of ``values`` are 0 or 1 (a comparison of them tests little of the curve)."""
    return sum(v <= 0.0 or v >= 1.0 for v in values)


ORACLE = REPO / ".venv-oracle" / "bin" / "python"
JOB = REPO / "tests" / "oracles" / "psds_eval_job.py"


def psds_eval(cases: list[dict]) -> list[dict]:
    """psds_eval's answers to the cases (one process for all of them)."""
    if not ORACLE.exists():
        pytest.fail("the psds_eval oracle environment is missing: run `make test` (it makes "
                    ".venv-oracle from tests/oracles/requirements.txt)")
    done = subprocess.run([str(ORACLE), str(JOB)], input=json.dumps({"cases": cases}),
                          capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout)
