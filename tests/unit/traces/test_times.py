"""Times are written with their unit wherever a person gives one (``200ms``, ``0.2s``, ``10f``
for frames; 0 alone needs none): a bare number is refused naming the option, never read as
frames or seconds silently."""

from __future__ import annotations

import json
import warnings

import pytest

from sedcontract.cli import main
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.traces.times import TimeError, bound, parse_time, seconds, spell
from tests.helpers.examples import write_worked_example


@pytest.mark.parametrize(("text", "value"), [("200ms", 0.2), ("0.2s", 0.2), ("0", 0.0),
                                              ("0ms", 0.0), ("0.5s", 0.5), ("64ms", 0.064),
                                              ("1.5ms", 0.0015), (" 20ms ", 0.02)])
def test_times_with_a_unit_are_seconds(text, value):
    assert seconds(text, "--x") == value


@pytest.mark.parametrize(("text", "message"), [
    ("200", "--x '200' has no unit; write 200ms, 200s"), ("0.2", "'0.2' has no unit"),
    ("10f", "unknown unit 'f'; the units are s or ms"), ("2h", "unknown unit 'h'"),
    ("-1s", "is not a time"), ("1e3ms", "is not a time"), ("nan", "is not a time"),
    (".5s", "is not a time"), ("5.s", "is not a time"),
    ("", "is not a time"), ("1000000000001s", "longer than the longest supported time")])
def test_a_time_without_its_unit_or_out_of_range_is_refused_naming_the_option(text, message):
    with pytest.raises(TimeError, match=r"^--x ") as caught:
        seconds(text, "--x")
    assert message in str(caught.value)


def test_frames_are_written_with_f_where_a_value_counts_frames():
    assert bound("10f", "--eps") == 10 and bound("0", "--eps") == 0
    assert bound("200ms", "--eps") == "200ms" and bound("0.2s", "--eps") == "0.2s"
    with pytest.raises(TimeError, match="frames are whole"):
        bound("1.5f", "--eps")
    with pytest.raises(TimeError, match="200f \\(frames\\)"):
        bound("200", "--eps")
    assert parse_time("7f", "--eps", frames=True).seconds is None


@pytest.mark.parametrize(("value", "text"), [(0.02, "20ms"), (0.2, "200ms"), (1.0, "1s"),
                                              (0.064, "64ms"), (2.5, "2.5s"), (0.0, "0"),
                                              (0.0015, "1.5ms")])
def test_defaults_are_shown_with_their_unit_and_read_back(value, text):
    assert spell(value) == text
    assert seconds(text, "--x") == value


def test_eps_200_without_a_unit_is_refused_and_10f_is_ten_frames(tmp_path, capsys):
    """``--eps 200`` once meant 200 frames (4 s at 20 ms) and moved onset from 0.470 to
    0.748 without a word; it is refused now, and frames are asked for as ``10f``."""
    args = ["audit", *write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}",
            "--format", "json"]
    assert main([*args, "--eps", "200"]) == 2
    err = capsys.readouterr().err
    assert "argument --eps: '200' has no unit; write 200ms, 200s or 200f (frames)" in err
    vectors = {}
    for eps in ("10f", "200ms", "0.2s"):
        assert main([*args, "--eps", eps]) == 0
        data = json.loads(capsys.readouterr().out)
        vectors[eps] = data["modes"]
        if eps == "10f":
            assert data["policy"]["eps"] == "10f"  # frames named as frames in the report
    assert vectors["10f"] == vectors["200ms"] == vectors["0.2s"]


TIME_OPTIONS = ["--hop", "--duration-tolerance", "--t-collar", "--segment", "--median-filter"]


@pytest.mark.parametrize(("command", "option"), [
    *(("audit", o) for o in ["--eps", *TIME_OPTIONS]), *(("scores", o) for o in TIME_OPTIONS),
    ("demo", "--eps"), ("check", "--hop")])
