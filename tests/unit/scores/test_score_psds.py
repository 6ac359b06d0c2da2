"""PSDS from score tables (scores.psds.of_scores) against two oracles: sed_scores_eval's
intersection-based PSDS on the same tables, and a brute-force count of true positives, false
positives and cross-triggers at every threshold straight from the definitions. Blocks on an
executor give the one process's result bit for bit; folders are read one clip at a time."""

from __future__ import annotations

import json
import re
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace
from multiprocessing import get_context

import numpy as np
import pytest

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.scores.psds.of_scores import ClipTruth
from sedcontract.scores.psds.request import PsdsRequest, psds
from sedcontract.scores.psds.score_counts import block_counts
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings, PsdsUnavailable
from sedcontract.traces import EventList, write_durations, write_events
from sedcontract.traces import score_files as score_io
from sedcontract.traces.score_files import ScoreFolder, ScoreTable, scores_tsv
from tests.helpers.psds_corpus import CLASSES, SCENARIOS, long_corpus, trivial
from tests.helpers.score_tables import SETTINGS, assert_sed_scores_eval_psds, corpus, sse_psds


@pytest.mark.parametrize("seed", range(12))
def test_psds_equals_sed_scores_eval(seed):
    """Every scenario (presets, α_ct = 1, criteria that round to 0 µs, no cross-triggers),
    overall and per class, to 1e-9; scores continuous, on few levels (ties, flat runs) or
    binary, frames of 40 or 64 ms. The edge cases: on about 10 s of audio one false positive
    already passes ``max_efpr``, so most values are 0; the curve itself is compared on hours
    of audio below."""
    levels = (None, 5, 1)[seed % 3]
    hop = 0.064 if seed % 2 else 0.04
    ref, tables, durations, _ = corpus(seed, levels=levels, hop=hop)
    assert_sed_scores_eval_psds(ref, tables, durations)


@pytest.mark.parametrize("seed", range(6))
def test_psds_equals_sed_scores_eval_on_hours_of_audio(seed):
    """PSDS1, PSDS2 (their ``max_efpr`` as DCASE sets it, not scaled) and a scenario with
    alpha_ct, alpha_st > 0 and criteria the grid meets exactly, on two hours of audio
    (tests/helpers/psds_corpus.py): every value compared, overall and per class, is well inside
    (0, 1), so the test sees the whole formula; the PSD-ROC is compared point by point."""
    ref, tables, durations = long_corpus(seed, levels=(20, None, 5)[seed % 3])
    ours = psds(tables, ref, durations, SCENARIOS)
    compared = []
    for name, chosen in SCENARIOS.items():
        value, per_class, (etpr, efpr) = sse_psds(ref, tables, durations, chosen)
        assert ours[name]["value"] == pytest.approx(value, abs=1e-9), name
        assert ours[name]["per_class"] == pytest.approx(dict(per_class), abs=1e-9), name
        np.testing.assert_allclose(ours[name]["roc"]["efpr"], efpr, rtol=1e-12)
        np.testing.assert_allclose(ours[name]["roc"]["etpr"], etpr, rtol=1e-9, atol=1e-12)
        compared += [value, *per_class.values()]
    assert len(compared) == 15 and trivial(compared) == 0
    assert min(compared) > 0.02 and max(compared) < 0.98


