"""Training-step overhead of the soft contract losses: one forward, loss, backward and
optimiser step of the contract-aware detector on a batch of 10 s clips, with BCE alone against
BCE plus the relaxed clauses of the standard contract (product logic on typed traces with the
default relaxations; also the relaxation before them, the sound semantics, and typed + union),
measured side by side in one run, on the CPU and on a GPU
when there is one. The goal is at most 25 % overhead. The last column is the contract loss
alone (its forward and backward on fixed logits of the batch's shape), which the step time of a
small CPU batch hides in its noise. Run:
``.venv/bin/python benchmarks/contract_loss.py [--batch 16] [--steps 10]``."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from _rows import record
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.soft import ContractLoss
from sedcontract.lightning.losses import smooth_boundaries
from sedcontract.models import ContractAwareDetector, LogMel

CLASSES = ("speech", "tone", "burst")


def batch_of(size: int, seconds: float, device: torch.device) -> dict[str, torch.Tensor]:
    """Random audio with a few events per clip and class on the 20 ms grid."""
    frames = int(seconds / 0.02)
    generator = torch.Generator().manual_seed(0)
    flips = torch.rand(size, len(CLASSES), frames, generator=generator) < 0.02
    activity = (flips.cumsum(-1) % 2 == 1).float()
    onset = activity * (1 - torch.nn.functional.pad(activity, (1, 0))[..., :-1])
    offset = (1 - activity) * torch.nn.functional.pad(activity, (1, 0))[..., :-1]
    return {"waveform": torch.randn(size, int(seconds * 16_000), generator=generator).to(device),
            "activity": activity.to(device), "onset": onset.to(device),
            "offset": offset.to(device), "frames": torch.full((size,), frames, device=device)}


def timed(step: Callable[[], None], device: torch.device, steps: int) -> float:
    """Median seconds of ``step`` after one warm-up call."""
    step()
    times = []
    for _ in range(steps):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def loss_time(losses: ContractLoss, batch: dict[str, torch.Tensor], device: torch.device,
              steps: int) -> float:
    """Median seconds of the contract loss alone: forward and backward on fixed logits."""
    generator = torch.Generator().manual_seed(1)
    logits = torch.randn(batch["activity"].shape, generator=generator).to(device)
    logits.requires_grad_()
    reference = batch["activity"] > 0.5

    def step() -> None:
        logits.grad = None
        losses(logits, reference, batch["frames"])["total"].backward()

    return timed(step, device, steps)


def step_time(losses: ContractLoss | None, batch: dict[str, torch.Tensor],
              device: torch.device, steps: int) -> float:
    """Median seconds of one training step."""
    torch.manual_seed(0)
    frontend = LogMel(n_mels=64).to(device)
    net = ContractAwareDetector(64, len(CLASSES)).to(device).train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def step() -> None:
        out = net(frontend(batch["waveform"]))
        t = min(out["activity"].shape[-1], batch["activity"].shape[-1])
        loss = sum(bce(out[k][..., :t], smooth_boundaries(batch[k][..., :t], 3)
                       if k != "activity" else batch[k][..., :t])
                   for k in ("activity", "onset", "offset"))
        if losses is not None:
            loss = loss + losses(out["activity"][..., :t], batch["activity"][..., :t] > 0.5,
                                 batch["frames"].clamp(max=t))["total"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return timed(step, device, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (for the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.batch, args.seconds, args.steps = 2, 1.0, 1
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available()
                                       else [])
    policy = AuditPolicy()
    variants = {
        "product, typed": ContractLoss(policy, CLASSES),  # the defaults: rise, expected
        "product, typed, noisy_or + expected": ContractLoss(
            policy, CLASSES, relaxation={"onset": "noisy_or", "offset": "noisy_or"},
            events="expected"),  # the relaxation before issue 24
        "product, typed, decided events": ContractLoss(policy, CLASSES, events="decided"),
        "product, typed + union": ContractLoss(policy, CLASSES, modes=("typed", "union")),
        "sound, typed": ContractLoss(policy, CLASSES, semantics="sound"),
    }
    print(f"one training step, batch {args.batch} × {args.seconds:g} s, "
          f"{len(CLASSES)} classes, median of {args.steps}")
    print("| device | losses | step (ms) | overhead vs BCE alone | contract loss alone (ms) |\n"
          "|---|---|---|---|---|")
    for device in devices:
        batch = batch_of(args.batch, args.seconds, device)
        base = step_time(None, batch, device, args.steps)
        print(f"| {device.type} | BCE alone | {base * 1e3:.1f} | — | — |")
        for name, losses in variants.items():
            t = step_time(losses, batch, device, args.steps)
            alone = loss_time(losses, batch, device, args.steps)
            print(f"| {device.type} | BCE + contract ({name}) | {t * 1e3:.1f} | "
                  f"{100 * (t / base - 1):+.1f} % | {alone * 1e3:.1f} |")
            record("contract_loss.py", f"step, BCE + contract ({name}), {device.type}, "
                   f"batch {args.batch}", f"{t * 1e3:.1f} ms (the loss alone "
                   f"{alone * 1e3:.1f} ms)", "BCE alone", f"{base * 1e3:.1f} ms",
                   f"{base / t:.2f}× ({100 * (t / base - 1):+.1f} %)")


if __name__ == "__main__":
    main()
