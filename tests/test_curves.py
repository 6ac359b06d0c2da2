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


# -- threshold-free summaries ----------------------------------------------------------------


def test_the_budget_area_is_the_mean_score_over_budgets_lowering_the_threshold():
    """Oracle: for each budget on a fine grid, lower the threshold from the top (the
    operating points, one by one) until the false rate would first exceed it, read the score
    there; the mean over the budgets equals the area to the grid's resolution."""
    from sedcontract.analysis.curve_summaries import budget_curve

    ref, tables, durations, classes = scored_corpus(4, None, False, False)
    curves = guard_curves(ref, tables, durations)
    hours = sum(durations.values()) / 3600
    for cls in (classes[0], "*"):
        for name in ("onset", "missed", "silence"):
            found = budget_curve(curves, name, cls, hours, max_rate=20_000.0)
            false = curves.union["false"] if cls == "*" else curves.typed["false"][cls]
            mine = curves.union[name] if cls == "*" else curves.typed[name][cls]
            values = []
            for x in np.linspace(0, 20_000.0, 4001)[:-1] + 2.5:
                chosen = found.thresholds[0]
                for t in found.thresholds:  # down from the top
                    sat, obl = false.at(float(t))
                    if (obl - sat) / hours > x:
                        break
                    chosen = t
                sat, obl = mine.at(float(chosen))
                if obl:
                    values.append(sat / obl)
            assert found.area == pytest.approx(np.mean(values), abs=2e-3), (cls, name)
            assert found.at_budget(-1.0)[0] == found.thresholds[0]


def test_target_ranges_hold_every_target_and_their_decision_file_meets_them(tmp_path):
    """At every threshold of a fine grid, an audit of the thresholded events meets every
    target exactly when the threshold lies in a range; the decision file made of the ranges
    gives each served class a threshold at which its audit meets them, read back from YAML."""
    from sedcontract.analysis.curve_summaries import decision_of, target_ranges
    from sedcontract.traces.decision import decision_yaml, read_decision

    ref, tables, durations, classes = scored_corpus(6, 5, False, False)
    curves = guard_curves(ref, tables, durations)
    targets = {"missed": 0.6, "false": 0.4, "onset": 0.2}
    ranges = {c: target_ranges(curves, targets, c) for c in classes}
    source = {c: (table, "s") for c, table in tables.items()}
    for t in np.linspace(-0.05, 1.05, 45):
        report = sedcontract.audit(ref, tables_to_events(source, DecisionPolicy(threshold=t),
                                                         "s"),
                                   durations=durations, classes=list(classes))
        for c in classes:
            cells = [report.modes["typed"].per_class(n)[c] for n in targets]
            held = all(cell.vacuous or cell.score >= targets[n]
                       for cell, n in zip(cells, targets, strict=True))
            inside = any(lo <= t < hi for lo, hi in ranges[c])
            assert held == inside, (t, c, ranges[c])
    decision, unserved, every = decision_of(ranges)
    (tmp_path / "gate.yaml").write_text(decision_yaml(decision, "targets"))
    again = read_decision(tmp_path / "gate.yaml")
    served = {name for name, _ in decision.classes}
    assert again == decision and served | set(unserved) | set(every) == set(classes) and served
    events = tables_to_events(source, again, "s")
    report = sedcontract.audit(ref, events, durations=durations, classes=list(classes))
    for c in served:
        for name, target in targets.items():
            cell = report.modes["typed"].per_class(name)[c]
            assert cell.vacuous or cell.score >= target, (c, name)


def test_summaries_refuse_what_they_cannot_read():
    from sedcontract.analysis.curve_summaries import budget_curve, target_ranges

    ref, tables, durations, classes = scored_corpus(1, 3, False, False)
    curves = guard_curves(ref, tables, durations)
    with pytest.raises(SedContractError, match="no curve of 'duration'"):
        budget_curve(curves, "duration", classes[0], 1.0)
    with pytest.raises(SedContractError, match="no class 'zebra'"):
        target_ranges(curves, {"missed": 0.5}, "zebra")
    with pytest.raises(SedContractError, match="hours of audio"):
        budget_curve(curves, "onset", classes[0], 0.0)
    with pytest.raises(SedContractError, match="must lie in"):
        target_ranges(curves, {"missed": 1.5}, classes[0])


