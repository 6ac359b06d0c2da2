"""Traces: grid projection, maximal runs, DCASE tsv files and the typed/union trace set."""

from __future__ import annotations

import itertools
import re

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
from sedcontract.traces.decision import DecisionPolicy, decide
from sedcontract.traces.grid import to_us
from sedcontract.traces.intervals import Intervals, overlap_ranges
from sedcontract.traces.score_files import scores_to_events
from sedcontract.traces.tsv import EVENT_COLUMNS, clip_id

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


@pytest.mark.parametrize("separator", [";", "|"])
@pytest.mark.parametrize("header", [True, False])
def test_a_file_separated_by_another_character_is_refused_not_read_as_empty_clips(
        tmp_path, capsys, separator, header):
    """A semicolon-separated file once read as 3 clips without events: every coordinate
    vacuous, exit 0, and with a normal --pred the error named the other file."""
    from sedcontract.cli import main

    rows = ["a.wav", "0.5", "1.0", "speech"], ["b.wav", "1.0", "2.0", "speech"]
    lines = [separator.join(r) for r in ([list(EVENT_COLUMNS)] if header else []) + list(rows)]
    path = tmp_path / "semi.tsv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceFormatError, match=f"this looks separated by {separator!r}, not by "
                                               "tabs") as info:
        read_events(path)
    assert (info.value.path, info.value.row) == (str(path), 1)
    (tmp_path / "dur.tsv").write_text(f"filename{separator}duration\na.wav{separator}10\n")
    with pytest.raises(TraceFormatError, match="separated by"):
        read_durations(tmp_path / "dur.tsv")
    good = tmp_path / "good.tsv"
    good.write_text("\n".join("\t".join(r) for r in rows) + "\n")
    for ref, pred in ((path, path), (path, good), (good, path)):
        assert main(["audit", "--ref", str(ref), "--pred", str(pred)]) == 2
        err = capsys.readouterr().err
        assert f"{path}, row 1: one column" in err and str(good) not in err


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
    assert {side: v.tolist() for side, v in traces.vanished.items()} == {"ref": [0],
                                                                         "pred": [1]}


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


def test_a_subset_of_an_event_list_names_the_rows_of_the_whole_list():
    """select / for_clip of a list built in memory (no file rows) keep each event's position
    in the whole list: an error about an event of the subset names that row, not its index
    in the subset."""
    from sedcontract.traces.overrun import fit_to_durations

    events = EventList.from_rows([("a", 0.0, 1.0, "dog"), ("b", 0.0, 1.0, "cat"),
                                  ("a", 2.0, 3.0, "cat"), ("b", 2.0, 12.0, "dog")])
    subset = events.select(clips=["b"])
    assert [subset.where(i) for i in range(2)] == [{"path": None, "row": 2},
                                                   {"path": None, "row": 4}]
    with pytest.raises(TraceFormatError, match=r"^row 4, column 'offset': 1 reference event"):
        fit_to_durations(subset, {"b": 10.0}, "ref")
    assert events.select(classes=["dog"]).where(1)["row"] == 4
    assert events.select(classes=["cat"]).select(clips=["a"]).where(0)["row"] == 3
    assert events.for_clip("b").where(1)["row"] == 4
    with pytest.raises(TraceFormatError, match=r"^row 4, column 'offset'"):
        fit_to_durations(events.for_clip("b"), {"b": 10.0}, "ref")


# ---- hardening: file format policies, limits, the API ------------------------------------

EVENTS_HEADER = "filename\tonset\toffset\tevent_label\n"


