"""Round 1's lock (:mod:`sedcontract.experiments.losses_files`): it freezes the choices
before any held-out run, and refuses a held-out table for choices changed after it, or a lock
made after held-out runs exist."""

from __future__ import annotations

import hashlib
import json

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments import contract_losses, losses_files


def clean() -> tuple[str, bool]:
    """The code as on a clean checkout (the tests run in one that may have changes)."""
    return "0" * 40, False


def dirty() -> tuple[str, bool]:
    return "0" * 40, True


@pytest.fixture
def where(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    return out, tmp_path / "runs"


def test_the_lock_freezes_the_choices_and_refuses_late_ones(where, monkeypatch):
    out, runs = where
    path, digest = losses_files.lock(out, runs, "rise_boundary_frag", clean)
    chosen = losses_files.locked(out)
    arm = contract_losses.ARMS["rise_boundary_frag"]
    assert chosen["contract"] == {"name": "rise_boundary_frag", "overrides": arm}
    assert "loss.contract.weight=0.3" in arm and "loss.contract.weights.silence=0.0" in arm
    assert chosen["heldout"] == [2, 3, 4] and chosen["training_seeds"] == [0, 1, 2, 3, 4]
    assert chosen["development"] == [0, 1] and not set(chosen["heldout"]) & {0, 1}
    path, lock = losses_files.lock_paths(out)
    assert json.loads(lock.read_text())["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    # a second lock is a choice made again
    with pytest.raises(ProtocolError, match="locked already"):
        losses_files.lock(out, runs, "rise_boundary_frag", clean)
    # the choices file edited after the lock: its digest is not the lock's
    original = path.read_text()
    path.write_text(original.replace("0.2", "0.25", 1))
    with pytest.raises(ProtocolError, match="changed after the lock"):
        losses_files.locked(out)
    # a key added to the file and the lock made to match: the protocol does not make it
    added = json.loads(original) | {"epochs": 10}
    path.write_text(json.dumps(added))
    lock.write_text(json.dumps({"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    with pytest.raises(ProtocolError, match="differ from the lock's in epochs: locked 10, now "
                                         "null"):
        losses_files.locked(out)
    path.write_text(original)
    lock.write_text(json.dumps({"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}))
    # the protocol's arm changed after the lock (a choice made after seeing held-out results)
    monkeypatch.setitem(contract_losses.ARMS, "rise_boundary_frag",
                        [*arm, "trainer.max_epochs=10"])
    with pytest.raises(ProtocolError, match=r"differ from the lock's in contract: locked .*"
                                         r"now .*max_epochs=10"):
        losses_files.locked(out)
    monkeypatch.setitem(contract_losses.ARMS, "rise_boundary_frag", arm)
    assert losses_files.locked(out) == chosen
    lock.write_text("{not json")
    with pytest.raises(ProtocolError, match=r"heldout_lock\.json: cannot read the lock"):
        losses_files.locked(out)
    for held in ({"choices": path.name}, {"sha256": None}):  # a lock without its digest
        lock.write_text(json.dumps(held))
        with pytest.raises(ProtocolError, match=r"heldout_lock\.json: the lock holds no sha256 "
                                                r"of the choices; lock them again"):
            losses_files.locked(out)


def test_no_lock_after_held_out_results_over_a_file_or_on_uncommitted_code(where):
    out, runs = where
    with pytest.raises(ProtocolError, match="changes not committed"):
        losses_files.lock(out, runs, "rise_boundary_frag", dirty)
    (runs / "heldout_3" / "bce_only" / "seed_0").mkdir(parents=True)
    with pytest.raises(ProtocolError, match="held-out results exist"):
        losses_files.lock(out, runs, "rise_boundary_frag", clean)
    (runs / "heldout_3" / "bce_only" / "seed_0").rmdir()
    (out / "contract_losses.csv").write_text("table\n")
    with pytest.raises(ProtocolError, match="held-out results exist"):
        losses_files.lock(out, runs, "rise_boundary_frag", clean)
    (out / "contract_losses.csv").unlink()
    choices, lock = losses_files.lock_paths(out)
    choices.write_text("mine\n")  # a file the command did not make: kept
    with pytest.raises(ProtocolError, match=r"heldout_choices\.json exists"):
        losses_files.lock(out, runs, "rise_boundary_frag", clean)
    assert choices.read_text() == "mine\n" and not lock.exists()
    with pytest.raises(ProtocolError, match="no contract arm 'bce_only'"):
        contract_losses.choices_now("bce_only")


def test_a_held_out_table_needs_the_lock(where):
    """Without a lock, the held-out round does not start: the message says how to lock."""
    out, _ = where
    with pytest.raises(ProtocolError, match=r"heldout_choices\.json does not exist: lock the "
                                         r"choices first \(python scripts/contract_losses\.py "
                                         r"lock ARM\)"):
        losses_files.locked(out)
