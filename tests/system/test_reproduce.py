"""``make reproduce`` end to end at a tiny size (synthetic speech, one epoch): every detector
trains and is evaluated, the selection, the sweep and the report are written, and a second
run reuses the runs and regenerates the same report bytes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.paths import REPO

ROOT = REPO


@pytest.mark.slow
def test_reproduce_smoke(tmp_path):
    command = [sys.executable, str(ROOT / "scripts" / "reproduce.py"), "--smoke",
               "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out")]
    first = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    report = tmp_path / "out" / "report"
    for name in ("selected.contract", "selection.md", "tables/sweep.png", "tables/sweep.csv",
                 "tables/report.html", "tables/by_group.csv", "tables/mechanism.md",
                 "tables/scores.csv", "tables/matching.csv"):
        assert (report / name).is_file(), name
    html = (report / "tables" / "report.html").read_text()
    assert 'id="sweep"' in html and 'id="timelines"' in html
    for detector in ("ThresholdDetector", "LogisticDetector", "TemporalCNN", "DilatedCNN",
                     "ContractAwareDetector"):
        assert detector in html, detector
    before = {p: p.read_bytes() for p in (report / "tables").iterdir()}
    second = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "training" not in second.stdout  # the runs are reused
    assert {p: p.read_bytes() for p in (report / "tables").iterdir()} == before
