"""``scripts/contract_losses.py --from-csv``: the Markdown of the contract-loss experiment is
regenerated from its committed source rows alone, and the target is checked from the
intervals, not typed in."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")


def write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def rows_of(system: str, seed: int, satisfied: int) -> list[dict]:
    out = [{"system": system, "seed": seed, "mode": mode, "coordinate": c,
            "satisfied": satisfied if c != "silence" else 0,
            "obligations": 100 if c != "silence" else 0}
           for mode in ("typed", "union") for c in COORDINATES]
    out += [{"system": system, "seed": seed, "mode": "scores", "coordinate": f"{k}_f1",
             "satisfied": 2 * satisfied, "obligations": 200} for k in ("event", "segment",
                                                                        "frame")]
    return out


def interval(system: str, mode: str, coordinate: str, point: float, lo: float, hi: float
             ) -> dict:
    return {"system": system, "control": "bce_only", "mode": mode, "coordinate": coordinate,
            "point": point, "lo": lo, "hi": hi, "level": 0.95, "defined": 100,
            "resamples": 100}


def run(out: Path) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "contract_losses.py"),
                           "--from-csv", "--out", str(out)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return (out / "contract_losses.md").read_text()


def test_the_tables_come_from_the_rows_and_the_verdict_from_the_intervals(tmp_path):
    rows = [*rows_of("bce_only", 0, 80), *rows_of("bce_only", 1, 82),
            *rows_of("rise", 0, 85), *rows_of("rise", 1, 87)]
    write(tmp_path / "contract_losses.csv", rows)
    ivs = [interval("rise", mode, c, 0.05, 0.03, 0.07)
           for mode in ("typed", "union") for c in (*COORDINATES, "logic")]
    write(tmp_path / "contract_losses_intervals.csv", ivs)
    text = run(tmp_path)
    # per seed: the mean of the six non-vacuous coordinates (silence is vacuous: NaN, left out)
    assert "| bce_only | 0.810 ± 0.014 | 0.810 ± 0.014 |" in text
    assert "| rise | 0.860 ± 0.014 |" in text
    assert "| rise | bce_only | +0.050 [+0.030, +0.070] **↑** |" in text
    assert "Best arm: `rise`" in text and "Met." in text
    # worse on a coordinate beyond its interval: the target is not met
    ivs[1] = interval("rise", "typed", "offset", -0.04, -0.06, -0.02)
    write(tmp_path / "contract_losses_intervals.csv", ivs)
    text = run(tmp_path)
    assert "worse on offset" in text and "Not met." in text
