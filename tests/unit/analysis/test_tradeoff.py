"""The trade-off reading (:mod:`sedcontract.analysis.tradeoff`) against the exact routes it
stands for: on tables whose scores sit on the grid (each score moved to the grid threshold
just above it, which changes no decision at any grid threshold), the grid reading is the exact
budget curves' (:func:`budget_curve`) and the exact PSDS (:func:`psds`, sed_scores_eval's
rule); a clip weighed ``w`` is the clip copied ``w`` times; the seed × clip draws are the mean
over drawn seeds of each one's reading on its drawn clips."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sedcontract.analysis.curve_summaries import budget_curve
from sedcontract.analysis.tradeoff import (
    GUARD,
    grid_material,
    logit_grid,
    reading_names,
    readings,
    seed_clip_readings,
)
from sedcontract.errors import SedContractError
from sedcontract.guard.bootstrap import seed_clip_draws
from sedcontract.guard.curves import guard_curves
from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy, filtered
from sedcontract.traces.score_files import ScoreTable

CLASSES = ("a", "b", "c")
HOP = 0.02
GRID = logit_grid(-4.0, 4.0, 41)
SETTINGS = {"psds1": PRESETS["psds1"], "psds2": PRESETS["psds2"]}
BUDGETS = (10.0, 30.0, 100.0)


def corpus(seed: int, clips: int = 10, seconds: float = 60.0, truth: EventList | None = None
           ) -> tuple[EventList, dict[str, ScoreTable], dict[str, float]]:
    """Clips with 2–7 events per class (the same ``truth`` when given) and scores that rise
    inside them and wander outside, on 3 decimals (ties)."""
    rng = np.random.default_rng(seed)
    frames = round(seconds / HOP)
    names = [f"clip{k:02d}" for k in range(clips)]
    if truth is None:
        rows = []
        for clip in names:
            for cls in CLASSES:
                start = rng.uniform(0, 1.0)
                for _ in range(rng.integers(2, 8)):
                    length = rng.uniform(0.3, 1.6)
                    if start + length >= seconds:
                        break
                    rows.append((clip, round(start, 3), round(start + length, 3), cls))
                    start += length + rng.uniform(0.2, 1.5)
        truth = EventList.from_rows(rows, clips=names)
    tables = {}
    for clip in names:
        score = rng.beta(1.0, 12.0, size=(frames, len(CLASSES)))
        mine = [(a, b, c) for k, a, b, c in zip(truth.clip, truth.onset, truth.offset,
                                                truth.label, strict=True) if k == clip]
        for a, b, c in mine:
            lo, hi = int(a / HOP) + rng.integers(-3, 4), int(b / HOP) + rng.integers(-3, 4)
            score[max(lo, 0):max(hi, 0), CLASSES.index(c)] += rng.uniform(0.3, 0.8)
        score = np.round(np.clip(score, 0, 1), 3)
        onset = np.arange(frames) * HOP
        tables[clip] = ScoreTable(onset, onset + HOP, CLASSES, score, np.arange(frames) + 2)
    return truth, tables, {c: seconds for c in names}


def on_grid(tables: dict[str, ScoreTable], decision: DecisionPolicy | None = None
            ) -> dict[str, ScoreTable]:
    """Each score (after the decision's median filters) moved up to the grid threshold just
    above it (1 above the grid): every grid threshold decides every frame as before."""
    thresholds = np.r_[math.inf, GRID]
    out = {}
    for clip, table in tables.items():
        values = table.scores
        if decision is not None:
            values = filtered(values, decision.resolve(CLASSES).median_filter, HOP)
        j = np.searchsorted(-thresholds, -values, side="right")  # first threshold below
        moved = np.where(j >= 1, thresholds[np.maximum(j - 1, 0)], values)
        moved = np.where(np.isinf(moved), 1.0, moved)
        out[clip] = ScoreTable(table.onset, table.offset, table.classes, moved, table.lines)
    return out


def exact(ref, tables, durations) -> dict[str, float]:
    """The reading by the exact routes, on tables already on the grid."""
    curves = guard_curves(ref, tables, durations)
    hours = sum(durations.values()) / 3600
    out: dict[str, float] = {}
    for name in GUARD:
        for mode, keys in (("typed", CLASSES), ("union", ("*",))):
            found = [budget_curve(curves, name, k, hours, rule="first") for k in keys]
            areas = [f.area for f in found if not math.isnan(f.area)]
            out[f"{name}/{mode}/area"] = float(np.mean(areas)) if areas else math.nan
            for b in BUDGETS:
                at = [f.at_budget(b)[1] for f in found]
                at = [x for x in at if not math.isnan(x)]
                out[f"{name}/{mode}/at_{b:g}"] = float(np.mean(at)) if at else math.nan
    result = psds(tables, ref, durations, SETTINGS)
    out |= {k: result[k]["value"] for k in SETTINGS}
    return out


@pytest.mark.parametrize("seed,decision", [(0, None), (1, None),
                                           (2, DecisionPolicy(median_filter=0.1))])
def test_the_grid_reading_is_the_exact_reading_of_the_tables_on_the_grid(seed, decision):
    ref, tables, durations = corpus(seed)
    material = grid_material(ref, tables, durations, settings=SETTINGS, grid=GRID,
                             decision=decision)
    names = reading_names(material)
    got = dict(zip(names, readings(material, np.ones((1, 10)))[0], strict=True))
    want = exact(ref, on_grid(tables, decision), durations)
    assert set(got) == set(want)
    for name in names:
        assert got[name] == pytest.approx(want[name], abs=1e-9, nan_ok=True), name
    # the reading says something: areas strictly inside (0, 1), PSDS not 0
    assert 0 < got["onset/typed/area"] < 1 and 0 < got["psds1"] < 1


def duplicated(ref, tables, durations, weights):
    """The corpus with clip ``k`` copied ``weights[k]`` times."""
    names = list(tables)
    rows, made, seconds = [], {}, {}
    for k, clip in enumerate(names):
        for copy in range(int(weights[k])):
            name = f"{clip}#{copy}"
            made[name], seconds[name] = tables[clip], durations[clip]
            rows += [(name, a, b, c) for n, a, b, c in zip(ref.clip, ref.onset, ref.offset,
                                                          ref.label, strict=True) if n == clip]
    return EventList.from_rows(rows, clips=list(made)), made, seconds


def test_a_clip_weighed_w_is_the_clip_copied_w_times():
    ref, tables, durations = corpus(3)
    material = grid_material(ref, tables, durations, settings=SETTINGS, grid=GRID)
    weights = np.array([2, 0, 1, 3, 1, 0, 2, 1, 1, 2])
    got = readings(material, np.stack([weights, 2 * np.ones(10)]))
    copied = grid_material(*duplicated(ref, tables, durations, weights), settings=SETTINGS,
                           grid=GRID)
    assert got[0] == pytest.approx(readings(copied, np.ones((1, int(weights.sum()))))[0],
                                   abs=1e-9, nan_ok=True)
    once = readings(material, np.ones((1, 10)))[0]
    assert got[1] == pytest.approx(once, abs=1e-12, nan_ok=True)  # twice each: the same
    assert not np.allclose(got[0], once, equal_nan=True)  # the weights matter


def test_the_seed_clip_draws_average_each_drawn_seed_on_its_drawn_clips():
    ref, first, durations = corpus(4)
    _, second, _ = corpus(5, truth=ref)
    made = [grid_material(ref, t, durations, settings=SETTINGS, grid=GRID)
            for t in (first, second)]
    names, points, draws = seed_clip_readings([lambda m=m: m for m in made], resamples=3,
                                              seed=7)
    ones = np.ones((1, 10))
    assert points == pytest.approx(np.stack([readings(m, ones)[0] for m in made]),
                                   nan_ok=True)
    seeds, clips = next(seed_clip_draws(2, 10, 3, 7))
    for row in range(3):
        parts = [readings(made[s], np.bincount(clips[row, j], minlength=10)[None])[0]
                 for j, s in enumerate(seeds[row])]
        assert draws[row] == pytest.approx(np.mean(parts, axis=0), nan_ok=True)
    assert draws.shape == (3, len(names))


def test_bad_material_and_weights_are_refused():
    ref, tables, durations = corpus(6, clips=4)
    with pytest.raises(SedContractError, match="strictly descending"):
        grid_material(ref, tables, durations, settings=SETTINGS, grid=GRID[::-1])
    material = grid_material(ref, tables, durations, settings=SETTINGS, grid=GRID)
    with pytest.raises(SedContractError, match=r"weights must be \[rows, 4 clips\]"):
        readings(material, np.ones((1, 5)))
    with pytest.raises(SedContractError, match="needs the clips' durations"):
        grid_material(ref, tables, None, settings=SETTINGS, grid=GRID)
    with pytest.raises(SedContractError, match="no curve of 'duration'"):
        grid_material(ref, tables, durations, settings=SETTINGS, grid=GRID,
                      coordinates=("duration",))