def read_text(tmp_path, text: str, name: str = "e.tsv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_events(path)


@pytest.mark.parametrize(("text", "row", "fragment"), [
    ("# made by hand\n" + EVENTS_HEADER + "a.wav\t0\t1\tdog\n", 1, "starts with '#'"),
    (EVENTS_HEADER + "#demo\t0\t1\tdog\n", 2, "starts with '#'"),
    (EVENTS_HEADER + "a.wav\t1_5\t2\tdog\n", 2, "'1_5' is not a number"),
    (EVENTS_HEADER + "a.wav\t0x1\t2\tdog\n", 2, "'0x1' is not a number"),
    (EVENTS_HEADER + "a.wav\t0\t1\tdog\nb.wav\t0\t1\tdog\textra\n", 3, "5 columns; the header"),
    ("filename\tonset\toffset\tevent_label\tonset\na.wav\t0\t1\tdog\t2\n", 1,
     "names column 'onset' twice"),
    (EVENTS_HEADER + "a.wav\t0\t1\tdog\na.flac\t2\t3\tdog\n", 3, "'a.flac' and 'a.wav'"),
    (EVENTS_HEADER + "a.wav\t0\t1\tdog\na\t2\t3\tdog\n", 3, "'a' and 'a.wav' (row 2)"),
    (EVENTS_HEADER + 'a.wav\t0\t1\t"dog\n', 2, "unbalanced double quote"),
    (EVENTS_HEADER + "a.wav\t0\t1e300\tdog\n", 2, "past the latest supported time"),
])
def test_format_policies_are_errors_naming_the_row(tmp_path, text, row, fragment):
    with pytest.raises(TraceFormatError, match=re.escape(fragment)) as info:
        read_text(tmp_path, text)
    assert info.value.row == row


def test_blank_lines_line_separators_quotes_and_long_fields(tmp_path):
    events = read_text(tmp_path, "\n\n" + EVENTS_HEADER + "a.wav\t0\t1\tdog\u2028cat\n"
                       "a.wav\t2\t3\tdog\u0085x\n" + 'a.wav\t4\t5\t"dog"\n'
                       + 'a.wav\t6\t7\t"say ""hi"""\n' + "a.wav\t8\t9\t" + "x" * 200_000 + "\n")
    assert [e[3] for e in events.to_rows()] == ["dog\u2028cat", "dog\u0085x", "dog", 'say "hi"',
                                                "x" * 200_000]
    assert events.rows.tolist() == [4, 5, 6, 7, 8]
    write_events(tmp_path / "back.tsv", events)  # labels that start with a quote round-trip
    assert read_events(tmp_path / "back.tsv").to_rows() == events.to_rows()
    quoted = EventList.from_rows([("a", 0.0, 1.0, '"odd"'), ("a", 1.0, 2.0, " padded ")])
    write_events(tmp_path / "q.tsv", quoted)
    assert read_events(tmp_path / "q.tsv").to_rows() == quoted.to_rows()


def test_times_round_to_the_nearest_microsecond():
    assert to_us(np.array([1.0000006, 1.0000004, 0.0000006])).tolist() == [1_000_001, 1_000_000,
                                                                            1]


def test_a_zero_duration_is_a_clip_without_frames(tmp_path):
    (tmp_path / "d.tsv").write_text("filename\tduration\na.wav\t0\nb.wav\t0.0\n")
    assert read_durations(tmp_path / "d.tsv") == {"a": 0.0, "b": 0.0}
    empty = EventList.from_rows([], clips=("a",))
    traces = TraceSet.from_events(empty, empty, hop=HOP, durations={"a": 0.0})
    assert traces.lengths.tolist() == [0]


def test_class_indexed_signals_follow_their_own_clip():
    ref = EventList.from_rows([("c1", 0.0, 0.1, "x"), ("c2", 0.2, 0.3, "y")])
    traces = TraceSet.from_events(ref, ref, hop=0.1, durations={"c1": 0.4, "c2": 0.4})
    signals, _ = traces.signals("typed")
    # rows: (c1, x), (c1, y), (c2, x), (c2, y); ref.active[x] of a row is its clip's x trace
    assert signals["ref.active[x]"].astype(int).tolist() == [[1, 0, 0, 0]] * 2 + [[0] * 4] * 2
    assert signals["ref.active[y]"].astype(int).tolist() == [[0] * 4] * 2 + [[0, 0, 1, 0]] * 2
    union, _ = traces.signals("union")
    assert union["ref.active[y]"].astype(int).tolist() == [[0] * 4, [0, 0, 1, 0]]


@pytest.mark.parametrize("cells", [1, 3, 7, 90, 130, 1 << 22])
def test_chunked_signals_equal_the_whole(cells):
    rng = np.random.default_rng(cells)
    rows = [(f"c{c}", float(on), float(on + rng.uniform(0.05, 1)), str(rng.choice(["a", "b"])))
            for c in range(4) for on in rng.uniform(0, 3, 3)]
    ref = EventList.from_rows(rows)
    traces = TraceSet.from_events(ref, ref, hop=0.1, durations={"c0": 4.0, "c1": 5.0, "c2": 4.2,
                                                                "c3": 4.5})
    for mode in ("typed", "union"):
        whole, lengths = traces.signals(mode)
        chunks = traces.chunks(mode, cells)
        assert chunks[0][0] == 0 and chunks[-1][1] == traces.rows(mode)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
        for first, stop in chunks:
            assert stop - first == 1 or (stop - first) * lengths[first:stop].max() <= cells
            part, part_lengths = traces.signals(mode, (first, stop))
            assert np.array_equal(part_lengths, lengths[first:stop])
            for name, value in part.items():
                n = value.shape[1]
                assert np.array_equal(value, whole[name][first:stop, :n])
                assert not whole[name][first:stop, n:].any()


def test_long_clips_are_refused_with_where_the_length_came_from(tmp_path):
    path = tmp_path / "far.tsv"
    path.write_text(EVENTS_HEADER + "a.wav\t0\t1\tdog\na.wav\t5\t1e6\tdog\n")
    far = read_events(path)
    with pytest.raises(TraceFormatError, match="more than the limit of 16777216") as info:
        TraceSet.from_events(far, far, hop=HOP)
    assert (info.value.path, info.value.row, info.value.column) == (str(path), 3, "offset")
    near = EventList.from_rows([("a", 0.0, 1.0, "dog")])
    with pytest.raises(TraceFormatError, match=re.escape("its duration is 10000000.0 s")):
        TraceSet.from_events(near, near, hop=HOP, durations={"a": 1e7})
    with pytest.raises(TraceFormatError, match="more than the limit"):
        TraceSet.from_events(near, near, hop=1e-6, durations={"a": 3600.0})
    assert TraceSet.from_events(far, far, hop=HOP, max_frames=50_000_000).lengths.tolist() == [
        50_000_000]
    for bad in (float("inf"), -1.0, "10", 2e9):
        with pytest.raises(TraceFormatError, match="not a time in"):
            TraceSet.from_events(near, near, hop=HOP, durations={"a": bad})


def test_api_values_of_the_wrong_type_are_clear_errors():
    with pytest.raises(TraceFormatError, match=r"event 2 is \('a', 0.0, 1.0\); an event is"):
        EventList.from_rows([("a", 0.0, 1.0, "x"), ("a", 0.0, 1.0)])
    with pytest.raises(TraceFormatError, match=re.escape("onset '0.5' is not a number")):
        EventList.from_rows([("a", "0.5", 1.0, "x")])
    with pytest.raises(TraceFormatError, match="clip id 3 is not a non-empty string"):
        EventList.from_rows([(3, 0.0, 1.0, "x")])
    with pytest.raises(TraceFormatError, match="clips must be a sequence"):
        EventList.from_rows([], clips="abc")
    for events in (None, "a\t0\t1\tx"):
        with pytest.raises(TraceFormatError, match="events must be a sequence of"):
            EventList.from_rows(events)
    with pytest.raises(SignalError, match="must be a number of seconds, got str"):
        Grid("0.02", 5)
    with pytest.raises(SignalError, match="longer than the longest supported time"):
        Grid(1e300, 5)
    ref = EventList.from_rows([("a", 0.0, 1.0, "x")])
    with pytest.raises(TraceFormatError, match="class 'x' is declared twice"):
        TraceSet.from_events(ref, ref, hop=HOP, classes=["x", "y", "x"])


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(0, 8)),
                max_size=12),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(0, 8)),
                max_size=12), st.integers(0, 4), st.sampled_from([1, 0.25, 2**57]))
