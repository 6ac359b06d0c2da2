"""The measured properties of every relaxation of each guard clause: what a perfect prediction
costs at logits ±2, ±4 and ±8; how often a one-frame move of a predicted boundary toward the
reference raises the clause's loss; how often a broken clause has no gradient (|∇| < 1e-6) and
how large it is; whether the loss equals the exact monitor on crisp inputs. The default witness
(``rise``) was chosen from this table and from training (``scripts/contract_losses.py``), the
default event relaxation (``expected``) from training against it::

    python scripts/relaxation_properties.py            # a minute on a CPU core
    python scripts/relaxation_properties.py --cases 40
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import sys

import numpy as np
import torch

from sedcontract.cli.command import reported
from sedcontract.contracts import evaluate_contract
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.soft import WITNESSES, ContractLoss
from sedcontract.contracts.soft.events import EVENT_RELAXATIONS

N, EPS = 240, 10
POLICY = AuditPolicy()
FRAME, EVENT = ("onset", "offset"), ("missed", "false", "duration", "fragmentation")


@functools.cache
def relaxed(clause: str, relaxation: str) -> ContractLoss:
    if clause in FRAME:
        return ContractLoss(POLICY, ("speech",), {clause: 1.0}, relaxation={clause: relaxation})
    if clause in EVENT:
        return ContractLoss(POLICY, ("speech",), {clause: 1.0}, events=relaxation)
    return ContractLoss(POLICY, ("speech",), {clause: 1.0})


def loss(clause: str, relaxation: str, z: torch.Tensor, ref: torch.Tensor
         ) -> tuple[float, float]:
    """The clause's loss and the gradient's L1 norm on one row."""
    z = z.clone().double().requires_grad_(True)
    out = relaxed(clause, relaxation)(z[None, None], ref[None, None], torch.tensor([N]))
    out[clause].backward()
    return out[clause].item(), z.grad.abs().sum().item()


def event(a: int, b: int) -> torch.Tensor:
    x = torch.zeros(N, dtype=torch.bool)
    x[max(a, 0):max(b, 0)] = True
    return x


def logits(active: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return torch.where(active, hi, lo).double()


def sweep(clause: str, s: int, n: int) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The reference and predictions whose boundary moves one frame at a time toward it."""
    ref, e = event(s, s + n), s + n
    if clause == "onset":
        return ref, [event(o, e) for o in range(s - EPS - 12, s + 1)]
    if clause == "offset":
        return ref, [event(s, o) for o in range(e + EPS + 12, e - 1, -1)]
    if clause == "silence":
        return ref, [event(s, o) for o in range(e + EPS + 20, e - 1, -1)]
    if clause in ("missed", "false"):
        return ref, [event(a, a + 6) for a in range(e + 30, e - 2, -1)]
    if clause == "duration":
        return ref, [event(s, o) for o in range(e + 30, e - 1, -1)]
    g = s + n // 2  # fragmentation: a gap closing
    return ref, [ref & ~event(g, g + w) for w in range(8, -1, -1)]


def broken(clause: str, s: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    ref, e = event(s, s + n), s + n
    pred = {"onset": event(s + EPS + 3, e), "offset": event(s, e - EPS - 3),
            "missed": event(0, 0), "false": ref | event(e + 40, e + 46),
            "silence": ref | event(e + EPS + 5, e + EPS + 9),
            "duration": event(s - 12, e + 12) if n < 50 else event(s - 30, e + 30),
            "fragmentation": ref & ~event(s + n // 2, s + n // 2 + 3)}[clause]
    return pred, ref


def crisp_exact(clause: str, relaxation: str, rng: np.random.Generator, cases: int) -> bool:
    for _ in range(cases):
        ref = torch.tensor(np.cumsum(rng.random(N) < 0.03) % 2 == 1)
        pred = torch.tensor(np.cumsum(rng.random(N) < 0.04) % 2 == 1)
        terms = relaxed(clause, relaxation).terms(logits(pred, -60.0, 60.0)[None, None],
                                                   ref[None, None], torch.tensor([N]))[clause]
        rows = {"ref.active": ref[None].numpy(), "pred.active": pred[None].numpy()}
        counts = evaluate_contract(POLICY.parsed, rows, hop=0.02, lengths=np.array([N]),
                                   row_classes=np.zeros(1, dtype=np.int64),
                                   classes=("speech",))[clause]
        satisfied = terms.obligations.item() - terms.violations.item()
        if abs(satisfied - counts.satisfied) > 1e-6 or \
                abs(terms.obligations.item() - counts.obligations) > 1e-6:
            return False
    return True


def measure(clause: str, relaxation: str, cases: int) -> dict[str, object]:
    rng = np.random.default_rng(0)
    perfect = {}
    ref = event(60, 160) | event(190, 220)
    for m in (2, 4, 8):
        perfect[m] = loss(clause, relaxation, logits(ref, -m, m), ref)[0]
    raises = moves = flat = 0
    grads = []
    for _ in range(cases):
        s, n = int(rng.integers(40, 80)), int(rng.integers(25, 90))
        lo, hi = float(rng.uniform(-8, -2)), float(rng.uniform(2, 8))
        ref, preds = sweep(clause, s, n)
        values = [loss(clause, relaxation, logits(p, lo, hi), ref)[0] for p in preds]
        moves += len(values) - 1
        raises += sum(b > a + 1e-12 for a, b in itertools.pairwise(values))
        pred, ref = broken(clause, s, n)
        _, g = loss(clause, relaxation, logits(pred, lo, hi), ref)
        grads.append(g)
        flat += g < 1e-6
    return {"perfect": perfect, "raises": raises / moves, "flat": flat / cases,
            "grad": statistics.median(grads),
            "crisp": crisp_exact(clause, relaxation, rng, max(cases // 4, 3))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20, help="random cases per property")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| clause | relaxation | perfect ±2 | perfect ±4 | perfect ±8 | raising moves "
          "toward the reference | broken without gradient | median \\|∇\\| when broken | "
          "= monitor on crisp |\n|---|---|---|---|---|---|---|---|---|")
    candidates = {**{c: WITNESSES for c in FRAME}, **{c: EVENT_RELAXATIONS for c in EVENT},
                  "silence": ("noisy_or",)}
    for clause in ("onset", "offset", "missed", "false", "silence", "duration",
                   "fragmentation"):
        for relaxation in candidates[clause]:
            m = measure(clause, relaxation, args.cases)
            p = m["perfect"]
            print(f"| {clause} | {relaxation} | {p[2]:.3f} | {p[4]:.3f} | {p[8]:.4f} | "
                  f"{100 * m['raises']:.1f} % | {100 * m['flat']:.0f} % | "
                  f"{m['grad']:.2g} | {'yes' if m['crisp'] else 'no'} |", flush=True)


if __name__ == "__main__":
    sys.exit(reported("relaxation_properties", main))
