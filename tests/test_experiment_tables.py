"""``scripts/contract_losses.py``: the held-out table is rendered from its source rows alone,
the protocol's goal is read from the intervals, not typed in, and the lock refuses a held-out
table for choices changed after it, or made after held-out runs exist."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "contract_losses.py"
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")


@pytest.fixture(scope="module")
def script():
    """The script as a module (its folder on the path, as when it runs)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import contract_losses
        yield contract_losses
    finally:
        sys.path.remove(str(SCRIPT.parent))


def write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def rows_of(benchmark: int, system: str, post: str, seed: int, satisfied: int) -> list[dict]:
    keys = {"benchmark": benchmark, "system": system, "seed": seed, "post": post}
    out = [{**keys, "mode": mode, "coordinate": c,
            "satisfied": satisfied if c != "silence" else 0,
            "obligations": 100 if c != "silence" else 0}
           for mode in ("typed", "union") for c in COORDINATES]
    out += [{**keys, "mode": "scores", "coordinate": k, "satisfied": 2 * satisfied,
             "obligations": 200} for k in ("event_f1", "segment_f1")]
    return out


def interval(benchmark: str, system: str, post: str, control_post: str, mode: str,
             coordinate: str, point: float, lo: float, hi: float) -> dict:
    return {"benchmark": benchmark, "system": system, "post": post, "control": "bce_only",
            "control_post": control_post, "mode": mode, "coordinate": coordinate,
            "point": point, "lo": lo, "hi": hi, "level": 0.95, "defined": 100,
            "resamples": 100}


def render(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)


def tables(tmp_path: Path, onset: tuple[float, float, float]) -> list[dict]:
    rows = []
    for seed, base in ((0, 80), (1, 82)):
        rows += rows_of(2, "bce_only", "none", seed, base)
        rows += rows_of(2, "bce_only", "tuned", seed, base + 2)
        rows += rows_of(2, "contract", "none", seed, base + 3)
        rows += rows_of(2, "contract", "tuned", seed, base + 5)
    write(tmp_path / "contract_losses.csv", rows)
    write(tmp_path / "contract_losses_psds.csv",
          [{"benchmark": 2, "system": s, "seed": k, "psds1": v}
           for s, v in (("bce_only", 0.41), ("contract", 0.43)) for k in (0, 1)])
    write(tmp_path / "contract_losses_post.csv",
          [{"benchmark": 2, "system": "contract", "seed": 0, "median_filter": 0.12,
            "threshold": 0.4, "low": "", "validation_logic": 0.9}])
    ivs = [interval(where, "contract", post, control_post, mode, c, 0.03, 0.02, 0.04)
           for where in ("2", "pooled") for post, control_post in (("tuned", "tuned"),
                                                                    ("none", "tuned"))
           for mode in ("typed", "union") for c in (*COORDINATES, "logic", "event_f1")]
    for row in ivs:
        if (row["benchmark"], row["post"], row["mode"], row["coordinate"]) == \
                ("pooled", "none", "typed", "onset"):
            row["point"], row["lo"], row["hi"] = onset
    write(tmp_path / "contract_losses_intervals.csv", ivs)
    (tmp_path / "contract_losses_run.json").write_text(json.dumps({
        "command": "python scripts/contract_losses.py heldout", "split": "test",
        "contract": "rise", "wall_s": 3600, "commit": "abc", "choices_sha256": "0" * 64}))
    return ivs


def test_the_table_comes_from_the_rows_and_the_goal_from_the_intervals(tmp_path):
    tables(tmp_path, (0.03, 0.02, 0.04))
    done = render(tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "contract_losses.md").read_text()
    # per seed: the mean of the six non-vacuous coordinates (silence is vacuous, left out)
    assert "| 2 | bce_only | 0.810 ± 0.014 | 0.810 ± 0.014 |" in text
    assert "| 2 | contract + tuned post | 0.860 ± 0.014 |" in text
    assert "| 2 | contract | 0.840 ± 0.014 | 0.840 ± 0.014 | 0.430 ± 0.000 |" \
        in text  # event F1, segment F1 (2·83 and 2·85 of 200) and PSDS1
    assert "| **pooled** | contract + tuned post | bce_only + tuned post | " \
           "+0.030 [+0.020, +0.040] **↑** |" in text
    assert "| 2 | contract | 0 | 0.12 | 0.4 | — | 0.900 |" in text
    assert "— met." in text and "Without post-processing, beats BCE + tuned post on onset " \
        "+0.030 [+0.020, +0.040] **↑**" in text and "60 minutes" in text
    # onset no better than post-processing's, beyond doubt: the third goal is not met
    tables(tmp_path, (-0.01, -0.03, 0.01))
    assert render(tmp_path).returncode == 0
    text = (tmp_path / "contract_losses.md").read_text()
    assert "onset -0.010 [-0.030, +0.010] and offset +0.030 [+0.020, +0.040] **↑**: not met" \
        in text


