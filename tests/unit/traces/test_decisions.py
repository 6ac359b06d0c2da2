"""Per-class post-processing: thresholds, median filters and hysteresis class by class, given on
the command line (``--threshold Speech=0.3,Dog=0.5``) or as a YAML decision file, read the same
way by ``audit``, ``scores``, the Hydra policy (``evaluate.py``, training validation) and the
validation monitor; each class decided exactly as the one-class policy decides it."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.guard import AuditPolicy
from sedcontract.traces.decision import (
    ClassDecision,
    DecisionPolicy,
    decide,
    decision_yaml,
    read_decision,
)
from tests.helpers.real_dcase import DURATIONS, REF

CLASSES = ("Alarm", "Dog", "Speech")


def smooth_scores(seed: int, frames: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(frames + 20, len(CLASSES)))
    kernel = np.ones(9) / 9
    smooth = np.stack([np.convolve(noise[:, c], kernel, mode="valid")[:frames]
                       for c in range(len(CLASSES))], axis=1)
    return 1 / (1 + np.exp(-3 * smooth))


@pytest.mark.parametrize("seed", range(5))
def test_each_class_is_decided_as_its_own_one_class_policy(seed):
    """A per-class decision equals, column by column, the decision of a policy holding that
    class's settings for every class (the oracle is the one-class rule, tested elsewhere)."""
    scores = smooth_scores(seed)
    policy = DecisionPolicy(threshold=0.55, median_filter=0.1, classes={
        "Dog": {"threshold": 0.4, "median_filter": 0.3, "low": 0.3},
        "Speech": {"median_filter": 0.0, "low": 0.5}})
    got = decide(scores, policy, 0.02, CLASSES)
    for c, name in enumerate(CLASSES):
        threshold, median_filter, low = policy.settings_of(name)
        alone = DecisionPolicy(threshold=threshold, median_filter=median_filter, low=low)
        np.testing.assert_array_equal(got[:, c], decide(scores, alone, 0.02)[:, c], name)
    assert policy.settings_of("Alarm") == (0.55, 0.1, None)
    assert policy.settings_of("Speech") == (0.55, 0.0, 0.5)


def test_the_policy_says_what_it_does_and_round_trips_through_its_file(tmp_path):
    policy = DecisionPolicy(threshold=0.5, median_filter=0.2, classes={
        "Speech": ClassDecision(threshold=0.3, median_filter=0.45), "Dog": {"low": 0.2}})
    assert policy.describe() == (
        "active iff score > 0.5, median filter 0.2 s; per class: Dog active from score > 0.5 "
        "while score >= 0.2 (hysteresis), median filter 0.2 s, Speech active iff score > 0.3, "
        "median filter 0.45 s")
    path = tmp_path / "decision.yaml"
    path.write_text(decision_yaml(policy, "tuned on nothing"))
    assert path.read_text().startswith("# tuned on nothing\nthreshold: 0.5\nmedian_filter: "
                                       "200ms\n")
    assert read_decision(path) == policy
    assert DecisionPolicy().classes == () and not DecisionPolicy().per_class
    nearest = replace(policy, median_edge="nearest")  # another edge rule: said and kept
    assert nearest.describe().endswith("; median filters with nearest edges")
    path.write_text(decision_yaml(nearest))
    assert "median_edge: nearest\n" in path.read_text() and read_decision(path) == nearest
    assert "median_edge" not in decision_yaml(policy)  # the default is not written
    with pytest.raises(TraceFormatError, match="unknown median filter edge rule 'edge'; "
                                               "choose one of reflect, nearest"):
        DecisionPolicy(median_edge="edge")


@pytest.mark.parametrize(("text", "message"), [
    ("threshold: 0.5\nclasses:\n  Dog: {threshold: 0.4, low: 0.6}\n",
     "hysteresis threshold of class 'Dog' \\(low, 0.6\\) must not exceed the decision "
     "threshold \\(0.4\\)"),
    ("threshold: 0.5\nclass: {}\n", "unknown decision setting\\(s\\) \\['class'\\]"),
    ("classes:\n  Dog: {treshold: 0.4}\n", "unknown decision setting\\(s\\) \\['treshold'\\] "
     "for class 'Dog'"),
    ("classes:\n  Dog: {median_filter: 450}\n", ""),  # seconds as a number: 450 s, accepted
    ("classes:\n  Dog: {median_filter: 45x}\n", "median filter of class 'Dog' '45x': unknown unit"),
    ("threshold: [0.5]\n", "decision threshold must be a finite number"),
    ("- 0.5\n", "a decision file maps threshold"),
    ("threshold: 0.5\n  bad: : :\n", "not a YAML decision file"),
])
def test_a_bad_decision_file_is_refused_naming_it(tmp_path, text, message):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    if not message:
        assert read_decision(path).settings_of("Dog")[1] == 450.0
        return
    with pytest.raises(TraceFormatError, match=message) as error:
        read_decision(path)
    assert error.value.path == str(path)


