"""Paired bootstrap over clips: a case enumerated by hand, a plain-loop oracle built from the
report's own aggregation (the same indices give the same bits), identical and clearly
different systems, refusals, determinism, vacuous resamples, and a timing."""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np
import pytest

import sedcontract
from sedcontract import resampling as rs
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.guard import Interval, paired_bootstrap
from sedcontract.guard import bootstrap as bs
from sedcontract.guard.report import GuardReport
from sedcontract.traces import EventList
from tests.helpers.examples import random_reference
from tests.helpers.reports import CLASSES, random_counts, scored_runs, synthetic


def oracle(a: GuardReport, b: GuardReport, mode: str, indices: np.ndarray, level: float
           ) -> dict[str, tuple[float, float, int]]:
    """The bootstrap as a plain loop: each resample is the report rebuilt from the drawn
    clips' counts, scored by the report's own vector and logic."""
    arrays = [a.arrays(), b.arrays()]
    names = (*a.coordinates, "logic")
    differences: dict[str, list[float]] = {n: [] for n in names}
    for row in indices:
        clips = [a.clips[i] for i in row]
        ra, rb = (r.rebuild(clips, {k: v[row] for k, v in arr.items()})
                  for r, arr in zip((a, b), arrays, strict=True))
        va = [*ra.vector(mode).values(), ra.logic(mode)]
        vb = [*rb.vector(mode).values(), rb.logic(mode)]
        for name, x, y in zip(names, va, vb, strict=True):
            if not (math.isnan(x) or math.isnan(y)):
                differences[name].append(x - y)
    out = {}
    for name, values in differences.items():
        if values:
            lo, hi = np.quantile(values, ((1 - level) / 2, (1 + level) / 2))
        else:
            lo = hi = math.nan
        out[name] = (float(lo), float(hi), len(values))
    return out


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


# -- by hand --------------------------------------------------------------------------------------
def test_two_clips_enumerated_by_hand():
    """Clip 0: a meets 2 of 2 onsets, b 1 of 2; clip 1: both 1 of 2. Duration: one
    obligation, in clip 0 only, a meets it, b not. The three resamples {0,0}, {0,1}, {1,1}
    (probabilities 1/4, 1/2, 1/4) give onset differences 1/2, 1/4, 0; duration 1, 1 and
    undefined; logic (a − b) (1+1)/2 − (1/2+0)/2 = 3/4, (3/4+1)/2 − 1/4 = 5/8, 1/2 − 1/2 = 0."""
    def system(onset: list[int], duration: list[int]) -> GuardReport:
        return synthetic(2, {"union/satisfied/onset": onset, "union/obligations/onset": [2, 2],
                             "union/satisfied/duration": duration,
                             "union/obligations/duration": [1, 0]})

    a, b = system([2, 1], [1, 0]), system([1, 1], [0, 0])
    result = paired_bootstrap(a, b, mode="union", resamples=4000, seed=7)
    indices = rs.resample_indices(2, 4000, 7)
    has0, has1 = (indices == 0).any(axis=1), (indices == 1).any(axis=1)
    kinds = Counter(zip(has0.tolist(), has1.tolist(), strict=True))
    both, only0, only1 = kinds[True, True], kinds[True, False], kinds[False, True]
    assert both + only0 + only1 == 4000 and abs(only1 / 4000 - 0.25) < 0.03

    onset = result["onset"]
    assert onset == Interval(0.25, 0.0, 0.5, 0.95, 4000, 4000)
    duration = result["duration"]
    assert (duration.point, duration.lo, duration.hi) == (1.0, 1.0, 1.0)
    assert duration.defined == both + only0 and duration.undefined == only1 > 0
    logic = result["logic"]
    assert logic.point == 0.625 and (logic.lo, logic.hi) == (0.0, 0.75)
    assert logic.defined == 4000
    for name in ("offset", "missed", "false", "silence", "fragmentation"):  # vacuous everywhere
        r = result[name]
        assert math.isnan(r.point) and math.isnan(r.lo) and math.isnan(r.hi)
        assert r.defined == 0 and r.undefined == 4000 and not r.excludes_zero


