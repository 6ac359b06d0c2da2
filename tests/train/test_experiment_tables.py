"""``scripts/contract_losses.py``: the held-out table is rendered from its source rows alone,
the protocol's goal is read from the intervals, not typed in, and the lock refuses a held-out
table for choices changed after it, or made after held-out runs exist."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.scripts import imported_script

ROOT = REPO
SCRIPT = ROOT / "scripts" / "contract_losses.py"
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")


@pytest.fixture(scope="module")
def script():
    with imported_script("contract_losses") as found:
        yield found


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


def lock_args(tmp_path: Path, arm: str = "rise_boundary_frag"):
    import argparse

    out = tmp_path / "results"
    out.mkdir(exist_ok=True)
    return argparse.Namespace(out=out, runs=tmp_path / "runs", data=tmp_path / "data", arm=arm)


@pytest.fixture
def clean(script, monkeypatch):
    """The lock as on a clean checkout (the tests run in one that may have changes)."""
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, False))


def test_the_lock_freezes_the_choices_and_refuses_late_ones(script, tmp_path, clean,
                                                            monkeypatch):
    args = lock_args(tmp_path)
    script.lock(args)
    chosen = script.locked(args)
    arm = script.ARMS["rise_boundary_frag"]
    assert chosen["contract"] == {"name": "rise_boundary_frag", "overrides": arm}
    assert "loss.contract.weight=0.3" in arm and "loss.contract.weights.silence=0.0" in arm
    assert chosen["heldout"] == [2, 3, 4] and chosen["training_seeds"] == [0, 1, 2, 3, 4]
    assert chosen["development"] == [0, 1] and not set(chosen["heldout"]) & {0, 1}
    path, lock = script.lock_paths(args.out)
    assert json.loads(lock.read_text())["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    # a second lock is a choice made again
    with pytest.raises(SystemExit, match="locked already"):
        script.lock(args)
    # the choices file edited after the lock: its digest is not the lock's
    original = path.read_text()
    path.write_text(original.replace("0.2", "0.25", 1))
    with pytest.raises(SystemExit, match="changed after the lock"):
        script.locked(args)
    # a key added to the file and the lock made to match: the script does not make it
    added = json.loads(original) | {"epochs": 10}
    path.write_text(json.dumps(added))
    lock.write_text(json.dumps({"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    with pytest.raises(SystemExit, match="differ from the lock's in epochs: locked 10, now "
                                         "null"):
        script.locked(args)
    path.write_text(original)
    lock.write_text(json.dumps({"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    # the script's arm changed after the lock (a choice made after seeing held-out results)
    monkeypatch.setitem(script.ARMS, "rise_boundary_frag", [*arm, "trainer.max_epochs=10"])
    with pytest.raises(SystemExit, match=r"differ from the lock's in contract: locked .*"
                                         r"now .*max_epochs=10"):
        script.locked(args)
    monkeypatch.setitem(script.ARMS, "rise_boundary_frag", arm)
    assert script.locked(args) == chosen
    lock.write_text("{not json")
    with pytest.raises(SystemExit, match=r"heldout_lock\.json: cannot read the lock"):
        script.locked(args)


def test_no_lock_after_held_out_results_over_a_file_or_on_uncommitted_code(script, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, True))
    args = lock_args(tmp_path)
    with pytest.raises(SystemExit, match="changes not committed"):
        script.lock(args)
    monkeypatch.setattr(script, "commit", lambda: ("0" * 40, False))
    (args.runs / "heldout_3" / "bce_only" / "seed_0").mkdir(parents=True)
    with pytest.raises(SystemExit, match="held-out results exist"):
        script.lock(args)
    (args.runs / "heldout_3" / "bce_only" / "seed_0").rmdir()
    (args.out / "contract_losses.csv").write_text("table\n")
    with pytest.raises(SystemExit, match="held-out results exist"):
        script.lock(args)
    (args.out / "contract_losses.csv").unlink()
    choices, lock = script.lock_paths(args.out)
    choices.write_text("mine\n")  # a file the command did not make: kept
    with pytest.raises(SystemExit, match=r"heldout_choices\.json exists"):
        script.lock(args)
    assert choices.read_text() == "mine\n" and not lock.exists()
    with pytest.raises(SystemExit, match="no contract arm 'bce_only'"):
        script.choices_now("bce_only")


def test_the_held_out_command_takes_the_locked_choices_and_nothing_else(tmp_path):
    def held_out(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), "heldout", "--out", str(tmp_path),
                               "--runs", str(tmp_path / "runs"), "--data", str(tmp_path / "d"),
                               *extra], capture_output=True, text=True, cwd=ROOT)

    done = held_out()
    assert done.returncode != 0 and "lock the choices first" in done.stderr
    for extra in (["trainer.max_epochs=10"], ["--resamples", "10"]):
        done = held_out(*extra)
        assert done.returncode == 2 and "unrecognized arguments" in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "d").exists()


def saved_config(where: Path, overrides: list[str]) -> None:
    """A finished run folder as train.py leaves it: .hydra/config.yaml composed from
    ``overrides`` and a log with its closing line."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    with initialize_config_module("sedcontract.configs", version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    GlobalHydra.instance().clear()
    (where / ".hydra").mkdir(parents=True)
    OmegaConf.save(cfg, where / ".hydra" / "config.yaml")
    (where / "train.log").write_text("[INFO] - best checkpoint (val/logic): epoch_004.ckpt\n")


