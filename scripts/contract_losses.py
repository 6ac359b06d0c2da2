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
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import itertools
import json
import math
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from contract_vs_baselines import (  # the same rules and cells
    best_checkpoint,
    cell,
    check_finished,
    run,
)

from sedcontract.cli.command import reported

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
CLASSES = ("speech", "tone", "burst")
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")
MODES = ("typed", "union")
SCORES = ("event_f1", "segment_f1")
DEVELOPMENT = (0, 1)         # data seeds every choice is made on (validation splits)
HELDOUT = (2, 3, 4)          # data seeds used once, for the final table
DEVELOPMENT_SEEDS = (0, 1)   # training seeds of the development runs
HELDOUT_SEEDS = (0, 1, 2, 3, 4)
RESAMPLES = 10_000
BASE = ["experiment=contract_vs_baselines", "model=contract_aware"]
CONTROL = "bce_only"
RISE = ["loss.contract.events=expected", "loss.contract.relaxation={onset: rise, offset: rise}"]


def _only(*clauses: str, weight: float = 0.3) -> list[str]:
    """λ and every clause weight of the standard contract pinned: ``clauses`` 1, the others 0
    (not trained), so an arm means the same whatever the config's defaults become."""
    return [f"loss.contract.weight={weight}"] + [
        f"loss.contract.weights.{c}={1.0 if c in clauses else 0.0}" for c in COORDINATES]


ARMS: dict[str, list[str]] = {  # name → overrides on BASE: the candidates
    CONTROL: ["loss.contract.weight=0.0"],
    "rise": [*RISE, *_only(*COORDINATES)],          # the default before the protocol
    "rise_w1": [*RISE, *_only(*COORDINATES, weight=1.0)],
    "rise_boundary": [*RISE, *_only("onset", "offset")],  # the boundary clauses only
    "rise_boundary_w1": [*RISE, *_only("onset", "offset", weight=1.0)],
    "rise_boundary_frag": [*RISE, *_only("onset", "offset", "fragmentation")],
    # the witness before rise, on the boundary clauses only
    "noisy_or_boundary": ["loss.contract.events=expected",
                          "loss.contract.relaxation={onset: noisy_or, offset: noisy_or}",
                          *_only("onset", "offset")],
}
# post-processing, chosen per arm and training seed on validation: median filter (s) ×
# threshold × hysteresis (off, or low = threshold − 0.2)
MEDIAN = (0.0, 0.06, 0.12, 0.2)
THRESHOLD = (0.3, 0.4, 0.5, 0.6, 0.7)
LOW_BELOW = (None, 0.2)
POSTS = ("none", "tuned")


# -- runs ---------------------------------------------------------------------------------------
def benchmark(args: argparse.Namespace, data_seed: int) -> Path:
    """The data root of one benchmark (``paths.data_dir``); its files in ``controlled/``."""
    return args.data / f"seed_{data_seed}"


# data seeds held out by the later rounds of the protocol (scripts/contract_tradeoff.py)
LATER_HELDOUT = (5, 6, 7)


def role(data_seed: int) -> str:
    if data_seed in DEVELOPMENT:
        return "development"
    if data_seed in HELDOUT or data_seed in LATER_HELDOUT:
        return "heldout"
    raise SystemExit(f"data seed {data_seed} is neither development {list(DEVELOPMENT)} nor "
                     f"held out {list(HELDOUT + LATER_HELDOUT)} (docs/results/protocol.md)")


def run_dir(args: argparse.Namespace, data_seed: int, arm: str, seed: int) -> Path:
    return args.runs / f"{role(data_seed)}_{data_seed}" / arm / f"seed_{seed}"


def build(args: argparse.Namespace, data_seeds: Iterable[int]) -> None:
    """Build each benchmark once, one at a time, before runs that read it start at once."""
    from sedcontract.data.build import build_controlled

    for data_seed in data_seeds:
        build_controlled(benchmark(args, data_seed), seed=data_seed, log=lambda _: None)


def data_overrides(args: argparse.Namespace, data_seed: int) -> list[str]:
    return [f"paths.data_dir={benchmark(args, data_seed)}", f"data.seed={data_seed}"]


def train_overrides(args: argparse.Namespace, data_seed: int, overrides: Sequence[str],
                    seed: int) -> list[str]:
    """Everything a run of one arm is trained with (but its folder)."""
    return [*BASE, f"seed={seed}", *data_overrides(args, data_seed), *overrides,
            *getattr(args, "overrides", [])]


# what decides the weights a run trains; the saved config of a run found trained must agree
TRAINED_BY = ("model", "loss", "augment", "trainer", "data", "contract", "seed", "threads",
              "reproducible")


