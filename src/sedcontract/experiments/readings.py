"""A trained run read on one benchmark's split: its guard report as it decides and with the
post-processing chosen on its validation split, its PSDS1, and the count rows a table is
made of."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.errors import ProtocolError
from sedcontract.experiments.contract_losses import (
    CLASSES,
    COORDINATES,
    LOW_BELOW,
    MEDIAN,
    MEDIAN_EDGE,
    MODES,
    SCORES,
    THRESHOLD,
)
from sedcontract.experiments.runs import run_dir, split_files
from sedcontract.guard import AuditPolicy, GuardReport, ScoreSettings, audit
from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.documents import read_json
from sedcontract.traces.score_files import read_score_dir, tables_to_events
from sedcontract.traces.tsv import read_durations, read_events


def audited(data: Path, data_seed: int, pred: object, split: str) -> GuardReport:
    """The guard report, with the standard scores, of predicted events (a tsv path or an
    EventList) on one benchmark's split (``data``: the benchmarks' root)."""
    ref, durations = split_files(data, data_seed, split)
    return audit(ref, pred, AuditPolicy(scores=ScoreSettings()), durations=durations,
                 classes=list(CLASSES))


def tuned(data: Path, data_seed: int, where: Path, split: str
          ) -> tuple[GuardReport, dict[str, Any]]:
    """The run's report on ``split`` under the decision with the best validation typed logic
    on the grid (the first best, in grid order), and that choice."""
    tables: dict[str, Any] = {}  # each split's score files, read once for the whole grid

    def events(name: str, decision: DecisionPolicy) -> Any:
        folder = where / name / f"{name}_report_scores"
        if name not in tables:
            tables[name] = read_score_dir(folder)
        return tables_to_events(tables[name], decision, folder)

    best: tuple[float, DecisionPolicy] | None = None
    for median, threshold, below in itertools.product(MEDIAN, THRESHOLD, LOW_BELOW):
        low = None if below is None else round(threshold - below, 6)
        decision = DecisionPolicy(threshold=threshold, median_filter=median, low=low,
                                  median_edge=MEDIAN_EDGE)
        logic = audited(data, data_seed, events("validation", decision), "validation").logic(
            "typed")
        if not math.isnan(logic) and (best is None or logic > best[0] + 1e-12):
            best = (logic, decision)  # the first best in grid order
    if best is None:
        raise ProtocolError(f"{where}: every decision on the grid leaves the validation split's "
                         "typed logic vacuous")
    logic, decision = best
    report = audited(data, data_seed, events(split, decision), split)
    return report, {"median_filter": decision.median_filter, "threshold": decision.threshold,
                    "low": decision.low, "validation_logic": round(logic, 6)}


def as_decided(data: Path, data_seed: int, where: Path, split: str) -> GuardReport:
    """The run's report on ``split`` as it decides (the checkpoint's own decision), checked
    against the vector evaluate.py reported."""
    folder = where / split
    report = audited(data, data_seed, folder / f"{split}_report_pred.tsv", split)
    stored = read_json(folder / f"{split}_report.json", "guard report", max_bytes=None)
    for mode in MODES:
        mine, theirs = report.logic(mode), stored["modes"][mode]["logic"]
        if not math.isclose(mine, theirs, abs_tol=1e-9):
            raise ProtocolError(f"{folder}: re-audited {mode} logic {mine} differs from the "
                             f"reported {theirs}")
    return report


def psds1(data: Path, data_seed: int, where: Path, split: str) -> float:
    """PSDS1 (DCASE's scenario 1, sed_scores_eval's rule) of the run's saved scores."""
    ref, durations = split_files(data, data_seed, split)
    result = psds(where / split / f"{split}_report_scores", read_events(ref),
                  read_durations(durations), {"psds1": PRESETS["psds1"]})
    return float(result["psds1"]["value"])


def count_rows(report: GuardReport, keys: Mapping[str, Any]) -> list[dict[str, Any]]:
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


def read_runs(data: Path, runs: Path, arms: Sequence[str], names: Mapping[str, str],
              data_seeds: Sequence[int], seeds: Sequence[int], split: str, *,
              with_psds: bool = False, log: Callable[[str], None] = lambda line: None
              ) -> tuple[dict[tuple, list[GuardReport]], list[dict], list[dict], list[dict]]:
    """Every run's reports ``{(data seed, system name, post): [per seed]}``, count rows, PSDS
    rows (``with_psds``) and post-processing choices on ``split``; ``log`` hears of each run."""
    reports: dict[tuple, list[GuardReport]] = {}
    rows: list[dict] = []
    psds_rows: list[dict] = []
    choices: list[dict] = []
    for data_seed, arm, seed in itertools.product(data_seeds, arms, seeds):
        where = run_dir(runs, data_seed, arm, seed)
        system = names[arm]
        keys = {"benchmark": data_seed, "system": system, "seed": seed}
        decided = as_decided(data, data_seed, where, split)
        post, choice = tuned(data, data_seed, where, split)
        for name, report in (("none", decided), ("tuned", post)):
            reports.setdefault((data_seed, system, name), []).append(report)
            rows += count_rows(report, {**keys, "post": name})
        choices.append({**keys, **choice})
        if with_psds:
            psds_rows.append({**keys, "psds1": f"{psds1(data, data_seed, where, split):.6f}"})
        log(f"{data_seed} {system} {seed}")
    return reports, rows, psds_rows, choices