def test_a_run_found_trained_is_used_only_if_it_was_trained_as_the_arm_says(script, tmp_path):
    """A stale run (another λ) is refused, naming the setting; the λ = 0 control does not
    depend on the contract loss's other settings, so a control trained under other clause
    weights is the same run."""
    args = lock_args(tmp_path)
    args.overrides = []
    arm = script.ARMS["rise_boundary_frag"]
    expected = script.train_overrides(args, 2, arm, 0)
    stale = tmp_path / "stale"
    saved_config(stale, [*expected, "loss.contract.weight=1.0"])
    with pytest.raises(SystemExit, match=r"stale was trained with other settings "
                                         r"\(loss\.contract\.weight: trained 1\.0, now 0\.3\)"):
        script.check_reused(stale, expected)
    fresh = tmp_path / "fresh"
    saved_config(fresh, expected)
    script.check_reused(fresh, expected)
    control = script.train_overrides(args, 2, script.ARMS["bce_only"], 0)
    other = tmp_path / "control"
    saved_config(other, [*control, "loss.contract.weights.silence=1.0"])
    script.check_reused(other, control)
    saved_config(tmp_path / "seed1", [o.replace("seed=0", "seed=1") for o in control])
    with pytest.raises(SystemExit, match=r"seed: trained 1, now 0"):
        script.check_reused(tmp_path / "seed1", control)
    with pytest.raises(SystemExit, match=r"no \.hydra/config\.yaml"):
        script.check_reused(tmp_path / "nothing", control)
    (tmp_path / "control" / "train.log").write_text("[INFO] - epoch 2, step 180\n")
    with pytest.raises(SystemExit, match=r"control: its training did not finish"):
        script.check_reused(other, control)  # trained as the arm says, but not to its end


def test_a_run_whose_training_was_interrupted_is_refused_not_reused(script, tmp_path):
    """``last.ckpt`` is the best epoch's copy and exists from the first epoch on, so a run
    killed part way looks trained; only the training log's closing line says it ended, and
    the run's training time runs to that line."""
    killed = tmp_path / "killed"
    (killed / "checkpoints").mkdir(parents=True)
    (killed / "checkpoints" / "last.ckpt").write_bytes(b"")
    (killed / "train.log").write_text("[INFO] - epoch 1, step 120 - guard vector on validation\n")
    with pytest.raises(SystemExit, match=r"killed: its training did not finish .*remove the run"):
        script.check_finished(killed)
    with pytest.raises(SystemExit, match=r"no closing 'best checkpoint' line"):
        script.check_finished(tmp_path / "never")
    (killed / "train.log").write_text("[INFO] - best checkpoint (val/logic): x/epoch_002.ckpt\n")
    script.check_finished(killed)
    # its training time runs to the log's closing line, not to the best epoch's checkpoint
    (killed / ".hydra").mkdir()
    (killed / ".hydra" / "config.yaml").write_text("seed: 0\n")
    for name, when in ((".hydra/config.yaml", 1000), ("checkpoints/last.ckpt", 1030),
                       ("train.log", 1075)):
        os.utime(killed / name, (when, when))
    assert script.training_seconds(killed) == 75