@pytest.mark.parametrize("seed", range(6))
def test_the_long_corpus_holds_what_the_agreement_needs(seed):
    """Each long corpus has classes of different reference durations, cross-triggers between
    every ordered pair of classes, ROC plateaus (a threshold that adds false positives and
    finds nothing) in every class, and detections that meet each criterion exactly: moving
    the DTC, GTC or CTTC by 1e-5 alone changes the counts."""
    ref, tables, durations = long_corpus(seed, levels=(20, None, 5)[seed % 3])
    lengths = {c: float(np.mean((ref.offset - ref.onset)[ref.label == c])) for c in CLASSES}
    assert lengths["c0"] < lengths["c1"] < lengths["c2"] and lengths["c2"] > 5 * lengths["c0"]
    truth = ClipTruth.of(ref, list(tables), CLASSES)
    custom = SCENARIOS["custom"]

    def counts(chosen):
        (parts,) = block_counts(iter(tables.values()), truth, CLASSES, [chosen])
        return [[x.tolist() for x in p.of_class(c)] for p in parts for c in range(len(CLASSES))]

    plain = counts(custom)
    pairs = {(c, o) for c, (_, _, _, _, other, n) in enumerate(plain)
             for o, k in zip(other, n, strict=True) if k > 0}
    assert pairs == {(a, b) for a in range(4) for b in range(4) if a != b}
    hours = sum(durations.values()) / 3600
    for score, tp, fp, *_ in plain:  # from the highest score down: the raw ROC of the class
        at = np.unique(-np.asarray(score), return_inverse=True)[1]
        found = np.cumsum(np.bincount(at, weights=tp))
        false = np.cumsum(np.bincount(at, weights=fp))
        below = false / hours <= custom.max_efpr
        flat = (np.diff(false) > 0) & (np.diff(np.maximum.accumulate(found)) == 0)
        assert (flat & below[1:]).any()
    for criterion in ("dtc", "gtc", "cttc"):
        assert counts(replace(custom, **{criterion: 0.5 + 1e-5})) != plain, criterion


def brute_counts(ref, tables, classes, chosen):
    """``{(class, threshold): (tp, fp, Counter(other class → cross-triggers))}`` at every
    score of each class, detection by detection, as the intersection criteria define them
    (criteria rounded to 1 µs; as sed_scores_eval counts them, a column without reference
    events needs no criterion when cross-triggers are off, and a clip with no detection at a
    threshold finds nothing there even at gtc = 0)."""
    def us(x):
        return int(np.rint(np.round(x, 6) * 1e6))

    truth = {}
    for clip, on, off, label in ref.merged().to_rows():
        truth.setdefault((clip, label), []).append((us(on), us(off), off - on))
    out = {}
    for j, c in enumerate(classes):
        for theta in np.unique(np.concatenate([t.scores[:, j] for t in tables.values()])):
            tp = fp = 0
            ct: Counter = Counter()
            for clip, t in tables.items():
                active = np.r_[False, t.scores[:, j] >= theta, False]
                edges = np.flatnonzero(active[1:] != active[:-1])
                targets = truth.get((clip, c), [])
                covered = [0] * len(targets)
                for a, b in zip(edges[::2], edges[1::2], strict=True):
                    d_on, d_off = us(t.onset[a]), us(t.offset[b - 1])
                    length = t.offset[b - 1] - t.onset[a]
                    overlap = [max(0, min(d_off, e) - max(d_on, s)) for s, e, _ in targets]
                    relevant = sum(overlap) >= us(chosen.dtc * length)
                    if not targets and chosen.alpha_ct == 0:
                        relevant = False
                    fp += not relevant
                    if relevant:
                        covered = [x + y for x, y in zip(covered, overlap, strict=True)]
                    for o in classes:
                        others = truth.get((clip, o), [])
                        if o == c or not others:
                            continue
                        inside = 0 if relevant else sum(
                            max(0, min(d_off, e) - max(d_on, s)) for s, e, _ in others)
                        ct[o] += inside >= us(chosen.cttc * length)
                if len(edges):  # nothing detected, nothing found (even at gtc = 0)
                    tp += sum(x >= us(chosen.gtc * seconds)
                              for x, (_, _, seconds) in zip(covered, targets, strict=True))
            out[c, float(theta)] = (tp, fp, ct)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_counts_at_every_threshold_are_the_definitions(seed):
    """The run-tree counts, summed from each score up, equal the detections' own counts at
    every threshold: true and false positives, and cross-triggers per other class."""
    ref, tables, _, classes = corpus(seed, clips=4, n_classes=3, frames=24, levels=6)
    truth = ClipTruth.of(ref, list(tables), classes)
    for chosen in (PRESETS["psds1"], PRESETS["psds2"], SETTINGS["zero"]):
        (parts,) = block_counts(iter(tables.values()), truth, classes, [chosen])
        for (c, theta), (tp, fp, ct) in brute_counts(ref, tables, classes, chosen).items():
            k = classes.index(c)
            got_tp = got_fp = 0
            got_ct: Counter = Counter()
            for p in parts:
                score, dtp, dfp, cs, co, dct = p.of_class(k)
                got_tp += int(dtp[score >= theta].sum())
                got_fp += int(dfp[score >= theta].sum())
                for o, n in zip(co[cs >= theta], dct[cs >= theta], strict=True):
                    got_ct[classes[o]] += int(n)
            assert (got_tp, got_fp) == (tp, fp), (chosen, c, theta)
            if chosen.alpha_ct > 0:
                assert +got_ct == +ct, (chosen, c, theta)


