"""``ContractMonitor``: the torchmetrics face of the exact monitor gives the report that
``audit`` gives on the same events, counts a clip once however many processes saw it, and
covers only the clips it saw; it checks the contract once and takes the layout of a clip's
counts from ``count_layout``, a function of the policy and classes that agrees with ``audit``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

import sedcontract.contracts.policy as policy_module
from sedcontract.contracts.parser import parse_contract
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings, audit, to_json
from sedcontract.guard.pipeline import clip_counts, count_layout, empty_report, prepare_contract
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.lightning.module import guard_metrics
from sedcontract.scores.segment_roc import AurocSettings, segment_auroc
from sedcontract.traces import MODES, EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.score_files import ScoreTable
from tests.helpers.torch_scores import CLASSES, CLIPS, HostCopies, random_scores

HOP = 0.02
DURATIONS = {"a": 2.0, "b": 2.0, "c": 1.5, "d": 2.0, "e": 2.0}  # c is shorter


def reference() -> EventList:
    return EventList.from_rows([
        ("a", 0.10, 0.70, "speech"), ("a", 1.00, 1.60, "tone"),
        ("b", 0.30, 1.90, "speech"),
        ("c", 0.00, 0.40, "tone"), ("c", 0.90, 1.50, "speech"),
        ("e", 0.52, 0.98, "tone"),
    ], clips=CLIPS)


def events_by_hand(scores: torch.Tensor, threshold: float = 0.5) -> EventList:
    """Frame-by-frame reading of thresholded scores, each clip cut at its own length."""
    rows = []
    for i, clip in enumerate(CLIPS):
        frames = round(DURATIONS[clip] / HOP)
        for c, label in enumerate(CLASSES):
            start = None
            for t in range(frames + 1):
                on = t < frames and float(scores[i, c, t]) > threshold
                if on and start is None:
                    start = t
                elif not on and start is not None:
                    rows.append((clip, start * HOP, t * HOP, label))
                    start = None
    return EventList.from_rows(rows, clips=CLIPS)


def monitor(source: str = "", **settings) -> ContractMonitor:
    return ContractMonitor(reference(), DURATIONS, CLASSES,
                           AuditPolicy(hop=HOP, scores=ScoreSettings(), **settings),
                           source=source)


@pytest.mark.parametrize("seed", range(4))
def test_the_monitor_reports_what_audit_reports_on_the_same_events(seed):
    scores = random_scores(seed)
    m = monitor()
    m.update(scores[:2], CLIPS[:2])
    m.update(scores[2:], CLIPS[2:])
    got = m.compute()
    expected = audit(reference(), events_by_hand(scores), durations=DURATIONS, hop=HOP,
                     classes=CLASSES, decision=DecisionPolicy(), scores=ScoreSettings())
    assert got.clips == CLIPS
    assert to_json(got.report) == to_json(expected)


def test_a_clip_seen_by_two_processes_counts_once():
    scores = random_scores(7)
    single = monitor()
    single.update(scores, CLIPS)
    first, second = monitor(), monitor()
    first.update(scores[[0, 1, 2]], ["a", "b", "c"])
    first.update(scores[[2], :, :75], ["c"])    # seen twice by one process (c: 75 frames)
    second.update(scores[[3, 4, 0]], ["d", "e", "a"])  # the padded sampler repeats clip a
    first.merge_state(second)                    # what the sum reduction does across ranks
    assert first.seen.tolist() == [2, 1, 1, 1, 1]
    joined, alone = first.compute(), single.compute()
    assert to_json(joined.report) == to_json(alone.report)
    assert joined.auroc == alone.auroc  # each clip's segment runs kept once


@pytest.mark.parametrize("seed", range(3))
def test_the_monitor_auroc_is_what_scores_computes_on_the_same_tables(seed):
    """mAUC and mpAUC of the validation scores equal :func:`segment_auroc` (itself equal to
    sed_scores_eval's) on the same frames written as score tables, each clip on its own
    length; segments of 0.5 s, so a clip has several."""
    scores = random_scores(seed)
    settings = AurocSettings(segment_length=0.5, max_fpr=0.25)
    m = ContractMonitor(reference(), DURATIONS, CLASSES, AuditPolicy(hop=HOP), auroc=settings)
    m.update(scores[:3], CLIPS[:3])
    m.update(scores[3:], CLIPS[3:])
    got = m.compute().auroc
    tables = {}
    for i, clip in enumerate(CLIPS):
        n = round(DURATIONS[clip] / HOP)
        k = np.arange(n)
        tables[clip] = ScoreTable(k * HOP, (k + 1) * HOP, CLASSES,
                                  scores[i, :, :n].T.double().numpy(), k + 2)
    expected = segment_auroc(tables, reference(), DURATIONS, settings)
    assert got["mauc"] == pytest.approx(expected["mauc"], abs=1e-12)
    assert got["mpauc"] == pytest.approx(expected["mpauc"], abs=1e-12)
    for name in CLASSES:
        assert got["per_class"][name] == pytest.approx(expected["per_class"][name], abs=1e-12)
    metrics = guard_metrics(replace(m.compute().report, auroc=got))
    assert metrics["val/scores/mpauc"] == got["mpauc"]


def test_only_the_clips_seen_are_audited():
    scores = random_scores(1)
    m = monitor()
    m.update(scores[[1, 3]], ["b", "d"])
    got = m.compute()
    assert got.clips == ("b", "d") and got.report.traces["clips"] == 2
    ref_b_d = EventList.from_rows([r for r in reference().to_rows() if r[0] in "bd"],
                                  clips=("b", "d"))
    pred = EventList.from_rows([r for r in events_by_hand(scores).to_rows() if r[0] in "bd"],
                               clips=("b", "d"))
    expected = audit(ref_b_d, pred, durations={"b": 2.0, "d": 2.0}, hop=HOP, classes=CLASSES,
                     decision=DecisionPolicy(), scores=ScoreSettings())
    assert to_json(got.report) == to_json(expected)


def test_the_decision_policy_is_applied_and_recorded():
    scores = torch.zeros(len(CLIPS), len(CLASSES), 100)
    scores[0, 0, 10:40] = 0.9
    scores[0, 0, 60] = 0.9  # a one-frame spike: the median filter removes it
    m = monitor(decision=DecisionPolicy(threshold=0.5, median_filter=0.1),
                source="sigmoid of the activity logits")
    m.update(scores, CLIPS)
    report = m.compute().report
    assert report.policy["decision"] == ("sigmoid of the activity logits; active iff score > "
                                         "0.5, median filter 0.1 s")
    pred = m.decided(scores, CLIPS)
    assert pred.to_rows() == [("a", 10 * HOP, 40 * HOP, "speech")]


def test_bad_updates_are_refused():
    m = monitor()
    with pytest.raises(SedContractError, match="expected scores"):
        m.update(torch.zeros(2, 3, 100), ["a", "b"])
    with pytest.raises(SedContractError, match="not in the reference"):
        m.update(torch.zeros(1, 2, 100), ["zzz"])
    with pytest.raises(SedContractError, match="saw no clips"):
        monitor().compute()
    with pytest.raises(SedContractError, match="no duration"):
        ContractMonitor(reference(), {"a": 2.0}, CLASSES)


def test_the_median_filter_sees_each_clip_on_its_own_length():
    """Clip c (1.5 s, 75 frames) ends inside the padded state. A two-frame event at its end
    survives a 5-frame median filter that extends the clip's own last value (the filter's
    edge rule), but would vanish if the zero padding beyond the clip entered the window."""
    scores = torch.zeros(len(CLIPS), len(CLASSES), 100)
    scores[2, 0, 73:75] = 0.9
    m = monitor(decision=DecisionPolicy(threshold=0.5, median_filter=0.1))
    m.update(scores, CLIPS)
    pred = m.decided(scores, CLIPS)
    assert pred.to_rows() == [("c", 73 * HOP, 75 * HOP, "speech")]


# class-indexed atoms, a diagnostic, two matchings that pair clauses use and one that none
# uses, bounds from lets, windows and event expressions
OTHER = parse_contract("""
let eps = 100ms
let wide = 300ms
match near: ref ~ pred when abs(onset(ref) - onset(pred)) <= wide using greedy
match unused: ref ~ pred when overlaps using exact
match m: ref ~ pred when overlaps & same_class using exact
clause onset: on ref.onset require N[eps] pred.onset
clause speechy: on ref.active[speech] require P[40ms] pred.active[speech] | pred.active
diagnostic lag: each pair(near) require abs(offset(ref) - offset(pred)) <= 50ms
clause duration: each pair(m) require abs(dur(pred) - dur(ref)) <= max(eps, 0.2 * dur(ref))
clause missed: each ref require count(pred overlapping ref) >= 1
""")
POLICIES = {
    "standard": AuditPolicy(hop=HOP),
    "standard+scores": AuditPolicy(hop=HOP, scores=ScoreSettings()),
    "other": AuditPolicy(hop=HOP, contract=OTHER),
    "other+greedy+scores": AuditPolicy(hop=HOP, contract=OTHER, matching="greedy",
                                       scores=ScoreSettings()),
}


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("mode", ["both", *MODES])
def test_the_count_layout_is_what_audit_produces(name, mode):
    policy = POLICIES[name]
    report = audit(reference(), events_by_hand(random_scores(3)), policy, durations=DURATIONS,
                   classes=CLASSES, mode=mode)
    modes = MODES if mode == "both" else (mode,)
    assert list(count_layout(policy, CLASSES, modes).items()) == \
        [(k, v.shape[1]) for k, v in report.arrays().items()]
    # the structure without a run, filled with the audit's counts, is the audit's report
    rebuilt = empty_report(policy, CLASSES, modes).rebuild(CLIPS, report.arrays())
    assert to_json(replace(rebuilt, policy=report.policy)) == to_json(report)


@pytest.mark.parametrize("name", POLICIES)
def test_counts_with_a_contract_checked_once_are_the_audits(name):
    policy, pred = POLICIES[name], events_by_hand(random_scores(5))
    resolver = prepare_contract(policy, CLASSES)
    counts = clip_counts(reference(), pred, policy, resolver, durations=DURATIONS,
                         classes=CLASSES)
    expected = audit(reference(), pred, policy, durations=DURATIONS, classes=CLASSES)
    assert counts.keys() == expected.arrays().keys()
    assert all((counts[k] == v).all() for k, v in expected.arrays().items())
    report = empty_report(policy, CLASSES, conversions=list(resolver.conversions.values()))
    assert to_json(report.rebuild(CLIPS, counts)) == to_json(expected)


@pytest.mark.parametrize("name", POLICIES)
def test_the_monitor_of_any_contract_reports_what_audit_reports(name, monkeypatch):
    scores = random_scores(2)
    m = ContractMonitor(reference(), DURATIONS, CLASSES, POLICIES[name])
    checks, prepare = [], policy_module.prepare
    monkeypatch.setattr(policy_module, "prepare",
                        lambda *a, **k: checks.append(1) or prepare(*a, **k))
    for first in range(0, len(CLIPS), 2):
        m.update(scores[first:first + 2], CLIPS[first:first + 2])
    assert not checks  # the contract was checked when the monitor was made, not per batch
    expected = audit(reference(), events_by_hand(scores), POLICIES[name], durations=DURATIONS,
                     classes=CLASSES, decision=DecisionPolicy())
    assert to_json(m.compute().report) == to_json(expected)


def test_window_scores_are_merged_into_file_scores_with_one_host_copy():
    """Two overlapping windows of each file (0–1.2 s and 0.8–end) with the file's scores give
    the file's report, and the batch's scores go to the host once."""
    scores = random_scores(4)
    windows, window_scores, ids = {}, [], []
    for i, clip in enumerate(CLIPS):
        frames = round(DURATIONS[clip] / HOP)
        for start, end in ((0, 60), (40, frames)):
            wid = f"{clip}-{start}"
            windows[wid] = (clip, start * HOP, end * HOP)
            piece = torch.zeros(len(CLASSES), 100)
            piece[:, :end - start] = scores[i, :, start:end]
            window_scores.append(piece)
            ids.append(wid)
    m = ContractMonitor(reference(), DURATIONS, CLASSES, AuditPolicy(hop=HOP), windows=windows)
    with HostCopies() as copies:
        m.update(torch.stack(window_scores), ids)
    assert copies.copies == 1
    whole = ContractMonitor(reference(), DURATIONS, CLASSES, AuditPolicy(hop=HOP))
    whole.update(scores, CLIPS)
    assert to_json(m.compute().report) == to_json(whole.compute().report)
    assert m.predicted().to_rows() == whole.predicted().to_rows()
