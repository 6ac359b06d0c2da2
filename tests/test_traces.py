"""Traces: grid projection, maximal runs, DCASE tsv files and the typed/union trace set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sedcontract.errors import SignalError, TraceFormatError
from sedcontract.traces import (
    EventList,
    Grid,
    TraceSet,
    project,
    read_durations,
    read_events,
    runs,
    write_durations,
    write_events,
)
from sedcontract.traces.tsv import clip_id

HOP = 0.02


@pytest.mark.parametrize(("policy", "onset", "offset", "expected"), [
    # centres at 0.01, 0.03, 0.05, …; half-open [onset, offset)
    ("center", 0.01, 0.05, (0, 2)),     # centre 0.01 is inside, centre 0.05 is not
    ("center", 0.0100001, 0.05, (0, 2)),  # 10000.1 µs rounds onto the centre: included
    ("center", 0.010001, 0.05, (1, 2)),
    ("center", 0.0, 0.0099995, (0, 0)),  # rounds to 0.01 µs-wise: 0.0100000 → excluded
    ("center", 0.02, 0.021, (1, 1)),    # covers no centre: vanishes
    ("any_overlap", 0.019, 0.041, (0, 3)),
    ("any_overlap", 0.02, 0.04, (1, 2)),
    ("any_overlap", 0.03, 0.03, (1, 1)),  # zero length never covers a frame
    ("majority", 0.009, 0.051, (0, 3)),  # 11 ms of frame 0, 11 ms of frame 2
    ("majority", 0.01, 0.05, (1, 2)),    # exactly half is not a majority
    ("majority", 0.005, 0.015, (1, 1)),
])
def test_projection_policies(policy, onset, offset, expected):
    first, end = project(np.array([onset]), np.array([offset]), HOP, policy)
    assert (int(first[0]), int(end[0])) == expected


def test_projection_rejects_unknown_policy():
    with pytest.raises(SignalError, match="unknown projection 'middle'"):
        project(np.array([0.0]), np.array([1.0]), HOP, "middle")


def test_grid():
    assert Grid.covering(10.0, 0.02).n == 500
    assert Grid.covering(10.001, 0.02).n == 501  # a partial last frame counts
    assert Grid.covering(10.0, 0.064).n == 157
    with pytest.raises(SignalError, match="positive"):
        Grid(0.0, 5)
    with pytest.raises(SignalError, match="microseconds"):
        Grid(1e-7, 5)


def test_runs_are_maximal_and_respect_lengths():
    active = np.array([[1, 1, 0, 1, 0, 1], [0, 0, 0, 0, 1, 1]], dtype=bool)
    row, start, end = runs(active)
    assert list(zip(row.tolist(), start.tolist(), end.tolist(), strict=True)) == [
        (0, 0, 2), (0, 3, 4), (0, 5, 6), (1, 4, 6)]
    row, start, end = runs(active, lengths=np.array([6, 5]))
    assert list(zip(row.tolist(), start.tolist(), end.tolist(), strict=True))[-1] == (1, 4, 5)


@given(arrays(bool, st.tuples(st.integers(1, 4), st.integers(0, 30))))
def test_runs_rebuild_the_trace(active):
    rebuilt = np.zeros_like(active)
    for r, s, e in zip(*runs(active), strict=True):
        assert e > s
        assert s == 0 or not active[r, s - 1]
        assert e == active.shape[1] or not active[r, e]
        rebuilt[r, s:e] = True
    assert np.array_equal(rebuilt, active)


def test_clip_ids():
    assert clip_id("Y1.wav") == "Y1"
    assert clip_id("a_50.000_60.000") == "a_50.000_60.000"
    assert clip_id("a_50.000_60.000.flac") == "a_50.000_60.000"


def test_tsv_round_trip(tmp_path):
    events = EventList.from_rows([("a", 0.5, 1.25, "speech"), ("b", 0.0, 0.1, "people talking")],
                                 clips=("a", "b", "silent"))
    write_events(tmp_path / "e.tsv", events)
    back = read_events(tmp_path / "e.tsv")
    assert back.to_rows() == events.to_rows()
    assert back.clips == ("a", "b", "silent")
    write_durations(tmp_path / "d.tsv", {"a": 10.0, "b": 9.5})
    assert read_durations(tmp_path / "d.tsv") == {"a": 10.0, "b": 9.5}


def test_tsv_without_header_and_with_reordered_columns(tmp_path):
    (tmp_path / "plain.tsv").write_text("x.wav\t1.0\t2.0\tdog\n")
    assert read_events(tmp_path / "plain.tsv").to_rows() == [("x", 1.0, 2.0, "dog")]
    (tmp_path / "order.tsv").write_text("filename\tevent_label\tonset\toffset\nx.wav\tdog\t1\t2\n")
    assert read_events(tmp_path / "order.tsv").to_rows() == [("x", 1.0, 2.0, "dog")]


@pytest.mark.parametrize(("body", "row", "column", "fragment"), [
    ("a.wav\t1.0\t\tdog\n", 2, "offset", "missing value"),
    ("a.wav\t1.0\n", 2, "offset", "missing value"),
    ("a.wav\t2.0\t1.0\tdog\n", 2, "offset", "before onset"),
    ("a.wav\tnan\t1.0\tdog\n", 2, "onset", "not a finite time"),
    ("a.wav\t0\t1\tdog\na.wav\t-1.0\t1.0\tdog\n", 3, "onset", "negative time"),
    ("a.wav\tone\t2\tdog\n", 2, "onset", "'one' is not a number"),
    ("\t1\t2\tdog\n", 2, "filename", "missing value"),
])
def test_tsv_errors_name_file_row_and_column(tmp_path, body, row, column, fragment):
    path = tmp_path / "bad.tsv"
    path.write_text("filename\tonset\toffset\tevent_label\n" + body)
    with pytest.raises(TraceFormatError) as info:
        read_events(path)
    err = info.value
    assert (err.path, err.row, err.column) == (str(path), row, column)
    assert fragment in str(err) and str(path) in str(err) and f"row {row}" in str(err)


def test_tsv_file_level_errors(tmp_path):
    with pytest.raises(TraceFormatError, match="file not found"):
        read_events(tmp_path / "missing.tsv")
    (tmp_path / "h.tsv").write_text("filename\tonset\tevent_label\n")
    with pytest.raises(TraceFormatError, match="header lacks column"):
        read_events(tmp_path / "h.tsv")
    (tmp_path / "d.tsv").write_text("filename\tduration\na.wav\t-3\n")
    with pytest.raises(TraceFormatError, match="row 2"):
        read_durations(tmp_path / "d.tsv")


def worked_example() -> TraceSet:
    ref = EventList.from_rows([("c", 0.5, 1.5, "speech"), ("c", 2.0, 2.6, "tone")])
    pred = EventList.from_rows([("c", 0.6, 1.0, "speech"), ("c", 1.1, 1.8, "speech"),
                                ("c", 2.0, 2.6, "speech"), ("c", 3.2, 3.4, "tone")])
    return TraceSet.from_events(ref, pred, hop=HOP, durations={"c": 4.0})


def test_trace_set_typed_and_union_signals():
    traces = worked_example()
    assert traces.classes == ("speech", "tone") and traces.lengths.tolist() == [200]
    typed, lengths = traces.signals("typed")
    assert typed["ref.active"].shape == (2, 200) and lengths.tolist() == [200, 200]
    speech = typed["ref.active"][0]
    assert np.flatnonzero(speech).tolist() == list(range(25, 75))
    assert np.array_equal(typed["ref.active[tone]"][0], typed["ref.active"][1])
    union, lengths = traces.signals("union")
    assert union["pred.active"].shape == (1, 200)
    assert union["pred.active"][0].sum() == 20 + 35 + 30 + 10
    assert traces.row_labels("typed") == [("c", "speech"), ("c", "tone")]


def test_trace_set_errors_and_vanished_events(tmp_path):
    ref_path = tmp_path / "ref.tsv"
    ref_path.write_text("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\n")
    pred_path = tmp_path / "pred.tsv"
    pred_path.write_text("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\n"
                         "b.wav\t0\t1\tdog\n")
    with pytest.raises(TraceFormatError, match="clip 'b', which the reference does not list") \
            as info:
        TraceSet.from_events(read_events(ref_path), read_events(pred_path), hop=HOP)
    assert info.value.row == 3
    ref = read_events(ref_path)
    with pytest.raises(TraceFormatError, match="past the clip duration"):
        TraceSet.from_events(ref, ref, hop=HOP, durations={"a": 0.5})
    with pytest.raises(TraceFormatError, match="no duration for clip"):
        TraceSet.from_events(ref, ref, hop=HOP, durations={})
    tiny = EventList.from_rows([("a", 0.2, 0.205, "dog")])
    traces = TraceSet.from_events(ref, tiny, hop=HOP)
    assert traces.vanished == {"ref": 0, "pred": 1}


def test_select_keeps_clips_classes_and_source_rows(tmp_path):
    path = tmp_path / "ref.tsv"
    path.write_text("filename\tonset\toffset\tevent_label\n"
                    "a.wav\t0.0\t1.0\tspeech\nb.wav\t0.5\t1.5\ttone\n"
                    "a.wav\t2.0\t3.0\ttone\nc.wav\t\t\t\n")
    events = read_events(path)
    picked = events.select(clips=["c", "a"])
    assert picked.clips == ("c", "a")  # c has no events and stays listed
    assert picked.to_rows() == [("a", 0.0, 1.0, "speech"), ("a", 2.0, 3.0, "tone")]
    assert picked.where(1)["row"] == 4  # the source line of the second kept event
    tones = events.select(classes=["tone"])
    assert tones.clips == events.clips and [r[0] for r in tones.to_rows()] == ["b", "a"]
