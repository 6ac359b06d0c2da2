"""Why a training run gave other weights on another machine, and what ``reproducible=true``
changes: a few training steps of ``model=contract_aware seed=3`` on a tiny benchmark, run in
fresh processes under environments that each change one thing torch's libraries read from the
machine, and their weights compared tensor by tensor.

- ``steps OUT``: train the steps in this process, under its environment, and write the
  weights to ``OUT`` (a new file). The unit of every comparison; the tests run it too.
- ``experiment``: the whole comparison, written to ``docs/results/reproducibility.{md,csv}``:
  1. each library's choice alone, with the setting off: ATen's instruction set, oneDNN's,
     MKL's branch and instruction set, numpy's dispatch, the thread count;
  2. machines, with the setting off and on: this CPU; an AVX2 machine (every library limited to
     AVX2); older kernels than AVX2; and, when ``qemu-x86_64`` is installed, an emulated Intel
     Haswell (AVX2, no AVX-512, other cache sizes) and an emulated AMD EPYC-Rome;
  3. the controlled benchmark built under numpy's AVX2 dispatch against this CPU's.

::

    python scripts/reproducibility.py experiment          # ~12 minutes with qemu, 1 without
    python scripts/reproducibility.py experiment --no-emulation
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sedcontract.cli.command import reported
from sedcontract.kernels import X86_64

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
SIZES = {"train": 8, "validation": 5, "test": 3}  # the tests' tiny benchmark
# every variable a run's kernels depend on: stripped before each environment is applied
KNOBS = (*X86_64, "NPY_DISABLE_CPU_FEATURES", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
OLDER = {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
         "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}
EMULATED = {"Intel Haswell (emulated)": "Haswell-v4", "AMD EPYC-Rome (emulated)": "EPYC-Rome"}


def numpy_above_avx2() -> str:
    """numpy's dispatch targets above AVX2 (``NPY_DISABLE_CPU_FEATURES`` of an AVX2 machine)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return " ".join(t for t in __cpu_dispatch__ if t.startswith(("AVX512", "X86_V4")))


def avx2_machine() -> dict[str, str]:
    """What every library sees on a CPU with AVX2 and no AVX-512."""
    return {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
            "MKL_ENABLE_INSTRUCTIONS": "AVX2", "NPY_DISABLE_CPU_FEATURES": numpy_above_avx2()}


def step_overrides(out_dir: Path, data: Path, steps: int) -> list[str]:
    sizes = "{" + ",".join(f"{k}:{v}" for k, v in SIZES.items()) + "}"
    return [f"paths.output_dir={out_dir}", f"paths.data_dir={data}", f"data.sizes={sizes}",
            "data.speech_source=synthetic", "data.num_workers=0", "data.batch_size=2",
            "trainer=cpu", "logger=csv", "trainer.max_epochs=1", f"+trainer.max_steps={steps}",
            "+trainer.limit_val_batches=1", "+trainer.enable_progress_bar=false",
            "+trainer.enable_model_summary=false", "model=contract_aware", "seed=3"]


def steps(args: argparse.Namespace) -> int:
    """Train ``args.steps`` steps here and write the weights to ``args.out``."""
    import torch
    from hydra import compose, initialize_config_module

    from sedcontract.outputs import Outputs
    from sedcontract.training import train

    with Outputs(writes={"weights": args.out}) as out, \
            tempfile.TemporaryDirectory() as scratch:
        with initialize_config_module("sedcontract.configs", version_base="1.3"):
            cfg = compose("train", overrides=[*step_overrides(Path(scratch), args.data,
                                                              args.steps), *args.overrides])
        _, objects = train(cfg)
        buffer = io.BytesIO()
        torch.save({k: v.detach().clone() for k, v in objects["model"].state_dict().items()},
                   buffer)
        out.write(args.out, buffer.getvalue())
    print(torch.backends.cpu.get_cpu_capability())
    return 0