def test_audit_curves_on_the_command_line_writes_a_decision_that_audit_applies(tmp_path,
                                                                              capsys):
    """``audit --pred-scores DIR --curves --curves-targets … --curves-decision FILE``: the
    areas in Markdown and JSON equal the library's, the decision file applied by ``audit
    --decision`` meets every target of the classes it serves; misuse is refused by name."""
    import json

    from sedcontract.analysis.curve_summaries import curve_summary
    from sedcontract.cli import main
    from sedcontract.traces import write_durations, write_events
    from tests.test_report_rows import write_tables

    ref, tables, durations, classes = scored_corpus(6, 5, False, False)
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    folder = write_tables(tmp_path / "scores", tables)
    base = ["audit", "--ref", str(tmp_path / "ref.tsv"), "--durations",
            str(tmp_path / "durations.tsv"), "--pred-scores", str(folder)]
    targets = "missed=0.6,false=0.4,onset=0.2"
    assert main([*base, "--curves", "--curves-targets", targets, "--curves-decision",
                 str(tmp_path / "gate.yaml"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["curves"]
    from sedcontract.traces import read_durations, read_events

    expected = curve_summary(guard_curves(read_events(tmp_path / "ref.tsv"), folder,
                                          read_durations(tmp_path / "durations.tsv")),
                             sum(durations.values()) / 3600, 100.0,
                             {"missed": 0.6, "false": 0.4, "onset": 0.2})
    for name, by_class in expected["areas"].items():
        for cls, value in by_class.items():
            got = data["areas"][name][cls]
            assert (got is None and np.isnan(value)) or got == pytest.approx(value, abs=1e-12)
    served = data["thresholds"]
    assert served and set(served) | set(data["unserved"]) == set(classes)
    assert main([*base, "--decision", str(tmp_path / "gate.yaml"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for cls in served:
        for name, target in (("missed", 0.6), ("false", 0.4), ("onset", 0.2)):
            cell = report["modes"]["typed"]["coordinates"][name]["per_class"][cls]
            assert cell["score"] is None or cell["score"] >= target, (cls, name)
    assert main([*base, "--curves", "--curves-figure", str(tmp_path / "curves.png")]) == 0
    assert "## The guard vector at every threshold" in capsys.readouterr().out
    figure = (tmp_path / "curves.png").read_bytes()
    assert figure[:8] == b"\x89PNG\r\n\x1a\n"
    import struct

    assert struct.unpack(">II", figure[16:24])[0] == 1200  # drawn for the page's width
    for extra, message in ((["--curves", "--format", "csv"], "md or json"),
                           (["--curves-max-rate", "50"], "add it"),
                           (["--curves-figure", str(tmp_path / "f.png")], "add --curves"),
                           (["--curves", "--curves-targets", "missed=0.5,missed=0.6"],
                            "names missed twice"),
                           (["--curves", "--curves-targets", "duration=0.5"],
                            "no curve of 'duration'"),
                           (["--curves", "--projection", "majority"], "majority"),
                           (["--curves-targets", "missed=0.5"], "add --curves"),
                           (["--curves", "--curves-targets", "missed=2"], "COORDINATE=SCORE"),
                           (["--curves", "--curves-decision", str(tmp_path / "x.yaml")],
                            "give the targets")):
        assert main([*base, *extra]) == 2
        assert message in capsys.readouterr().err
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred",
                 str(tmp_path / "ref.tsv"), "--curves"]) == 2
    assert "give --pred-scores and --durations" in capsys.readouterr().err


def test_a_per_class_decision_and_its_median_filters_go_through_to_the_decision_file(tmp_path):
    """Curves under a decision with per-class settings (one class's own median filter, one's
    own threshold): exact against the audit of that decision's events at every threshold,
    and the decision file written from the ranges keeps the filters it was measured under."""
    from sedcontract.analysis.curve_summaries import decision_of, target_ranges

    ref, tables, durations, classes = scored_corpus(3, None, False, False)
    decision = DecisionPolicy(median_filter=0.08, classes={
        classes[1]: {"median_filter": 0.2}, classes[2]: {"threshold": 0.9}})
    curves = guard_curves(ref, tables, durations, decision=decision)
    source = {c: (table, "s") for c, table in tables.items()}
    for t in (0.15, 0.4, 0.75):  # the curves' one threshold, for every class
        events = tables_to_events(source, decision.with_thresholds(dict.fromkeys(classes, t)),
                                  "s")
        report = sedcontract.audit(ref, events, durations=durations, classes=list(classes))
        for c in classes:
            for name in ("onset", "false", "fragmentation"):
                cell = report.modes["typed"].per_class(name)[c]
                assert curves.at(t)[name][c] == (cell.satisfied, cell.obligations)
    ranges = {c: target_ranges(curves, {"missed": 0.3}, c) for c in classes}
    made, _, _ = decision_of(ranges, decision)
    assert made.settings_of(classes[1])[1] == 0.2 and made.settings_of(classes[0])[1] == 0.08
    with pytest.raises(SedContractError, match="hysteresis"):
        guard_curves(ref, tables, durations, decision=DecisionPolicy(classes={
            classes[0]: {"low": 0.1}}))


def test_edge_cases_the_audit_also_meets():
    """A +inf score (its breakpoint stands for no finite threshold) leaves the real range;
    a class without reference events is served by every threshold and said so; a NaN score
    is refused by row and
    class; an eps wider than every clip costs what the clip does."""
    from sedcontract.analysis.curve_summaries import decision_of, target_ranges

    ref, tables, durations, classes = scored_corpus(5, 4, False, True)
    curves = guard_curves(ref, tables, durations)
    for c in classes:
        for lo, hi in target_ranges(curves, {"missed": 0.2}, c):
            assert lo < hi and not (lo == hi == np.inf)
    quiet = EventList.from_rows([r for r in ref.to_rows() if r[3] != classes[2]],
                                clips=ref.clips)
    found = guard_curves(quiet, tables, durations)
    assert target_ranges(found, {"missed": 0.9}, classes[2]) == [(-np.inf, np.inf)]
    _, unserved, every = decision_of({classes[2]: [(-np.inf, np.inf)], classes[0]: []})
    assert every == [classes[2]] and unserved == [classes[0]]
    broken = dict(tables)
    t = broken[ref.clips[0]]
    scores = t.scores.copy()
    scores[3, 1] = np.nan
    broken[ref.clips[0]] = ScoreTable(t.onset, t.offset, t.classes, scores, t.lines)
    with pytest.raises(SedContractError, match=f"row {int(t.lines[3])}, class 'c1'"):
        guard_curves(ref, broken, durations)
    wide = guard_curves(ref, tables, durations, AuditPolicy(eps=10**9))
    narrow = guard_curves(ref, tables, durations, AuditPolicy(eps=10**4))
    assert wide.at(0.5) == narrow.at(0.5)