def test_interval_overlaps_equal_a_brute_force_search(a_rows, b_rows, reach, scale):
    """Frames, fractional seconds and times too large to key directly (ranked instead)."""
    def intervals(rows):
        row, start, length = (np.array(x, dtype=np.int64) for x in zip(*rows, strict=True)) \
            if rows else (np.zeros(0, dtype=np.int64),) * 3
        return Intervals.merged(row, start * scale, (start + length) * scale)

    a, b = intervals(a_rows), intervals(b_rows)
    for side in (a, b):  # maximal runs: sorted, disjoint and not touching within a row
        same = side.row[1:] == side.row[:-1]
        assert np.all(~same | (side.start[1:] > side.end[:-1])) and np.all(side.end > side.start)
    lo, hi = overlap_ranges(a, b, reach * scale)
    for i in range(len(a)):
        expected = [j for j in range(len(b)) if b.row[j] == a.row[i]
                    and b.start[j] < a.end[i] + reach * scale
                    and b.end[j] > a.start[i] - reach * scale]
        assert list(range(lo[i], hi[i])) == expected


# ---- score files and the decision policy --------------------------------------------------

def scores_folder(tmp_path, files: dict[str, str], name: str = "scores"):
    folder = tmp_path / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


SCORES = "onset\toffset\tdog\n"


