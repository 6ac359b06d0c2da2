"""The guard vector at every threshold (``sedcontract.guard.curves``): at every threshold of a
grid that holds every distinct score, the midpoints between them and values outside them, the
curves' counts equal ``audit`` run on the events thresholded there, count for count, every
coordinate and directional diagnostic, typed per class and union — on generated corpora with
dense, coarse, tied and binary scores, gaps between score rows, -inf and +inf scores, events at
the clip edges, both edge rules, both supported projections, several eps, grids and a median
filter. ``duration`` is audited at the thresholds given; unsupported settings are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sedcontract
from sedcontract.contracts.parser import parse_contract
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy
from sedcontract.guard.curves import CURVE_COORDINATES, guard_curves
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.score_files import ScoreTable, tables_to_events
from tests.helpers.paths import REPO
from tests.helpers.score_tables import corpus

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


def written_corpus(tmp_path, seed: int, levels: int | None):
    """:func:`scored_corpus` (no gaps, no infinities) written as files: its reference, score
    folder and classes, and the start of an ``audit`` command line reading them."""
    from sedcontract.traces import write_durations, write_events
    from tests.helpers.score_tables import write_tables

    ref, tables, durations, classes = scored_corpus(seed, levels, False, False)
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    folder = write_tables(tmp_path / "scores", tables)
    base = ["audit", "--ref", str(tmp_path / "ref.tsv"), "--durations",
            str(tmp_path / "durations.tsv"), "--pred-scores", str(folder)]
    return ref, tables, durations, classes, folder, base


def assert_same_curves(got, want) -> None:
    """Every coordinate's curve of every class and of the union trace: the same counts with
    nothing active, the same change points and the same counts at each."""
    assert got.classes == want.classes and got.duration == want.duration
    for name in CURVE_COORDINATES:
        for a, b in [*((got.typed[name][c], want.typed[name][c]) for c in want.classes),
                     (got.union[name], want.union[name])]:
            assert a.base == b.base and np.array_equal(a.values, b.values), name
            assert np.array_equal(a.satisfied, b.satisfied), name
            assert np.array_equal(a.obligations, b.obligations), name


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_curves_equal_an_audit_at_every_threshold(case):
    levels, edges, projection, eps, median, hop, gaps, infs = CASES[case]
    ref, tables, durations, classes = scored_corpus(case, levels, gaps, infs)
    policy = AuditPolicy(edges=edges, projection=projection, eps=eps, hop=hop)
    decision = DecisionPolicy(median_filter=median)
    changing = assert_curves_are_audits(ref, tables, durations, policy, decision, classes)
    # the counts do move with the threshold: the oracle compares something
    assert len(changing) > len(CURVE_COORDINATES) + 3


def assert_curves_are_audits(ref, tables, durations, policy, decision, classes) -> set:
    """The curves read at every score, every midpoint and outside them equal ``audit`` of the
    events thresholded there, every coordinate typed and union; the (coordinate, counts)
    pairs of the first class seen, to show the counts moved."""
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
    return changing


def table(scores) -> ScoreTable:
    """One clip's table of one class ``c0`` on a 0.1 s grid."""
    k = np.arange(len(scores))
    return ScoreTable(np.round(k * 0.1, 6), np.round((k + 1) * 0.1, 6), ("c0",),
                      np.asarray(scores, dtype=float)[:, None], k + 2)


def test_a_quiet_stretch_at_a_rows_start_has_no_left_neighbour():
    """A row (clip b) that starts without reference activity: its first frame has no left
    neighbour, so the score that ends the previous row (clip a's high 0.9) must not be read
    as one. Read, it would close a run of clip a into clip b at thresholds below 0.9."""
    tables = {"a": table([0.1, 0.2, 0.9, 0.9]), "b": table([0.6, 0.3, 0.2, 0.8, 0.8, 0.1])}
    ref = EventList.from_rows([("a", 0.2, 0.4, "c0"), ("b", 0.3, 0.5, "c0")], clips=("a", "b"))
    durations = {"a": 0.4, "b": 0.6}
    for projection in ("center", "any_overlap"):
        policy = AuditPolicy(projection=projection, eps=0, hop=0.1)
        seen = assert_curves_are_audits(ref, tables, durations, policy, DecisionPolicy(),
                                        ("c0",))
        at = guard_curves(ref, tables, durations, policy).at(0.5)  # b's 0.6 alone is false
        assert at["false"]["c0"] == (2, 3) and at["merge"]["c0"] == (2, 2)
        assert len(seen) > len(CURVE_COORDINATES)