# -- the loop oracle ------------------------------------------------------------------------------
@pytest.mark.parametrize("aggregation", ["micro", "macro"])
@pytest.mark.parametrize("mode", ["typed", "union"])
def test_equals_a_plain_loop_bit_for_bit(aggregation, mode):
    rng = np.random.default_rng(3)
    a = synthetic(20, random_counts(rng, 20, rare=0), aggregation=aggregation)
    b = synthetic(20, random_counts(rng, 20, rare=1), aggregation=aggregation)
    result = paired_bootstrap(a, b, mode=mode, resamples=300, seed=11, level=0.9)
    expected = oracle(a, b, mode, rs.resample_indices(20, 300, 11), 0.9)
    assert list(result) == [*a.coordinates, "logic"]
    for name, (lo, hi, defined) in expected.items():
        got = result[name]
        assert same(got.lo, lo) and same(got.hi, hi) and got.defined == defined, name
        assert got.resamples == 300 and got.level == 0.9
    va, vb = a.vector(mode), b.vector(mode)
    for name in a.coordinates:
        assert same(result[name].point, va[name] - vb[name])
    assert same(result["logic"].point, a.logic(mode) - b.logic(mode))
    # fragmentation is defined where the resample holds clips 0 (a's) and 1 (b's)
    assert 0 < result["fragmentation"].undefined < 300


def test_blocks_of_resamples_give_the_oracle_too(monkeypatch):
    """Drawn and weighed a few resamples at a time (as a large run is), still the loop's bits."""
    monkeypatch.setattr(rs, "CHUNK_CELLS", 7 * 20 + 3)  # 7 resamples per block, last short
    rng = np.random.default_rng(5)
    a, b = synthetic(20, random_counts(rng, 20)), synthetic(20, random_counts(rng, 20))
    indices = rs.resample_indices(20, 52, 2)
    assert indices.shape == (52, 20)
    result = paired_bootstrap(a, b, resamples=52, seed=2)
    for name, (lo, hi, defined) in oracle(a, b, "typed", indices, 0.95).items():
        assert same(result[name].lo, lo) and same(result[name].hi, hi)
        assert result[name].defined == defined


# -- real audits ----------------------------------------------------------------------------------
def shifted(events: EventList, by: float) -> EventList:
    return EventList(events.clip, events.onset + by, events.offset + by, events.label,
                     clips=events.clips)


REF = random_reference(0, clips=20)
DURATIONS = {f"clip{c}": 10.0 for c in range(20)}


@pytest.mark.parametrize("aggregation", ["micro", "macro"])
def test_identical_systems_differ_by_exactly_zero(aggregation):
    report = sedcontract.audit(REF, shifted(REF, 0.3), durations=DURATIONS,
                               aggregation=aggregation)
    for mode in ("typed", "union"):
        for name, r in paired_bootstrap(report, report, mode=mode, resamples=500).items():
            assert (r.point, r.lo, r.hi) == (0.0, 0.0, 0.0), (mode, name)
            assert r.defined == 500 and not r.excludes_zero


def test_a_clearly_better_system_has_an_interval_above_zero():
    good = sedcontract.audit(REF, shifted(REF, 0.05), durations=DURATIONS)
    bad = sedcontract.audit(REF, shifted(REF, 0.45), durations=DURATIONS)
    result = paired_bootstrap(good, bad)
    for name in ("onset", "logic"):
        r = result[name]
        assert r.point > 0 and r.lo > 0 and r.excludes_zero and r.lo <= r.point <= r.hi, name
    reverse = paired_bootstrap(bad, good)["logic"]
    assert reverse.hi < 0 and reverse.point == -result["logic"].point