def effective(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a composed config that decide what a run trains. With λ = 0 the contract
    loss adds 0 × its value to the total, so its other settings are left out."""
    out = {key: cfg.get(key) for key in TRAINED_BY}
    contract = (out.get("loss") or {}).get("contract")
    if isinstance(contract, Mapping) and contract.get("weight") == 0:
        out["loss"] = {**out["loss"], "contract": {"weight": contract["weight"]}}
    return out


def composed(overrides: Sequence[str]) -> dict[str, Any]:
    """:func:`effective` of the training config these overrides compose (not resolved)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    with initialize_config_module("sedcontract.configs", version_base="1.3"):
        cfg = compose("train", overrides=list(overrides))
    GlobalHydra.instance().clear()
    return effective(OmegaConf.to_container(cfg, resolve=False))


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


def check_reused(where: Path, overrides: Sequence[str]) -> None:
    """Refuse a run found trained whose saved config is not what this arm composes now (so
    a table never mixes runs trained otherwise), or whose training did not finish."""
    from omegaconf import OmegaConf

    saved = where / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise SystemExit(f"{where} has a checkpoint but no .hydra/config.yaml: how it was "
                         "trained cannot be checked; remove the run to train it again")
    found = first_difference(effective(OmegaConf.to_container(OmegaConf.load(saved),
                                                              resolve=False)),
                             composed(overrides))
    if found:
        raise SystemExit(f"{where} was trained with other settings ({found}); remove the run "
                         "to train it again, or give the arm its old settings")
    check_finished(where)


def training_seconds(where: Path) -> float:
    """How long a run trained: from its saved config to its log's closing line (file times;
    ``last.ckpt`` is the best epoch's copy, written before the last epoch when that is worse)."""
    return (where / "train.log").stat().st_mtime - \
        (where / ".hydra" / "config.yaml").stat().st_mtime


def train_and_evaluate(args: argparse.Namespace, data_seed: int, arm: str,
                       overrides: Sequence[str], seed: int, threads: int) -> bool:
    """One run: train (unless its checkpoint exists), then evaluate the best checkpoint on the
    validation and test splits with the scores saved; whether it was trained here."""
    python = sys.executable
    where = run_dir(args, data_seed, arm, seed)
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
        where = run_dir(args, d, name, s)
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
            print(f"done {role(job[0])} {job[0]} {job[1]} seed {job[3]} "
                  f"({time.time() - start:.0f} s)", flush=True)
    training = sum(training_seconds(run_dir(args, d, name, s)) for d, name, _, s in jobs)
    return {"runs": len(jobs), "trained": trained, "training_s": round(training)}


# -- reports ------------------------------------------------------------------------------------
def audited(args: argparse.Namespace, data_seed: int, pred: object, split: str) -> Any:
    """The guard report, with the standard scores, of predicted events (a tsv path or an
    EventList) on one benchmark's split."""
    from sedcontract.guard import AuditPolicy, ScoreSettings, audit

    folder = benchmark(args, data_seed) / "controlled"
    return audit(folder / f"{split}.tsv", pred, AuditPolicy(scores=ScoreSettings()),
                 durations=folder / f"{split}_durations.tsv", classes=list(CLASSES))


def tuned(args: argparse.Namespace, data_seed: int, where: Path, split: str
          ) -> tuple[Any, dict[str, Any]]:
    """The run's report on ``split`` under the decision with the best validation typed logic
    on the grid (the first best, in grid order), and that choice."""
    from sedcontract.traces.score_files import DecisionPolicy, read_score_dir, tables_to_events

    tables: dict[str, Any] = {}  # each split's score files, read once for the whole grid

    def events(name: str, decision: DecisionPolicy) -> Any:
        folder = where / name / f"{name}_report_scores"
        if name not in tables:
            tables[name] = read_score_dir(folder)
        return tables_to_events(tables[name], decision, folder)

    best: tuple[float, DecisionPolicy] | None = None
    for median, threshold, below in itertools.product(MEDIAN, THRESHOLD, LOW_BELOW):
        low = None if below is None else round(threshold - below, 6)
        decision = DecisionPolicy(threshold=threshold, median_filter=median, low=low)
        logic = audited(args, data_seed, events("validation", decision), "validation").logic(
            "typed")
        if not math.isnan(logic) and (best is None or logic > best[0] + 1e-12):
            best = (logic, decision)  # the first best in grid order
    if best is None:
        raise SystemExit(f"{where}: every decision on the grid leaves the validation split's "
                         "typed logic vacuous")
    logic, decision = best
    report = audited(args, data_seed, events(split, decision), split)
    return report, {"median_filter": decision.median_filter, "threshold": decision.threshold,
                    "low": decision.low, "validation_logic": round(logic, 6)}


def as_decided(args: argparse.Namespace, data_seed: int, where: Path, split: str) -> Any:
    """The run's report on ``split`` as it decides (the checkpoint's own decision), checked
    against the vector evaluate.py reported."""
    folder = where / split
    report = audited(args, data_seed, folder / f"{split}_report_pred.tsv", split)
    stored = json.loads((folder / f"{split}_report.json").read_text())
    for mode in MODES:
        mine, theirs = report.logic(mode), stored["modes"][mode]["logic"]
        if not math.isclose(mine, theirs, abs_tol=1e-9):
            raise SystemExit(f"{folder}: re-audited {mode} logic {mine} differs from the "
                             f"reported {theirs}")
    return report


def psds1(args: argparse.Namespace, data_seed: int, where: Path, split: str) -> float:
    """PSDS1 (DCASE's scenario 1, sed_scores_eval's rule) of the run's saved scores."""
    from sedcontract.scores.psds.request import psds
    from sedcontract.scores.psds.settings import PRESETS
    from sedcontract.traces.tsv import read_durations, read_events

    folder = benchmark(args, data_seed) / "controlled"
    result = psds(where / split / f"{split}_report_scores", read_events(folder / f"{split}.tsv"),
                  read_durations(folder / f"{split}_durations.tsv"),
                  {"psds1": PRESETS["psds1"]})
    return float(result["psds1"]["value"])


def count_rows(report: Any, keys: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The guard vector's counts, typed and union, and the standard scores' F1 parts
    (``2·tp`` and ``references + outputs``): the source rows of a run."""
    rows = []
    for mode in MODES:
        cells = report.modes[mode]
        for coordinate in COORDINATES:
            rows.append({**keys, "mode": mode, "coordinate": coordinate,
                         "satisfied": int(cells.satisfied[coordinate].sum()),
                         "obligations": int(cells.obligations[coordinate].sum())})
    for score in SCORES:
        counts = report.scores[score.removesuffix("_f1")].overall
        # F1 = 2·tp / (references + outputs), vacuous (0 / 0) without references
        rows.append({**keys, "mode": "scores", "coordinate": score,
                     "satisfied": 2 * int(counts.tp),
                     "obligations": int(counts.ref + counts.sys) if counts.ref else 0})
    return rows


def collect(args: argparse.Namespace, arms: Sequence[str], names: Mapping[str, str],
            data_seeds: Sequence[int], seeds: Sequence[int], split: str
            ) -> tuple[dict[tuple, Any], list[dict], list[dict], list[dict]]:
    """Every run's reports (none and tuned) on ``split``: ``{(data seed, system, post): [report
    per seed]}``, the count rows, the PSDS rows and the post-processing choices. ``names`` maps
    an arm to its name in the rows."""
    reports: dict[tuple, Any] = {}
    rows: list[dict] = []
    psds_rows: list[dict] = []
    choices: list[dict] = []
    for data_seed, arm, seed in itertools.product(data_seeds, arms, seeds):
        where = run_dir(args, data_seed, arm, seed)
        system = names[arm]
        keys = {"benchmark": data_seed, "system": system, "seed": seed}
        decided = as_decided(args, data_seed, where, split)
        post, choice = tuned(args, data_seed, where, split)
        for name, report in (("none", decided), ("tuned", post)):
            reports.setdefault((data_seed, system, name), []).append(report)
            rows += count_rows(report, {**keys, "post": name})
        choices.append({**keys, **choice})
        psds_rows.append({**keys, "psds1": f"{psds1(args, data_seed, where, split):.6f}"})
        print(f"collected {data_seed} {system} {seed}", flush=True)
    return reports, rows, psds_rows, choices


def interval_rows(reports: Mapping[tuple, Any], data_seeds: Sequence[int],
                  contrasts: Iterable[tuple[str, str, str, str]], resamples: int,
                  level: float = 0.95) -> list[dict]:
    """Per contrast and mode, the two-stage (seed, clip) interval on each benchmark (the k-th
    drawn from seed k) and the stratified one pooled over them, the mean of the benchmarks'
    differences (stratum k drawn from seed k too: the same draws)."""
    from sedcontract.guard import hierarchical_bootstrap, stratified_bootstrap

    out = []
    for system, post, control, control_post in contrasts:
        pairs = [(reports[(d, system, post)], reports[(d, control, control_post)])
                 for d in data_seeds]
        for mode in MODES:
            found = {str(d): hierarchical_bootstrap(a, b, mode=mode, resamples=resamples,
                                                    seed=k, level=level)
                     for k, (d, (a, b)) in enumerate(zip(data_seeds, pairs, strict=True))}
            if len(pairs) > 1:
                found["pooled"] = stratified_bootstrap(pairs, mode=mode, resamples=resamples,
                                                       seed=0, level=level)
            for where, intervals in found.items():
                for coordinate, iv in intervals.items():
                    out.append({"benchmark": where, "system": system, "post": post,
                                "control": control, "control_post": control_post,
                                "mode": mode, "coordinate": coordinate,
                                "point": f"{iv.point:.6f}", "lo": f"{iv.lo:.6f}",
                                "hi": f"{iv.hi:.6f}", "level": iv.level,
                                "defined": iv.defined, "resamples": iv.resamples})
    return out


# -- the lock -----------------------------------------------------------------------------------
def choices_now(arm: str) -> dict[str, Any]:
    """Every choice the held-out table depends on, as this script would make it now."""
    if arm not in ARMS or arm == CONTROL:
        raise SystemExit(f"no contract arm {arm!r}; the candidates are "
                         f"{', '.join(a for a in ARMS if a != CONTROL)}")
    return {"protocol": "docs/results/protocol.md", "base": BASE,
            "control": {"name": CONTROL, "overrides": ARMS[CONTROL]},
            "contract": {"name": arm, "overrides": ARMS[arm]},
            "post_grid": {"median_filter": list(MEDIAN), "threshold": list(THRESHOLD),
                          "low_below": list(LOW_BELOW), "chosen_by": "validation typed logic"},
            "development": list(DEVELOPMENT), "heldout": list(HELDOUT),
            "training_seeds": list(HELDOUT_SEEDS), "resamples": RESAMPLES, "level": 0.95}


def lock_paths(out: Path) -> tuple[Path, Path]:
    """The choices file and the lock holding its digest."""
    return out / "heldout_choices.json", out / "heldout_lock.json"


def commit() -> tuple[str, bool]:
    """HEAD and whether the code that makes the choices (``scripts/``, ``src/``: the configs
    are ``src/sedcontract/configs``) has changes not committed."""
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"git {' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--", "scripts", "src"))


def heldout_runs(args: argparse.Namespace) -> list[Path]:
    return sorted(p for d in HELDOUT for p in (args.runs / f"heldout_{d}").glob("*/seed_*")
                  if p.is_dir())


def lock(args: argparse.Namespace) -> None:
    """Freeze the choices: refused over another lock, once held-out runs or tables exist, and
    while the code that makes the choices has changes not committed."""
    choices_path, lock_path = lock_paths(args.out)
    chosen = choices_now(args.arm)
    seen = heldout_runs(args) + [p for p in (paths_of(args.out, "contract_losses")["rows"],)
                                 if p.exists()]
    if seen:
        raise SystemExit(f"held-out results exist ({seen[0]}, {len(seen)} in all): a lock made "
                         "now could follow them; the protocol allows one lock before any "
                         "held-out run")
    for path in (lock_path, choices_path):
        if path.exists():
            raise SystemExit(f"{path} exists: the choices are locked already (a new lock would "
                             "be a choice made again; remove it only if no held-out run was "
                             "ever made)")
    head, dirty = commit()
    if dirty:
        raise SystemExit("scripts/ or src/ (with the configs) have changes not committed: "
                         "commit the code that makes the choices, so the lock names it")
    digest = write_lock(choices_path, lock_path, {**chosen, "commit": head})
    print(f"locked {args.arm}: {choices_path} sha256 {digest}")


def write_lock(choices_path: Path, lock_path: Path, chosen: Mapping[str, Any]) -> str:
    """The choices as JSON and the lock holding the sha256 of the bytes written, put in place
    together; the digest."""
    from sedcontract.outputs import Outputs

    text = json.dumps(chosen, indent=2) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    with Outputs(writes={"choices": choices_path, "lock": lock_path}) as out:
        out.write(choices_path, text)
        out.write(lock_path, json.dumps({"choices": choices_path.name, "sha256": digest},
                                        indent=2) + "\n")
    return digest


def read_lock(choices_path: Path, lock_path: Path,
              now_of: Callable[[dict[str, Any]], dict[str, Any]], how: str) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and every choice
    equals the one the script makes now (``now_of`` the locked choices; a choice changed after
    the lock is named). ``how``: the command that locks."""
    from sedcontract.data.fetch import sha256_of

    for path in (choices_path, lock_path):
        if not path.is_file():
            raise SystemExit(f"{path} does not exist: lock the choices first ({how})")
    recorded = read_json(lock_path, "the lock").get("sha256")
    if sha256_of(choices_path) != recorded:
        raise SystemExit(f"{choices_path} has sha256 {sha256_of(choices_path)}, the lock "
                         f"{recorded}: the choices were changed after the lock")
    chosen = read_json(choices_path, "the locked choices")
    now = now_of(chosen)
    differ = [k for k in sorted((set(now) | set(chosen)) - {"commit"})
              if now.get(k) != chosen.get(k)]
    if differ:
        raise SystemExit("the script's choices differ from the lock's in " + "; ".join(
            f"{k}: locked {json.dumps(chosen.get(k))}, now {json.dumps(now.get(k))}"
            for k in differ))
    return chosen


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from a file, or one line naming the file."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{path}: cannot read {what} ({exc})") from None
    if not isinstance(value, dict):
        raise SystemExit(f"{path}: {what} must be a JSON object, not {type(value).__name__}")
    return value


