"""The contract losses under the held-out protocol (docs/results/protocol.md): every choice on
the development benchmarks' validation splits, the table once on benchmarks no choice saw.

Every arm is ``experiment=contract_vs_baselines model=contract_aware`` (the dilated CNN trunk
under the boundary head, ``augment=perturb``, 5 epochs, the best checkpoint on validation
logic) with the same BCE; arms differ in the contract loss only. Each run is evaluated on the
validation and test splits with its scores saved; every arm is then read twice: as it decides
(no post-processing) and with the post-processing chosen on its own validation split (the
best typed logic over median filter × threshold × hysteresis).

1. ``develop``: the candidate arms on the development benchmarks (data seeds 0 and 1),
   scored on their **validation** splits only — the page the choice is made from
   (``contract_losses_development.md``).
2. ``lock ARM``: the choice frozen before any held-out run — the arms' overrides, the
   post-processing grid, the seeds — in ``heldout_choices.json``, its sha256 in
   ``heldout_lock.json``; refused once held-out runs exist (their results could be seen) and
   while the code has changes not committed.
3. ``heldout``: BCE and the locked arm on the held-out benchmarks (data seeds 2–4, training
   seeds 0–4), the test split; refused unless the choices file matches the lock's digest and
   the choices this script would make now. Rows, intervals (two-stage seed × clip bootstrap,
   per benchmark and stratified over them) and ``contract_losses.md``.
4. ``render``: the Markdown again from the committed rows.

Runs are deterministic (the run's ``threads``), so ``--jobs`` changes the wall time only::

    python scripts/contract_losses.py develop --jobs 1
    python scripts/contract_losses.py lock rise_boundary_frag
    python scripts/contract_losses.py heldout --jobs 1
    python scripts/contract_losses.py render

The arms, the lock, the readings, the intervals and the pages are the library's
(:mod:`sedcontract.experiments`); this script trains and evaluates the runs and calls it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from contract_vs_baselines import run

from sedcontract.cli.command import reported
from sedcontract.experiments import losses_files
from sedcontract.experiments.contract_losses import (
    ARMS,
    BASE,
    CONTRASTS,
    CONTROL,
    DEVELOPMENT,
    DEVELOPMENT_SEEDS,
    HELDOUT,
    HELDOUT_SEEDS,
    RESAMPLES,
    contrasts_of,
)
from sedcontract.experiments.intervals import interval_rows
from sedcontract.experiments.locks import commit
from sedcontract.experiments.readings import read_runs
from sedcontract.experiments.runs import (
    benchmark,
    best_checkpoint,
    check_trained_as,
    role,
    run_dir,
    training_seconds,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"


def say(line: str) -> None:
    """A progress line, at once."""
    print(line, flush=True)


# -- runs ---------------------------------------------------------------------------------------
def build(args: argparse.Namespace, data_seeds: Iterable[int]) -> None:
    """Build each benchmark once, one at a time, before runs that read it start at once."""
    from sedcontract.data.build import build_controlled

    for data_seed in data_seeds:
        build_controlled(benchmark(args.data, data_seed), seed=data_seed, log=lambda _: None)


def data_overrides(args: argparse.Namespace, data_seed: int) -> list[str]:
    """The overrides that point a run at one benchmark."""
    return [f"paths.data_dir={benchmark(args.data, data_seed)}", f"data.seed={data_seed}"]


def train_overrides(args: argparse.Namespace, data_seed: int, overrides: Sequence[str],
                    seed: int) -> list[str]:
    """Everything a run of one arm is trained with (but its folder)."""
    return [*BASE, f"seed={seed}", *data_overrides(args, data_seed), *overrides,
            *getattr(args, "overrides", [])]


def composed(overrides: Sequence[str]) -> dict[str, Any]:
    """The training config these overrides compose (not resolved)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    with initialize_config_module("sedcontract.configs", version_base="1.3"):
        cfg = compose("train", overrides=list(overrides))
    GlobalHydra.instance().clear()
    return OmegaConf.to_container(cfg, resolve=False)


def check_reused(where: Path, overrides: Sequence[str]) -> None:
    """Refuse a run found trained whose saved config is not what this arm composes now (so
    a table never mixes runs trained otherwise), or whose training did not finish."""
    from omegaconf import OmegaConf

    saved = where / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise SystemExit(f"{where} has a checkpoint but no .hydra/config.yaml: how it was "
                         "trained cannot be checked; remove the run to train it again")
    check_trained_as(where, OmegaConf.to_container(OmegaConf.load(saved), resolve=False),
                     composed(overrides))


