"""Round 2 of the held-out protocol (:mod:`sedcontract.experiments.tradeoff`,
:mod:`sedcontract.experiments.tradeoff_files`): the development rules are applied to the
committed rows, not by hand; the lock freezes their outcome before any held-out run; the page,
goals included, is rendered from the source rows alone."""

from __future__ import annotations

import hashlib
import json

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments import tradeoff, tradeoff_files
from tests.helpers.protocol_tables import (
    HELDOUT_CONTRASTS,
    count_rows,
    op_interval,
    write_tables,
)


def clean() -> tuple[str, bool]:
    """The code as on a clean checkout (the tests run in one that may have changes)."""
    return "0" * 40, False


def test_the_rules_choose_k_and_the_targets_arm_from_the_rows():
    intervals = [op_interval("finetuned_1", "bce_continued_1", 0.004),
                 op_interval("finetuned_3", "bce_continued_3", 0.009)]
    rows = [r for post in ("none", "tuned") for r in count_rows(
        "contract_targets", post, {"false": 85, "fragmentation": 90})]
    chosen = tradeoff.rules(rows, intervals)
    assert chosen["finetune_epochs"] == 3 and chosen["targets_kept"] is True
    assert chosen["targets_reached"]["false"] == {"score": 0.85, "target": 0.85}
    # a tie to three decimals goes to the smaller k; one coordinate short drops the arm
    intervals[1]["point"] = 0.0044
    short = [r for post in ("none", "tuned") for r in count_rows(
        "contract_targets", post, {"false": 84, "fragmentation": 99})]
    chosen = tradeoff.rules(short, intervals)
    assert chosen["finetune_epochs"] == 1 and chosen["targets_kept"] is False
    with pytest.raises(ProtocolError, match="no finetuned_3 − bce_continued_3"):
        tradeoff.rules(rows, intervals[:1])


