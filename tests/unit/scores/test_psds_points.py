"""PSDS from operating-point tables against psds_eval itself (the current release, run in its own
environment, .venv-oracle, which `make test` makes: it needs numpy<2 and pandas<3): the DCASE
baseline's 50 operating points on DESED validation in both scenarios, generated cases with
cross-triggers under every parameter, hand-computed rates, and what is done where psds_eval
refuses an input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.scores.psds.operating_points import point_rates, psds_of_points, read_points
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import (
    EventList,
    read_events,
    write_durations,
    write_events,
)
from tests.helpers.paths import TEST_DATA

DATA = TEST_DATA / "real_dcase"


def test_rates_of_a_hand_computed_operating_point():
    """Reference a [0, 2) and b [4, 6) in a 10 s clip. Detections: a [0, 2) (a hit), a [4, 6)
    (all of it on b: a cross-trigger on b and a false positive), b [8, 9) (on nothing but the
    world: a false positive)."""
    ref = EventList.from_rows([("x", 0.0, 2.0, "a"), ("x", 4.0, 6.0, "b")])
    det = EventList.from_rows([("x", 0.0, 2.0, "a"), ("x", 4.0, 6.0, "a"),
                               ("x", 8.0, 9.0, "b")])
    rates, joined = point_rates([det], ref, {"x": 10.0}, PRESETS["psds2"])
    assert rates.tpr[:, 0].tolist() == [1.0, 0.0]
    assert rates.fpr[:, 0].tolist() == [360.0, 360.0]  # one per 10 s = 360 per hour
    assert rates.ctr[0, 1, 0] == 3600.0 / 2.0  # one per 2 s of b
    assert np.isnan(rates.ctr[0, 0, 0]) and rates.ctr[1, 0, 0] == 0.0
    assert rates.tpr[:, -1].tolist() == [0.0, 0.0] and joined == {"ref": 0, "points": 0}
    # a detection covering 60 % of its reference misses under dtc/gtc 0.7 and hits under 0.1
    half = EventList.from_rows([("x", 0.0, 1.2, "a")])
    assert point_rates([half], ref, {"x": 10.0}, PRESETS["psds1"])[0].tpr[0, 0] == 0.0
    assert point_rates([half], ref, {"x": 10.0}, PRESETS["psds2"])[0].tpr[0, 0] == 1.0


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    ref = EventList.from_rows([("x", 0.0, 2.0, "a"), ("x", 4.0, 6.0, "b")])
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", {"x": 10.0})
    points = tmp_path / "points"
    points.mkdir()
    for i, off in enumerate((2.0, 1.0)):
        write_events(points / f"th_{i}.tsv", EventList.from_rows([("x", 0.0, off, "a")]))
    return tmp_path / "ref.tsv", tmp_path / "durations.tsv", points


def test_scenarios_and_parameters_are_chosen_on_the_command_line(tmp_path, capsys):
    ref, durations, points = _files(tmp_path)
    args = ["scores", "--ref", str(ref), "--durations", str(durations), "--pred-points",
            str(points), "--format", "json"]
    assert main([*args, "--psds", "psds2,custom", "--psds-alpha-st", "0.25",
                 "--psds-max-efpr", "50", "--psd-roc", str(tmp_path / "roc.png")]) == 0
    data = json.loads(capsys.readouterr().out)["psds"]
    changed = "psds2 (alpha_st 0.25, max_efpr 50)"  # a changed preset is named with its changes
    assert list(data) == [changed, "custom"]
    assert data[changed]["settings"] == {**PRESETS["psds2"].as_dict(), "alpha_st": 0.25,
                                         "max_efpr": 50.0}
    assert data["custom"]["settings"] == {**PsdsSettings().as_dict(), "alpha_st": 0.25,
                                          "max_efpr": 50.0}
    # class a found at both points, b never: the spread across classes lowers the score
    assert 0 < data["custom"]["value"] < data["custom"]["per_class"]["a"] == 1.0
    assert (tmp_path / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(args[:-2]) == 0
    out = capsys.readouterr().out
    assert "psds_eval's rule, from 2 operating points" in out and "| psds1 |" in out


@pytest.mark.parametrize("extra, message", [
    (["--psds", "psds3"], "unknown PSDS scenario 'psds3'"),
    (["--psds-dtc", "1.5"], "PSDS dtc must be a number in [0, 1]"),
    (["--psds-max-efpr", "0"], "PSDS max_efpr must be a number > 0"),
])
def test_bad_psds_parameters_are_refused_by_name(tmp_path, capsys, extra, message):
    ref, durations, points = _files(tmp_path)
    assert main(["scores", "--ref", str(ref), "--durations", str(durations), "--pred-points",
                 str(points), *extra]) == 2
    assert message in capsys.readouterr().err


def test_an_operating_point_naming_an_unknown_clip_or_label_names_its_row(tmp_path):
    ref = EventList.from_rows([("x", 0.0, 2.0, "a"), ("x", 4.0, 6.0, "b")])
    for row, message in ((("y", 0.0, 1.0, "a"), "clip 'y' is neither in the reference nor in "
                          "the durations file"),
                         (("x", 0.0, 1.0, "c"), "label 'c' is not one of the classes")):
        path = tmp_path / "point.tsv"
        write_events(path, EventList.from_rows([("x", 0.0, 1.0, "a"), row]))
        with pytest.raises(TraceFormatError, match=message) as info:
            psds_of_points(read_points([path]), ref, {"x": 10.0})
        assert (info.value.path, info.value.row) == (str(path), 3)


def test_psds_needs_durations_and_reference_events_of_every_class(tmp_path, capsys):
    ref, durations, points = _files(tmp_path)
    assert main(["scores", "--ref", str(ref), "--pred-points", str(points)]) == 2
    assert "PSDS needs clip durations" in capsys.readouterr().err
    with pytest.raises(SedContractError, match=r"none of c \(its TPR would be undefined"):
        psds_of_points(read_points([points]), read_events(ref), {"x": 10.0},
                       classes=["a", "b", "c"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SedContractError, match="no operating-point tables"):
        read_points([tmp_path / "empty"])
    with pytest.raises(SedContractError, match=r"durations\.tsv \(a durations table: give it "
                                               r"with --durations\)"):
        read_points([durations])  # a file of another kind is named with what it is


def test_operating_points_go_through_the_class_map_like_other_predictions(tmp_path, capsys):
    ref, durations, points = _files(tmp_path)
    mapped = tmp_path / "mapped"
    mapped.mkdir()
    for table in sorted(points.iterdir()):  # the system's own name for class a, and a dropped one
        rows = read_events(table).to_rows()
        write_events(mapped / table.name, EventList.from_rows(
            [(c, on, off, "alpha") for c, on, off, _ in rows] + [("x", 7.0, 8.0, "noise")]))
    (tmp_path / "map.tsv").write_text("source\ttarget\nalpha\ta\nnoise\t-\nb\tb\n")
    base = ["scores", "--ref", str(ref), "--durations", str(durations), "--format", "json"]
    assert main([*base, "--pred-points", str(points)]) == 0
    direct = json.loads(capsys.readouterr().out)["psds"]
    assert main([*base, "--pred-points", str(mapped), "--class-map",
                 str(tmp_path / "map.tsv")]) == 0
    assert json.loads(capsys.readouterr().out)["psds"] == direct
    assert main([*base, "--pred-points", str(points), "--pred-scores", str(points)]) == 2
    assert "not both" in capsys.readouterr().err


# ---- hardening (issue 32) ----

def test_a_preset_with_a_changed_value_is_named_with_the_change(tmp_path, capsys):
    """``--psds psds1 --psds-dtc 0.5`` was still labelled "psds1"."""
    ref, durations, points = _files(tmp_path)
    args = ["scores", "--ref", str(ref), "--durations", str(durations), "--pred-points",
            str(points), "--format", "json", "--psds", "psds1"]
    assert main([*args, "--psds-dtc", "0.5"]) == 0
    data = json.loads(capsys.readouterr().out)["psds"]
    assert list(data) == ["psds1 (dtc 0.5)"] and data["psds1 (dtc 0.5)"]["settings"]["dtc"] == 0.5
    assert main([*args, "--psds-dtc", "0.7"]) == 0  # the preset's own value: still the preset
    assert list(json.loads(capsys.readouterr().out)["psds"]) == ["psds1"]
    assert main([*args[:-1], "psds1", "--psds-dtc", "0.5", "--format", "md"]) == 0
    assert "| psds1 (dtc 0.5) | " in capsys.readouterr().out


def test_psds_options_without_a_source_of_psds_are_refused_by_name(tmp_path, capsys):
    """``--psds`` with event predictions printed nothing about PSDS."""
    ref, durations, points = _files(tmp_path)
    pred = next(points.iterdir())
    base = ["--ref", str(ref), "--durations", str(durations), "--pred", str(pred)]
    for command in ("scores", "audit"):
        for extra, named in ((["--psds", "psds1"], "--psds"),
                             (["--psds-cttc", "0.5", "--psds-cut"], "--psds-cttc and --psds-cut")):
            assert main([command, *base, *extra]) == 2
            err = capsys.readouterr().err
            assert f"{named} set PSDS, which these inputs do not give: PSDS comes from " \
                   "--pred-points (operating-point tables) or --pred-scores" in err


def test_durations_that_add_up_to_no_audio_are_refused_not_a_psds_of_0(tmp_path, capsys):
    """Every duration 0 gave PSDS 0.0 with a numpy divide warning (points) and an IndexError
    (score files): a false-positive rate per hour of no audio is undefined."""
    import warnings

    ref, _, points = _files(tmp_path)
    zero = tmp_path / "zero.tsv"
    write_durations(zero, {"x": 0.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["scores", "--ref", str(ref), "--durations", str(zero), "--pred-points",
                     str(points), "--duration-tolerance", "10s"]) == 2
    assert "the durations of the 1 clip(s) add up to 0 s: false positives per hour of no " \
           "audio are undefined" in capsys.readouterr().err
    with pytest.raises(SedContractError, match="add up to 0 s"):
        psds_of_points(read_points([points]), read_events(ref), {"x": 0.0})


def test_files_that_are_not_operating_points_are_named_with_the_option_they_belong_to(
        tmp_path, capsys):
    """A --pred-points folder that also holds the ground truth and durations, or a folder of
    score files, said nothing useful (or read them as tables)."""
    ref, durations, points = _files(tmp_path)
    shutil.copy(ref, points / "ground_truth.tsv")
    shutil.copy(durations, points / "durations.tsv")
    args = ["scores", "--ref", str(ref), "--durations", str(durations), "--pred-points"]
    assert main([*args, str(points)]) == 2
    err = capsys.readouterr().err
    assert f"{points}: 2 file(s) here are not operating-point tables" in err
    assert f"durations.tsv (the same as --durations {durations})" in err
    assert f"ground_truth.tsv (the same as --ref {ref})" in err
    scores = tmp_path / "scores"
    scores.mkdir()
    (scores / "x.tsv").write_text("onset\toffset\ta\tb\n0\t10\t0.5\t0.1\n")
    assert main([*args, str(scores)]) == 2
    assert "x.tsv (a score file (onset offset <class…>): give its folder with --pred-scores)" \
        in capsys.readouterr().err
    (points / "ground_truth.tsv").unlink()
    (points / "durations.tsv").unlink()
    # an empty table (no detection at a threshold) and one without a header are points
    (points / "th_9.tsv").write_text("")
    (points / "th_8.tsv").write_text("x.wav\t0.0\t0.5\ta\n")
    assert main([*args, str(points), "--psds", "custom"]) == 0
    assert "| custom | " in capsys.readouterr().out
    assert main(["audit", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(points)]) == 2
    assert "this is a table of events (an operating point, or a system's output), not frame " \
           "scores; give a folder of such tables with --pred-points" in capsys.readouterr().err


def test_joined_overlaps_of_psds_from_points_are_warned_of_on_standard_error(tmp_path,
                                                                           capsys):
    """They were said only in the Markdown and JSON, where --pred warns on stderr."""
    ref = EventList.from_rows([("x", 0.0, 2.0, "a"), ("x", 1.0, 3.0, "a"), ("x", 4.0, 6.0, "b")])
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", {"x": 10.0})
    (tmp_path / "points").mkdir()
    write_events(tmp_path / "points" / "th.tsv",
                 EventList.from_rows([("x", 0.0, 1.0, "a"), ("x", 0.5, 1.5, "a")]))
    assert main(["scores", "--ref", str(tmp_path / "ref.tsv"), "--durations",
                 str(tmp_path / "durations.tsv"), "--pred-points",
                 str(tmp_path / "points")]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 reference event(s) overlap or touch an earlier event of their clip and " \
           f"class and are merged with it (first: {tmp_path / 'ref.tsv'}, row 3)" in err
    assert "warning: 1 detection(s) of the operating points overlap an earlier one of their " \
           "clip and class and are joined with it for PSDS (psds_eval refuses them)" in err


def test_the_first_refusal_is_the_first_points_whatever_column_it_is_in():
    """Points are checked one after another, a point's clips before its labels: a bad label
    of the first point is named before an unknown clip of the second."""
    from sedcontract.errors import TraceFormatError

    ref = EventList.from_rows([("a", 0.0, 1.0, "x")])
    bad_label = EventList.from_rows([("a", 0.0, 1.0, "BAD")])
    bad_clip = EventList.from_rows([("zzz", 0.0, 1.0, "x")])
    both = EventList.from_rows([("zzz", 0.0, 1.0, "BAD")])
    for points, named in (([bad_label, bad_clip], "label 'BAD'"),
                          ([bad_clip, bad_label], "clip 'zzz'"), ([both], "clip 'zzz'")):
        with pytest.raises(TraceFormatError, match=named):
            point_rates(points, ref, {"a": 10.0}, PRESETS["psds1"])