@pytest.mark.parametrize(("body", "row", "fragment"), [
    ("0\t0.02\t0.9\n0.04\t0.06\t0.9\n", 3, "(a gap after it)"),
    ("0\t0.02\t0.9\n0.01\t0.03\t0.9\n", 3, "(an overlap with it)"),
    ("0.02\t0.04\t0.9\n0\t0.02\t0.9\n", 3, "rows are not in time order"),
    ("0\t0.02\t0.9\n0\t0.02\t0.9\n", 3, "(an overlap with it)"),
    ("0\t0\t0.9\n", 2, "offset 0.0 is not after onset 0.0"),
    ("0\t0.02\t1_0\n", 2, "'1_0' is not a number"),
    # what Python's float reads but the format does not: never taken by the fast reader
    ("0\t0.02\t0.5\n0.02\t0.04\t\u0663\n", 3, "'\u0663' is not a number"),
    ("0\t0.02\t0.5\n0.02\t0.04\t0x1\n", 3, "'0x1' is not a number"),
    # a score may be -inf or inf (SEBB files), never NaN; a time is finite
    ("0\t0.02\tnan\n", 2, "'nan' is not a number (NaN); a score may be -inf or +inf"),
    ("0\tinf\t0.5\n", 2, "'inf' is not a finite number within"),
    ("0\t0.02\t1e10\n", 2, "'1e10' is beyond ±1e+09 (an infinite score is written"),
    # a table that starts late gave PSDS1 0.5 for 1.0: nothing before its first frame counted
    ("0.9\t0.92\t0.9\n0.92\t0.94\t0.9\n", 2, "the first frame starts at 0.9 s, not at 0 s"),
])
def test_score_frames_must_tile_time(tmp_path, body, row, fragment):
    folder = scores_folder(tmp_path, {"a.tsv": SCORES + body})
    with pytest.raises(TraceFormatError, match=re.escape(fragment)) as info:
        scores_to_events(folder, DecisionPolicy(median_filter=0.06))
    assert (info.value.path, info.value.row) == (str(folder / "a.tsv"), row)