def test_cross_triggers_are_kept_only_for_pairs_that_meet():
    """Cross-trigger counts are kept only for the pairs of classes where one triggers on the
    other's reference, not for every pair: memory grows with what occurs, not classes²."""
    classes = tuple(f"k{i}" for i in range(30))
    k = np.arange(50)
    on, off = k * 0.1, (k + 1) * 0.1
    tables, rows = {}, []
    for i in range(30):  # clip i: reference of classes i and i+1; i+1 also fires on i's event
        s = np.zeros((50, 30))
        nxt = (i + 1) % 30
        s[10:20, i] = 0.9
        s[15:30, nxt] = 0.8
        s[10:14, nxt] = 0.7
        tables[f"x{i}"] = ScoreTable(on, off, classes, s, k)
        # each event under the 30 % CTTC of a whole-clip detection (at the lowest score)
        rows += [(f"x{i}", 1.0, 2.0, classes[i]), (f"x{i}", 2.0, 3.0, classes[nxt])]
    ref = EventList.from_rows(rows, clips=tuple(tables))
    truth = ClipTruth.of(ref, list(tables), classes)
    (parts,) = block_counts(iter(tables.values()), truth, classes, [PRESETS["psds2"]])
    pairs = {(c, int(o)) for p in parts for c in range(30) for o in p.of_class(c)[4]}
    assert pairs == {((i + 1) % 30, i) for i in range(30)}
    durations = dict.fromkeys(tables, 5.0)
    value = psds(tables, ref, durations, {"psds2": PRESETS["psds2"]})
    assert value["psds2"]["value"] == pytest.approx(
        sse_psds(ref, tables, durations, PRESETS["psds2"])[0], abs=1e-9)


@pytest.mark.parametrize("blocks", [1, 2, 5, 9])
def test_blocks_on_an_executor_give_the_one_process_result(blocks):
    """Counts of blocks of clips joined: the same values, per-class values and curves as one
    process, bit for bit (a block may be smaller than a batch or empty)."""
    ref, tables, durations, _ = corpus(3, clips=7, levels=7)
    one = psds(tables, ref, durations, SETTINGS)
    with ThreadPoolExecutor(2) as pool:
        assert psds(tables, ref, durations, SETTINGS, executor=pool, blocks=blocks) == one


def write_folder(folder, tables):
    folder.mkdir()
    for clip, t in tables.items():
        hop = float(t.offset[0] - t.onset[0])
        (folder / f"{clip}.tsv").write_text(scores_tsv(t.scores, t.classes, hop))


def test_a_folder_on_a_process_pool_gives_the_one_process_result(tmp_path):
    """Workers read their block's score files themselves: the one process's result (and the
    tables read back from the files give sed_scores_eval's value)."""
    ref, tables, durations, _ = corpus(5, clips=5)
    write_folder(tmp_path / "s", tables)
    one = psds(tmp_path / "s", ref, durations, SETTINGS)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        assert psds(tmp_path / "s", ref, durations, SETTINGS, executor=pool, blocks=3) == one
    read = dict(ScoreFolder.open(tmp_path / "s").tables())
    assert one["psds2"]["value"] == pytest.approx(
        sse_psds(ref, {c: t for c, (t, _) in read.items()}, durations, PRESETS["psds2"])[0],
        abs=1e-9)


