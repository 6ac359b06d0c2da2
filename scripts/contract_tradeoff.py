"""The contract losses judged over the whole trade-off and in fine-tuning: round 2 of the
held-out protocol (docs/results/protocol.md#round-2), on benchmarks the project never used.

Every run is ``experiment=contract_vs_baselines model=contract_aware reproducible=true``; the
arms differ in the loss, or in what a trained BCE run gets for ``k`` more epochs:

- ``bce_only`` (BCE alone) and ``contract`` (the shipped contract loss), 5 epochs;
- ``contract_targets``: the shipped loss with targets on the coordinates it pays in (false
  activity, fragmentation), kept for the held-out round only if it reaches them on the
  development benchmarks;
- ``finetuned_k`` / ``bce_continued_k``: from each ``bce_only`` run's best checkpoint, ``k``
  more epochs with the contract loss / with BCE on the same schedule; ``k`` chosen on the
  development benchmarks.

Each run is read twice at its operating point (as it decides; with the post-processing chosen
on its validation split) and twice over the trade-off (as it decides; with its tuned median
filter, every threshold of a grid): each coordinate's false-activity budget area and its score
at 10, 30 and 100 false events per hour, PSDS1 and PSDS2, with seed × clip intervals
(:mod:`sedcontract.analysis.tradeoff`)::

    python scripts/contract_tradeoff.py develop --jobs 1   # data seeds 0, 1: validation only
    python scripts/contract_tradeoff.py lock               # the rules applied, the choice frozen
    python scripts/contract_tradeoff.py heldout --jobs 1   # data seeds 5–7, training seeds 0–4
    python scripts/contract_tradeoff.py render [--development]
    python scripts/contract_tradeoff.py regenerate 5 bce_only 0   # one run again, compared

The arms, the rules, the lock, the readings and the pages are the library's
(:mod:`sedcontract.experiments`); this script trains and evaluates the runs and calls it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from contract_losses import (
    RESULTS,
    ROOT,
    build,
    check_reused,
    parsed,
    say,
    train_and_evaluate,
    train_overrides,
    where_options,
)

from sedcontract.cli.command import reported
from sedcontract.experiments import tradeoff_files
from sedcontract.experiments.contract_losses import CONTROL
from sedcontract.experiments.locks import commit
from sedcontract.experiments.readings import read_runs
from sedcontract.experiments.runs import best_checkpoint, run_dir, training_seconds
from sedcontract.experiments.tradeoff import (
    BASE,
    CURVE_RESAMPLES,
    DEVELOPMENT,
    DEVELOPMENT_SEEDS,
    FINETUNE_EPOCHS,
    HELDOUT,
    HELDOUT_SEEDS,
    RESAMPLES,
    arms_of,
    round_arms,
)
from sedcontract.experiments.tradeoff_readings import read_all, run_reading_rows


def overrides_of(args: argparse.Namespace, data_seed: int, arm: Mapping[str, Any],
                 seed: int) -> list[str]:
    """Everything a run is trained with, but its folder and the data's (added by
    :func:`~contract_losses.train_overrides`)."""
    out = [*BASE[2:], *arm["overrides"]]
    if "epochs" in arm:
        source = best_checkpoint(run_dir(args.runs, data_seed, CONTROL, seed))
        out += [f"model.init_from={source}", f"trainer.max_epochs={arm['epochs']}"]
    return out


def train_runs(args: argparse.Namespace, arms: Mapping[str, Mapping[str, Any]],
               data_seeds: Sequence[int], seeds: Sequence[int]) -> dict[str, int]:
    """Every run of the arms, BCE first (the fine-tunes start from it); runs found trained are
    checked against what their arm composes now and kept."""
    build(args, data_seeds)
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    order = sorted(arms, key=lambda a: "epochs" in arms[a])  # from scratch first
    trained, start, jobs = 0, time.time(), []
    for stage in (False, True):
        batch = [(d, a, s) for d in data_seeds for s in seeds for a in order
                 if ("epochs" in arms[a]) == stage]
        for d, a, s in batch:
            where = run_dir(args.runs, d, a, s)
            if (where / "checkpoints" / "last.ckpt").exists():
                check_reused(where, train_overrides(args, d, overrides_of(args, d, arms[a], s),
                                                    s))

        def one(job: tuple[int, str, int]) -> bool:
            d, a, s = job
            return train_and_evaluate(args, d, a, overrides_of(args, d, arms[a], s), s,
                                      threads)

        with ThreadPoolExecutor(args.jobs) as pool:
            for job, fresh in zip(batch, pool.map(one, batch), strict=True):
                trained += fresh
                say(f"done {job} ({time.time() - start:.0f} s)")
        jobs += batch
    seconds = sum(training_seconds(run_dir(args.runs, d, a, s)) for d, a, s in jobs)
    return {"runs": len(jobs), "trained": trained, "training_s": round(seconds)}


# -- commands -----------------------------------------------------------------------------------
def command_line(args: argparse.Namespace) -> str:
    """The command as the page says it was run."""
    return shlex.join(["python", "scripts/contract_tradeoff.py", *args.argv])


def develop(args: argparse.Namespace) -> None:
    """Every candidate on the development benchmarks' validation splits, and their page."""
    from sedcontract.outputs import guard

    stem = tradeoff_files.DEVELOPMENT_STEM
    guard(writes=tradeoff_files.paths_of(args.out, stem))
    arms = arms_of(FINETUNE_EPOCHS, targets=True)
    start = time.time()
    runs = train_runs(args, arms, DEVELOPMENT, DEVELOPMENT_SEEDS)
    if args.train_only:
        return
    tables = read_all(args.data, args.runs, list(arms), DEVELOPMENT, DEVELOPMENT_SEEDS,
                      "validation", RESAMPLES, CURVE_RESAMPLES, jobs=args.jobs, log=say)
    meta = {"command": command_line(args), "split": "validation",
            "wall_s": round(time.time() - start), **runs, "commit": commit(ROOT)[0],
            "kernels": kernels()}
    print(tradeoff_files.write_all(args.out, stem, tables, meta))