def locked(args: argparse.Namespace) -> dict[str, Any]:
    """The locked choices, refused unless the file's digest is the lock's and every choice is
    the one this script makes now (a choice changed after the lock is named)."""
    def now_of(chosen: dict[str, Any]) -> dict[str, Any]:
        contract = chosen.get("contract")
        return choices_now(str(contract.get("name") if isinstance(contract, dict) else None))

    return read_lock(*lock_paths(args.out), now_of, "python scripts/contract_losses.py lock ARM")


# -- commands -----------------------------------------------------------------------------------
def contrasts_of(system: str) -> list[tuple[str, str, str, str]]:
    """(system, post) − (control, post): with post-processing on both sides, with none, and
    the system as it decides against the control post-processed."""
    return [(system, "tuned", CONTROL, "tuned"), (system, "none", CONTROL, "none"),
            (system, "none", CONTROL, "tuned")]


# the held-out table's: the three above for the locked arm, and what post-processing buys BCE
CONTRASTS = (*contrasts_of("contract"), (CONTROL, "tuned", CONTROL, "none"))


def command_line(args: argparse.Namespace) -> str:
    return shlex.join(["python", "scripts/contract_losses.py", *args.argv])


def develop(args: argparse.Namespace) -> None:
    """The candidates on the development benchmarks' validation splits."""
    from sedcontract.outputs import guard
    from sedcontract.resampling import resampling

    resampling(args.resamples, 0, 0.95, 1)  # refused now, not after hours of training
    guard(writes=paths_of(args.out, "contract_losses_development"))
    arms = {name: ARMS[name] for name in dict.fromkeys([CONTROL, *args.arms])}
    start = time.time()
    runs = train_all(args, arms, DEVELOPMENT, DEVELOPMENT_SEEDS)
    if args.train_only:
        return
    reports, rows, psds_rows, choices = collect(args, list(arms), {a: a for a in arms},
                                                DEVELOPMENT, DEVELOPMENT_SEEDS, "validation")
    contrasts = [c for name in arms if name != CONTROL for c in contrasts_of(name)]
    intervals = interval_rows(reports, DEVELOPMENT, contrasts, args.resamples)
    meta = {"command": command_line(args), "split": "validation",
            "wall_s": round(time.time() - start), **runs, "commit": commit()[0]}
    write_all(args.out, "contract_losses_development", rows, psds_rows, choices, intervals,
              meta)


