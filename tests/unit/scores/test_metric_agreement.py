"""Standard scores agree with sed_eval on random event lists (no value exactly on a collar or
segment boundary): collar event F1 / error rate (greedy and optimal) and segment F1 / error
rate, micro, per class and macro, to 1e-9."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from sedcontract.scores.collar_based import event_metrics
from sedcontract.scores.intersection_based import intersection_metrics
from sedcontract.scores.segment_based import segment_metrics
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


def assert_same_scores(ours, theirs) -> None:
    """F1 and error rate: overall, per class and macro, to 1e-9."""
    assert close(ours.overall.f1, theirs["overall"]["f_measure"]["f_measure"])
    assert close(ours.error_rate, theirs["overall"]["error_rate"]["error_rate"])
    for c in CLASSES:
        wise = theirs["class_wise"][c]
        assert close(ours.per_class[c].f1, wise["f_measure"]["f_measure"]), c
        assert close(ours.per_class[c].error_rate, wise["error_rate"]["error_rate"]), c
    average = theirs["class_wise_average"]
    assert close(ours.macro("f1")[0], average["f_measure"]["f_measure"])
    assert close(ours.macro("error_rate")[0], average["error_rate"]["error_rate"])


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
    assert_same_scores(ours, theirs)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("resolution", [1.0, 0.5])
def test_segment_scores_equal_sed_eval(seed, resolution):
    ref, pred, durations = random_lists(seed)
    ours = segment_metrics(ref, pred, classes=CLASSES, time_resolution=resolution,
                           durations=durations)
    theirs = reference_results(sed_eval.sound_event.SegmentBasedMetrics(
        event_label_list=CLASSES, time_resolution=resolution), ref, pred, durations,
        segment=True)
    assert_same_scores(ours, theirs)


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


def disjoint_lists(seed: int, clips: int = 10) -> tuple[EventList, EventList, dict]:
    """Per class non-overlapping, non-touching events (sed_scores_eval's requirement)."""
    rng = np.random.default_rng(seed)
    ref, pred = [], []
    for c in range(clips):
        for label in CLASSES:
            t = rng.uniform(0.0, 0.5)
            while t < 8.5:
                length = rng.uniform(0.2, 1.5)
                ref.append((f"clip{c}", t, t + length, label))
                if rng.random() < 0.9:
                    a = t + rng.uniform(-0.4, 0.6) * length
                    b = t + length + rng.uniform(-0.6, 0.4) * length
                    if b - a > 0.05:
                        pred.append((f"clip{c}", max(a, 0.0), min(b, 10.0), label))
                t += length + rng.uniform(0.8, 2.0)
    # predictions of one class must not overlap either: keep each class's sorted, disjoint
    pred.sort(key=lambda e: (e[0], e[3], e[1]))
    kept: list[tuple] = []
    for event in pred:
        if kept and kept[-1][0] == event[0] and kept[-1][3] == event[3] \
                and event[1] <= kept[-1][2]:
            continue
        kept.append(event)
    names = tuple(f"clip{c}" for c in range(clips))
    return (EventList.from_rows(ref, clips=names), EventList.from_rows(kept),
            dict.fromkeys(names, 10.0))


def score_frames(pred: EventList, clip: str, duration: float, classes=tuple(CLASSES)):
    """Events as a sed_scores_eval score table: 1 inside a class's events, 0 elsewhere."""
    from sed_scores_eval.base_modules.scores import create_score_dataframe

    rows = [e for e in pred.to_rows() if e[0] == clip]
    times = np.unique([0.0, duration, *[e[1] for e in rows], *[e[2] for e in rows]])
    centres = (times[:-1] + times[1:]) / 2
    values = np.zeros((len(centres), len(classes)))
    for _, on, off, label in rows:
        values[(centres > on) & (centres < off), list(classes).index(label)] = 1.0
    return create_score_dataframe(values, times, classes)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("dtc", "gtc"), [(0.5, 0.5), (0.7, 0.7), (0.1, 0.3)])