def test_score_file_headers_names_and_coverage(tmp_path):
    twice = scores_folder(tmp_path, {"a.tsv": "onset\toffset\tdog\tdog\n0\t1\t0.5\t0.6\n"}, "t")
    with pytest.raises(TraceFormatError, match="names class 'dog' twice"):
        scores_to_events(twice, DecisionPolicy())
    upper = scores_folder(tmp_path, {"a.TSV": "\ufeff" + SCORES + "0\t0.02\t0.9\n",
                                     "b.tsv": SCORES + "0\t0.02\t0.1\n"}, "u")
    events = scores_to_events(upper, DecisionPolicy(), expected=("a", "b"))
    assert events.clips == ("a", "b") and events.to_rows() == [("a", 0.0, 0.02, "dog")]
    with pytest.raises(TraceFormatError, match="no score file for reference clip\\(s\\) 'c'"):
        scores_to_events(upper, DecisionPolicy(), expected=("a", "b", "c"))
    both = scores_folder(tmp_path, {"a.tsv": SCORES, "a.wav.tsv": SCORES}, "both")
    with pytest.raises(TraceFormatError, match="both the scores of clip 'a'"):
        scores_to_events(both, DecisionPolicy())


def test_the_threshold_is_strict_and_the_median_filter_bounded(tmp_path):
    scores = np.array([[0.5], [0.50001], [0.49999]])
    assert decide(scores, DecisionPolicy(threshold=0.5), 0.02)[:, 0].tolist() == [False, True,
                                                                                  False]
    with pytest.raises(TraceFormatError, match=re.escape("is 50000000000 frames of 0.02 s, "
                                                         "longer than the clip (3 frames)")):
        decide(scores, DecisionPolicy(median_filter=1e9), 0.02)
    folder = scores_folder(tmp_path, {"a.tsv": SCORES + "0\t0.02\t0.9\n0.02\t0.04\t0.9\n"})
    with pytest.raises(TraceFormatError, match="longer than the clip") as info:
        scores_to_events(folder, DecisionPolicy(median_filter=1.0))
    assert info.value.path == str(folder / "a.tsv")


def test_a_reference_class_without_a_score_column_is_refused(tmp_path):
    """Columns dog, bird against a reference of dog, cat: the system could never predict cat,
    so every cat event would count as missed; refused naming the class and the first score
    file (a system that truly never predicts it writes a column of zeros)."""
    from sedcontract.traces.score_files import ScoreFolder, check_score_classes

    folder = scores_folder(tmp_path, {"a.tsv": "onset\toffset\tdog\tbird\n0\t1\t0.9\t0.1\n",
                                      "b.tsv": "onset\toffset\tdog\tbird\n0\t1\t0.1\t0.1\n"})
    files = ScoreFolder.open(folder)
    with pytest.raises(TraceFormatError, match="no score column for reference class 'cat' "
                                               r"\(the columns are dog, bird\)") as info:
        check_score_classes(files, ("cat", "dog"))
    assert (info.value.path, info.value.row) == (str(folder / "a.tsv"), 1)
    check_score_classes(files, ("dog",))  # a column the reference lacks is false activity


def test_a_score_exactly_at_the_threshold_does_not_start_a_run():
    """Active iff score > threshold, with or without hysteresis: a score equal to the
    threshold neither is active alone nor starts a hysteresis run (it may continue one)."""
    column = np.array([0.5, 0.75, 0.25])[:, None]
    assert decide(column, DecisionPolicy(threshold=0.5), 0.02)[:, 0].tolist() == \
        [False, True, False]
    # low 0.25: frames 0–2 are at or above low but none above 0.5 yet (two at exactly 0.5):
    # off; frame 3 (0.75) starts the run, which holds through 0.5 and 0.25 (>= low) to frame
    # 6 (0.0); the run 0.5, 0.5, 0.25 after it never exceeds 0.5: off
    column = np.array([0.25, 0.5, 0.5, 0.75, 0.5, 0.25, 0.0, 0.5, 0.5, 0.25, 0.0])[:, None]
    assert decide(column, DecisionPolicy(threshold=0.5, low=0.25), 0.02)[:, 0].tolist() == \
        [False, False, False, True, True, True, False, False, False, False, False]


