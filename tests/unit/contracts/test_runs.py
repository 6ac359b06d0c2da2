"""The run-length backend of the exact monitor equals the dense one: frame formulas on random
traces (every operator, both clip edges, empty clips, touching runs, windows longer than the
clip) and whole audits on random events and grids; and its cost follows the runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sedcontract
from sedcontract.contracts.bounds import BoundResolver
from sedcontract.contracts.contract import clause_outcomes, parse_contract, run_contract
from sedcontract.contracts.monitor import SignalTable, evaluate_formula
from sedcontract.contracts.parser import parse_formula
from sedcontract.contracts.printer import format_formula
from sedcontract.contracts.runs import RunOps, RunTable, evaluate_runs, evaluate_runs_at
from sedcontract.errors import ContractCheckError
from sedcontract.traces import EventList
from sedcontract.traces.intervals import Intervals
from tests.helpers.formulas import formula_strategy, random_formula
from tests.helpers.limits import run_limited

CLASSES = ("speech", "tone")


def both(formula, signals, lengths, edges):
    """(run-length, dense) values of ``formula`` as Boolean frame arrays."""
    rows, n = next(iter(signals.values())).shape
    table = RunTable({k: Intervals.of(v, lengths) for k, v in signals.items()}, lengths,
                     edges=edges)
    runs = evaluate_runs(formula, table, BoundResolver()).paint(rows, n)
    return runs, evaluate_formula(formula, signals, lengths=lengths, edges=edges)


def random_signals(rng, rows, n, classes=()):
    names = [f"{s}.active" for s in ("ref", "pred")]
    names += [f"{s}.active[{c}]" for c in classes for s in ("ref", "pred")]
    return {name: rng.random((rows, n)) < rng.uniform(0.05, 0.9) for name in names}


@pytest.mark.parametrize("edges", ["open", "closed"])
def test_runs_equal_the_dense_monitor_on_random_formulas(edges):
    rng = np.random.default_rng(21)
    for _ in range(400):
        formula = random_formula(rng, int(rng.integers(1, 6)), max_bound=15)
        n = int(rng.integers(1, 30))  # bounds up to 15 frames: windows often pass the clip
        lengths = rng.integers(0, n + 1, size=5)
        lengths[0], lengths[1] = n, 0  # a full clip and an empty one
        runs, dense = both(formula, random_signals(rng, 5, n), lengths, edges)
        np.testing.assert_array_equal(runs, dense, err_msg=str(formula))


@given(formula=formula_strategy(max_bound=8, classes=CLASSES), seed=st.integers(0, 2**32 - 1),
       n=st.integers(1, 16), edges=st.sampled_from(["open", "closed"]))
@settings(max_examples=150)
def test_runs_equal_the_dense_monitor_with_class_atoms(formula, seed, n, edges):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, n + 1, size=3)
    runs, dense = both(formula, random_signals(rng, 3, n, CLASSES), lengths, edges)
    np.testing.assert_array_equal(runs, dense)


@pytest.mark.parametrize("edges", ["open", "closed"])
def test_values_at_single_frames_equal_the_dense_monitor_there(edges):
    """A requirement valued at an obligation's single frames (onsets, offsets) alone holds
    exactly where the dense monitor's value holds at those frames, for every operator: the
    Boolean ones at the points, windows cut to the clip (empty: false for ∃, true for ∀),
    until as runs; the points of several formulas are valued together."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        formulas = [random_formula(rng, int(rng.integers(1, 5)), max_bound=12)
                    for _ in range(3)]
        n = int(rng.integers(1, 30))
        lengths = rng.integers(0, n + 1, size=5)
        lengths[0], lengths[1] = n, 0
        signals = random_signals(rng, 5, n)
        table = RunTable({k: Intervals.of(v, lengths) for k, v in signals.items()}, lengths,
                         edges=edges)
        points = table.lookup(parse_formula(str(rng.choice(["ref.onset", "pred.offset"]))))
        at = evaluate_runs_at(formulas, points, table, BoundResolver())
        for formula, value in zip(formulas, at, strict=True):
            assert value.points is points
            dense = evaluate_formula(formula, signals, lengths=lengths, edges=edges)
            np.testing.assert_array_equal(value.held, dense[points.row, points.start],
                                          err_msg=str(formula))