def test_a_folder_is_read_one_clip_at_a_time(tmp_path, monkeypatch):
    """Files are read only as their clip is reached (never all at once), and a later file
    naming other classes is refused naming it."""
    ref, tables, durations, classes = corpus(6, clips=4)
    write_folder(tmp_path / "s", tables)
    read = []
    real = score_io.read_scores

    def counted(path):
        read.append(path.name)
        return real(path)

    monkeypatch.setattr(score_io, "read_scores", counted)
    folder = ScoreFolder.open(tmp_path / "s", ref.clips)
    assert read == []  # the columns come from the first file's header line alone
    assert folder.header == classes
    stream = folder.tables()
    assert next(stream)[0] == "clip0" and read == ["clip0.tsv"]
    assert next(stream)[0] == "clip1" and read[-1] == "clip1.tsv" and len(read) == 2
    (tmp_path / "s" / "clip2.tsv").write_text(scores_tsv(tables["clip2"].scores[:, :2],
                                                         classes[:2], 0.04))
    with pytest.raises(TraceFormatError, match=r"differ from those of clip0\.tsv") as info:
        psds(folder, ref, durations, SETTINGS)
    assert info.value.path == str(tmp_path / "s" / "clip2.tsv")


def test_bad_score_tables_are_refused_by_name():
    ref, tables, durations, classes = corpus(7, clips=3)
    renamed = dict(tables)
    renamed["clip1"] = ScoreTable(tables["clip1"].onset, tables["clip1"].offset,
                                  ("a", "b", "c", "d"), tables["clip1"].scores, None)
    with pytest.raises(SedContractError, match="clip 'clip1' has the columns a, b, c, d"):
        psds(renamed, ref, durations)
    broken = dict(tables)
    broken["clip0"] = ScoreTable(tables["clip0"].onset, tables["clip0"].offset, classes,
                                 np.where(tables["clip0"].scores > 0.5, np.nan, 0.1), None)
    with pytest.raises(SedContractError, match="clip 'clip0' holds a score that is NaN"):
        psds(broken, ref, durations)
    with pytest.raises(SedContractError, match=r"no score table for clip\(s\) 'clip2'"):
        psds({c: tables[c] for c in ("clip0", "clip1")}, ref, durations)
    with pytest.raises(SedContractError, match="no duration for clip 'clip2'"):
        psds(tables, ref, {"clip0": 1.6, "clip1": 1.6})
    with pytest.raises(PsdsUnavailable, match="needs clip durations"):
        psds(tables, ref, None)
    extra = EventList.from_rows([*ref.to_rows(), ("clip0", 0.1, 0.2, "zebra")],
                                clips=ref.clips)
    with pytest.raises(SedContractError, match="reference class 'zebra' has no score column"):
        psds(tables, extra, durations)
    only = EventList.from_rows([r for r in ref.to_rows() if r[3] != classes[0]],
                               clips=ref.clips)
    with pytest.raises(PsdsUnavailable, match=f"no reference events of class\\(es\\) "
                                              f"{classes[0]}"):
        psds(tables, only, durations)


def test_a_request_computes_on_the_executor_it_is_given():
    """PsdsRequest(scores=…) forwards the executor and blocks (the audit's --jobs path)."""
    ref, tables, durations, classes = corpus(8, clips=6)
    request = PsdsRequest(scores=tables, settings={"psds2": PRESETS["psds2"]})
    one = request.compute(ref, durations, classes)
    with ThreadPoolExecutor(2) as pool:
        assert request.compute(ref, durations, classes, executor=pool, blocks=4) == one