def run_steps(where: Path, name: str, data: Path, env: Mapping[str, str],
              overrides: Sequence[str] = (), emulate: str | None = None) -> Path:
    """``steps`` in a fresh process under this environment with ``env`` applied (the knobs
    stripped first), under ``qemu-x86_64 -cpu <emulate>`` when given; the weights' file."""
    out = where / f"{name}.pt"
    base = {k: v for k, v in os.environ.items() if k not in KNOBS}
    command = [sys.executable, str(Path(__file__).resolve()), "steps", str(out), *overrides,
               "--data", str(data)]
    if emulate:
        command = ["qemu-x86_64", "-cpu", emulate, *command]
    done = subprocess.run(command, env={**base, **env}, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{shlex.join(command)} failed ({done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    return out


def differing(a: Path, b: Path) -> tuple[int, int, float]:
    """How many tensors of two weight files differ, of how many, and the largest difference."""
    import torch

    x, y = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
    if x.keys() != y.keys():
        raise SystemExit(f"{a} and {b} hold other tensors")
    diff = [k for k in x if not torch.equal(x[k], y[k])]
    largest = max((float((x[k].double() - y[k].double()).abs().max()) for k in diff),
                  default=0.0)
    return len(diff), len(x), largest


def tree_digest(folder: Path) -> str:
    """One sha256 over every file of a folder (names and bytes, in name order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def experiment(args: argparse.Namespace) -> int:
    from sedcontract.outputs import Outputs

    emulate = args.emulation and shutil.which("qemu-x86_64") is not None
    start = time.time()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as scratch, Outputs(writes={
            "page": args.out / "reproducibility.md",
            "rows": args.out / "reproducibility.csv"}) as out:
        where = Path(scratch)
        data = where / "data"
        built = subprocess.run([sys.executable, "-c", (
            "import sys; from sedcontract.data.build import build_controlled; "
            f"build_controlled(sys.argv[1], sizes={SIZES!r}, speech_source='synthetic', "
            "log=lambda m: None)"), str(data)], cwd=ROOT, capture_output=True, text=True,
            env={k: v for k, v in os.environ.items() if k not in KNOBS})
        if built.returncode:
            raise SystemExit(f"building the tiny benchmark failed:\n{built.stderr[-2000:]}")

        def compare(table: str, machine: str, setting: str, env: Mapping[str, str],
                    reference: Path, overrides: Sequence[str] = (),
                    cpu: str | None = None) -> Path:
            name = f"{table}-{machine}-{setting}".replace(" ", "_").replace("(", "").replace(
                ")", "")
            found = run_steps(where, name, data, env, [f"reproducible={setting == 'on'}".lower(),
                                                       *overrides], cpu)
            n, total, largest = differing(reference, found)
            rows.append({"table": table, "machine": machine, "setting": setting,
                         "environment": " ".join([*(f"{k}={v}" for k, v in env.items()),
                                                  *overrides,
                                                  *([f"(qemu-x86_64 -cpu {cpu})"] if cpu
                                                    else [])]),
                         "tensors_differing": n, "tensors": total, "largest": f"{largest:.2e}"})
            print(f"{table} | {machine} | setting {setting}: {n} of {total} tensors differ "
                  f"({largest:.2e})", flush=True)
            return found

        reference = {s: run_steps(where, f"reference-{s}", data, {}, [f"reproducible="
                                                                       f"{str(s == 'on').lower()}"])
                     for s in ("off", "on")}
        knobs = {"ATen kernels: AVX2": {"ATEN_CPU_CAPABILITY": "avx2"},
                 "oneDNN up to AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
                 "MKL branch AVX2": {"MKL_CBWR": "AVX2"},
                 "MKL up to AVX2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
                 "numpy dispatch up to AVX2": {"NPY_DISABLE_CPU_FEATURES": numpy_above_avx2()}}
        for machine, env in knobs.items():
            compare("one library", machine, "off", env, reference["off"])
        compare("one library", "1 thread instead of 2", "off", {}, reference["off"],
                ["threads=1"])
        machines: dict[str, tuple[dict[str, str], str | None]] = {
            "an AVX2 machine": (avx2_machine(), None), "older kernels than AVX2": (OLDER, None)}
        if emulate:
            machines |= {name: ({}, cpu) for name, cpu in EMULATED.items()}
        for machine, (env, cpu) in machines.items():
            for setting in ("off", "on"):
                compare("machines", machine, setting, env, reference[setting], cpu=cpu)
        # the data: the benchmark these runs train on, built under numpy's AVX2 dispatch
        digests = []
        for name, env in (("this CPU", {}), ("numpy up to AVX2", {
                "NPY_DISABLE_CPU_FEATURES": numpy_above_avx2()})):
            folder = where / f"bench-{len(digests)}"
            built = subprocess.run([sys.executable, "-c", (
                "import sys; from sedcontract.data.build import build_controlled; "
                f"build_controlled(sys.argv[1], seed={args.data_seed}, log=lambda m: None)"),
                str(folder)], cwd=ROOT, capture_output=True, text=True,
                env={**{k: v for k, v in os.environ.items() if k not in KNOBS}, **env})
            if built.returncode:
                raise SystemExit(f"building benchmark {args.data_seed} failed:\n"
                                 f"{built.stderr[-2000:]}")
            digests.append((name, tree_digest(folder)))
        wall = time.time() - start
        out.write(args.out / "reproducibility.csv", csv_text(rows))
        out.write(args.out / "reproducibility.md", page(rows, digests, args, wall, emulate))
    return 0


def csv_text(rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def page(rows: list[dict[str, object]], digests: list[tuple[str, str]],
         args: argparse.Namespace, wall: float, emulated: bool) -> str:
    import platform

    import torch

    from sedcontract.kernels import kernel_state

    state = kernel_state()
    command = shlex.join(["python", "scripts/reproducibility.py", *args.argv])
    lines = [
        "# What makes a training run differ across machines",
        "",
        f"Generated by `{command}` ({wall / 60:.1f} minutes on this machine) — do not edit. "
        f"torch {torch.__version__} on {platform.machine()}, {state.vendor or 'unknown vendor'}"
        f", whose own kernels are ATen {state.aten} and MKL's automatic branch. Each row trains "
        "3 steps of `model=contract_aware seed=3` on the tests' tiny benchmark (8 training "
        "clips) in a fresh process and compares its 71 tensors with the same run under this "
        "CPU's own environment (the same `reproducible` setting).",
        "",
        "## 1. Each library's choice alone (`reproducible=false`)",
        "",
        "| changed | tensors differing | largest difference |",
        "|---|---|---|",
    ]
    for r in rows:
        if r["table"] == "one library":
            lines.append(f"| {r['machine']} (`{r['environment']}`) | {r['tensors_differing']} "
                         f"of {r['tensors']} | {r['largest']} |")
    lines += ["", "## 2. Machines, with the setting off and on", "",
              "| machine | environment | `reproducible=false` | `reproducible=true` |",
              "|---|---|---|---|"]
    machines = list(dict.fromkeys(r["machine"] for r in rows if r["table"] == "machines"))
    for machine in machines:
        found = {r["setting"]: r for r in rows
                 if r["table"] == "machines" and r["machine"] == machine}
        lines.append(f"| {machine} | `{found['off']['environment'] or '—'}` | "
                     f"{found['off']['tensors_differing']} of {found['off']['tensors']} | "
                     f"{found['on']['tensors_differing']} of {found['on']['tensors']} |")
    if not emulated:
        lines += ["", "No emulated CPUs: `qemu-x86_64` is not installed (Debian's `qemu-user`) "
                  "or `--no-emulation` was given."]
    lines += ["", "## 3. The data", "",
              f"The controlled benchmark of data seed {args.data_seed} (960 + 120 + 420 clips), "
              "built twice, every file hashed:", ""]
    lines += [f"- {name}: sha256 `{digest[:16]}…`" for name, digest in digests]
    same = len({d for _, d in digests}) == 1
    lines += ["", "The benchmark is " + ("the same bytes under both: numpy's dispatch does not "
                                         "reach it." if same else "**not** the same bytes.")]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("steps", help="train a few steps here, write the weights")
    one.add_argument("out", type=Path, help="the weights' file")
    one.add_argument("--data", type=Path, required=True,
                     help=f"a controlled benchmark of sizes {SIZES} (synthetic speech)")
    one.add_argument("--steps", type=int, default=3)
    one.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. reproducible=false")
    whole = commands.add_parser("experiment", help="the whole comparison, written to the docs")
    whole.add_argument("--out", type=Path, default=RESULTS)
    whole.add_argument("--data-seed", type=int, default=0)
    whole.add_argument("--no-emulation", dest="emulation", action="store_false",
                       help="skip the emulated CPUs even when qemu-x86_64 is installed")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    return steps(args) if args.command == "steps" else experiment(args)


if __name__ == "__main__":
    sys.exit(reported("reproducibility", main))
