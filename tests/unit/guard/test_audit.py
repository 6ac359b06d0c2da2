"""Guard reports: the worked example (docs/architecture.md) by hand, invariants of the standard
contract, bad input, renderings and the ``sedcontract audit`` command."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sedcontract
from sedcontract.cli import main
from sedcontract.errors import ContractCheckError, TraceFormatError
from sedcontract.guard import to_csv, to_json, to_markdown, to_rows
from sedcontract.guard.render import ROW_FIELDS, VALUE_FIELD
from sedcontract.guard.rows import SCHEMA_VERSION
from sedcontract.traces import EventList
from tests.helpers.examples import random_reference, worked_example, write_worked_example
from tests.helpers.limits import run_limited
from tests.helpers.paths import REPO

REF, PRED = worked_example()
COORDINATES = ("onset", "offset", "missed", "false", "silence", "duration", "fragmentation")


def counts(report, mode: str) -> dict[str, tuple[int, int]]:
    m = report.modes[mode]
    return {c: (m.micro(c).satisfied, m.micro(c).obligations) for c in report.coordinates}


def test_worked_example_of_the_design():
    report = sedcontract.audit(REF, PRED, durations={"c": 4.0})
    assert report.coordinates == COORDINATES
    assert counts(report, "typed") == {
        "onset": (1, 2), "offset": (0, 2), "missed": (1, 2), "false": (2, 4),
        "silence": (235, 280), "duration": (0, 1), "fragmentation": (0, 1)}
    assert counts(report, "union") == {
        "onset": (2, 2), "offset": (1, 2), "missed": (2, 2), "false": (3, 4),
        "silence": (65, 80), "duration": (1, 2), "fragmentation": (1, 2)}
    typed = report.modes["typed"]
    assert typed.per_class("duration")["tone"].vacuous
    assert typed.macro("duration") == (0.0, 1)   # one class not vacuous
    assert math.isclose(report.logic("typed"),
                        np.mean([0.5, 0, 0.5, 0.5, 235 / 280, 0, 0]))


def shifted(events: EventList, by: float) -> EventList:
    return EventList(events.clip, events.onset + by, events.offset + by, events.label,
                     clips=events.clips)


DURATIONS = {f"clip{c}": 10.0 for c in range(5)}


@pytest.mark.parametrize("seed", range(3))
def test_a_perfect_prediction_scores_one_everywhere(seed):
    ref = random_reference(seed)
    report = sedcontract.audit(ref, ref, durations=DURATIONS)
    for mode in ("typed", "union"):
        for coordinate, score in report.vector(mode).items():
            assert score == 1.0, (mode, coordinate)
        for name in report.modes[mode].diagnostics:
            assert report.modes[mode].micro(name).score == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_shifting_by_more_than_eps_zeroes_onset_and_offset(seed):
    ref = random_reference(seed)
    report = sedcontract.audit(ref, shifted(ref, 0.25), durations={k: 11.0 for k in DURATIONS})
    typed = report.vector("typed")
    assert typed["onset"] == 0.0 and typed["offset"] == 0.0
    within = sedcontract.audit(ref, shifted(ref, 0.1), durations={k: 11.0 for k in DURATIONS})
    assert within.vector("typed")["onset"] == 1.0


@pytest.mark.parametrize("pieces", [2, 3, 4])
def test_splitting_one_prediction_lowers_fragmentation_exactly(pieces):
    ref = random_reference(0)
    target = 3  # split the 4th reference event into `pieces` parts with gaps
    rows = ref.to_rows()
    clip, on, off, label = rows[target]
    edges = np.linspace(on, off, pieces + 1)
    split = [(clip, float(a) + (0.04 if i else 0.0), float(b), label)
             for i, (a, b) in enumerate(itertools.pairwise(edges))]
    pred = EventList.from_rows(rows[:target] + split + rows[target + 1:])
    report = sedcontract.audit(ref, pred, durations=DURATIONS)
    n = len(ref)
    assert counts(report, "typed")["fragmentation"] == (n - 1, n)
    assert counts(report, "typed")["missed"] == (n, n)
    assert report.traces["merged"] == {"ref": 0, "pred": 0}


def test_union_hides_class_swaps_that_typed_exposes():
    ref = random_reference(1)
    swap = {"speech": "tone", "tone": "burst", "burst": "speech"}
    pred = EventList(ref.clip, ref.onset, ref.offset, np.array([swap[x] for x in ref.label]),
                     clips=ref.clips)
    report = sedcontract.audit(ref, pred, durations=DURATIONS)
    assert report.vector("union")["missed"] >= report.vector("typed")["missed"]
    assert report.vector("typed")["missed"] < 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(-0.6, 0.6))
def test_each_boundary_failure_has_exactly_one_direction(seed, shift):
    rng = np.random.default_rng(seed)
    ref = random_reference(seed % 7, clips=2)
    onsets = np.maximum(ref.onset + shift * rng.random(len(ref)), 0.0)
    offsets = np.maximum(ref.offset + shift * rng.random(len(ref)), onsets)
    pred = EventList(ref.clip, onsets, offsets, ref.label, clips=ref.clips)
    report = sedcontract.audit(ref, pred, durations={"clip0": 11.0, "clip1": 11.0})
    for mode in ("typed", "union"):
        m = report.modes[mode]
        for guard, directions in (("onset", ("late_onset", "early_onset")),
                                  ("offset", ("late_release", "early_release"))):
            failures = m.micro(guard).obligations - m.micro(guard).satisfied
            split = sum(m.micro(d).obligations - m.micro(d).satisfied for d in directions)
            assert failures == split


def test_greedy_matching_never_pairs_more_than_exact():
    ref = random_reference(2)
    pred = shifted(random_reference(3), 0.05)
    report = sedcontract.audit(ref, pred, durations={k: 11.0 for k in DURATIONS},
                               matching="greedy")
    for mode in report.modes.values():
        audit = mode.matchings["m"]
        assert audit.method == "greedy"
        assert np.all(audit.greedy_per_row <= audit.exact_per_row)


def test_reports_are_identical_on_repeated_runs():
    ref = random_reference(4)
    pred = shifted(random_reference(5), 0.1)
    first = to_json(sedcontract.audit(ref, pred, durations={k: 11.0 for k in DURATIONS}))
    second = to_json(sedcontract.audit(ref, pred, durations={k: 11.0 for k in DURATIONS}))
    assert first == second
    data = json.loads(first)
    assert data["schema_version"] == SCHEMA_VERSION == 2
    assert set(data["modes"]) == {"typed", "union"}


def test_vacuous_coordinates_are_null_not_one():
    ref = EventList.from_rows([], clips=("quiet",))
    report = sedcontract.audit(ref, ref, durations={"quiet": 2.0})
    data = json.loads(to_json(report))["modes"]["typed"]["coordinates"]
    assert data["onset"]["vacuous"] and data["onset"]["score"] is None
    assert "vacuous (0/0)" in to_markdown(report)


def test_csv_rows_add_up_to_the_vector():
    report = sedcontract.audit(REF, PRED, durations={"c": 4.0})
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    typed = [r for r in rows if r["mode"] == "typed" and r["coordinate"] == "silence"]
    assert len(typed) == 2 and {r["class"] for r in typed} == {"speech", "tone"}
    assert sum(int(r["satisfied"]) for r in typed) == 235
    assert {r["class"] for r in rows if r["mode"] == "union"} == {"*"}


def test_csv_rows_are_csv_writers_bytes_for_names_that_need_quoting():
    """The CSV writes each distinct name once quoted, a line per row: the bytes csv.writer
    writes for the same rows, with clips and classes holding commas, quotes, spaces and a line
    break, and a system named with a comma."""
    clips = ('a,"b"', "c d", "d\ne", "plain")
    ref = EventList.from_rows([(clips[0], 0.1, 0.9, 'dog, "big"'), (clips[1], 0.2, 0.5, "cat"),
                               (clips[2], 0.3, 1.5, 'dog, "big"'), (clips[3], 0.0, 0.4, "cat")],
                              clips=clips)
    pred = EventList.from_rows([(clips[0], 0.2, 0.8, 'dog, "big"'), (clips[3], 0.5, 0.9, "cat")],
                               clips=clips)
    report = sedcontract.audit(ref, pred, durations=dict.fromkeys(clips, 2.0),
                               scores=sedcontract.ScoreSettings())
    text = to_csv(report, system="sys, one")
    expected = io.StringIO()
    writer = csv.DictWriter(expected, fieldnames=(*ROW_FIELDS, VALUE_FIELD), lineterminator="\n")
    writer.writeheader()
    writer.writerows(to_rows(report, system="sys, one"))
    rows_part = expected.getvalue()
    assert text.startswith(rows_part) and '"a,""b"""' in rows_part and '"d\ne"' in rows_part
    assert list(csv.DictReader(io.StringIO(rows_part)))[1]["clip"] in clips