def test_every_time_option_refuses_a_bare_number(tmp_path, capsys, command, option):
    args = [command, *write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    if command in ("demo", "check"):
        args = [command, *(["standard"] if command == "check" else [])]
    assert main([*args, option, "2"]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: '2' has no unit" in err
    assert "Traceback" not in err


def test_a_huge_tolerance_is_refused_by_the_option_without_a_numpy_warning(tmp_path, capsys):
    """``--duration-tolerance 1e300`` used to overflow the microsecond conversion."""
    args = ["audit", *write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main([*args, "--duration-tolerance", "1e300"]) == 2
        assert main([*args, "--duration-tolerance", "1000000000000s"]) == 2
    err = capsys.readouterr().err
    assert "argument --duration-tolerance: '1e300' is not a time" in err
    assert "longer than the longest supported time" in err
    with pytest.raises(SedContractError, match="duration_tolerance must be a number of seconds"):
        AuditPolicy(duration_tolerance=1e300)


def test_sweep_radii_need_units_and_take_no_frames(tmp_path, capsys):
    args = ["sweep", *write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    assert main([*args, "--eps", "0,10"]) == 2
    assert "'10' has no unit" in capsys.readouterr().err
    assert main([*args, "--eps", "0,10f"]) == 2
    assert "unknown unit 'f'" in capsys.readouterr().err
    assert main([*args, "--eps", "0,100ms"]) == 0


def test_the_config_eps_needs_its_unit_and_other_times_may_be_spelled():
    assert AuditPolicy.from_config(eps="5f").eps == 5
    assert AuditPolicy.from_config(eps=0).eps == 0
    with pytest.raises(TimeError, match=r"^contract\.eps '200' has no unit"):
        AuditPolicy.from_config(eps=200)
    policy = AuditPolicy.from_config(hop="40ms", decision={"median_filter": "100ms"},
                                     scores={"t_collar": "0.2s", "segment": "1s"})
    assert (policy.hop, policy.decision.median_filter, policy.scores.t_collar,
            policy.scores.segment) == (0.04, 0.1, 0.2, 1.0)
    with pytest.raises(TimeError, match=r"^contract\.hop '2' has no unit"):
        AuditPolicy.from_config(hop="2")


def test_a_policy_mapping_of_the_python_api_keeps_frames_as_whole_numbers():
    """The unit rule is the options' and configs'; in Python ``eps=10`` is ten frames, in a
    mapping too (``audit(..., policy={"eps": 10})``)."""
    from sedcontract.contracts.policy import policy_of

    assert policy_of({"eps": 10}).eps == 10 and policy_of(eps=10).eps == 10
    assert policy_of({"eps": "200ms", "hop": "20ms"}).hop == 0.02


def test_the_largest_time_and_frame_count_are_taken_and_one_more_is_refused():
    """Blind spots: exactly ``MAX_FRAMES`` frames and exactly ``MAX_SECONDS`` are read (the
    limits are inclusive); one frame, or one microsecond, more is refused."""
    from sedcontract.traces.grid import MAX_FRAMES, MAX_SECONDS
    from sedcontract.traces.times import TimeError, parse_time

    assert parse_time(f"{MAX_FRAMES}f", "x", frames=True).frames == MAX_FRAMES
    assert parse_time(f"{MAX_SECONDS:.0f}s", "x").seconds == MAX_SECONDS
    with pytest.raises(TimeError, match="more frames than the largest supported"):
        parse_time(f"{MAX_FRAMES + 1}f", "x", frames=True)
    with pytest.raises(TimeError, match="longer than"):
        parse_time(f"{MAX_SECONDS:.0f}.000001s", "x")


def test_an_event_ending_exactly_at_the_duration_is_not_counted_as_cut():
    """Blind spot of PSDS's cut rule: only what ends past the clip's duration is cut."""
    from sedcontract.traces import EventList
    from sedcontract.traces.overrun import cut_at_durations

    events = EventList.from_rows([("a", 1.0, 4.0, "x"), ("b", 1.0, 4.001, "x")])
    cut, count = cut_at_durations(events, {"a": 4.0, "b": 4.0})
    assert count == 1 and cut.to_rows() == [("a", 1.0, 4.0, "x"), ("b", 1.0, 4.0, "x")]
    assert cut_at_durations(events.select(clips=["a"]), {"a": 4.0})[1] == 0
