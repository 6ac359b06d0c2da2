"""``sedcontract tune``: per-class thresholds and median filters tuned on validation scores for a
named objective, written as a decision file; applied with ``--decision`` to validation it
gives each class its tuned value (the classes compose), and on held-out clips of the same
system it beats the best single setting where the classes need different settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sedcontract.analysis.tuning import choose, tune
from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList, write_durations, write_events
from sedcontract.traces.decision import read_decision
from sedcontract.traces.score_files import scores_tsv

HOP = 0.02
CLASSES = ("a", "b")


def split(tmp_path, name: str, seed: int, clips: int = 6):
    """Clips of 6 s: class a's events score 0.4 (its false bumps 0.2), class b's score 0.9
    with a one-frame dip to 0 in the middle (its false bumps 0.6). Best per class: a at 0.3
    (0.2 or 0.3, the nearer 0.5), b at 0.6 with a median filter that fills the dip; no single
    threshold serves both."""
    rng = np.random.default_rng(seed)
    folder = tmp_path / name
    folder.mkdir()
    rows, durations = [], {}
    n = round(6.0 / HOP)
    for i in range(clips):
        clip = f"{name}{i}"
        durations[clip] = 6.0
        scores = np.full((n, 2), 0.1)
        for c, (level, bump) in enumerate(((0.4, 0.2), (0.9, 0.6))):
            start = int(rng.integers(20, 120))
            length = int(rng.integers(40, 80))
            scores[start:start + length, c] = level
            if c == 1:
                scores[start + length // 2, c] = 0.0
            rows.append((clip, start * HOP, (start + length) * HOP, CLASSES[c]))
            b = int(rng.integers(200, 280))
            scores[b:b + 10, c] = bump
        (folder / f"{clip}.tsv").write_text(scores_tsv(scores, CLASSES, HOP))
    ref, dur = tmp_path / f"{name}.tsv", tmp_path / f"{name}_durations.tsv"
    write_events(ref, EventList.from_rows(rows, clips=tuple(durations)))
    write_durations(dur, durations)
    return folder, ref, dur


def test_each_class_gets_its_own_setting_and_the_file_gives_its_values(tmp_path, capsys):
    folder, ref, durations = split(tmp_path, "val", 0)
    tuning = tune(ref, folder, durations, "event", thresholds=(0.1, 0.3, 0.5, 0.6, 0.8),
                  median_filters=(0.0, 0.06))
    assert tuning.decision.settings_of("a") == (0.3, 0.0, None)
    assert tuning.decision.settings_of("b") == (0.6, 0.06, None)
    assert tuning.macro("tuned") == 1.0 > tuning.macro("global")
    # the decision file through the command line gives each class its tuned value
    out = tmp_path / "decision.yaml"
    assert main(["tune", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(folder), "--objective", "event", "--thresholds", "0.1,0.3,0.5,0.6,0.8",
                 "--median-filters", "0,60ms", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| b | 0.6 | 0.06 | 1.000 |" in printed and "| macro | | | 1.000 |" in printed
    assert read_decision(out) == tuning.decision
    assert main(["scores", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(folder), "--decision", str(out), "--format", "json"]) == 0
    per_class = json.loads(capsys.readouterr().out)["scores"]["event"]["per_class"]
    for c, name in enumerate(CLASSES):
        assert per_class[name]["f1"] == tuning.values[tuning.chosen[c], c] == 1.0


def test_tuned_on_validation_it_serves_held_out_clips(tmp_path, capsys):
    """Tuned on one split, the decision (and the best single setting, written beside it as the
    control) applied to other clips: per class tuned beats global there too."""
    val, val_ref, val_dur = split(tmp_path, "val", 1)
    test, test_ref, test_dur = split(tmp_path, "test", 2)
    tuned, single = tmp_path / "tuned.yaml", tmp_path / "global.yaml"
    assert main(["tune", "--ref", str(val_ref), "--durations", str(val_dur), "--pred-scores",
                 str(val), "--objective", "intersection", "--thresholds", "0.1:0.9:0.1",
                 "--median-filters", "0,60ms", "--out", str(tuned), "--global-out",
                 str(single)]) == 0
    capsys.readouterr()
    macro = {}
    for name, path in (("tuned", tuned), ("global", single)):
        assert main(["scores", "--ref", str(test_ref), "--durations", str(test_dur),
                     "--pred-scores", str(test), "--decision", str(path), "--format",
                     "json"]) == 0
        macro[name] = json.loads(capsys.readouterr().out)["scores"]["intersection"]["macro"]
    assert macro["tuned"]["f1"] == 1.0 > macro["global"]["f1"]


def test_a_guard_coordinate_and_logic_are_objectives(tmp_path):
    """The typed vector's per-class coordinate (here onset) and logic are tuned for like the
    F1 scores; an unknown objective is refused with the list of objectives."""
    folder, ref, durations = split(tmp_path, "val", 3, clips=3)
    onset = tune(ref, folder, durations, "onset", thresholds=(0.1, 0.3, 0.6),
                 median_filters=(0.0,))
    # class b's onsets are found at 0.6 (its bump is not above it) and at 0.3 and 0.1 too:
    # ties go to the threshold nearest 0.5
    assert onset.decision.settings_of("b")[0] == 0.6
    assert not np.isnan(onset.values).all()
    logic = tune(ref, folder, durations, "logic", thresholds=(0.1, 0.3, 0.6),
                 median_filters=(0.0,))
    assert logic.decision.settings_of("a")[0] == 0.3
    with pytest.raises(SedContractError, match="unknown objective 'f1'; choose one of event, "
                                               "intersection, segment, frame, onset"):
        tune(ref, folder, durations, "f1")


def test_a_risk_order_is_an_objective_the_mean_of_its_high_risk_kinds(tmp_path, capsys):
    """``--objective risk --risk-order FILE``: each candidate's per-class value is the mean of
    the non-vacuous scores of the order's high-risk kinds (a coordinate and a diagnostic here,
    read off each candidate's audit); a high-risk kind the contract cannot score is refused,
    named, and a risk order goes with --objective risk only."""
    import sedcontract
    from sedcontract.analysis.selection import RiskOrder
    from sedcontract.traces import read_durations, read_events
    from sedcontract.traces.decision import DecisionPolicy
    from sedcontract.traces.given import TableMapping, detections, score_source

    folder, ref, durations = split(tmp_path, "val", 3, clips=3)
    grid = {"thresholds": (0.1, 0.3, 0.6), "median_filters": (0.0, 0.06)}
    order = RiskOrder(("false", "leakage", "onset"), frozenset({"false", "leakage"}))
    risk = tune(ref, folder, durations, "risk", risk=order, **grid)
    false = tune(ref, folder, durations, "false", **grid)
    events_ref, seconds = read_events(ref), read_durations(durations)
    tables = TableMapping(dict(score_source(folder, events_ref.clips).tables()))
    for k, (t, m) in enumerate(risk.candidates):
        events = detections(tables, events_ref, DecisionPolicy(threshold=t, median_filter=m),
                            "scores")
        typed = sedcontract.audit(events_ref, events, durations=seconds).modes["typed"]
        for c, name in enumerate(CLASSES):
            cells = [typed.per_class(kind)[name] for kind in ("false", "leakage")]
            known = [cell.score for cell in cells if not cell.vacuous]
            expected = sum(known) / len(known) if known else np.nan
            assert np.isclose(risk.values[k, c], expected, equal_nan=True), (t, m, name)
            assert np.isclose(false.values[k, c], cells[0].score if not cells[0].vacuous
                              else np.nan, equal_nan=True)
    assert not np.array_equal(risk.values, false.values, equal_nan=True)
    with pytest.raises(SedContractError, match="a risk order is the objective risk"):
        tune(ref, folder, durations, "false", risk=order, **grid)
    (tmp_path / "risk.yaml").write_text("order: [false, clipping]\nhigh: 2\n")
    args = ["tune", "--ref", str(ref), "--pred-scores", str(folder), "--durations",
            str(durations), "--objective", "risk", "--risk-order", str(tmp_path / "risk.yaml"),
            "--thresholds", "0.3,0.6", "--median-filters", "0", "--out",
            str(tmp_path / "tuned.yaml")]
    assert main(args) == 2
    assert "clipping" in capsys.readouterr().err
    (tmp_path / "risk.yaml").write_text("order: [false, leakage, onset]\nhigh: 2\n")
    assert main(args) == 0 and "Tuned for risk per class" in capsys.readouterr().out
    assert main([*args[:8], "logic", *args[9:]]) == 2  # a risk order without --objective risk
    assert "go together" in capsys.readouterr().err


def test_ties_and_vacuous_classes_follow_the_declared_rule():
    """Equal values go to the smaller median filter, then the threshold nearest 0.5; a class
    vacuous everywhere keeps the best single setting and is named."""
    candidates = ((0.3, 0.0), (0.7, 0.0), (0.5, 0.2), (0.4, 0.0))
    values = np.array([[0.8, np.nan], [0.8, np.nan], [0.8, np.nan], [0.7, np.nan]])
    tuning = choose("event", ("x", "y"), candidates, values)
    assert tuning.candidates[tuning.chosen[0]] == (0.3, 0.0)  # 0.3 and 0.7 tie: 0.3 first
    assert tuning.vacuous == ("y",) and tuning.chosen[1] == tuning.global_index
    with pytest.raises(SedContractError, match="vacuous for every class"):
        choose("event", ("y",), candidates[:1], np.array([[np.nan]]))


def test_tune_refuses_to_write_onto_its_inputs(tmp_path, capsys):
    folder, ref, _ = split(tmp_path, "val", 4, clips=2)
    before = ref.read_text()
    assert main(["tune", "--ref", str(ref), "--pred-scores", str(folder), "--objective",
                 "event", "--out", str(ref)]) == 2
    assert ref.read_text() == before
    assert "it is also an input" in capsys.readouterr().err


def test_tune_some_classes_and_a_threshold_range_that_stops_at_its_end(tmp_path):
    """``--classes a`` tunes a alone (the reference's b left out, not refused); a range
    START:STOP:STEP never passes STOP."""
    from sedcontract.cli.options import threshold_list as _thresholds

    folder, ref, durations = split(tmp_path, "val", 5, clips=3)
    tuning = tune(ref, folder, durations, "event", thresholds=(0.1, 0.3, 0.6),
                  median_filters=(0.0,), classes=["a"])
    assert tuning.classes == ("a",) and tuning.decision.settings_of("a")[0] == 0.3
    assert _thresholds("0:1.1:0.4") == (0.0, 0.4, 0.8)
    assert _thresholds("0.2:0.9:0.4") == (0.2, 0.6)
    assert _thresholds("0.1:0.9:0.1")[-1] == 0.9 and len(_thresholds("0.1:0.9:0.1")) == 9
    # STOP kept where the float division falls just short of a whole number of steps
    assert (0.3 - 0.1) / 0.1 < 2 and _thresholds("0.1:0.3:0.1") == (0.1, 0.2, 0.3)
    assert _thresholds("0.7:0.9:0.1") == (0.7, 0.8, 0.9)  # and a hair past: not one more


def test_an_infinite_or_huge_threshold_range_is_refused_before_allocation(capsys):
    """``-inf:inf:1`` and ``0:inf:1`` once ended in OverflowError; a finite range of more than
    1000 thresholds is refused by its count, before any is made."""
    from sedcontract.cli import main

    for grid, message in (("-inf:inf:1", "START, STOP and STEP must be finite numbers"),
                          ("0:inf:1", "START, STOP and STEP must be finite numbers"),
                          ("0:1:nan", "START, STOP and STEP must be finite numbers"),
                          ("0:1e300:1e-300", "thresholds: at most 1000")):
        assert main(["tune", "--ref", "r.tsv", "--pred-scores", "s", "--durations", "d.tsv",
                     f"--thresholds={grid}", "--out", "o.yaml"]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_median_filters_in_seconds_snap_to_odd_frame_counts_and_the_output_says_so(tmp_path,
                                                                                   capsys):
    """At 20 ms frames a 40 ms filter is 2 frames, off-centre (a one-frame dilation): tune
    snaps each filter of its grid to the nearest odd frame count (20 ms: 1 frame, off; 40 ms:
    3 frames, 60 ms; 100 ms stays 5), tunes on those, prints the snapping and writes the
    filters it used."""
    folder, ref, durations = split(tmp_path, "val", 0)
    tuning = tune(ref, folder, durations, "event", thresholds=(0.3, 0.6),
                  median_filters=(0.0, 0.02, 0.04, 0.1))
    assert sorted({m for _, m in tuning.candidates}) == [0.0, 0.06, 0.1]
    assert tuning.snapped == ((0.02, 0.0), (0.04, 0.06)) and tuning.hop == HOP
    out = tmp_path / "decision.yaml"
    assert main(["tune", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(folder), "--objective", "event", "--thresholds", "0.3,0.6",
                 "--median-filters", "0,20ms,40ms,100ms", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("Median filters snapped to odd frame counts of 20 ms (an even count is "
            "off-centre): 0.02 s → off (1 frame), 0.04 s → 0.06 s (3 frames)") in printed
    decision = read_decision(out)
    for name in CLASSES:
        assert round(decision.settings_of(name)[1] / HOP) % 2 == 1 or \
            decision.settings_of(name)[1] == 0.0
