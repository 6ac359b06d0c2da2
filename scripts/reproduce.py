"""The controlled track from nothing to its report, in one command (``make reproduce``):

1. build (or verify) the controlled benchmark under ``--data``;
2. train every local detector (threshold, logistic, temporal CNN, dilated CNN, contract-aware)
   at the CPU-sized budget of ``experiment=contract_vs_baselines``, one seed;
3. evaluate each best checkpoint on the test split (source rows and decided events);
4. select a contract on the test split's pathology set under the shipped risk order;
5. sweep the tolerance radius over every detector's test predictions;
6. regenerate the report from the source rows, grouped by perturbation family.

Runs that exist are reused (``--fresh`` retrains). Everything lands in ``--out``
(``report/index`` files are listed at the end with the run time)::

    python scripts/reproduce.py                 # about 6 minutes on 2 CPU cores
    python scripts/reproduce.py --smoke         # tiny data, one epoch (the tests use it)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from sedcontract.cli.command import reported

ROOT = Path(__file__).resolve().parents[1]
DETECTORS = ("threshold", "logistic", "temporal_cnn", "dilated_cnn", "contract_aware")
SMOKE_SIZES = "{train:8,validation:5,test:6}"


def step(title: str) -> None:
    print(f"== {title}", flush=True)


def run(command: list[str], log: Path) -> None:
    """One command, its output in ``log``; stop at the first failure, naming the log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        code = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    if code:
        sys.exit(f"failed ({code}): {' '.join(command)}; see {log}")


def cli(*args: str) -> None:
    from sedcontract.cli import main

    code = main(list(args))
    if code:
        sys.exit(f"failed ({code}): sedcontract {' '.join(args)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--out", type=Path, default=ROOT / "logs" / "reproduce")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh", action="store_true", help="retrain existing runs")
    parser.add_argument("--smoke", action="store_true", help="tiny data and one epoch")
    args = parser.parse_args(argv)
    start = time.time()
    data = [f"paths.data_dir={args.data}", f"data.seed={args.seed}"]  # the benchmark built
    if args.smoke:
        data += [f"data.sizes={SMOKE_SIZES}", "data.speech_source=synthetic",
                 "data.batch_size=2"]
    budget = ["trainer.max_epochs=1"] if args.smoke else []
    python = sys.executable

    step("1. the controlled benchmark")
    build = [python, "-m", "sedcontract.cli", "data", "build", "controlled", "--root",
             str(args.data), f"--seed={args.seed}"]
    if args.smoke:
        build += ["--train", "8", "--validation", "5", "--test", "6",
                  "--speech-source", "synthetic"]
    run(build, args.out / "logs" / "build.log")
    folder = args.data / "controlled"

    step("2-3. train every detector, evaluate on the test split")
    rows, predictions = [], {}
    for name in DETECTORS:
        run_dir = args.out / "runs" / name
        if args.fresh and run_dir.exists():
            shutil.rmtree(run_dir)
        if not (run_dir / "checkpoints" / "last.ckpt").exists():
            print(f"   training {name}", flush=True)
            run([python, "train.py", "experiment=contract_vs_baselines", f"model={name}",
                 f"seed={args.seed}", f"hydra.run.dir={run_dir}", *data, *budget],
                args.out / "logs" / f"train_{name}.log")
        test_dir = run_dir / "test"
        if not (test_dir / "test_report.csv").exists():
            print(f"   evaluating {name}", flush=True)
            kept = sorted((run_dir / "checkpoints").glob("epoch_*.ckpt")) or \
                [run_dir / "checkpoints" / "last.ckpt"]
            run([python, "evaluate.py", f"ckpt_path={kept[-1]}", "split=test",
                 f"hydra.run.dir={test_dir}", "trainer=cpu", *data],
                args.out / "logs" / f"evaluate_{name}.log")
        rows.append(str(test_dir / "test_report.csv"))
        predictions[name] = test_dir / "test_report_pred.tsv"

    step("4. select a contract under the shipped risk order")
    calibration = args.out / "calibration"
    if calibration.exists():
        shutil.rmtree(calibration)
    cli("data", "pathologies", "--ref", str(folder / "test.tsv"), "--durations",
        str(folder / "test_durations.tsv"), "--out", str(calibration))
    report = args.out / "report"
    report.mkdir(parents=True, exist_ok=True)
    cli("select", "--calibration", str(calibration), "--risk-order",
        str(ROOT / "src" / "sedcontract" / "examples" / "risk_order.yaml"),
        "--out", str(report / "selected.contract"), "--table", str(report / "selection.md"))

    step("5. the tolerance sweep")
    sweep = ["sweep", "--ref", str(folder / "test.tsv"), "--durations",
             str(folder / "test_durations.tsv"), "--eps", "0,50ms,...,500ms",
             "--out", str(args.out / "sweep.md"), "--csv", str(args.out / "sweep.csv"),
             "--figure", str(args.out / "sweep.png")]
    for name, path in predictions.items():
        sweep += ["--pred", f"{name}={path}"]
    cli(*sweep)

    step("6. the report, by perturbation family")
    families = args.out / "families.tsv"
    with open(folder / "test.jsonl") as f:
        items = [json.loads(line) for line in f]
    families.write_text("filename\tfamily\n" + "".join(
        f"{item['id']}\t{item['perturbation']['family']}\n" for item in items))
    epochs = sorted((args.out / "runs" / "contract_aware" / "timelines").glob("epoch_*"))
    extra = ["--timelines", str(epochs[-1])] if epochs else []
    cli("report", *rows, "--out", str(report / "tables"), "--groups", str(families),
        "--sweep", str(args.out / "sweep.csv"), *extra)
    minutes = (time.time() - start) / 60
    print(f"done in {minutes:.1f} min; open {report / 'tables' / 'report.html'}, then "
          f"{report / 'tables' / 'sweep.png'} and {report / 'selection.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(reported("reproduce", main))
