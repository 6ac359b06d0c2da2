"""``scripts/contract_tradeoff.py``'s entry points (round 2 of the held-out protocol):
``render`` prints what it writes and names a missing source file; the held-out command needs
the lock and takes no choices; a committed run regenerates row for row. The rules, the lock
and the page themselves are tested on the library (``tests/unit/experiments``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sedcontract.experiments import tradeoff_files
from tests.helpers.paths import REPO
from tests.helpers.protocol_tables import HELDOUT_CONTRASTS, write_tables

ROOT = REPO
SCRIPT = ROOT / "scripts" / "contract_tradeoff.py"
RESULTS = ROOT / "docs" / "results"


def test_render_prints_what_it_writes_and_names_a_missing_source_file(tmp_path):
    stem = tradeoff_files.HELDOUT_STEM
    write_tables(tmp_path, stem, gains={3: 0.012}, reached={}, split="test",
                 contrasts=HELDOUT_CONTRASTS)
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / f"{stem}.md").read_text()
    assert done.stdout == page + "\n"  # what it printed is what it wrote
    assert "onset area +0.031 [+0.012, +0.050] **↑**" in page
    (tmp_path / f"{stem}_systems.csv").unlink()
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and f"{stem}_systems.csv does not exist" in done.stderr


def test_the_held_out_command_needs_the_lock_and_takes_no_choices(tmp_path):
    def held_out(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), "heldout", "--out", str(tmp_path),
                               "--runs", str(tmp_path / "runs"), "--data", str(tmp_path / "d"),
                               *extra], capture_output=True, text=True, cwd=ROOT)

    done = held_out()
    assert done.returncode != 0 and "lock the choices first" in done.stderr
    done = held_out("trainer.max_epochs=10")
    assert done.returncode == 2 and "unrecognized arguments" in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "d").exists()


@pytest.mark.slow
def test_a_committed_held_out_run_regenerates_row_for_row(tmp_path):
    """Round 2's first held-out run (data seed 5, BCE, training seed 0), trained again from
    nothing in a scratch folder under ``reproducible=true``: its count rows, post-processing
    choice and trade-off readings equal the committed ones character for character (a few
    minutes on two cores)."""
    done = subprocess.run([sys.executable, str(SCRIPT), "regenerate", "5", "bce_only", "0",
                           "--runs", str(tmp_path / "runs"), "--data", str(tmp_path / "data")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "equal the committed ones, character for character" in done.stdout


@pytest.mark.parametrize("development", [True, False], ids=["development", "heldout"])
def test_the_committed_pages_are_their_rows_rendered(tmp_path, development):
    """Each committed round-2 page is exactly what ``render`` makes of the CSV files beside
    it: no number on it was edited by hand."""
    stem = tradeoff_files.DEVELOPMENT_STEM if development else tradeoff_files.HELDOUT_STEM
    for path in tradeoff_files.paths_of(RESULTS, stem).values():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    page = tmp_path / f"{stem}.md"
    page.unlink()
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(tmp_path),
                           *(["--development"] if development else [])],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert page.read_text() == (RESULTS / f"{stem}.md").read_text()