def test_intersection_scores_equal_sed_scores_eval(seed, dtc, gtc):
    intersection_based = pytest.importorskip("sed_scores_eval.intersection_based")
    ref, pred, durations = disjoint_lists(seed)
    ours = intersection_metrics(ref, pred, classes=CLASSES, dtc_threshold=dtc,
                                gtc_threshold=gtc)
    scores = {clip: score_frames(pred, clip, durations[clip]) for clip in ref.clips}
    truth = {clip: [(on, off, label) for c, on, off, label in ref.to_rows() if c == clip]
             for clip in ref.clips}
    f, p, r, stats = intersection_based.fscore(scores, truth, 0.5, dtc_threshold=dtc,
                                               gtc_threshold=gtc)
    for c in CLASSES:
        assert abs(ours.per_class[c].f1 - f[c]) <= 1e-6, c
        assert abs(ours.per_class[c].precision - p[c]) <= 1e-6, c
        assert abs(ours.per_class[c].recall - r[c]) <= 1e-6, c
        assert (ours.per_class[c].tp, ours.per_class[c].sys - ours.per_class[c].tp) == (
            stats[c]["tps"], stats[c]["fps"])
    assert abs(ours.macro("f1")[0] - f["macro_average"]) <= 1e-6


def test_declared_difference_collar_ties_count_as_hits():
    """|0.9 − 0.7| is 0.20000000000000007 in float64, so sed_eval misses an onset exactly one
    collar away; compared in microseconds it is exactly 0.2 s and a hit (|Δ| <= t_collar)."""
    ref = EventList.from_rows([("a", 0.7, 2.0, "tone")])
    pred = EventList.from_rows([("a", 0.9, 2.0, "tone")])
    ours = event_metrics(ref, pred, classes=["tone"])
    assert ours.overall.tp == 1
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=["tone"], t_collar=0.2, percentage_of_length=0.2,
        empty_system_output_handling="zero_score"), ref, pred, {"a": 2.0}, segment=False)
    assert theirs["overall"]["f_measure"]["f_measure"] == 0.0
    assert event_metrics(ref, pred, classes=["tone"], time_comparison="sed_eval").overall.tp == 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("matching", ["optimal", "greedy"])
def test_the_sed_eval_rule_equals_sed_eval_on_exact_ties(seed, matching):
    """Times on a 64 ms grid against references in ms, shifted to lie exactly one collar (or
    exactly 20 % of the length) away: under time_comparison="sed_eval" the scores are
    sed_eval's to 1e-9, and the default rule counts more of these ties as hits."""
    rng = np.random.default_rng(seed)
    ref_rows, pred_rows, durations = [], [], {}
    for c in range(8):
        clip = f"c{c}"
        durations[clip] = 10.0
        for k in range(6):
            on = round(float(rng.integers(0, 140)) * 0.064, 3)
            length = round(float(rng.integers(5, 40)) * 0.064, 3)
            label = CLASSES[k % len(CLASSES)]
            ref_rows.append((clip, on, round(on + length, 3), label))
            shift = rng.choice([0.2, -0.2, 0.2 * length])
            p_on = max(0.0, on + 0.2 * rng.choice([1, -1]))
            p_off = max(p_on + 0.064, round(on + length, 3) + float(shift))
            pred_rows.append((clip, p_on, p_off, label))
    ref, pred = EventList.from_rows(ref_rows), EventList.from_rows(pred_rows)
    ours = event_metrics(ref, pred, classes=CLASSES, matching=matching,
                         time_comparison="sed_eval")
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=CLASSES, t_collar=0.2, percentage_of_length=0.2,
        event_matching_type=matching, empty_system_output_handling="zero_score"),
        ref, pred, durations, segment=False)
    assert_same_scores(ours, theirs)
    default = event_metrics(ref, pred, classes=CLASSES, matching=matching)
    assert default.overall.tp > ours.overall.tp  # the ties the two rules decide apart


