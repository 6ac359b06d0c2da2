"""The evaluation install (``pip install sedcontract``, no extras): a wheel of the project in a
fresh environment beside only numpy, scipy, matplotlib, PyYAML and what they need — no torch, no
pandas — runs ``import sedcontract``, ``sedcontract scores``, ``sedcontract audit`` and
``sedcontract certify`` on the real DCASE files with the development environment's output,
and the training entry points say what to install."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO


def _benchmark():
    """``benchmarks/light_install.py``, imported as the script imports its helpers (its folder
    on the path while it loads, and only then)."""
    folder = str(REPO / "benchmarks")
    sys.path.insert(0, folder)
    try:
        import light_install
    finally:
        sys.path.remove(folder)
    return light_install


BENCHMARK = _benchmark()
SCORES, light_env, clean_env = BENCHMARK.SCORES, BENCHMARK.light_env, BENCHMARK.clean_env

FULL = [sys.executable, "-m", "sedcontract.cli"]


@pytest.fixture(scope="module")
def light(tmp_path_factory):
    bin_dir, names = light_env(tmp_path_factory.mktemp("light"))
    return bin_dir, names


def run(command, env=None):
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def there(bin_dir, *command):
    """``command`` run by the evaluation install, in an environment cleared as a fresh machine
    has it (whatever PYTHONPATH the suite runs under)."""
    return run([str(bin_dir / command[0]), *command[1:]], clean_env())


def test_the_evaluation_install_holds_no_training_stack(light):
    bin_dir, names = light
    lowered = {n.lower() for n in names}
    assert {"numpy", "scipy", "matplotlib", "pyyaml"} <= lowered
    assert not lowered & {"torch", "torchaudio", "lightning", "hydra-core", "wandb",
                          "transformers", "pandas", "speechbrain", "soundfile"}
    for module in ("torch", "pandas", "hydra"):
        result = there(bin_dir, "python", "-c", f"import {module}")
        assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr, module
    result = there(bin_dir, "python", "-c",
                   "import sys, sedcontract, sedcontract.scores.psds, sedcontract.analysis, "
                   "sedcontract.analysis.selection, sedcontract.traces.decision; "
                   "print(sedcontract.__file__); print(sorted(m for m in ('torch', 'pandas') "
                   "if m in sys.modules))")
    assert result.returncode == 0, result.stderr
    where, loaded = result.stdout.splitlines()
    assert "site-packages" in where and loaded == "[]"  # the wheel, not the source tree


@pytest.mark.parametrize("command", ["scores", "audit"])
def test_evaluation_commands_run_there_as_here(light, command):
    """``sedcontract scores`` and ``sedcontract audit`` (with PSDS from the baseline's
    operating points for ``scores``) print in the evaluation install exactly what they print
    in the development environment."""
    bin_dir, _ = light
    args = [command, *SCORES[1:]]
    here, light_run = run([*FULL, *args]), there(bin_dir, "sedcontract", *args)
    assert light_run.returncode == here.returncode == 0, light_run.stderr
    assert light_run.stdout == here.stdout
    assert ('"event"' if command == "scores" else '"modes"') in here.stdout


def test_psds_runs_there_from_operating_points(light, teacher_points):
    """PSDS from the baseline's 50 operating points in the evaluation install: the figures
    psds_eval gives on them (``tests/system/test_psds_eval_oracle.py`` checks them against
    psds_eval in the development environment)."""
    bin_dir, _ = light
    at = SCORES.index("--pred")
    args = [*SCORES[:at], *SCORES[at + 2:], "--pred-points", str(teacher_points)]
    light_run = there(bin_dir, "sedcontract", *args)
    assert light_run.returncode == 0, light_run.stderr
    psds = json.loads(light_run.stdout)["psds"]
    assert (round(psds["psds1"]["value"], 4), round(psds["psds2"]["value"], 4)) == \
        (0.3535, 0.5483)
    assert psds["psds1"]["rule"] == "psds_eval" and psds["psds1"]["points"] == 50


def test_certify_runs_there_as_here(light, tmp_path):
    """``sedcontract certify`` for the speech gate on DESED validation (the baseline's implied
    scores): the same table printed and the same decision file written, with scipy alone."""
    from tests.helpers.real_dcase import DURATIONS, REF, write_implied_scores

    bin_dir, _ = light
    folder = write_implied_scores(tmp_path / "scores")
    gate = REPO / "src" / "sedcontract" / "examples" / "speech_gate.yaml"
    outputs = {}
    for where in ("here", "there"):
        out = tmp_path / f"{where}.yaml"
        args = ["certify", "--ref", str(REF), "--durations", str(DURATIONS), "--pred-scores",
                str(folder), "--targets", str(gate), "--out", str(out)]
        done = run([*FULL, *args]) if where == "here" else there(bin_dir, "sedcontract", *args)
        assert done.returncode == 0, done.stderr
        outputs[where] = (done.stdout, out.read_text())
    assert outputs["here"] == outputs["there"]
    assert "| Speech | 0.37–0.63 | 0.43 |" in outputs["there"][0]


@pytest.mark.parametrize("entry", ["sedcontract-train", "sedcontract-eval"])
def test_the_training_entry_points_say_what_to_install(light, entry):
    bin_dir, _ = light
    result = there(bin_dir, entry)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"{entry}: {entry} needs torch, which the evaluation "
                                     "install leaves out: pip install 'sedcontract[train]'")


def test_the_evaluation_install_ignores_the_callers_python_path(light, tmp_path, monkeypatch):
    """A ``PYTHONPATH`` of the caller's (here one holding a ``torch``) does not reach the
    fresh environment: it sees only what it holds."""
    bin_dir, _ = light
    (tmp_path / "torch.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert run([str(bin_dir / "python"), "-c", "import torch"]).returncode == 0  # leaks
    result = there(bin_dir, "python", "-c", "import torch")
    assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr
