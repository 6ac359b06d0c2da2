"""Where the protocol's runs and benchmarks lie, and what a run folder says of itself: its best
checkpoint, whether its training finished, how long it trained, and whether the settings it
was trained with are the ones its arm composes now."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError
from sedcontract.experiments import contract_losses as round1
from sedcontract.experiments import tradeoff as round2

# what decides the weights a run trains; the saved config of a run found trained must agree
TRAINED_BY = ("model", "loss", "augment", "trainer", "data", "contract", "seed", "threads",
              "reproducible")


def benchmark(data: Path, data_seed: int) -> Path:
    """The data root of one benchmark (``paths.data_dir``); its files in ``controlled/``."""
    return data / f"seed_{data_seed}"


def split_files(data: Path, data_seed: int, split: str) -> tuple[Path, Path]:
    """A benchmark split's reference events and clip durations (tsv files)."""
    folder = benchmark(data, data_seed) / "controlled"
    return folder / f"{split}.tsv", folder / f"{split}_durations.tsv"


def role(data_seed: int) -> str:
    """``development`` or ``heldout``: the part a benchmark plays in the protocol's rounds."""
    if data_seed in round1.DEVELOPMENT:
        return "development"
    if data_seed in round1.HELDOUT or data_seed in round2.HELDOUT:
        return "heldout"
    raise ProtocolError(f"data seed {data_seed} is neither development "
                     f"{list(round1.DEVELOPMENT)} nor held out "
                     f"{list(round1.HELDOUT + round2.HELDOUT)} (docs/results/protocol.md)")


def run_dir(runs: Path, data_seed: int, arm: str, seed: int) -> Path:
    """The folder of one run: ``runs/<role>_<data seed>/<arm>/seed_<seed>``."""
    return runs / f"{role(data_seed)}_{data_seed}" / arm / f"seed_{seed}"


def heldout_runs(runs: Path, data_seeds: Iterable[int]) -> list[Path]:
    """The run folders on the held-out benchmarks ``data_seeds`` (a lock comes before any)."""
    return sorted(p for d in data_seeds for p in (runs / f"heldout_{d}").glob("*/seed_*")
                  if p.is_dir())


def best_checkpoint(where: Path) -> Path:
    """The run's best checkpoint (the last ``epoch_*.ckpt`` kept)."""
    kept = sorted((where / "checkpoints").glob("epoch_*.ckpt"))
    if not kept:
        raise ProtocolError(f"{where}: no best checkpoint (epoch_*.ckpt)")
    return kept[-1]


def check_finished(where: Path) -> None:
    """Refuse a run whose training did not reach its end (killed, the machine restarted):
    ``last.ckpt`` is the best epoch's copy, so only the log's closing line says a run ended."""
    log = where / "train.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    if "best checkpoint (" not in text:
        raise ProtocolError(f"{where}: its training did not finish ({log} has no closing "
                         "'best checkpoint' line); remove the run to train it again")


def training_seconds(where: Path) -> float:
    """How long a run trained: from its saved config to its log's closing line (file times;
    ``last.ckpt`` is the best epoch's copy, written before the last epoch when that is worse)."""
    return (where / "train.log").stat().st_mtime - \
        (where / ".hydra" / "config.yaml").stat().st_mtime


def effective(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a composed config that decide what a run trains. With λ = 0 the contract
    loss adds 0 × its value to the total, so its other settings are left out."""
    out = {key: cfg.get(key) for key in TRAINED_BY}
    contract = (out.get("loss") or {}).get("contract")
    if isinstance(contract, Mapping) and contract.get("weight") == 0:
        out["loss"] = {**out["loss"], "contract": {"weight": contract["weight"]}}
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The dotted path of the first setting where ``a`` and ``b`` differ, with both values."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else
                                     str(key))
            if found:
                return found
        return None
    return None if a == b else f"{path}: trained {json.dumps(a)}, now {json.dumps(b)}"


def check_trained_as(where: Path, saved: Mapping[str, Any], now: Mapping[str, Any]) -> None:
    """Refuse a run found trained whose saved config is not what its arm composes ``now`` (a
    table never mixes runs trained otherwise), or whose training did not finish."""
    found = first_difference(effective(saved), effective(now))
    if found:
        raise ProtocolError(f"{where} was trained with other settings ({found}); remove the run "
                         "to train it again, or give the arm its old settings")
    check_finished(where)