def test_the_cli_audit_on_processes_reads_and_scores_folders_as_one_process(tmp_path, capsys):
    """``audit --pred-scores DIR --with-scores --jobs 2``: the events and PSDS of the folder
    (read clip by clip, PSDS counted in the workers) give the one-process report, byte for
    byte."""
    from sedcontract.cli import main

    ref, tables, durations, _ = corpus(9, clips=6)
    write_folder(tmp_path / "s", tables)
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "dur.tsv", durations)
    args = ["audit", f"--ref={tmp_path / 'ref.tsv'}", f"--pred-scores={tmp_path / 's'}",
            "--with-scores", f"--durations={tmp_path / 'dur.tsv'}", "--format", "json"]
    assert main(args) == 0
    alone = capsys.readouterr().out
    assert main([*args, "--jobs", "2"]) == 0
    assert capsys.readouterr().out == alone
    assert '"psds2"' in alone and '"note"' not in alone


def test_counts_at_shared_scores_are_kept_once(monkeypatch):
    """Scores on a few levels (as score files written with few digits are): the counts of
    many clips are joined, and what is kept follows the distinct (class, score) pairs, not
    the clips; the value stays sed_scores_eval's."""
    from sedcontract.scores.psds import score_counts

    monkeypatch.setattr(score_counts, "JOIN_ROWS", 50)
    monkeypatch.setattr(score_counts, "BATCH_SEGMENTS", 10)
    ref, tables, durations, classes = corpus(11, clips=120, n_classes=3, frames=30, levels=4)
    truth = ClipTruth.of(ref, list(tables), classes)
    for chosen in (PRESETS["psds1"], PRESETS["psds2"]):
        (parts,) = block_counts(iter(tables.values()), truth, classes, [chosen])
        rows = sum(p.rows for p in parts)
        assert rows <= 3 * 5 * (1 + 2) + 50, rows  # 5 levels a class; cross-triggers: 2 others
    value = psds(tables, ref, durations, {"psds2": PRESETS["psds2"]})
    assert value["psds2"]["value"] == pytest.approx(
        sse_psds(ref, tables, durations, PRESETS["psds2"])[0], abs=1e-9)


@pytest.mark.parametrize("onset, message", [
    ([0.0, 0.2], "this frame starts at 0.2 s but the frame of row 2 ends at 0.1 s"),
    ([-0.1, 0.0], "negative time -0.1"),
    ([0.1, 0.0], "rows are not in time order"),
    ([0.9, 1.0], "the first frame starts at 0.9 s, not at 0 s"),
])
def test_score_tables_given_in_memory_must_tile_time(onset, message):
    """Tables handed over as a mapping are checked as score files are: from 0 s, in order,
    without gaps (sed_scores_eval's runs end where the next frame starts)."""
    ref = EventList.from_rows([("a", 0.0, 0.1, "x")], clips=("a",))
    onset = np.array(onset)
    table = ScoreTable(onset, onset + 0.1, ("x",), np.array([[0.9], [0.2]]), None)
    with pytest.raises(TraceFormatError, match=re.escape(message)) as info:
        psds({"a": table}, ref, {"a": 1.0})
    assert info.value.path == "the score table of clip 'a'"
    empty = ScoreTable(np.zeros(0), np.zeros(0), ("x",), np.zeros((0, 1)), None)
    with pytest.raises(PsdsUnavailable, match="clip 'a' has no frames"):
        psds({"a": empty}, ref, {"a": 1.0})


# ---- small hand-computed cases: each value derived by hand and checked against sed_scores_eval

def one_second_frames(classes, columns, seconds):
    """A clip's table of 1 s frames, 0 everywhere but ``columns`` ({class: [(first frame,
    stop frame, score)]})."""
    k = np.arange(seconds)
    s = np.zeros((seconds, len(classes)))
    for j, c in enumerate(classes):
        for a, b, v in columns.get(c, ()):
            s[a:b, j] = v
    return ScoreTable(k * 1.0, (k + 1) * 1.0, tuple(classes), s, k + 2)


