"""Round 2's readings of trained runs: each at its operating point (reports, count rows, the
post-processing chosen on validation, intervals) and over the whole trade-off (each
coordinate's budget curve and PSDS, with seed × clip intervals per system and per contrast,
on each benchmark and pooled)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.analysis.tradeoff import (
    GridMaterial,
    grid_material,
    reading_names,
    readings,
    seed_clip_readings,
    tradeoff_intervals,
)
from sedcontract.experiments.contract_losses import MEDIAN_EDGE
from sedcontract.experiments.intervals import interval_fields, interval_rows
from sedcontract.experiments.readings import read_runs
from sedcontract.experiments.runs import run_dir, split_files
from sedcontract.experiments.tradeoff import READINGS, contrasts_for, point_contrasts
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.score_files import read_score_dir
from sedcontract.traces.tsv import read_durations, read_events

Log = Callable[[str], None]


def material(data: Path, data_seed: int, where: Path, split: str,
             median_filter: float) -> GridMaterial:
    """One run's trade-off material on ``split`` (its saved scores after ``median_filter``)."""
    ref, durations = split_files(data, data_seed, split)
    return grid_material(read_events(ref), read_score_dir(where / split / f"{split}_report_scores"),
                         read_durations(durations),
                         settings={k: PRESETS[k] for k in ("psds1", "psds2")},
                         decision=DecisionPolicy(median_filter=median_filter,
                                                 median_edge=MEDIAN_EDGE))


def reading_rows(data_seed: int, arm: str, reading: str, seeds: Sequence[int],
                 names: Sequence[str], points: np.ndarray) -> list[dict[str, Any]]:
    """Each seed's trade-off readings as source rows."""
    return [{"benchmark": data_seed, "system": arm, "seed": s, "reading": reading,
             "quantity": n, "value": f"{v:.6f}"}
            for s, values in zip(seeds, points, strict=True)
            for n, v in zip(names, values, strict=True)]


def run_reading_rows(data: Path, runs: Path, data_seed: int, arm: str, seed: int, split: str,
                     filters: Mapping[str, float]) -> list[dict[str, Any]]:
    """One run's own trade-off rows under each reading (``filters``: reading → median
    filter), as the round's table holds them: what regenerating a run is compared with."""
    out = []
    for reading, median_filter in filters.items():
        found = material(data, data_seed, run_dir(runs, data_seed, arm, seed), split,
                         median_filter)
        values = readings(found, np.ones((1, len(found.clips))))
        out += reading_rows(data_seed, arm, reading, [seed], reading_names(found), values)
    return out


def _draws_task(task: tuple) -> tuple[tuple, list[str], np.ndarray, np.ndarray]:
    """One system's trade-off readings on one benchmark under one reading (a process of its
    own): the names, the point and the draws."""
    key, data, runs, d, arm, seeds, split, filters, resamples, draw_seed = task
    made = [(lambda s=s, f=f: material(data, d, run_dir(runs, d, arm, s), split, f))
            for s, f in zip(seeds, filters, strict=True)]
    names, points, draws = seed_clip_readings(made, resamples=resamples, seed=draw_seed)
    return key, names, points, draws


def _pooled(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The mean over benchmarks of their points and of their draws (a draw undefined in any
    benchmark is undefined)."""
    return (np.mean([p for p, _ in parts], axis=0), np.mean([d for _, d in parts], axis=0))


def _interval_rows(names: Sequence[str], parts: Sequence[tuple[np.ndarray, np.ndarray]],
                   places: Sequence[str], keys: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each quantity's interval on each benchmark's part and pooled over them, as rows."""
    return [{"benchmark": where, **keys, "quantity": n, **interval_fields(iv)}
            for where, (point, draws) in zip(places, [*parts, _pooled(parts)], strict=True)
            for n, iv in tradeoff_intervals(names, point, draws).items()]


def tradeoff_rows(data: Path, runs: Path, arms: Sequence[str], data_seeds: Sequence[int],
                  seeds: Sequence[int], split: str, choices: Sequence[Mapping[str, Any]],
                  contrasts: Sequence[tuple[str, str]], resamples: int, *, jobs: int = 1,
                  log: Log = lambda line: None
                  ) -> tuple[list[dict], list[dict], list[dict]]:
    """The trade-off readings per run, per system and per contrast (the same draws), with
    intervals on each benchmark (drawn from seed k) and pooled; ``jobs`` processes."""
    filters = {(int(c["benchmark"]), c["system"], int(c["seed"])): float(c["median_filter"])
               for c in choices}
    tasks = []
    for k, d in enumerate(data_seeds):
        for arm, reading in itertools.product(arms, READINGS):
            used = [filters[(d, arm, s)] if reading == "tuned" else 0.0 for s in seeds]
            tasks.append(((d, arm, reading), data, runs, d, arm, tuple(seeds), split,
                          tuple(used), resamples, k))
    found: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    names: list[str] = []
    run_rows = []  # each seed's own reading: what regenerating one run is compared with
    with ProcessPoolExecutor(jobs) as pool:
        for (d, arm, reading), names, points, draws in pool.map(_draws_task, tasks):
            found[(d, arm, reading)] = (points.mean(axis=0), draws)
            run_rows += reading_rows(d, arm, reading, seeds, names, points)
            log(f"trade-off {d} {arm} {reading}")
    system_rows, contrast_rows = [], []
    places = [*map(str, data_seeds), "pooled"]
    for reading in READINGS:
        for arm in arms:
            system_rows += _interval_rows(names, [found[(d, arm, reading)] for d in data_seeds],
                                          places, {"system": arm, "reading": reading})
        for system, control in contrasts:
            parts = [(found[(d, system, reading)][0] - found[(d, control, reading)][0],
                      found[(d, system, reading)][1] - found[(d, control, reading)][1])
                     for d in data_seeds]
            contrast_rows += _interval_rows(names, parts, places, {
                "system": system, "control": control, "reading": reading})
    return run_rows, system_rows, contrast_rows


def read_all(data: Path, runs: Path, arms: Sequence[str], data_seeds: Sequence[int],
             seeds: Sequence[int], split: str, resamples: int, curve_resamples: int, *,
             jobs: int = 1, log: Log = lambda line: None) -> dict[str, list[dict]]:
    """Every table of a round-2 page: the operating points (count rows, post-processing
    choices, intervals) and the trade-off (per run, per system, per contrast)."""
    reports, rows, _, choices = read_runs(data, runs, arms, {a: a for a in arms}, data_seeds,
                                          seeds, split, log=lambda line: log(f"read {line}"))
    pairs = contrasts_for(arms)
    intervals = interval_rows(reports, data_seeds, point_contrasts(pairs), resamples)
    run_rows, system_rows, contrast_rows = tradeoff_rows(
        data, runs, arms, data_seeds, seeds, split, choices, pairs, curve_resamples, jobs=jobs,
        log=log)
    return {"rows": rows, "post": choices, "intervals": intervals, "runs": run_rows,
            "systems": system_rows, "contrasts": contrast_rows}