# -- refusals, arguments, determinism -------------------------------------------------------------
def test_reports_of_different_clips_or_contracts_are_refused():
    a = sedcontract.audit(REF, REF, durations=DURATIONS)
    arrays = a.arrays()

    def refused(b: GuardReport, *words: str, mode: str = "typed") -> None:
        with pytest.raises(SedContractError) as caught:
            paired_bootstrap(a, b, mode=mode)
        for word in words:
            assert word in str(caught.value)

    refused(a.rebuild(a.clips[:19], {k: v[:19] for k, v in arrays.items()}), "20 and 19 clips")
    order = list(range(20))
    order[3], order[4] = 4, 3
    refused(a.rebuild([a.clips[i] for i in order], {k: v[order] for k, v in arrays.items()}),
            "clip 3 is 'clip3' in a and 'clip4' in b")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, coordinates="onset,offset"),
            "coordinates", "fragmentation")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, aggregation="macro"),
            "aggregation", "micro and macro")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, eps="100ms"), "eps")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, hop=0.01), "hop")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, classes=(*CLASSES, "dog")),
            "classes", "dog")
    refused(sedcontract.audit(REF, REF, durations=DURATIONS, mode="union"), "no 'typed'")
    # scores computed beside one report only: the counts still mean the same
    with_scores = sedcontract.audit(REF, REF, durations=DURATIONS,
                                    scores=sedcontract.ScoreSettings())
    assert paired_bootstrap(a, with_scores, resamples=10)["logic"].point == 0.0


@pytest.mark.parametrize(("option", "value"), [
    ("resamples", 0), ("resamples", 2.5), ("resamples", True), ("seed", -1), ("seed", "x"),
    ("level", 1.0), ("level", 0), ("level", True), ("mode", "both"), ("mode", None)])
def test_bad_arguments_are_refused(option, value):
    report = synthetic(3, {})
    with pytest.raises(SedContractError, match=option if option != "mode" else "mode|trace"):
        paired_bootstrap(report, report, **{option: value})


def test_too_many_indices_to_hold_are_refused_by_name():
    with pytest.raises(SedContractError, match="more than 50000000"):
        rs.resample_indices(420, 200_000)


def test_deterministic_from_the_seed():
    rng = np.random.default_rng(0)
    a, b = synthetic(30, random_counts(rng, 30)), synthetic(30, random_counts(rng, 30))
    first = paired_bootstrap(a, b, resamples=400, seed=4)
    assert paired_bootstrap(a, b, resamples=400, seed=4) == first
    other = paired_bootstrap(a, b, resamples=400, seed=5)
    assert other != first
    assert all(same(other[n].point, first[n].point) for n in first)  # the point needs no draw
    assert np.array_equal(rs.resample_indices(30, 400, 4), rs.resample_indices(30, 400, 4))


def test_timing_2000_resamples_of_420_clips():
    """Printed, not asserted: 2000 resamples × 420 clips × 7 coordinates (+ logic)."""
    rng = np.random.default_rng(1)
    for aggregation in ("micro", "macro"):
        a = synthetic(420, random_counts(rng, 420, 0.1), aggregation=aggregation)
        b = synthetic(420, random_counts(rng, 420, 0.1), aggregation=aggregation)
        start = time.perf_counter()
        result = paired_bootstrap(a, b, resamples=2000, seed=0)
        elapsed = time.perf_counter() - start
        assert len(result) == 8
        print(f"\npaired_bootstrap {aggregation}, typed: 2000 resamples × 420 clips × 7 "
              f"coordinates in {elapsed * 1000:.1f} ms")


# -- runs over seeds --------------------------------------------------------------------------


