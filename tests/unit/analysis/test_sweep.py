"""Tolerance sweeps: radii parse (with '...' ranges), onset and offset never fall as eps
grows (the semantics say so) while they do change, rank reversals are marked, the command
writes tables, source rows and a figure, and the same inputs give the same bytes."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from sedcontract.analysis.sweep import parse_radii, sweep, sweep_csv, sweep_markdown
from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy
from sedcontract.traces import EventList, write_durations, write_events


def reference(seed: int = 0, clips: int = 8) -> tuple[EventList, dict[str, float]]:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(clips):
        for label in ("speech", "tone"):
            t = float(rng.uniform(0.2, 0.8))
            while t < 8.0:
                length = float(rng.uniform(0.4, 1.2))
                rows.append((f"c{c}", round(t, 3), round(t + length, 3), label))
                t += length + float(rng.uniform(0.6, 1.5))
    names = tuple(f"c{c}" for c in range(clips))
    return EventList.from_rows(rows, clips=names), dict.fromkeys(names, 10.0)


def shifted(ref: EventList, onset: float, offset: float) -> EventList:
    return EventList(ref.clip, ref.onset + onset, ref.offset + offset, ref.label,
                     clips=ref.clips)


def test_radii_parse_with_ranges():
    assert parse_radii("0,20ms,...,100ms") == ["0", "20ms", "40ms", "60ms", "80ms", "100ms"]
    assert parse_radii("0.1s, 0.2s, …, 0.5s") == ["0.1s", "0.2s", "300ms", "400ms", "500ms"]
    assert parse_radii("50ms") == ["50ms"]
    for bad, message in (("0,20ms,...", "continues two radii"), ("20", "no unit"),
                         ("0,20ms,...,50ms", "not reached"), ("10ms,10ms", "twice"),
                         ("", "at least one"), ("30ms,20ms,...,60ms", "increasing"),
                         ("0,1ms,...,10s", "too many")):
        with pytest.raises(SedContractError, match=message):
            parse_radii(bad)



def test_radii_too_large_or_equal_after_conversion_are_refused_naming_them():
    huge = "100000000000000000000000000000s"
    with pytest.raises(SedContractError, match=f"{huge}.*longer than the longest supported"):
        parse_radii(f"0,{huge}")
    for text, first, second in (("20ms,0.02s", "20ms", "0.02s"), ("0,0ms", "0", "0ms"),
                                ("0.5s,100ms,500ms", "0.5s", "500ms")):
        with pytest.raises(SedContractError, match=f"{first} and {second} are the same radius"):
            parse_radii(text)
    with pytest.raises(SedContractError, match="finer than a microsecond"):
        parse_radii("0.0000001s")
    assert parse_radii("0,1000000000s") == ["0", "1000000000s"]
    # steps are exact microseconds, written as bound texts at any size
    assert parse_radii("0,500s,...,1500s") == ["0", "500s", "1000000ms", "1500000ms"]
    assert parse_radii("0,0.1ms,...,0.3ms") == ["0", "0.1ms", "0.2ms", "0.3ms"]


@pytest.mark.parametrize("seed", range(3))
def test_onset_and_offset_never_fall_as_eps_grows(seed):
    """N[eps] windows grow with eps: satisfied counts never fall, obligations stay. The
    systems are late and early by amounts between the radii, so the scores do move."""
    ref, durations = reference(seed)
    rng = np.random.default_rng(seed)
    systems = {
        "late": shifted(ref, 0.13, 0.09),
        "early": shifted(ref, -0.07, -0.21),
        "jitter": EventList(ref.clip, ref.onset + rng.normal(0, 0.1, len(ref)),
                            ref.offset + rng.normal(0, 0.1, len(ref)), ref.label,
                            clips=ref.clips),
    }
    for name, events in systems.items():  # keep the jittered events inside the clips
        systems[name] = EventList(events.clip, np.clip(events.onset, 0, 9.9),
                                  np.clip(np.maximum(events.offset, events.onset + 0.05), 0,
                                          10.0), events.label, clips=events.clips)
    radii = parse_radii("0,20ms,...,300ms")
    result = sweep(ref, systems, AuditPolicy(), radii, durations=durations)
    for system in systems:
        for coordinate in ("onset", "offset"):
            rows = [r for r in result.rows
                    if (r["system"], r["coordinate"]) == (system, coordinate)]
            assert [r["eps"] for r in rows] == radii
            satisfied = [r["satisfied"] for r in rows]
            assert all(a <= b for a, b in pairwise(satisfied)), \
                (system, coordinate, satisfied)
            assert len({r["obligations"] for r in rows}) == 1
            assert satisfied[0] < satisfied[-1], (system, coordinate)  # eps does matter


def test_rank_reversals_are_marked():
    """'late' misses every onset at eps 0 but meets all at 200 ms; 'partial' meets 80 % of
    onsets at any eps: their order on onset reverses; on offset 'late' is exact and 'partial'
    misses a fifth at every eps: no reversal."""
    ref, durations = reference(4)
    keep = np.arange(len(ref)) % 5 != 0  # a fifth of the events not detected at all
    partial = EventList(ref.clip[keep], ref.onset[keep], ref.offset[keep], ref.label[keep],
                        clips=ref.clips)
    late = shifted(ref, 0.15, 0.0)
    result = sweep(ref, {"late": late, "partial": partial, "same": ref}, AuditPolicy(),
                   ["0", "200ms"], durations=durations)
    assert result.flips("onset") == ["late", "partial"]
    assert result.flips("offset") == []


def test_the_figure_draws_logic_and_the_coordinates_that_move_with_eps():
    """missed and false count the same events at every eps (no window in their clauses):
    the figure leaves them out and names them; onset moves, and logic is each radius's mean
    of the non-vacuous coordinates."""
    ref, durations = reference(4)
    result = sweep(ref, {"late": shifted(ref, 0.15, 0.0), "same": ref}, AuditPolicy(),
                   ["0", "100ms", "200ms"], durations=durations)
    assert result.varies("onset") and not result.varies("missed")
    assert not result.varies("false")
    for radius in result.radii:
        scores = [result.score("late", radius, c) for c in result.coordinates]
        known = [v for v in scores if not math.isnan(v)]
        assert result.logic("late", radius) == pytest.approx(sum(known) / len(known))
    from sedcontract.analysis.sweep import sweep_png
    from sedcontract.figures import system_colours

    first = sweep_png(result)
    assert first[:8] == b"\x89PNG\r\n\x1a\n"
    # one colour per name, whichever figure names which systems: a report's own map is used
    colours = system_colours(["late", "same", "zzz_other"])
    assert colours["late"] == system_colours(["late", "same"])["late"]
    assert sweep_png(result, colours) == first


def test_system_names_are_escaped_in_the_markdown():
    """A system named like HTML or with a pipe stays text in its table column and in the
    ranking flips; an ordinary name is written as it is."""
    ref, durations = reference(4)
    evil = "<script>x|y</script>"
    result = sweep(ref, {evil: shifted(ref, 0.15, 0.0), "partial_b-1.0": ref.select(
        clips=ref.clips[1:])}, AuditPolicy(), ["0", "200ms"], durations=durations)
    text = sweep_markdown(result)
    assert "<script>" not in text
    assert "| eps | &lt;script&gt;x\\|y&lt;/script&gt; | partial_b-1.0 |" in text
    assert "- onset: &lt;script&gt;x|y&lt;/script&gt;, partial_b-1.0" in text


def test_sweep_rows_score_under_the_policys_aggregation():
    """One speech event found, three tone events missed: per class 1/1 and 0/3, so the macro
    score is 0.5 and the micro one 0.25 (the rows' counts are the pooled ones either way)."""
    ref = EventList.from_rows([("a", 1.0, 2.0, "speech"), ("a", 3.0, 3.5, "tone"),
                               ("a", 5.0, 5.5, "tone"), ("a", 7.0, 7.5, "tone")])
    pred = EventList.from_rows([("a", 1.0, 2.0, "speech")], clips=("a",))
    durations = {"a": 10.0}
    for aggregation, expected in (("macro", 0.5), ("micro", 0.25)):
        result = sweep(ref, {"s": pred}, AuditPolicy(aggregation=aggregation),
                       ["0", "200ms"], durations=durations)
        for radius in ("0", "200ms"):
            for coordinate in ("missed", "onset", "offset"):
                assert result.score("s", radius, coordinate) == pytest.approx(expected), \
                    (aggregation, radius, coordinate)
            row = next(r for r in result.rows if (r["eps"], r["coordinate"]) == (radius,
                                                                                   "missed"))
            assert (row["satisfied"], row["obligations"]) == (1, 4)


def test_sweep_command_writes_tables_rows_and_a_figure(tmp_path, capsys):
    ref, durations = reference(1)
    write_events(tmp_path / "ref.tsv", ref)
    write_events(tmp_path / "late.tsv", shifted(ref, 0.12, 0.12))
    write_events(tmp_path / "b.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    args = ["sweep", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "late.tsv"),
            "--pred", f"exact={tmp_path / 'b.tsv'}", "--durations",
            str(tmp_path / "durations.tsv"), "--eps", "0,50ms,...,200ms"]
    assert main([*args, "--csv", str(tmp_path / "rows.csv"),
                 "--figure", str(tmp_path / "sweep.png")]) == 0
    table = capsys.readouterr().out
    # late catches up with exact at 150 ms: a tie, not a swap
    assert "| eps | late | exact |" in table and "- none: no two systems swap" in table
    rows = (tmp_path / "rows.csv").read_text().splitlines()
    assert rows[0] == "system,eps,coordinate,satisfied,obligations,score"
    assert len(rows) == 1 + 2 * 5 * 7
    png = (tmp_path / "sweep.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    from matplotlib import image

    height, width = image.imread(tmp_path / "sweep.png").shape[:2]
    assert width > height > 100
    assert main([*args, "--csv", str(tmp_path / "again.csv")]) == 0
    assert (tmp_path / "again.csv").read_text() == (tmp_path / "rows.csv").read_text()
    capsys.readouterr()
    assert main([*args, "--csv", str(tmp_path / "ref.tsv")]) == 2
    assert "input" in capsys.readouterr().err
    assert main(["sweep", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "b.tsv"),
                 "--pred", str(tmp_path / "b.tsv"), "--eps", "0"]) == 2
    assert "two systems named 'b'" in capsys.readouterr().err


def test_sweep_rows_are_the_same_bytes_for_the_same_inputs():
    ref, durations = reference(2)
    first = sweep(ref, {"a": shifted(ref, 0.1, 0.0)}, AuditPolicy(), ["0", "100ms"],
                  durations=durations)
    second = sweep(ref, {"a": shifted(ref, 0.1, 0.0)}, AuditPolicy(), ["0", "100ms"],
                   durations=durations)
    assert sweep_csv(first) == sweep_csv(second)


def test_sweep_rows_are_checked_naming_the_row(tmp_path):
    """read_sweep (report --sweep) refuses counts out of range, a score other than
    satisfied/obligations, a repeated or a missing row, a bad radius and non-UTF-8 bytes."""
    from sedcontract.analysis.sweep import read_sweep
    from sedcontract.errors import TraceFormatError

    ref, durations = reference(0, clips=2)
    text = sweep_csv(sweep(ref, {"a": shifted(ref, 0.1, 0.0), "b": ref}, AuditPolicy(),
                           ["0", "100ms"], durations=durations))
    lines = text.splitlines()
    path = tmp_path / "rows.csv"
    path.write_text(text)
    assert sweep_csv(read_sweep(path)) == text
    head = "a,0,onset,"
    cases = [
        ([head + "5,2,"], "satisfied 5 is outside 0 … obligations 2", 2, "satisfied"),
        ([head + "1,2,0.9"], "score 0.9 is not satisfied/obligations 1/2", 2, "score"),
        ([head + "0,0,0.5"], "score 0.5 .*no obligations", 2, "score"),
        ([head + "1,2,"], "blank score .*1/2", 2, "score"),
        ([head + "1.5,2,0.75"], "not a whole number", 2, "satisfied"),
        ([lines[1], lines[1]], "repeats row 2", 3, None),
        (["a,abc,onset,0,18,0.0"], "radius 'abc'", 2, "eps"),
        (["a,0,onset,0,18,0.0", "b,100ms,offset,0,18,0.0"], "no row for system a, eps 0, "
         "coordinate offset", None, None),
    ]
    for body, message, row, column in cases:
        path.write_text("\n".join([lines[0], *body]) + "\n")
        with pytest.raises(TraceFormatError, match=message) as info:
            read_sweep(path)
        assert (info.value.path, info.value.row, info.value.column) == (str(path), row,
                                                                         column), message
    path.write_bytes(text.encode().replace(b"a,0,onset", b"\xe4,0,onset", 1))
    with pytest.raises(TraceFormatError, match="not UTF-8") as info:
        read_sweep(path)
    assert info.value.row == 2


def test_sweep_intervals_are_the_audits_bootstrap_intervals_at_each_radius():
    """With resamples, each system's interval at a radius is bootstrap_intervals of its audit
    at that radius, and the difference from the baseline is paired_bootstrap of the two audits:
    the same draws, the same numbers."""
    from sedcontract.guard import audit, bootstrap_intervals, paired_bootstrap

    ref, durations = reference(3)
    systems = {"late": shifted(ref, 0.12, 0.05), "exact": ref}
    result = sweep(ref, systems, AuditPolicy(), ["0", "150ms"], durations=durations,
                   resamples=300, seed=4, baseline="exact")
    assert [r["system"] for r in result.rows[:1]] == ["late"]  # rows keep the given order
    for radius in ("0", "150ms"):
        late = audit(ref, systems["late"], AuditPolicy(eps=radius), durations=durations,
                     mode="typed")
        exact = audit(ref, ref, AuditPolicy(eps=radius), durations=durations, mode="typed")
        expected = bootstrap_intervals(late, mode="typed", resamples=300, seed=4)
        assert result.intervals[("late", radius)] == expected
        assert result.differences[("late", radius)] == paired_bootstrap(
            late, exact, mode="typed", resamples=300, seed=4)
    # at eps 0 a 120 ms late onset always fails: the difference is certain and below 0
    onset = result.differences[("late", "0")]["onset"]
    assert onset.point < 0 and onset.hi < 0
    assert result.differences[("late", "150ms")]["onset"].point == 0.0
    text = sweep_markdown(result)
    assert "### logic" in text and "### Paired difference from exact" in text
    assert f"| 0 | {onset.point:+.3f} [{onset.lo:+.3f}, {onset.hi:+.3f}] ↓ |" in text
    assert "percentile bootstrap over the clips (300 resamples, seed 4)" in text


def test_a_sweep_baseline_must_be_a_system_with_resamples():
    ref, durations = reference(1)
    for kwargs, message in (({"baseline": "x", "resamples": 10}, "baseline 'x' is not one"),
                            ({"baseline": "a"}, "needs bootstrap resamples"),
                            ({"baseline": "a", "resamples": 10, "only": True},
                             "needs a second system")):
        systems = {"a": ref} if kwargs.pop("only", False) else {"a": ref, "b": ref}
        with pytest.raises(SedContractError, match=message):
            sweep(ref, systems, AuditPolicy(), ["0"], durations=durations, **kwargs)


def test_sweep_command_adds_intervals_and_the_paired_difference(tmp_path, capsys):
    ref, durations = reference(1)
    write_events(tmp_path / "ref.tsv", ref)
    write_events(tmp_path / "late.tsv", shifted(ref, 0.12, 0.12))
    write_durations(tmp_path / "durations.tsv", durations)
    args = ["sweep", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "late.tsv"),
            "--pred", f"exact={tmp_path / 'ref.tsv'}", "--durations",
            str(tmp_path / "durations.tsv"), "--eps", "0,100ms,200ms"]
    assert main([*args, "--baseline", "exact", "--bootstrap", "200",
                 "--figure", str(tmp_path / "bands.png")]) == 0
    text = capsys.readouterr().out
    assert "| eps | late − exact |" in text and "200 resamples" in text
    assert (tmp_path / "bands.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([*args, "--baseline", "late"]) == 0  # the default resamples for a baseline
    assert "2000 resamples" in capsys.readouterr().out
    assert main([*args, "--bootstrap", "-1"]) == 2
    assert "argument --bootstrap: -1 resamples" in capsys.readouterr().err


def test_sweep_intervals_at_level_80_are_the_10th_and_90th_percentiles_of_the_draws():
    """level=0.8 reaches every interval of a sweep: each system's and each paired difference's
    [lo, hi] are the 10th and 90th percentiles of the same resampled clips, not the 95 % ones."""
    from sedcontract.guard import audit
    from sedcontract.resampling import resample_indices

    ref, durations = reference(5)
    systems = {"late": shifted(ref, 0.12, 0.05), "early": shifted(ref, -0.09, -0.15)}
    result = sweep(ref, systems, AuditPolicy(), ["0", "100ms"], durations=durations,
                   resamples=200, seed=6, level=0.8, baseline="early")
    indices = resample_indices(len(ref.clips), 200, 6)  # the draws every interval uses

    def draws(report) -> dict[str, list[float]]:
        """Each resample's report rebuilt from the drawn clips: coordinate → its scores."""
        arrays, out = report.arrays(), {}
        for row in indices:
            again = report.rebuild([report.clips[i] for i in row],
                                   {k: v[row] for k, v in arrays.items()})
            for name, value in (*again.vector("typed").items(),
                                ("logic", again.logic("typed"))):
                out.setdefault(name, []).append(value)
        return out

    for radius in ("0", "100ms"):
        reports = {name: audit(ref, pred, AuditPolicy(eps=radius), durations=durations,
                               mode="typed") for name, pred in systems.items()}
        scores = {name: draws(r) for name, r in reports.items()}
        for name in systems:
            for coordinate, iv in result.intervals[(name, radius)].items():
                values = [v for v in scores[name][coordinate] if not math.isnan(v)]
                assert iv.level == 0.8 and iv.defined == len(values) > 0, (name, coordinate)
                lo, hi = np.quantile(values, (0.1, 0.9))
                assert (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=1e-12), (name, radius,
                                                                               coordinate)
        for coordinate, iv in result.differences[("late", radius)].items():
            pairs = zip(scores["late"][coordinate], scores["early"][coordinate], strict=True)
            values = [a - b for a, b in pairs if not (math.isnan(a) or math.isnan(b))]
            lo, hi = np.quantile(values, (0.1, 0.9))
            assert iv.level == 0.8 and (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=1e-12), \
                (radius, coordinate)
    # the 80 % interval is narrower than the 95 % one somewhere (the levels differ in fact)
    wide = sweep(ref, systems, AuditPolicy(), ["0"], durations=durations, resamples=200,
                 seed=6)
    assert any(wide.intervals[("late", "0")][c].hi - wide.intervals[("late", "0")][c].lo
               > iv.hi - iv.lo for c, iv in result.intervals[("late", "0")].items())
    assert "Intervals: 80% percentile bootstrap over the clips" in sweep_markdown(result)