def test_custom_coordinates_and_unknown_ones():
    report = sedcontract.audit(REF, PRED, coordinates=["missed", "onset"])
    assert list(report.vector("typed")) == ["missed", "onset"]
    with pytest.raises(ContractCheckError, match=r"unknown coordinate.*'speed'"):
        sedcontract.audit(REF, PRED, coordinates=["speed"])


# -- bad input: every error names the file and row --------------------------------------------
HEADER = "filename\tonset\toffset\tevent_label\n"


def write(tmp_path, name: str, body: str):
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_overlapping_and_touching_events_are_merged_and_counted(tmp_path):
    ref = write(tmp_path, "ref.tsv", "a.wav\t0.0\t1.0\tdog\na.wav\t0.5\t2.0\tdog\n"
                                     "a.wav\t2.0\t3.0\tdog\na.wav\t2.5\t2.7\tcat\n")
    pred = write(tmp_path, "pred.tsv", "a.wav\t0.0\t3.0\tdog\n")
    report = sedcontract.audit(ref, pred)
    assert report.traces["merged"] == {"ref": 2, "pred": 0}
    assert counts(report, "typed")["missed"] == (1, 2)  # one merged dog interval, one cat
    assert "merged events ref 2 / pred 0" in to_markdown(report)


def test_empty_prediction_file_fails_every_obligation(tmp_path):
    ref = write(tmp_path, "ref.tsv", "a.wav\t0.5\t1.0\tdog\nb.wav\t1.0\t2.0\tcat\n")
    pred = tmp_path / "pred.tsv"
    pred.write_text("")
    report = sedcontract.audit(ref, pred)
    vector = counts(report, "typed")
    assert vector["missed"] == (0, 2) and vector["onset"] == (0, 2)
    assert vector["false"] == (0, 0)


