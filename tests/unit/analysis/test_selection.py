"""Contract selection under a risk order: the smallest separating coordinate set (checked
against a brute force over the per-clip scores), ties broken by the risk order, an imperfect
separation said so, the written contract runs, and bad risk orders and labels are named."""

from __future__ import annotations

import math
from itertools import combinations

import pytest

import sedcontract
from sedcontract.analysis.selection import (
    RiskOrder,
    read_labels,
    read_risk_order,
    select,
    selection_markdown,
)
from sedcontract.cli import main
from sedcontract.contracts import parse_contract
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import read_events
from tests.helpers.examples import calibration


def brute_force(report, labels, risk):
    """The smallest subset flagging every high case and no low case, by definition: every
    threshold from the observed scores is tried for every coordinate."""
    mode = report.modes["typed"]
    names = (*report.coordinates, *mode.diagnostics)
    scores = {n: {k: v.score for k, v in mode.per_clip(n).items()} for n in names}
    high = {c for c, p, _ in labels if p in risk.high}
    low = {c for c, p, _ in labels if p in risk.order and p not in risk.high}
    for size in range(1, len(names) + 1):
        found = []
        for subset in combinations(names, size):
            flagged = set()
            for n in subset:
                lows = [scores[n][c] for c in low if not math.isnan(scores[n][c])]
                tau = min(lows) if lows else 1.0
                flagged |= {c for c in high | low if scores[n][c] < tau}
            if flagged == high:
                found.append(subset)
        if found:
            return size, found
    return None, []


def test_a_planted_separation_is_recovered_and_minimal(tmp_path):
    """Fragmentation (high risk) against late onsets within eps and gain-free duration
    changes (low risk): one coordinate separates them, and it is the minimal set."""
    folder, data = calibration(tmp_path, {"fragmentation": [2, 3], "late_onset": [0.1],
                                          "duration": [1.5]})
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
    labels = read_labels(folder / "labels.tsv", data.ref.clips)
    risk = RiskOrder(("fragmentation", "late_onset", "duration"), frozenset({"fragmentation"}))
    selection = select(report, labels, risk)
    size, minimal = brute_force(report, labels, risk)
    assert selection.perfect and len(selection.chosen) == size == 1
    assert selection.chosen in minimal and selection.chosen == ("fragmentation",)
    assert selection.unflagged == []


def test_the_risk_order_breaks_ties(tmp_path):
    """A missed event fails several coordinates at once (missed, onset, offset and the late
    onset / early release diagnostics): each alone separates; the highest-ranked one is taken."""
    folder, data = calibration(tmp_path, {"missed": [1.0], "late_onset": [0.1]})
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
    labels = read_labels(folder / "labels.tsv", data.ref.clips)
    _, minimal = brute_force(report, labels, RiskOrder(("missed", "late_onset"),
                                                       frozenset({"missed"})))
    assert {("missed",), ("onset",), ("offset",)} <= set(minimal)
    first = select(report, labels, RiskOrder(("missed", "late_onset", "onset"),
                                             frozenset({"missed"})))
    second = select(report, labels, RiskOrder(("onset", "missed", "late_onset"),
                                              frozenset({"missed"})))
    assert first.chosen == ("missed",) and second.chosen == ("onset",)


def test_an_imperfect_separation_says_so(tmp_path):
    """Late onsets of 0.1 s (within eps: no coordinate fails them) declared high risk, against
    missed events: nothing can flag them, and the result says so."""
    folder, data = calibration(tmp_path, {"late_onset": [0.1], "missed": [1.0]})
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
    labels = read_labels(folder / "labels.tsv", data.ref.clips)
    risk = RiskOrder(("late_onset", "missed"), frozenset({"late_onset"}))
    selection = select(report, labels, risk)
    assert brute_force(report, labels, risk)[0] is None
    assert not selection.perfect
    assert set(selection.unflagged) == {c for c, p, _ in labels if p == "late_onset"} - \
        set().union(*(selection.choices[n].flags for n in selection.chosen))
    assert "No subset flags every high-risk case" in selection_markdown(selection)


def test_coordinates_that_flag_nothing_are_not_chosen(tmp_path):
    """When no coordinate flags a single high-risk case, the best subset of size one flags
    nothing: nothing is chosen, and the written contract has no clause (not the top-ranked
    coordinate that flags nothing)."""
    from sedcontract.analysis.selection import selected_contract
    from sedcontract.contracts.policy import AuditPolicy

    folder, data = calibration(tmp_path, {"late_onset": [0.1], "missed": [1.0]})
    report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
    labels = read_labels(folder / "labels.tsv", data.ref.clips)
    selection = select(report, labels, RiskOrder(("late_onset", "missed"),
                                                 frozenset({"late_onset"})))
    assert not any(choice.flags for choice in selection.choices.values())
    assert selection.chosen == () and not selection.perfect
    assert len(selection.unflagged) == sum(p == "late_onset" for _, p, _ in labels) == 6
    text = selected_contract(AuditPolicy().parsed, selection)
    assert parse_contract(text).clauses == ()
    assert "risk order): none;" in selection_markdown(selection)


