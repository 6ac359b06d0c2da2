"""``ContractMonitor``: the torchmetrics face of the exact monitor gives the report that
``audit`` gives on the same events, counts a clip once however many processes saw it, and
covers only the clips it saw."""

from __future__ import annotations

import pytest
import torch

from sedcontract.audit import AuditPolicy, ScoreSettings, audit, to_json
from sedcontract.errors import SedContractError
from sedcontract.lightning.metric import ContractMonitor
from sedcontract.traces import EventList
from sedcontract.traces.scores import DecisionPolicy

HOP = 0.02
CLASSES = ("speech", "tone")
CLIPS = ("a", "b", "c", "d", "e")
DURATIONS = {"a": 2.0, "b": 2.0, "c": 1.5, "d": 2.0, "e": 2.0}  # c is shorter


def reference() -> EventList:
    return EventList.from_rows([
        ("a", 0.10, 0.70, "speech"), ("a", 1.00, 1.60, "tone"),
        ("b", 0.30, 1.90, "speech"),
        ("c", 0.00, 0.40, "tone"), ("c", 0.90, 1.50, "speech"),
        ("e", 0.52, 0.98, "tone"),
    ], clips=CLIPS)


def random_scores(seed: int) -> torch.Tensor:
    """Smooth random frame scores ``[clips, classes, 100]`` that cross 0.5 a few times."""
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(len(CLIPS), len(CLASSES), 100, generator=g)
    kernel = torch.ones(1, 1, 9) / 9
    smooth = torch.nn.functional.conv1d(noise.reshape(-1, 1, 100), kernel, padding=4)
    return torch.sigmoid(3 * smooth.reshape(len(CLIPS), len(CLASSES), 100))


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
    assert to_json(first.compute().report) == to_json(single.compute().report)


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
