"""Standard scores agree with sed_eval on random event lists (no value exactly on a collar or
segment boundary): collar event F1 / error rate (greedy and optimal) and segment F1 / error
rate, micro, per class and macro, to 1e-9."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from sedcontract.audit.metrics import event_metrics, segment_metrics
from sedcontract.traces import EventList

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # dcase_util imports pkg_resources
    sed_eval = pytest.importorskip("sed_eval")

CLASSES = ["burst", "speech", "tone"]


def random_lists(seed: int, clips: int = 12) -> tuple[EventList, EventList, dict[str, float]]:
    rng = np.random.default_rng(seed)
    ref, pred = [], []
    for c in range(clips):
        clip = f"clip{c}"
        for _ in range(rng.integers(0, 9)):
            on = rng.uniform(0, 9)
            off = min(10.0, on + rng.uniform(0.05, 2.0))
            label = CLASSES[rng.integers(3)]
            ref.append((clip, on, off, label))
            if rng.random() < 0.85:  # a detection near it, sometimes with another label
                p_on = max(0.0, on + rng.normal(0, 0.15))
                p_off = min(10.0, max(p_on + 0.01, off + rng.normal(0, 0.25)))
                p_label = label if rng.random() < 0.8 else CLASSES[rng.integers(3)]
                pred.append((clip, p_on, p_off, p_label))
        for _ in range(rng.integers(0, 3)):  # false alarms
            on = rng.uniform(0, 9.5)
            pred.append((clip, on, min(10.0, on + rng.uniform(0.05, 1.0)),
                         CLASSES[rng.integers(3)]))
    order = rng.permutation(len(pred))  # stored order matters for greedy matching
    pred = [pred[i] for i in order]
    clips_all = tuple(f"clip{c}" for c in range(clips))
    return (EventList.from_rows(ref, clips=clips_all), EventList.from_rows(pred),
            dict.fromkeys(clips_all, 10.0))


def as_dicts(events: EventList, clip: str) -> list[dict]:
    return [{"filename": clip, "event_onset": on, "event_offset": off, "event_label": label}
            for c, on, off, label in events.to_rows() if c == clip]


def reference_results(metric, ref: EventList, pred: EventList, durations, segment: bool):
    for clip in ref.clips:
        if segment:
            metric.evaluate(as_dicts(ref, clip), as_dicts(pred, clip),
                            evaluated_length_seconds=durations[clip])
        else:
            metric.evaluate(as_dicts(ref, clip), as_dicts(pred, clip))
    return metric.results()


def close(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or abs(ours - theirs) <= 1e-9


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("matching", ["optimal", "greedy"])
def test_collar_event_scores_equal_sed_eval(seed, matching):
    ref, pred, durations = random_lists(seed)
    ours = event_metrics(ref, pred, classes=CLASSES, t_collar=0.2, percentage_of_length=0.2,
                         matching=matching)
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=CLASSES, t_collar=0.2, percentage_of_length=0.2,
        event_matching_type=matching, empty_system_output_handling="zero_score"),
        ref, pred, durations, segment=False)
    assert close(ours.overall.f1, theirs["overall"]["f_measure"]["f_measure"])
    assert close(ours.error_rate, theirs["overall"]["error_rate"]["error_rate"])
    for c in CLASSES:
        wise = theirs["class_wise"][c]
        assert close(ours.per_class[c].f1, wise["f_measure"]["f_measure"]), c
        assert close(ours.per_class[c].error_rate, wise["error_rate"]["error_rate"]), c
    assert close(ours.macro("f1")[0], theirs["class_wise_average"]["f_measure"]["f_measure"])
    assert close(ours.macro("error_rate")[0],
                 theirs["class_wise_average"]["error_rate"]["error_rate"])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("resolution", [1.0, 0.5])
def test_segment_scores_equal_sed_eval(seed, resolution):
    ref, pred, durations = random_lists(seed)
    ours = segment_metrics(ref, pred, classes=CLASSES, time_resolution=resolution,
                           durations=durations)
    theirs = reference_results(sed_eval.sound_event.SegmentBasedMetrics(
        event_label_list=CLASSES, time_resolution=resolution), ref, pred, durations,
        segment=True)
    assert close(ours.overall.f1, theirs["overall"]["f_measure"]["f_measure"])
    assert close(ours.error_rate, theirs["overall"]["error_rate"]["error_rate"])
    for c in CLASSES:
        wise = theirs["class_wise"][c]
        assert close(ours.per_class[c].f1, wise["f_measure"]["f_measure"]), c
        assert close(ours.per_class[c].error_rate, wise["error_rate"]["error_rate"]), c
    assert close(ours.macro("f1")[0], theirs["class_wise_average"]["f_measure"]["f_measure"])


def test_declared_difference_float_segment_boundaries():
    """sed_eval computes floor(0.3 / 0.1) = 2 in float64, so an event starting at 0.3 s also
    marks segment [0.2, 0.3); times compared in microseconds do not."""
    ref = EventList.from_rows([("a", 0.3, 0.5, "tone")])
    pred = EventList.from_rows([("a", 0.2, 0.3, "tone")])
    ours = segment_metrics(ref, pred, classes=["tone"], time_resolution=0.1,
                           durations={"a": 1.0})
    assert ours.overall.tp == 0 and ours.overall.ref == 2
    theirs = reference_results(sed_eval.sound_event.SegmentBasedMetrics(
        event_label_list=["tone"], time_resolution=0.1), ref, pred, {"a": 1.0}, segment=True)
    assert theirs["overall"]["f_measure"]["f_measure"] > 0  # sed_eval counts a hit


def test_declared_difference_no_reference_is_nan_not_huge():
    """With no reference events sed_eval divides by machine epsilon; we report NaN."""
    ref = EventList.from_rows([], clips=("a",))
    pred = EventList.from_rows([("a", 0.2, 0.3, "tone")])
    ours = event_metrics(ref, pred, classes=["tone"])
    assert math.isnan(ours.error_rate) and math.isnan(ours.overall.f1)
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=["tone"], empty_system_output_handling="zero_score"), ref, pred,
        {"a": 1.0}, segment=False)
    assert theirs["overall"]["error_rate"]["error_rate"] > 1e6