@pytest.mark.parametrize(("ref_body", "pred_body", "durations", "fragment", "row"), [
    ("a.wav\t0.5\n", "", None, "missing value", 2),
    ("a.wav\t1.0\t0.5\tdog\n", "", None, "before onset", 2),
    ("a.wav\tnan\t0.5\tdog\n", "", None, "not a finite time", 2),
    ("a.wav\t-1\t0.5\tdog\n", "", None, "negative time", 2),
    ("a.wav\t0\t0.5\tdog\na.wav\t0\t9.5\tdog\n", "", {"a": 5.0},
     "end past their clip's duration, more than the tolerance", 3),
    ("a.wav\t0\t0.5\tdog\n", "b.wav\t0\t0.5\tdog\n", None, "which the reference does not list",
     2),
])
def test_bad_input_names_file_and_row(tmp_path, ref_body, pred_body, durations, fragment, row):
    ref = write(tmp_path, "ref.tsv", ref_body)
    pred = write(tmp_path, "pred.tsv", pred_body)
    with pytest.raises(TraceFormatError) as info:
        sedcontract.audit(ref, pred, durations=durations)
    assert fragment in str(info.value)
    assert info.value.row == row and info.value.path is not None


# -- the command ----------------------------------------------------------------------------


def test_audit_command_formats(tmp_path, capsys):
    base = [*write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    assert main(["audit", *base]) == 0
    out = capsys.readouterr().out
    assert "| silence | 0.839 (235/280) | 0.812 (65/80) |" in out
    assert main(["audit", *base, "--format", "json", "--mode", "union"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["modes"]) == ["union"]
    assert data["modes"]["union"]["coordinates"]["duration"]["satisfied"] == 1
    out_path = tmp_path / "rows.csv"
    assert main(["audit", *base, "--format", "csv", "--out", str(out_path)]) == 0
    assert out_path.read_text().startswith("system,policy,mode,clip,class,coordinate,role,sort,")
    assert main(["audit", *base, "--eps", "0ms", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"]["eps"] == "0ms"
    assert data["modes"]["typed"]["coordinates"]["onset"]["satisfied"] == 0


def test_audit_command_on_score_files(tmp_path, capsys):
    scores = tmp_path / "scores"
    scores.mkdir()
    frames = np.arange(200) * 0.02
    speech = ((frames >= 0.5) & (frames < 1.5)).astype(float) * 0.9
    speech[40] = 0.1  # a one-frame dip the median filter removes
    tone = ((frames >= 2.0) & (frames < 2.6)).astype(float) * 0.8
    lines = ["onset\toffset\tspeech\ttone"] + [
        f"{t:.2f}\t{t + 0.02:.2f}\t{s}\t{o}" for t, s, o in zip(frames, speech, tone,
                                                                strict=True)]
    (scores / "c.tsv").write_text("\n".join(lines) + "\n")
    base = [*write_worked_example(tmp_path), f"--pred-scores={scores}", "--format", "json"]
    assert main(["audit", *base]) == 0
    data = json.loads(capsys.readouterr().out)
    fragmentation = data["modes"]["typed"]["coordinates"]["fragmentation"]["per_class"]
    assert fragmentation["speech"]["satisfied"] == 0  # the dip splits speech in two
    assert fragmentation["tone"]["satisfied"] == 1
    assert data["policy"]["decision"] == "active iff score > 0.5"
    assert main(["audit", *base, "--median-filter", "60ms"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"]["decision"] == "active iff score > 0.5, median filter 0.06 s"
    coordinates = data["modes"]["typed"]["coordinates"]
    assert (coordinates["fragmentation"]["satisfied"],
            coordinates["fragmentation"]["obligations"]) == (2, 2)
    assert coordinates["onset"]["satisfied"] == 2


def test_audit_command_errors_exit_2(tmp_path, capsys):
    base = write_worked_example(tmp_path)
    assert main(["audit", *base]) == 2
    assert "the guard vector needs one system output: give --pred or --pred-scores" in \
        capsys.readouterr().err
    assert main(["audit", *base, f"--pred={tmp_path / 'pred.tsv'}",
                 f"--pred-scores={tmp_path}"]) == 2
    assert "not both" in capsys.readouterr().err
    bad = write(tmp_path, "bad.tsv", "c.wav\t1.0\t0.5\tspeech\n")
    assert main(["audit", *base, f"--pred={bad}"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, row 2, column 'offset'" in err
    assert main(["audit", *base, f"--pred={tmp_path / 'pred.tsv'}", "--coordinates",
                 "onset,speed"]) == 2
    assert "unknown coordinate(s) 'speed'" in capsys.readouterr().err
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "c.tsv").write_text("onset\toffset\tspeech\ttone\n0\t0.02\thigh\t0\n")
    assert main(["audit", *base, f"--pred-scores={tmp_path / 's'}"]) == 2
    assert "row 2, column 'speech': 'high' is not a number" in capsys.readouterr().err


def test_macro_aggregation_averages_non_vacuous_classes(tmp_path, capsys):
    report = sedcontract.audit(REF, PRED, durations={"c": 4.0}, aggregation="macro")
    # typed false: speech 2/3, tone 0/1 → macro (2/3 + 0) / 2; duration: only speech counts
    assert math.isclose(report.vector("typed")["false"], (2 / 3 + 0.0) / 2)
    assert report.vector("typed")["duration"] == 0.0
    assert report.modes["typed"].macro("duration") == (0.0, 1)
    assert "0.333 (mean of 2 classes)" in to_markdown(report)
    base = [*write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}",
            "--aggregation", "macro", "--format", "json"]
    assert main(["audit", *base]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["aggregation"] == "macro"
    assert math.isclose(data["modes"]["typed"]["logic"], report.logic("typed"))


# ---- hardening ------------------------------------------------------------------------------

BENCHMARKS = REPO / "benchmarks"


@pytest.mark.parametrize(("case", "size"), [("events", "50000"), ("classes", "200"),
                                          ("scores", "2000000")])
def test_memory_follows_the_events_not_the_pairs_or_classes_squared(case, size):
    """One clip with 50,000 events per side, 100 clips × 200 classes, and one score file of
    2·10⁶ frames, audited with the standard scores under a 1 GiB address-space cap (they
    needed > 24 GB, 4.3 GB, and more than the cap: the score file's fields were held as
    Python strings)."""
    result = run_limited([str(BENCHMARKS / "hostile_memory.py"), "--case", case, "--size",
                          size], limit_mb=1024)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "collar event F1 1.000" in result.stdout


def test_coordinates_and_classes_are_checked_not_iterated():
    report = sedcontract.audit(REF, PRED, durations={"c": 4.0}, coordinates="onset, silence")
    assert report.coordinates == ("onset", "silence")
    with pytest.raises(ContractCheckError, match="'onset' is listed twice"):
        sedcontract.audit(REF, PRED, coordinates=["onset", "onset", "silence"])
    with pytest.raises(TraceFormatError, match="class 'tone' is declared twice"):
        sedcontract.audit(REF, PRED, classes=["speech", "tone", "tone"])


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"ref": [("c", 0.5, 1.5, "speech")]}, "ref must be an event file, an EventList"),
    ({"contract": None}, "a contract is a shipped name"),
    ({"hop": "0.02"}, "grid hop must be a number of seconds, got str"),
    ({"durations": 4.0}, "durations must map clips to seconds"),
    ({"scores": {"t_collar": 0.2}}, "scores must be a ScoreSettings"),
    ({"eps": 0.2}, "binding 'eps' must be frames"),
    ({"max_frames": 0}, "max_frames must be a positive integer"),
])
def test_api_arguments_of_the_wrong_type_are_clear_errors(kwargs, fragment):
    arguments = {"ref": REF, "pred": PRED, **kwargs}
    with pytest.raises(sedcontract.SedContractError, match=re.escape(fragment)):
        sedcontract.audit(arguments.pop("ref"), arguments.pop("pred"), **arguments)


def test_lost_events_and_strange_classes_are_warned_about_above_the_vector():
    ref = EventList.from_rows([("a", 0.5, 1.5, "Speech"), ("a", 2.0, 2.005, "Speech")])
    pred = EventList.from_rows([("a", 0.5, 1.5, "speech")])
    report = sedcontract.audit(ref, pred, durations={"a": 4.0})
    warnings = report.traces["warnings"]
    assert warnings[0].startswith("1 of 2 reference events cover no frame at hop 0.02 s")
    assert any("differ only in case" in w for w in warnings)
    assert any("share no class" in w for w in warnings)
    text = to_markdown(report)
    assert text.index("> warning: 1 of 2 reference events") < text.index("| coordinate |")
    assert json.loads(to_json(report))["traces"]["warnings"] == warnings
    clean = sedcontract.audit(REF, PRED, durations={"c": 4.0})
    assert clean.traces["warnings"] == [] and not to_markdown(clean).startswith(">")


def test_labels_with_pipes_and_line_breaks_keep_the_tables_whole():
    ref = EventList.from_rows([("a", 0.5, 1.5, "cat|dog"), ("a", 2.0, 3.0, "bird\u2028song")])
    text = to_markdown(sedcontract.audit(ref, ref, durations={"a": 4.0}))
    header = next(line for line in text.splitlines() if line.startswith("| coordinate | "
                                                                          "bird"))
    assert header == "| coordinate | bird song | cat\\|dog |"
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len({line.count("|") - line.count("\\|") for line in rows[-8:]}) == 1


@pytest.mark.parametrize("cells", [1, 40, 333])
def test_chunked_evaluation_reports_what_one_chunk_reports(cells, monkeypatch):
    """The contract runs a chunk of rows at a time; counts, matchings (pairs, greedy against
    exact) and every rendering are the same whatever the chunk size."""
    from sedcontract.contracts import load_contract, parse_contract
    from sedcontract.traces import traceset

    ref = random_reference(3, clips=6)
    pred = shifted(ref, 0.13).select(classes=["speech", "tone"])
    durations = {c: 10.0 for c in ref.clips}
    text = (load_contract("standard").source
            + "clause cross: on ref.onset[tone] require N[eps] pred.active[speech]\n")
    contract = parse_contract(text)
    whole = sedcontract.audit(ref, pred, durations=durations, contract=contract,
                              matching="greedy", backend="dense")
    monkeypatch.setattr(traceset, "CHUNK_CELLS", cells)
    parts = sedcontract.audit(ref, pred, durations=durations, contract=contract,
                              matching="greedy", backend="dense")
    assert len(traceset.TraceSet.from_events(ref, pred, hop=0.02, durations=durations)
               .chunks("typed")) > 1
    assert to_json(parts) == to_json(whole) and to_csv(parts) == to_csv(whole)
    for mode in ("typed", "union"):
        mine, one = parts.modes[mode].matchings["m"], whole.modes[mode].matchings["m"]
        assert mine.pairs == one.pairs > 0
        assert mine.greedy_per_row.tolist() == one.greedy_per_row.tolist()
        assert mine.exact_per_row.tolist() == one.exact_per_row.tolist()
