"""Regression tests for bad and unusual input: each one a clear error naming the file and row,
or a correct result where the input is valid."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sedcontract
from sedcontract.cli import main
from sedcontract.contracts import evaluate_contract
from sedcontract.errors import SignalError, TraceFormatError
from sedcontract.guard import to_markdown

HEADER = "filename\tonset\toffset\tevent_label\n"


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_empty_files_give_vacuous_vectors(tmp_path, capsys):
    ref = write(tmp_path, "ref.tsv", HEADER)
    pred = write(tmp_path, "pred.tsv", HEADER)
    assert main(["audit", f"--ref={ref}", f"--pred={pred}", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(c["vacuous"] for c in data["modes"]["typed"]["coordinates"].values())
    silent = write(tmp_path, "silent.tsv", HEADER + "a.wav\t\t\t\n")  # a clip with no events
    report = sedcontract.audit(silent, pred)
    assert report.traces["clips"] == 1 and np.isnan(report.logic("union"))
    assert "| coordinate |  |" not in to_markdown(report)  # no empty per-class table


@pytest.mark.parametrize("label", ["dog bark", "Speech-1", "1", "a.b", "话", 'say "hi"'])
def test_any_label_can_be_audited(label):
    ref = sedcontract.EventList.from_rows([("a", 0.5, 1.5, label), ("a", 2.0, 3.0, "other")])
    report = sedcontract.audit(ref, ref, durations={"a": 4.0})
    assert report.vector("typed")["onset"] == 1.0
    assert report.modes["typed"].per_class("missed")[label].satisfied == 1


def test_class_indexed_atoms_with_quoted_names():
    signals = {'ref.active["dog bark"]': np.array([0, 1, 1, 0], dtype=bool)}
    out = sedcontract.evaluate_formula('ref.onset["dog bark"]', signals)
    assert out.tolist() == [False, True, False, False]


def test_space_separated_rows_are_an_error(tmp_path):
    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\n")
    pred = write(tmp_path, "pred.tsv", HEADER + "a.wav 0.5 1.5 speech\n")
    with pytest.raises(TraceFormatError, match="separated by tabs") as info:
        sedcontract.audit(ref, pred)
    assert (info.value.path, info.value.row) == (str(pred), 2)
    extra = write(tmp_path, "extra.tsv", "a.wav\t0.5\t1.5\tspeech\t0.9\n")
    with pytest.raises(TraceFormatError, match="5 columns"):
        sedcontract.read_events(extra)


def test_prediction_only_clips_are_named_with_their_row(tmp_path):
    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\n")
    pred = write(tmp_path, "pred.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\nzz.wav\t\t\t\n")
    with pytest.raises(TraceFormatError, match="clip 'zz'") as info:
        sedcontract.audit(ref, pred)
    assert (info.value.path, info.value.row) == (str(pred), 3)


def test_byte_order_mark_is_not_data(tmp_path):
    path = tmp_path / "bom.tsv"
    path.write_bytes(("\ufeff" + HEADER + "a.wav\t0.5\t1.5\tspeech\n").encode())
    assert sedcontract.read_events(path).to_rows() == [("a", 0.5, 1.5, "speech")]


def test_bad_hops_are_clear_errors(capsys):
    assert main(["check", "standard", "--hop", "0"]) == 2
    assert "grid hop must be a positive" in capsys.readouterr().err
    assert main(["check", "standard", "--hop", "0.0015ms"]) == 2
    assert "whole number of microseconds" in capsys.readouterr().err
    with pytest.raises(SignalError):
        sedcontract.evaluate_formula("F[20ms] pred.active", {"pred.active": np.ones(3, bool)},
                                     hop=float("nan"))


def test_contract_file_that_is_not_text(tmp_path, capsys):
    path = tmp_path / "bad.contract"
    path.write_bytes(b"let eps = \xff\xfe")
    assert main(["check", str(path)]) == 2
    assert f"{path}: not UTF-8 text" in capsys.readouterr().err


def score_dir(tmp_path, name: str, text: str):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "a.tsv").write_text(text)
    return folder


def test_score_files_skip_blank_lines_and_errors_name_the_score_file(tmp_path, capsys):
    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.0\t0.04\tspeech\n")
    scores = score_dir(tmp_path, "s", "onset\toffset\tspeech\n0\t0.02\t0.9\n0.02\t0.04\t0.8\n\n")
    assert main(["audit", f"--ref={ref}", f"--pred-scores={scores}", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["modes"]["typed"]["coordinates"]["missed"]["satisfied"] == 1
    other = write(tmp_path, "other.tsv", HEADER + "b.wav\t0.0\t0.04\tspeech\n")
    assert main(["audit", f"--ref={other}", f"--pred-scores={scores}"]) == 2
    assert f"{scores / 'a.tsv'}: scores of clip 'a', which the reference does not list" in \
        capsys.readouterr().err
    durations = write(tmp_path, "d.tsv", "filename\tduration\na.wav\t0.05\n")
    longer = score_dir(tmp_path, "s3", "onset\toffset\tspeech\n0\t0.02\t0.9\n0.02\t0.04\t0.8\n"
                                       "0.04\t0.06\t0.8\n")
    # a detection past the clip's end is cut there, counted and named; --strict-durations
    # refuses it, naming the score file's row
    assert main(["audit", f"--ref={ref}", f"--pred-scores={longer}",
                 f"--durations={durations}"]) == 0
    assert f"1 predicted event(s) ended past their clip's duration and were cut at it (the " \
           f"first: {longer / 'a.tsv'}, row 2)" in capsys.readouterr().err
    assert main(["audit", f"--ref={ref}", f"--pred-scores={longer}",
                 f"--durations={durations}", "--strict-durations"]) == 2
    assert "--strict-durations" in (err := capsys.readouterr().err)
    assert f"{longer / 'a.tsv'}, row 2, column 'offset'" in err
    assert main(["audit", f"--ref={ref}", f"--pred-scores={scores}", "--threshold", "nan"]) == 2
    assert "finite" in capsys.readouterr().err


def test_events_merged_by_projection_are_counted():
    ref = sedcontract.EventList.from_rows([("a", 0.5, 1.011, "x"), ("a", 1.012, 1.5, "x")])
    report = sedcontract.audit(ref, ref, durations={"a": 2.0})
    assert report.traces["merged"] == {"ref": 1, "pred": 1}
    tiny = sedcontract.EventList.from_rows([("a", 0.5, 1.0, "x"), ("a", 1.0, 1.0, "x")])
    report = sedcontract.audit(tiny, tiny, durations={"a": 2.0})
    assert report.traces["vanished"]["ref"] == 1 and report.traces["merged"]["ref"] == 0


def test_division_by_zero_fails_comparisons():
    result = evaluate_contract("clause c: each ref require dur(ref) / (dur(ref) - dur(ref)) > 1\n"
                               "clause d: each ref require !(dur(ref) / (dur(ref) - dur(ref))"
                               " <= 1)",
                               {"ref.active": np.array([0, 1, 1, 0], dtype=bool),
                                "pred.active": np.zeros(4, dtype=bool)})
    assert (result["c"].satisfied, result["d"].satisfied) == (0, 1)


def test_macro_on_the_union_trace_is_pooled():
    ref = sedcontract.EventList.from_rows([("a", 0.5, 1.5, "x"), ("a", 2.0, 3.0, "y")])
    report = sedcontract.audit(ref, ref, durations={"a": 4.0}, aggregation="macro")
    assert report.modes["union"].macro("onset") == (1.0, 0)
    assert "1.000 (pooled, no classes)" in to_markdown(report)


def test_out_to_a_directory_leaves_nothing_behind(tmp_path, capsys):
    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\n")
    target = tmp_path / "dir"
    target.mkdir()
    assert main(["audit", f"--ref={ref}", f"--pred={ref}", "--out", str(target)]) == 2
    assert not (tmp_path / "dir.partial").exists()
    assert "sedcontract:" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--ref", "--pred", "--durations"])
def test_a_pipe_or_folder_given_as_a_tsv_file_is_refused_not_read(tmp_path, option):
    """A FIFO would block the tsv reader forever: anything but a regular file is refused by
    name before it is opened (a folder too)."""
    import os

    from tests.helpers.limits import run_limited

    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\n")
    durations = write(tmp_path, "durations.tsv", "filename\tduration\na.wav\t2.0\n")
    pipe, folder = tmp_path / "pipe.tsv", tmp_path / "folder.tsv"
    os.mkfifo(pipe)
    folder.mkdir()
    for bad in (pipe, folder):
        given = {"--ref": ref, "--pred": ref, "--durations": durations, option: bad}
        code = ("from sedcontract.cli import main\n"
                f"print(main([{'audit'!r}, *{[f'{k}={v}' for k, v in given.items()]!r}]))\n")
        result = run_limited(["-c", code], limit_mb=1000, timeout=20)
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.strip() == "2"
        assert f"{bad}: not a regular file" in result.stderr


@pytest.mark.parametrize("command", ["contract", "rows", "shard", "risk-order"])
def test_a_pipe_given_as_any_other_input_is_refused_not_read(tmp_path, command):
    """Contracts, report rows, shard reports and risk orders are read by their own readers:
    each refuses a FIFO by name instead of blocking on it."""
    import os

    from tests.helpers.limits import run_limited

    ref = write(tmp_path, "ref.tsv", HEADER + "a.wav\t0.5\t1.5\tspeech\n")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    argv = {"contract": ["audit", f"--ref={ref}", f"--pred={ref}", f"--contract={pipe}"],
            "rows": ["report", str(pipe), "--out", str(tmp_path / "report")],
            "shard": ["merge", str(pipe)],
            "risk-order": ["select", "--calibration", str(tmp_path), "--risk-order", str(pipe),
                           "--out", str(tmp_path / "s.contract")]}[command]
    if command == "risk-order":
        for name in ("ref", "pred", "durations", "labels"):
            write(tmp_path, f"{name}.tsv", "")
        from sedcontract.data import pathology_set, write_pathology_set
        from sedcontract.traces import EventList

        events = EventList.from_rows([("a", 0.5, 1.5, "speech"), ("a", 2.0, 3.0, "tone")])
        write_pathology_set(tmp_path, pathology_set(events, {"a": 4.0}, seed=0))
    code = f"from sedcontract.cli import main\nprint(main({argv!r}))\n"
    result = run_limited(["-c", code], limit_mb=1000, timeout=20)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "2"
    expected = "no such rows file or run folder" if command == "rows" else "not a regular file"
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_a_clip_name_of_100000_characters_is_named_not_printed(tmp_path, capsys):
    """A message names a long clip id by its start, its length and its end (at most 300
    characters of one name shown whole), on the command line and in the API's exception; a
    name of 300 characters is shown whole."""
    name = "x" * 99_990 + "_the_end"
    write(tmp_path, "ref.tsv", HEADER + f"{name}.wav\t0.0\t1.0\tSpeech\nb.wav\t0.0\t1.0\tSpeech\n")
    write(tmp_path, "pred.tsv", HEADER + "b.wav\t0.0\t1.0\tSpeech\n")
    write(tmp_path, "durations.tsv", "filename\tduration\nb.wav\t10\n")
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred",
                 str(tmp_path / "pred.tsv"), "--durations", str(tmp_path / "durations.tsv")]) == 2
    err = capsys.readouterr().err
    assert len(err) < 500 and "…[99,998 characters]…" in err and err.rstrip().endswith("_the_end")
    with pytest.raises(TraceFormatError) as info:
        sedcontract.audit({name: [(0.0, 1.0, "Speech")]}, {name: []}, durations={"b": 10.0})
    assert len(str(info.value)) < 500 and "characters]…" in str(info.value)
    assert len(info.value.args[0]) > 99_990  # the whole text is kept for a program that asks
    short = "y" * 300
    assert short in str(TraceFormatError(f"clip {short} has no duration"))
    assert "y" * 301 not in str(TraceFormatError(f"clip {short}y has no duration"))
