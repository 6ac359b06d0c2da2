"""Segment-based AUROC and partial AUROC (DCASE 2024's mAUC and mpAUC) against sed_scores_eval's
``segment_based.auroc`` on generated corpora, on a MAESTRO-shaped case through the command line
(soft references binarised as DCASE does, windows of long files merged) and on hand-computed
clips; the rules where sed_scores_eval's choice is arbitrary; memory that follows the frames,
not the duration."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import SedContractError
from sedcontract.scores import segment_based
from sedcontract.scores.psds.settings import ground_truth
from sedcontract.scores.segment_roc import (
    AurocSettings,
    clip_segments,
    corpus_auroc_counts,
    paired_auroc,
    segment_auroc,
)
from sedcontract.traces import EventList, read_durations, write_durations, write_events
from sedcontract.traces.score_files import ScoreTable, scores_tsv
from sedcontract.traces.windows import window_id, window_starts
from tests.helpers.desed_recipe import merged_truth
from tests.helpers.score_tables import corpus


def frames_of(tables):
    """The tables as sed_scores_eval's DataFrames."""
    from sed_scores_eval.base_modules.scores import create_score_dataframe

    return {clip: create_score_dataframe(t.scores, np.concatenate([t.onset, t.offset[-1:]]),
                                         list(t.classes)) for clip, t in tables.items()}


def sse_auroc(frames, truth, durations, segment_length, max_fpr):
    sse = pytest.importorskip("sed_scores_eval.segment_based")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its 0/0 for a class without positives
        return sse.auroc(frames, truth, durations, segment_length=segment_length,
                         max_fpr=max_fpr)


@pytest.mark.parametrize("seed", range(10))
def test_auroc_and_roc_equal_sed_scores_eval(seed):
    """Per class and mean, AUROC and partial AUROC to 1e-9, the ROC point for point, for
    continuous scores, scores on few levels (ties) and binary ones, segments of 1, 0.5 and
    0.25 s, durations longer or shorter than the scores, or none given."""
    levels = (None, 5, 1)[seed % 3]
    ref, tables, durations, _ = corpus(seed, levels=levels, hop=0.064 if seed % 2 else 0.04,
                                       frames=80)
    rng = np.random.default_rng(seed)
    durations = {c: round(d + float(rng.choice([0.0, 0.5, -0.7, 2.3])), 3)
                 for c, d in durations.items()}
    frames = frames_of(tables)
    for length in (1.0, 0.5, 0.25):
        for given in (durations, None):
            for max_fpr in (None, 0.1, 0.37):
                theirs, curves = sse_auroc(frames, ground_truth(ref), given, length, max_fpr)
                ours, our_curves = segment_based.auroc(frames, ref, given,
                                                       segment_length=length, max_fpr=max_fpr)
                assert set(ours) == set(theirs)
                for name, value in theirs.items():
                    assert ours[name] == pytest.approx(value, abs=1e-9), (length, max_fpr, name)
            for name, (tpr, fpr, thresholds, _) in curves.items():
                mine = our_curves[name]
                np.testing.assert_allclose(mine[0], tpr, atol=1e-12)
                np.testing.assert_allclose(mine[1], fpr, atol=1e-12)
                np.testing.assert_array_equal(mine[2], thresholds)


def hand_clip(duration: float = 4.5):
    """One clip, frames of 0.5 s up to 4 s; class a's reference touches segments 0, 1 and 2 of
    1 s; class b's an event that only touches segment 1's end."""
    a = [0.9, 0.1, 0.2, 0.8, 0.3, 0.3, 0.6, 0.0]
    b = [0.5] * 8
    k = np.arange(8)
    table = ScoreTable(k * 0.5, (k + 1) * 0.5, ("a", "b"), np.array([a, b]).T, k + 2)
    ref = EventList.from_rows([("x", 0.5, 1.5, "a"), ("x", 2.2, 2.4, "a"), ("x", 1.5, 2.0, "b")],
                              clips=("x",))
    return {"x": table}, ref, {"x": duration}


