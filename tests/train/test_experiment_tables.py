"""``scripts/contract_losses.py``'s entry points: ``render`` writes the page the library renders
and says a missing source file in one line; the held-out command takes the locked choices and
nothing else; a run found trained is reused only if its saved Hydra config is what its arm
composes now. The tables, intervals, lock and pages themselves are tested on the library
(``tests/unit/experiments``)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments.contract_losses import ARMS
from tests.helpers.paths import REPO
from tests.helpers.protocol_tables import development_tables, heldout_tables
from tests.helpers.scripts import imported_script

ROOT = REPO
SCRIPT = ROOT / "scripts" / "contract_losses.py"


@pytest.fixture(scope="module")
def script():
    with imported_script("contract_losses") as found:
        yield found


def render(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "render", "--out", str(out), *extra],
                          capture_output=True, text=True, cwd=ROOT)


def test_render_writes_the_page_from_the_rows_and_names_a_missing_source_file(tmp_path):
    """What ``render`` prints is what it wrote, from the rows alone (the held-out page and the
    development one); a missing source file is one line, and no page."""
    heldout_tables(tmp_path, (0.03, 0.02, 0.04))
    done = render(tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "contract_losses.md").read_text()
    assert done.stdout == text + "\n"
    assert "— met." in text
    (tmp_path / "contract_losses.md").unlink()
    (tmp_path / "contract_losses_psds.csv").unlink()
    done = render(tmp_path)
    assert done.returncode != 0 and "contract_losses_psds.csv does not exist" in done.stderr
    assert not (tmp_path / "contract_losses.md").exists()
    stem = development_tables(tmp_path)
    done = render(tmp_path, "--development")
    assert done.returncode == 0, done.stderr
    assert "Chosen: `rise_w1`" in (tmp_path / f"{stem}.md").read_text()


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
    args = argparse.Namespace(data=tmp_path / "data", overrides=[])
    arm = ARMS["rise_boundary_frag"]
    expected = script.train_overrides(args, 2, arm, 0)
    stale = tmp_path / "stale"
    saved_config(stale, [*expected, "loss.contract.weight=1.0"])
    with pytest.raises(ProtocolError, match=r"stale was trained with other settings "
                                         r"\(loss\.contract\.weight: trained 1\.0, now 0\.3\)"):
        script.check_reused(stale, expected)
    fresh = tmp_path / "fresh"
    saved_config(fresh, expected)
    script.check_reused(fresh, expected)
    control = script.train_overrides(args, 2, ARMS["bce_only"], 0)
    other = tmp_path / "control"
    saved_config(other, [*control, "loss.contract.weights.silence=1.0"])
    script.check_reused(other, control)
    saved_config(tmp_path / "seed1", [o.replace("seed=0", "seed=1") for o in control])
    with pytest.raises(ProtocolError, match=r"seed: trained 1, now 0"):
        script.check_reused(tmp_path / "seed1", control)
    with pytest.raises(SystemExit, match=r"no \.hydra/config\.yaml"):
        script.check_reused(tmp_path / "nothing", control)
    (tmp_path / "control" / "train.log").write_text("[INFO] - epoch 2, step 180\n")
    with pytest.raises(ProtocolError, match=r"control: its training did not finish"):
        script.check_reused(other, control)  # trained as the arm says, but not to its end
