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
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from contract_losses import (
    ARMS,
    CONTROL,
    COORDINATES,
    MODES,
    RESULTS,
    ROOT,
    as_decided,
    benchmark,
    build,
    check_reused,
    commit,
    count_rows,
    diff_cell,
    interval_rows,
    parsed,
    per_seed,
    read_json,
    read_lock,
    run_dir,
    train_and_evaluate,
    training_seconds,
    tuned,
    where_options,
    write_lock,
)
from contract_vs_baselines import best_checkpoint, cell

from sedcontract.cli.command import reported

DEVELOPMENT = (0, 1)
HELDOUT = (5, 6, 7)
DEVELOPMENT_SEEDS = (0, 1)
HELDOUT_SEEDS = (0, 1, 2, 3, 4)
SHIPPED = "rise_boundary_frag"   # round 1's locked arm: the shipped configuration
EPOCHS = 5                       # of every run trained from scratch
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


def overrides_of(args: argparse.Namespace, data_seed: int, arm: Mapping[str, Any],
                 seed: int) -> list[str]:
    """Everything a run is trained with, but its folder and the data's (added by
    :func:`~contract_losses.train_overrides`)."""
    out = [*BASE[2:], *arm["overrides"]]
    if "epochs" in arm:
        source = best_checkpoint(run_dir(args, data_seed, CONTROL, seed))
        out += [f"model.init_from={source}", f"trainer.max_epochs={arm['epochs']}"]
    return out


def train_runs(args: argparse.Namespace, arms: Mapping[str, Mapping[str, Any]],
               data_seeds: Sequence[int], seeds: Sequence[int]) -> dict[str, int]:
    """Every run of the arms, BCE first (the fine-tunes start from it); runs found trained are
    checked against what their arm composes now and kept."""
    from contract_losses import train_overrides

    build(args, data_seeds)
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    order = sorted(arms, key=lambda a: "epochs" in arms[a])  # from scratch first
    trained, start, jobs = 0, time.time(), []
    for stage in (False, True):
        batch = [(d, a, s) for d in data_seeds for s in seeds for a in order
                 if ("epochs" in arms[a]) == stage]
        for d, a, s in batch:
            where = run_dir(args, d, a, s)
            if (where / "checkpoints" / "last.ckpt").exists():
                check_reused(where, train_overrides(args, d, overrides_of(args, d, arms[a], s),
                                                    s))

        def one(job: tuple[int, str, int]) -> bool:
            d, a, s = job
            return train_and_evaluate(args, d, a, overrides_of(args, d, arms[a], s), s,
                                      threads)

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(args.jobs) as pool:
            for job, fresh in zip(batch, pool.map(one, batch), strict=True):
                trained += fresh
                print(f"done {job} ({time.time() - start:.0f} s)", flush=True)
        jobs += batch
    seconds = sum(training_seconds(run_dir(args, d, a, s)) for d, a, s in jobs)
    return {"runs": len(jobs), "trained": trained, "training_s": round(seconds)}


# -- reading ------------------------------------------------------------------------------------
def split_files(args: argparse.Namespace, data_seed: int, split: str) -> tuple[Path, Path]:
    folder = benchmark(args, data_seed) / "controlled"
    return folder / f"{split}.tsv", folder / f"{split}_durations.tsv"


def material(args: argparse.Namespace, data_seed: int, where: Path, split: str,
             median_filter: float) -> Any:
    """One run's trade-off material on ``split`` (its saved scores after ``median_filter``)."""
    from sedcontract.analysis.tradeoff import grid_material
    from sedcontract.scores.psds.settings import PRESETS
    from sedcontract.traces.decision import DecisionPolicy
    from sedcontract.traces.score_files import read_score_dir
    from sedcontract.traces.tsv import read_durations, read_events

    ref, durations = split_files(args, data_seed, split)
    return grid_material(read_events(ref), read_score_dir(where / split / f"{split}_report_scores"),
                         read_durations(durations),
                         settings={k: PRESETS[k] for k in ("psds1", "psds2")},
                         decision=DecisionPolicy(median_filter=median_filter))


