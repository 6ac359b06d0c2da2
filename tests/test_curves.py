"""The guard vector at every threshold (``sedcontract.audit.curves``): at every threshold of a
grid that holds every distinct score, the midpoints between them and values outside them, the
curves' counts equal ``audit`` run on the events thresholded there, count for count, every
coordinate and directional diagnostic, typed per class and union — on generated corpora with
dense, coarse, tied and binary scores, gaps between score rows, -inf and +inf scores, events at
the clip edges, both edge rules, both supported projections, several eps, grids and a median
filter. ``duration`` is audited at the thresholds given; unsupported settings are refused."""

from __future__ import annotations

import numpy as np
import pytest

import sedcontract
from sedcontract.audit import AuditPolicy
from sedcontract.audit.curves import CURVE_COORDINATES, guard_curves
from sedcontract.contracts.parser import parse_contract
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.scores import ScoreTable, tables_to_events
from tests.test_score_psds import corpus

CASES = [  # levels (None: dense), edges, projection, eps frames, median filter s, grid hop s,
    # gaps between rows, infinite scores
    (None, "open", "center", 3, 0.0, 0.02, False, False),
    (3, "closed", "center", 0, 0.0, 0.04, False, True),
    (1, "open", "any_overlap", 5, 0.0, 0.03, True, False),      # binary scores
    (None, "closed", "any_overlap", 2, 0.12, 0.02, True, True),
    (4, "open", "center", 10, 0.12, 0.02, True, False),         # ties, a filter, a wide eps
    (2, "closed", "center", 1, 0.0, 0.03, False, False),
]


def scored_corpus(seed: int, levels: int | None, gaps: bool, infs: bool):
    """A generated corpus (3 classes, 4 clips of 30 rows) with events at both clip edges."""
    ref, tables, durations, classes = corpus(seed, clips=4, n_classes=3, frames=30,
                                             levels=levels)
    rng = np.random.default_rng(seed)
    if gaps or infs:
        changed = {}
        for clip, t in tables.items():
            off, s = t.offset.copy(), t.scores.copy()
            if gaps:  # a third of the rows end 10 ms early: a gap before the next row
                off = np.round(off - 0.01 * (rng.random(len(off)) < 0.3), 6)
            if infs:
                s[rng.random(s.shape) < 0.1] = -np.inf
                s[rng.random(s.shape) < 0.05] = np.inf
            changed[clip] = ScoreTable(t.onset, off, t.classes, s, t.lines)
        tables = changed
    span = max(durations.values())
    rows = [*ref.to_rows(), (ref.clips[0], 0.0, 0.3, classes[0]),
            (ref.clips[1], round(span - 0.2, 3), span, classes[1])]
    return EventList.from_rows(rows, clips=ref.clips), tables, durations, classes


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_curves_equal_an_audit_at_every_threshold(case):
    levels, edges, projection, eps, median, hop, gaps, infs = CASES[case]
    ref, tables, durations, classes = scored_corpus(case, levels, gaps, infs)
    policy = AuditPolicy(edges=edges, projection=projection, eps=eps, hop=hop)
    decision = DecisionPolicy(median_filter=median)
    curves = guard_curves(ref, tables, durations, policy, decision=decision)
    finite = np.concatenate([t.scores.ravel() for t in tables.values()])
    values = np.unique(finite[np.isfinite(finite)])
    grid = sorted({*values.tolist(), *((values[1:] + values[:-1]) / 2).tolist(), -1.0, 2.0})
    changing = set()
    for t in grid:
        events = tables_to_events({c: (table, "scores") for c, table in tables.items()},
                                  decision.with_thresholds(t), "scores")
        report = sedcontract.audit(ref, events, policy, durations=durations,
                                   classes=list(classes))
        typed, union = curves.at(t), curves.at(t, "union")
        for name in CURVE_COORDINATES:
            for c in classes:
                cell = report.modes["typed"].per_class(name)[c]
                assert typed[name][c] == (cell.satisfied, cell.obligations), (t, name, c)
            cell = report.modes["union"].micro(name)
            assert union[name]["*"] == (cell.satisfied, cell.obligations), (t, name)
            changing.add((name, typed[name][classes[0]]))
    # the counts do move with the threshold: the oracle compares something
    assert len(changing) > len(CURVE_COORDINATES) + 3


def test_duration_is_audited_at_the_thresholds_given():
    ref, tables, durations, classes = scored_corpus(7, None, False, False)
    curves = guard_curves(ref, tables, durations, thresholds=(0.2, 0.5, 0.8))
    for k, t in enumerate((0.2, 0.5, 0.8)):
        events = tables_to_events({c: (table, "s") for c, table in tables.items()},
                                  DecisionPolicy(threshold=t), "s")
        report = sedcontract.audit(ref, events, durations=durations, classes=list(classes))
        for c in classes:
            cell = report.modes["typed"].per_class("duration")[c]
            assert curves.duration[c][k] == (cell.satisfied, cell.obligations)
    assert "duration" not in curves.typed  # not claimed exact at every threshold


def test_a_curve_changes_only_at_score_values_and_reads_at_any_threshold():
    ref, tables, durations, classes = scored_corpus(2, 4, False, False)
    curve = guard_curves(ref, tables, durations).typed["silence"][classes[0]]
    scores = {float(v) for t in tables.values() for v in t.scores[:, 0]}
    assert set(curve.thresholds.tolist()) <= scores
    top = float(curve.values[0])
    assert curve.at(top) == curve.base and curve.at(np.inf) == curve.base
    assert curve.at(-np.inf)[1] == curve.base[1]  # silence's obligations never move


def test_what_is_not_exact_here_is_refused_by_name():
    ref, tables, durations, _ = scored_corpus(1, None, False, False)
    with pytest.raises(SedContractError, match="majority"):
        guard_curves(ref, tables, durations, AuditPolicy(projection="majority"))
    with pytest.raises(SedContractError, match="hysteresis"):
        guard_curves(ref, tables, durations, decision=DecisionPolicy(low=0.2))
    with pytest.raises(SedContractError, match="durations"):
        guard_curves(ref, tables, None)
    other = "clause onset: on ref.onset require N[2] pred.onset\n"
    with pytest.raises(SedContractError, match="standard contract"):
        guard_curves(ref, tables, durations, AuditPolicy(contract=parse_contract(other)))