# one reference and one prediction per clip, |Δ| one collar (0.2 s) apart in decimal but not
# in float64: 1.201 − 1.001 = 0.20000000000000018 (a miss for sed_eval, 200000 µs apart) and
# 0.2001245 − 0.0001245 = 0.2 (a hit for sed_eval, 200001 µs apart after rounding each time)
FLOAT_TIES = {  # clip: (reference, prediction, sed_eval hit)
    "later_out": ((1.001, 3.0), (1.201, 3.0), False),
    "earlier_out": ((1.201, 3.0), (1.001, 3.0), False),
    "later_in": ((0.0001245, 2.0), (0.2001245, 2.0), True),
    "earlier_in": ((0.2001245, 2.0), (0.0001245, 2.0), True),
}
OFFSET_TIES = {  # the same with offsets (references shorter than 1 s: the collar rules)
    "later_out": ((0.5, 1.001), (0.0, 1.201), False),
    "earlier_out": ((0.5, 1.201), (0.0, 1.001), False),
    "later_in": ((0.0, 0.0001245), (0.1, 0.2001245), True),
    "earlier_in": ((0.1, 0.2001245), (0.0, 0.0001245), True),
}


@pytest.mark.parametrize(("ties", "onset"), [(FLOAT_TIES, True), (OFFSET_TIES, False)])
def test_float_ties_one_collar_apart_are_decided_by_the_float_difference_under_sed_eval(
        ties, onset):
    """time_comparison="sed_eval" decides |Δ| = t_collar by float64 subtraction, as sed_eval:
    the candidate search must keep pairs 1 µs past the collar (a hit in float64) and the
    condition must drop 0.20000000000000018 (inside on the µs grid); either direction."""
    ref = EventList.from_rows([(c, *r, "tone") for c, (r, _, _) in ties.items()])
    pred = EventList.from_rows([(c, *p, "tone") for c, (_, p, _) in ties.items()])
    ours = event_metrics(ref, pred, classes=["tone"], evaluate_onset=onset,
                         time_comparison="sed_eval")
    assert dict(zip(ours.clips, ours.tp[:, 0].tolist(), strict=True)) == \
        {c: int(hit) for c, (_, _, hit) in ties.items()}
    for clip, (_, _, hit) in ties.items():
        theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
            event_label_list=["tone"], t_collar=0.2, percentage_of_length=0.2,
            evaluate_onset=onset, empty_system_output_handling="zero_score"),
            ref.select(clips=[clip]), pred.select(clips=[clip]), None, segment=False)
        assert theirs["overall"]["f_measure"]["f_measure"] == float(hit), clip
    assert ours.ties.tolist() == [1, 1, 1, 1]  # each pair is one the two rules decide apart
    default = event_metrics(ref, pred, classes=["tone"], evaluate_onset=onset)
    assert default.tp[:, 0].tolist() == [0 if hit else 1 for _, _, hit in ties.values()]


@pytest.mark.parametrize("base", [0.0, 3.6e3, 9.9e8])  # up to MAX_SECONDS
@pytest.mark.parametrize("onset", [True, False])
def test_the_float_rule_asked_only_near_a_collar_decides_as_asked_everywhere(
        monkeypatch, base, onset):
    """The float rule is asked only for pairs within NEAR_US of a limit: on boundaries a few
    microseconds to either side of every collar and 20 % tolerance, at times up to the
    largest allowed, the counts and ties equal those of asking it on every pair."""
    import sedcontract.scores.collar_based as collar_based

    rng = np.random.default_rng(int(base) % 1000 + onset)
    ref_rows, pred_rows = [], []
    for c in range(200):
        on = base + 1 + float(rng.uniform(0, 10))  # sub-µs: rounding matters
        length = float(rng.choice([0.3, 1.7, 2.5]))
        off = on + length
        delta = float(rng.choice([0.2, 0.2 * length])) + float(rng.uniform(-1.5e-6, 1.5e-6))
        sign = float(rng.choice([1, -1]))
        pred = (on + sign * delta, off) if onset else (on, off + sign * delta)
        ref_rows.append((f"c{c}", on, off, "tone"))
        pred_rows.append((f"c{c}", min(pred), max(pred), "tone"))
    ref, pred = EventList.from_rows(ref_rows), EventList.from_rows(pred_rows)
    for rule in ("sed_eval", "sed_scores_eval"):
        near = event_metrics(ref, pred, classes=["tone"], evaluate_onset=onset,
                             time_comparison=rule)
        monkeypatch.setattr(collar_based, "NEAR_US", math.inf)
        everywhere = event_metrics(ref, pred, classes=["tone"], evaluate_onset=onset,
                                   time_comparison=rule)
        monkeypatch.undo()
        assert near.tp.tolist() == everywhere.tp.tolist()
        assert near.ties.tolist() == everywhere.ties.tolist()
    assert int(near.ties.sum()) > 0 and 0 < int(near.tp.sum()) < len(ref)