def operating_points(args: argparse.Namespace, arms: Sequence[str], data_seeds: Sequence[int],
                     seeds: Sequence[int], split: str
                     ) -> tuple[dict[tuple, Any], list[dict], list[dict]]:
    """Each run read at its operating point, as it decides and post-processed: the reports,
    the count rows and the post-processing chosen on validation."""
    reports: dict[tuple, Any] = {}
    rows: list[dict] = []
    choices: list[dict] = []
    for d, arm, s in itertools.product(data_seeds, arms, seeds):
        where = run_dir(args, d, arm, s)
        keys = {"benchmark": d, "system": arm, "seed": s}
        post, choice = tuned(args, d, where, split)
        for name, report in (("none", as_decided(args, d, where, split)), ("tuned", post)):
            reports.setdefault((d, arm, name), []).append(report)
            rows += count_rows(report, {**keys, "post": name})
        choices.append({**keys, **choice})
        print(f"read {d} {arm} {s}", flush=True)
    return reports, rows, choices


def _draws_task(task: tuple) -> tuple[tuple, list[str], np.ndarray, np.ndarray]:
    """One system's trade-off readings on one benchmark under one reading (a process of its
    own): the names, the point and the draws."""
    from sedcontract.analysis.tradeoff import seed_clip_readings

    key, args, d, arm, seeds, split, filters, resamples, draw_seed = task
    runs = [(lambda s=s, f=f: material(args, d, run_dir(args, d, arm, s), split, f))
            for s, f in zip(seeds, filters, strict=True)]
    names, points, draws = seed_clip_readings(runs, resamples=resamples, seed=draw_seed)
    return key, names, points, draws


def tradeoff(args: argparse.Namespace, arms: Sequence[str], data_seeds: Sequence[int],
             seeds: Sequence[int], split: str, choices: Sequence[Mapping[str, Any]],
             contrasts: Sequence[tuple[str, str]], resamples: int
             ) -> tuple[list[dict], list[dict], list[dict]]:
    """The trade-off readings: per run (``runs``), per system with its interval, and per
    contrast (system − control, the same draws), on each benchmark and pooled (the mean of the
    benchmarks' readings, benchmark ``k`` drawn from seed ``k``)."""
    from sedcontract.analysis.tradeoff import tradeoff_intervals

    filters = {(int(c["benchmark"]), c["system"], int(c["seed"])): float(c["median_filter"])
               for c in choices}
    tasks = []
    for k, d in enumerate(data_seeds):
        for arm, reading in itertools.product(arms, READINGS):
            used = [filters[(d, arm, s)] if reading == "tuned" else 0.0 for s in seeds]
            tasks.append(((d, arm, reading), args, d, arm, tuple(seeds), split, tuple(used),
                          resamples, k))
    found: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    names: list[str] = []
    run_rows = []  # each seed's own reading: what regenerating one run is compared with
    with ProcessPoolExecutor(args.jobs) as pool:
        for (d, arm, reading), names, points, draws in pool.map(_draws_task, tasks):
            found[(d, arm, reading)] = (points.mean(axis=0), draws)
            run_rows += reading_rows(d, arm, reading, seeds, names, points)
            print(f"trade-off {d} {arm} {reading}", flush=True)
    system_rows, contrast_rows = [], []
    places = [*map(str, data_seeds), "pooled"]
    for reading in READINGS:
        for arm in arms:
            parts = [found[(d, arm, reading)] for d in data_seeds]
            for where, (point, draws) in zip(places, [*parts, _pooled(parts)], strict=True):
                for n, iv in tradeoff_intervals(names, point, draws).items():
                    system_rows.append({"benchmark": where, "system": arm, "reading": reading,
                                        "quantity": n, **_interval(iv)})
        for system, control in contrasts:
            parts = [(found[(d, system, reading)][0] - found[(d, control, reading)][0],
                      found[(d, system, reading)][1] - found[(d, control, reading)][1])
                     for d in data_seeds]
            for where, (point, draws) in zip(places, [*parts, _pooled(parts)], strict=True):
                for n, iv in tradeoff_intervals(names, point, draws).items():
                    contrast_rows.append({"benchmark": where, "system": system,
                                          "control": control, "reading": reading,
                                          "quantity": n, **_interval(iv)})
    return run_rows, system_rows, contrast_rows


def reading_rows(data_seed: int, arm: str, reading: str, seeds: Sequence[int],
                 names: Sequence[str], points: np.ndarray) -> list[dict[str, Any]]:
    """Each seed's trade-off readings as source rows."""
    return [{"benchmark": data_seed, "system": arm, "seed": s, "reading": reading,
             "quantity": n, "value": f"{v:.6f}"}
            for s, values in zip(seeds, points, strict=True)
            for n, v in zip(names, values, strict=True)]