def train_and_evaluate(args: argparse.Namespace, data_seed: int, arm: str,
                       overrides: Sequence[str], seed: int, threads: int) -> bool:
    """One run: train (unless its checkpoint exists), then evaluate the best checkpoint on the
    validation and test splits with the scores saved; whether it was trained here."""
    python = sys.executable
    where = run_dir(args.runs, data_seed, arm, seed)
    trained = not (where / "checkpoints" / "last.ckpt").exists()
    if trained:
        run([python, "train.py", f"hydra.run.dir={where}",
             *train_overrides(args, data_seed, overrides, seed)],
            where.parent / f"seed_{seed}.train.log", threads)
    for split in ("validation", "test"):
        out = where / split
        if not (out / f"{split}_report.csv").exists():
            run([python, "evaluate.py", f"ckpt_path={best_checkpoint(where)}", f"split={split}",
                 f"hydra.run.dir={out}", "save_scores=true", *data_overrides(args, data_seed),
                 *getattr(args, "overrides", [])],
                where.parent / f"seed_{seed}.{split}.log", threads)
    return trained


def train_all(args: argparse.Namespace, arms: Mapping[str, Sequence[str]],
              data_seeds: Sequence[int], seeds: Sequence[int]) -> dict[str, int]:
    """Every run of the arms on the benchmarks; how many there are and how many were trained
    here (the others were found trained)."""
    build(args, data_seeds)
    jobs = [(d, name, arms[name], s) for d in data_seeds for s in seeds for name in arms]
    for d, name, overrides, s in jobs:  # before any training: a stale run stops the call
        where = run_dir(args.runs, d, name, s)
        if (where / "checkpoints" / "last.ckpt").exists():
            check_reused(where, train_overrides(args, d, overrides, s))
    # the environment's threads share the cores among the jobs; each run fixes torch's own
    # (the config's `threads`), so the rows do not depend on --jobs
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    start, trained = time.time(), 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for job, fresh in zip(jobs, pool.map(lambda job: train_and_evaluate(args, *job, threads),
                                             jobs), strict=True):
            trained += fresh
            say(f"done {role(job[0])} {job[0]} {job[1]} seed {job[3]} "
                f"({time.time() - start:.0f} s)")
    training = sum(training_seconds(run_dir(args.runs, d, name, s)) for d, name, _, s in jobs)
    return {"runs": len(jobs), "trained": trained, "training_s": round(training)}


# -- commands -----------------------------------------------------------------------------------
def command_line(args: argparse.Namespace) -> str:
    """The command as the page says it was run."""
    return shlex.join(["python", "scripts/contract_losses.py", *args.argv])


def collect(args: argparse.Namespace, arms: Sequence[str], names: Mapping[str, str],
            data_seeds: Sequence[int], seeds: Sequence[int], split: str
            ) -> tuple[dict[tuple, Any], dict[str, list[dict]]]:
    """Every run's reports on ``split`` and the page's tables but its intervals."""
    reports, rows, psds_rows, choices = read_runs(
        args.data, args.runs, arms, names, data_seeds, seeds, split, with_psds=True,
        log=lambda line: say(f"collected {line}"))
    return reports, {"rows": rows, "psds": psds_rows, "post": choices}


def develop(args: argparse.Namespace) -> None:
    """The candidates on the development benchmarks' validation splits."""
    from sedcontract.outputs import guard
    from sedcontract.resampling import resampling

    resampling(args.resamples, 0, 0.95, 1)  # refused now, not after hours of training
    guard(writes=losses_files.paths_of(args.out, losses_files.DEVELOPMENT_STEM))
    arms = {name: ARMS[name] for name in dict.fromkeys([CONTROL, *args.arms])}
    start = time.time()
    runs = train_all(args, arms, DEVELOPMENT, DEVELOPMENT_SEEDS)
    if args.train_only:
        return
    reports, tables = collect(args, list(arms), {a: a for a in arms}, DEVELOPMENT,
                              DEVELOPMENT_SEEDS, "validation")
    contrasts = [c for name in arms if name != CONTROL for c in contrasts_of(name)]
    tables["intervals"] = interval_rows(reports, DEVELOPMENT, contrasts, args.resamples)
    meta = {"command": command_line(args), "split": "validation",
            "wall_s": round(time.time() - start), **runs, "commit": commit(ROOT)[0]}
    print(losses_files.write_all(args.out, losses_files.DEVELOPMENT_STEM, tables, meta))


