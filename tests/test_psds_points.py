"""PSDS from operating-point tables against psds_eval itself (the current release, run in its own
environment, .venv-oracle, which `make test` makes: it needs numpy<2 and pandas<3): the DCASE
baseline's 50 operating points on DESED validation in both scenarios, generated cases with
cross-triggers under every parameter, hand-computed rates, and what is done where psds_eval
refuses an input."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.scores.psds.operating_points import point_rates, psds_of_points, read_points
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import (
    EventList,
    read_durations,
    read_events,
    write_durations,
    write_events,
)
from tests.psds_corpus import SCENARIOS, long_corpus, operating_points, trivial

ROOT = Path(__file__).parents[1]
ORACLE = ROOT / ".venv-oracle" / "bin" / "python"
JOB = Path(__file__).parent / "oracles" / "psds_eval_job.py"
DATA = Path(__file__).parent / "data" / "real_dcase"


def psds_eval(cases: list[dict]) -> list[dict]:
    """psds_eval's answers to the cases (one process for all of them)."""
    if not ORACLE.exists():
        pytest.fail("the psds_eval oracle environment is missing: run `make test` (it makes "
                    ".venv-oracle from tests/oracles/requirements.txt)")
    done = subprocess.run([str(ORACLE), str(JOB)], input=json.dumps({"cases": cases}),
                          capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout)


def test_the_baselines_operating_points_give_psds_evals_psds_in_both_scenarios(
        teacher_points, capsys):
    """`sedcontract scores` on the 50 operating points and the DESED durations file as they
    come: psds_eval's PSDS1 and PSDS2, and its PSD-ROC axis."""
    assert main(["scores", "--ref", str(DATA / "validation.tsv"), "--durations",
                 str(DATA / "validation_durations.tsv"), "--pred-points", str(teacher_points),
                 "--format", "json"]) == 0
    ours = json.loads(capsys.readouterr().out)["psds"]
    tables = sorted(teacher_points.glob("*.tsv"))
    assert len(tables) == 50
    cases = [{"truth_path": str(DATA / "validation.tsv"),
              "durations_path": str(DATA / "validation_durations.tsv"),
              "point_paths": [str(t) for t in tables], "settings": PRESETS[name].as_dict()}
             for name in ("psds1", "psds2")]
    theirs = psds_eval(cases)
    for name, answer in zip(("psds1", "psds2"), theirs, strict=True):
        assert ours[name]["value"] == pytest.approx(answer["value"], rel=1e-12, abs=0), name
        assert ours[name]["points"] == 50 and ours[name]["rule"] == "psds_eval"
    assert round(ours["psds1"]["value"], 4) == 0.3535 and round(ours["psds2"]["value"], 4) == 0.5483
    # the curve itself: the same eFPR axis and effective TPR at every point
    curves = psds_of_points(read_points(tables), read_events(DATA / "validation.tsv"),
                            read_durations(DATA / "validation_durations.tsv"))
    for name, answer in zip(("psds1", "psds2"), theirs, strict=True):
        np.testing.assert_allclose(curves[name]["roc"]["efpr"], answer["efpr"], rtol=1e-12)
        np.testing.assert_allclose(curves[name]["roc"]["etpr"], answer["etpr"], rtol=1e-12,
                                   atol=1e-15)


def _disjoint(rng: np.random.Generator, duration: float, step: float, most: int
              ) -> list[tuple[float, float]]:
    """Up to ``most`` disjoint intervals on a ``step`` grid inside ``[0, duration]``."""
    cells = int(duration / step)
    cuts = np.sort(rng.choice(np.arange(cells + 1), size=min(2 * most, cells + 1),
                              replace=False))
    pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    keep = rng.random(len(pairs)) < 0.7
    return [(float(a * step), float(b * step)) for (a, b), k in zip(pairs, keep,
                                                                          strict=True) if k]