def test_interval_rows_label_each_contrast_and_pool_the_benchmarks_with_their_own_draws(script):
    """Each benchmark's interval is its two-stage bootstrap (benchmark k from seed k), the
    pooled one the stratified mean with the same draws; every row names its system, control
    and the post-processing of each."""
    from sedcontract.guard import hierarchical_bootstrap, stratified_bootstrap
    from tests.helpers.reports import scored_runs

    reports = {}
    for k, d in enumerate((2, 3)):
        reports[(d, "contract", "tuned")] = scored_runs(2, 0.05, 10 + k)
        reports[(d, "contract", "none")] = scored_runs(2, 0.1, 20 + k)
        reports[(d, "bce_only", "tuned")] = scored_runs(2, 0.3, 30 + k)
        reports[(d, "bce_only", "none")] = scored_runs(2, 0.2, 40 + k)
    rows = script.interval_rows(reports, (2, 3), script.CONTRASTS, 200)
    labels = {(r["system"], r["post"], r["control"], r["control_post"]) for r in rows}
    assert labels == set(script.CONTRASTS)

    def row(where: str, contrast: tuple, coordinate: str) -> dict:
        (found,) = [r for r in rows if (r["benchmark"], r["system"], r["post"], r["control"],
                                        r["control_post"], r["mode"], r["coordinate"])
                    == (where, *contrast, "typed", coordinate)]
        return found

    contrast = ("contract", "none", "bce_only", "tuned")
    pairs = [(reports[(d, "contract", "none")], reports[(d, "bce_only", "tuned")])
             for d in (2, 3)]
    for k, where in enumerate(("2", "3")):
        want = hierarchical_bootstrap(*pairs[k], resamples=200, seed=k)
        for name in ("onset", "logic", "event_f1"):
            got = row(where, contrast, name)
            assert (float(got["point"]), float(got["lo"]), float(got["hi"])) == pytest.approx(
                (want[name].point, want[name].lo, want[name].hi), abs=1e-6), (where, name)
    pooled = stratified_bootstrap(pairs, resamples=200, seed=0)["onset"]
    got = row("pooled", contrast, "onset")
    assert (float(got["lo"]), float(got["hi"])) == pytest.approx((pooled.lo, pooled.hi),
                                                                 abs=1e-6)


def test_the_post_processing_search_keeps_the_first_best_and_skips_vacuous_points(
        script, tmp_path, monkeypatch):
    """Grid order decides ties; a decision whose validation logic is vacuous (NaN) is never
    chosen, even first; a grid without any defined value is refused."""
    import math

    import sedcontract.traces.score_files as scores

    values = iter([math.nan, 0.5, 0.9, 0.9] + [0.1] * 36)
    seen = []

    class Report:
        def __init__(self, logic: float) -> None:
            self.value = logic

        def logic(self, mode: str) -> float:
            return self.value

    monkeypatch.setattr(scores, "read_score_dir", lambda folder: {})
    monkeypatch.setattr(scores, "tables_to_events",
                        lambda tables, decision, folder: seen.append(decision) or decision)
    monkeypatch.setattr(script, "audited", lambda args, d, events, split:
                        Report(next(values)) if split == "validation" else Report(-1.0))
    report, choice = script.tuned(None, 2, tmp_path, "test")
    grid = [(m, t, b) for m in script.MEDIAN for t in script.THRESHOLD for b in script.LOW_BELOW]
    median, threshold, below = grid[2]  # the first of the two 0.9s
    assert choice == {"median_filter": median, "threshold": threshold,
                      "low": None if below is None else round(threshold - below, 6),
                      "validation_logic": 0.9}
    assert seen[-1].threshold == threshold and report.value == -1.0
    monkeypatch.setattr(script, "audited", lambda *a: Report(math.nan))
    with pytest.raises(SystemExit, match="leaves the validation split's typed logic vacuous"):
        script.tuned(None, 2, tmp_path, "test")


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
