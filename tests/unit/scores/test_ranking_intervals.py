"""Bootstrap intervals of the ranking metrics (PSDS from score files, mAUC and mpAUC): each
resample, computed from per-clip counts, equals the metric of the corpus rebuilt with every
clip copied as often as it was drawn (the independent oracle: nothing weighed, the files
recounted); the draws are the project's, so the intervals of one corpus and seed come from the
same resamples; paired differences draw the same clips for both systems; ``scores
--bootstrap`` prints them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.resampling import index_chunks
from sedcontract.scores.psds.of_scores import ClipTruth, _rocs, psds_from_counts
from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.resampled import ClipRows, psds_draws
from sedcontract.scores.psds.roc import staircase_area, staircase_at
from sedcontract.scores.psds.score_counts import block_counts
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings
from sedcontract.scores.segment_roc import (
    AurocSettings,
    auroc_draws,
    corpus_auroc_counts,
    paired_auroc,
    segment_auroc,
)
from sedcontract.traces import (
    EventList,
    read_durations,
    read_events,
    write_durations,
    write_events,
)
from tests.helpers.score_tables import corpus

SETTINGS = {**PRESETS, "ct": PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=1.0,
                                          alpha_st=0.5)}


def copied(ref, tables, durations, weights):
    """The corpus with clip ``k`` copied ``weights[k]`` times (copies renamed)."""
    rows, new_tables, new_durations = [], {}, {}
    for k, clip in enumerate(ref.clips):
        for j in range(int(weights[k])):
            name = f"{clip}#{j}"
            new_tables[name] = tables[clip]
            new_durations[name] = durations[clip]
            rows += [(name, on, off, label) for c, on, off, label in ref.to_rows() if c == clip]
    return EventList.from_rows(rows, clips=tuple(new_tables)), new_tables, new_durations


@pytest.mark.parametrize("seed", range(4))
def test_each_psds_resample_is_the_psds_of_the_clips_it_drew(seed):
    ref, tables, durations, classes = corpus(seed, clips=7, levels=(None, 5)[seed % 2])
    truth = ClipTruth.of(ref, list(ref.clips), classes)
    ordered = [tables[c] for c in ref.clips]
    keyed = block_counts(ordered, truth, tuple(classes), list(SETTINGS.values()), per_clip=True)
    rows = [ClipRows.of(k, len(classes)) for k in keyed]
    seconds = [durations[c] for c in ref.clips]
    draws = psds_draws(rows, truth, classes, seconds, SETTINGS, 12, seed)
    drawn = np.concatenate(list(index_chunks(len(ref.clips), 12, seed)))
    missing = 0
    for r in range(12):
        weights = np.bincount(drawn[r], minlength=len(ref.clips))
        if any(n == 0 for n in np.bincount(
                [classes.index(label) for c, *_, label in ref.to_rows()
                 if weights[list(ref.clips).index(c)]], minlength=len(classes))):
            # a class without events: no PSDS, as the copied corpus has none
            assert np.isnan(draws[r]).all()
            missing += 1
            continue
        new_ref, new_tables, new_durations = copied(ref, tables, durations, weights)
        expected = psds(new_tables, new_ref, new_durations, SETTINGS)
        for j, name in enumerate(SETTINGS):
            assert draws[r, j] == pytest.approx(expected[name]["value"], abs=1e-12), (r, name)
    # every clip once: the point estimate, bit for bit
    point = psds(tables, ref, durations, SETTINGS)
    weights = np.ones(len(ref.clips), dtype=np.int64)
    total = float(sum(seconds))
    for j, (name, chosen) in enumerate(SETTINGS.items()):
        value = psds_from_counts([rows[j].weighted(weights[None])], truth, classes, total, chosen,
                                 weights)["value"]
        assert value == point[name]["value"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("seconds", [None, 600.0])
def test_resamples_formed_together_equal_each_formed_alone_bit_for_bit(seed, seconds):
    """Many resamples' PSD-ROCs at once give each resample's value as it gives alone, to the
    bit, and as numpy forms a ROC from the classes' [K, n] staircases. With ten classes
    numpy sums a one-point ROC pairwise, unlike a ROC of many points: short clips (one false
    positive past ``max_efpr``) give one-point ROCs, long ones many points."""
    ref, tables, durations, classes = corpus(seed, clips=9, n_classes=10, levels=4)
    if seconds is not None:
        durations = dict.fromkeys(durations, seconds)
    truth = ClipTruth.of(ref, list(ref.clips), classes)
    keyed = block_counts([tables[c] for c in ref.clips], truth, classes,
                         list(SETTINGS.values()), per_clip=True)
    rows = [ClipRows.of(k, len(classes)) for k in keyed]
    lengths = [durations[c] for c in ref.clips]
    draws = psds_draws(rows, truth, classes, lengths, SETTINGS, 30, seed)
    drawn = np.concatenate(list(index_chunks(len(ref.clips), 30, seed)))
    points = []
    for r in range(30):
        weights = np.bincount(drawn[r], minlength=len(ref.clips))
        total = float(np.cumsum(weights * np.asarray(lengths))[-1])
        for j, chosen in enumerate(SETTINGS.values()):
            alone = psds_from_counts([rows[j].weighted(weights[None])], truth, classes, total,
                                     chosen, weights)
            if "roc" not in alone:  # a class without events in this resample
                assert np.isnan(draws[r, j])
                continue
            # the ROC of the classes' staircases as numpy forms it from the [K, n] stack
            curves = alone["roc"]["classes"].values()
            axis = np.unique(np.concatenate([c["efpr"] for c in curves]))
            stack = np.array([staircase_at(axis, np.array(c["efpr"]), np.array(c["tpr"]))
                              for c in curves])
            etpr = np.maximum(np.mean(stack, axis=0) - chosen.alpha_st * np.std(stack, axis=0),
                              0.0)
            m = chosen.max_efpr
            expected = staircase_area(np.append(axis, m), np.append(etpr, etpr[-1]), m,
                                      in_order=True) / m
            assert draws[r, j] == alone["value"] == expected, (r, j)
            points.append(len(axis))
    assert len(points) >= 30  # most resamples are defined
    assert min(points) == 1 and (max(points) > 1) == (seconds is not None)


def test_resamples_roc_means_are_numpys_of_each_resample_alone():
    """The mean and spread over ten classes of many resamples' staircases at once are
    numpy's of each resample's [K, n] stack to the bit: row after row, and pairwise for a
    one-point ROC (numpy sums a [K, 1] stack as one run), which random TPRs tell apart."""
    rng = np.random.default_rng(0)
    K, D = 10, 60
    curve, tpr, efpr = [], [], []
    for d in range(D):
        single = d % 3 == 0  # every class's staircase one point at eFPR 0
        for c in range(K):
            n = 1 if single else int(rng.integers(1, 5))
            x = np.r_[0.0, np.sort(rng.choice(np.arange(1, 30), n - 1, replace=False)) / 3]
            curve += [d * K + c] * n
            efpr += x.tolist()
            tpr += np.sort(rng.uniform(0, 1, n)).tolist()
    draw, axis, etpr, mean, std = _rocs(np.array(curve), np.array(tpr), np.array(efpr), D, K,
                                        0.7)
    curve, tpr, efpr = np.array(curve), np.array(tpr), np.array(efpr)
    for d in range(D):
        mine = curve // K == d
        grid = np.unique(efpr[mine])
        stack = np.array([staircase_at(grid, efpr[curve == d * K + c], tpr[curve == d * K + c])
                          for c in range(K)])
        assert np.array_equal(axis[draw == d], grid)
        assert np.array_equal(mean[draw == d], np.mean(stack, axis=0))
        assert np.array_equal(std[draw == d], np.std(stack, axis=0))
        assert np.array_equal(etpr[draw == d],
                              np.maximum(np.mean(stack, axis=0) - 0.7 * np.std(stack, axis=0),
                                         0.0))


@pytest.mark.parametrize("seed", range(3))
def test_each_auroc_resample_is_the_auroc_of_the_clips_it_drew(seed):
    ref, tables, durations, _ = corpus(seed, clips=8, frames=80)
    settings = AurocSettings(segment_length=0.5, max_fpr=0.2)
    counts, _ = corpus_auroc_counts(tables, ref, durations, settings)
    draws = auroc_draws(counts, len(ref.clips), settings, 10, seed)
    drawn = np.concatenate(list(index_chunks(len(ref.clips), 10, seed)))
    for r in range(10):
        weights = np.bincount(drawn[r], minlength=len(ref.clips))
        new_ref, new_tables, new_durations = copied(ref, tables, durations, weights)
        expected = segment_auroc(new_tables, new_ref, new_durations, settings)
        assert draws[r, 0] == pytest.approx(expected["mauc"], abs=1e-12, nan_ok=True)
        assert draws[r, 1] == pytest.approx(expected["mpauc"], abs=1e-12, nan_ok=True)


def test_intervals_hold_the_point_and_a_paired_difference_of_a_system_with_itself_is_zero():
    ref, tables, durations, _ = corpus(5, clips=10, frames=80)
    result = psds(tables, ref, durations, PRESETS, resamples=200, seed=3)
    for value in result.values():
        interval = value["interval"]
        assert interval["lo"] <= value["value"] <= interval["hi"]
        assert (interval["resamples"], interval["seed"], interval["level"]) == (200, 3, 0.95)
    auroc = segment_auroc(tables, ref, durations, resamples=200, seed=3)
    assert auroc["intervals"]["mpauc"]["lo"] <= auroc["mpauc"] <= auroc["intervals"]["mpauc"]["hi"]
    same = paired_auroc(tables, tables, ref, durations, resamples=50)
    assert same["mpauc"]["point"] == same["mpauc"]["lo"] == same["mpauc"]["hi"] == 0.0
    better = {}  # scores 1 where a reference event of the class lies, else the noise / 2
    for clip, t in tables.items():
        s = t.scores / 2
        for c, on, off, label in ref.to_rows():
            if c == clip:
                inside = (t.onset < off) & (t.offset > on)
                s[inside, t.classes.index(label)] = 1.0
        better[clip] = type(t)(t.onset, t.offset, t.classes, s, t.lines)
    diff = paired_auroc(better, tables, ref, durations, resamples=300)
    assert 0 < diff["mauc"]["lo"] <= diff["mauc"]["point"] <= diff["mauc"]["hi"]


def test_scores_bootstrap_prints_intervals_of_every_ranking_metric(teacher_scores, capsys):
    """On the real DESED files: ``scores --bootstrap`` gives PSDS1, PSDS2, mAUC, mpAUC and each
    standard score's micro F1 an interval, the same with the same seed."""
    from tests.helpers.real_dcase import DURATIONS, REF

    args = ["scores", "--ref", str(REF), "--durations", str(DURATIONS), "--pred-scores",
            str(teacher_scores), "--bootstrap", "30", "--format", "json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    psds1 = data["psds"]["psds1"]
    assert round(psds1["value"], 7) == 0.3534991
    assert psds1["interval"]["lo"] < psds1["value"] < psds1["interval"]["hi"]
    assert data["auroc"]["intervals"]["mpauc"]["resamples"] == 30
    assert set(data["intervals"]["scores"]) >= {"event_f1", "intersection_f1", "segment_f1"}
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == data
    assert main(args[:-2]) == 0
    text = capsys.readouterr().out
    assert "| psds1 | 0.3535 [" in text and "mpAUC (max_fpr 0.1) 0.7500 [" in text


def test_compare_scores_gives_paired_differences_of_psds_and_mpauc(teacher_scores, tmp_path,
                                                                   capsys):
    """``scores --compare-scores`` on real DESED files (200 clips) against a noisier copy of
    the same system: each difference is the two systems' values apart, with a paired
    interval; a system against itself differs by exactly 0."""
    from tests.helpers.real_dcase import DURATIONS, REF

    rng = np.random.default_rng(0)
    clean, noisy = tmp_path / "clean", tmp_path / "noisy"
    clean.mkdir()
    noisy.mkdir()
    # the first 200 clips of DESED validation (their reference and durations), both systems
    head = read_durations(DURATIONS)
    clips = sorted(head)[:200]
    ref = read_events(REF)
    write_events(tmp_path / "ref.tsv", EventList.from_rows(
        [r for r in ref.to_rows() if r[0] in clips], clips=tuple(clips)))
    write_durations(tmp_path / "durations.tsv", {c: head[c] for c in clips})
    for clip in clips:
        text = (teacher_scores / f"{clip}.tsv").read_text()
        (clean / f"{clip}.tsv").write_text(text)
        lines = text.splitlines()
        rows = [lines[0]]
        for line in lines[1:]:
            on, off, *values = line.split("\t")
            jitter = [float(v) * rng.uniform(0.3, 1.0) for v in values]
            rows.append("\t".join([on, off, *(f"{v:.4f}" for v in jitter)]))
        (noisy / f"{clip}.tsv").write_text("\n".join(rows) + "\n")
    teacher_scores = clean
    base = ["scores", "--ref", str(tmp_path / "ref.tsv"), "--durations",
            str(tmp_path / "durations.tsv"), "--pred-scores", str(clean), "--format", "json"]
    values = {}
    for folder in (teacher_scores, noisy):
        assert main([*base[:6], str(folder), *base[7:]]) == 0
        data = json.loads(capsys.readouterr().out)
        values[folder] = (data["psds"]["psds1"]["value"], data["auroc"]["mpauc"])
    assert main([*base, "--compare-scores", str(noisy), "--bootstrap", "40"]) == 0
    diff = json.loads(capsys.readouterr().out)["ranking_comparison"]
    assert diff["psds1"]["point"] == pytest.approx(values[teacher_scores][0]
                                                   - values[noisy][0], abs=1e-12)
    assert diff["mpauc"]["point"] == pytest.approx(values[teacher_scores][1]
                                                   - values[noisy][1], abs=1e-12)
    assert diff["mpauc"]["lo"] <= diff["mpauc"]["point"] <= diff["mpauc"]["hi"]
    assert set(diff) == {"psds1", "psds2", "mauc", "mpauc"}
    assert main([*base[:-2], "--compare-scores", str(teacher_scores), "--bootstrap", "10"]) == 0
    text = capsys.readouterr().out
    assert "Paired difference of the ranking metrics, --pred-scores" in text
    assert "| psds1 | +0.0000 [+0.0000, +0.0000] |" in text
    assert main([*base[:3], "--pred-scores", str(teacher_scores), "--compare-scores",
                 str(noisy)]) == 2  # no durations
    assert "--compare-scores compares PSDS" in capsys.readouterr().err


def cut_corpus(tmp_path):
    """Two systems' tables running 0.6 s past their clips' durations, and reference events
    past them too, so cutting at the durations (``--psds-cut``) changes PSDS; written as files
    with the start of an ``audit`` command line reading them."""
    from tests.helpers.score_tables import write_tables

    ref, tables, durations, classes = corpus(3, clips=6, levels=5)
    rng = np.random.default_rng(3)
    other = {c: type(t)(t.onset, t.offset, t.classes, t.scores * rng.uniform(0.2, 1.0,
                                                                             t.scores.shape),
                        t.lines) for c, t in tables.items()}
    short = {c: round(d - 0.6, 3) for c, d in durations.items()}
    late = [(c, round(short[c] - 0.1, 3), round(short[c] + 0.4, 3), classes[k % len(classes)])
            for k, c in enumerate(ref.clips)]
    ref = EventList.from_rows([*ref.to_rows(), *late], clips=ref.clips)
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", short)
    mine, theirs = write_tables(tmp_path / "a", tables), write_tables(tmp_path / "b", other)
    base = ["audit", "--ref", str(tmp_path / "ref.tsv"), "--durations",
            str(tmp_path / "durations.tsv"), "--pred-scores", str(mine), "--with-scores",
            "--duration-tolerance", "1s"]
    return ref, tables, other, short, base, theirs


def test_the_psds_cut_holds_with_resamples_and_in_paired_differences(tmp_path, capsys):
    """``psds(…, cut=True, resamples=N)`` is the cut corpus's PSDS with intervals from cut
    resamples, and ``audit --compare-scores --psds-cut`` the difference of the two cut
    PSDS: neither falls back to the tables as they come. (psds_eval's defaults up to an eFPR
    of 20,000 per hour: the corpus is 7 s of audio.)"""
    from sedcontract.scores.psds.request import paired_psds

    ref, tables, other, short, base, theirs = cut_corpus(tmp_path)
    wide = {"custom": PsdsSettings(max_efpr=20000.0)}

    def value(system, **keywords):
        return psds(system, ref, short, wide, **keywords)["custom"]

    whole, cut = value(tables)["value"], value(tables, cut=True)["value"]
    assert abs(whole - cut) > 1e-3  # the cut changes the number the checks read
    drawn = value(tables, cut=True, resamples=30)
    assert drawn["value"] == cut and drawn["cut"] == value(tables, cut=True)["cut"]
    assert drawn["interval"]["lo"] <= cut <= drawn["interval"]["hi"]
    other_whole, other_cut = value(other)["value"], value(other, cut=True)["value"]
    paired = paired_psds(tables, other, ref, short, wide, cut=True, resamples=30)["custom"]
    assert paired["point"] == pytest.approx(cut - other_cut, abs=1e-12)
    command = [*base, "--psds", "custom", "--psds-max-efpr", "20000", "--compare-scores",
               str(theirs), "--bootstrap", "30", "--format", "json"]
    for flag, a, b in (([], whole, other_whole), (["--psds-cut"], cut, other_cut)):
        assert main([*command, *flag]) == 0
        shown = json.loads(capsys.readouterr().out)["ranking_comparison"]["custom"]["point"]
        assert shown == pytest.approx(a - b, abs=1e-12), flag
