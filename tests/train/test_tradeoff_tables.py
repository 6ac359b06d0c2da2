"""``scripts/contract_tradeoff.py`` (round 2 of the held-out protocol): the development rules
are applied to the committed rows, not by hand; the lock freezes their outcome before any
held-out run; the page, goals included, is rendered from the source rows alone."""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.scripts import imported_script

ROOT = REPO
SCRIPT = ROOT / "scripts" / "contract_tradeoff.py"
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")
QUANTITIES = [f"{c}/{m}/{q}" for c in ("onset", "offset", "missed", "false", "silence",
                                        "fragmentation") for m in ("typed", "union")
              for q in ("area", "at_10", "at_30", "at_100")] + ["psds1", "psds2"]


@pytest.fixture(scope="module")
def script():
    with imported_script("contract_tradeoff") as found:
        yield found


def write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def count_rows(system: str, post: str, satisfied: dict[str, int]) -> list[dict]:
    keys = {"benchmark": 0, "system": system, "seed": 0, "post": post}
    out = [{**keys, "mode": mode, "coordinate": c, "satisfied": satisfied.get(c, 90),
            "obligations": 100} for mode in ("typed", "union") for c in COORDINATES]
    return out + [{**keys, "mode": "scores", "coordinate": k, "satisfied": 150,
                   "obligations": 200} for k in ("event_f1", "segment_f1")]


def op_interval(system: str, control: str, point: float, coordinate: str = "logic",
                post: str = "tuned", where: str = "pooled") -> dict:
    return {"benchmark": where, "system": system, "post": post, "control": control,
            "control_post": post, "mode": "typed", "coordinate": coordinate, "point": point,
            "lo": point - 0.01, "hi": point + 0.01, "level": 0.95, "defined": 100,
            "resamples": 100}


def write_tables(out: Path, stem: str, *, gains: dict[int, float], reached: dict[str, int],
                 contrasts: dict[tuple, tuple[float, float, float]] | None = None,
                 split: str = "validation") -> None:
    """The six source files and the run record of a page, with the given finetuning gains
    (pooled typed logic with tuned post), targets-arm scores (of 100) and trade-off
    contrasts ``(system, control, reading, quantity) → (point, lo, hi)``."""
    systems = ["bce_only", "contract", "contract_targets", *(f"{a}_{k}" for k in gains
                                                            for a in ("finetuned",
                                                                      "bce_continued"))]
    rows = [r for s in systems for post in ("none", "tuned")
            for r in count_rows(s, post, reached if s == "contract_targets" else {})]
    write(out / f"{stem}_rows.csv", rows)
    write(out / f"{stem}_post.csv", [{"benchmark": 0, "system": s, "seed": 0,
                                      "median_filter": 0.06, "threshold": 0.5, "low": "",
                                      "validation_logic": 0.9} for s in systems])
    intervals = [op_interval(f"finetuned_{k}", f"bce_continued_{k}", g)
                 for k, g in gains.items()]
    write(out / f"{stem}_intervals.csv", intervals)
    write(out / f"{stem}_runs.csv", [{"benchmark": 0, "system": s, "seed": 0,
                                      "reading": "none", "quantity": q, "value": "0.5"}
                                     for s in systems for q in QUANTITIES])
    write(out / f"{stem}_systems.csv", [
        {"benchmark": where, "system": s, "reading": r, "quantity": q, "point": 0.5,
         "lo": 0.4, "hi": 0.6, "defined": 100, "resamples": 100}
        for where in ("0", "pooled") for s in systems for r in ("none", "tuned")
        for q in QUANTITIES])
    contrasts = contrasts or {}
    write(out / f"{stem}_contrasts.csv", [
        {"benchmark": "pooled", "system": s, "control": "bce_only", "reading": r,
         "quantity": q, **dict(zip(("point", "lo", "hi"),
                                   contrasts.get((s, "bce_only", r, q), (0.0, -0.01, 0.01)),
                                   strict=True)), "defined": 100, "resamples": 100}
        for s in systems if s != "bce_only" for r in ("none", "tuned") for q in QUANTITIES])
    (out / f"{stem}_run.json").write_text(json.dumps({
        "command": "python scripts/contract_tradeoff.py "
                   + ("develop" if split == "validation" else "heldout"),
        "split": split, "wall_s": 600, "runs": 28, "trained": 28, "training_s": 500,
        "commit": "0" * 40, "kernels": "CPU kernels: ATen AVX2"}))


def args_of(tmp_path: Path) -> argparse.Namespace:
    (tmp_path / "runs").mkdir(exist_ok=True)
    return argparse.Namespace(out=tmp_path, runs=tmp_path / "runs", data=tmp_path / "data")