def _case(seed: int) -> tuple[dict, EventList, dict[str, float], list[EventList], PsdsSettings]:
    """A random corpus: references on a 1 ms grid and operating points on a 64 ms grid, or,
    every other case, both on a 125 ms grid (binary fractions: overlaps of exactly the
    criterion's share are common), detections often of the wrong class (cross-triggers), random
    parameters of every kind."""
    rng = np.random.default_rng(seed)
    grid, step = (0.125, 0.125) if seed % 2 else (0.001, 0.064)
    classes = [f"c{k}" for k in range(int(rng.integers(2, 5)))]
    clips = {f"clip{i}.wav": float(rng.choice([6.0, 8.5, 10.0])) for i in range(3)}
    truth = []
    for clip, length in clips.items():
        for cls in classes:
            truth += [(clip, a, b, cls) for a, b in _disjoint(rng, length, grid, 3)]
    if not {row[3] for row in truth} >= set(classes):  # every class has a reference event
        truth += [("clip0.wav", 0.5, 1.5, cls) for cls in classes
                  if cls not in {row[3] for row in truth}]
    points = []
    for _ in range(int(rng.integers(2, 6))):
        table = []
        for clip, length in clips.items():
            for cls in classes:
                table += [(clip, a, b, cls) for a, b in _disjoint(rng, length, step, 4)]
        points.append(table)
    settings = PsdsSettings(dtc=float(rng.choice([0.1, 0.3, 0.5, 0.7, 1.0])),
                            gtc=float(rng.choice([0.1, 0.3, 0.5, 0.7])),
                            cttc=float(rng.choice([0.1, 0.3, 0.5])),
                            alpha_ct=float(rng.choice([0.0, 0.5, 1.0])),
                            alpha_st=float(rng.choice([0.0, 0.5, 1.0])),
                            max_efpr=float(rng.choice([50.0, 100.0, 400.0, 2000.0])))
    case = {"truth": truth, "durations": clips, "points": points,
            "settings": settings.as_dict()}

    def events(rows):
        return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows],
                                   clips=[c[:-4] for c in clips])

    return (case, events(truth), {c[:-4]: d for c, d in clips.items()},
            [events(t) for t in points], settings)


def test_generated_cases_with_cross_triggers_equal_psds_eval_under_every_parameter():
    cases = [_case(seed) for seed in range(80)]
    theirs = psds_eval([c[0] for c in cases])
    moved = ties = 0
    for seed, ((_, ref, durations, points, settings), answer) in enumerate(
            zip(cases, theirs, strict=True)):
        assert "error" not in answer, (seed, answer)
        ours = psds_of_points(points, ref, durations, {"s": settings})["s"]
        nudged = replace(settings, dtc=min(1.0, settings.dtc + 1e-9),
                         gtc=min(1.0, settings.gtc + 1e-9), cttc=min(1.0, settings.cttc + 1e-9))
        ties += psds_of_points(points, ref, durations, {"s": nudged})["s"]["value"] != \
            ours["value"]
        assert ours["value"] == pytest.approx(answer["value"], rel=1e-12, abs=1e-15), seed
        np.testing.assert_allclose(ours["roc"]["efpr"], answer["efpr"], rtol=1e-12)
        if settings.alpha_ct > 0:  # cross-triggers move the score
            plain = psds_of_points(points, ref, durations,
                                   {"s": replace(settings, alpha_ct=0.0)})["s"]["value"]
            moved += plain != ours["value"]
    assert moved >= 10  # the cases exercise the cross-trigger criterion, not only its absence
    assert ties >= 3  # and criteria met exactly (a >= that a > would get wrong)


def test_operating_points_on_hours_of_audio_give_psds_evals_curve():
    """Nineteen operating points of two hours of audio (tests/psds_corpus.py: the score tables
    thresholded), in PSDS1, PSDS2 and a scenario with alpha_ct, alpha_st > 0 and criteria the
    grid meets exactly (``max_efpr`` as set, not scaled): psds_eval's PSDS and PSD-ROC, with
    every value well inside (0, 1)."""
    compared = []
    for seed in range(2):
        ref, tables, durations = long_corpus(seed, levels=20)
        points = operating_points(tables, np.linspace(0.05, 0.95, 19))

        def rows(events):
            return [(f"{c}.wav", on, off, label) for c, on, off, label in events.to_rows()]

        cases = [{"truth": rows(ref), "durations": {f"{c}.wav": d for c, d in durations.items()},
                  "points": [rows(p) for p in points], "settings": chosen.as_dict()}
                 for chosen in SCENARIOS.values()]
        ours = psds_of_points(points, ref, durations, SCENARIOS)
        for name, answer in zip(SCENARIOS, psds_eval(cases), strict=True):
            assert "error" not in answer, (seed, name, answer)
            assert ours[name]["value"] == pytest.approx(answer["value"], rel=1e-12, abs=1e-15)
            np.testing.assert_allclose(ours[name]["roc"]["efpr"], answer["efpr"], rtol=1e-12)
            np.testing.assert_allclose(ours[name]["roc"]["etpr"], answer["etpr"], rtol=1e-12,
                                       atol=1e-15)
            compared.append(answer["value"])
    assert len(compared) == 6 and trivial(compared) == 0
    assert min(compared) > 0.02 and max(compared) < 0.98