def test_hysteresis_with_low_equal_to_the_threshold_keeps_runs_through_ties():
    """low == threshold is allowed and is not the plain threshold: a run starts above 0.5 and
    continues while the score is at least 0.5, so a 0.5 inside a run stays on and a 0.5 that
    does not follow an active frame stays off."""
    policy = DecisionPolicy(threshold=0.5, low=0.5)
    assert policy.describe() == "active from score > 0.5 while score >= 0.5 (hysteresis)"
    column = np.array([0.5, 0.75, 0.5, 0.5, 0.25, 0.5, 0.75])[:, None]
    assert decide(column, policy, 0.02)[:, 0].tolist() == \
        [False, True, True, True, False, False, True]
    assert decide(column, DecisionPolicy(threshold=0.5), 0.02)[:, 0].tolist() == \
        [False, True, False, False, False, False, True]  # the plain threshold differs


@pytest.mark.parametrize(("low", "message"), [
    (0.6, r"decision low, 0.6\) must not exceed the decision threshold \(0.5\)"),
    (float("nan"), "must be a finite number"), (True, "must be a finite number"),
    ("0.3", "must be a finite number")])
def test_a_bad_hysteresis_threshold_is_refused(low, message):
    with pytest.raises(TraceFormatError, match=message):
        DecisionPolicy(threshold=0.5, low=low)


def test_score_files_written_are_read_back(tmp_path):
    from sedcontract.traces.score_files import read_scores, scores_tsv

    values = np.array([[0.1, 0.9], [0.25, 0.5], [1.0, 0.0]], dtype=np.float32)
    path = tmp_path / "a.tsv"
    path.write_text(scores_tsv(values, ("dog", "cat"), 0.02))
    table = read_scores(path)
    assert table.classes == ("dog", "cat")
    np.testing.assert_allclose(table.scores, values, rtol=1e-6)
    np.testing.assert_allclose(table.onset, [0.0, 0.02, 0.04])
    np.testing.assert_allclose(table.offset, [0.02, 0.04, 0.06])


def test_a_score_file_past_the_bound_is_refused_from_its_line_count(tmp_path, monkeypatch):
    """The bound is checked on the file's line count before any line is read into memory;
    within it, blank lines and quoted numbers take the line-by-line path with the same rows."""
    from sedcontract.traces import score_files as score_io

    monkeypatch.setattr(score_io, "MAX_SCORE_CELLS", 100)
    rows = "".join(f"{k * 0.02:.2f}\t{(k + 1) * 0.02:.2f}\t0.5\n" for k in range(40))
    path = tmp_path / "a.tsv"
    path.write_text(SCORES + rows)

    def never(*args, **kwargs):
        raise AssertionError("the file's lines were read before the bound was checked")

    with monkeypatch.context() as patch:
        patch.setattr(score_io, "iter_lines", never)
        patch.setattr(score_io, "_fast_values", never)
        with pytest.raises(TraceFormatError, match=r"40 frames × 3 columns is more than the "
                                                   r"100 numbers one score file may hold") as info:
            score_io.read_scores(path)
    assert info.value.path == str(path)
    path.write_text(SCORES + "".join(rows.splitlines(keepends=True)[:30]))
    table = score_io.read_scores(path)
    assert table.scores.shape == (30, 1) and table.lines.tolist() == list(range(2, 32))
    path.write_text(SCORES + '\n0\t"0.02"\t0.5\n\n0.02\t0.04\t0.25\n')
    table = score_io.read_scores(path)
    assert table.lines.tolist() == [3, 5] and table.scores[:, 0].tolist() == [0.5, 0.25]
    # numbers with other whitespace around them read the same on both paths (a non-ASCII or
    # control byte makes the file take the line-by-line one)
    for body in ("0\t0.02\t\u00a00.25\n", "0\t0.02\t\u00a00.25\n\n", "0\t0.02\t0.25\x0c\n"):
        path.write_text(SCORES + body)
        assert score_io.read_scores(path).scores.tolist() == [[0.25]]


