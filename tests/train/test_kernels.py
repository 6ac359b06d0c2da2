"""``reproducible=true``: the CPU kernels pinned so a run regenerates bit for bit on another
machine. Two machines are simulated on one: the same few training steps run in fresh processes
under environments that make torch's libraries pick other kernels (ATen's and oneDNN's
instruction sets, MKL's), and the weights are compared tensor by tensor: different with the
setting off, identical with it on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sedcontract.errors import SedContractError
from sedcontract.kernels import X86_64, fix_kernels, pin_environment, pins
from tests.helpers.paths import REPO

ROOT = REPO
SCRIPT = ROOT / "scripts" / "reproducibility.py"
KNOBS = (*X86_64, "NPY_DISABLE_CPU_FEATURES", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
X86 = pins() != {}
# kernels older than AVX2 for every library: what any x86-64 CPU with AVX2 can also run
OLDER = {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
         "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}
AVX2_MACHINE = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def machine_env(extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without any kernel pin, with ``extra`` applied."""
    return {**{k: v for k, v in os.environ.items() if k not in KNOBS}, **extra}


def own_capability() -> str:
    """The instruction set ATen picks on this CPU when nothing limits it."""
    done = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu."
                           "get_cpu_capability())"], env=machine_env({}), capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


def weights(tmp_path: Path, name: str, data: Path, env: dict[str, str], setting: bool) -> dict:
    """The weights of 3 training steps run in a fresh process under ``env``."""
    import torch

    out = tmp_path / f"{name}.pt"
    done = subprocess.run([sys.executable, str(SCRIPT), "steps", str(out),
                           f"reproducible={str(setting).lower()}", "--data", str(data)],
                          env=machine_env(env), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(out, weights_only=True)


def differing(a: dict, b: dict) -> list[str]:
    import torch

    assert a.keys() == b.keys()
    return [k for k in a if not torch.equal(a[k], b[k])]


@pytest.mark.skipif(not X86, reason="the kernels are pinned on x86-64 only")
def test_two_machines_train_the_same_weights_with_the_setting_and_not_without(tmp_path,
                                                                               data_root):
    """This CPU as it is, against the same CPU made to pick older kernels than AVX2 for every
    library (ATen's portable kernels, oneDNN's SSE4.1 ones, MKL's SSE4.2 code) and, on a CPU
    with AVX-512, against it limited to AVX2 as a CPU without AVX-512 is. Without the setting
    each pair trains different weights; with it, the same bits."""
    machines = {"older kernels": OLDER}
    if own_capability().startswith("AVX512"):
        machines["an AVX2 machine"] = AVX2_MACHINE
    for setting in (False, True):
        here = weights(tmp_path, f"here-{setting}", data_root, {}, setting)
        for name, env in machines.items():
            there = weights(tmp_path, f"{name}-{setting}".replace(" ", "_"), data_root, env,
                            setting)
            changed = differing(here, there)
            if setting:
                assert changed == [], f"{name}: {len(changed)} tensors differ with the setting"
            else:  # the machine's own kernels: the comparison can fail
                assert len(changed) > len(here) // 2, f"{name}: only {changed} differ"


def test_the_pins_are_the_environment_each_library_reads():
    assert pins("x86_64") == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                              "MKL_CBWR": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                              "MKL_DYNAMIC": "FALSE", "OMP_DYNAMIC": "FALSE"}
    assert pins("AMD64") == pins("x86_64")
    assert pins("aarch64") == {} and pins("arm64") == {}
    env = {"ATEN_CPU_CAPABILITY": "avx512", "HOME": "/h"}
    assert pin_environment(env, machine="x86_64") == pins("x86_64")
    assert env["ATEN_CPU_CAPABILITY"] == "avx2" and env["HOME"] == "/h"  # the pin wins
    untouched = {"HOME": "/h"}
    pin_environment(untouched, machine="aarch64")
    assert untouched == {"HOME": "/h"}


@pytest.mark.parametrize("value", ["yes", 1, None, "true"])
def test_the_setting_is_a_boolean(value):
    with pytest.raises(SedContractError, match="reproducible must be true or false"):
        fix_kernels(value)


def test_the_state_of_a_pinned_process_is_reported():
    """The suite runs pinned (conftest): the state says so, in one line for the run's log."""
    state = fix_kernels(True)
    if X86:
        assert state.aten == "AVX2" and state.mkl in (None, "AVX2")
        assert state.onednn == "AVX2"
    line = state.describe()
    assert line.startswith("CPU kernels: ATen ") and "(reproducible=true)" in line
    assert "reproducible=false" in fix_kernels(False).describe()