@pytest.mark.parametrize("aggregation", ["micro", "macro"])
def test_runs_over_seeds_are_the_report_of_their_summed_counts(aggregation):
    """A system given as its runs over seeds is bootstrapped on its per-clip counts summed
    over the runs: the same intervals and points, bit for bit, as one report holding them."""
    rng = np.random.default_rng(4)
    runs = {s: [synthetic(30, random_counts(rng, 30), aggregation=aggregation)
                for _ in range(3)] for s in "ab"}

    def summed(reports):
        arrays = [r.arrays() for r in reports]
        return reports[0].rebuild(list(reports[0].clips),
                                  {k: sum(a[k] for a in arrays) for k in arrays[0]})
    for mode in ("typed", "union"):
        pooled = paired_bootstrap(runs["a"], runs["b"], mode=mode, resamples=300, seed=2)
        single = paired_bootstrap(summed(runs["a"]), summed(runs["b"]), mode=mode,
                                  resamples=300, seed=2)
        for name, iv in pooled.items():
            other = single[name]
            assert (iv.defined, iv.resamples) == (other.defined, other.resamples), name
            for x, y in ((iv.lo, other.lo), (iv.hi, other.hi)):
                assert same(x, y), name
            assert iv.point == pytest.approx(other.point, abs=1e-12) or \
                (math.isnan(iv.point) and math.isnan(other.point)), name


def test_runs_of_other_clips_or_none_are_refused():
    rng = np.random.default_rng(5)
    a = synthetic(10, random_counts(rng, 10))
    with pytest.raises(SedContractError, match="at least one report"):
        paired_bootstrap([], a)
    with pytest.raises(SedContractError, match="different clips"):
        paired_bootstrap([a, synthetic(11, random_counts(rng, 11))], a)


# -- one system ---------------------------------------------------------------------------------


@pytest.mark.parametrize("aggregation", ["micro", "macro"])
def test_one_systems_intervals_are_the_rebuilt_reports_quantiles(aggregation):
    """A plain-loop oracle: each resample is the report rebuilt from the drawn clips (the same
    draws as resample_indices), scored by its own vector, logic and standard scores."""
    rng = np.random.default_rng(6)
    ref = random_reference(rng, 12)
    pred = EventList(ref.clip, ref.onset + rng.normal(0, 0.1, len(ref)).clip(0, None),
                     ref.offset + 0.3, ref.label, clips=ref.clips)
    report = sedcontract.audit(ref, pred, AuditPolicy(aggregation=aggregation,
                                                      scores=sedcontract.ScoreSettings()))
    indices = rs.resample_indices(len(report.clips), 200, 3)
    arrays = report.arrays()
    for mode in ("typed", "union"):
        got = bs.bootstrap_intervals(report, mode=mode, resamples=200, seed=3)
        values = {n: [] for n in got}
        for row in indices:
            again = report.rebuild([report.clips[i] for i in row],
                                   {k: v[row] for k, v in arrays.items()})
            for name, value in (*again.vector(mode).items(), ("logic", again.logic(mode)),
                                *((f"{k}_f1", r.overall.f1) for k, r in again.scores.items())):
                if not math.isnan(value):
                    values[name].append(value)
        for name, iv in got.items():
            lo, hi = np.quantile(values[name], (0.025, 0.975))
            assert iv.defined == len(values[name]), name
            assert iv.lo == pytest.approx(lo, abs=1e-12) and iv.hi == pytest.approx(hi, abs=1e-12)
        assert got["logic"].point == report.logic(mode)
        assert got["event_f1"].point == report.scores["event"].overall.f1