def hand_case(classes, rows, columns, durations, chosen):
    """PSDS of hand-made clips ({clip: columns}) in one scenario, and sed_scores_eval's
    (value, per-class values and PSD-ROC), which it must equal."""
    ref = EventList.from_rows(rows, clips=tuple(durations))
    tables = {clip: one_second_frames(classes, columns.get(clip, {}), int(seconds))
              for clip, seconds in durations.items()}
    ours = psds(tables, ref, durations, {"s": chosen})["s"]
    value, per_class, (etpr, efpr) = sse_psds(ref, tables, durations, chosen)
    assert ours["value"] == pytest.approx(value, abs=1e-12)
    assert ours["per_class"] == pytest.approx(dict(per_class), abs=1e-12)
    np.testing.assert_allclose(ours["roc"]["efpr"], efpr, rtol=1e-12)
    np.testing.assert_allclose(ours["roc"]["etpr"], etpr, rtol=1e-12, atol=1e-15)
    return ours


def test_a_cross_trigger_covered_exactly_to_the_cttc_counts():
    """A detection whose share on another class's reference equals the CTTC (30 % of 10 s,
    0.3 · 10 inexact in floats) is a cross-trigger: ``>=``, not ``>``."""
    # 20 s clip, 1 FP = 180/h. a fires on [0, 10) at 0.8 (no a there: a FP; b's [0, 3) is
    # exactly 30 % of it: a cross-trigger, 1 per 3 s of b = 1200/h), then on its event
    # [15, 16) at 0.4: a's TPR reaches 1 at eFPR 180 + 1 · 1200 / (2 − 1) = 1380. b is found
    # at eFPR 0. Mean TPR 0.5 up to 1380, then 1: (0.5 · 1380 + 620) / 2000 = 0.655 (without
    # the cross-trigger: (0.5 · 180 + 1820) / 2000 = 0.955).
    tie = PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=1.0, alpha_st=0.0,
                       max_efpr=2000.0)
    ours = hand_case(("a", "b"), [("x", 0.0, 3.0, "b"), ("x", 15.0, 16.0, "a")],
                     {"x": {"a": [(0, 10, 0.8), (15, 16, 0.4)], "b": [(0, 3, 0.9)]}},
                     {"x": 20.0}, tie)
    assert ours["value"] == pytest.approx(0.655, abs=1e-12)
    assert ours["per_class"]["a"] == pytest.approx(0.31, abs=1e-12)
    assert ours["roc"]["efpr"] == pytest.approx([0.0, 1380.0, 2000.0])


def test_two_classes_count_cross_triggers_on_each_other():
    """With exactly two classes and alpha_ct > 0, each class's cross-triggers on the other
    (its only other class) raise its eFPR."""
    # clips x (20 s) and y (10 s): 1 FP in 30 s = 120/h; a and b have 4 s of reference each.
    # a fires on b's [10, 12) in x at 0.9 (a FP and a cross-trigger on b: 900/h) before its
    # own event; b fires on a's [0, 2) at 0.8 (the same) before its two events. Both reach
    # TPR 1 at eFPR 120 + 0.5 · 900 / (2 − 1) = 570: (1000 − 570) / 1000 = 0.43 (without
    # cross-triggers 120: 0.88).
    both = PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=0.5, alpha_st=0.0,
                        max_efpr=1000.0)
    rows = [("x", 0.0, 4.0, "a"), ("x", 10.0, 12.0, "b"), ("y", 2.0, 4.0, "b")]
    columns = {"x": {"a": [(10, 12, 0.9), (0, 4, 0.6)], "b": [(0, 2, 0.8), (10, 12, 0.5)]},
               "y": {"b": [(2, 4, 0.7)]}}
    durations = {"x": 20.0, "y": 10.0}
    ours = hand_case(("a", "b"), rows, columns, durations, both)
    assert ours["value"] == pytest.approx(0.43, abs=1e-12)
    assert ours["per_class"] == pytest.approx({"a": 0.43, "b": 0.43}, abs=1e-12)
    plain = hand_case(("a", "b"), rows, columns, durations, replace(both, alpha_ct=0.0))
    assert plain["value"] == pytest.approx(0.88, abs=1e-12)