def test_a_class_the_scores_do_not_have_is_refused():
    policy = DecisionPolicy(classes={"Zebra": {"threshold": 0.2}})
    with pytest.raises(TraceFormatError, match="sets class 'Zebra', which the scores do not "
                                               "have"):
        decide(smooth_scores(0), policy, 0.02, CLASSES)
    with pytest.raises(TraceFormatError, match="needs the score columns' class names"):
        decide(smooth_scores(0), policy, 0.02)


def test_a_hydra_policy_reads_per_class_settings_and_decision_files(tmp_path):
    """``contract.decision.classes`` in the config, or ``contract.decision.file`` (which
    replaces the block's settings): what evaluate.py and training validation decide by."""
    inline = AuditPolicy.from_config(decision={"threshold": 0.5, "median_filter": "200ms",
                                               "low": None, "classes": {"Dog": {
                                                   "threshold": 0.3, "median_filter": "450ms"}},
                                               "file": None})
    assert inline.decision.settings_of("Dog") == (0.3, 0.45, None)
    path = tmp_path / "tuned.yaml"
    path.write_text(decision_yaml(inline.decision))
    filed = AuditPolicy.from_config(decision={"threshold": 0.5, "median_filter": 0.0,
                                              "low": None, "classes": {}, "file": str(path)})
    assert filed.decision == inline.decision


def cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_per_class_options_and_the_same_decision_file_give_identical_reports(
        teacher_scores, tmp_path, capsys):
    """On the real DESED files (300 of the clips, every class among them): ``--threshold``
    and ``--median-filter`` per class on the command line, and a decision file saying the
    same, give the same report byte for byte (audit and scores); the policy section names
    every class's rule, and the per-class thresholds change the scores from the global
    ones."""
    lines = DURATIONS.read_text().splitlines()
    kept = sorted(lines[1:])[:300]
    names = {line.split("\t")[0] for line in kept}
    (tmp_path / "durations.tsv").write_text("\n".join([lines[0], *kept]) + "\n")
    ref = REF.read_text().splitlines()
    (tmp_path / "ref.tsv").write_text("\n".join(
        [ref[0], *(r for r in ref[1:] if r.split("\t")[0] in names)]) + "\n")
    base = ["--ref", str(tmp_path / "ref.tsv"), "--durations", str(tmp_path / "durations.tsv"),
            "--skip-unlisted", "--pred-scores", str(teacher_scores)]
    options = ["--threshold", "0.5,Speech=0.3,Dog=0.6", "--median-filter",
               "0,Dog=448ms,Frying=320ms", "--hysteresis-low", "Cat=0.2", "--median-edge",
               "nearest"]
    decision = tmp_path / "decision.yaml"
    decision.write_text("threshold: 0.5\nmedian_filter: 0\nmedian_edge: nearest\nclasses:\n"
                        "  Speech: {threshold: 0.3}\n  Dog: {threshold: 0.6, median_filter: "
                        "448ms}\n  Frying: {median_filter: 0.32}\n  Cat: {low: 0.2}\n")
    for command in (["audit", *base, "--format", "json", "--with-scores"],
                    ["scores", *base, "--format", "json"]):
        code, by_options, err = cli([*command, *options], capsys)
        assert code == 0, err
        code, by_file, err = cli([*command, "--decision", str(decision)], capsys)
        assert code == 0, err
        assert by_options == by_file
        assert len(json.loads(by_file)["scores"]["event"]["per_class"]) == 10
        described = json.loads(by_file)["policy"]["decision"]
        assert "per class: Cat active from score > 0.5 while score >= 0.2 (hysteresis)" in \
            described and "Speech active iff score > 0.3" in described
        code, global_one, _ = cli(command, capsys)
        assert json.loads(global_one)["scores"]["event"] != json.loads(by_file)["scores"]["event"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--threshold", "0.45,0.2"], "gives two values without a class"),
    (["--median-filter", "0.45"], "'0.45' has no unit"),
    (["--threshold", "=0.3"], "names no class"),
    (["--threshold", "Dog=0.3,Dog=0.4"], "class 'Dog' is given twice"),
    (["--threshold", "Zebra=0.3"], "sets class 'Zebra', which the scores do not have"),
    (["--threshold", "0.4", "--decision", "d.yaml"], "holds the whole decision"),
])
def test_bad_decision_options_are_refused(teacher_scores, tmp_path, capsys, extra, message):
    (tmp_path / "d.yaml").write_text("threshold: 0.5\n")
    extra = [str(tmp_path / a) if a == "d.yaml" else a for a in extra]
    code, _, err = cli(["scores", "--ref", str(REF), "--durations", str(DURATIONS),
                        "--pred-scores", str(teacher_scores), *extra], capsys)
    assert code == 2 and message in err, err