def test_the_rules_choose_k_and_the_targets_arm_from_the_rows(script):
    intervals = [op_interval("finetuned_1", "bce_continued_1", 0.004),
                 op_interval("finetuned_3", "bce_continued_3", 0.009)]
    rows = [r for post in ("none", "tuned") for r in count_rows(
        "contract_targets", post, {"false": 85, "fragmentation": 90})]
    chosen = script.rules(rows, intervals)
    assert chosen["finetune_epochs"] == 3 and chosen["targets_kept"] is True
    assert chosen["targets_reached"]["false"] == {"score": 0.85, "target": 0.85}
    # a tie to three decimals goes to the smaller k; one coordinate short drops the arm
    intervals[1]["point"] = 0.0044
    short = [r for post in ("none", "tuned") for r in count_rows(
        "contract_targets", post, {"false": 84, "fragmentation": 99})]
    chosen = script.rules(short, intervals)
    assert chosen["finetune_epochs"] == 1 and chosen["targets_kept"] is False
    with pytest.raises(SystemExit, match="no finetuned_3 − bce_continued_3"):
        script.rules(rows, intervals[:1])


def test_the_lock_applies_the_rules_and_refuses_late_choices(script, tmp_path, monkeypatch):
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, False))
    write_tables(tmp_path, script.DEVELOPMENT_STEM, gains={1: 0.002, 3: 0.006},
                 reached={"false": 70, "fragmentation": 90})
    args = args_of(tmp_path)
    script.lock(args)
    chosen = script.locked(args)
    assert chosen["rules"]["finetune_epochs"] == 3 and not chosen["rules"]["targets_kept"]
    assert set(chosen["arms"]) == {"bce_only", "contract", "finetuned_3", "bce_continued_3"}
    assert chosen["arms"]["finetuned_3"]["epochs"] == 3
    assert "reproducible=true" in chosen["base"] and chosen["heldout"] == [5, 6, 7]
    assert chosen["curve_resamples"] == 2000 and chosen["tradeoff"]["grid"]["count"] == 1201
    path, lock = script.lock_paths(tmp_path)
    assert json.loads(lock.read_text())["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(SystemExit, match="locked already"):
        script.lock(args)
    # the script's targets changed after the lock: a choice made again
    monkeypatch.setitem(script.TARGETS, "false", 0.5)
    monkeypatch.setattr(script, "FINETUNE_EPOCHS", (1, 3))
    chosen_now = script.choices_of(chosen["rules"])
    assert chosen_now["arms"] == chosen["arms"]  # the targets arm is not in the round
    monkeypatch.setattr(script, "CURVE_RESAMPLES", 500)
    with pytest.raises(SystemExit, match="differ from the lock's in curve_resamples: locked "
                                         "2000, now 500"):
        script.locked(args)
    monkeypatch.setattr(script, "CURVE_RESAMPLES", 2000)
    path.write_text(path.read_text().replace('"epochs": 3', '"epochs": 4'))
    with pytest.raises(SystemExit, match="changed after the lock"):
        script.locked(args)


def test_no_lock_over_held_out_runs_or_uncommitted_code(script, tmp_path, monkeypatch):
    write_tables(tmp_path, script.DEVELOPMENT_STEM, gains={1: 0.002, 3: 0.006},
                 reached={"false": 90, "fragmentation": 90})
    args = args_of(tmp_path)
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, True))
    with pytest.raises(SystemExit, match="changes not committed"):
        script.lock(args)
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, False))
    (args.runs / "heldout_6" / "bce_only" / "seed_0").mkdir(parents=True)
    with pytest.raises(SystemExit, match="held-out runs exist"):
        script.lock(args)
    assert not script.lock_paths(tmp_path)[0].exists()


def test_the_page_and_its_goals_come_from_the_rows(script, tmp_path):
    stem = script.HELDOUT_STEM
    write_tables(tmp_path, stem, gains={3: 0.012}, reached={}, split="test", contrasts={
        ("contract", "bce_only", "tuned", "onset/typed/area"): (0.031, 0.012, 0.05),
        ("contract", "bce_only", "tuned", "offset/typed/area"): (0.019, 0.004, 0.03),
        ("contract", "bce_only", "tuned", "psds1"): (0.004, -0.008, 0.016)})
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / f"{stem}.md").read_text()
    assert done.stdout == page + "\n"  # what it printed is what it wrote
    assert "onset area +0.031 [+0.012, +0.050] **↑**" in page
    assert "offset area +0.019 [+0.004, +0.030] **↑** (≥ +0.02, interval above 0: not met)" \
        in page
    assert "PSDS1 +0.004 [-0.008, +0.016] (lower end ≥ −0.01: met)" in page
    assert "finetuned_3 − bce_continued_3, typed logic with tuned post-processing: +0.012 " \
           "[+0.002, +0.022] **↑** (≥ 0, interval above 0: met)" in page
    assert "| contract | 0.500 [0.400, 0.600] |" in page
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
def test_the_committed_pages_are_their_rows_rendered(script, tmp_path, development):
    """Each committed round-2 page is exactly what ``render`` makes of the CSV files beside
    it: no number on it was edited by hand."""
    stem = script.DEVELOPMENT_STEM if development else script.HELDOUT_STEM
    for path in script.paths_of(script.RESULTS, stem).values():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    page = tmp_path / f"{stem}.md"
    page.unlink()
    done = subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(tmp_path),
                           *(["--development"] if development else [])],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert page.read_text() == (script.RESULTS / f"{stem}.md").read_text()
