"""The real DCASE files of ``tests/data/real_dcase`` (DESED validation, the DCASE baseline's
own outputs) and the frame scores its operating points imply, shared by the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sedcontract.data import dcase_baseline
from sedcontract.traces import read_durations
from tests.helpers.paths import TEST_DATA

DATA = TEST_DATA / "real_dcase"
REF, DURATIONS = DATA / "validation.tsv", DATA / "validation_durations.tsv"
PRED = DATA / "teacher" / "predictions0.5.csv"
POINTS = DATA / "teacher" / "operating_points.tar.xz"
CLASSES = dcase_baseline.DESED_CLASSES
HOP, FRAMES = dcase_baseline.FRAME, dcase_baseline.FRAMES  # 156 frames of 64 ms (9.984 s)


def implied_scores(points: Path) -> dict[str, np.ndarray]:
    """The baseline's implied frame scores (:func:`dcase_baseline.implied_scores`) for every
    clip of DESED validation, from the extracted operating points ``points``."""
    return dcase_baseline.implied_scores(points, list(read_durations(DURATIONS)))


def write_implied_scores(folder: Path) -> Path:
    """The implied scores of the repository's archive as a score folder at ``folder``."""
    return dcase_baseline.write_implied_scores(folder, POINTS, DURATIONS)