def test_decision_options_with_events_are_refused(capsys):
    code, _, err = cli(["scores", "--ref", str(REF), "--pred", str(REF),
                        "--threshold", "Dog=0.3"], capsys)
    assert code == 2
    assert "--threshold decide how score files (--pred-scores) become events" in err


def test_fscore_thresholds_per_class_are_a_per_class_policy():
    """``fscore(…, threshold={class: t})`` decides by the same per-class policy; a class the
    mapping leaves out is refused, extra names are ignored (as sed_scores_eval ignores
    them)."""
    from sedcontract.scores import collar_based
    from sedcontract.traces.score_files import ScoreTable

    scores = smooth_scores(3, 200)
    k = np.arange(200)
    table = ScoreTable(k * 0.05, (k + 1) * 0.05, CLASSES, scores, k + 2)
    truth = {"x": [(1.0, 3.0, "Dog"), (4.0, 6.0, "Speech"), (7.0, 8.0, "Alarm")]}
    collars = {"onset_collar": 0.2, "offset_collar": 0.2}
    mapping = {"Alarm": 0.5, "Dog": 0.4, "Speech": 0.7, "Other": 0.1}
    f, *_ = collar_based.fscore({"x": table}, truth, mapping, **collars)
    with pytest.raises(SedContractError, match="no threshold for class\\(es\\) Speech"):
        collar_based.fscore({"x": table}, truth, {"Alarm": 0.5, "Dog": 0.4}, **collars)
    one = {name: collar_based.fscore({"x": table}, truth, t, **collars)[0][name]
           for name, t in mapping.items() if name != "Other"}
    assert {name: f[name] for name in CLASSES} == pytest.approx(one, nan_ok=True)


def test_a_class_can_turn_the_policys_hysteresis_off(tmp_path):
    """``low: off`` for a class (YAML's bare off reads as false, also taken) decides it by
    its threshold alone where the policy has hysteresis; the file round-trips."""
    path = tmp_path / "d.yaml"
    path.write_text("threshold: 0.6\nlow: 0.3\nclasses:\n  Dog: {low: off}\n  Cat: {low: 'off'}\n")
    policy = read_decision(path)
    assert policy.settings_of("Dog") == policy.settings_of("Cat") == (0.6, 0.0, None)
    assert policy.settings_of("Speech") == (0.6, 0.0, 0.3)
    scores = smooth_scores(2)
    got = decide(scores, policy, 0.02, ("Dog", "Cat", "Speech"))
    np.testing.assert_array_equal(got[:, 0], scores[:, 0] > 0.6)
    path.write_text(decision_yaml(policy))
    assert read_decision(path) == policy