def test_the_cross_trigger_rate_is_averaged_over_the_other_classes():
    """With three classes, a class's cross-trigger rate is the mean over the K − 1 other
    classes (sed_scores_eval's), not over all K."""
    # 20 s clip: 1 FP = 180/h; a, b, c have 2 s of reference each. a fires on b's [5, 7) at
    # 0.9 (a FP; on b 1800/h, on c 0: mean over the 2 others 900/h) before its own event:
    # a reaches TPR 1 at eFPR 180 + 900 = 1080 (over 3 classes: 180 + 600 = 780); b and c are
    # found at eFPR 0. Mean TPR 2/3 up to 1080, then 1: (2/3 · 1080 + 920) / 2000 = 0.82.
    ours = hand_case(("a", "b", "c"),
                     [("x", 0.0, 2.0, "a"), ("x", 5.0, 7.0, "b"), ("x", 10.0, 12.0, "c")],
                     {"x": {"a": [(5, 7, 0.9), (0, 2, 0.6)], "b": [(5, 7, 0.8)],
                            "c": [(10, 12, 0.8)]}},
                     {"x": 20.0}, PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=1.0,
                                               alpha_st=0.0, max_efpr=2000.0))
    assert ours["value"] == pytest.approx(0.82, abs=1e-12)
    assert ours["per_class"]["a"] == pytest.approx(0.46, abs=1e-12)
    assert ours["roc"]["efpr"] == pytest.approx([0.0, 1080.0, 2000.0])


def test_a_roc_plateau_keeps_only_the_point_where_the_tpr_rises():
    """Thresholds where the false rate grows and the TPR does not add no point to the
    staircase: each TPR counts from the lowest eFPR that reaches it."""
    # 20 s clip, 1 FP = 180/h, two events of a. Thresholds 0.9: one found (0, 0.5); 0.7 and
    # 0.6: a FP each, nothing more found (180, 0.5), (360, 0.5): a plateau; 0.5: the second
    # found (360, 1). The staircase is (0, 0.5), (360, 1): (0.5 · 360 + 40) / 400 = 0.55,
    # and the PSD-ROC has no point at 180.
    ours = hand_case(("a",), [("x", 0.0, 2.0, "a"), ("x", 10.0, 12.0, "a")],
                     {"x": {"a": [(0, 2, 0.9), (5, 6, 0.7), (15, 16, 0.6), (10, 12, 0.5)]}},
                     {"x": 20.0}, PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=0.0,
                                               alpha_st=0.0, max_efpr=400.0))
    assert ours["value"] == pytest.approx(0.55, abs=1e-12)
    assert ours["roc"]["efpr"] == [0.0, 360.0, 400.0]
    assert ours["roc"]["etpr"] == [0.5, 1.0, 1.0]


def test_alpha_st_takes_off_the_population_spread_of_the_class_tprs():
    """alpha_st > 0 with classes of different TPRs: eTPR = mean − alpha_st · std with the
    population standard deviation (ddof = 0), as sed_scores_eval."""
    # 20 s clip, 1 FP = 180/h. a is found at eFPR 0 (TPR 1); b finds one of its two events at
    # eFPR 0 and the other with a FP (180/h). Up to 180: TPRs 1 and 0.5, mean 0.75, std 0.25
    # (ddof = 1: 0.354), eTPR 0.75 − 1 · 0.25 = 0.5; then 1 and 1, eTPR 1:
    # (0.5 · 180 + 220) / 400 = 0.775 (ddof = 1: 0.728).
    ours = hand_case(("a", "b"),
                     [("x", 0.0, 2.0, "a"), ("x", 5.0, 7.0, "b"), ("x", 10.0, 12.0, "b")],
                     {"x": {"a": [(0, 2, 0.9)],
                            "b": [(5, 7, 0.8), (10, 12, 0.6), (15, 16, 0.6)]}},
                     {"x": 20.0}, PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=0.0,
                                               alpha_st=1.0, max_efpr=400.0))
    assert ours["value"] == pytest.approx(0.775, abs=1e-12)
    assert ours["roc"]["std"][:2] == pytest.approx([0.25, 0.0], abs=1e-12)
    assert ours["roc"]["etpr"][:2] == pytest.approx([0.5, 1.0], abs=1e-12)