def heldout(args: argparse.Namespace) -> None:
    """The locked arms on the held-out benchmarks' test splits, once, and their page."""
    from sedcontract.data.fetch import sha256_of
    from sedcontract.outputs import guard

    chosen = tradeoff_files.locked(args.out)
    stem = tradeoff_files.HELDOUT_STEM
    guard(writes=tradeoff_files.paths_of(args.out, stem))
    arms = arms_of([chosen["rules"]["finetune_epochs"]], chosen["rules"]["targets_kept"])
    start = time.time()
    runs = train_runs(args, arms, HELDOUT, HELDOUT_SEEDS)
    if args.train_only:
        return
    tables = read_all(args.data, args.runs, list(arms), HELDOUT, HELDOUT_SEEDS, "test",
                      chosen["resamples"], chosen["curve_resamples"], jobs=args.jobs, log=say)
    meta = {"command": command_line(args), "split": "test", "wall_s": round(time.time() - start),
            **runs, "commit": commit(ROOT)[0], "kernels": kernels(),
            "choices_sha256": sha256_of(tradeoff_files.lock_paths(args.out)[0])}
    print(tradeoff_files.write_all(args.out, stem, tables, meta))


def kernels() -> str:
    """The CPU kernels the runs were trained with, as ``reproducible=true`` pins them here."""
    code = ("from sedcontract.kernels import fix_kernels; s = fix_kernels(True); "
            "print(s.describe() + ''.join('; ' + n for n in s.notes))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    return done.stdout.strip() or done.stderr.strip()[-300:]


def lock(args: argparse.Namespace) -> None:
    """Apply the rules to the committed development rows and freeze the choices."""
    chosen, path, digest = tradeoff_files.lock(args.out, args.runs, lambda: commit(ROOT))
    print(f"locked: k = {chosen['finetune_epochs']}, targets arm "
          f"{'kept' if chosen['targets_kept'] else 'dropped'}; {path} sha256 {digest}")


def render(args: argparse.Namespace) -> None:
    """The page again from its source files."""
    print(tradeoff_files.render_to(args.out, tradeoff_files.DEVELOPMENT_STEM if args.development
                                   else tradeoff_files.HELDOUT_STEM))


def regenerate(args: argparse.Namespace) -> None:
    """One committed run trained again in a scratch folder, evaluated and read, and its rows
    compared with the committed ones, character for character."""
    d, arm, seed = args.benchmark, args.arm, args.seed
    committed = tradeoff_files.read_all_tables(args.out, tradeoff_files.stem_of(d))
    split = "test" if d in HELDOUT else "validation"
    arms = round_arms(d, tradeoff_files.locked(args.out) if d in HELDOUT else None)
    if arm not in arms:
        raise SystemExit(f"no arm {arm!r}; the round's arms are {', '.join(arms)}")
    start = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        fresh = argparse.Namespace(**{**vars(args), "runs": Path(scratch), "jobs": 1})
        build(fresh, [d])
        if "epochs" in arms[arm]:  # its source, as committed: trained here too
            train_and_evaluate(fresh, d, CONTROL, overrides_of(fresh, d, arms[CONTROL], seed),
                               seed, os.cpu_count() or 1)
        train_and_evaluate(fresh, d, arm, overrides_of(fresh, d, arms[arm], seed), seed,
                           os.cpu_count() or 1)
        _, rows, _, choices = read_runs(fresh.data, fresh.runs, [arm], {arm: arm}, [d], [seed],
                                        split, log=lambda line: say(f"read {line}"))
        filters = {"none": 0.0, "tuned": float(choices[0]["median_filter"])}
        run_rows = run_reading_rows(fresh.data, fresh.runs, d, arm, seed, split, filters)
    mismatched = tradeoff_files.mismatches(committed, {"rows": rows, "post": choices,
                                                       "runs": run_rows}, d, arm, seed)
    took = time.time() - start
    if mismatched:
        raise SystemExit(f"benchmark {d}, {arm}, seed {seed}: " + "; ".join(mismatched))
    print(f"benchmark {d}, {arm}, seed {seed}: {len(rows)} count rows, {len(choices)} "
          f"post-processing choice and {len(run_rows)} trade-off readings equal the committed "
          f"ones, character for character ({took:.0f} s)")


def main(argv: Sequence[str] | None = None) -> None:
    """The subcommands: develop, lock, heldout, render, regenerate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    steps: dict[str, Callable[[argparse.Namespace], None]] = {
        "develop": develop, "lock": lock, "heldout": heldout, "render": render,
        "regenerate": regenerate}
    helps = {"develop": "train and read the candidates on the development validation splits",
             "lock": "apply the rules to the development rows and freeze the choices",
             "heldout": "the held-out table, refused unless the choices are locked",
             "render": "the Markdown again from the CSV files",
             "regenerate": "train one committed run again and compare its rows"}
    for name, helptext in helps.items():
        sub = commands.add_parser(name, help=helptext)
        sub.add_argument("--out", type=Path, default=RESULTS, help="where the tables go")
        if name == "render":
            sub.add_argument("--development", action="store_true",
                             help="the development page instead of the held-out one")
            continue
        where_options(sub)
        if name == "regenerate":
            sub.add_argument("benchmark", type=int, help="its data seed")
            sub.add_argument("arm")
            sub.add_argument("seed", type=int, help="its training seed")
        if name in ("develop", "heldout"):
            sub.add_argument("--jobs", type=int, default=1,
                             help="runs trained, and systems read, at once")
            sub.add_argument("--train-only", action="store_true", help="train; write nothing")
    args = parsed(parser, argv)
    steps[args.command](args)


if __name__ == "__main__":
    sys.exit(reported("contract_tradeoff", main))