def test_a_hydra_decision_file_is_not_mixed_with_other_settings(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("threshold: 0.4\n")
    with pytest.raises(SedContractError, match=r"contract\.decision\.file holds the whole "
                                               r"decision: give it or contract\.decision\."
                                               r"threshold, not both"):
        AuditPolicy.from_config(decision={"threshold": 0.3, "median_filter": 0.0, "low": None,
                                          "classes": {}, "file": str(path)})


def test_declared_classes_keep_their_own_settings_and_a_name_not_in_the_scores_is_refused():
    """Declaring some classes (``--classes``) keeps the decision's settings of the others out
    of the way; a class the scores do not have at all is still refused."""
    from sedcontract.traces import EventList
    from sedcontract.traces.given import detections, score_source
    from sedcontract.traces.score_files import ScoreTable

    scores = smooth_scores(4, 100)
    k = np.arange(100)
    tables = {"x": ScoreTable(k * 0.02, (k + 1) * 0.02, CLASSES, scores, k + 2)}
    ref = EventList.from_rows([("x", 0.1, 0.5, "Dog")], clips=("x",))
    source = score_source(tables, ref.clips)
    policy = DecisionPolicy(classes={"Speech": {"threshold": 0.9}, "Dog": {"threshold": 0.4}})
    events = detections(source, ref, policy, "x", declared=["Dog"])
    assert set(events.label.tolist()) <= {"Dog"}
    alone = detections(source, ref, DecisionPolicy(threshold=0.4), "x", declared=["Dog"])
    assert events.to_rows() == alone.to_rows()
    with pytest.raises(TraceFormatError, match="sets class 'Zebra'"):
        detections(source, ref, DecisionPolicy(classes={"Zebra": {"threshold": 0.2}}), "x",
                   declared=["Dog"])


def test_the_median_filter_reflects_at_the_edge_rounds_its_length_and_may_span_the_clip():
    """Blind spots a planted change survived: the edge rule (DESED_task's, scipy's default
    ``reflect``, unless another is asked: ``nearest`` repeats the edge), the length in frames
    rounded to the nearest frame (not floored), and a filter exactly as long as the clip
    (allowed; one frame longer is refused)."""
    from sedcontract.traces.decision import filter_frames, filtered

    first = np.array([1.0, 0, 0, 0, 0, 0, 0])[:, None]  # 5 frames: reflect [0 1 | 1 0 0] -> 0
    assert filtered(first, np.array([0.05]), 0.01)[0, 0] == 0.0
    assert filtered(first, np.array([0.05]), 0.01, "nearest")[0, 0] == 1.0  # [1 1 | 1 0 0]
    assert filtered(first[::-1], np.array([0.05]), 0.01, "nearest")[-1, 0] == 1.0
    edge = np.array([1.0, 1.0, 0, 0, 0, 0, 0])[:, None]  # reflect [1 1 | 1 1 0] -> 1
    assert filtered(edge, np.array([0.05]), 0.01)[0, 0] == 1.0
    assert filtered(edge, np.array([0.05]), 0.01, "constant")[0, 0] == 0.0  # [0 0 | 1 1 0]
    assert filter_frames(0.029, 0.01, 100) == 3  # 2.9 frames: rounded, not floored to 2
    assert filter_frames(0.024, 0.01, 100) == 2 and filter_frames(0.0, 0.01, 5) == 1
    assert filter_frames(0.07, 0.01, 7) == 7  # exactly the clip
    assert filtered(first, np.array([0.07]), 0.01)[:, 0].tolist() == [0.0] * 7
    with pytest.raises(TraceFormatError, match=r"8 frames of 0\.01 s, longer than the clip"):
        filter_frames(0.08, 0.01, 7)


def test_the_default_median_filter_is_desed_tasks_class_wise_filter_on_real_scores(
        teacher_points):
    """DESED_task's ``ClassWiseMedianFilter`` (scipy's ``median_filter`` on each class column,
    a window of its own length in frames, scipy's default edges) with the recipe's lengths, on
    the DCASE baseline's own frame scores of DESED validation: this project's decision, given
    each length in seconds (frames × 64 ms), filters every score alike, and thresholds them
    as the recipe does (``score > 0.5``). ``nearest`` edges, the old rule, differ."""
    from scipy.ndimage import median_filter

    from sedcontract.traces.decision import decide
    from tests.helpers.real_dcase import CLASSES, HOP, implied_scores

    lengths = [3, 9, 9, 5, 5, 5, 9, 7, 11, 9]  # net.median_filter, in the classes' order
    policy = DecisionPolicy(classes={c: {"median_filter": n * HOP}
                                     for c, n in zip(CLASSES, lengths, strict=True)})
    differs = 0
    for scores in list(implied_scores(teacher_points).values())[:300]:
        desed = np.stack([median_filter(scores[:, c][:, None], (lengths[c], 1))[:, 0]
                          for c in range(scores.shape[1])], -1)
        ours = decide(scores, policy, HOP, CLASSES)
        np.testing.assert_array_equal(ours, desed > 0.5)
        nearest = decide(scores, replace(policy, median_edge="nearest"), HOP, CLASSES)
        differs += int((nearest != ours).any())
    assert differs > 0  # the edge rule matters on these scores