def test_the_cli_prints_intervals_and_refuses_them_where_they_cannot_go(tmp_path, capsys):
    import json

    from sedcontract.cli import main
    from sedcontract.traces import write_events

    rng = np.random.default_rng(8)
    ref = random_reference(rng, 10)
    write_events(tmp_path / "ref.tsv", ref)
    base = ["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "ref.tsv")]
    assert main([*base, "--bootstrap", "100", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["intervals"]) == {"typed", "union"}
    onset = data["intervals"]["typed"]["onset"]
    assert onset["point"] == onset["lo"] == onset["hi"] == 1.0 and onset["resamples"] == 100
    assert main([*base, "--bootstrap", "50"]) == 0
    assert "## Bootstrap intervals (95%, 50 resamples of the clips, seed 0)" in \
        capsys.readouterr().out
    assert main([*base, "--bootstrap", "50", "--format", "csv"]) == 2
    assert "--bootstrap with --format csv writes the bootstrap draws of PSDS, mAUC and mpAUC" \
        in capsys.readouterr().err  # events have none: the report draws the counts itself
    assert main([*base, "--bootstrap", "-3"]) == 2
    assert "argument --bootstrap: -3 resamples: give 0 (none) to 100,000" in \
        capsys.readouterr().err


def test_the_cli_compares_two_systems_on_the_same_clips(tmp_path, capsys):
    """--compare B: the paired difference A − B of every coordinate and logic, with the
    paired bootstrap's interval, equal to paired_bootstrap on the two audits."""
    import json

    from sedcontract.cli import main
    from sedcontract.traces import write_events

    rng = np.random.default_rng(9)
    ref = random_reference(rng, 10)
    late = EventList(ref.clip, ref.onset + 0.5, ref.offset + 0.5, ref.label, clips=ref.clips)
    for name, events in (("ref.tsv", ref), ("late.tsv", late)):
        write_events(tmp_path / name, events)
    base = ["audit", "--ref", str(tmp_path / "ref.tsv"), "--pred", str(tmp_path / "ref.tsv"),
            "--compare", str(tmp_path / "late.tsv")]
    assert main([*base, "--format", "json", "--bootstrap", "300"]) == 0
    data = json.loads(capsys.readouterr().out)
    want = paired_bootstrap(sedcontract.audit(ref, ref), sedcontract.audit(ref, late),
                            mode="typed", resamples=300)
    got = data["comparison"]["typed"]
    for name, iv in want.items():
        assert (got[name]["point"], got[name]["lo"], got[name]["hi"]) == \
            pytest.approx((iv.point, iv.lo, iv.hi)), name
    assert got["onset"]["point"] > 0 and "intervals" in data
    assert main(base) == 0  # 2000 resamples by default; Markdown marks what excludes 0
    out = capsys.readouterr().out
    assert "## Paired difference, --pred ref.tsv minus --compare late.tsv (95%, 2000 " \
           "resamples" in out
    assert " ↑ |" in out
    assert main([*base, "--format", "csv"]) == 2
    assert "--compare and --compare-scores add paired intervals" in capsys.readouterr().err
    # two files of one name are told apart by their paths; the second system's events cut at
    # their clip's end are reported as the first's are
    (tmp_path / "b").mkdir()
    late_rows = [(c, on, off + 30.0 * (k == 0), lab)
                 for k, (c, on, off, lab) in enumerate(late.to_rows())]
    write_events(tmp_path / "b" / "ref.tsv", EventList.from_rows(late_rows, clips=ref.clips))
    durations = tmp_path / "durations.tsv"
    durations.write_text("filename\tduration\n" + "".join(
        f"{c}.wav\t{max(off for cc, _, off, _ in ref.to_rows() if cc == c) + 1.0}\n"
        for c in ref.clips))
    assert main([*base[:-1], str(tmp_path / "b" / "ref.tsv"), "--durations",
                 str(durations), "--bootstrap", "50"]) == 0
    captured = capsys.readouterr()
    assert (f"## Paired difference, --pred {tmp_path / 'ref.tsv'} minus --compare "
            f"{tmp_path / 'b' / 'ref.tsv'} (95%") in captured.out
    assert (f"warning: --compare {tmp_path / 'b' / 'ref.tsv'}: 1 predicted event(s) ended "
            "past their clip's duration and were cut at it") in captured.err


# -- the core on count arrays (shared with the report from rows) ----------------------------


def test_f1_from_counts_is_the_standard_scores_f1():
    """Every (tp, references, outputs) of a small grid: the resampled F1 is Counts.f1 —
    undefined (NaN, left out of the interval) without references, 0 without a hit."""
    from sedcontract.scores.counts import Counts

    grid = [(tp, ref, sys) for ref in range(5) for sys in range(5)
            for tp in range(min(ref, sys) + 1)]
    got = bs.f1_scores(np.array(grid))
    for (tp, ref, sys), value in zip(grid, got, strict=True):
        want = Counts(tp, ref, sys).f1
        assert same(float(value), want) or value == pytest.approx(want, abs=1e-15), \
            (tp, ref, sys)
    assert math.isnan(bs.f1_scores(np.array([0, 0, 3])))


def test_stacked_systems_share_their_draws():
    """Systems stacked on one count array are resampled with the same clips: each one's
    scores are its own resampled_scores, and their difference is paired_bootstrap's."""
    rng = np.random.default_rng(12)
    a, b = (synthetic(25, random_counts(rng, 25)) for _ in range(2))
    counts = np.stack([bs._counts(r, "union", False) for r in (a, b)], axis=1)
    stacked = bs.resampled_scores(counts, 150, 4)  # [resamples, systems, K + 1]
    assert stacked.shape == (150, 2, len(a.coordinates) + 1)
    for s, report in enumerate((a, b)):
        alone = bs.resampled_scores(bs._counts(report, "union", False), 150, 4)
        assert np.array_equal(stacked[:, s], alone, equal_nan=True)
    points = bs.count_scores(counts.sum(axis=0))
    names = (*a.coordinates, "logic")
    assert rs.percentile_intervals(names, list(points[0] - points[1]),
                                   stacked[:, 0] - stacked[:, 1], 0.95, 150) == \
        paired_bootstrap(a, b, mode="union", resamples=150, seed=4)


def test_a_resample_count_past_the_bound_is_refused_before_any_draw(tmp_path, capsys):
    """``--bootstrap 1000000000`` once grew to a MemoryError after 20–40 s, in audit, sweep and
    report alike; it is refused by the option, and by the API, before anything is drawn."""
    from sedcontract.cli import main
    from sedcontract.guard import bootstrap_intervals
    from sedcontract.resampling import MAX_RESAMPLES
    from tests.helpers.examples import write_worked_example

    args = [*write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    rows = tmp_path / "rows.csv"
    assert main(["audit", *args, "--format", "csv", "--out", str(rows)]) == 0
    for argv in (["audit", *args], ["sweep", *args, "--eps", "0,100ms"],
                 ["report", str(rows), "--out", str(tmp_path / "r")]):
        assert main([*argv, "--bootstrap", "1000000000"]) == 2
        err = capsys.readouterr().err
        assert "argument --bootstrap: 1,000,000,000 resamples: give 0 (none) to 100,000" in err
    report = sedcontract.audit(tmp_path / "ref.tsv", tmp_path / "pred.tsv",
                               durations=tmp_path / "dur.tsv")
    with pytest.raises(SedContractError, match="resamples must be at most 100,000"):
        bootstrap_intervals(report, resamples=10 ** 9)
    with pytest.raises(SedContractError, match="resamples must be at most 100,000"):
        paired_bootstrap(report, report, resamples=MAX_RESAMPLES + 1)
    assert bootstrap_intervals(report, resamples=MAX_RESAMPLES)["onset"].resamples == \
        MAX_RESAMPLES


# ---- the two-stage (seed, clip) bootstrap of runs over training seeds ----

def test_seed_clip_totals_are_the_counts_of_the_drawn_cells():
    """Every resample's totals equal the sum, draw by draw, of the drawn seed's drawn clips'
    counts (the draws of :func:`seed_clip_draws`, the same for any pair of systems)."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 50, size=(3, 4, 2, 2, 2, 1))  # seeds, clips, systems, s/o, K, G
    got = np.concatenate(list(bs._seed_clip_totals(counts, 40, seed=7)))
    want = []
    for seeds, clips in bs.seed_clip_draws(3, 4, 40, seed=7):
        for r in range(len(seeds)):
            want.append(sum(counts[seeds[r, j], clips[r, j, c]]
                            for j in range(3) for c in range(4)))
    np.testing.assert_array_equal(got, np.array(want))
    again = [np.concatenate(x) for x in zip(*bs.seed_clip_draws(3, 4, 40, seed=7),
                                            strict=True)]
    first = [np.concatenate(x) for x in zip(*bs.seed_clip_draws(3, 4, 40, seed=7),
                                            strict=True)]
    assert all(np.array_equal(x, y) for x, y in zip(again, first, strict=True))


def test_the_seed_clip_interval_widens_with_the_spread_over_training_seeds():
    """Runs whose onsets differ from seed to seed: the clip bootstrap of the pooled runs holds
    the models fixed and is narrow; the two-stage bootstrap also draws the seeds and is wider.
    Both share the pooled point."""
    ref = random_reference(3, 12)
    rng = np.random.default_rng(5)

    def run(shift: float) -> GuardReport:  # every event late by ``shift``, give or take 0.15 s
        moved = ref.onset + shift + rng.normal(0, 0.15, len(ref))
        moved = np.clip(moved, 0, ref.offset - 0.05)
        return sedcontract.audit(ref, EventList(ref.clip, moved, ref.offset, ref.label,
                                                clips=ref.clips))

    shifts = (0.0, 0.3, 0.6, 0.05, 0.4)  # one run per training seed
    runs_a = [run(s) for s in shifts]
    runs_b = [run(0.25) for _ in shifts]
    clips_only = paired_bootstrap(runs_a, runs_b, resamples=1000, seed=1)["onset"]
    both = bs.hierarchical_bootstrap(runs_a, runs_b, resamples=1000, seed=1)["onset"]
    assert both.point == pytest.approx(clips_only.point, abs=1e-12)
    assert (both.hi - both.lo) > 2 * (clips_only.hi - clips_only.lo) > 0
    # the clip interval calls the difference sure; over seeds and clips it is not
    assert clips_only.excludes_zero and not both.excludes_zero
    assert both.resamples == 1000 and both.level == 0.95
    with pytest.raises(SedContractError, match="same number of runs"):
        bs.hierarchical_bootstrap(runs_a, runs_b[:2])
    same = bs.hierarchical_bootstrap(runs_a, runs_b, resamples=1000, seed=1)
    assert same["onset"] == both and same["logic"].point == pytest.approx(
        paired_bootstrap(runs_a, runs_b, resamples=10)["logic"].point, abs=1e-12)


def test_the_seed_clip_bootstrap_scores_f1_on_the_drawn_cells_as_a_report_pools_them():
    """The standard scores' F1 differences of the two-stage bootstrap: a plain-loop oracle
    rebuilds each drawn (seed, clip) cell as a report and pools its counts; the point is the
    F1 of the counts pooled over every run."""
    runs_a, runs_b = scored_runs(3, 0.1, 1), scored_runs(3, 0.4, 2)
    got = bs.hierarchical_bootstrap(runs_a, runs_b, resamples=60, seed=5)
    assert {"event_f1", "segment_f1", "frame_f1"} <= set(got)

    def pooled_f1(reports: list[GuardReport], score: str) -> float:
        tp = sum(r.scores[score].overall.tp for r in reports)
        return 2 * tp / sum(r.scores[score].overall.ref + r.scores[score].overall.sys
                            for r in reports)

    for score in ("event", "segment"):
        assert got[f"{score}_f1"].point == pytest.approx(
            pooled_f1(runs_a, score) - pooled_f1(runs_b, score), abs=1e-12)
    drawn = {"a": [], "b": []}
    for seeds, clips in bs.seed_clip_draws(3, len(runs_a[0].clips), 60, seed=5):
        for r in range(len(seeds)):
            for name, runs in (("a", runs_a), ("b", runs_b)):
                cells = []
                for j, s in enumerate(seeds[r]):
                    report = runs[s]
                    rows = clips[r, j]
                    cells.append(report.rebuild([report.clips[i] for i in rows],
                                                {k: v[rows] for k, v in report.arrays().items()}))
                drawn[name].append(pooled_f1(cells, "event"))
    diffs = np.array(drawn["a"]) - np.array(drawn["b"])
    lo, hi = np.quantile(diffs, (0.025, 0.975))
    assert got["event_f1"].lo == pytest.approx(lo, abs=1e-12)
    assert got["event_f1"].hi == pytest.approx(hi, abs=1e-12)
    assert got["event_f1"].lo > 0  # b's later onsets lose collar matches


def test_a_stratified_interval_is_the_mean_of_the_benchmarks_drawn_differences():
    """Pooling benchmarks: each stratum drawn within itself (stratum k from seed + k), the
    mean of their differences. A stratum that differs by nothing halves the other's draws;
    one stratum alone is the two-stage bootstrap; strata that score different names are
    refused."""
    runs_a, runs_b = scored_runs(3, 0.0, 3), scored_runs(3, 0.3, 4)
    same = scored_runs(3, 0.2, 5)
    alone = bs.hierarchical_bootstrap(runs_a, runs_b, resamples=300, seed=8)
    assert bs.stratified_bootstrap([(runs_a, runs_b)], resamples=300, seed=8) == alone
    other = bs.hierarchical_bootstrap(runs_a, runs_b, resamples=300, seed=9)
    pooled = bs.stratified_bootstrap([(same, same), (runs_a, runs_b)], resamples=300, seed=8)
    for name, iv in pooled.items():
        assert iv.point == pytest.approx(other[name].point / 2, abs=1e-12), name
        assert iv.lo == pytest.approx(other[name].lo / 2, abs=1e-12), name
        assert iv.hi == pytest.approx(other[name].hi / 2, abs=1e-12), name
    bare = scored_runs(3, 0.0, 3, scores=False)
    assert "event_f1" not in bs.hierarchical_bootstrap(bare, bare, resamples=10)
    with pytest.raises(SedContractError, match="at least one stratum"):
        bs.stratified_bootstrap([])
    with pytest.raises(SedContractError, match="must score the same"):
        bs.stratified_bootstrap([(runs_a, runs_b), (bare, bare)])


def test_a_resample_where_one_benchmark_is_vacuous_is_left_out_of_the_pool():
    """Fragmentation obliged in one clip of one benchmark: the draws without that clip have no
    difference there, so the pooled mean is undefined in exactly those draws (not the other
    benchmark's difference alone)."""
    rng = np.random.default_rng(12)
    rare = [synthetic(6, random_counts(rng, 6, rare=0))], [synthetic(6, random_counts(rng, 6,
                                                                                      rare=0))]
    common = [synthetic(6, random_counts(rng, 6, vacuous=0.0))], \
        [synthetic(6, random_counts(rng, 6, vacuous=0.0))]
    alone = bs.hierarchical_bootstrap(*rare, resamples=400, seed=3)["fragmentation"]
    pooled = bs.stratified_bootstrap([rare, common], resamples=400, seed=3)["fragmentation"]
    assert 0 < alone.defined < 400 and pooled.defined == alone.defined
    other = bs.hierarchical_bootstrap(*common, resamples=400, seed=4)["fragmentation"]
    assert other.defined == 400


def test_f1_differences_need_the_same_score_settings():
    """Identical events scored under two collars differ in F1 by the settings alone: refused,
    naming them, rather than reported as a difference of the systems."""
    runs = scored_runs(2, 0.1, 1)
    rng = np.random.default_rng(11)
    ref = random_reference(np.random.default_rng(11), 10)
    moved = []
    for _ in range(2):
        onset = np.clip(ref.onset + 0.1 + rng.normal(0, 0.15, len(ref)), 0, ref.offset - 0.05)
        moved.append(sedcontract.audit(ref, EventList(ref.clip, onset, ref.offset, ref.label,
                                                      clips=ref.clips),
                                       AuditPolicy(scores=sedcontract.ScoreSettings(
                                           t_collar=0.01))))
    with pytest.raises(SedContractError, match="score settings"):
        bs.hierarchical_bootstrap(runs, moved)