def test_a_hand_computed_clip():
    """Segments of class a score 0.9, 0.8, 0.3, 0.6 (the largest of their frames) and 0 (the
    fifth, [4, 5) s, which no frame reaches); 0.9, 0.8 and 0.3 are positive (the event at
    2.2–2.4 s lies inside the third). Thresholds 0.9, 0.8, 0.6, 0.3, 0 give (FPR, TPR) (0, 1/3),
    (0, 2/3), (1/2, 2/3), (1/2, 1), (1, 1): AUROC 5/6; up to FPR 0.1, 2/3; up to 0.6,
    (0.5·2/3 + 0.1·1) / 0.6."""
    tables, ref, durations = hand_clip()
    full, curves = segment_based.auroc(tables, ref, durations, segment_length=1.0)
    assert full["a"] == pytest.approx(5 / 6, abs=1e-12)
    tpr, fpr, thresholds, stats = curves["a"]  # sed_scores_eval's four elements
    np.testing.assert_allclose(fpr, [0, 0, 0, 0.5, 0.5, 1])
    np.testing.assert_array_equal(stats["tps"], [0, 1, 2, 2, 3, 3])
    assert stats["n_ref"] == 3 and stats["tns"][0] == 2
    np.testing.assert_allclose(tpr, [0, 1 / 3, 2 / 3, 2 / 3, 1, 1])
    np.testing.assert_array_equal(thresholds, [np.inf, 0.9, 0.8, 0.6, 0.3, 0.0])
    assert segment_based.auroc(tables, ref, durations, segment_length=1.0,
                               max_fpr=0.1)[0]["a"] == pytest.approx(2 / 3, abs=1e-12)
    assert segment_based.auroc(tables, ref, durations, segment_length=1.0, max_fpr=0.6
                               )[0]["a"] == pytest.approx((0.5 * 2 / 3 + 0.1) / 0.6, abs=1e-12)
    # class b: an event ending where segment 2 starts makes only segment 1 positive; every
    # frame scores 0.5, so the one threshold (0.5) detects all four framed segments: the
    # staircase stays at TPR 0 up to FPR 3/4 (the unframed fifth segment scores 0)
    assert full["b"] == pytest.approx(0.25, abs=1e-12)
    theirs, _ = sse_auroc(frames_of(tables), ground_truth(ref), durations, 1.0, None)
    assert full["a"] == pytest.approx(theirs["a"], abs=1e-12)
    assert full["b"] == pytest.approx(theirs["b"], abs=1e-12)


def test_a_class_without_positive_segments_is_nan_and_left_out_of_the_mean():
    """sed_scores_eval refuses a class without reference events (an assertion); here the
    class is NaN and the mean is that of the other classes, their number given."""
    tables, ref, durations = hand_clip()
    ref = EventList.from_rows([r for r in ref.to_rows() if r[3] == "a"], clips=("x",))
    ours, _ = segment_based.auroc(tables, ref, durations, segment_length=1.0)
    assert np.isnan(ours["b"]) and ours["mean"] == pytest.approx(5 / 6)
    with pytest.raises(AssertionError, match="No ground truth events for classes"):
        sse_auroc(frames_of(tables), ground_truth(ref), durations, 1.0, None)
    result = segment_auroc(tables, ref, durations)
    assert result["classes"] == 1 and np.isnan(result["per_class"]["b"]["auc"])