def test_cross_triggers_are_rated_per_second_of_the_class_confused_with():
    """A cross-trigger rate is per hour of the reference of the class the detection falls on,
    not of the detected class (classes with 1 s and 4 s of reference)."""
    # 20 s clip, 1 FP = 180/h; a has 1 s of reference, b 4 s. a fires on b's [5, 9) at 0.9
    # (a FP and a cross-trigger on b: 1 per 4 s = 900/h; per a's 1 s it would be 3600/h)
    # before its own event: a reaches TPR 1 at eFPR 180 + 900 = 1080; b is found at 0.
    # (0.5 · 1080 + 920) / 2000 = 0.73 (rated by a's seconds: 3780 > 2000, 0.5).
    ours = hand_case(("a", "b"), [("x", 0.0, 1.0, "a"), ("x", 5.0, 9.0, "b")],
                     {"x": {"a": [(5, 9, 0.9), (0, 1, 0.6)], "b": [(5, 9, 0.8)]}},
                     {"x": 20.0}, PsdsSettings(dtc=0.5, gtc=0.5, cttc=0.3, alpha_ct=1.0,
                                               alpha_st=0.0, max_efpr=2000.0))
    assert ours["value"] == pytest.approx(0.73, abs=1e-12)
    assert ours["roc"]["efpr"] == pytest.approx([0.0, 1080.0, 2000.0])


def test_durations_that_add_up_to_no_audio_leave_psds_uncomputed_with_a_note(tmp_path,
                                                                            capsys):
    """Every duration 0 ended in an IndexError in the score-PSDS ROC; a rate per hour of no
    audio is undefined, so PSDS says why it is missing."""
    from sedcontract.cli import main
    from sedcontract.traces import write_durations, write_events

    ref = EventList.from_rows([("a", 0.0, 0.1, "x")], clips=("a",))
    table = ScoreTable(np.array([0.0]), np.array([0.1]), ("x",), np.array([[0.9]]), None)
    with pytest.raises(PsdsUnavailable, match="add up to 0 s"):
        psds({"a": table}, ref, {"a": 0.0})
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", {"a": 0.0})
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.tsv").write_text("onset\toffset\tx\n0\t0.1\t0.9\n")
    assert main(["audit", "--ref", str(tmp_path / "ref.tsv"), "--durations",
                 str(tmp_path / "durations.tsv"), "--pred-scores", str(tmp_path / "s"),
                 "--with-scores", "--format", "json"]) == 0
    note = json.loads(capsys.readouterr().out)["psds"]["note"]
    assert "the durations of the 1 clip(s) add up to 0 s" in note


def test_a_clip_the_cut_leaves_without_frames_is_named_with_the_cut():
    """With --psds-cut, a clip of 0 s keeps no frame: PSDS says the cut did it, not that the
    score file had none."""
    ref = EventList.from_rows([("a", 0.0, 0.1, "x")], clips=("a", "b"))
    table = ScoreTable(np.array([0.0]), np.array([0.1]), ("x",), np.array([[0.9]]), None)
    with pytest.raises(PsdsUnavailable, match=r"clip 'b' lasts 0 s: cut there \(--psds-cut\), "
                                              r"its score table keeps no frame"):
        psds({"a": table, "b": table}, ref, {"a": 1.0, "b": 0.0}, cut=True)
    assert psds({"a": table, "b": table}, ref, {"a": 1.0, "b": 0.0})["psds1"]["cut"] is None