def heldout(args: argparse.Namespace) -> None:
    """BCE and the locked arm on the held-out benchmarks' test splits, once: nothing but the
    locked choices (no overrides, the locked resamples)."""
    from sedcontract.data.fetch import sha256_of
    from sedcontract.outputs import guard

    chosen = locked(args)
    guard(writes=paths_of(args.out, "contract_losses"))
    name = chosen["contract"]["name"]
    arms = {CONTROL: chosen["control"]["overrides"], name: chosen["contract"]["overrides"]}
    start = time.time()
    runs = train_all(args, arms, HELDOUT, HELDOUT_SEEDS)
    if args.train_only:
        return
    reports, rows, psds_rows, choices = collect(args, list(arms), {CONTROL: CONTROL,
                                                                   name: "contract"},
                                                HELDOUT, HELDOUT_SEEDS, "test")
    intervals = interval_rows(reports, HELDOUT, CONTRASTS, chosen["resamples"],
                              chosen["level"])
    meta = {"command": command_line(args), "split": "test", "contract": name,
            "wall_s": round(time.time() - start), **runs, "commit": commit()[0],
            "choices_sha256": sha256_of(lock_paths(args.out)[0])}
    write_all(args.out, "contract_losses", rows, psds_rows, choices, intervals, meta)