def test_a_hostile_duration_costs_runs_not_segments():
    """A clip of 8 frames declared 10⁸ s long: its 10⁸ segments are a handful of runs (the
    unframed ones one run of score 0), and the value is what those segments give: the
    negatives of score 0 push FPR to 1 only at the last threshold: TPR 2/3 up to FPR 1/N (the
    one framed negative, 0.6), then 1 (N: the negatives)."""
    tables, ref, _ = hand_clip()
    table = tables["x"]
    runs = clip_segments(table, int(1e8 * 1e6), 1_000_000, np.array([500_000, 2_200_000]),
                       np.array([1_500_000, 2_400_000]), np.array([0, 0]))
    assert len(runs.length) <= 2 * len(table.onset) + 2
    assert int(runs.length.sum()) == 10 ** 8
    assert int(runs.positives[:, 0].sum()) == 3
    value = segment_based.auroc(tables, ref, {"x": 1e8}, segment_length=1.0)[0]["a"]
    negatives = 10 ** 8 - 3
    assert value == pytest.approx(1 - 1 / (3 * negatives), abs=1e-12)


def test_bad_settings_and_inputs_are_refused_by_name():
    tables, ref, durations = hand_clip()
    for bad, message in (({"segment_length": 0.0}, "segment_length"),
                         ({"max_fpr": 0.0}, "max_fpr"), ({"max_fpr": 1.5}, "max_fpr"),
                         ({"segment_length": float("nan")}, "segment_length")):
        with pytest.raises(SedContractError, match=message):
            AurocSettings(**bad)
    with pytest.raises(SedContractError, match="no duration for clip 'x'"):
        corpus_auroc_counts(tables, ref, {"y": 3.0}, AurocSettings())
    with pytest.raises(SedContractError, match="reference class 'zebra' has no score column"):
        segment_auroc(tables, EventList.from_rows([("x", 0.0, 1.0, "zebra")], clips=("x",)),
                      durations)


# ---- MAESTRO-shaped: long files, soft labels on a 1 s grid, windows of the baseline's naming

MAESTRO = ("birds_singing", "car", "people talking")