def test_select_command_writes_a_contract_that_audits(tmp_path, capsys):
    folder, _ = calibration(tmp_path, {"fragmentation": [2, 3], "late_onset": [0.1],
                                       "missed": [1.0]})
    risk = tmp_path / "risk.yaml"
    risk.write_text("# most harmful first\norder: [missed, fragmentation, late_onset]\n"
                    "high: 2\n")
    out, table = tmp_path / "selected.contract", tmp_path / "why.md"
    assert main(["select", "--calibration", str(folder), "--risk-order", str(risk),
                 "--out", str(out), "--table", str(table)]) == 0
    printed = capsys.readouterr().out
    assert "Perfect separation with 2 coordinate(s): missed, fragmentation." in printed
    assert table.read_text() == printed
    contract = parse_contract(out.read_text())
    assert [c.name for c in contract.clauses] == ["missed", "fragmentation"]
    assert not any(c.diagnostic for c in contract.clauses)
    assert main(["audit", "--ref", str(folder / "ref.tsv"), "--pred", str(folder / "pred.tsv"),
                 "--durations", str(folder / "durations.tsv"), "--contract", str(out)]) == 0
    assert "| fragmentation |" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "message", "row"), [
    ("order: [missed, laziness]\nhigh: 1\n", "unknown pathology or coordinate 'laziness'", 1),
    ("order:\n  - missed\n  - laziness\nhigh: 1\n", "unknown pathology or coordinate", 3),
    ("order: [missed, false]\nhigh: 2\n", "at least one kind on each side", 2),
    ("order: [missed, false]\nhigh: [onset]\n", "'onset' is not in 'order'", 2),
    ("order: [missed, missed]\nhigh: 1\n", "listed twice", 1),
    ("order: [missed, false]\n", "a risk order has 'order", None),
    ("order: missed\nhigh: 1\n", "must be a non-empty list", 1),
    ("order: [missed, false]\nhigh: 1\norder: [false, missed]\n",
     r"'order' is given twice \(first at line 1\)", 3),
    ("order: [missed, false]\nhigh: 1\nhihg: 1\n", "unknown key 'hihg'", 3),
])
def test_bad_risk_orders_name_the_file_and_line(tmp_path, text, message, row):
    path = tmp_path / "risk.yaml"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=message) as info:
        read_risk_order(path, ["missed", "false", "onset", "fragmentation"])
    assert info.value.path == str(path) and info.value.row == row


def test_risk_orders_and_labels_that_are_not_utf8_or_too_deep_are_named(tmp_path):
    path = tmp_path / "risk.yaml"
    path.write_bytes(b"# kinds\norder: [missed, f\xe4lse]\nhigh: 1\n")
    with pytest.raises(TraceFormatError, match=r"not UTF-8 .*byte 25") as info:
        read_risk_order(path, ["missed", "false"])
    assert (info.value.path, info.value.row) == (str(path), 2)
    path.write_text("order: " + "[" * 5000 + "]" * 5000 + "\nhigh: 1\n")
    with pytest.raises(TraceFormatError, match="nested too deeply") as info:
        read_risk_order(path, ["missed", "false"])
    assert info.value.path == str(path)
    labels = tmp_path / "labels.tsv"
    labels.write_bytes(b"filename\tsource_clip\tpathology\tseverity\nr0.wav\tr0\tf\xe4lse\t1\n")
    with pytest.raises(TraceFormatError, match="not UTF-8") as info:
        read_labels(labels, ["r0"])
    assert info.value.path == str(labels)


def test_a_bare_false_in_the_risk_order_is_the_coordinate(tmp_path):
    path = tmp_path / "risk.yaml"
    path.write_text("order: [false, missed]\nhigh: [false]\n")
    risk = read_risk_order(path, ["missed", "false"])
    assert risk.order == ("false", "missed") and risk.high == {"false"}


def test_calibration_problems_are_named(tmp_path, capsys):
    folder, data = calibration(tmp_path, {"missed": [1.0], "late_onset": [0.1]})
    labels = (folder / "labels.tsv").read_text().splitlines()
    (folder / "labels.tsv").write_text("\n".join([*labels, "ghost.wav\tr0\tmissed\t1"]) + "\n")
    with pytest.raises(TraceFormatError, match="'ghost' is labelled but not") as info:
        read_labels(folder / "labels.tsv", read_events(folder / "ref.tsv").clips)
    assert info.value.row == len(labels) + 1
    (folder / "durations.tsv").unlink()
    risk = tmp_path / "risk.yaml"
    risk.write_text("order: [missed, late_onset]\nhigh: 1\n")
    assert main(["select", "--calibration", str(folder), "--risk-order", str(risk),
                 "--out", str(tmp_path / "x.contract")]) == 2
    assert "lacks" in capsys.readouterr().err and not (tmp_path / "x.contract").exists()
    with pytest.raises(SedContractError, match="both sides of the cut"):
        report = sedcontract.audit(data.ref, data.pred, durations=data.durations)
        select(report, [(c, "missed", "1") for c in data.ref.clips[:2]],
               RiskOrder(("missed", "late_onset"), frozenset({"missed"})))