def paths_of(out: Path, stem: str) -> dict[str, Path]:
    return {"rows": out / f"{stem}.csv", "psds": out / f"{stem}_psds.csv",
            "post": out / f"{stem}_post.csv", "intervals": out / f"{stem}_intervals.csv",
            "meta": out / f"{stem}_run.json", "page": out / f"{stem}.md"}


# the columns of each source file
COLUMNS = {"rows": ("benchmark", "system", "seed", "post", "mode", "coordinate", "satisfied",
                    "obligations"),
           "psds": ("benchmark", "system", "seed", "psds1"),
           "post": ("benchmark", "system", "seed", "median_filter", "threshold", "low",
                    "validation_logic"),
           "intervals": ("benchmark", "system", "post", "control", "control_post", "mode",
                         "coordinate", "point", "lo", "hi", "level", "defined", "resamples")}


def write_all(out: Path, stem: str, rows: list[dict], psds_rows: list[dict],
              choices: list[dict], intervals: list[dict], meta: dict[str, Any]) -> None:
    """The source files and the page rendered from their text, all put in place together."""
    from sedcontract.outputs import Outputs

    paths = paths_of(out, stem)
    texts = {"rows": csv_text(rows), "psds": csv_text(psds_rows), "post": csv_text(choices),
             "intervals": csv_text(intervals), "meta": json.dumps(meta, indent=2) + "\n"}
    tables = {key: [dict(zip(COLUMNS[key], (r[c] for c in COLUMNS[key]), strict=True))
                    for r in csv.DictReader(io.StringIO(texts[key]))] for key in COLUMNS}
    page = render(tables["rows"], tables["psds"], tables["post"], tables["intervals"], meta)
    with Outputs(writes=paths) as staged:
        for key, text in texts.items():
            staged.write(paths[key], text)
        staged.write(paths["page"], page)
    print(page)