def test_criteria_met_exactly_count_as_met_as_in_psds_eval():
    """Shares of exactly 0.7: a detection [0, 3.5) on a reference [0, 5) covers 70 % of it
    (GTC); a detection [1.5, 6.5) has 70 % of itself on that reference and covers 70 % of it
    (DTC and GTC); a b detection [1.5, 6.5) has 70 % of itself on the a reference (CTTC)."""
    ref = [("x.wav", 0.0, 5.0, "a"), ("x.wav", 6.0, 9.0, "b")]
    tie = PsdsSettings(dtc=0.7, gtc=0.7, cttc=0.7, alpha_ct=1.0, alpha_st=0.0)
    points = [[("x.wav", 0.0, 3.5, "a")], [("x.wav", 1.5, 6.5, "a")],
              [("x.wav", 0.0, 5.0, "b")], [("x.wav", 1.5, 6.5, "b")]]
    theirs = psds_eval([{"truth": ref, "durations": {"x.wav": 10.0}, "points": points,
                         "settings": tie.as_dict()}])[0]

    def events(rows):
        return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows])

    pts = [events(p) for p in points]
    rates, _ = point_rates(pts, events(ref), {"x": 10.0}, tie)
    assert rates.tpr[0, :2].tolist() == [1.0, 1.0]
    assert rates.ctr[1, 0, 2] == rates.ctr[1, 0, 3] == 3600.0 / 5.0
    ours = psds_of_points(pts, events(ref), {"x": 10.0}, {"tie": tie})["tie"]["value"]
    assert ours == pytest.approx(theirs["value"], rel=1e-12) and ours > 0


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


def test_same_class_overlaps_psds_eval_refuses_are_joined_and_counted():
    """psds_eval refuses overlapping same-class events; here they are joined into one (touching
    ones stay apart, as psds_eval keeps them) and the result is psds_eval's on the joined
    table."""
    ref = [("x.wav", 0.0, 2.0, "a"), ("x.wav", 2.0, 3.0, "a"), ("x.wav", 4.0, 6.0, "b")]
    overlapping = [("x.wav", 0.0, 1.5, "a"), ("x.wav", 1.0, 2.2, "a"), ("x.wav", 4.5, 6.0, "b")]
    joined = [("x.wav", 0.0, 2.2, "a"), ("x.wav", 4.5, 6.0, "b")]
    settings = PRESETS["psds2"].as_dict()
    refused, answer = psds_eval([
        {"truth": ref, "durations": {"x.wav": 10.0}, "points": [overlapping],
         "settings": settings},
        {"truth": ref, "durations": {"x.wav": 10.0}, "points": [joined], "settings": settings}])
    assert "intersecting events" in refused["error"]

    def events(rows):
        return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows])

    ours = psds_of_points([events(overlapping)], events(ref), {"x": 10.0})["psds2"]
    assert ours["value"] == pytest.approx(answer["value"], rel=1e-12)
    assert ours["joined"] == {"ref": 0, "points": 1}


def test_inputs_psds_eval_accepts_that_are_easy_to_get_wrong():
    """psds_eval's answer on: a clip only the durations file names (audio without events, with a
    false detection on it), exact copies of a detection (each counted), and a class whose only
    reference event has zero length (no class at all)."""
    ref = [("x.wav", 0.0, 2.0, "dog"), ("x.wav", 4.0, 6.0, "cat"), ("x.wav", 3.0, 3.0, "zed")]
    durations = {"x.wav": 10.0, "quiet.wav": 3600.0}
    points = [[("x.wav", 0.0, 0.6, "dog"), ("x.wav", 0.0, 0.6, "dog"),
               ("quiet.wav", 5.0, 6.0, "cat"), ("x.wav", 4.0, 5.5, "cat")],
              [("x.wav", 0.0, 1.8, "dog"), ("quiet.wav", 1.0, 9.0, "dog")]]
    settings = PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=0.5, alpha_st=1.0,
                            max_efpr=400.0)
    theirs = psds_eval([{"truth": ref, "durations": durations, "points": points,
                         "settings": settings.as_dict()}])[0]

    def events(rows, clips=()):
        return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows],
                                   clips=clips)

    ours = psds_of_points([events(p) for p in points], events(ref, ["x"]),
                          {c[:-4]: d for c, d in durations.items()}, {"s": settings})["s"]
    assert ours["value"] == pytest.approx(theirs["value"], rel=1e-12) and ours["value"] > 0
    assert list(ours["per_class"]) == ["cat", "dog"] and ours["joined"] == {"ref": 0,
                                                                          "points": 0}


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


def _events_of(rows: list, clips: tuple = ()) -> EventList:
    """Rows named by audio file (psds_eval's) as an event list named by clip."""
    return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows],
                               clips=clips)