@pytest.mark.parametrize("edges", ["open", "closed"])
def test_clauses_obliged_on_single_frames_count_as_on_the_dense_backend(edges):
    """Clauses obliged on onsets, offsets or a conjunction with one, with random requirements
    (valued at those frames alone on runs), give the dense backend's counts row by row, and
    their failures are the obliged frames where the requirement fails."""
    rng = np.random.default_rng(8)
    for k in range(40):
        texts = [f"{side}.{kind}" for side in ("ref", "pred") for kind in ("onset", "offset")]
        obliged = [str(rng.choice(texts)) for _ in range(3)]
        obliged[2] = f"{obliged[2]} & !pred.active"
        requirements = [format_formula(random_formula(rng, int(rng.integers(1, 4)), max_bound=8))
                        for _ in obliged]
        source = "\n".join(f"clause c{i}: on {o} require {r}"
                            for i, (o, r) in enumerate(zip(obliged, requirements, strict=True)))
        contract = parse_contract(source)
        n = int(rng.integers(5, 40))
        lengths = rng.integers(0, n + 1, size=4)
        signals = random_signals(rng, 4, n)
        table = RunTable({k: Intervals.of(v, lengths) for k, v in signals.items()}, lengths,
                         edges=edges)
        runs = run_contract(contract, table, BoundResolver())
        dense = run_contract(contract, SignalTable(signals, lengths=lengths, edges=edges),
                             BoundResolver())
        for name, score in runs.clauses.items():
            np.testing.assert_array_equal(score.satisfied_per_row,
                                          dense.clauses[name].satisfied_per_row, source)
            np.testing.assert_array_equal(score.obligations_per_row,
                                          dense.clauses[name].obligations_per_row, source)
        outcomes = clause_outcomes(contract, table, BoundResolver())
        for i, (o, r) in enumerate(zip(obliged, requirements, strict=True)):
            failed = evaluate_formula(parse_formula(f"({o}) & !({r})"), signals,
                                      lengths=lengths, edges=edges)
            np.testing.assert_array_equal(outcomes[f"c{i}"].failures.paint(4, n), failed,
                                          source)


def test_touching_and_edge_runs():
    active = np.array([[1, 1, 0, 1, 1, 1, 0, 0, 1, 1]], dtype=bool)
    signals = {"ref.active": active, "pred.active": ~active}
    for text in ("ref.onset", "ref.offset", "pred.onset", "pred.offset", "!ref.active",
                 "N[1] ref.offset", "ref.active U[0:3] pred.active", "G[0:20] ref.active",
                 "H[2:4] !ref.active", "F[9:30] ref.active"):
        for edges in ("open", "closed"):
            for lengths in (np.array([10]), np.array([9]), np.array([1])):
                runs, dense = both(parse_formula(text), signals, lengths, edges)
                np.testing.assert_array_equal(runs, dense, err_msg=f"{text} {edges} {lengths}")



def test_the_complement_of_runs_whose_rows_come_out_of_order_or_empty():
    """``not_`` of maximal runs whose row blocks come in any order (each row's runs sorted),
    or with an empty run among them, is the maximal runs of the frames of each row's
    ``[0, length)`` they leave: the in-place layout is only for rows in order, and beside an
    empty run it would leave two gaps that touch."""
    rng = np.random.default_rng(0)
    lengths = np.array([12, 0, 9, 15, 7])
    ops = RunOps(lengths)
    active = (rng.random((5, 15)) < 0.45) & (np.arange(15) < lengths[:, None])
    runs = Intervals.of(active, lengths)
    want = Intervals.of(~active & (np.arange(15) < lengths[:, None]), lengths)

    def assert_complement(x):
        got = ops.not_(x)
        for name in ("row", "start", "end"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), name)

    for order in ([3, 0, 4, 2], [4, 3, 2, 0], [2, 0, 3, 4]):
        block = np.concatenate([np.flatnonzero(runs.row == r) for r in order])
        shuffled = Intervals(runs.row[block], runs.start[block], runs.end[block])
        assert np.any(shuffled.row[1:] < shuffled.row[:-1])
        assert_complement(shuffled)
    at = 1  # an empty run [7, 7) of row 0, in its place between [1, 4) and [11, 12)
    assert runs.row[0] == 0 and runs.end[0] < 7 < runs.start[at]
    empty = Intervals(np.insert(runs.row, at, 0), np.insert(runs.start, at, 7),
                      np.insert(runs.end, at, 7))
    assert_complement(empty)