def read_rows(path: Path, key: str) -> list[dict[str, str]]:
    """A source file's records (one line naming the file, row and column otherwise)."""
    from sedcontract.traces.csv_files import read_csv

    if not path.is_file():
        raise SystemExit(f"{path} does not exist (the {key} of the table)")
    return [record for _, record in read_csv(path, COLUMNS[key], f"the {key} of "
                                              "scripts/contract_losses.py")]


def render_to(out: Path, stem: str) -> None:
    """The page again from its source files."""
    from sedcontract.outputs import atomic_write

    paths = paths_of(out, stem)
    tables = {key: read_rows(paths[key], key) for key in COLUMNS}
    if not tables["rows"] or not tables["intervals"]:
        raise SystemExit(f"{paths['rows' if not tables['rows'] else 'intervals']} has no rows")
    meta = read_json(paths["meta"], "the run's record") if paths["meta"].is_file() else None
    if meta is None or not isinstance(meta.get("command"), str) or \
            meta.get("split") not in ("validation", "test"):
        raise SystemExit(f"{paths['meta']}: the run's record (its command and split) is "
                         "missing or incomplete")
    text = render(tables["rows"], tables["psds"], tables["post"], tables["intervals"], meta)
    atomic_write(paths["page"], text, inputs=[p for k, p in paths.items() if k != "page"])
    print(text)


# -- rendering ----------------------------------------------------------------------------------
def per_seed(rows: list[dict], benchmark: str, system: str, post: str, mode: str,
             coordinate: str) -> list[float]:
    """Per training seed, as a report scores its counts (:func:`count_scores`): satisfied /
    obligations, NaN when vacuous; ``logic`` the mean of the non-vacuous coordinates."""
    from sedcontract.guard.bootstrap import count_scores

    mine: dict[int, dict[str, tuple[int, int]]] = {}
    for r in rows:
        if (r["benchmark"], r["system"], r["post"], r["mode"]) == (benchmark, system, post, mode):
            mine.setdefault(int(r["seed"]), {})[r["coordinate"]] = (int(r["satisfied"]),
                                                                    int(r["obligations"]))
    names = list(COORDINATES) if coordinate == "logic" or mode != "scores" else [coordinate]
    out = []
    for seed in sorted(mine):
        totals = np.array([[[mine[seed][c][k]] for c in names] for k in (0, 1)])  # [2, K, 1]
        scores = count_scores(totals)  # the coordinates, then logic
        out.append(float(scores[-1] if coordinate == "logic" else
                         scores[names.index(coordinate)]))
    return out


def diff_cell(row: Mapping[str, str] | None) -> str:
    if row is None:
        return "—"
    point, lo, hi = float(row["point"]), float(row["lo"]), float(row["hi"])
    if math.isnan(point) or math.isnan(lo):
        return "—"
    mark = " **↑**" if lo > 0 else " **↓**" if hi < 0 else ""
    return f"{point:+.3f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def label(system: str, post: str) -> str:
    return system if post == "none" else f"{system} + tuned post"


