"""What ``reproducible=true`` costs in training speed: the README's run (``train.py
model=dilated_cnn``, 5 epochs with validation every epoch) and the contract-aware detector's
(``model=contract_aware``), each timed end to end with the setting off (this machine's own
kernels) and on (ATen, oneDNN and MKL pinned to AVX2), in fresh processes, the two settings
alternating so a busy machine slows both alike; and the training steps alone (forward, loss,
backward, optimiser on one batch in memory). Run: ``.venv/bin/python
benchmarks/reproducible_cost.py [--root data] [--repeats 2]``."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _rows import record
from sedcontract.kernels import X86_64

ROOT = Path(__file__).resolve().parents[1]
DETECTORS = ("dilated_cnn", "contract_aware")
# the step timer, run in a fresh process per setting (each library reads its pins once)
STEPS = """
import sys, time, torch
from hydra import compose, initialize_config_module
from hydra.utils import instantiate
from sedcontract.config import fix_kernels, fix_threads
from sedcontract.training import build_data, build_model, detector_parts
root, model, setting, steps, batch_size, sizes = sys.argv[1:7]
overrides = [f"paths.data_dir={root}", "data.num_workers=0", f"data.batch_size={batch_size}",
             f"model={model}", f"reproducible={setting}"] + ([f"data.sizes={sizes}",
             "data.speech_source=synthetic"] if sizes != "-" else [])
with initialize_config_module("sedcontract.configs", version_base="1.3"):
    cfg = compose("train", overrides=overrides)
fix_threads(cfg)
fix_kernels(cfg)
policy = instantiate(cfg.contract)
data = build_data(cfg.data, policy)
data.prepare_data()
batch = next(iter(data.train_dataloader()))
torch.manual_seed(0)
module = build_model(detector_parts(cfg), policy, data.classes).train()
optimizer = module.optimizer(params=module.parameters())
def step():
    loss, _ = module.loss(module(batch["waveform"]), batch)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
step()
start = time.perf_counter()
for _ in range(int(steps)):
    step()
print(int(steps) * len(batch["id"]) / (time.perf_counter() - start))
"""


def clean_env() -> dict[str, str]:
    """This environment without any kernel pin: the machine's own kernels unless the run pins."""
    return {k: v for k, v in os.environ.items() if k not in X86_64}


def fit_seconds(model: str, setting: str, root: str, extra: list[str], work: Path) -> float:
    """Wall seconds of one ``train.py`` run, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "train.py"), f"model={model}",
                    f"reproducible={setting}", f"paths.data_dir={root}",
                    f"hydra.run.dir={work / f'{model}-{setting}-{time.time_ns()}'}",
                    "logger=csv", *extra], env=clean_env(), cwd=work, check=True,
                   capture_output=True)
    return time.perf_counter() - start


def step_rate(model: str, setting: str, root: str, steps: int, batch: int, sizes: str,
              work: Path) -> float:
    done = subprocess.run([sys.executable, "-c", STEPS, root, model, setting, str(steps),
                           str(batch), sizes], env=clean_env(), cwd=work, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT / "data"),
                        help="the controlled benchmark's data root (built when missing)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run on a tiny benchmark in a temporary folder, that only "
                        "checks the script works (tests use it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        extra, sizes, batch = [], "-", 16
        if args.smoke:
            args.root, args.repeats, args.steps, batch = str(work / "data"), 1, 1, 2
            sizes = "{train:4,validation:2,test:1}"
            extra = [f"data.sizes={sizes}", "data.speech_source=synthetic",
                     "data.num_workers=0", "data.batch_size=2", "trainer.max_epochs=1"]
        print("| detector | measured | machine's own kernels | reproducible=true | slowdown |")
        print("|---|---|---|---|---|")
        for model in DETECTORS[:1] if args.smoke else DETECTORS:
            fits = {"false": [], "true": []}
            rates = {"false": [], "true": []}
            for _ in range(args.repeats):
                for setting in ("false", "true"):  # alternating: load hits both alike
                    fits[setting].append(fit_seconds(model, setting, args.root, extra, work))
                    rates[setting].append(step_rate(model, setting, args.root, args.steps,
                                                    batch, sizes, work))
            fit = {s: statistics.median(v) for s, v in fits.items()}
            rate = {s: statistics.median(v) for s, v in rates.items()}
            cells = [(f"train.py, {'1 epoch' if args.smoke else '5 epochs'} (median of "
                      f"{args.repeats})", f"{fit['false']:.1f} s", f"{fit['true']:.1f} s",
                      f"{fit['true'] / fit['false']:.2f}×"),
                     (f"training steps, batch {batch}", f"{rate['false']:.1f} clips/s",
                      f"{rate['true']:.1f} clips/s", f"{rate['false'] / rate['true']:.2f}×")]
            for what, own, pinned, ratio in cells:
                print(f"| {model} | {what} | {own} | {pinned} | {ratio} |")
                record("reproducible_cost.py", f"{model}: {what}", pinned,
                       "the machine's own kernels", own, ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