def test_a_class_with_references_but_no_output_scores_zero_in_the_macro_mean():
    ref = EventList.from_rows([("a", 0.5, 1.5, "tone"), ("a", 2.0, 3.0, "burst")])
    pred = EventList.from_rows([("a", 0.5, 1.5, "tone")])
    ours = event_metrics(ref, pred, classes=["burst", "tone"])
    assert ours.per_class["burst"].f1 == 0.0
    assert ours.macro("f1") == (0.5, 2)
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=["burst", "tone"], empty_system_output_handling="zero_score"),
        ref, pred, {"a": 4.0}, segment=False)
    assert theirs["class_wise_average"]["f_measure"]["f_measure"] == 0.5


def test_intersection_merges_overlapping_detections_like_sed_scores_eval():
    intersection_based = pytest.importorskip("sed_scores_eval.intersection_based")
    ref = EventList.from_rows([("a", 0.0, 2.5, "tone")])
    pred = EventList.from_rows([("a", 0.0, 1.2, "tone"), ("a", 0.4, 1.6, "tone")])
    ours = intersection_metrics(ref, pred, classes=["tone"], dtc_threshold=0.5,
                                gtc_threshold=0.7)
    scores = {"a": score_frames(pred, "a", 3.0, classes=("tone",))}
    f, _, _, stats = intersection_based.fscore(scores, {"a": [(0.0, 2.5, "tone")]}, 0.5,
                                               dtc_threshold=0.5, gtc_threshold=0.7)
    assert ours.per_class["tone"].tp == stats["tone"]["tps"] == 0  # the union covers 1.6 s
    assert ours.per_class["tone"].f1 == f["tone"]
    blip = EventList.from_rows([("a", 1.0, 1.0, "tone")])
    assert intersection_metrics(blip, EventList.from_rows([]), classes=["tone"]).overall.tp == 0


def crowded_lists(seed: int, clips: int = 25) -> tuple[EventList, EventList]:
    """Many overlapping events of every class per clip, both files in shuffled order: many
    candidates per reference, so which maximum matching is chosen decides the substitutions."""
    rng = np.random.default_rng(seed)
    rows = {"ref": [], "pred": []}
    for c in range(clips):
        for side in rows:
            for _ in range(rng.integers(0, 14)):
                on = rng.uniform(0, 9)
                rows[side].append((f"clip{c}", on, min(10.0, on + rng.uniform(0.05, 1.5)),
                                   CLASSES[rng.integers(3)]))
    for side in rows:
        rng.shuffle(rows[side])
    clips_all = tuple(f"clip{c}" for c in range(clips))
    return EventList.from_rows(rows["ref"], clips=clips_all), EventList.from_rows(rows["pred"])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("matching", ["optimal", "greedy"])
@pytest.mark.parametrize("onset,offset", [(True, True), (True, False), (False, True)])
def test_collar_scores_of_crowded_clips_equal_sed_eval(seed, matching, onset, offset):
    """All clips are matched at once; sed_eval matches clip by clip: the same counts,
    substitutions included."""
    ref, pred = crowded_lists(seed)
    ours = event_metrics(ref, pred, classes=CLASSES, t_collar=0.5, percentage_of_length=0.2,
                         evaluate_onset=onset, evaluate_offset=offset, matching=matching)
    theirs = reference_results(sed_eval.sound_event.EventBasedMetrics(
        event_label_list=CLASSES, t_collar=0.5, percentage_of_length=0.2,
        evaluate_onset=onset, evaluate_offset=offset, event_matching_type=matching,
        empty_system_output_handling="zero_score"), ref, pred, None, segment=False)
    assert_same_scores(ours, theirs)


