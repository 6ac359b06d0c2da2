"""PSDS against psds_eval itself, run in its own environment (``.venv-oracle``: numpy<2,
pandas<3): the DCASE baseline's operating points, generated cases with cross triggers, hours of
audio, criteria met exactly, joined overlaps and detections in silence."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.scores.psds.operating_points import point_rates, psds_of_points, read_points
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.traces import EventList, read_durations, read_events
from tests.helpers.paths import TEST_DATA
from tests.helpers.psds_corpus import SCENARIOS, long_corpus, operating_points, psds_eval, trivial
from tests.helpers.real_dcase import DURATIONS, REF

DATA = TEST_DATA / "real_dcase"


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
    """Nineteen operating points of two hours of audio (tests/helpers/psds_corpus.py: the score
    tables thresholded), in PSDS1, PSDS2 and a scenario with alpha_ct, alpha_st > 0 and criteria the
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


def test_psds_of_operating_points_cut_at_the_durations_equals_psds_eval_on_cut_tables(
        teacher_points, capsys):
    """``--psds-cut`` with ``--pred-points``: the reference and every detection cut at the
    durations (those wholly past the end dropped), then psds_eval's rule — equal to psds_eval on
    tables cut by hand."""
    from sedcontract.cli import main
    from tests.helpers.psds_corpus import psds_eval

    assert main(["scores", "--ref", str(REF), "--durations", str(DURATIONS), "--pred-points",
                 str(teacher_points), "--psds-cut", "--format", "json"]) == 0
    ours = json.loads(capsys.readouterr().out)["psds"]
    durations = {f"{clip}.wav": d for clip, d in read_durations(DURATIONS).items()}

    def cut(rows: list) -> list:
        return [(name, on, min(off, durations[name]), label) for name, on, off, label in rows
                if on < durations[name]]

    import pandas as pd

    truth = [(f"{c}.wav", on, off, lab) for c, on, off, lab in read_events(REF).to_rows()]
    points = [cut(list(pd.read_csv(p, sep="\t")[["filename", "onset", "offset",
                                                  "event_label"]].itertuples(index=False)))
              for p in sorted(teacher_points.glob("*.tsv"))]
    from sedcontract.scores.psds.settings import PRESETS

    theirs = psds_eval([{"truth": cut(truth), "durations": durations, "points": points,
                         "settings": PRESETS[name].as_dict()} for name in ("psds1", "psds2")])
    for name, answer in zip(("psds1", "psds2"), theirs, strict=True):
        assert ours[name]["value"] == pytest.approx(answer["value"], rel=1e-12, abs=0), name
        assert ours[name]["cut"]["ref"] == 16 and ours[name]["cut"]["pred"] > 0


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


def _events_of(rows: list, clips: tuple = ()) -> EventList:
    """Rows named by audio file (psds_eval's) as an event list named by clip."""
    return EventList.from_rows([(c[:-4], on, off, lab) for c, on, off, lab in rows],
                               clips=clips)
