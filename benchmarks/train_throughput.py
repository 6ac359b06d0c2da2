"""Training throughput (clips/s) of each detector on the controlled benchmark, on the CPU and
on a GPU when there is one, with the split between data loading and compute.

*Loading* iterates the training loader alone (with workers, and in the training process).
For each detector: *compute* repeats a forward, loss, backward and optimiser step on one batch
already in memory (the threshold detector: features and its decision; it has no gradient);
*fit* is Lightning's training loop end to end (loader workers included, steady state, no
validation); *loading share* is the in-process loading time over loading plus compute time.
Loading is not the bottleneck when the worker loading rate exceeds the compute rate. Run:
``.venv/bin/python benchmarks/train_throughput.py [--root data] [--batches 15]``."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time

import lightning as L
import torch
from hydra import compose, initialize_config_module
from hydra.utils import instantiate

from _rows import record
from sedcontract.training import build_data, build_model, detector_parts

DETECTORS = ("threshold", "logistic", "temporal_cnn", "dilated_cnn", "contract_aware")


def loading_rate(datamodule, batches: int) -> tuple[float, dict]:
    """Clips per second of the training loader alone, and its first batch."""
    loader = iter(datamodule.train_dataloader())
    first = next(loader)  # worker start-up is not steady-state loading
    start, clips = time.perf_counter(), 0
    for _ in range(batches):
        clips += len(next(loader)["id"])
    return clips / (time.perf_counter() - start), first


def compute_rate(module, batch: dict, device: torch.device, steps: int) -> float:
    """Clips per second of training steps on one batch held on ``device``."""
    module = module.to(device).train()
    batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    optimizer = module.optimizer(params=module.parameters()) if module.optimizer else None

    def step() -> None:
        out = module(batch["waveform"])
        if optimizer is None:
            module.frame_scores(module.features(batch["waveform"]), out)
            return
        loss, _ = module.loss(out, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    if module.fitted_not_trained:
        module.net.fit(module.features(batch["waveform"]), batch["activity"], batch["onset"])
    step()  # warm-up (allocations, kernels)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * len(batch["id"]) / (time.perf_counter() - start)


class _Clock(L.Callback):
    """Wall time from the start of the second training batch to the end of the last."""

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if batch_idx == 1:
            self.start, self.clips = time.perf_counter(), 0

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if batch_idx >= 1:
            self.clips += len(batch["id"])
            self.end = time.perf_counter()


def fit_rate(module, datamodule, device: torch.device, batches: int) -> float:
    """Clips per second of ``Trainer.fit`` over ``batches`` training batches."""
    clock = _Clock()
    trainer = L.Trainer(accelerator=device.type, devices=1, max_epochs=1,
                        limit_train_batches=batches + 1, limit_val_batches=0, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[clock])
    trainer.fit(module, datamodule=datamodule)
    return clock.clips / (clock.end - clock.start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="data", help="data root (built when missing)")
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run on a tiny benchmark built in a temporary folder, that "
                        "only checks the script works (tests use it)")
    args = parser.parse_args(argv)
    for name in ("sedcontract", "lightning.pytorch"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as scratch:
        if args.smoke:
            args.root, args.batches, args.batch_size, args.workers = scratch, 1, 2, 0
        return run(args)


def run(args: argparse.Namespace) -> int:
    overrides = [f"paths.data_dir={args.root}", "paths.output_dir=.",
                 f"data.batch_size={args.batch_size}", f"data.num_workers={args.workers}"]
    if args.smoke:
        overrides += ["data.sizes={train:6,validation:1,test:1}",
                      "data.speech_source=synthetic"]
    with initialize_config_module("sedcontract.configs", version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    policy = instantiate(cfg.contract)
    datamodule = build_data(cfg.data, policy)
    datamodule.prepare_data()
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available()
                                       else [])
    load, batch = loading_rate(datamodule, args.batches)
    datamodule.num_workers = 0
    load_single, _ = loading_rate(datamodule, args.batches)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, batch "
          f"{args.batch_size}; GPU: {torch.cuda.get_device_name() if len(devices) > 1 else 'none'}")
    print(f"loading: {load:.1f} clips/s with {args.workers} workers, {load_single:.1f} clips/s "
          "in the training process")
    record("train_throughput.py", f"loading, batch {args.batch_size}",
           f"{load:.1f} clips/s with {args.workers} workers, {load_single:.1f} in process")
    print("| detector | device | compute clips/s | fit clips/s | loading share |")
    print("|---|---|---|---|---|")
    for name in DETECTORS:
        with initialize_config_module("sedcontract.configs", version_base="1.3"):
            model_cfg = compose("train", overrides=[f"model={name}"])
        for device in devices:
            torch.manual_seed(0)
            module = build_model(detector_parts(model_cfg), policy, datamodule.classes)
            rate = compute_rate(module, batch, device, args.batches)
            fit = "— (no training steps)"
            if not module.fitted_not_trained:
                datamodule.num_workers = args.workers
                torch.manual_seed(0)
                fresh = build_model(detector_parts(model_cfg), policy, datamodule.classes)
                fit = f"{fit_rate(fresh, datamodule, device, args.batches):.1f}"
            share = (1 / load_single) / (1 / load_single + 1 / rate)
            print(f"| {name} | {device.type} | {rate:.1f} | {fit} | {share:.0%} |")
            record("train_throughput.py", f"{name} ({device.type}), batch {args.batch_size}",
                   f"compute {rate:.1f} clips/s, fit "
                   + (fit if module.fitted_not_trained else f"{fit} clips/s")
                   + f", loading share {share:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