def test_render_names_a_missing_source_file(tmp_path):
    tables(tmp_path, (0.03, 0.02, 0.04))
    (tmp_path / "contract_losses_psds.csv").unlink()
    done = render(tmp_path)
    assert done.returncode != 0 and "contract_losses_psds.csv does not exist" in done.stderr
    assert not (tmp_path / "contract_losses.md").exists()


def lock_args(script, tmp_path: Path, arm: str = "rise"):
    import argparse

    return argparse.Namespace(out=tmp_path / "results", runs=tmp_path / "runs",
                              data=tmp_path / "data", arm=arm)


def test_the_lock_freezes_the_choices_and_refuses_late_ones(script, tmp_path):
    args = lock_args(script, tmp_path)
    args.out.mkdir()
    script.lock(args)
    chosen = script.locked(args)
    assert chosen["contract"] == {"name": "rise", "overrides": script.ARMS["rise"]}
    assert chosen["heldout"] == [2, 3, 4] and chosen["training_seeds"] == [0, 1, 2, 3, 4]
    assert chosen["development"] == [0, 1] and not set(chosen["heldout"]) & {0, 1}
    lock = json.loads((args.out / "heldout_lock.json").read_text())
    assert lock["sha256"] == script.digest(args.out / "heldout_choices.json")
    # a second lock is a choice made again
    with pytest.raises(SystemExit, match="locked already"):
        script.lock(args)
    # the choices file edited after the lock: its digest is not the lock's
    path = args.out / "heldout_choices.json"
    original = path.read_text()
    path.write_text(original.replace("0.2", "0.25", 1))
    with pytest.raises(SystemExit, match="changed after the lock"):
        script.locked(args)
    path.write_text(original)
    # the script's arm changed after the lock (a choice made after seeing held-out results)
    script.ARMS["rise"] = [*script.ARMS["rise"], "loss.contract.weight=2.0"]
    try:
        with pytest.raises(SystemExit, match=r"differ from the lock's in contract: locked .*"
                                             r"now .*weight=2\.0"):
            script.locked(args)
    finally:
        script.ARMS["rise"] = script.ARMS["rise"][:-1]
    assert script.locked(args) == chosen


def test_no_lock_once_held_out_runs_exist(script, tmp_path):
    args = lock_args(script, tmp_path)
    args.out.mkdir()
    (args.runs / "heldout_3" / "bce_only" / "seed_0").mkdir(parents=True)
    with pytest.raises(SystemExit, match="held-out runs exist"):
        script.lock(args)
    assert not (args.out / "heldout_lock.json").exists()
    with pytest.raises(SystemExit, match="no contract arm 'bce_only'"):
        script.choices_now("bce_only")


def test_the_held_out_command_refuses_to_run_without_a_lock(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "heldout", "--out", str(tmp_path),
                           "--runs", str(tmp_path / "runs"), "--data", str(tmp_path / "d")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "lock the choices first" in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "d").exists()


def test_the_development_page_ranks_the_candidates_by_the_pooled_tuned_difference(tmp_path):
    """The choice on development data is read from the pooled validation intervals (tuned
    against tuned), not typed in, and the page says it makes no claim."""
    rows = []
    for system, base in (("bce_only", 80), ("wide", 81), ("narrow", 84)):
        for post in ("none", "tuned"):
            rows += rows_of(0, system, post, 0, base + (post == "tuned"))
    stem = "contract_losses_development"
    write(tmp_path / f"{stem}.csv", rows)
    write(tmp_path / f"{stem}_psds.csv", [{"benchmark": 0, "system": s, "seed": 0, "psds1": 0.5}
                                          for s in ("bce_only", "wide", "narrow")])
    write(tmp_path / f"{stem}_post.csv", [{"benchmark": 0, "system": "wide", "seed": 0,
                                           "median_filter": 0, "threshold": 0.5, "low": 0.3,
                                           "validation_logic": 0.8}])
    ivs = []
    for system, point in (("wide", 0.002), ("narrow", 0.004)):
        ivs += [{**interval(where, system, "tuned", "tuned", "typed", "logic", point, -0.01,
                            0.02), "benchmark": where} for where in ("0", "pooled")]
    ivs[-1]["point"] = -0.001  # narrow: ahead on benchmark 0, behind pooled
    write(tmp_path / f"{stem}_intervals.csv", ivs)
    (tmp_path / f"{stem}_run.json").write_text(json.dumps({
        "command": "python scripts/contract_losses.py develop", "split": "validation",
        "wall_s": 600}))
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--development", "--out",
                           str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / f"{stem}.md").read_text()
    assert "on the development benchmarks (validation splits)" in text
    assert "it makes no claim" in text and "The goal" not in text
    assert "Ranked: `wide` +0.002 [-0.010, +0.020]; `narrow` -0.001 [-0.010, +0.020]. " \
           "Chosen: `wide` (`python scripts/contract_losses.py lock wide`)." in text
