"""Round 2 of the held-out protocol (docs/results/protocol.md#round-2): the arms judged over
the whole trade-off and in fine-tuning, the written rules that choose among them on the
development rows, and every choice its lock freezes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sedcontract.analysis.tradeoff import BUDGETS, GUARD, logit_grid
from sedcontract.errors import ProtocolError
from sedcontract.experiments.contract_losses import ARMS, CONTROL, LOW_BELOW, MEDIAN, THRESHOLD

DEVELOPMENT = (0, 1)
HELDOUT = (5, 6, 7)
DEVELOPMENT_SEEDS = (0, 1)
HELDOUT_SEEDS = (0, 1, 2, 3, 4)
SHIPPED = "rise_boundary_frag"   # round 1's locked arm: the shipped configuration
FINETUNE_EPOCHS = (1, 3)         # the candidates for k
TARGETS = {"false": 0.85, "fragmentation": 0.85}
RESAMPLES = 10_000               # the operating-point intervals' draws (as round 1)
CURVE_RESAMPLES = 2_000          # the trade-off's: every draw forms every curve again
BASE = ["experiment=contract_vs_baselines", "model=contract_aware", "reproducible=true"]
READINGS = ("none", "tuned")     # as it decides; with its tuned post-processing


def arms_of(epochs: Sequence[int], targets: bool) -> dict[str, dict[str, Any]]:
    """name → ``overrides`` (on BASE), and for a fine-tune the ``epochs`` from a BCE run."""
    arms: dict[str, dict[str, Any]] = {
        CONTROL: {"overrides": ARMS[CONTROL]},
        "contract": {"overrides": ARMS[SHIPPED]}}
    if targets:
        arms["contract_targets"] = {"overrides": [
            *ARMS[SHIPPED], *(f"+loss.contract.targets.{k}={v}" for k, v in TARGETS.items())]}
    for k in epochs:
        arms[f"finetuned_{k}"] = {"overrides": ARMS[SHIPPED], "epochs": k}
        arms[f"bce_continued_{k}"] = {"overrides": ARMS[CONTROL], "epochs": k}
    return arms


def contrasts_for(arms: Sequence[str]) -> list[tuple[str, str]]:
    """Every arm against BCE; each fine-tuned arm also against BCE continued as long."""
    out = [(a, CONTROL) for a in arms if a != CONTROL]
    out += [(a, f"bce_continued_{a.rsplit('_', 1)[1]}") for a in arms
            if a.startswith("finetuned_")]
    return out


def point_contrasts(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
    """The operating-point contrasts: with tuned post-processing on both sides, and as they
    decide."""
    return [(a, post, b, post) for a, b in pairs for post in ("tuned", "none")]


def pooled_interval(rows: Sequence[Mapping[str, str]], system: str, control: str,
                    post: str = "tuned", coordinate: str = "logic") -> Mapping[str, str] | None:
    """The pooled typed interval of ``system`` − ``control`` (both with ``post``), if any."""
    return next((r for r in rows if (r["benchmark"], r["system"], r["post"], r["control"],
                                     r["control_post"], r["mode"], r["coordinate"])
                 == ("pooled", system, post, control, post, "typed", coordinate)), None)


def rules(rows: Sequence[Mapping[str, str]], intervals: Sequence[Mapping[str, str]]
          ) -> dict[str, Any]:
    """The written rules on the development rows: ``k`` with the most pooled tuned typed logic
    over BCE continued (smaller on a 3-decimal tie); the targets arm if it reaches its targets."""
    gains = {}
    for k in FINETUNE_EPOCHS:
        found = pooled_interval(intervals, f"finetuned_{k}", f"bce_continued_{k}")
        if found is None:
            raise ProtocolError(f"the development intervals hold no finetuned_{k} − "
                             f"bce_continued_{k}: run develop first")
        gains[k] = round(float(found["point"]), 3)
    best = max(FINETUNE_EPOCHS, key=lambda k: (gains[k], -k))
    reached = {}
    for name, target in TARGETS.items():
        mine = [r for r in rows if (r["system"], r["post"], r["mode"], r["coordinate"])
                == ("contract_targets", "none", "typed", name)]
        sat = sum(int(r["satisfied"]) for r in mine)
        obl = sum(int(r["obligations"]) for r in mine)
        reached[name] = {"score": round(sat / obl, 6) if obl else None, "target": target}
    keep = all(v["score"] is not None and v["score"] >= v["target"] for v in reached.values())
    return {"finetune_epochs": best, "finetune_gains": {str(k): v for k, v in gains.items()},
            "targets_kept": keep, "targets_reached": reached}


def choices_of(chosen: Mapping[str, Any]) -> dict[str, Any]:
    """Every choice the round-2 held-out table depends on, given the rules' outcome."""
    arms = arms_of([chosen["finetune_epochs"]], chosen["targets_kept"])
    grid = logit_grid()
    return {"protocol": "docs/results/protocol.md#round-2", "base": BASE,
            "arms": {name: {"overrides": arm["overrides"], **(
                {"from": f"{CONTROL} best checkpoint", "epochs": arm["epochs"]}
                if "epochs" in arm else {})} for name, arm in arms.items()},
            "rules": dict(chosen),
            "post_grid": {"median_filter": list(MEDIAN), "threshold": list(THRESHOLD),
                          "low_below": list(LOW_BELOW), "chosen_by": "validation typed logic"},
            "tradeoff": {"coordinates": list(GUARD), "budgets": list(BUDGETS),
                         "max_rate": 100.0, "psds": ["psds1", "psds2"],
                         "grid": {"logits": [-15.0, 15.0], "count": len(grid)},
                         "readings": {"none": "as it decides",
                                      "tuned": "its tuned median filter"}},
            "development": list(DEVELOPMENT), "heldout": list(HELDOUT),
            "training_seeds": list(HELDOUT_SEEDS), "resamples": RESAMPLES,
            "curve_resamples": CURVE_RESAMPLES, "level": 0.95}


def round_arms(data_seed: int, chosen: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The arms of the round a benchmark belongs to: every candidate on a development one,
    the locked arms on another (``chosen``: the locked choices, None off the held-out ones)."""
    outcome = chosen["rules"] if chosen is not None else {
        "finetune_epochs": FINETUNE_EPOCHS[0], "targets_kept": True}
    development = data_seed in DEVELOPMENT
    return arms_of(FINETUNE_EPOCHS if development else [outcome["finetune_epochs"]],
                   development or outcome["targets_kept"])
