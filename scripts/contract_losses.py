"""What the contract losses buy: every relaxation against BCE alone, end to end.

One network (``model=contract_aware``: the dilated CNN trunk under the boundary head), one
augmentation (``augment=perturb``), one budget (``experiment=contract_vs_baselines``) and the
same BCE in every arm; the arms differ only in the contract loss:

- ``bce_only``: λ = 0 (the losses are not computed);
- ``noisy_or``: the relaxation before this experiment (noisy-or windows, expected events);
- ``exactly_one``, ``linear_softmax``, ``softmax_max``, ``rise``: that witness for the onset and
  offset windows, events expected (each one change from ``noisy_or``);
- ``decided``: decided events, noisy-or windows (one change from ``noisy_or``);
- ``rise+decided``: both;
- ``straight``, ``rise+straight``: the decided values with the expected relaxation's gradient
  added to the repair gradient (one change from ``decided``, ``rise+decided``);
- ``constrained``: ``rise+decided`` trained to per-clause targets (Lagrange multipliers);
- ``speech_gate``: ``rise+decided`` with the targets of a speech gate's risk order (missed,
  false, onset: ``examples/speech_gate.yaml``), against ``rise+decided`` as its control;
- ``bce_only+post``: the ``bce_only`` checkpoints with post-processing tuned on validation
  (median filter × threshold × hysteresis, the best typed logic), because a contract loss must
  beat what post-processing alone gives.

Every best checkpoint (validation logic) is evaluated on the test split; the guard vectors
(typed and union) and the micro F1 of the standard scores are written as source rows
``docs/results/contract_losses.csv`` (``system, seed, mode, coordinate, satisfied,
obligations``; a standard score's row holds ``2·tp`` and ``ref + sys``, so satisfied /
obligations is its F1), the paired bootstrap intervals over test clips (seeds pooled clip by
clip, :func:`sedcontract.audit.paired_bootstrap`) against each arm's control as
``contract_losses_intervals.csv``, and the Markdown regenerated from the two::

    python scripts/contract_losses.py --jobs 2      # about 50 minutes on 2 CPU cores
    python scripts/contract_losses.py --from-csv    # the Markdown again, from the CSVs
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import shutil
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from contract_vs_baselines import best_checkpoint, cell, run  # the same rules and cells

from sedcontract.cli.command import reported

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("speech", "tone", "burst")
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")
SCORES = ("event", "segment", "frame")
MODES = ("typed", "union")


def _witness(name: str) -> list[str]:
    return [f"loss.contract.relaxation={{onset: {name}, offset: {name}}}"]


EXPECTED, DECIDED = ["loss.contract.events=expected"], ["loss.contract.events=decided"]
STRAIGHT = ["loss.contract.events=straight"]
NOISY_OR = _witness("noisy_or")
# by path: a Hydra dict literal reads a bare false as a Boolean and has no quoted keys
TARGETS = [f"+loss.contract.targets.{name}={target}" for name, target in (
    ("onset", 0.9), ("offset", 0.9), ("missed", 0.95), ("false", 0.9), ("silence", 0.95),
    ("duration", 0.9), ("fragmentation", 0.95))]
GATE = "loss.contract.risk_order=" + str(ROOT / "src/sedcontract/examples/speech_gate.yaml")
ARMS: dict[str, list[str]] = {  # name → overrides on experiment=contract_vs_baselines
    "bce_only": ["loss.contract.weight=0.0"],
    "noisy_or": EXPECTED + NOISY_OR,
    "exactly_one": EXPECTED + _witness("exactly_one"),
    "linear_softmax": EXPECTED + _witness("linear_softmax"),
    "softmax_max": EXPECTED + _witness("softmax_max"),
    "rise": EXPECTED + _witness("rise"),
    "decided": DECIDED + NOISY_OR,
    "rise+decided": DECIDED + _witness("rise"),
    "straight": STRAIGHT + NOISY_OR,
    "rise+straight": STRAIGHT + _witness("rise"),
    "constrained": DECIDED + _witness("rise") + TARGETS,
    "speech_gate": DECIDED + _witness("rise") + [GATE],
}
POST = "bce_only+post"
SYSTEMS = (*ARMS, POST)
CONTROL = {name: "bce_only" for name in SYSTEMS if name != "bce_only"}
CONTROL["speech_gate+vs_rise+decided"] = "rise+decided"  # the speech gate's own control
# one change at a time from the relaxation before (noisy_or), and against post-processing
CONTROL |= {"rise+vs_noisy_or": "noisy_or", "rise+straight+vs_rise": "rise",
            "rise+vs_bce_only+post": POST, "rise+straight+vs_bce_only+post": POST}
# the post-processing grid, chosen on validation: median filter (s) × threshold × low
MEDIAN = (0.0, 0.06, 0.1, 0.16, 0.24)
THRESHOLD = (0.3, 0.4, 0.5, 0.6, 0.7)
LOW_BELOW = (None, 0.2)  # hysteresis off, or low = threshold − 0.2


def train_and_evaluate(args: argparse.Namespace, name: str, seed: int, threads: int) -> str:
    """One arm and seed: train (unless its run exists), evaluate the best checkpoint on the
    test split (and, for ``bce_only``, write the validation and test scores)."""
    python = sys.executable
    run_dir = args.runs / name / f"seed_{seed}"
    if args.fresh and run_dir.exists():
        shutil.rmtree(run_dir)
    if not (run_dir / "checkpoints" / "last.ckpt").exists():
        run([python, "train.py", "experiment=contract_vs_baselines", "model=contract_aware",
             f"seed={seed}", f"hydra.run.dir={run_dir}", *ARMS[name], *args.overrides],
            run_dir.parent / f"seed_{seed}.log", threads)
    splits = ("test", "validation") if name == "bce_only" else ("test",)
    for split in splits:
        out = run_dir / split
        if not (out / f"{split}_report.csv").exists():
            extra = ["save_scores=true"] if name == "bce_only" else []
            run([python, "evaluate.py", f"ckpt_path={best_checkpoint(run_dir)}",
                 f"split={split}", f"hydra.run.dir={out}", *extra, *args.overrides],
                out.parent / f"{split}.log", threads)
    return f"{name}/{seed}"


def train_all(args: argparse.Namespace) -> None:
    jobs = [(name, seed) for seed in args.seeds for name in args.arms]
    # the environment's threads share the cores among the jobs; each run fixes torch's own
    # (the config's `threads`), so the rows do not depend on --jobs
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    start = time.time()
    with ThreadPoolExecutor(args.jobs) as pool:
        for done in pool.map(lambda job: train_and_evaluate(args, *job, threads), jobs):
            print(f"done {done} ({time.time() - start:.0f} s)", flush=True)


# -- reports ------------------------------------------------------------------------------------
def reference(args: argparse.Namespace, split: str) -> tuple[Path, Path]:
    folder = args.data / "controlled"
    return folder / f"{split}.tsv", folder / f"{split}_durations.tsv"


def audited(args: argparse.Namespace, pred: object, split: str = "test",
            scores: bool = False) -> object:
    """The guard report of predicted events (a tsv path or an EventList) on ``split``."""
    from sedcontract.audit import AuditPolicy, ScoreSettings, audit

    ref, durations = reference(args, split)
    policy = AuditPolicy(scores=ScoreSettings() if scores else None)
    return audit(ref, pred, policy, durations=durations, classes=list(CLASSES))


def tuned_post(args: argparse.Namespace, seed: int) -> tuple[object, dict[str, object]]:
    """``bce_only`` seed ``seed`` under the decision with the best validation typed logic on
    the grid; its test report (with standard scores) and the choice."""
    from sedcontract.traces.scores import DecisionPolicy, read_score_dir, tables_to_events

    run_dir = args.runs / "bce_only" / f"seed_{seed}"
    tables = {}
    for split in ("validation", "test"):
        folder = run_dir / split / f"{split}_report_scores"
        tables[split] = (read_score_dir(folder), folder)
    best: tuple[float, DecisionPolicy] | None = None
    for median, threshold, below in itertools.product(MEDIAN, THRESHOLD, LOW_BELOW):
        low = None if below is None else round(threshold - below, 6)
        decision = DecisionPolicy(threshold=threshold, median_filter=median, low=low)
        events = tables_to_events(tables["validation"][0], decision, tables["validation"][1])
        logic = audited(args, events, "validation").logic("typed")
        if best is None or logic > best[0] + 1e-12:
            best = (logic, decision)
    assert best is not None
    logic, decision = best
    events = tables_to_events(tables["test"][0], decision, tables["test"][1])
    report = audited(args, events, "test", scores=True)
    return report, {"seed": seed, "median_filter": decision.median_filter,
                    "threshold": decision.threshold, "low": decision.low,
                    "validation_logic": logic}


def collect(args: argparse.Namespace) -> tuple[list[dict], list[dict], list[dict]]:
    """Source rows, interval rows and the post-processing choices."""
    from sedcontract.audit import paired_bootstrap

    reports: dict[str, list[object]] = {}
    rows: list[dict] = []
    choices: list[dict] = []
    for name in SYSTEMS:
        reports[name] = []
        for seed in args.seeds:
            if name == POST:
                report, choice = tuned_post(args, seed)
                choices.append(choice)
                scores = {k: report.scores[k] for k in SCORES}
                counts = {k: (2 * int(s.tp.sum()), int(s.ref.sum()) + int(s.sys.sum()))
                          for k, s in scores.items()}
            else:
                test_dir = args.runs / name / f"seed_{seed}" / "test"
                report = audited(args, test_dir / "test_report_pred.tsv")
                stored = json.loads((test_dir / "test_report.json").read_text())
                check_same(report, stored, test_dir)
                scores = json.loads((test_dir / "test_report_scores.json").read_text())
                counts = {k: (2 * scores["scores"][k]["tp"], scores["scores"][k]["ref"]
                              + scores["scores"][k]["sys"]) for k in SCORES}
            reports[name].append(report)
            for mode in MODES:
                cells = report.modes[mode]
                for coordinate in COORDINATES:
                    rows.append({"system": name, "seed": seed, "mode": mode,
                                 "coordinate": coordinate,
                                 "satisfied": int(cells.satisfied[coordinate].sum()),
                                 "obligations": int(cells.obligations[coordinate].sum())})
            for score, (sat, obl) in counts.items():
                rows.append({"system": name, "seed": seed, "mode": "scores",
                             "coordinate": f"{score}_f1", "satisfied": int(sat),
                             "obligations": int(obl)})
    intervals: list[dict] = []
    for label, control in CONTROL.items():
        system = label.split("+vs_")[0]
        for mode in MODES:
            diff = paired_bootstrap(reports[system], reports[control], mode=mode,
                                    resamples=args.resamples, seed=0)
            for coordinate, iv in diff.items():
                intervals.append({"system": system, "control": control, "mode": mode,
                                  "coordinate": coordinate, "point": f"{iv.point:.6f}",
                                  "lo": f"{iv.lo:.6f}", "hi": f"{iv.hi:.6f}",
                                  "level": iv.level, "defined": iv.defined,
                                  "resamples": iv.resamples})
    return rows, intervals, choices


def check_same(report: object, stored: dict, where: Path) -> None:
    """The re-audit of the decided events gives the vector evaluate.py reported."""
    for mode in MODES:
        mine = report.logic(mode)
        theirs = stored["modes"][mode]["logic"]
        if not math.isclose(mine, theirs, abs_tol=1e-9):
            sys.exit(f"{where}: re-audited {mode} logic {mine} differs from the reported "
                     f"{theirs}")


# -- rendering ----------------------------------------------------------------------------------
def values(rows: list[dict], system: str, mode: str, coordinate: str) -> list[float]:
    """Per seed: satisfied / obligations (NaN when vacuous); logic: mean of the coordinates."""
    out = []
    for seed in sorted({int(r["seed"]) for r in rows if r["system"] == system}):
        mine = {r["coordinate"]: (int(r["satisfied"]), int(r["obligations"])) for r in rows
                if (r["system"], int(r["seed"]), r["mode"]) == (system, seed, mode)}
        if coordinate == "logic":
            cells = [s / o for s, o in (mine[c] for c in COORDINATES) if o]
            out.append(statistics.mean(cells) if cells else math.nan)
        else:
            s, o = mine[coordinate]
            out.append(s / o if o else math.nan)
    return out


def diff_cell(row: dict) -> str:
    point, lo, hi = float(row["point"]), float(row["lo"]), float(row["hi"])
    if point != point:
        return "—"
    mark = " **↑**" if lo > 0 else " **↓**" if hi < 0 else ""
    return f"{point:+.3f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def render(rows: list[dict], intervals: list[dict], choices: list[dict], seeds: list[int],
           command: str) -> str:
    out = io.StringIO()
    out.write(
        "# What the contract losses buy (controlled benchmark, test split)\n\n"
        f"Generated by `{command}` — do not edit; the source rows are `contract_losses.csv` "
        "and `contract_losses_intervals.csv` beside it (`python scripts/contract_losses.py "
        "--from-csv` renders this page from them). Every arm: `model=contract_aware`, "
        "`augment=perturb`, `experiment=contract_vs_baselines` (5 epochs, batch 16, AdamW "
        "1e-3, CPU), the same BCE (boundary targets smoothed over ±0.06 s), the best checkpoint "
        f"on validation logic; seeds {' '.join(map(str, seeds))}; the standard contract "
        "(eps 200 ms), micro aggregation. Cells: mean ± sample standard deviation over seeds. "
        "Differences: the system minus its control on the counts pooled over seeds, with the "
        "paired 95 % bootstrap interval over the 420 test clips (each resample draws clips "
        "with every seed's counts); **↑**/**↓** where the interval excludes 0.\n")
    systems = list(dict.fromkeys(r["system"] for r in rows))
    for mode in MODES:
        out.write(f"\n## {mode.capitalize()} guard vector\n\n| system | logic | "
                  + " | ".join(COORDINATES) + " |\n|---|" + "---|" * (len(COORDINATES) + 1)
                  + "\n")
        for name in systems:
            cells = [cell(values(rows, name, mode, c)) for c in ("logic", *COORDINATES)]
            out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    out.write("\n## Standard scores (micro F1)\n\n| system | collar event F1 | segment F1 (1 s) "
              "| frame F1 |\n|---|---|---|---|\n")
    for name in systems:
        cells = [cell(values(rows, name, "scores", f"{k}_f1")) for k in SCORES]
        out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    for mode in MODES:
        out.write(f"\n## Paired differences, {mode} (system − control)\n\n| system | control "
                  "| logic | " + " | ".join(COORDINATES) + " |\n|---|---|"
                  + "---|" * (len(COORDINATES) + 1) + "\n")
        pairs = list(dict.fromkeys((r["system"], r["control"]) for r in intervals
                                   if r["mode"] == mode))
        for system, control in pairs:
            by = {r["coordinate"]: r for r in intervals
                  if (r["system"], r["control"], r["mode"]) == (system, control, mode)}
            cells = [diff_cell(by[c]) for c in ("logic", *COORDINATES)]
            out.write(f"| {system} | {control} | " + " | ".join(cells) + " |\n")
    if choices:
        out.write("\n## Post-processing chosen on validation (`bce_only+post`)\n\n| seed | "
                  "median filter (s) | threshold | hysteresis low | validation typed logic |"
                  "\n|---|---|---|---|---|\n")
        for c in choices:
            low = "—" if c["low"] in (None, "") else f"{float(c['low']):g}"
            out.write(f"| {c['seed']} | {float(c['median_filter']):g} | "
                      f"{float(c['threshold']):g} | {low} | "
                      f"{float(c['validation_logic']):.3f} |\n")
    out.write("\n" + verdict(intervals) + "\n")
    out.write("\n" + seed_intervals(rows) + "\n")
    return out.getvalue()


def seed_intervals(rows: list[dict]) -> str:
    """Typed logic minus ``bce_only``'s, paired by seed, with a t interval over the seeds:
    what a new seed (a new training run) would give, beside the clip bootstrap above."""
    from scipy import stats

    base = values(rows, "bce_only", "typed", "logic")
    out = ["## Typed logic − bce_only, paired by seed (t interval over seeds)", "",
           "| system | per seed | mean [95 % interval] |", "|---|---|---|"]
    for name in dict.fromkeys(r["system"] for r in rows):
        if name == "bce_only":
            continue
        diff = [a - b for a, b in zip(values(rows, name, "typed", "logic"), base, strict=True)]
        if len(diff) < 2:
            continue
        mean, sd = statistics.mean(diff), statistics.stdev(diff)
        half = stats.t.ppf(0.975, len(diff) - 1) * sd / math.sqrt(len(diff))
        out.append(f"| {name} | {', '.join(f'{d:+.3f}' for d in diff)} | {mean:+.3f} "
                   f"[{mean - half:+.3f}, {mean + half:+.3f}] |")
    return "\n".join(out)


def verdict(intervals: list[dict]) -> str:
    """The target stated before the experiment, checked against the typed intervals."""
    typed = [r for r in intervals if r["mode"] == "typed" and r["control"] == "bce_only"
             and r["system"] != POST]
    by: dict[str, dict[str, dict]] = {}
    for r in typed:
        by.setdefault(r["system"], {})[r["coordinate"]] = r
    if not by:
        return ""
    best = max(by, key=lambda s: float(by[s]["logic"]["point"]))
    logic = by[best]["logic"]
    worse = [c for c in COORDINATES if float(by[best][c]["hi"]) < 0]
    met = float(logic["point"]) >= 0.02 and float(logic["lo"]) > 0 and not worse
    return (f"**Target** (stated before the experiment): the best contract arm beats "
            f"`bce_only` on typed logic by ≥ 0.02 with a paired 95 % interval excluding 0, "
            f"and is worse on no guard coordinate beyond its interval. Best arm: `{best}`, "
            f"typed logic {diff_cell(logic)}; worse on "
            f"{', '.join(worse) if worse else 'no coordinate'}. "
            f"{'Met.' if met else 'Not met.'}")


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--runs", type=Path, default=ROOT / "logs" / "contract_losses")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("SEDCONTRACT_DATA", ROOT / "data")))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "results")
    parser.add_argument("--jobs", type=int, default=1, help="runs trained at once")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS),
                        help="train only these arms (the tables need them all)")
    parser.add_argument("--train-only", action="store_true",
                        help="train and evaluate, write no tables")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--fresh", action="store_true", help="retrain runs that exist")
    parser.add_argument("--from-csv", action="store_true",
                        help="render the Markdown from the committed CSVs only")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for every run")
    args = parser.parse_args()
    args.runs, args.out, args.data = args.runs.resolve(), args.out.resolve(), args.data.resolve()
    stem = args.out / "contract_losses"
    command = "python scripts/contract_losses.py" + (
        "" if args.seeds == [0, 1, 2, 3, 4] else " --seeds " + " ".join(map(str, args.seeds)))
    if args.from_csv:
        rows = read_csv(stem.with_suffix(".csv"))
        intervals = read_csv(stem.parent / "contract_losses_intervals.csv")
        choices_path = stem.parent / "contract_losses_post.csv"
        choices = read_csv(choices_path) if choices_path.exists() else []
        seeds = sorted({int(r["seed"]) for r in rows})
    else:
        train_all(args)
        if args.train_only:
            return
        rows, intervals, choices = collect(args)
        args.out.mkdir(parents=True, exist_ok=True)
        write_csv(stem.with_suffix(".csv"), rows)
        write_csv(stem.parent / "contract_losses_intervals.csv", intervals)
        write_csv(stem.parent / "contract_losses_post.csv", choices)
        seeds = args.seeds
    text = render(rows, intervals, choices, seeds, command)
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(reported("contract_losses", main))
