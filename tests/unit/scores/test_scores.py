"""Standard scores beside the guard vector: hand-computed values on the worked example, the
``scores`` command, ``audit --with-scores`` and PSDS through sed_scores_eval."""

from __future__ import annotations

import builtins
import json
import math
import warnings

import numpy as np
import pytest

import sedcontract
from sedcontract.cli import main
from sedcontract.contracts.policy import ScoreSettings
from sedcontract.guard.render import to_markdown
from sedcontract.scores.psds.request import PsdsRequest
from sedcontract.traces import EventList, write_durations, write_events
from tests.helpers.examples import worked_example, write_worked_example

REF, PRED = worked_example()


def test_scores_of_the_worked_example_by_hand():
    report = sedcontract.audit(REF, PRED, durations={"c": 4.0}, scores=ScoreSettings())
    s = report.scores
    # frames: speech 40 of 50 reference frames hit, 85 predicted; tone 0 of 30, 10 predicted
    assert (s["frame"].overall.tp, s["frame"].overall.ref, s["frame"].overall.sys) == (40, 80, 95)
    assert math.isclose(s["frame"].overall.f1, 80 / 175)
    # collar events: no hit; the tone predicted as speech is a substitution
    assert (s["event"].overall.tp, s["event"].overall.subs) == (0, 1)
    assert math.isclose(s["event"].error_rate, (1 + 1 + 3) / 2)
    # intersection (dtc = gtc = 0.5): speech reference covered 0.8 s by relevant detections
    assert (s["intersection"].per_class["speech"].tp, s["intersection"].per_class["speech"].sys,
            s["intersection"].per_class["tone"].sys) == (1, 2, 1)
    # boundaries within 10 frames: the speech onset (25 vs 30) only
    assert s["onset_boundary"].overall.tp == 1 and s["offset_boundary"].overall.tp == 0
    # segments of 1 s: speech ref in segments 0, 1; pred in 0, 1, 2; tone ref 2, pred 3
    assert (s["segment"].per_class["speech"].tp, s["segment"].per_class["tone"].tp) == (2, 0)
    text = to_markdown(report)
    assert text.index("| logic |") < text.index("| frame | 0.457 |")  # one report, vector first