def test_offset_only_candidates_reach_a_fifth_of_long_references():
    """Offsets only, events long enough that 20 % of their length exceeds the 0.2 s collar:
    every pair here lies outside the collar but inside max(collar, 0.2 · length), one a hit
    and two substitutions, as in sed_eval."""
    ref = EventList.from_rows([("a", 1.0, 6.0, "x"), ("a", 7.0, 9.0, "y"),
                               ("b", 0.5, 8.5, "x")])
    pred = EventList.from_rows([("a", 1.0, 6.7, "x"), ("a", 7.9, 9.3, "x"),
                                ("b", 2.0, 7.1, "y")])
    for matching in ("optimal", "greedy"):
        ours = event_metrics(ref, pred, classes=["x", "y"], t_collar=0.2,
                             percentage_of_length=0.2, evaluate_onset=False,
                             evaluate_offset=True, matching=matching)
        metric = sed_eval.sound_event.EventBasedMetrics(
            event_label_list=["x", "y"], t_collar=0.2, percentage_of_length=0.2,
            evaluate_onset=False, evaluate_offset=True, event_matching_type=matching)
        reference_results(metric, ref, pred, None, segment=False)
        theirs = metric.overall
        assert (ours.overall.tp, ours.overall.subs) == (1, 2)
        assert (ours.overall.tp, ours.overall.subs, ours.overall.ref, ours.overall.sys) == \
            (theirs["Ntp"], theirs["Nsubs"], theirs["Nref"], theirs["Nsys"])


def test_the_last_partial_segment_is_scored_like_sed_eval():
    """A 2.5 s clip in 1 s segments has three segments, the last one half long; events that
    lie only in it count."""
    ref = EventList.from_rows([("a", 2.1, 2.4, "x"), ("a", 0.5, 1.2, "y"),
                               ("b", 3.6, 3.7, "y")])
    pred = EventList.from_rows([("a", 2.2, 2.5, "x"), ("a", 2.3, 2.5, "y"),
                                ("b", 3.2, 3.4, "y")])
    durations = {"a": 2.5, "b": 3.7}
    ours = segment_metrics(ref, pred, classes=["x", "y"], time_resolution=1.0,
                           durations=durations)
    metric = sed_eval.sound_event.SegmentBasedMetrics(event_label_list=["x", "y"],
                                                      time_resolution=1.0)
    reference_results(metric, ref, pred, durations, segment=True)
    theirs = metric.overall
    # x: segment 2 of a on both sides; y: a ref 0-1, pred 2; b ref 3, pred 3
    assert (ours.overall.tp, ours.overall.ref, ours.overall.sys) == (2, 4, 3)
    assert (ours.overall.tp, ours.overall.ref, ours.overall.sys) == \
        (theirs["Ntp"], theirs["Nref"], theirs["Nsys"])
    assert close(ours.error_rate, metric.results()["overall"]["error_rate"]["error_rate"])


def test_scores_do_not_depend_on_the_order_of_classes_or_clips():
    """Regression: intersection scores searched merged events (sorted by clip and label name)
    as if sorted by row, so declaring classes or clips in another order changed the counts."""
    ref, pred, _ = random_lists(3)
    reordered = EventList.from_rows(ref.to_rows(), clips=tuple(reversed(ref.clips)))
    for metric in (event_metrics, segment_metrics, intersection_metrics):
        base = metric(ref, pred, classes=CLASSES).per_class
        assert metric(ref, pred, classes=CLASSES[::-1]).per_class == base, metric.__name__
        assert metric(reordered, pred, classes=CLASSES).per_class == base, metric.__name__
