"""Benchmarks don't rot: every script in ``benchmarks/`` runs at a tiny size (``--smoke``) on
every commit, so ``make bench`` works whenever the suite passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

BENCHMARKS = REPO / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))


def test_every_benchmark_is_run_by_make_bench():
    makefile = (BENCHMARKS.parent / "Makefile").read_text()
    assert SCRIPTS and all(f"benchmarks/{p.name}" in makefile for p in SCRIPTS)


def smoke(script: Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    """The script's ``--smoke`` run in ``cwd`` (``env`` added to the environment): what it
    printed (it succeeded, printed something and left nothing in ``cwd``)."""
    result = subprocess.run([sys.executable, "-W", "ignore", str(script), "--smoke"],
                            capture_output=True, text=True, cwd=cwd, timeout=600,
                            env={**{k: v for k, v in os.environ.items()
                                    if k != "SEDCONTRACT_BENCH_ROWS"}, **(env or {})})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.strip(), "a benchmark prints what it measured"
    assert not any(cwd.iterdir()), "a benchmark leaves nothing in the working directory"
    return result.stdout


@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.stem != "device"],
                         ids=lambda p: p.stem)
def test_benchmark_runs_at_a_tiny_size(script, tmp_path):
    out = smoke(script, tmp_path)  # exits 0, leaves nothing behind
    assert any(ch.isdigit() for ch in out), "a benchmark prints numbers"


def test_make_bench_ends_with_each_case_beside_its_reference_tool(tmp_path):
    """Two scripts run as ``make bench`` runs them (``SEDCONTRACT_BENCH_ROWS`` set) record one
    row per case they print, and ``summary.py`` prints them in one table: the case, our time
    and the reference tool's name in every row."""
    rows, work = tmp_path / "rows.jsonl", tmp_path / "work"
    work.mkdir()
    cases = {"psds_points.py": ("psds_eval", {"psds1", "psds2"}),
             "standard_scores.py": ("sed_eval", {"collar event F1 (optimal)",
                                                 "collar event F1 (greedy)", "segment F1 (1 s)"})}
    for name in cases:
        smoke(BENCHMARKS / name, work, {"SEDCONTRACT_BENCH_ROWS": str(rows)})
    assert rows.exists(), "record() wrote nothing"
    recorded = [json.loads(line) for line in rows.read_text().splitlines()]
    out = subprocess.run([sys.executable, str(BENCHMARKS / "summary.py"), str(rows)],
                         capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if line.startswith("|")]
    assert lines[0].startswith("| benchmark | case | sedcontract | reference tool |")
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert len(table) == len(recorded) == 5
    assert [row[:3] for row in table] == [[r["benchmark"], r["case"], r["ours"]] for r in recorded]
    for benchmark, case, ours, tool, reference, *_ in table:
        assert ours.endswith(" s") and reference.endswith(" s"), (benchmark, case)
        assert tool == cases[benchmark][0], (benchmark, case)
    for benchmark, (_, names) in cases.items():
        printed = {row[1] for row in table if row[0] == benchmark}
        assert all(any(c.startswith(n) for c in printed) for n in names), (benchmark, printed)


def test_the_device_check_prints_a_row_of_numbers_per_detector(tmp_path):
    """benchmarks/device.py at a tiny size (on the CPU here, CUDA where there is one): one row
    per detector, on one device, every measurement a number (peak memory: — on the CPU)."""
    out = smoke(BENCHMARKS / "device.py", tmp_path)
    lines = [line for line in out.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == ["detector", "device", "precision", "steps/s", "clips/s",
                      "peak memory MB", "monitor share of validation"]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [row[0] for row in rows] == ["threshold", "logistic", "temporal_cnn", "dilated_cnn",
                                        "contract_aware", "probe (tiny wav2vec2)"]
    for detector, device, precision, steps, clips, memory, share in rows:
        assert device in ("cpu", "cuda") and {device} == {row[1] for row in rows}
        assert precision in ("32", "bf16-mixed"), detector
        assert float(steps) > 0 and float(clips) >= float(steps), detector
        assert memory == "—" if device == "cpu" else float(memory) > 0, detector
        assert share.endswith("%") and 0 <= float(share[:-1]) <= 100, detector
