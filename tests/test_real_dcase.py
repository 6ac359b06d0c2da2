"""The real-data track: DESED validation and the DCASE baseline's own output files
(``tests/data/real_dcase``, copied unchanged from DCASE-REPO/DESED_task, MIT licence; see its
README for provenance), read as a participant has them — the pandas CSV of detections, the
psds_eval operating-point tables, the durations file that rounds — with the guard vector
computed twice, by the run-length and the dense monitor backends."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

from sedcontract.audit import AuditPolicy, audit
from sedcontract.errors import TraceFormatError
from sedcontract.traces import read_durations, read_events

DATA = Path(__file__).parent / "data" / "real_dcase"
REF, DURATIONS = DATA / "validation.tsv", DATA / "validation_durations.tsv"
PRED = DATA / "teacher" / "predictions0.5.csv"
CLASSES = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog", "Electric_shaver_toothbrush",
           "Frying", "Running_water", "Speech", "Vacuum_cleaner")


def test_the_files_are_read_as_they_come():
    ref, pred, durations = read_events(REF), read_events(PRED), read_durations(DURATIONS)
    assert len(ref.clips) == len(durations) == 1168
    assert len(ref) == 4224 and sorted(set(ref.label)) == list(CLASSES)
    assert len(pred) == 3351 and set(pred.label) <= set(CLASSES)  # sed_eval's Nsys total
    assert pred.where(0) == {"path": str(PRED), "row": 2}


def test_every_operating_point_table_is_read(tmp_path):
    with tarfile.open(DATA / "teacher" / "operating_points.tar.xz") as archive:
        archive.extractall(tmp_path, filter="data")
    tables = sorted((tmp_path / "teacher").glob("predictions_th_*.tsv"))
    assert len(tables) == 50
    sizes = [len(read_events(t)) for t in tables]
    # lower thresholds detect more (each table is the baseline's output at its threshold)
    assert sizes[0] > sizes[-1] > 0


def test_durations_that_round_audit_unchanged_and_are_counted():
    report = audit(REF, PRED, durations=DURATIONS, classes=CLASSES)
    assert report.traces["cut"] == {"ref": 16, "pred": 6}
    assert any("16 reference event(s) ended past their clip's duration" in w
               for w in report.traces["warnings"])
    for mode in ("typed", "union"):
        vector = report.vector(mode)
        assert all(0 <= v <= 1 for v in vector.values()), (mode, vector)
    dense = audit(REF, PRED, durations=DURATIONS, classes=CLASSES, backend="dense")
    for mode in ("typed", "union"):
        for name in report.coordinates:
            np.testing.assert_array_equal(report.modes[mode].satisfied[name],
                                          dense.modes[mode].satisfied[name])
            np.testing.assert_array_equal(report.modes[mode].obligations[name],
                                          dense.modes[mode].obligations[name])


def test_strict_durations_refuse_the_rounded_file_by_count_and_first_row():
    with pytest.raises(TraceFormatError, match=r"16 reference event\(s\) end past their "
                       r"clip's duration, --strict-durations") as info:
        audit(REF, PRED, AuditPolicy(strict_durations=True), durations=DURATIONS)
    assert (info.value.path, info.value.row) == (str(REF), 26)