def random_events(rng, clips: int, hop: float) -> tuple[EventList, EventList, dict]:
    rows: dict[str, list] = {"ref": [], "pred": []}
    durations = {}
    for i in range(clips):
        clip = f"c{i}"
        durations[clip] = float(rng.uniform(1, 4))
        for side in rows:
            for cls in CLASSES:
                t = 0.0
                while True:
                    t += float(rng.exponential(0.4))
                    length = float(rng.exponential(0.3)) + hop / 2
                    if t + length > durations[clip]:
                        break
                    rows[side].append((clip, t, t + length, cls))
                    t += length
    return (EventList.from_rows(rows["ref"], clips=tuple(durations)),
            EventList.from_rows(rows["pred"], clips=tuple(durations)), durations)


@pytest.mark.parametrize("hop", [0.001, 0.01, 0.02, 0.064])
def test_whole_audits_agree_on_every_count_on_any_grid(hop):
    rng = np.random.default_rng(int(hop * 1000))
    ref, pred, durations = random_events(rng, 6, hop)
    for edges in ("open", "closed"):
        reports = [sedcontract.audit(ref, pred, durations=durations, hop=hop, edges=edges,
                                     backend=backend) for backend in ("runs", "dense")]
        for mode in ("typed", "union"):
            a, b = (r.modes[mode] for r in reports)
            for name in a.satisfied:
                np.testing.assert_array_equal(a.satisfied[name], b.satisfied[name], name)
                np.testing.assert_array_equal(a.obligations[name], b.obligations[name], name)


def test_an_unknown_class_or_backend_is_a_clear_error():
    ref, pred, durations = random_events(np.random.default_rng(0), 2, 0.02)
    with pytest.raises(ContractCheckError, match="unknown monitor backend 'sparse'"):
        sedcontract.audit(ref, pred, durations=durations, backend="sparse")
    contract = sedcontract.parse_contract("clause d: on ref.onset[dog] require pred.active\n",
                                          name="dog.contract")
    for backend in ("runs", "dense"):
        with pytest.raises(ContractCheckError, match=r"unknown class 'dog'.*known classes: "
                                                     r"speech, tone"):
            sedcontract.audit(ref, pred, contract=contract, durations=durations,
                              backend=backend)


def test_a_fine_grid_costs_what_its_events_cost():
    """Two 4.5-hour clips on a 1 ms grid (32.4M frames) with 270 events each: the run-length
    audit fits in 400 MiB of address space (measured: the dense backend, a chunk of frame
    arrays at a time, runs out of memory under the same cap and needs about 1 GiB)."""
    code = (
        "import sedcontract\n"
        "from sedcontract.traces import EventList\n"
        "rows = [(f'c{i}', 60.0 * k + 1.0, 60.0 * k + 2.5, 'speech') for i in range(2) "
        "for k in range(270)]\n"
        "ref = EventList.from_rows(rows, clips=('c0', 'c1'))\n"
        "r = sedcontract.audit(ref, ref, durations={'c0': 16200.0, 'c1': 16200.0}, "
        "hop=0.001)\n"
        "print('logic', r.logic('typed'), r.modes['typed'].micro('silence').obligations)\n")
    result = run_limited(["-c", code], limit_mb=400)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("logic 1.0 ")
    # every frame farther than eps (200 ms) from the 540 events of 1.5 s
    assert int(result.stdout.split()[-1]) == 2 * 16_200_000 - 540 * (1500 + 2 * 200)