def render(rows: list[dict], psds_rows: list[dict], choices: list[dict],
           intervals: list[dict], meta: Mapping[str, Any]) -> str:
    out = io.StringIO()
    split = meta["split"]
    benchmarks = list(dict.fromkeys(r["benchmark"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    seeds = sorted({int(r["seed"]) for r in rows})
    kind = "development" if split == "validation" else "held-out"
    minutes = (f"{meta['wall_s'] / 60:.0f} minutes on this machine's CPUs" if "wall_s" in meta
               else "time unknown")
    if "runs" in meta:
        minutes += (f"; it trained {meta['trained']} of its {meta['runs']} runs, the others "
                    "were found trained by an earlier call" if meta["trained"] < meta["runs"]
                    else f"; it trained all {meta['runs']} runs")
    if "training_s" in meta:
        minutes += (f"; training the {meta['runs']} runs took "
                    f"{meta['training_s'] / 60:.0f} minutes in all, from their files' times")
    out.write(
        f"# The contract losses on the {kind} benchmarks ({split} splits)\n\n"
        f"Generated by `{meta['command']}` ({minutes}; commit "
        f"`{meta.get('commit', 'unknown')[:10]}`) — do not edit; `python scripts/"
        f"contract_losses.py render{' --development' if kind == 'development' else ''}` "
        "renders it again from the CSV files beside it. The protocol: "
        "[protocol.md](protocol.md). Benchmarks (data seeds): "
        f"{', '.join(benchmarks)}; training seeds {', '.join(map(str, seeds))}. Every arm is "
        "`experiment=contract_vs_baselines model=contract_aware` (5 epochs, the best "
        "checkpoint on validation logic), differing only in the loss; each is read as it "
        "decides and with the post-processing chosen on its own validation split (median "
        f"filter {{{', '.join(f'{m:g}' for m in MEDIAN)}}} s × threshold "
        f"{{{', '.join(f'{t:g}' for t in THRESHOLD)}}} × hysteresis {{off, threshold − 0.2}}, "
        "the best typed logic). Cells: mean ± sample standard deviation over training seeds. "
        "Differences: on the counts pooled over seeds and clips, with the 95 % interval of a "
        "two-stage paired bootstrap (training seeds, then clips within each; "
        f"{intervals[0]['resamples'] if intervals else 0} draws); pooled: the mean of the "
        "benchmarks' differences, each drawn within itself. **↑**/**↓**: the interval "
        "excludes 0.\n")
    if kind == "development":
        out.write("\nEvery number here is on **validation** splits: it is what the choice of "
                  "the held-out arm was made from, and it makes no claim. The tuned "
                  "post-processing is chosen and scored on the same split, optimistic alike "
                  "for every arm.\n")
    else:
        out.write("\n**History.** This is round 1 of the protocol (data seeds 2–4). Its runs were "
                  "trained before their CPU kernels were pinned, so another machine trains "
                  "other weights from the same commands; round 2 (data seeds 5–7, the whole "
                  "trade-off and fine-tuning, every run reproducible) is "
                  "[contract_tradeoff.md](contract_tradeoff.md).\n")
    if kind != "development" and "contract" in meta:
        out.write(f"\n`contract` is the locked arm `{meta['contract']}` "
                  f"([heldout_choices.json](heldout_choices.json), sha256 "
                  f"`{meta.get('choices_sha256', '')[:16]}…`).\n")
    psds = {(r["benchmark"], r["system"]): [] for r in psds_rows}
    for r in psds_rows:
        psds[(r["benchmark"], r["system"])].append(float(r["psds1"]))
    for mode in MODES:
        out.write(f"\n## {mode.capitalize()} guard vector\n\n| benchmark | system | logic | "
                  + " | ".join(COORDINATES) + " |\n|---|---|" + "---|" * (len(COORDINATES) + 1)
                  + "\n")
        for b, system, post in itertools.product(benchmarks, systems, POSTS):
            cells = [cell(per_seed(rows, b, system, post, mode, c))
                     for c in ("logic", *COORDINATES)]
            out.write(f"| {b} | {label(system, post)} | " + " | ".join(cells) + " |\n")
    out.write("\n## Standard scores\n\nCollar event F1 (200 ms onset collar, offset "
              "max(200 ms, 20 %)) and segment F1 (1 s), micro; PSDS1 (DCASE scenario 1: "
              "dtc = gtc = 0.7, α_st = 1, max eFPR 100/h) from the saved scores, which "
              "post-processing does not change.\n\n| benchmark | system | event F1 | segment F1 "
              "| PSDS1 |\n|---|---|---|---|---|\n")
    for b, system, post in itertools.product(benchmarks, systems, POSTS):
        cells = [cell(per_seed(rows, b, system, post, "scores", s)) for s in SCORES]
        cells.append(cell(psds.get((b, system), [])) if post == "none" else "″")
        out.write(f"| {b} | {label(system, post)} | " + " | ".join(cells) + " |\n")
    contrasts = list(dict.fromkeys((r["system"], r["post"], r["control"], r["control_post"])
                                   for r in intervals))
    places = list(dict.fromkeys(r["benchmark"] for r in intervals))
    for mode in MODES:
        out.write(f"\n## Differences, {mode} (system − control)\n\n| benchmark | system | "
                  "control | logic | " + " | ".join(COORDINATES) + " | event F1 | segment F1 "
                  "|\n|---|---|---|" + "---|" * (len(COORDINATES) + 3) + "\n")
        for (system, post, control, control_post), where in itertools.product(contrasts,
                                                                                places):
            by = {r["coordinate"]: r for r in intervals
                  if (r["system"], r["post"], r["control"], r["control_post"], r["mode"],
                      r["benchmark"]) == (system, post, control, control_post, mode, where)}
            cells = [diff_cell(by.get(c)) for c in ("logic", *COORDINATES, *SCORES)]
            name = f"**{where}**" if where == "pooled" else where
            out.write(f"| {name} | {label(system, post)} | {label(control, control_post)} | "
                      + " | ".join(cells) + " |\n")
    out.write("\n## Post-processing chosen on validation\n\n| benchmark | system | seed | "
              "median filter (s) | threshold | hysteresis low | validation typed logic |\n"
              "|---|---|---|---|---|---|---|\n")
    for c in choices:
        low = "—" if c["low"] in (None, "", "None") else f"{float(c['low']):g}"
        out.write(f"| {c['benchmark']} | {c['system']} | {c['seed']} | "
                  f"{float(c['median_filter']):g} | {float(c['threshold']):g} | {low} | "
                  f"{float(c['validation_logic']):.3f} |\n")
    out.write("\n" + (verdict(intervals) if kind == "held-out" else choice(intervals)) + "\n")
    return out.getvalue()


def choice(intervals: list[dict]) -> str:
    """The development rule: the arm whose tuned post-processing beats BCE's by the most
    typed logic, pooled over the development benchmarks' validation splits."""
    pooled = {r["system"]: r for r in intervals
              if (r["benchmark"], r["post"], r["control_post"], r["mode"], r["coordinate"])
              == ("pooled", "tuned", "tuned", "typed", "logic")}
    if not pooled:
        return ""
    best = max(pooled, key=lambda name: float(pooled[name]["point"]))
    ranked = sorted(pooled, key=lambda name: -float(pooled[name]["point"]))
    return ("## The choice\n\nThe rule: the arm whose tuned "
            "post-processing beats BCE's tuned post-processing by the most typed logic, pooled "
            "over the development benchmarks' validation splits. Ranked: " + "; ".join(
                f"`{name}` {diff_cell(pooled[name])}" for name in ranked)
            + f". Chosen: `{best}` (`python scripts/contract_losses.py lock {best}`).")


def verdict(intervals: list[dict]) -> str:
    """The protocol's goal, checked against the pooled typed intervals."""
    def pooled(post: str, control_post: str) -> dict[str, dict]:
        return {r["coordinate"]: r for r in intervals
                if (r["benchmark"], r["system"], r["post"], r["control"], r["control_post"],
                    r["mode"]) == ("pooled", "contract", post, CONTROL, control_post, "typed")}

    with_post, bare = pooled("tuned", "tuned"), pooled("none", "tuned")
    if not with_post or not bare:
        return ""
    logic = with_post["logic"]
    first = float(logic["point"]) >= 0.01 and float(logic["lo"]) > 0
    worse = [c for c in COORDINATES if c in with_post and float(with_post[c]["hi"]) < 0]
    third = all(float(bare[c]["lo"]) > 0 for c in ("onset", "offset"))
    lines = [
        "## The goal (protocol.md), pooled over the held-out benchmarks, typed",
        "",
        f"1. contract + tuned post − BCE + tuned post ≥ +0.01 logic, interval above 0: "
        f"{diff_cell(logic)} — {'met' if first else 'not met'}.",
        f"2. No guard coordinate worse beyond its interval: "
        f"{'met' if not worse else 'not met (worse on ' + ', '.join(worse) + ')'}.",
        f"3. Without post-processing, beats BCE + tuned post on onset "
        f"{diff_cell(bare['onset'])} and offset {diff_cell(bare['offset'])}: "
        f"{'met' if third else 'not met'}.",
    ]
    return "\n".join(lines)


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    steps: dict[str, Callable[[argparse.Namespace], None]] = {}
    for name, step, helptext in (
            ("develop", develop, "train and score the candidates on the development "
                                 "benchmarks' validation splits"),
            ("lock", lock, "freeze the choices before any held-out run"),
            ("heldout", heldout, "the held-out table, refused unless the choices are locked"),
            ("render", lambda a: render_to(a.out, "contract_losses_development" if
                                           a.development else "contract_losses"),
             "the Markdown again from the CSV files")):
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
