"""Benchmarks don't rot: every script in ``benchmarks/`` runs at a tiny size (``--smoke``) on
every commit, so ``make bench`` works whenever the suite passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))


def test_every_benchmark_is_run_by_make_bench():
    makefile = (BENCHMARKS.parent / "Makefile").read_text()
    assert SCRIPTS and all(f"benchmarks/{p.name}" in makefile for p in SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_runs_at_a_tiny_size(script, tmp_path):
    result = subprocess.run([sys.executable, "-W", "ignore", str(script), "--smoke"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.strip(), "a benchmark prints what it measured"
    assert not any(tmp_path.iterdir()), "a benchmark leaves nothing in the working directory"
