"""Device check: each detector trained for a fixed number of steps on the accelerator present
(CUDA when there is one, else the CPU), built as training builds it, with bf16 mixed precision
where the GPU supports it (32-bit otherwise and on the CPU).

Per detector: *steps/s* and *clips/s* of Lightning's training loop (loader included; the first
batch of every epoch and the validations left out), *peak memory* (``max_memory_allocated`` of
the fit on CUDA; — on the CPU) and *monitor share*, the time inside ``ContractMonitor.update``
and ``compute`` over the whole validation loop (validation epoch start to validation end,
summed over the validations of the fit; the sanity check left out). Detectors: threshold (fitted,
not trained: it runs one training epoch, so ``--steps`` does not bound it), logistic,
temporal_cnn, dilated_cnn, contract_aware and ``model=probe encoder=wav2vec2`` on a tiny random
wav2vec2 checkpoint this script writes (its features cached in a temporary folder).

On a GPU machine, run (the benchmark is built under ``--root`` on first use, about 11 s):
``.venv/bin/python -W ignore benchmarks/device.py --root data --steps 200``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lightning as L
import torch
from hydra import compose, initialize_config_module
from hydra.utils import instantiate

from _rows import record
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.training import build_data, build_model, detector_parts

DETECTORS = ("threshold", "logistic", "temporal_cnn", "dilated_cnn", "contract_aware", "probe")
PROBE = "probe (tiny wav2vec2)"


def tiny_wav2vec2(root: Path) -> Path:
    """A tiny random wav2vec2 saved as ``save_pretrained`` writes it (the official format)."""
    from transformers.utils import logging as hf_logging

    from sedcontract.models.tiny_encoders import tiny_checkpoint

    hf_logging.disable_progress_bar()
    return tiny_checkpoint("wav2vec2", root)


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


class MonitorClock:
    """Seconds spent inside ``ContractMonitor.update`` and ``compute`` while :meth:`timing`
    holds (the class's methods wrapped; a monitor is built for every validation, after)."""

    def __init__(self, device: str) -> None:
        self.device, self.seconds = device, 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        real = {name: getattr(ContractMonitor, name) for name in ("update", "compute")}

        def timed(method):
            def wrapper(*args, **kwargs):
                synchronize(self.device)  # pending forward work is not the monitor's
                start = time.perf_counter()
                try:
                    return method(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - start
            return wrapper

        for name, method in real.items():
            setattr(ContractMonitor, name, timed(method))
        try:
            yield
        finally:
            for name, method in real.items():
                setattr(ContractMonitor, name, method)


class Clock(L.Callback):
    """Training steps and clips with their wall time (the first batch of each epoch and the
    validations after it excluded), and the validation time with the monitor's part of it."""

    def __init__(self, monitor: MonitorClock, device: str) -> None:
        self.monitor, self.device = monitor, device
        self.steps = self.clips = 0
        self.train_s = self.val_s = self.monitor_s = 0.0
        self.last: float | None = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        synchronize(self.device)
        now = time.perf_counter()
        if batch_idx > 0 and self.last is not None:
            self.steps += 1
            self.clips += len(batch["id"])
            self.train_s += now - self.last
        self.last = now

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            synchronize(self.device)
            self.val_start, self.monitor_start = time.perf_counter(), self.monitor.seconds

    def on_validation_end(self, trainer, pl_module) -> None:
        # after the module's on_validation_epoch_end, where the monitor computes the report
        if not trainer.sanity_checking:
            synchronize(self.device)
            self.val_s += time.perf_counter() - self.val_start
            self.monitor_s += self.monitor.seconds - self.monitor_start


def accelerator(precision: str = "auto") -> tuple[str, str]:
    """The device type and the precision to train in on it (``auto``: bf16 mixed precision on
    a GPU that supports it, else 32-bit)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if precision == "auto":
        bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
        precision = "bf16-mixed" if bf16 else "32"
    return device, precision


def measure(module, datamodule, args: argparse.Namespace, scratch: str) -> dict[str, str]:
    """Fit ``module`` for ``args.steps`` steps; the table's cells."""
    device, precision = accelerator(args.precision)
    monitor = MonitorClock(device)
    clock = Clock(monitor, device)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    trainer = L.Trainer(accelerator=device, devices=1, precision=precision,
                        max_steps=args.steps, limit_val_batches=args.val_batches,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[clock],
                        default_root_dir=scratch)
    with monitor.timing():
        trainer.fit(module, datamodule=datamodule)
    memory = f"{torch.cuda.max_memory_allocated() / 2**20:.0f}" if device == "cuda" else "—"
    share = clock.monitor_s / clock.val_s if clock.val_s > 0 else float("nan")
    return {"device": device, "precision": precision,
            "steps/s": f"{clock.steps / clock.train_s:.1f}",
            "clips/s": f"{clock.clips / clock.train_s:.1f}",
            "peak memory MB": memory, "monitor share of validation": f"{share:.1%}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="data", help="data root (built when missing)")
    parser.add_argument("--steps", type=int, default=200, help="training steps per detector")
    parser.add_argument("--val-batches", type=int, default=8,
                        help="validation batches per validation (limit_val_batches)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--precision", default="auto",
                        help="auto (bf16-mixed on a GPU that supports it, else 32) or any "
                        "Lightning precision")
    parser.add_argument("--detectors", default=",".join(DETECTORS),
                        help=f"a comma-separated subset of {','.join(DETECTORS)}")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run on a tiny benchmark built in a temporary folder, that "
                        "only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    unknown = set(args.detectors.split(",")) - set(DETECTORS)
    if unknown:
        parser.error(f"unknown detector {sorted(unknown)[0]!r}; choose from "
                     f"{', '.join(DETECTORS)}")
    for name in ("sedcontract", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as scratch:
        if args.smoke:
            args.root, args.steps, args.val_batches = scratch, 4, 1
            args.batch_size, args.workers = 2, 0
        return run(args, scratch)


def run(args: argparse.Namespace, scratch: str) -> int:
    overrides = [f"paths.data_dir={args.root}", f"paths.output_dir={scratch}",
                 f"data.batch_size={args.batch_size}", f"data.num_workers={args.workers}"]
    if args.smoke:
        overrides += ["data.sizes={train:6,validation:2,test:1}",
                      "data.speech_source=synthetic"]
    with initialize_config_module("sedcontract.configs", version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    policy = instantiate(cfg.contract)  # the run's one policy: data, detector, monitor
    datamodule = build_data(cfg.data, policy)
    datamodule.prepare_data()
    device, _ = accelerator(args.precision)
    gpu = torch.cuda.get_device_name() if device == "cuda" else "none"
    print(f"torch {torch.__version__}, lightning {L.__version__}; GPU: {gpu}; "
          f"{torch.get_num_threads()} CPU threads, batch {args.batch_size}, "
          f"{args.workers} loader workers, {args.steps} steps, "
          f"{args.val_batches} validation batches per validation")
    columns = ["detector", "device", "precision", "steps/s", "clips/s", "peak memory MB",
               "monitor share of validation"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for name in args.detectors.split(","):
        model = [f"model={name}"]
        if name == "probe":
            model += ["encoder=wav2vec2", f"encoder.checkpoint={tiny_wav2vec2(Path(scratch))}",
                      f"model.frontend.cache_dir={Path(scratch) / 'features'}"]
        with initialize_config_module("sedcontract.configs", version_base="1.3"):
            model_cfg = compose("train", overrides=[*overrides, *model])
        torch.manual_seed(0)
        module = build_model(detector_parts(model_cfg), policy, datamodule.classes)
        cells = measure(module, datamodule, args, scratch)
        label = PROBE if name == "probe" else name
        print("| " + " | ".join([label, *(cells[c] for c in columns[1:])]) + " |", flush=True)
        memory = cells["peak memory MB"]
        record("device.py", f"{label} ({cells['device']}, {cells['precision']}), "
               f"{args.steps} steps", f"{cells['steps/s']} steps/s, {cells['clips/s']} clips/s; "
               f"monitor {cells['monitor share of validation']} of validation",
               memory=memory if memory == "—" else f"{memory} MB (accelerator)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
