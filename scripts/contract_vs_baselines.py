"""The contract-versus-baselines experiment on the controlled benchmark, end to end.

Trains ``contract_aware``, ``dilated_cnn`` and ``temporal_cnn`` under one CPU-sized budget
(``experiment=contract_vs_baselines``) for each seed, and the contract-aware detector with its
contract losses switched off (``contract_aware_bce_only``: the same network and augmentation,
BCE alone), which separates what the losses add from what the augmentation adds; fine-tunes
every ``dilated_cnn`` run from its best checkpoint with the contract losses
(``dilated_cnn+contract``) and, as the control, with BCE alone for the same epochs
(``dilated_cnn+bce``); evaluates every best
checkpoint on the test split; and writes the guard vectors and standard scores side by side
(typed and union, overall and per perturbation family, mean ± spread over seeds) to
``docs/results/contract_vs_baselines.{md,csv}``. Runs that exist are reused (``--fresh``
retrains)::

    python scripts/contract_vs_baselines.py            # about 15 minutes on 2 CPU cores
    python scripts/contract_vs_baselines.py --seeds 0  # one seed
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from sedcontract.cli.command import reported
from sedcontract.experiments.cells import cell
from sedcontract.experiments.runs import best_checkpoint, check_finished

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("contract_aware", "dilated_cnn", "temporal_cnn")
ABLATIONS = {  # name → overrides: the contract-aware detector without its contract losses
    "contract_aware_bce_only": ["model=contract_aware", "loss.contract.weight=0.0"],
}
FINETUNES = {  # name → overrides on top of model=contract_aware with init_from
    "dilated_cnn+contract": ["augment=none"],
    "dilated_cnn+bce": ["augment=none", "loss.contract.weight=0.0"],
}
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")
SCORES = ("event", "segment", "frame")


def run(command: list[str], log: Path, threads: int | None = None) -> float:
    """Run one command with its output in ``log`` (on ``threads`` CPU threads when given);
    stop the experiment if it fails."""
    start = time.time()
    log.parent.mkdir(parents=True, exist_ok=True)
    env = None if threads is None else {**os.environ, "OMP_NUM_THREADS": str(threads),
                                        "MKL_NUM_THREADS": str(threads)}
    with open(log, "w") as out:
        code = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                               env=env)
    if code:
        sys.exit(f"failed ({code}): {' '.join(command)}; see {log}")
    return time.time() - start


def train_all(args: argparse.Namespace) -> dict[str, float]:
    python, seconds = sys.executable, {}
    jobs = [(m, s, [f"model={m}"]) for s in args.seeds for m in MODELS]
    jobs += [(name, s, extra) for s in args.seeds for name, extra in ABLATIONS.items()]
    jobs += [(name, s, ["model=contract_aware", *extra]) for s in args.seeds
             for name, extra in FINETUNES.items()]
    for name, seed, overrides in jobs:
        run_dir = args.runs / name / f"seed_{seed}"
        if args.fresh and run_dir.exists():
            shutil.rmtree(run_dir)
        if (run_dir / "checkpoints" / "last.ckpt").exists():
            check_finished(run_dir)
        else:
            if name in FINETUNES:
                source = best_checkpoint(args.runs / "dilated_cnn" / f"seed_{seed}")
                overrides = [*overrides, f"model.init_from={source}"]
            print(f"training {name} seed {seed}", flush=True)
            seconds[f"{name}/{seed}"] = run(
                [python, "train.py", "experiment=contract_vs_baselines", f"seed={seed}",
                 f"hydra.run.dir={run_dir}", *overrides, *args.overrides],
                run_dir.parent / f"seed_{seed}.log")
        test_dir = run_dir / "test"
        if not (test_dir / "test_report.csv").exists():
            print(f"evaluating {name} seed {seed} on the test split", flush=True)
            run([python, "evaluate.py", f"ckpt_path={best_checkpoint(run_dir)}", "split=test",
                 f"hydra.run.dir={test_dir}", *args.overrides], test_dir.parent / "test.log")
    return seconds


def families(data_dir: Path) -> dict[str, str]:
    """Clip id → perturbation family of the test split."""
    out = {}
    with open(data_dir / "controlled" / "test.jsonl") as f:
        for line in f:
            item = json.loads(line)
            out[item["id"]] = item["perturbation"]["family"]
    return out


def collect(args: argparse.Namespace) -> list[dict[str, object]]:
    """Source rows: detector × seed × mode × family × coordinate with summed counts, and the
    standard scores (family ``all``)."""
    family_of = families(args.data)
    rows: list[dict[str, object]] = []
    for name in (*MODELS, *ABLATIONS, *FINETUNES):
        for seed in args.seeds:
            test_dir = args.runs / name / f"seed_{seed}" / "test"
            counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
            with open(test_dir / "test_report.csv") as f:
                for row in csv.DictReader(f):
                    if row["role"] != "guard":
                        continue
                    for family in ("all", family_of[row["clip"]]):
                        key = (row["mode"], family, row["coordinate"])
                        counts[key][0] += int(row["satisfied"])
                        counts[key][1] += int(row["obligations"])
            for (mode, family, coordinate), (sat, obl) in sorted(counts.items()):
                rows.append({"detector": name, "seed": seed, "mode": mode, "family": family,
                             "coordinate": coordinate, "satisfied": sat, "obligations": obl,
                             "value": sat / obl if obl else float("nan")})
            scores = json.loads((test_dir / "test_report_scores.json").read_text())["scores"]
            for score in SCORES:
                rows.append({"detector": name, "seed": seed, "mode": "scores", "family": "all",
                             "coordinate": f"{score}_f1", "satisfied": "", "obligations": "",
                             "value": scores[score]["f1"]})
    return rows


def logic(rows: list[dict[str, object]], name: str, seed: int, mode: str, family: str) -> float:
    values = [r["value"] for r in rows if (r["detector"], r["seed"], r["mode"], r["family"])
              == (name, seed, mode, family) and r["coordinate"] in COORDINATES
              and r["value"] == r["value"]]
    return sum(values) / len(values) if values else float("nan")


def tables(rows: list[dict[str, object]], seeds: list[int]) -> str:
    detectors = [*MODELS, *ABLATIONS, *FINETUNES]

    def value(name: str, seed: int, mode: str, family: str, coordinate: str) -> float:
        for r in rows:
            if (r["detector"], r["seed"], r["mode"], r["family"], r["coordinate"]) == \
                    (name, seed, mode, family, coordinate):
                return float(r["value"])
        return float("nan")

    out = io.StringIO()
    for mode in ("typed", "union"):
        out.write(f"\n### {mode.capitalize()} guard vector, test split (all 420 clips)\n\n")
        out.write("| detector | logic | " + " | ".join(COORDINATES) + " |\n")
        out.write("|---|" + "---|" * (len(COORDINATES) + 1) + "\n")
        for name in detectors:
            cells = [cell([logic(rows, name, s, mode, "all") for s in seeds])]
            cells += [cell([value(name, s, mode, "all", c) for s in seeds]) for c in COORDINATES]
            out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    out.write("\n### Standard scores, test split (micro F1)\n\n")
    out.write("| detector | collar event F1 | segment F1 (1 s) | frame F1 |\n|---|---|---|---|\n")
    for name in detectors:
        cells = [cell([value(name, s, "scores", "all", f"{k}_f1") for s in seeds])
                 for k in SCORES]
        out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    fams = sorted({str(r["family"]) for r in rows} - {"all"})
    for mode in ("typed", "union"):
        out.write(f"\n### {mode.capitalize()} logic per perturbation family, test split\n\n")
        out.write("| detector | " + " | ".join(fams) + " |\n|---|" + "---|" * len(fams) + "\n")
        for name in detectors:
            cells = [cell([logic(rows, name, s, mode, f) for s in seeds]) for f in fams]
            out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    return out.getvalue()


def header(args: argparse.Namespace) -> str:
    """What was run, how to run it again, and where."""
    import platform

    import torch

    seeds = " ".join(map(str, args.seeds))
    return (
        "# Contract losses against the baselines (controlled benchmark, test split)\n\n"
        "Generated by `python scripts/contract_vs_baselines.py"
        f"{'' if args.seeds == [0, 1, 2] else ' --seeds ' + seeds}"
        f"{' ' + ' '.join(args.overrides) if args.overrides else ''}` — do not edit; the "
        "source rows are `contract_vs_baselines.csv` beside it. Budget: "
        "`experiment=contract_vs_baselines` (5 epochs, batch 16, AdamW 1e-3, CPU), the best "
        f"checkpoint on validation logic of each run; seeds {seeds}; cells are mean ± sample "
        "standard deviation over seeds; the standard contract (eps 200 ms), micro aggregation. "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}."
        "\n\n`contract_aware_bce_only` is the contract-aware network and augmentation with the "
        "contract losses off; `dilated_cnn+contract` / `dilated_cnn+bce` continue each "
        "`dilated_cnn` run for the same budget with / without the contract losses (no "
        "augmentation).\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--runs", type=Path, default=ROOT / "logs" / "contract_vs_baselines")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("SEDCONTRACT_DATA", ROOT / "data")))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results")
    parser.add_argument("--fresh", action="store_true", help="retrain runs that exist")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for every run")
    args = parser.parse_args()
    args.runs, args.out = args.runs.resolve(), args.out.resolve()
    seconds = train_all(args)
    rows = collect(args)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "contract_vs_baselines.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    text = header(args) + tables(rows, args.seeds)
    (args.out / "contract_vs_baselines.md").write_text(text)
    print(text)
    if seconds:
        print("training and evaluation seconds:", json.dumps(seconds))


if __name__ == "__main__":
    sys.exit(reported("contract_vs_baselines", main))