def test_a_run_only_over_the_gap_between_two_reference_runs_is_false_not_a_merge():
    """A predicted run wholly inside the gap between two reference runs touches neither: it
    is one false run and no merge, though the gap scores above the runs' inner ends; lowered
    below those ends, one run covers both and merges them."""
    tables = {"a": table([0.9, 0.5, 0.6, 0.6, 0.5, 0.9])}
    ref = EventList.from_rows([("a", 0.0, 0.2, "c0"), ("a", 0.4, 0.6, "c0")], clips=("a",))
    policy = AuditPolicy(eps=0, hop=0.1)
    seen = assert_curves_are_audits(ref, tables, {"a": 0.6}, policy, DecisionPolicy(), ("c0",))
    curves = guard_curves(ref, tables, {"a": 0.6}, policy)
    assert curves.at(0.55)["false"]["c0"] == (2, 3)  # the gap's run is the false one
    assert curves.at(0.55)["merge"]["c0"] == (2, 2)  # and merges nothing
    assert curves.at(0.45)["merge"]["c0"] == (0, 1) and curves.at(0.45)["false"]["c0"] == (1, 1)
    assert len(seen) > len(CURVE_COORDINATES)


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


def test_the_budget_area_is_the_mean_score_over_budgets_under_either_rule():
    """Oracle: for each budget on a fine grid, read the score of rule ``best`` (the best of
    every operating point whose false rate is within the budget) and of rule ``first`` (lower
    the threshold from the top, one operating point at a time, until the false rate would
    first exceed the budget); the mean over the budgets equals each rule's area to the grid's
    resolution. Under ``best`` the score never falls as the budget grows."""
    from sedcontract.analysis.curve_summaries import budget_curve

    ref, tables, durations, classes = scored_corpus(4, None, False, False)
    curves = guard_curves(ref, tables, durations)
    hours = sum(durations.values()) / 3600
    differ = 0
    for cls in (classes[0], "*"):
        for name in ("onset", "missed", "silence"):
            best = budget_curve(curves, name, cls, hours, max_rate=20_000.0)
            first = budget_curve(curves, name, cls, hours, max_rate=20_000.0, rule="first")
            false = curves.union["false"] if cls == "*" else curves.typed["false"][cls]
            mine = curves.union[name] if cls == "*" else curves.typed[name][cls]
            points = [(float(t), false.at(float(t)), mine.at(float(t)))
                      for t in best.thresholds]  # descending thresholds
            rates = [(obl - sat) / hours for _, (sat, obl), _ in points]
            scores = [sat / obl if obl else math.nan for _, _, (sat, obl) in points]
            values: dict[str, list[float]] = {"best": [], "first": []}
            budgets = np.linspace(0, 20_000.0, 4001)[:-1] + 2.5
            for x in budgets:
                within = [s for r, s in zip(rates, scores, strict=True)
                          if r <= x and not math.isnan(s)]
                if within:
                    values["best"].append(max(within))
                k = 0
                while k + 1 < len(points) and rates[k + 1] <= x and max(rates[:k + 2]) <= x:
                    k += 1
                if not math.isnan(scores[k]):
                    values["first"].append(scores[k])
            assert best.area == pytest.approx(np.mean(values["best"]), abs=2e-3), (cls, name)
            assert first.area == pytest.approx(np.mean(values["first"]), abs=2e-3), (cls, name)
            at = [best.at_budget(float(x))[1] for x in budgets]
            defined = [v for v in at if not math.isnan(v)]
            assert defined == sorted(defined), (cls, name)  # monotone under best
            assert best.at_budget(-1.0)[0] == first.at_budget(-1.0)[0] == best.thresholds[0]
            differ += best.area != first.area
    assert differ  # the rules read these curves apart


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

    _, _, durations, classes, folder, base = written_corpus(tmp_path, 6, 5)
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
    for extra, message in ((["--curves-max-rate", "50"], "add it"),
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


def test_curves_of_disjoint_clips_join_to_the_curves_of_all():
    from sedcontract.guard.curves import join_curves

    ref, tables, durations, classes = scored_corpus(4, 3, True, True)
    clips = list(ref.clips)
    whole = guard_curves(ref, tables, durations, thresholds=(0.3, 0.6))
    parts = [guard_curves(ref.select(clips=half), {c: tables[c] for c in half},
                          {c: durations[c] for c in half}, thresholds=(0.3, 0.6))
             for half in (clips[:1], clips[1:3], clips[3:])]
    assert_same_curves(join_curves(parts), whole)
    # parts alone do not add up to the whole by accident: each covers fewer obligations
    assert all(p.typed["onset"][classes[0]].base[1] < whole.typed["onset"][classes[0]].base[1]
               or p.typed["onset"][classes[0]].base[1] == 0 for p in parts)
    with pytest.raises(SedContractError, match="do not join"):
        join_curves([whole, guard_curves(ref, tables, durations)])


def test_a_risk_orders_targets_give_the_decision_file(tmp_path, capsys):
    """``--curves-targets speech_gate.yaml``: the risk order's ``targets:`` are the targets
    (the ranges and decision equal those of the same targets written out); a risk order
    without targets, or with a bad one, is refused by file and line."""
    import json
    from pathlib import Path

    from sedcontract.analysis.selection import read_risk_order
    from sedcontract.cli import main
    from sedcontract.errors import TraceFormatError

    gate = Path(sedcontract.__file__).parent / "examples" / "speech_gate.yaml"
    known = [*CURVE_COORDINATES, "duration"]
    assert read_risk_order(gate, known).targets == (("missed", 0.8), ("false", 0.8),
                                                    ("onset", 0.5))
    *_, base = written_corpus(tmp_path, 6, 5)
    base = [*base, "--curves", "--format", "json"]
    found = []
    for targets, out in ((str(gate), "a.yaml"), ("missed=0.8,false=0.8,onset=0.5", "b.yaml")):
        assert main([*base, "--curves-targets", targets, "--curves-decision",
                     str(tmp_path / out)]) == 0
        found.append(json.loads(capsys.readouterr().out)["curves"])
    assert found[0]["ranges"] == found[1]["ranges"]
    assert found[0]["targets"] == {"missed": 0.8, "false": 0.8, "onset": 0.5}
    assert (tmp_path / "a.yaml").read_text() == (tmp_path / "b.yaml").read_text()
    for text, message in (("order: [missed, onset]\nhigh: 1\n", "gives no targets"),
                          ("order: [missed, onset]\nhigh: 1\ntargets: {offset: 0.5}\n",
                           "'offset' is not in 'order'"),
                          ("order: [missed, onset]\nhigh: 1\ntargets: {missed: 1.5}\n",
                           "must be a score in [0, 1]"),
                          ("order: [missed, onset]\nhigh: 1\ntargets: [missed]\n",
                           "must map kinds")):
        (tmp_path / "risk.yaml").write_text(text)
        assert main([*base, "--curves-targets", str(tmp_path / "risk.yaml")]) == 2
        err = capsys.readouterr().err
        assert message in err and "risk.yaml" in err
    with pytest.raises(TraceFormatError, match="row 3"):
        read_risk_order(tmp_path / "risk.yaml", known)
    (tmp_path / "lr=0.1").mkdir()  # a folder of a Hydra run: a file, not targets
    (tmp_path / "lr=0.1" / "gate").write_text(gate.read_text())
    assert main([*base, "--curves-targets", str(tmp_path / "lr=0.1" / "gate")]) == 0
    assert json.loads(capsys.readouterr().out)["curves"]["ranges"] == found[0]["ranges"]
    (tmp_path / "risk.yaml").write_text("order: [missed, duration]\nhigh: 1\n"
                                        "targets: {duration: 0.5}\n")
    assert main([*base, "--curves-targets", str(tmp_path / "risk.yaml")]) == 2
    err = capsys.readouterr().err
    assert "risk.yaml" in err and "no curve of 'duration'" in err


def test_curves_on_an_executor_or_a_pool_equal_one_process():
    """Blocks of clips on an executor (and a pool of processes) give the same curves, and
    duration counts, as one process."""
    from concurrent.futures import ThreadPoolExecutor

    ref, tables, durations, _ = scored_corpus(5, None, True, False)
    policy = AuditPolicy(eps=2)
    whole = guard_curves(ref, tables, durations, policy, thresholds=(0.4,))
    with ThreadPoolExecutor(2) as executor:
        threaded = guard_curves(ref, tables, durations, policy, thresholds=(0.4,),
                                executor=executor, blocks=3)
    pooled = guard_curves(ref, tables, durations, policy, thresholds=(0.4,), jobs=2)
    for other in (threaded, pooled):
        assert_same_curves(other, whole)
    with pytest.raises(SedContractError, match="jobs"):
        guard_curves(ref, tables, durations, jobs=0)


def test_shards_with_curves_merge_to_the_unsharded_audit(tmp_path, capsys):
    """``audit --shard i/n --curves`` writes each shard's curves; ``merge`` joins them into
    the bytes of the unsharded run (JSON, Markdown and CSV rows) and the same decision file;
    shards without curves, or with curves that were tampered with, are refused by file."""
    import json

    from sedcontract.cli import main

    *_, base = written_corpus(tmp_path, 8, None)
    base = [*base, "--curves", "--curves-targets", "missed=0.5,false=0.3", "--median-filter",
            "60ms", "--curves-duration-at", "0.6,0.3"]
    outputs = {}
    for fmt in ("json", "md", "csv"):
        assert main([*base, "--format", fmt, "--system", "s", "--curves-decision",
                     str(tmp_path / f"whole.{fmt}.yaml")]) == 0
        outputs[fmt] = capsys.readouterr().out
    shards = []
    for i in range(3):
        shards.append(tmp_path / f"shard{i}.json")
        assert main([*base, "--shard", f"{i}/3", "--format", "json", "--out",
                     str(shards[-1])]) == 0
    assert "curves" in json.loads(shards[0].read_text())["shard"]
    assert "ranking:curve_onset" in outputs["csv"]
    from sedcontract.traces import read_durations, read_events

    found = json.loads(outputs["json"])["curves"]["duration"]
    expected = guard_curves(read_events(tmp_path / "ref.tsv"), tmp_path / "scores",
                            read_durations(tmp_path / "durations.tsv"),
                            decision=DecisionPolicy(median_filter=0.06),
                            thresholds=(0.3, 0.6)).duration
    assert found["thresholds"] == [0.3, 0.6]
    assert found["counts"] == {k: [list(c) for c in v] for k, v in expected.items()}
    assert any(o for cells in expected.values() for _, o in cells)
    assert "audited at these thresholds only" in outputs["md"]
    for fmt in ("json", "md", "csv"):
        assert main(["merge", *map(str, shards), "--format", fmt, "--system", "s",
                     "--curves-decision", str(tmp_path / f"merged.{fmt}.yaml")]) == 0
        assert capsys.readouterr().out == outputs[fmt]
        assert (tmp_path / f"merged.{fmt}.yaml").read_text() == \
            (tmp_path / f"whole.{fmt}.yaml").read_text()
    assert "median_filter: 60ms" in (tmp_path / "whole.json.yaml").read_text()
    # refused: a shard without curves, curves tampered with
    plain = tmp_path / "plain.json"
    assert main([*base[:7], "--median-filter", "60ms", "--shard", "2/3", "--format", "json",
                 "--out", str(plain)]) == 0
    assert main(["merge", str(shards[0]), str(shards[1]), str(plain)]) == 2
    assert "has no curves" in capsys.readouterr().err
    data = json.loads(shards[1].read_text())
    onset = data["shard"]["curves"]["data"]["curves"]["onset"]
    cls = next(c for c in onset if len(onset[c]["values"]) > 1)
    onset[cls]["values"] = onset[cls]["values"][::-1]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert main(["merge", str(shards[0]), str(tmp_path / "bad.json"), str(shards[2])]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "descend" in err and f"onset, class {cls!r}" in err
    for change, message, every in (  # hostile numbers: refused by file, no traceback
            (lambda d: d["curves"]["data"]["curves"]["onset"]["*"]["values"].__setitem__(
                0, 10**400), "finite number", False),
            (lambda d: d["curves"]["durations"].__setitem__(0, 10**400), "seconds", False),
            (lambda d: d["curves"]["durations"].__setitem__(  # once an OverflowError in fsum
                slice(None), [1e308] * len(d["curves"]["durations"])),
             "seconds in [0, 1e+09]", False),
            (lambda d: d["curves"]["settings"].__setitem__("max_rate", 10**400),
             "other settings", False),
            (lambda d: d["curves"]["settings"].__setitem__("max_rate", 10**400),
             "positive max_rate", True),
            (lambda d: d["curves"]["data"]["curves"]["silence"]["*"].__setitem__(
                "base", [2**53 + 1, 2**53 + 1]), "2^53", False),
            (lambda d: d["curves"]["settings"]["targets"].__setitem__("zebra", 0.5),
             "no curve of 'zebra'", True)):
        paths = []
        for i, shard in enumerate(shards):
            data = json.loads(shard.read_text())
            if every or i == 1:
                change(data["shard"])
            paths.append(tmp_path / f"bad{i}.json")
            paths[-1].write_text(json.dumps(data))
        assert main(["merge", *map(str, paths)]) == 2
        err = capsys.readouterr().err
        assert "bad" in err and message in err and "Traceback" not in err, err
        assert len(err) < 1000  # a hostile number is not printed whole


def test_area_draws_are_the_areas_of_the_resampled_corpora(monkeypatch):
    """Each bootstrap draw of an area equals the area of the curves of that resample built
    as a corpus of its own (each drawn clip a copy under a new name), for every coordinate,
    class and the union trace, with the resamples taken a few at a time; the clips' changes
    sum to the corpus's curves."""
    from sedcontract.analysis import curve_summaries
    from sedcontract.analysis.curve_summaries import area_draws, curve_summary
    from sedcontract.guard.curves import clip_changes
    from sedcontract.resampling import resample_indices

    ref, tables, durations, classes = scored_corpus(9, 4, False, True)
    policy = AuditPolicy(eps=2)
    changes = clip_changes(ref, tables, durations, policy)
    whole = guard_curves(ref, tables, durations, policy)
    for name in CURVE_COORDINATES:  # the clips' changes add up to the corpus's curves
        _, key, value, sat, obl = changes.changes[name]
        for k, c in enumerate([*classes, "*"]):
            curve = whole.union[name] if c == "*" else whole.typed[name][c]
            assert tuple(changes.base[name][:, k].sum(axis=0)) == curve.base
            for t in (0.2, 0.5, 0.9):
                above = (key == k) & (value > t)
                assert (curve.base[0] + int(sat[above].sum()),
                        curve.base[1] + int(obl[above].sum())) == curve.at(t)
    assert_same_curves(changes.total(), whole)
    monkeypatch.setattr(curve_summaries, "DRAW_CELLS", 1)  # one resample at a time
    draws = area_draws(changes, max_rate=2000.0, resamples=4, seed=3)
    clips = list(ref.clips)
    for r, drawn in enumerate(resample_indices(len(clips), 4, 3)):
        names = [f"{clips[i]}#{j}" for j, i in enumerate(drawn)]
        rows = [(f"{clip}#{j}", a, b, c) for j, i in enumerate(drawn)
                for clip, a, b, c in ref.select(clips=[clips[i]]).to_rows()]
        copy = EventList.from_rows(rows, clips=tuple(names))
        source = dict(zip(names, drawn, strict=True))
        curves = guard_curves(copy, {n: tables[clips[i]] for n, i in source.items()},
                              {n: durations[clips[i]] for n, i in source.items()}, policy)
        hours = sum(durations[clips[i]] for i in drawn) / 3600
        areas = curve_summary(curves, hours, 2000.0)["areas"]
        for name in CURVE_COORDINATES:
            for k, c in enumerate([*classes, "*"]):
                expected, got = areas[name][c], draws[name][r, k]
                assert (np.isnan(expected) and np.isnan(got)) or \
                    got == pytest.approx(expected, abs=1e-12), (r, name, c)
    moving = [name for name, d in draws.items()  # areas that move are compared
              if any(len({round(x, 9) for x in d[:, k] if np.isfinite(x)}) > 1
                     for k in range(d.shape[1]))]
    assert len(moving) >= 4, moving


def test_audit_curves_with_bootstrap_gives_each_area_its_interval(tmp_path, capsys):
    """``audit --curves --bootstrap N``: each area has the percentile interval of
    :func:`area_draws` over the clips (the same areas as without it), in JSON and Markdown."""
    import json

    from sedcontract.analysis.curve_summaries import area_draws
    from sedcontract.cli import main
    from sedcontract.guard.curves import clip_changes
    from sedcontract.resampling import percentile_intervals
    from sedcontract.traces import read_durations, read_events

    *_, classes, folder, base = written_corpus(tmp_path, 10, 5)
    base = [*base, "--curves", "--curves-max-rate", "5000", "--format", "json"]
    assert main(base) == 0
    plain = json.loads(capsys.readouterr().out)["curves"]
    assert main([*base, "--bootstrap", "40", "--bootstrap-seed", "7"]) == 0
    drawn = json.loads(capsys.readouterr().out)["curves"]
    assert drawn["areas"] == plain["areas"] and "intervals" not in plain
    draws = area_draws(clip_changes(read_events(tmp_path / "ref.tsv"), folder,
                                    read_durations(tmp_path / "durations.tsv")),
                       5000.0, 40, 7)
    for name, by_key in drawn["intervals"].items():
        keys = [*classes, "*"]
        expected = percentile_intervals(keys, [0.0] * len(keys), draws[name], 0.95, 40)
        for k in keys:
            got, want = by_key[k], expected[k]
            assert got["resamples"] == 40 and got["seed"] == 7
            assert got["defined"] == want.defined
            if want.defined:
                assert (got["lo"], got["hi"]) == pytest.approx((want.lo, want.hi), abs=1e-12)
    assert any(by["*"]["lo"] < by["*"]["hi"] for by in drawn["intervals"].values())
    assert main([*base[:-2], "--bootstrap", "40"]) == 0
    assert "bootstrap intervals over the clips (40 resamples, seed 0)" in \
        capsys.readouterr().out


def test_small_batches_and_boundary_blocks_give_the_same_curves(monkeypatch):
    """Clips in batches of a few cells and reference boundaries in blocks of a few frames (as
    long clips and a wide eps take them) change no count."""
    from sedcontract.guard import curve_changes, curves

    ref, tables, durations, _ = scored_corpus(11, None, True, True)
    policy = AuditPolicy(eps=6, edges="closed")
    whole = guard_curves(ref, tables, durations, policy)
    for module in (curves, curve_changes):  # clips in batches; boundaries in blocks
        monkeypatch.setattr(module, "BATCH_CELLS", 5)
    assert_same_curves(guard_curves(ref, tables, durations, policy), whole)


def test_the_desed_score_folder_script_writes_a_new_folder_only(tmp_path, capsys):
    """``scripts/desed_scores.py OUT``: 1168 score files of 156 rows, the baseline's implied
    scores; an existing OUT is refused and left as it was."""
    import importlib.util

    from sedcontract.traces.score_files import read_scores

    path = REPO / "scripts" / "desed_scores.py"
    spec = importlib.util.spec_from_file_location("desed_scores", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([str(tmp_path / "out")]) == 0
    files = sorted((tmp_path / "out").glob("*.tsv"))
    assert len(files) == 1168
    table = read_scores(files[0])
    assert table.scores.shape == (156, 10) and 0 < table.scores.max() <= 1
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    assert script.main([str(tmp_path / "taken")]) == 2
    assert "exists" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
