"""Event files as DCASE participants have them: pandas CSVs and psds_eval operating-point
tables read as they are, and events that end past their clip's duration (rounded durations,
padded detectors) cut and counted — or refused, with the count and the first row."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import TraceFormatError
from sedcontract.guard import AuditPolicy, audit
from sedcontract.traces import read_durations, read_events
from sedcontract.traces.overrun import fit_to_durations

REF = ("filename\tonset\toffset\tevent_label\n"
       "a.wav\t0.5\t4.0\tdog\n"
       "a.wav\t6.0\t9.557\tcat\n"      # 0.057 s past a duration rounded to 9.5
       "b.wav\t1.0\t3.0\tdog\n")
DURATIONS = "filename\tduration\na.wav\t9.5\nb.wav\t6.0\n"
# pandas' to_csv: an unnamed index column, commas; the second detection runs 3.984 s past b
PANDAS = (",event_label,onset,offset,filename\n"
          "0,dog,0.512,4.032,a.wav\n"
          "1,cat,6.016,9.984,a.wav\n"
          "2,dog,0.96,9.984,b.wav\n")
OPERATING_POINT = ("event_label\tonset\toffset\tfilename\tindex\n"
                   "dog\t0.512\t4.032\ta.wav\t0\n"
                   "cat\t6.016\t9.984\ta.wav\t1\n")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_pandas_csv_and_an_operating_point_table_are_read_as_they_are(tmp_path):
    events = read_events(write(tmp_path, "pred.csv", PANDAS))
    assert events.clip.tolist() == ["a", "a", "b"]
    assert events.label.tolist() == ["dog", "cat", "dog"]
    np.testing.assert_allclose(events.offset, [4.032, 9.984, 9.984])
    assert events.where(2) == {"path": str(tmp_path / "pred.csv"), "row": 4}
    quoted = read_events(write(tmp_path, "q.csv", ',event_label,onset,offset,filename\n'
                                                  '0,"dog, small",0.5,1.0,"a,1.wav"\n'))
    assert quoted.label.tolist() == ["dog, small"] and quoted.clip.tolist() == ["a,1"]
    table = read_events(write(tmp_path, "th_0.5.tsv", OPERATING_POINT))
    assert table.clip.tolist() == ["a", "a"] and table.label.tolist() == ["dog", "cat"]


@pytest.mark.parametrize(("text", "fragment"), [
    ("a.wav,0.5,1.0,dog\n", r"looks comma-separated \(a CSV: 'a.wav,0.5,1.0,dog'\) without "
                            r"a header naming filename, onset, offset, event_label"),
    ("filename\tonset\toffset\tevent_label\na.wav,0.5,1.0,dog\n",
     r"one column 'a.wav,0.5,1.0,dog': this looks comma-separated"),
    ("clip,start,end,label\na.wav,0.5,1.0,dog\n",
     r"looks comma-separated \(a CSV: 'clip,start,end,label'\) without a header naming "
     r"filename, onset, offset, event_label"),
])
def test_a_csv_the_reader_cannot_map_says_what_it_looks_like(tmp_path, text, fragment):
    with pytest.raises(TraceFormatError, match=fragment) as info:
        read_events(write(tmp_path, "x.csv", text))
    assert info.value.path == str(tmp_path / "x.csv") and info.value.row in (1, 2)


def test_events_past_their_clip_are_cut_within_the_tolerance_and_counted(tmp_path):
    ref, pred = write(tmp_path, "ref.tsv", REF), write(tmp_path, "pred.csv", PANDAS)
    durations = write(tmp_path, "durations.tsv", DURATIONS)
    report = audit(ref, pred, durations=durations)
    traces = report.traces
    assert traces["cut"] == {"ref": 1, "pred": 2}
    notes = " ".join(traces["warnings"])
    assert f"1 reference event(s) ended past their clip's duration and were cut at it (the " \
           f"first: {ref}, row 3)" in notes
    assert "2 predicted event(s)" in notes and f"{pred}, row 3" in notes
    # the cut events are what the monitor sees: b's detection ends at 6.0 s, its last frame
    assert report.facts.frames.tolist() == [475, 300]
    # a shard's report keeps its own clips' counts
    part = audit(ref, pred, durations=durations, shard=(1, 2))
    assert part.traces["cut"] == {"ref": 0, "pred": 1}


def test_events_beyond_the_tolerance_or_any_with_strict_durations_are_refused(tmp_path):
    ref, pred = write(tmp_path, "ref.tsv", REF), write(tmp_path, "pred.csv", PANDAS)
    durations = write(tmp_path, "durations.tsv", DURATIONS)
    with pytest.raises(TraceFormatError, match=r"1 reference event\(s\) end past their clip's "
                       r"duration, more than the tolerance of 0\.05 s \(--duration-tolerance\)"
                       r"; the latest by 0\.057 s; the first: offset 9\.557") as info:
        audit(ref, pred, AuditPolicy(duration_tolerance=0.05), durations=durations)
    assert (info.value.path, info.value.row, info.value.column) == (str(ref), 3, "offset")
    with pytest.raises(TraceFormatError, match=r"--strict-durations"):
        audit(ref, pred, AuditPolicy(strict_durations=True), durations=durations)
    plain = write(tmp_path, "plain.tsv", REF.replace("9.557", "9.5"))
    with pytest.raises(TraceFormatError, match=r"2 predicted event\(s\).*--strict-durations"):
        audit(plain, pred, AuditPolicy(strict_durations=True), durations=durations)
    # predictions are cut whatever the overrun: the audio ends there
    assert audit(plain, pred, durations=durations).traces["cut"] == {"ref": 0, "pred": 2}


def test_the_cli_options_reach_the_policy(tmp_path, capsys):
    ref, pred = write(tmp_path, "ref.tsv", REF), write(tmp_path, "pred.csv", PANDAS)
    durations = write(tmp_path, "durations.tsv", DURATIONS)
    base = ["audit", "--ref", str(ref), "--pred", str(pred), "--durations", str(durations)]
    assert main([*base, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["traces"]["cut"] == {"ref": 1, "pred": 2}
    assert "ended past their clip's duration" in captured.err
    assert main([*base, "--duration-tolerance", "10ms"]) == 2
    assert "more than the tolerance of 0.01 s" in capsys.readouterr().err
    assert main([*base, "--strict-durations"]) == 2
    err = capsys.readouterr().err
    assert "--strict-durations" in err and "Traceback" not in err


def test_fit_to_durations_refuses_a_bad_tolerance_and_leaves_unlisted_clips():
    events = read_events_of([("a", 0.0, 2.0, "dog"), ("z", 0.0, 50.0, "dog")])
    cut, what = fit_to_durations(events, {"a": 1.0}, "pred")
    assert cut.offset.tolist() == [1.0, 50.0] and what.count == 1
    with pytest.raises(TraceFormatError, match="tolerance must be a number"):
        fit_to_durations(events, {"a": 1.0}, "ref", tolerance=-1)


def read_events_of(rows):
    from sedcontract.traces import EventList

    return EventList.from_rows(rows)


def test_a_reference_event_ending_exactly_the_tolerance_past_its_clip_is_cut_one_us_more_refused():
    """The tolerance is inclusive on the microsecond grid: an offset of duration + tolerance is
    cut (even where float64 makes 0.9 − 0.7 exceed 0.2), 1 µs more is refused."""
    durations = {"a": 0.7, "b": 9.5}
    edge = read_events_of([("a", 0.1, 0.9, "dog"), ("b", 9.0, 9.7, "cat")])
    cut, what = fit_to_durations(edge, durations, "ref", tolerance=0.2)
    assert cut.offset.tolist() == [0.7, 9.5] and cut.onset.tolist() == [0.1, 9.0]
    assert what.count == 2 and what.first == "events, row 1"
    for rows, row in (([("a", 0.1, 0.900001, "dog"), ("b", 9.0, 9.7, "cat")], 1),
                      ([("a", 0.1, 0.9, "dog"), ("b", 9.0, 9.700001, "cat")], 2)):
        with pytest.raises(TraceFormatError, match=r"^row \d, column 'offset': 1 reference "
                           r"event\(s\) end past their clip's duration, more than the "
                           r"tolerance of 0\.2 s") as info:
            fit_to_durations(read_events_of(rows), durations, "ref", tolerance=0.2)
        assert info.value.row == row
    # a smaller tolerance moves the edge with it: 9.55 is cut under 0.05 s, 9.550001 is not
    assert fit_to_durations(read_events_of([("b", 9.0, 9.55, "cat")]), durations, "ref",
                            tolerance=0.05)[0].offset.tolist() == [9.5]
    with pytest.raises(TraceFormatError, match=r"more than the tolerance of 0\.05 s"):
        fit_to_durations(read_events_of([("b", 9.0, 9.550001, "cat")]), durations, "ref",
                         tolerance=0.05)


def test_an_event_starting_after_its_clip_ends_becomes_an_empty_event_at_the_clip_end():
    """Onset and offset both past the duration: a reference event within the tolerance and a
    predicted event at any distance are kept, both times cut to the duration (zero length);
    a reference event beyond the tolerance is refused, naming its offset."""
    durations = {"a": 9.5}
    ref = read_events_of([("a", 1.0, 2.0, "dog"), ("a", 9.55, 9.6, "cat")])
    cut, what = fit_to_durations(ref, durations, "ref", tolerance=0.2)
    assert cut.to_rows() == [("a", 1.0, 2.0, "dog"), ("a", 9.5, 9.5, "cat")]
    assert what.count == 1 and what.cut.tolist() == [False, True]
    assert what.first == "events, row 2"
    pred = read_events_of([("a", 12.0, 13.0, "dog"), ("a", 9.5, 9.5, "cat")])
    cut, what = fit_to_durations(pred, durations, "pred", tolerance=0.2)
    assert cut.to_rows() == [("a", 9.5, 9.5, "dog"), ("a", 9.5, 9.5, "cat")]
    assert what.cut.tolist() == [True, False]  # an event ending at the duration is not cut
    with pytest.raises(TraceFormatError, match=r"the first: offset 9\.9 after the duration "
                                               r"9\.5") as info:
        fit_to_durations(read_events_of([("a", 9.8, 9.9, "cat")]), durations, "ref",
                         tolerance=0.2)
    assert (info.value.row, info.value.column) == (1, "offset")


@pytest.mark.parametrize("zero", [0, 0.0])
def test_a_tolerance_of_zero_accepts_events_ending_at_their_clip_and_refuses_any_later(zero):
    """Tolerance 0 is a valid tolerance, not "unset": a reference event ending exactly at
    the duration (or within half a microsecond of it) is left alone, 1 µs past is refused;
    predictions are still cut."""
    durations = {"a": 9.5}
    at_end = read_events_of([("a", 9.0, 9.5, "dog"), ("a", 9.1, 9.5000004, "cat")])
    cut, what = fit_to_durations(at_end, durations, "ref", tolerance=zero)
    assert cut is at_end and what.count == 0 and what.first is None
    past = read_events_of([("a", 9.0, 9.500001, "dog")])
    with pytest.raises(TraceFormatError, match=r"1 reference event\(s\) end past their "
                                               r"clip's duration, more than the tolerance "
                                               r"of 0 s\b.*; the latest by 1e-06 s"):
        fit_to_durations(past, durations, "ref", tolerance=zero)
    cut, what = fit_to_durations(past, durations, "pred", tolerance=zero)
    assert cut.offset.tolist() == [9.5] and what.count == 1


@pytest.mark.parametrize(("name", "text"), [
    ("caps.csv", "Filename,Onset,Offset,Event_label\nY1.wav,0.5,1.0,Dog\n"),
    ("pandas.csv", ",EVENT_LABEL,ONSET,OFFSET,FILENAME\n0,Dog,0.5,1.0,Y1.wav\n"),
    ("caps.tsv", "Filename\tEvent_Label\tOnset\tOffset\nY1.wav\tDog\t0.5\t1.0\n"),
    # every field quoted (R's write.csv, pandas' QUOTE_ALL): a line opening with a quote
    ("quoted.csv", '"Filename","Onset","Offset","Event_label"\n"Y1.wav","0.5","1.0","Dog"\n'),
    ("first.csv", 'filename,onset,offset,event_label\n"Y1.wav",0.5,1.0,"Dog"\n'),
])
def test_a_header_in_capitals_is_read_as_the_header(tmp_path, name, text):
    """Column names are matched case-insensitively, in a CSV (pandas index or not) and a tsv;
    the values (labels, filenames) keep their case."""
    events = read_events(write(tmp_path, name, text))
    assert events.to_rows() == [("Y1", 0.5, 1.0, "Dog")]
    assert events.rows.tolist() == [2]
    durations = write(tmp_path, "durations.csv", "Filename,Duration\nY1.wav,10.0\n")
    assert read_durations(durations) == {"Y1": 10.0}