def maestro_case(tmp_path, seed=0, files=2, seconds=47):
    """A soft-label tsv (1 s grid), window score files (10 s every 5 s, frames of 64 ms from
    each window's start, as the DCASE 2024 baseline scores MAESTRO chunks), and the tables
    those windows merge into, averaged here independently of the project."""
    rng = np.random.default_rng(seed)
    soft_rows = ["filename\tonset\toffset\tevent_label\tconfidence"]
    windows = tmp_path / "windows"
    windows.mkdir()
    merged = {}
    hop = 0.064
    for f in range(files):
        name = f"file{f}"
        for label in MAESTRO:
            level = rng.uniform(0, 1, seconds)
            for t in range(seconds):
                if level[t] > 0.2:
                    soft_rows.append(f"{name}.wav\t{t}.0\t{t + 1}.0\t{label}\t{level[t]:.3f}")
        spans = []
        for start, end in window_starts(float(seconds), 10.0, 5.0):
            n = int((end - start) // hop)
            scores = np.round(rng.uniform(0, 1, (n, len(MAESTRO))), 4)
            (windows / f"{window_id(name, start, end)}.tsv").write_text(
                scores_tsv(scores, MAESTRO, hop))
            spans.append((start, hop, scores))
        # the mean of the windows' frames at every instant, on the union of their bounds
        bounds = sorted({round(s + k * hop, 6) for s, _, sc in spans
                         for k in range(len(sc) + 1)})
        rows = []
        for a, b in itertools.pairwise(bounds):
            mid = (a + b) / 2
            values = [sc[int((mid - s) // hop)] for s, _, sc in spans
                      if s <= mid < s + len(sc) * hop]
            rows.append(np.mean(values, axis=0))
        merged[name] = ScoreTable(np.array(bounds[:-1]), np.array(bounds[1:]), MAESTRO,
                                  np.array(rows), np.arange(len(rows)) + 2)
    soft = tmp_path / "soft.tsv"
    soft.write_text("\n".join(soft_rows) + "\n")
    return soft, windows, merged


def dcase_truth(soft):
    """The hard reference as the DCASE 2024 baseline makes it: rows with confidence > 0.5,
    same-class rows that touch joined."""
    truth: dict[str, list] = {}
    for line in soft.read_text().splitlines()[1:]:
        name, on, off, label, conf = line.split("\t")
        clip = name.removesuffix(".wav")
        truth.setdefault(clip, [])
        if float(conf) > 0.5:
            truth[clip].append([float(on), float(off), label])
    return merged_truth(truth)


def test_maestro_shaped_mpauc_on_the_command_line_equals_sed_scores_eval(tmp_path, capsys):
    """``sedcontract data maestro --soft`` derives the reference (soft > 0.5) and durations;
    ``sedcontract scores --windows`` merges the window files and prints mAUC and mpAUC equal,
    to 1e-9, to sed_scores_eval's on the independently merged tables and DCASE's
    binarised reference."""
    soft, windows, merged = maestro_case(tmp_path)
    out = tmp_path / "maestro"
    assert main(["data", "maestro", "--soft", str(soft), "--out", str(out)]) == 0
    ref, durations = out / "maestro_real.tsv", out / "maestro_real_durations.tsv"
    capsys.readouterr()
    assert main(["scores", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(windows), "--windows", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["auroc"]
    seconds = read_durations(durations)  # the soft labels' extent: 47 s, past the scores
    assert seconds == {"file0": 47.0, "file1": 47.0}
    for max_fpr, key in ((None, "mauc"), (0.1, "mpauc")):
        theirs, _ = sse_auroc(frames_of(merged), dcase_truth(soft), seconds, 1.0, max_fpr)
        assert result[key] == pytest.approx(theirs["mean"], abs=1e-9)
        for name in MAESTRO:
            part = result["per_class"][name]["pauc" if max_fpr else "auc"]
            assert part == pytest.approx(theirs[name], abs=1e-9)
    assert result["settings"] == {"segment_length": 1.0, "max_fpr": 0.1}
    assert main(["scores", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(windows), "--windows", "--auroc-max-fpr", "0.2"]) == 0
    text = capsys.readouterr().out
    theirs, _ = sse_auroc(frames_of(merged), dcase_truth(soft), seconds, 1.0, 0.2)
    assert f"mpAUC (max_fpr 0.2) {theirs['mean']:.4f}" in text
    assert "| people talking |" in text


def test_auroc_options_without_score_files_are_refused(tmp_path, capsys):
    """``--auroc-*`` needs segment scores: events at one threshold, and an audit's score files
    without ``--with-scores``, are refused by name before anything is read."""
    ref = tmp_path / "ref.tsv"
    ref.write_text("filename\tonset\toffset\tevent_label\nx.wav\t0.5\t1.5\ta\n")
    assert main(["scores", "--ref", str(ref), "--pred", str(ref),
                 "--auroc-max-fpr", "0.2"]) == 2
    assert "--auroc-max-fpr set the segment-based AUROC, which comes from score files" in \
        capsys.readouterr().err
    assert main(["audit", "--ref", str(ref), "--pred-scores", str(tmp_path / "none"),
                 "--auroc-segment-length", "500ms"]) == 2
    assert "its frame scores: add --with-scores" in capsys.readouterr().err
    assert main(["scores", "--ref", str(ref), "--pred-scores", str(tmp_path / "none"),
                 "--auroc-segment-length", "0.5"]) == 2  # a time wants its unit
    assert "--auroc-segment-length: '0.5' has no unit; write 0.5ms, 0.5s" in \
        capsys.readouterr().err


def test_an_audit_with_scores_carries_the_auroc_of_its_score_files(tmp_path, capsys):
    """``audit --with-scores --pred-scores`` reports the AUROC beside PSDS in JSON and
    Markdown, the value :func:`segment_auroc` gives on the same files."""
    tables, ref, durations = hand_clip()
    folder = tmp_path / "scores"
    folder.mkdir()
    (folder / "x.tsv").write_text(scores_tsv(tables["x"].scores, ("a", "b"), 0.5))
    ref_path, durations_path = tmp_path / "ref.tsv", tmp_path / "durations.tsv"
    write_events(ref_path, ref)
    write_durations(durations_path, durations)
    args = ["audit", "--ref", str(ref_path), "--durations", str(durations_path),
            "--pred-scores", str(folder), "--with-scores"]
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["auroc"]["mauc"] == pytest.approx((5 / 6 + 0.25) / 2, abs=1e-12)
    assert data["auroc"]["mpauc"] == pytest.approx(
        segment_auroc(folder, ref, durations)["mpauc"], abs=1e-15)
    assert main(args) == 0
    assert "mAUC 0.5417, mpAUC (max_fpr 0.1) 0.3333" in capsys.readouterr().out


def test_roc_points_tied_in_fpr_are_ordered_by_tpr():
    """Blind spot: the points are sorted by FPR, then TPR (sed_scores_eval's order); two
    points of one FPR come lower TPR first."""
    from sedcontract.scores.segment_roc import class_roc

    tpr, fpr, thresholds, _ = class_roc(np.array([0.2, 0.5, 0.8]), np.array([1, 0, 1]),
                                        np.array([1, 1, 1]))
    assert fpr.tolist() == [0.0, 0.0, 1.0, 1.0] and tpr.tolist() == [0.0, 0.5, 0.5, 1.0]
    assert thresholds.tolist() == [np.inf, 0.8, 0.5, 0.2]


def test_paired_auroc_refuses_systems_of_other_classes_even_of_the_same_count():
    """Blind spot: two systems scoring the same number of classes under other names, or in
    another order, are not compared column by column."""
    ref, tables, durations, _ = corpus(3, clips=3, n_classes=3)
    for other_classes, message in ((("c0", "c1", "zebra"), "has no score column"),
                                   (("c1", "c0", "c2"), "the two systems score different "
                                                        "classes")):
        other = {clip: ScoreTable(t.onset, t.offset, other_classes, t.scores, t.lines)
                 for clip, t in tables.items()}
        with pytest.raises(SedContractError, match=message):
            paired_auroc(tables, other, ref, durations, resamples=10)


def test_without_durations_a_reference_event_after_the_scores_extends_its_clip():
    """With no durations a clip lasts to the end of its scores or of its last reference
    event, whichever is later (sed_scores_eval's default): an event of class a at 5.0–6.2 s,
    past the scores' 4 s, adds two positive segments no frame scores, so a's AUROC falls from
    5/6. Read as the scores' end, the event would be dropped and a kept at 5/6."""
    tables, ref, _ = hand_clip()
    later = EventList.from_rows([*ref.to_rows(), ("x", 5.0, 6.2, "a")], clips=("x",))
    ours, curves = segment_based.auroc(tables, later, None, segment_length=1.0)
    theirs, their_curves = sse_auroc(frames_of(tables), ground_truth(later), None, 1.0, None)
    assert ours["a"] == pytest.approx(theirs["a"], abs=1e-12)
    assert ours["b"] == pytest.approx(theirs["b"], abs=1e-12)
    # segments 0..6: a's positives 0, 1, 2 (0.9, 0.8, 0.3) and 5, 6 (unscored, 0);
    # negatives 3 (0.6) and 4 (0): thresholds 0.9, 0.8, 0.6, 0.3, 0 give TPR 1/5, 2/5, 2/5,
    # 3/5, 1 at FPR 0, 0, 1/2, 1/2, 1
    assert ours["a"] == pytest.approx(0.5 * 2 / 5 + 0.5 * 3 / 5, abs=1e-12)
    np.testing.assert_allclose(curves["a"][1], their_curves["a"][1], atol=1e-12)
    assert segment_auroc(tables, later, None)["durations"].startswith("the end of each clip")
