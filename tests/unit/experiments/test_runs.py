"""What a run folder says of itself (:mod:`sedcontract.experiments.runs`): a run whose
training was interrupted is refused, not reused; a run found trained is used only if it was
trained as its arm says; runs lie where the protocol's rounds put them."""

from __future__ import annotations

import os

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments.runs import (
    best_checkpoint,
    check_finished,
    check_trained_as,
    first_difference,
    heldout_runs,
    run_dir,
    training_seconds,
)


def test_a_run_whose_training_was_interrupted_is_refused_not_reused(tmp_path):
    """``last.ckpt`` is the best epoch's copy and exists from the first epoch on, so a run
    killed part way looks trained; only the training log's closing line says it ended, and
    the run's training time runs to that line."""
    killed = tmp_path / "killed"
    (killed / "checkpoints").mkdir(parents=True)
    (killed / "checkpoints" / "last.ckpt").write_bytes(b"")
    (killed / "train.log").write_text("[INFO] - epoch 1, step 120 - guard vector on validation\n")
    with pytest.raises(ProtocolError,
                       match=r"killed: its training did not finish .*remove the run"):
        check_finished(killed)
    with pytest.raises(ProtocolError, match=r"no closing 'best checkpoint' line"):
        check_finished(tmp_path / "never")
    (killed / "train.log").write_text("[INFO] - best checkpoint (val/logic): x/epoch_002.ckpt\n")
    check_finished(killed)
    # its training time runs to the log's closing line, not to the best epoch's checkpoint
    (killed / ".hydra").mkdir()
    (killed / ".hydra" / "config.yaml").write_text("seed: 0\n")
    for name, when in ((".hydra/config.yaml", 1000), ("checkpoints/last.ckpt", 1030),
                       ("train.log", 1075)):
        os.utime(killed / name, (when, when))
    assert training_seconds(killed) == 75


def test_a_run_is_compared_on_what_decides_its_weights(tmp_path):
    """The first setting that differs is named with both values; with λ = 0 the contract
    loss's other settings are left out; a run trained as its arm says must have finished."""
    trained = {"loss": {"contract": {"weight": 1.0, "weights": {"onset": 1.0}}}, "seed": 0,
               "paths": {"output_dir": "elsewhere"}}
    now = {"loss": {"contract": {"weight": 0.3, "weights": {"onset": 1.0}}}, "seed": 0}
    assert first_difference(trained, now) == "loss.contract.weight: trained 1.0, now 0.3"
    with pytest.raises(ProtocolError, match=r"run was trained with other settings "
                                         r"\(loss\.contract\.weight: trained 1\.0, now 0\.3\)"):
        check_trained_as(tmp_path / "run", trained, now)
    control = {"loss": {"contract": {"weight": 0.0, "weights": {"onset": 1.0}}}, "seed": 0}
    other = {"loss": {"contract": {"weight": 0.0, "weights": {"onset": 0.0}}}, "seed": 0}
    with pytest.raises(ProtocolError, match="its training did not finish"):
        check_trained_as(tmp_path / "run", other, control)  # the same settings: finished?


def test_runs_lie_where_the_rounds_put_them(tmp_path):
    assert run_dir(tmp_path, 0, "bce_only", 1) == tmp_path / "development_0" / "bce_only" / \
        "seed_1"
    assert run_dir(tmp_path, 6, "contract", 0).parent.parent.name == "heldout_6"
    with pytest.raises(ProtocolError, match=r"data seed 9 is neither development \[0, 1\] nor "
                                         r"held out \[2, 3, 4, 5, 6, 7\]"):
        run_dir(tmp_path, 9, "contract", 0)
    (tmp_path / "heldout_6" / "contract" / "seed_0").mkdir(parents=True)
    assert heldout_runs(tmp_path, (5, 6, 7)) == [tmp_path / "heldout_6" / "contract" / "seed_0"]
    assert heldout_runs(tmp_path, (2, 3, 4)) == []
    with pytest.raises(ProtocolError, match=r"no best checkpoint \(epoch_\*\.ckpt\)"):
        best_checkpoint(tmp_path)
    (tmp_path / "checkpoints").mkdir()
    for name in ("epoch_001.ckpt", "epoch_003.ckpt", "last.ckpt"):
        (tmp_path / "checkpoints" / name).write_bytes(b"")
    assert best_checkpoint(tmp_path).name == "epoch_003.ckpt"