def test_event_columns_are_coded_once_and_looked_up_per_distinct_value():
    events = EventList.from_rows([("b", 0.0, 1.0, "x"), ("a", 0.5, 1.0, "y"),
                                  ("b", 2.0, 3.0, "y")])
    assert events.codes("clip")[0] == ["b", "a"]
    assert events.codes("clip")[1].tolist() == [0, 1, 0]
    assert events.codes("clip") is events.codes("clip")  # made once
    assert events.positions("label", {"y": 0, "x": 1}).tolist() == [1, 0, 0]
    with pytest.raises(KeyError):
        events.positions("label", {"x": 0})
    assert events.classes == ("x", "y")


def test_codes_hash_runs_of_equal_values_once_and_equal_the_definition():
    """Codes made from the first value of each run of equal ones: the distinct values in
    first-seen order and every entry's position among them, on columns with long runs, none,
    and a value coming back after others."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        values = np.empty(int(rng.integers(0, 60)), dtype=object)
        values[:] = [f"v{k}" for k in np.repeat(rng.integers(0, 6, len(values)),
                                                 rng.integers(1, 4, len(values)))][:len(values)]
        distinct, codes = EventList.from_rows(
            [(v, 0.0, 1.0, "x") for v in values.tolist()]).codes("clip")
        assert distinct == list(dict.fromkeys(values.tolist()))
        assert [distinct[k] for k in codes] == values.tolist() and codes.dtype == np.int32


def test_a_selected_list_keeps_codes_of_only_what_it_holds():
    """A list selected from one whose codes are made keeps them, renumbered to the values it
    holds: its classes, look-ups and membership are those of its own events."""
    events = EventList.from_rows([("a", 0.0, 1.0, "x"), ("b", 0.5, 1.0, "y"),
                                  ("c", 2.0, 3.0, "z"), ("b", 4.0, 5.0, "x")])
    events.codes("clip"), events.codes("label")
    block = events.select(clips=["b", "c"])
    fresh = EventList.from_rows(list(zip(block.clip, block.onset, block.offset, block.label,
                                         strict=True)))
    for column in ("clip", "label"):
        distinct, codes = block.codes(column)
        assert [distinct[k] for k in codes] == getattr(block, column).tolist()
        assert sorted(distinct) == sorted(fresh.codes(column)[0])  # nothing it does not hold
    assert block.classes == ("x", "y", "z")
    assert block.select(clips=["c"]).classes == ("z",)
    assert block.positions("label", {"x": 0, "y": 1, "z": 2}).tolist() == [1, 2, 0]
    assert block.among("clip", ["c", "q"]).tolist() == [False, True, False]
    assert events.among("label", {"x"}).tolist() == [True, False, False, True]


def test_the_line_by_line_score_reader_takes_infinite_scores_as_the_fast_one_does(tmp_path):
    """Blind spot: ``-inf``/``inf`` scores are scores on both paths of ``read_scores``; a
    blank line sends a file to the line-by-line reader, whose table equals the fast one's."""
    from sedcontract.traces.score_files import read_scores

    rows = ["onset\toffset\tx", "0.0\t0.5\t-inf", "0.5\t1.0\tinf", "1.0\t1.5\t0.25"]
    (tmp_path / "fast.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "lines.tsv").write_text("\n".join([*rows[:2], "", *rows[2:]]) + "\n")
    fast, lines = read_scores(tmp_path / "fast.tsv"), read_scores(tmp_path / "lines.tsv")
    assert lines.scores[:, 0].tolist() == fast.scores[:, 0].tolist() == [-np.inf, np.inf, 0.25]
    assert lines.lines.tolist() == [2, 4, 5] and fast.lines.tolist() == [2, 3, 4]