def run_late(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=machine_env(env), cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.skipif(not X86, reason="the kernels are pinned on x86-64 only")
def test_a_process_that_ran_other_kernels_first_is_refused_not_silently_unpinned():
    """Each library reads its pin once, at its first kernel: a process that ran torch before
    the run started cannot be pinned any more, and the run stops saying so."""
    late = ("import torch\n{first}\nfrom sedcontract.kernels import fix_kernels\n"
            "from sedcontract.errors import SedContractError\n"
            "try:\n    fix_kernels(True)\nexcept SedContractError as e:\n    print(e)\n"
            "else:\n    print('pinned')\n")
    aten = run_late(late.format(first="torch.ones(8).sum()"),
                    {"ATEN_CPU_CAPABILITY": "default"})
    assert "already ran torch kernels (DEFAULT)" in aten.stdout, aten.stderr
    assert "start the run in a fresh process" in aten.stdout
    # ATen pinned in time, MKL not: its branch was fixed by the first FFT
    mkl = run_late(late.format(first="torch.fft.rfft(torch.ones(64))"),
                   {"ATEN_CPU_CAPABILITY": "avx2"})
    if "mkl" not in run_late("import torch; print('mkl' if torch.backends.mkl.is_available() "
                             "else '')", {}).stdout:
        pytest.skip("this torch has no MKL")
    assert re.search(r"already ran MKL \(branch off\)", mkl.stdout), mkl.stdout + mkl.stderr
    fresh = run_late(late.format(first="pass"), {})
    assert fresh.stdout.strip() == "pinned", fresh.stderr


def test_train_refuses_a_setting_that_is_not_a_boolean(base):
    from sedcontract.training import train
    from tests.helpers.training import compose_config

    with pytest.raises(SedContractError, match="reproducible must be true or false"):
        train(compose_config("train", [*base, "reproducible=maybe"]))


def readme_vector() -> str:
    """The guard vector the README shows for ``make train``'s last epoch."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## What training shows"):]
    block = section[section.index("```\n") + 4:]
    return block[:block.index("```")].strip()


def last_vector(output: str) -> str:
    """The last guard vector a run printed (typed and union, logic last)."""
    start = output.rindex("| coordinate | typed | union |")
    lines = output[start:].splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("| logic |"))
    return "\n".join(line.rstrip() for line in lines[:end + 1])


@pytest.mark.slow
@pytest.mark.skipif(not X86, reason="the kernels are pinned on x86-64 only")
def test_the_readme_training_vector_regenerates_on_two_simulated_machines(tmp_path):
    """``make train`` (``train.py model=dilated_cnn``, 5 epochs on the default benchmark)
    prints the README's vector bit for bit on this CPU and on it made to pick older kernels
    (and, with AVX-512, on it limited to AVX2): about a minute each on two cores."""
    from sedcontract.data.build import build_controlled

    data = tmp_path / "data"
    build_controlled(data, seed=0, log=lambda _: None)
    machines = {"this CPU": {}, "older kernels": OLDER}
    if own_capability().startswith("AVX512"):
        machines["an AVX2 machine"] = AVX2_MACHINE
    expected = readme_vector()
    for name, env in machines.items():
        run = tmp_path / name.replace(" ", "_")
        done = subprocess.run([sys.executable, "train.py", "model=dilated_cnn",
                               f"paths.data_dir={data}", f"hydra.run.dir={run}"],
                              env=machine_env(env), cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        assert last_vector(done.stdout + done.stderr) == expected, name


@pytest.mark.skipif(not X86, reason="the kernels are pinned on x86-64 only")
def test_a_cpu_without_avx2_is_refused_and_mkls_declined_branch_is_said(monkeypatch):
    """What the CPU reports decides the two cases this machine cannot show: no AVX2 (ATen
    falls back to its portable kernels) is refused; MKL's automatic branch where its AVX2 one
    was asked (an AMD CPU) runs, with a note in the log."""
    import sedcontract.kernels as kernels

    state = kernels.kernel_state(True)
    monkeypatch.setattr(kernels, "kernel_state",
                        lambda reproducible=False: kernels.KernelState(
                            True, "DEFAULT", "AVX2", "AVX2", 2, "GenuineIntel"))
    monkeypatch.setattr(kernels, "_cpuinfo", lambda: ("GenuineIntel", {"sse2", "sse4_2"}))
    with pytest.raises(SedContractError, match="this CPU has no AVX2"):
        fix_kernels(True)
    monkeypatch.setattr(kernels, "kernel_state",
                        lambda reproducible=False: kernels.KernelState(
                            True, "AVX2", "AUTO", "AVX2", 2, "AuthenticAMD"))
    monkeypatch.setattr(kernels, "_cpuinfo", lambda: ("AuthenticAMD", {"avx2", "fma"}))
    found = fix_kernels(True)
    assert len(found.notes) == 1 and "MKL's automatic branch" in found.notes[0]
    assert "AuthenticAMD" in found.notes[0]
    assert state.aten == "AVX2"  # the real one, untouched by the stand-ins