def _pooled(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The mean over benchmarks of their points and of their draws (a draw undefined in any
    benchmark is undefined)."""
    return (np.mean([p for p, _ in parts], axis=0), np.mean([d for _, d in parts], axis=0))


def _interval(iv: Any) -> dict[str, Any]:
    return {"point": f"{iv.point:.6f}", "lo": f"{iv.lo:.6f}", "hi": f"{iv.hi:.6f}",
            "defined": iv.defined, "resamples": iv.resamples}


# -- the rules of the lock ----------------------------------------------------------------------
def pooled_interval(rows: Sequence[Mapping[str, str]], system: str, control: str,
                    post: str = "tuned", coordinate: str = "logic") -> Mapping[str, str] | None:
    return next((r for r in rows if (r["benchmark"], r["system"], r["post"], r["control"],
                                     r["control_post"], r["mode"], r["coordinate"])
                 == ("pooled", system, post, control, post, "typed", coordinate)), None)


def rules(rows: Sequence[Mapping[str, str]], intervals: Sequence[Mapping[str, str]]
          ) -> dict[str, Any]:
    """The development round's choices by the written rules: ``k``, the candidate whose
    fine-tuned arm beats BCE continued for as long by the most typed logic with tuned
    post-processing (pooled over the development benchmarks' validation splits; the smaller
    ``k`` on a tie to 3 decimals); the targets arm kept when, pooled over the development
    validation splits as it decides (typed), every targeted coordinate reaches its target."""
    gains = {}
    for k in FINETUNE_EPOCHS:
        found = pooled_interval(intervals, f"finetuned_{k}", f"bce_continued_{k}")
        if found is None:
            raise SystemExit(f"the development intervals hold no finetuned_{k} − "
                             f"bce_continued_{k}: run develop first")
        gains[k] = round(float(found["point"]), 3)
    best = max(FINETUNE_EPOCHS, key=lambda k: (gains[k], -k))
    reached = {}
    for name, target in TARGETS.items():
        sat = sum(int(r["satisfied"]) for r in rows if (r["system"], r["post"], r["mode"],
                                                         r["coordinate"])
                  == ("contract_targets", "none", "typed", name))
        obl = sum(int(r["obligations"]) for r in rows if (r["system"], r["post"], r["mode"],
                                                          r["coordinate"])
                  == ("contract_targets", "none", "typed", name))
        reached[name] = {"score": round(sat / obl, 6) if obl else None, "target": target}
    keep = all(v["score"] is not None and v["score"] >= v["target"] for v in reached.values())
    return {"finetune_epochs": best, "finetune_gains": {str(k): v for k, v in gains.items()},
            "targets_kept": keep, "targets_reached": reached}


def choices_of(chosen: Mapping[str, Any]) -> dict[str, Any]:
    """Every choice the round-2 held-out table depends on."""
    from contract_losses import LOW_BELOW, MEDIAN, THRESHOLD

    from sedcontract.analysis.tradeoff import BUDGETS, GUARD, logit_grid

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


def lock_paths(out: Path) -> tuple[Path, Path]:
    return out / "round2_choices.json", out / "round2_lock.json"


def heldout_runs(args: argparse.Namespace) -> list[Path]:
    return sorted(p for d in HELDOUT for p in (args.runs / f"heldout_{d}").glob("*/seed_*")
                  if p.is_dir())


def lock(args: argparse.Namespace) -> None:
    """Apply the rules to the committed development rows and freeze the choices: refused over
    another lock, once a held-out run exists, and while the code has changes not committed."""
    choices_path, lock_path = lock_paths(args.out)
    if heldout_runs(args):
        raise SystemExit(f"held-out runs exist ({heldout_runs(args)[0]}): the lock must come "
                         "before any held-out run")
    for path in (choices_path, lock_path):
        if path.exists():
            raise SystemExit(f"{path} exists: the choices are locked already")
    head, dirty = commit()
    if dirty:
        raise SystemExit("scripts/ or src/ have changes not committed: commit the code that "
                         "makes the choices, so the lock names it")
    tables = read_tables(args.out, DEVELOPMENT_STEM)
    chosen = rules(tables["rows"], tables["intervals"])
    digest = write_lock(choices_path, lock_path, {**choices_of(chosen), "commit": head})
    print(f"locked: k = {chosen['finetune_epochs']}, targets arm "
          f"{'kept' if chosen['targets_kept'] else 'dropped'}; {choices_path} sha256 {digest}")


def locked(args: argparse.Namespace) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and they are the
    choices this script makes now from the same rules' outcome."""
    return read_lock(*lock_paths(args.out), lambda chosen: choices_of(chosen.get("rules") or {}),
                     "python scripts/contract_tradeoff.py lock")


# -- commands -----------------------------------------------------------------------------------
DEVELOPMENT_STEM = "contract_tradeoff_development"
HELDOUT_STEM = "contract_tradeoff"


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


def command_line(args: argparse.Namespace) -> str:
    return shlex.join(["python", "scripts/contract_tradeoff.py", *args.argv])


def read_all(args: argparse.Namespace, arms: Sequence[str], data_seeds: Sequence[int],
             seeds: Sequence[int], split: str, resamples: int, curve_resamples: int
             ) -> dict[str, list[dict]]:
    reports, rows, choices = operating_points(args, arms, data_seeds, seeds, split)
    pairs = contrasts_for(arms)
    intervals = interval_rows(reports, data_seeds, point_contrasts(pairs), resamples)
    run_rows, system_rows, contrast_rows = tradeoff(args, arms, data_seeds, seeds, split,
                                                    choices, pairs, curve_resamples)
    return {"rows": rows, "post": choices, "intervals": intervals, "runs": run_rows,
            "systems": system_rows, "contrasts": contrast_rows}


def develop(args: argparse.Namespace) -> None:
    from sedcontract.outputs import guard

    guard(writes=paths_of(args.out, DEVELOPMENT_STEM))
    arms = arms_of(FINETUNE_EPOCHS, targets=True)
    start = time.time()
    runs = train_runs(args, arms, DEVELOPMENT, DEVELOPMENT_SEEDS)
    if args.train_only:
        return
    tables = read_all(args, list(arms), DEVELOPMENT, DEVELOPMENT_SEEDS, "validation",
                      RESAMPLES, CURVE_RESAMPLES)
    meta = {"command": command_line(args), "split": "validation",
            "wall_s": round(time.time() - start), **runs, "commit": commit()[0],
            "kernels": kernels()}
    write_all(args.out, DEVELOPMENT_STEM, tables, meta)


def heldout(args: argparse.Namespace) -> None:
    from sedcontract.data.fetch import sha256_of
    from sedcontract.outputs import guard

    chosen = locked(args)
    guard(writes=paths_of(args.out, HELDOUT_STEM))
    rules_ = chosen["rules"]
    arms = arms_of([rules_["finetune_epochs"]], rules_["targets_kept"])
    start = time.time()
    runs = train_runs(args, arms, HELDOUT, HELDOUT_SEEDS)
    if args.train_only:
        return
    tables = read_all(args, list(arms), HELDOUT, HELDOUT_SEEDS, "test", chosen["resamples"],
                      chosen["curve_resamples"])
    meta = {"command": command_line(args), "split": "test", "wall_s": round(time.time() - start),
            **runs, "commit": commit()[0], "kernels": kernels(),
            "choices_sha256": sha256_of(lock_paths(args.out)[0])}
    write_all(args.out, HELDOUT_STEM, tables, meta)


def kernels() -> str:
    """The CPU kernels the runs were trained with, as ``reproducible=true`` pins them here."""
    import subprocess

    code = ("from sedcontract.kernels import fix_kernels; s = fix_kernels(True); "
            "print(s.describe() + ''.join('; ' + n for n in s.notes))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    return done.stdout.strip() or done.stderr.strip()[-300:]


def regenerate(args: argparse.Namespace) -> None:
    """One committed run trained again in a scratch folder, evaluated and read, and its rows
    compared with the committed ones, character for character."""
    d, arm, seed = args.benchmark, args.arm, args.seed
    committed = read_tables(args.out, HELDOUT_STEM if d in HELDOUT else DEVELOPMENT_STEM)
    split = "test" if d in HELDOUT else "validation"
    chosen = locked(args) if d in HELDOUT else {"rules": {"finetune_epochs": FINETUNE_EPOCHS[0],
                                                          "targets_kept": True}}
    arms = arms_of(FINETUNE_EPOCHS if d in DEVELOPMENT else
                   [chosen["rules"]["finetune_epochs"]],
                   d in DEVELOPMENT or chosen["rules"]["targets_kept"])
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
        _, rows, choices = operating_points(fresh, [arm], [d], [seed], split)
        choice = {(c["benchmark"], c["system"], c["seed"]): c for c in choices}
        filters = {"none": 0.0, "tuned": float(choice[(d, arm, seed)]["median_filter"])}
        from sedcontract.analysis.tradeoff import reading_names, readings

        run_rows = []
        for reading, f in filters.items():
            found = material(fresh, d, run_dir(fresh, d, arm, seed), split, f)
            values = readings(found, np.ones((1, len(found.clips))))
            run_rows += reading_rows(d, arm, reading, [seed], reading_names(found), values)
    mismatched = []
    for key, mine, columns in (("rows", rows, COLUMNS["rows"]), ("post", choices,
                                                                  COLUMNS["post"]),
                               ("runs", run_rows, COLUMNS["runs"])):
        ours = [{c: "" if r[c] is None else str(r[c]) for c in columns} for r in mine]
        theirs = [r for r in committed[key] if (r["benchmark"], r["system"], r["seed"])
                  == (str(d), arm, str(seed))]
        if ours != theirs:
            mismatched.append(f"{key}: {sum(a != b for a, b in zip(ours, theirs, strict=True))} "
                              "of "
                              f"{len(theirs)} rows differ" if len(ours) == len(theirs) else
                              f"{key}: {len(ours)} rows here, {len(theirs)} committed")
    took = time.time() - start
    if mismatched:
        raise SystemExit(f"benchmark {d}, {arm}, seed {seed}: " + "; ".join(mismatched))
    print(f"benchmark {d}, {arm}, seed {seed}: {len(rows)} count rows, {len(choices)} "
          f"post-processing choice and {len(run_rows)} trade-off readings equal the committed "
          f"ones, character for character ({took:.0f} s)")


# -- files --------------------------------------------------------------------------------------
COLUMNS = {
    "rows": ("benchmark", "system", "seed", "post", "mode", "coordinate", "satisfied",
             "obligations"),
    "post": ("benchmark", "system", "seed", "median_filter", "threshold", "low",
             "validation_logic"),
    "intervals": ("benchmark", "system", "post", "control", "control_post", "mode",
                  "coordinate", "point", "lo", "hi", "level", "defined", "resamples"),
    "runs": ("benchmark", "system", "seed", "reading", "quantity", "value"),
    "systems": ("benchmark", "system", "reading", "quantity", "point", "lo", "hi", "defined",
                "resamples"),
    "contrasts": ("benchmark", "system", "control", "reading", "quantity", "point", "lo", "hi",
                  "defined", "resamples"),
}


def paths_of(out: Path, stem: str) -> dict[str, Path]:
    return {**{k: out / f"{stem}_{k}.csv" for k in COLUMNS}, "meta": out / f"{stem}_run.json",
            "page": out / f"{stem}.md"}


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_all(out: Path, stem: str, tables: Mapping[str, list[dict]],
              meta: Mapping[str, Any]) -> None:
    """The source files and the page rendered from their text, put in place together."""
    from sedcontract.outputs import Outputs

    paths = paths_of(out, stem)
    texts = {k: csv_text(tables[k], COLUMNS[k]) for k in COLUMNS}
    texts["meta"] = json.dumps(meta, indent=2) + "\n"
    parsed = {k: list(csv.DictReader(io.StringIO(texts[k]))) for k in COLUMNS}
    page = render(parsed, meta)
    with Outputs(writes=paths) as staged:
        for key, text in texts.items():
            staged.write(paths[key], text)
        staged.write(paths["page"], page)
    print(page)


def read_tables(out: Path, stem: str) -> dict[str, list[dict[str, str]]]:
    from sedcontract.traces.csv_files import read_csv

    paths = paths_of(out, stem)
    found = {}
    for key, columns in COLUMNS.items():
        if not paths[key].is_file():
            raise SystemExit(f"{paths[key]} does not exist (the {key} of {stem}.md)")
        found[key] = [r for _, r in read_csv(paths[key], columns,
                                             f"the {key} of scripts/contract_tradeoff.py")]
    return found


def render_to(args: argparse.Namespace) -> None:
    from sedcontract.outputs import atomic_write

    stem = DEVELOPMENT_STEM if args.development else HELDOUT_STEM
    paths = paths_of(args.out, stem)
    tables = read_tables(args.out, stem)
    meta = read_json(paths["meta"], "the run's record")
    if not isinstance(meta.get("command"), str) or meta.get("split") not in ("validation",
                                                                              "test"):
        raise SystemExit(f"{paths['meta']}: the run's record (its command and split) is "
                         "missing or incomplete")
    text = render(tables, meta)
    atomic_write(paths["page"], text, inputs=[p for k, p in paths.items() if k != "page"])
    print(text)


# -- the page -----------------------------------------------------------------------------------
def label(system: str, post: str) -> str:
    return system if post == "none" else f"{system} + tuned post"


def render(tables: Mapping[str, list[dict[str, str]]], meta: Mapping[str, Any]) -> str:
    rows, choices = tables["rows"], tables["post"]
    benchmarks = list(dict.fromkeys(r["benchmark"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    seeds = sorted({int(r["seed"]) for r in rows})
    kind = "development" if meta["split"] == "validation" else "held-out"
    out = io.StringIO()
    out.write(
        f"# The contract losses over the whole trade-off and in fine-tuning: the {kind} "
        f"benchmarks ({meta['split']} splits)\n\n"
        f"Generated by `{meta['command']}` ({meta['wall_s'] / 60:.0f} minutes on this "
        f"machine's CPUs; it trained {meta['trained']} of its {meta['runs']} runs, "
        f"{meta['training_s'] / 60:.0f} minutes of training in all; commit "
        f"`{meta['commit'][:10]}`; {meta.get('kernels', 'kernels unknown')}) — do not edit; "
        "`python scripts/contract_tradeoff.py render"
        f"{' --development' if kind == 'development' else ''}` "
        "renders it again from the CSV files beside it. The protocol: "
        "[protocol.md](protocol.md#round-2). Benchmarks (data seeds): "
        f"{', '.join(benchmarks)}; training seeds {', '.join(map(str, seeds))}.\n")
    if kind == "development":
        out.write("\nEvery number here is on **validation** splits: the choices of round 2 are "
                  "made from it by the rules at its end; it makes no claim.\n")
    elif "choices_sha256" in meta:
        out.write(f"\nThe choices: [round2_choices.json](round2_choices.json) (sha256 "
                  f"`{meta['choices_sha256'][:16]}…`).\n")
    out.write(tradeoff_section(tables, systems))
    out.write(operating_point_section(tables, benchmarks, systems))
    out.write("\n## Post-processing chosen on validation\n\n| benchmark | system | seed | median "
              "filter (s) | threshold | hysteresis low | validation typed logic |\n"
              "|---|---|---|---|---|---|---|\n")
    for c in choices:
        low = "—" if c["low"] in ("", "None") else f"{float(c['low']):g}"
        out.write(f"| {c['benchmark']} | {c['system']} | {c['seed']} | "
                  f"{float(c['median_filter']):g} | {float(c['threshold']):g} | {low} | "
                  f"{float(c['validation_logic']):.3f} |\n")
    out.write("\n" + (rules_text(tables) if kind == "development" else goals_text(tables))
              + "\n")
    return out.getvalue()


QUANTITIES = ("area", "at_10", "at_30", "at_100")


def iv_cell(row: Mapping[str, str] | None, signed: bool = False) -> str:
    if row is None:
        return "—"
    if signed:
        return diff_cell(row)
    point, lo, hi = (float(row[k]) for k in ("point", "lo", "hi"))
    if math.isnan(point):
        return "—"
    return f"{point:.3f} [{lo:.3f}, {hi:.3f}]" if not math.isnan(lo) else f"{point:.3f}"


def tradeoff_section(tables: Mapping[str, list[dict[str, str]]], systems: Sequence[str]) -> str:
    systems_rows, contrasts = tables["systems"], tables["contrasts"]
    coords = list(dict.fromkeys(r["quantity"].split("/")[0] for r in systems_rows
                                if "/" in r["quantity"]))
    by = {(r["benchmark"], r["system"], r["reading"], r["quantity"]): r for r in systems_rows}
    diff = {(r["benchmark"], r["system"], r["control"], r["reading"], r["quantity"]): r
            for r in contrasts}
    resamples = systems_rows[0]["resamples"] if systems_rows else "0"
    out = io.StringIO()
    out.write(
        "\n## Over the whole trade-off\n\nEach run read at every threshold of a grid (1,201 "
        "thresholds uniform in logit from −15 to 15): each coordinate's score against the "
        "false-activity budget (the class's false events per hour, as PSDS counts them; the "
        "threshold lowered from the top until the budget is first exceeded), its **area** up "
        "to 100 false events per hour (the mean score over budgets 0 … 100) and its score **at** "
        "10, 30 and 100 per hour; PSDS1 and PSDS2 (DCASE's scenarios). Typed: the mean over "
        "classes. A system's value is the mean over its training seeds; in brackets the 95 % "
        f"interval of a two-stage bootstrap ({resamples} draws: training seeds, then clips "
        "within each, every curve formed again); pooled: the mean of the benchmarks, each "
        "drawn within itself. *As it decides*: the raw scores; *tuned*: after the median "
        "filter its post-processing chose on validation.\n")
    for reading, title in (("tuned", "with the tuned median filter"), ("none", "as it decides")):
        out.write(f"\n### Pooled, {title}: typed areas up to 100 false events per hour, PSDS\n\n"
                  "| system | " + " | ".join(coords) + " | PSDS1 | PSDS2 |\n|---|"
                  + "---|" * (len(coords) + 2) + "\n")
        for system in systems:
            cells = [iv_cell(by.get(("pooled", system, reading, f"{c}/typed/area")))
                     for c in coords]
            cells += [iv_cell(by.get(("pooled", system, reading, p))) for p in ("psds1",
                                                                                 "psds2")]
            out.write(f"| {system} | " + " | ".join(cells) + " |\n")
        pairs = list(dict.fromkeys((r["system"], r["control"]) for r in contrasts
                                   if r["reading"] == reading))
        out.write(f"\n### Differences, {title} (system − control, pooled; per benchmark "
                  "below)\n\n| system | control | " + " | ".join(
                      f"{c} area" for c in coords) + " | PSDS1 | PSDS2 |\n|---|---|"
                  + "---|" * (len(coords) + 2) + "\n")
        places = list(dict.fromkeys(r["benchmark"] for r in contrasts))
        for (system, control), where in itertools.product(pairs, ["pooled", *[
                p for p in places if p != "pooled"]]):
            cells = [iv_cell(diff.get((where, system, control, reading, f"{c}/typed/area")),
                             True) for c in coords]
            cells += [iv_cell(diff.get((where, system, control, reading, p)), True)
                      for p in ("psds1", "psds2")]
            name = system if where == "pooled" else f"{system} ({where})"
            out.write(f"| {name} | {control} | " + " | ".join(cells) + " |\n")
        out.write(f"\n### At matched false-activity budgets, {title} (typed; pooled)\n\n"
                  "| system | budget | " + " | ".join(coords) + " |\n|---|---|"
                  + "---|" * len(coords) + "\n")
        for system, budget in itertools.product(systems, (10, 30, 100)):
            cells = [iv_cell(by.get(("pooled", system, reading, f"{c}/typed/at_{budget}")))
                     for c in coords]
            out.write(f"| {system} | {budget}/h | " + " | ".join(cells) + " |\n")
        out.write(f"\n### Differences at matched budgets, {title} (typed; pooled)\n\n"
                  "| system | control | budget | " + " | ".join(coords) + " |\n|---|---|---|"
                  + "---|" * len(coords) + "\n")
        for (system, control), budget in itertools.product(pairs, (10, 30, 100)):
            cells = [iv_cell(diff.get(("pooled", system, control, reading,
                                       f"{c}/typed/at_{budget}")), True) for c in coords]
            out.write(f"| {system} | {control} | {budget}/h | " + " | ".join(cells) + " |\n")
        out.write(f"\n### Union trace, {title}: areas (pooled)\n\n| system | "
                  + " | ".join(coords) + " |\n|---|" + "---|" * len(coords) + "\n")
        for system in systems:
            cells = [iv_cell(by.get(("pooled", system, reading, f"{c}/union/area")))
                     for c in coords]
            out.write(f"| {system} | " + " | ".join(cells) + " |\n")
    return out.getvalue()


def operating_point_section(tables: Mapping[str, list[dict[str, str]]],
                            benchmarks: Sequence[str], systems: Sequence[str]) -> str:
    rows, intervals = tables["rows"], tables["intervals"]
    out = io.StringIO()
    out.write("\n## At the operating point\n\nAs it decides, and with the post-processing "
              "chosen on its own validation split (median filter × threshold × hysteresis, "
              "the best typed logic). Cells: mean ± sample standard deviation over training "
              "seeds. Differences: on the counts pooled over seeds and clips, with the 95 % "
              f"interval of the two-stage paired bootstrap "
              f"({intervals[0]['resamples'] if intervals else 0} draws); pooled: the mean of "
              "the benchmarks' differences. **↑**/**↓**: the interval excludes 0.\n")
    for mode in MODES:
        out.write(f"\n### {mode.capitalize()} guard vector, pooled over the benchmarks' seeds\n\n"
                  "| system | logic | " + " | ".join(COORDINATES) + " | event F1 | segment F1 "
                  "|\n|---|---|" + "---|" * (len(COORDINATES) + 2) + "\n")
        for system, post in itertools.product(systems, ("none", "tuned")):
            cells = []
            for c in ("logic", *COORDINATES):
                values = [v for b in benchmarks for v in per_seed(rows, b, system, post, mode,
                                                                  c)]
                cells.append(cell(values))
            for score in ("event_f1", "segment_f1"):
                values = [v for b in benchmarks for v in per_seed(rows, b, system, post,
                                                                  "scores", score)]
                cells.append(cell(values))
            out.write(f"| {label(system, post)} | " + " | ".join(cells) + " |\n")
        out.write(f"\n### Differences, {mode} (system − control)\n\n| benchmark | system | "
                  "control | logic | " + " | ".join(COORDINATES) + " | event F1 | segment F1 "
                  "|\n|---|---|---|" + "---|" * (len(COORDINATES) + 3) + "\n")
        contrasts = list(dict.fromkeys((r["system"], r["post"], r["control"], r["control_post"])
                                       for r in intervals))
        places = list(dict.fromkeys(r["benchmark"] for r in intervals))
        for (system, post, control, control_post), where in itertools.product(
                contrasts, ["pooled", *[p for p in places if p != "pooled"]]):
            found = {r["coordinate"]: r for r in intervals
                     if (r["system"], r["post"], r["control"], r["control_post"], r["mode"],
                         r["benchmark"]) == (system, post, control, control_post, mode, where)}
            if not found:
                continue
            cells = [diff_cell(found.get(c)) for c in ("logic", *COORDINATES, "event_f1",
                                                       "segment_f1")]
            name = f"**{where}**" if where == "pooled" else where
            out.write(f"| {name} | {label(system, post)} | {label(control, control_post)} | "
                      + " | ".join(cells) + " |\n")
    return out.getvalue()


def rules_text(tables: Mapping[str, list[dict[str, str]]]) -> str:
    chosen = rules(tables["rows"], tables["intervals"])
    reached = "; ".join(f"{k} {v['score']:.3f} (target {v['target']:g})"
                        if v["score"] is not None else f"{k} vacuous"
                        for k, v in chosen["targets_reached"].items())
    gains = "; ".join(f"k = {k}: {v:+.3f}" for k, v in chosen["finetune_gains"].items())
    return ("## The rules\n\n"
            "- **k**, the fine-tuning epochs: the candidate whose fine-tuned arm beats BCE "
            "continued for as long by the most typed logic with tuned post-processing, pooled "
            f"over the development validation splits (the smaller on a tie): {gains}. Chosen: "
            f"**k = {chosen['finetune_epochs']}**.\n"
            "- **The targets arm** goes to the held-out round if, pooled over the development "
            "validation splits as it decides (typed), every targeted coordinate reaches its "
            f"target: {reached}. **{'Kept' if chosen['targets_kept'] else 'Dropped'}.**\n\n"
            "`python scripts/contract_tradeoff.py lock` applies these rules to the committed "
            "rows and freezes the choices.")


def goals_text(tables: Mapping[str, list[dict[str, str]]]) -> str:
    diff = {(r["benchmark"], r["system"], r["control"], r["reading"], r["quantity"]): r
            for r in tables["contrasts"]}
    lines = ["## The goals (issue 49), pooled over the held-out benchmarks", ""]
    for reading, title in (("tuned", "with the tuned median filter"), ("none",
                                                                      "as it decides")):
        onset = diff.get(("pooled", "contract", CONTROL, reading, "onset/typed/area"))
        offset = diff.get(("pooled", "contract", CONTROL, reading, "offset/typed/area"))
        psds = diff.get(("pooled", "contract", CONTROL, reading, "psds1"))
        if onset is None or offset is None or psds is None:
            continue
        met = all(float(r["point"]) >= 0.02 and float(r["lo"]) > 0 for r in (onset, offset))
        lines += [f"- {title}: contract − BCE, onset area {diff_cell(onset)}, offset area "
                  f"{diff_cell(offset)} (≥ +0.02, interval above 0: "
                  f"{'met' if met else 'not met'}); PSDS1 {diff_cell(psds)} (lower end ≥ "
                  f"−0.01: {'met' if float(psds['lo']) >= -0.01 else 'not met'})."]
    finetuned = [r for r in tables["intervals"] if r["benchmark"] == "pooled"
                 and r["system"].startswith("finetuned_") and
                 r["control"].startswith("bce_continued_") and r["post"] == "tuned" and
                 r["mode"] == "typed" and r["coordinate"] == "logic"]
    for r in finetuned:
        met = float(r["point"]) >= 0 and float(r["lo"]) > 0
        lines.append(f"- {r['system']} − {r['control']}, typed logic with tuned "
                     f"post-processing: {diff_cell(r)} (≥ 0, interval above 0: "
                     f"{'met' if met else 'not met'}).")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    steps: dict[str, Callable[[argparse.Namespace], None]] = {
        "develop": develop, "lock": lock, "heldout": heldout, "render": render_to,
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