def test_the_lock_applies_the_rules_and_refuses_late_choices(tmp_path, monkeypatch):
    write_tables(tmp_path, tradeoff_files.DEVELOPMENT_STEM, gains={1: 0.002, 3: 0.006},
                 reached={"false": 70, "fragmentation": 90})
    runs = tmp_path / "runs"
    runs.mkdir()
    rules, _, digest = tradeoff_files.lock(tmp_path, runs, clean)
    chosen = tradeoff_files.locked(tmp_path)
    assert chosen["rules"] == rules
    assert chosen["rules"]["finetune_epochs"] == 3 and not chosen["rules"]["targets_kept"]
    assert set(chosen["arms"]) == {"bce_only", "contract", "finetuned_3", "bce_continued_3"}
    assert chosen["arms"]["finetuned_3"]["epochs"] == 3
    assert "reproducible=true" in chosen["base"] and chosen["heldout"] == [5, 6, 7]
    assert chosen["curve_resamples"] == 2000 and chosen["tradeoff"]["grid"]["count"] == 1201
    path, lock = tradeoff_files.lock_paths(tmp_path)
    assert json.loads(lock.read_text())["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ProtocolError, match="locked already"):
        tradeoff_files.lock(tmp_path, runs, clean)
    # the protocol's targets changed after the lock: a choice made again
    monkeypatch.setitem(tradeoff.TARGETS, "false", 0.5)
    monkeypatch.setattr(tradeoff, "FINETUNE_EPOCHS", (1, 3))
    chosen_now = tradeoff.choices_of(chosen["rules"])
    assert chosen_now["arms"] == chosen["arms"]  # the targets arm is not in the round
    monkeypatch.setattr(tradeoff, "CURVE_RESAMPLES", 500)
    with pytest.raises(ProtocolError, match="differ from the lock's in curve_resamples: locked "
                                         "2000, now 500"):
        tradeoff_files.locked(tmp_path)
    monkeypatch.setattr(tradeoff, "CURVE_RESAMPLES", 2000)
    path.write_text(path.read_text().replace('"epochs": 3', '"epochs": 4'))
    with pytest.raises(ProtocolError, match="changed after the lock"):
        tradeoff_files.locked(tmp_path)


def test_no_lock_over_held_out_runs_or_uncommitted_code(tmp_path):
    write_tables(tmp_path, tradeoff_files.DEVELOPMENT_STEM, gains={1: 0.002, 3: 0.006},
                 reached={"false": 90, "fragmentation": 90})
    runs = tmp_path / "runs"
    runs.mkdir()
    with pytest.raises(ProtocolError, match="changes not committed"):
        tradeoff_files.lock(tmp_path, runs, lambda: ("0" * 40, True))
    (runs / "heldout_6" / "bce_only" / "seed_0").mkdir(parents=True)
    with pytest.raises(ProtocolError, match="held-out runs exist"):
        tradeoff_files.lock(tmp_path, runs, clean)
    assert not tradeoff_files.lock_paths(tmp_path)[0].exists()


def test_the_page_and_its_goals_come_from_the_rows(tmp_path):
    stem = tradeoff_files.HELDOUT_STEM
    write_tables(tmp_path, stem, gains={3: 0.012}, reached={}, split="test",
                 contrasts=HELDOUT_CONTRASTS)
    printed = tradeoff_files.render_to(tmp_path, stem)
    page = (tmp_path / f"{stem}.md").read_text()
    assert printed == page  # what it returns is what it wrote
    assert "onset area +0.031 [+0.012, +0.050] **↑**" in page
    assert "offset area +0.019 [+0.004, +0.030] **↑** (≥ +0.02, interval above 0: not met)" \
        in page
    assert "PSDS1 +0.004 [-0.008, +0.016] (lower end ≥ −0.01: met)" in page
    assert "finetuned_3 − bce_continued_3, typed logic with tuned post-processing: +0.012 " \
           "[+0.002, +0.022] **↑** (≥ 0, interval above 0: met)" in page
    assert "| contract | 0.500 [0.400, 0.600] |" in page
    (tmp_path / f"{stem}_systems.csv").unlink()
    with pytest.raises(ProtocolError, match=f"{stem}_systems.csv does not exist"):
        tradeoff_files.render_to(tmp_path, stem)


def test_the_round_of_a_benchmark_decides_its_arms_and_a_fresh_run_is_compared_row_for_row():
    """A development benchmark has every candidate, a held-out one the locked arms; a run
    regenerated is compared with the committed rows character for character."""
    assert set(tradeoff.round_arms(0, None)) == {
        "bce_only", "contract", "contract_targets", "finetuned_1", "bce_continued_1",
        "finetuned_3", "bce_continued_3"}
    locked = {"rules": {"finetune_epochs": 3, "targets_kept": False}}
    assert set(tradeoff.round_arms(5, locked)) == {"bce_only", "contract", "finetuned_3",
                                                   "bce_continued_3"}
    assert tradeoff_files.stem_of(5) == "contract_tradeoff"
    assert tradeoff_files.stem_of(0) == "contract_tradeoff_development"
    row = {"benchmark": 5, "system": "bce_only", "seed": 0, "post": "none", "mode": "typed",
           "coordinate": "onset", "satisfied": 3, "obligations": 4}
    committed = {"rows": [{k: str(v) for k, v in row.items()}], "post": [], "runs": []}
    fresh = {"rows": [row], "post": [], "runs": []}
    assert tradeoff_files.mismatches(committed, fresh, 5, "bce_only", 0) == []
    fresh["rows"] = [{**row, "satisfied": 2}]
    assert tradeoff_files.mismatches(committed, fresh, 5, "bce_only", 0) == [
        "rows: 1 of 1 rows differ"]
    fresh["rows"] = []
    assert tradeoff_files.mismatches(committed, fresh, 5, "bce_only", 0) == [
        "rows: 0 rows here, 1 committed"]
