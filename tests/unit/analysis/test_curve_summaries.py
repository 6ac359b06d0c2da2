"""Blind spots of the curves' summaries (``sedcontract.analysis.curve_summaries``) that a
planted change survived: a budget exactly at a reached rate, a coordinate scoring exactly its
target, adjacent ranges joined, the threshold inside a range open at either end, and which of
two equally wide ranges a decision takes."""

from __future__ import annotations

import math

import numpy as np

from sedcontract.analysis.curve_summaries import (
    BudgetCurve,
    _inside,
    budget_steps,
    decision_of,
    target_ranges,
)
from sedcontract.guard.curves import guard_curves
from sedcontract.traces import EventList
from sedcontract.traces.score_files import ScoreTable


def two_events():
    """One 5 s clip, class x, reference events [1, 2) and [3, 4); scores 0.9 over the first,
    0.4 over the second, 0.1 elsewhere (100 ms frames): missed scores 0/2 above 0.9, 1/2 in
    [0.4, 0.9) and 2/2 below."""
    ref = EventList.from_rows([("c", 1.0, 2.0, "x"), ("c", 3.0, 4.0, "x")])
    k = np.arange(50)
    scores = np.full((50, 1), 0.1)
    scores[(k >= 10) & (k < 20), 0] = 0.9
    scores[(k >= 30) & (k < 40), 0] = 0.4
    table = ScoreTable(np.round(k * 0.1, 6), np.round((k + 1) * 0.1, 6), ("x",), scores, k + 2)
    return guard_curves(ref, {"c": table}, {"c": 5.0})


def test_a_coordinate_at_exactly_its_target_holds_and_adjacent_ranges_join():
    curves = two_events()
    assert curves.typed["missed"]["x"].at(0.5) == (1, 2)
    ranges = target_ranges(curves, {"missed": 0.5}, "x")
    assert len(ranges) == 1 and ranges[0][1] == 0.9  # [.., 0.4) and [0.4, 0.9) joined
    assert target_ranges(curves, {"missed": 0.51}, "x")[0][1] == 0.4  # 1/2 misses 0.51


def test_a_budget_exactly_at_a_reached_rate_allows_that_operating_point():
    rates, scores = np.array([0.0, 10, 20]), np.array([math.nan, 0.5, 0.9])
    curve = BudgetCurve("onset", "x", np.array([math.inf, 0.8, 0.5]), rates, scores, 100.0,
                        0.7, *budget_steps(rates, scores))
    assert curve.at_budget(10.0) == (0.8, 0.5)
    below = curve.at_budget(np.nextafter(10.0, 0))  # just under: the first point only
    assert below[0] == math.inf and math.isnan(below[1])
    assert curve.at_budget(20.0) == (0.5, 0.9) and curve.at_budget(-1.0)[0] == math.inf


def test_the_threshold_inside_a_range_and_the_widest_range_chosen():
    assert _inside(0.25, 0.5) == 0.375  # the middle
    assert _inside(0.3, math.inf) == 0.3  # open at the top: its lower end
    assert _inside(-math.inf, 0.5) == np.nextafter(0.5, -math.inf)  # just below the top
    assert _inside(-math.inf, math.inf) is None
    made, unserved, every = decision_of({"a": [(0.5, 0.75), (0.25, 0.5)],  # equally wide: lower
                                         "b": [(0.1, 0.2), (0.5, math.inf)],  # unbounded wins
                                         "c": [], "d": [(-math.inf, math.inf)]})
    assert made.settings_of("a")[0] == 0.375 and made.settings_of("b")[0] == 0.5
    assert unserved == ["c"] and every == ["d"]
