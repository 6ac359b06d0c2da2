"""Pathology sets: each corruption produces exactly its pathology, checked with the monitor —
the matching coordinate fails and unrelated coordinates stay perfect — deterministically."""

from __future__ import annotations

import numpy as np
import pytest

import sedcontract
from sedcontract.cli import main
from sedcontract.data import PATHOLOGIES, pathology_set, write_pathology_set
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList, read_events

CLIPS = 4


def reference() -> tuple[EventList, dict[str, float]]:
    """Two classes, events 0.6–1.5 s long, same-class gaps of at least 1.2 s."""
    rng = np.random.default_rng(7)
    rows = []
    for c in range(CLIPS):
        for label in ("speech", "tone"):
            t = rng.uniform(0.5, 1.0)
            while t < 8.0:
                length = rng.uniform(0.6, 1.5)
                rows.append((f"c{c}", round(t, 3), round(t + length, 3), label))
                t += length + rng.uniform(1.2, 2.5)
    return EventList.from_rows(rows), {f"c{c}": 10.0 for c in range(CLIPS)}


def vector(pathology: str, severity: float, mode: str = "typed") -> dict[str, float]:
    ref, durations = reference()
    data = pathology_set(ref, durations, seed=3, pathologies={pathology: (severity,)})
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations, mode=mode)
    scores = report.vector(mode)
    scores.update({d: report.modes[mode].micro(d).score for d in report.modes[mode].diagnostics})
    return scores


# pathology, failing severity, coordinates that must fail, coordinates that must stay 1.0
EXPECTED = [
    ("late_onset", 0.6, {"onset", "late_onset"}, {"offset", "missed", "false", "silence",
                                                  "fragmentation", "early_onset"}),
    ("early_onset", 0.6, {"onset", "early_onset"}, {"offset", "missed", "false",
                                                    "fragmentation", "late_onset"}),
    ("late_release", 0.6, {"offset", "late_release"}, {"onset", "missed", "false",
                                                       "fragmentation", "early_release"}),
    ("early_release", 0.6, {"offset", "early_release"}, {"onset", "missed", "false", "silence",
                                                         "fragmentation", "late_release"}),
    ("missed", 0.5, {"missed", "onset", "offset"}, {"false", "silence", "duration",
                                                    "fragmentation"}),
    ("false", 2, {"false", "silence"}, {"onset", "offset", "missed", "duration",
                                        "fragmentation", "leakage"}),
    ("leakage", 0.12, {"leakage", "false"}, {"onset", "offset", "missed", "silence",
                                             "duration", "fragmentation"}),
    ("fragmentation", 3, {"fragmentation", "duration"}, {"onset", "offset", "missed", "false",
                                                         "silence", "merge"}),
    ("duration", 0.5, {"duration"}, {"missed", "false", "silence", "fragmentation"}),
]


@pytest.mark.parametrize(("pathology", "severity", "fail", "keep"), EXPECTED,
                         ids=[e[0] for e in EXPECTED])
def test_each_pathology_fails_its_own_coordinates_only(pathology, severity, fail, keep):
    scores = vector(pathology, severity)
    for name in fail:
        assert scores[name] < 1.0, (name, scores)
    for name in keep:
        assert scores[name] == 1.0, (name, scores)


@pytest.mark.parametrize("pathology", ["late_onset", "early_onset", "late_release",
                                       "early_release"])
def test_a_shift_within_eps_passes_the_guard(pathology):
    scores = vector(pathology, 0.1)
    assert scores["onset"] == 1.0 and scores["offset"] == 1.0


def test_severity_is_graded():
    missed = [vector("missed", s)["missed"] for s in PATHOLOGIES["missed"]]
    assert missed[0] > missed[1] > missed[2] == 0.0
    false = [vector("false", s)["false"] for s in PATHOLOGIES["false"]]
    assert false[0] > false[1] > false[2]


def test_class_swap_is_visible_typed_and_invisible_union():
    typed, union = vector("class_swap", 1.0), vector("class_swap", 1.0, mode="union")
    assert typed["missed"] < 1.0 and typed["false"] < 1.0
    assert all(union[name] == 1.0 for name in ("onset", "offset", "missed", "false", "silence"))


def test_mixtures_fail_both_parts():
    scores = vector("late_release+fragmentation", 0.3)
    assert scores["offset"] < 1.0 and scores["fragmentation"] < 1.0 and scores["onset"] == 1.0


def test_corrupted_events_stay_in_the_clip_and_apart():
    ref, durations = reference()
    data = pathology_set(ref, durations, seed=1)
    assert data.pred.onset.min() >= 0 and data.pred.offset.max() <= 10.0
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
    assert report.traces["merged"]["pred"] == 0  # nothing merges by accident
    assert len(data.labels) + sum(data.unchanged.values()) == \
        CLIPS * sum(len(s) for s in PATHOLOGIES.values())
    labelled = {(c, p) for c, _, p, _ in data.labels}
    assert all(sorted(data.pred.select(clips=[c]).to_rows()) !=
               sorted(data.ref.select(clips=[c]).to_rows()) for c, _ in labelled)


def test_a_corruption_without_room_is_left_out_not_labelled():
    """A clip full of events has no place 0.5 s clear of them for a false event: that case
    would be labelled 'false' with a prediction equal to the reference."""
    dense = EventList.from_rows([("a", 0.0, 4.9, "x"), ("a", 5.1, 10.0, "x")])
    data = pathology_set(dense, {"a": 10.0}, pathologies={"false": [1, 2]})
    assert data.labels == [] and data.unchanged == {"false": 2}


def test_deterministic_from_the_seed(tmp_path):
    ref, durations = reference()
    first = write_pathology_set(tmp_path / "a", pathology_set(ref, durations, seed=5))
    second = write_pathology_set(tmp_path / "b", pathology_set(ref, durations, seed=5))
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    other = pathology_set(ref, durations, seed=6)
    assert other.pred.to_rows() != pathology_set(ref, durations, seed=5).pred.to_rows()


def test_command_writes_an_auditable_set(tmp_path, capsys):
    ref, _ = reference()
    from sedcontract.traces import write_events

    write_events(tmp_path / "ref.tsv", ref)
    assert main(["data", "pathologies", f"--ref={tmp_path / 'ref.tsv'}",
                 f"--out={tmp_path / 'set'}", "--pathologies", "missed,false"]) == 0
    assert "sedcontract audit --ref" in capsys.readouterr().out
    labels = (tmp_path / "set" / "labels.tsv").read_text().splitlines()
    assert labels[0] == "filename\tsource_clip\tpathology\tseverity"
    expected = pathology_set(ref, pathologies={p: PATHOLOGIES[p] for p in ("missed", "false")})
    assert len(labels) == 1 + len(expected.labels) and len(expected.labels) > CLIPS
    assert len(labels) - 1 + sum(expected.unchanged.values()) == CLIPS * 6
    assert len(read_events(tmp_path / "set" / "pred.tsv").clips) == len(expected.labels)
    assert main(["data", "pathologies", f"--ref={tmp_path / 'ref.tsv'}",
                 f"--out={tmp_path / 'x'}", "--pathologies", "laziness"]) == 2
    assert "unknown pathology 'laziness'" in capsys.readouterr().err


def test_class_swap_needs_two_classes():
    ref = EventList.from_rows([("a", 0.5, 1.5, "dog")])
    with pytest.raises(SedContractError, match="two classes"):
        pathology_set(ref, {"a": 2.0}, pathologies={"class_swap": (1.0,)})