def test_scores_command(tmp_path, capsys):
    args = [*write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}"]
    assert main(["scores", *args]) == 0
    out = capsys.readouterr().out
    assert "| event | 0.000 | 0.000 (2 classes) | 2.500 | 0 / 2 / 4 |" in out
    assert main(["scores", *args, "--format", "json", "--t-collar", "500ms",
                 "--no-evaluate-offset"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"]["scores"]["t_collar"] == 0.5
    assert data["scores"]["event"]["tp"] == 1  # onset-only: [0.6, 1.0) hits speech
    assert data["policy"]["scores"]["boundary_frames"] == 25
    assert main(["audit", *args, "--with-scores", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["scores"]) == {"frame", "segment", "event", "intersection",
                                   "onset_boundary", "offset_boundary"}
    assert "onset" in data["modes"]["typed"]["coordinates"]


def write_score_files(folder, clips, classes, seed):
    rng = np.random.default_rng(seed)
    folder.mkdir()
    times = np.arange(156) * 0.064  # the DCASE baseline grid: 156 frames per 10 s
    for clip in clips:
        values = np.clip(rng.random((len(times), len(classes))) * 0.6 +
                         np.sin(times[:, None] * (1 + np.arange(len(classes)))) * 0.5, 0, 1)
        lines = ["onset\toffset\t" + "\t".join(classes)]
        lines += [f"{t:.3f}\t{t + 0.064:.3f}\t" + "\t".join(f"{v:.4f}" for v in row)
                  for t, row in zip(times, values, strict=True)]
        (folder / f"{clip}.tsv").write_text("\n".join(lines) + "\n")


def test_psds_matches_sed_scores_eval_on_the_same_files(tmp_path, capsys):
    intersection_based = pytest.importorskip("sed_scores_eval.intersection_based")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sed_scores_eval import io
    classes = ["speech", "tone"]
    clips = ["a", "b", "c"]
    ref = EventList.from_rows([("a", 0.5, 2.0, "speech"), ("a", 1.9, 3.0, "speech"),
                               ("a", 4.0, 6.0, "tone"), ("b", 1.0, 5.0, "tone"),
                               ("b", 6.0, 7.5, "speech"), ("c", 2.0, 4.0, "speech"),
                               ("c", 5.0, 9.0, "tone")])
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "dur.tsv", dict.fromkeys(clips, 10.0))
    write_score_files(tmp_path / "scores", clips, classes, seed=0)
    assert main(["scores", f"--ref={tmp_path / 'ref.tsv'}", f"--durations={tmp_path / 'dur.tsv'}",
                 f"--pred-scores={tmp_path / 'scores'}", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    truth = {"a": [(0.5, 3.0, "speech"), (4.0, 6.0, "tone")],  # touching speech merged
             "b": [(1.0, 5.0, "tone"), (6.0, 7.5, "speech")],
             "c": [(2.0, 4.0, "speech"), (5.0, 9.0, "tone")]}
    scores = io.read_sed_scores(tmp_path / "scores")
    durations = dict.fromkeys(clips, 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        psds1 = intersection_based.psds(scores, truth, durations, dtc_threshold=0.7,
                                        gtc_threshold=0.7, alpha_ct=0.0, alpha_st=1.0,
                                        max_efpr=100.0)[0]
        psds2 = intersection_based.psds(scores, truth, durations, dtc_threshold=0.1,
                                        gtc_threshold=0.1, cttc_threshold=0.3, alpha_ct=0.5,
                                        alpha_st=1.0, max_efpr=100.0)[0]
    assert abs(data["psds"]["psds1"]["value"] - psds1) <= 1e-6
    assert abs(data["psds"]["psds2"]["value"] - psds2) <= 1e-6
    assert psds2 > 0 and data["psds"]["psds1"]["settings"]["dtc"] == 0.7
    assert data["psds"]["psds1"]["rule"] == "sed_scores_eval" and "roc" not in data["psds"]["psds1"]


def test_psds_needs_no_sed_scores_eval(tmp_path, monkeypatch):
    """PSDS from score files is computed by sedcontract itself: the same values with the
    reference library's import blocked as with it."""
    write_events(tmp_path / "ref.tsv", REF)
    write_score_files(tmp_path / "scores", ["c"], ["speech", "tone"], seed=1)

    def run():
        return sedcontract.audit(tmp_path / "ref.tsv", PRED, durations={"c": 10.0},
                                 scores=ScoreSettings(),
                                 psds=PsdsRequest(scores=tmp_path / "scores")).psds

    with_library = run()
    real_import = builtins.__import__

    def no_sed_scores_eval(name, *args, **kwargs):
        if name.startswith("sed_scores_eval"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sed_scores_eval)
    without = run()
    assert without == with_library and "note" not in without
    assert all(0 <= v["value"] <= 1 for v in without.values())


def test_empty_prediction_file_and_zero_length_events(tmp_path):
    ref_path = tmp_path / "ref.tsv"
    write_events(ref_path, REF)
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    report = sedcontract.audit(ref_path, empty, durations={"c": 4.0}, scores=ScoreSettings())
    for name, result in report.scores.items():
        assert result.overall.tp == 0 and result.overall.sys == 0, name
        assert result.overall.f1 == 0.0 and result.overall.ref > 0, name
    # a zero-length prediction is an event for the event scores and, as in sed_eval, marks the
    # segment it lies in; it covers no frame of the grid
    blip = EventList.from_rows([("c", 0.5, 0.5, "speech")])
    report = sedcontract.audit(REF, blip, durations={"c": 4.0}, scores=ScoreSettings())
    assert report.scores["event"].overall.sys == 1
    assert report.scores["frame"].overall.sys == 0 and report.scores["segment"].overall.sys == 1
    assert report.traces["vanished"]["pred"] == 1


def test_psds_reports_why_it_could_not_be_computed(tmp_path, capsys):
    pytest.importorskip("sed_scores_eval")
    write_events(tmp_path / "ref.tsv", EventList.from_rows([("c", 0.5, 2.0, "speech")]))
    write_durations(tmp_path / "dur.tsv", {"c": 10.0})
    write_score_files(tmp_path / "scores", ["c"], ["speech", "tone"], seed=2)
    base = [f"--ref={tmp_path / 'ref.tsv'}", f"--pred-scores={tmp_path / 'scores'}",
            "--format", "json"]
    assert main(["scores", *base, f"--durations={tmp_path / 'dur.tsv'}"]) == 0
    note = json.loads(capsys.readouterr().out)["psds"]["note"]
    assert "no reference events of class(es) tone" in note  # its TPR has no denominator
    assert main(["scores", *base]) == 0
    assert "needs clip durations" in json.loads(capsys.readouterr().out)["psds"]["note"]


@pytest.mark.parametrize(("option", "message"), [
    (["--segment", "0"], "out of range"), (["--segment=-1s"], "'-1s' is not a time"),
    (["--t-collar", "nans"], "'nans' is not a time"), (["--t-collar", "0.2"], "has no unit"),
    (["--dtc", "1.5"], "out of range"), (["--percentage-of-length", "nan"], "out of range")])
def test_bad_score_settings_exit_2(tmp_path, capsys, option, message):
    args = [*write_worked_example(tmp_path), f"--pred={tmp_path / 'pred.tsv'}", *option]
    assert main(["scores", *args]) == 2
    assert message in capsys.readouterr().err


def collar_case() -> tuple[EventList, EventList]:
    """A matching where greedy falls short: P1 (stored first) suits both references, P2 only
    the first, so greedy pairs A–P1 and leaves B, while optimal pairs A–P2 and B–P1."""
    ref = EventList.from_rows([("a", 1.0, 2.0, "x"), ("a", 1.1, 1.9, "x")])
    pred = EventList.from_rows([("a", 1.05, 1.95, "x"), ("a", 0.95, 2.15, "x")])
    return ref, pred


@pytest.mark.parametrize(("matching", "tp"), [("optimal", 2), ("greedy", 1)])
def test_collar_matching_is_the_declared_one(matching, tp):
    from sedcontract.scores.collar_based import event_metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_eval
    ref, pred = collar_case()
    ours = event_metrics(ref, pred, classes=["x"], matching=matching)
    metric = sed_eval.sound_event.EventBasedMetrics(["x"], t_collar=0.2,
                                                    percentage_of_length=0.2,
                                                    event_matching_type=matching)
    metric.evaluate([{"event_onset": o, "event_offset": f, "event_label": lab}
                     for _, o, f, lab in ref.to_rows()],
                    [{"event_onset": o, "event_offset": f, "event_label": lab}
                     for _, o, f, lab in pred.to_rows()])
    theirs = metric.results()["overall"]["f_measure"]["recall"] * len(ref)  # tp / Nref
    assert ours.overall.tp == tp == round(theirs)


def test_without_time_conditions_substitutions_are_the_fewer_leftovers():
    """Onset and offset both off: per clip and class min(refs, outputs) hit; the leftovers of
    a clip pair up across labels, so S = min(leftover refs, leftover outputs) per clip."""
    from sedcontract.scores.collar_based import event_metrics

    ref = EventList.from_rows([("a", 0.5, 1.0, "speech"), ("a", 2.0, 2.5, "speech"),
                               ("a", 3.0, 3.2, "tone"), ("b", 0.1, 0.2, "tone")])
    pred = EventList.from_rows([("a", 5.0, 6.0, "tone"), ("a", 7.0, 7.5, "burst"),
                                ("b", 0.4, 0.5, "speech"), ("b", 1.0, 1.1, "tone")])
    result = event_metrics(ref, pred, classes=["speech", "tone", "burst"],
                           evaluate_onset=False, evaluate_offset=False)
    # a: tone hits, 2 speech refs and 1 burst left: S = 1; b: tone hits, 1 output left: S = 0
    assert result.subs.tolist() == [1, 0]
    assert (result.overall.tp, result.overall.fn, result.overall.fp) == (2, 1, 1)
    assert math.isclose(result.error_rate, (1 + 1 + 1) / 4)


def test_boundary_and_intersection_criteria_hold_at_their_limits():
    # onsets 10 frames apart are within a tolerance of 10 frames; 11 are not
    ref = EventList.from_rows([("a", 0.4, 1.0, "x"), ("a", 2.0, 2.6, "x")])
    pred = EventList.from_rows([("a", 0.6, 1.0, "x"), ("a", 2.22, 2.6, "x")])
    report = sedcontract.audit(ref, pred, durations={"a": 4.0}, scores=ScoreSettings())
    assert report.policy["scores"]["boundary_frames"] == 10
    assert report.scores["onset_boundary"].overall.tp == 1
    from sedcontract.scores.intersection_based import intersection_metrics

    # the detection overlaps the reference for exactly dtc = 0.5 of its length: relevant; the
    # reference is covered for exactly gtc = 0.5 of its length: a true positive
    ref = EventList.from_rows([("a", 0.5, 1.5, "x")])
    pred = EventList.from_rows([("a", 0.0, 1.0, "x")])
    result = intersection_metrics(ref, pred, classes=["x"])
    assert (result.overall.tp, result.overall.sys) == (1, 1)
    short = intersection_metrics(ref, EventList.from_rows([("a", 0.0, 0.999, "x")]),
                                 classes=["x"])
    assert (short.overall.tp, short.overall.sys) == (0, 1)  # just below: a false positive


def test_a_zero_length_detection_is_neither_relevant_nor_a_false_positive():
    from sedcontract.scores.intersection_based import intersection_metrics

    ref = EventList.from_rows([("a", 0.5, 1.5, "x")])
    pred = EventList.from_rows([("a", 0.5, 1.5, "x"), ("a", 3.0, 3.0, "x")])
    result = intersection_metrics(ref, pred, classes=["x"])
    assert (result.overall.tp, result.overall.ref, result.overall.sys) == (1, 1, 1)
    alone = intersection_metrics(ref, EventList.from_rows([("a", 3.0, 3.0, "x")]),
                                 classes=["x"])
    assert (alone.overall.tp, alone.overall.sys) == (0, 0)


def test_closed_edges_put_an_offset_at_the_clip_end_on_the_last_frame():
    """A reference running to the end of a 2 s clip (100 frames) has its closed-edge offset on
    frame 99, where a prediction that stops one frame early (first inactive frame 99) has its
    own: a hit with no tolerance. Open edges drop the reference offset."""
    from sedcontract.scores.boundary import boundary_metrics
    from sedcontract.traces import TraceSet

    ref = EventList.from_rows([("a", 1.0, 2.0, "x"), ("a", 0.0, 0.5, "y")])
    pred = EventList.from_rows([("a", 1.0, 1.98, "x"), ("a", 1.5, 2.0, "y")])
    traces = TraceSet.from_events(ref, pred, hop=0.02, durations={"a": 2.0}, classes=["x", "y"])
    closed = boundary_metrics(traces, frames=0, kind="offset", edges="closed").per_class
    assert (closed["x"].tp, closed["x"].ref, closed["x"].sys) == (1, 1, 1)
    assert (closed["y"].tp, closed["y"].ref, closed["y"].sys) == (0, 1, 1)
    opened = boundary_metrics(traces, frames=0, kind="offset", edges="open").per_class
    assert (opened["x"].ref, opened["x"].sys, opened["y"].ref, opened["y"].sys) == (0, 1, 1, 0)


def test_segment_scores_cost_what_the_events_cost():
    """A clip of 1e9 s in 1 s segments: counted on segment ranges, not on an array of a
    billion segments (which needed gigabytes)."""
    from tests.helpers.limits import run_limited

    code = ("from sedcontract.traces import EventList\n"
            "from sedcontract.scores.segment_based import segment_metrics\n"
            "ref = EventList.from_rows([('a', 0.5, 2.5, 'x'), ('a', 9e8, 9e8 + 1, 'y')])\n"
            "pred = EventList.from_rows([('a', 1.5, 3.5, 'x'), ('a', 5e8, 5e8 + 1, 'y')])\n"
            "r = segment_metrics(ref, pred, classes=['x', 'y'], durations={'a': 1e9})\n"
            "o = r.overall\n"
            "print(o.tp, o.ref, o.sys, r.error_rate)\n")
    result = run_limited(["-c", code], limit_mb=1024)
    assert result.returncode == 0, result.stderr
    # x: ref segments 0-2, pred 1-3 → 2 hits; y: one segment each, apart; S=0, D=1+1, I=1+1
    assert result.stdout.split() == ["2", "4", "4", "1.0"]


@pytest.mark.parametrize("seed", range(3))
def test_boundary_scores_are_a_maximum_matching_within_the_tolerance(seed):
    """Boundary F1 counts, for all clips at once, what a maximum one-to-one matching of the
    boundaries (read off the dense activity, clip by clip) within ``frames`` finds (scipy's
    Hopcroft–Karp on the explicit pairs)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from sedcontract.scores.boundary import boundary_metrics
    from sedcontract.traces import TraceSet

    rng = np.random.default_rng(seed)
    clips = [f"c{k}" for k in range(6)]
    rows = {side: [] for side in ("ref", "pred")}
    for clip in clips:
        for side in rows:
            for _ in range(int(rng.integers(0, 7))):
                on = round(float(rng.uniform(0, 1.9)), 2)
                rows[side].append((clip, on, min(2.0, round(on + float(rng.uniform(0.02, 0.3)), 2)),
                                   ["x", "y"][int(rng.integers(2))]))
    ref = EventList.from_rows(rows["ref"], clips=tuple(clips))
    pred = EventList.from_rows(rows["pred"])
    traces = TraceSet.from_events(ref, pred, hop=0.02, durations=dict.fromkeys(clips, 2.0),
                                  classes=["x", "y"])

    def boundaries(active: np.ndarray, kind: str, edges: str) -> list[int]:
        n = len(active)
        before = np.concatenate([[False], active[:-1]])
        after = np.concatenate([active[1:], [False]])
        if kind == "onset":
            found = np.flatnonzero(active & ~before)
            return [k for k in found.tolist() if k > 0 or edges == "closed"]
        ends = np.flatnonzero(active & ~after) + 1  # first frame after the run
        return [min(e, n - 1) for e in ends.tolist() if e < n or edges == "closed"]

    ref_dense, pred_dense = traces.dense("ref"), traces.dense("pred")
    for kind in ("onset", "offset"):
        for edges in ("open", "closed"):
            for frames in (0, 2, 9):
                result = boundary_metrics(traces, frames=frames, kind=kind, edges=edges)
                expected = dict.fromkeys(["x", "y"], 0)
                for i in range(len(clips)):
                    for k, c in enumerate(["x", "y"]):
                        r = boundaries(ref_dense[i, k], kind, edges)
                        p = boundaries(pred_dense[i, k], kind, edges)
                        pairs = [(a, b) for a in range(len(r)) for b in range(len(p))
                                 if abs(r[a] - p[b]) <= frames]
                        if pairs:
                            ends = np.array(pairs).T
                            graph = csr_matrix((np.ones(len(pairs)), (ends[0], ends[1])),
                                               shape=(len(r), len(p)))
                            found = maximum_bipartite_matching(graph, perm_type="column")
                            expected[c] += int(np.count_nonzero(found >= 0))
                assert {c: result.per_class[c].tp for c in expected} == expected, \
                    (kind, edges, frames)


def test_pairs_ordered_by_one_key_are_in_lexsort_order():
    """``by_row`` orders (row, position) pairs as ``np.lexsort`` does, ties in place, for
    positions of any sign and size."""
    from sedcontract.scores.counts import by_row

    rng = np.random.default_rng(3)
    for high in (3, 10**6, 2**61):
        rows = rng.integers(0, 50, 2000)
        positions = rng.integers(-high, high, 2000)
        assert np.array_equal(by_row(rows, positions), np.lexsort((positions, rows)))
    assert by_row(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).size == 0