def test_nested_same_class_events_are_joined_up_to_the_latest_offset():
    """Same-class events where an earlier one ends after the later ones start and end
    (a [0, 5) holding [1, 2) and [3, 4)) are joined into one event ending at the largest
    offset (5 s), not at the last event's (4 s); the same for detections."""
    # x, y: 10 s each, 1 FP in 20 s = 180/h. Joined, x's a is [0, 5) and the b detections
    # [7, 10) ⊃ [7.5, 8), [8.5, 9) are one [7, 10). Point 0: a [4, 5) lies in x's a (DTC met,
    # 20 % of it: neither found nor false), y's a found (TPR 1/2); b found (TPR 1). Point 1:
    # x's a found by [0, 3) (60 %), y's too (TPR 1) with a false [9, 10); b [7, 10) is 1/3
    # on b (DTC 0.5 missed): false. a: (0, 1/2), (180, 1); b: (0, 1): mean 0.75 up to 180,
    # then 1: (0.75 · 180 + 820) / 1000 = 0.955.
    ref = [("x.wav", 0.0, 5.0, "a"), ("x.wav", 1.0, 2.0, "a"), ("x.wav", 3.0, 4.0, "a"),
           ("x.wav", 6.0, 8.0, "b"), ("y.wav", 0.0, 2.0, "a")]
    points = [[("x.wav", 4.0, 5.0, "a"), ("x.wav", 6.0, 8.0, "b"), ("y.wav", 0.0, 2.0, "a")],
              [("x.wav", 0.0, 3.0, "a"), ("x.wav", 9.0, 10.0, "a"), ("y.wav", 0.0, 2.0, "a"),
               ("x.wav", 7.0, 10.0, "b"), ("x.wav", 7.5, 8.0, "b"), ("x.wav", 8.5, 9.0, "b")]]
    joined_ref = [ref[0], ref[3], ref[4]]
    joined_points = [points[0], points[1][:4]]
    settings = PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=0.5, alpha_st=0.0,
                            max_efpr=1000.0)
    (theirs,) = psds_eval([{"truth": joined_ref, "durations": {"x.wav": 10.0, "y.wav": 10.0},
                            "points": joined_points, "settings": settings.as_dict()}])
    durations = {"x": 10.0, "y": 10.0}
    pts = [_events_of(p) for p in points]
    rates, joined = point_rates(pts, _events_of(ref), durations, settings)
    assert joined == {"ref": 2, "points": 2}
    assert rates.tpr.tolist() == [[0.5, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert rates.fpr.tolist() == [[0.0, 180.0, 0.0], [0.0, 180.0, 0.0]]
    ours = psds_of_points(pts, _events_of(ref), durations, {"s": settings})["s"]
    assert ours["value"] == pytest.approx(0.955, rel=1e-12)
    assert ours["value"] == pytest.approx(theirs["value"], rel=1e-12)
    np.testing.assert_allclose(ours["roc"]["efpr"], theirs["efpr"], rtol=1e-12)


@pytest.mark.parametrize("cttc", [0.5, 1.0])
def test_detections_in_silence_are_false_positives_whatever_the_cttc(cttc):
    """A detection on no reference event is a false positive however small its share of the
    clip (the world): b [8.5, 13) runs past the 10 s clip, 1/3 of it inside, under CTTC 0.5
    and 1; and b [7, 8), all inside, under CTTC 1 (a share of exactly 1)."""
    # 10 s clip: 1 FP = 360/h. a [0, 2) and b [4, 6) are found; the two b detections in
    # silence are false: b's FP rate 720/h. a: TPR 1 at 0; b: 0 up to 720, then 1:
    # (0.5 · 720 + 280) / 1000 = 0.64 (one of them dropped: 0.82).
    ref = [("x.wav", 0.0, 2.0, "a"), ("x.wav", 4.0, 6.0, "b")]
    point = [("x.wav", 0.0, 2.0, "a"), ("x.wav", 4.0, 6.0, "b"), ("x.wav", 7.0, 8.0, "b"),
             ("x.wav", 8.5, 13.0, "b")]
    settings = PsdsSettings(dtc=0.5, gtc=0.5, cttc=cttc, alpha_ct=0.5, alpha_st=0.0,
                            max_efpr=1000.0)
    (theirs,) = psds_eval([{"truth": ref, "durations": {"x.wav": 10.0}, "points": [point],
                            "settings": settings.as_dict()}])
    rates, _ = point_rates([_events_of(point)], _events_of(ref), {"x": 10.0}, settings)
    assert rates.fpr[:, 0].tolist() == [0.0, 720.0]
    assert rates.tpr[:, 0].tolist() == [1.0, 1.0]
    ours = psds_of_points([_events_of(point)], _events_of(ref), {"x": 10.0},
                          {"s": settings})["s"]
    assert ours["value"] == pytest.approx(0.64, rel=1e-12)
    assert ours["value"] == pytest.approx(theirs["value"], rel=1e-12)


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