def heldout(args: argparse.Namespace) -> None:
    """BCE and the locked arm on the held-out benchmarks' test splits, once: nothing but the
    locked choices (no overrides, the locked resamples)."""
    from sedcontract.data.fetch import sha256_of
    from sedcontract.outputs import guard

    chosen = losses_files.locked(args.out)
    guard(writes=losses_files.paths_of(args.out, losses_files.HELDOUT_STEM))
    name = chosen["contract"]["name"]
    arms = {CONTROL: chosen["control"]["overrides"], name: chosen["contract"]["overrides"]}
    start = time.time()
    runs = train_all(args, arms, HELDOUT, HELDOUT_SEEDS)
    if args.train_only:
        return
    reports, tables = collect(args, list(arms), {CONTROL: CONTROL, name: "contract"},
                              HELDOUT, HELDOUT_SEEDS, "test")
    tables["intervals"] = interval_rows(reports, HELDOUT, CONTRASTS, chosen["resamples"],
                                        chosen["level"])
    meta = {"command": command_line(args), "split": "test", "contract": name,
            "wall_s": round(time.time() - start), **runs, "commit": commit(ROOT)[0],
            "choices_sha256": sha256_of(losses_files.lock_paths(args.out)[0])}
    print(losses_files.write_all(args.out, losses_files.HELDOUT_STEM, tables, meta))


def lock(args: argparse.Namespace) -> None:
    """Freeze the choices before any held-out run (refused as the library says)."""
    path, digest = losses_files.lock(args.out, args.runs, args.arm, lambda: commit(ROOT))
    print(f"locked {args.arm}: {path} sha256 {digest}")


def render(args: argparse.Namespace) -> None:
    """The page again from its source files."""
    print(losses_files.render_to(args.out, losses_files.DEVELOPMENT_STEM if args.development
                                 else losses_files.HELDOUT_STEM))


def main(argv: Sequence[str] | None = None) -> None:
    """The subcommands: develop, lock, heldout, render."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    steps: dict[str, Callable[[argparse.Namespace], None]] = {}
    for name, step, helptext in (
            ("develop", develop, "train and score the candidates on the development "
                                 "benchmarks' validation splits"),
            ("lock", lock, "freeze the choices before any held-out run"),
            ("heldout", heldout, "the held-out table, refused unless the choices are locked"),
            ("render", render, "the Markdown again from the CSV files")):
        sub = commands.add_parser(name, help=helptext)
        steps[name] = step
        sub.add_argument("--out", type=Path, default=RESULTS, help="where the tables go")
        if name == "render":
            sub.add_argument("--development", action="store_true",
                             help="the development page instead of the held-out one")
            continue
        where_options(sub)
        if name == "lock":
            sub.add_argument("arm", help="the contract arm chosen on development data")
            continue
        sub.add_argument("--jobs", type=int, default=1, help="runs trained at once")
        sub.add_argument("--train-only", action="store_true", help="train; write no tables")
        if name == "develop":  # held-out runs take the locked choices and nothing else
            sub.add_argument("--resamples", type=int, default=RESAMPLES)
            sub.add_argument("--arms", nargs="+", default=[a for a in ARMS if a != CONTROL],
                             choices=[a for a in ARMS if a != CONTROL])
            sub.add_argument("overrides", nargs="*", help="Hydra overrides for every run")
    args = parsed(parser, argv)
    steps[args.command](args)


def where_options(sub: argparse.ArgumentParser) -> None:
    """``--runs`` and ``--data``: where the runs and the benchmarks go."""
    sub.add_argument("--runs", type=Path, default=ROOT / "logs" / "contract_losses")
    sub.add_argument("--data", type=Path, default=Path(os.environ.get(
        "SEDCONTRACT_DATA", ROOT / "data")) / "bench",
        help="benchmarks go to DATA/seed_N (default: data/bench)")


def parsed(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments, with the command line kept (``argv``) and the paths made absolute."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    for key in ("out", "runs", "data"):
        if hasattr(args, key):
            setattr(args, key, getattr(args, key).resolve())
    if getattr(args, "jobs", 1) < 1:
        parser.error("--jobs must be at least 1")
    return args


if __name__ == "__main__":
    sys.exit(reported("contract_losses", main))