def test_processes_share_the_rows_and_give_the_same_report_bytes():
    from sedcontract.guard import to_json

    ref, pred, durations = random_events(np.random.default_rng(8), 7, 0.02)
    one = to_json(sedcontract.audit(ref, pred, durations=durations))
    assert to_json(sedcontract.audit(ref, pred, durations=durations, jobs=3)) == one
    with pytest.raises(ContractCheckError, match="jobs must be a whole number >= 1"):
        sedcontract.audit(ref, pred, durations=durations, jobs=0)


def test_the_command_line_gives_the_same_report_bytes_on_either_backend(tmp_path):
    from sedcontract.cli import main
    from sedcontract.traces import write_durations, write_events

    ref, pred, durations = random_events(np.random.default_rng(3), 5, 0.02)
    paths = {name: tmp_path / f"{name}.tsv" for name in ("ref", "pred", "durations")}
    write_events(paths["ref"], ref)
    write_events(paths["pred"], pred)
    write_durations(paths["durations"], durations)
    outputs = []
    for backend, jobs in (("runs", "1"), ("dense", "1"), ("runs", "2")):
        out = tmp_path / f"{backend}{jobs}.json"
        assert main(["audit", f"--ref={paths['ref']}", f"--pred={paths['pred']}",
                     f"--durations={paths['durations']}", "--format", "json", "--backend",
                     backend, "--jobs", jobs, "--out", str(out)]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


HUGE = "100000000000000000000000000000"


@pytest.mark.parametrize(("text", "fragment"), [
    (f"let eps = {HUGE}s\nclause onset: on ref.onset require N[eps] pred.onset\n",
     "longer than the longest supported time"),
    (f"clause onset: on ref.onset require N[{HUGE}] pred.onset\n", "more frames than"),
    (f"let eps = {HUGE}ms\nclause d: each ref require dur(ref) <= eps\n",
     "longer than the longest supported time"),
    ("let eps = " + "9" * 5000 + "\nclause o: on ref.onset require F[eps] pred.onset\n",
     "more frames than"),
])
def test_a_bound_too_large_to_run_is_refused_at_check_time_with_a_caret(text, fragment):
    """`check` accepts exactly what `audit` runs: a bound beyond 1e9 s (or 10^15 frames) is a
    check error pointing at it, with a hop or without, never an OverflowError in the audit."""
    contract = sedcontract.parse_contract(text, name="big.contract")
    first = text.split("\n")[0]
    column = first.index(HUGE if HUGE in first else "9" * 10) + 1
    for hop in (0.02, None):
        with pytest.raises(ContractCheckError, match=fragment) as info:
            sedcontract.check_contract(contract, hop=hop)
        assert (info.value.line, info.value.column) == (1, column)
    ref, pred, durations = random_events(np.random.default_rng(0), 1, 0.02)
    with pytest.raises(ContractCheckError, match=fragment):
        sedcontract.audit(ref, pred, contract=contract, durations=durations)


def test_a_huge_binding_is_refused_naming_it_and_the_largest_bound_still_runs():
    with pytest.raises(sedcontract.SedContractError,
                       match=f"eps '{HUGE}s' is longer than the longest supported time"):
        sedcontract.AuditPolicy(eps=f"{HUGE}s")
    with pytest.raises(sedcontract.SedContractError, match="'eps' = 1000000000000001 "
                                                            "frames"):
        sedcontract.AuditPolicy(eps=10**15 + 1)
    with pytest.raises(sedcontract.SedContractError, match="finer than a microsecond"):
        sedcontract.AuditPolicy(eps="1." + "0" * 30 + "1s")  # exact, not rounded to 28 digits
    ref, pred, durations = random_events(np.random.default_rng(1), 2, 0.02)
    for backend in ("runs", "dense"):  # 1e9 s, the longest supported time, is a usable radius
        report = sedcontract.audit(ref, pred, durations=durations, eps="1000000000s",
                                   backend=backend)
        assert report.modes["typed"].micro("onset").obligations > 0
