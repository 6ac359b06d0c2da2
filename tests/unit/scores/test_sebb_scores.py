"""Score files as DCASE 2024 systems write them: sound event bounding boxes (SEBBs) turned back
into score tables hold ``-inf`` outside their boxes (and may hold ``+inf``); such a folder is
read, scored and thresholded as sed_scores_eval reads it, and a NaN is still refused by file,
row and column."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

from sedcontract.cli import main
from sedcontract.errors import TraceFormatError
from sedcontract.scores.psds.request import psds
from sedcontract.scores.psds.settings import PRESETS
from sedcontract.traces import EventList, read_events, write_durations, write_events
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import detections
from sedcontract.traces.score_files import ScoreFolder, read_scores
from sedcontract.traces.windows import Piece, overlap_average
from tests.helpers.score_tables import assert_sed_scores_eval_psds, corpus

pd = pytest.importorskip("pandas")
CLASSES = ("Dog", "Speech", "Blender")


def sebb_frame(boxes, duration):
    """One clip's boxes ``(onset, offset, class, confidence)`` as a SEBB score table: a row
    between each two consecutive box bounds (and 0 s and the duration), the box's confidence
    where a box covers it and ``-inf`` elsewhere."""
    bounds = np.unique([0.0, duration, *(b for box in boxes for b in box[:2])])
    scores = np.full((len(bounds) - 1, len(CLASSES)), -np.inf)
    for on, off, label, confidence in boxes:
        inside = (bounds[:-1] >= on) & (bounds[1:] <= off)
        scores[inside, CLASSES.index(label)] = confidence
    frame = pd.DataFrame(scores, columns=list(CLASSES))
    frame.insert(0, "offset", bounds[1:])
    frame.insert(0, "onset", bounds[:-1])
    return frame


def sebb_corpus(tmp_path, seed=0, clips=24):
    """A reference, durations, and a folder of SEBB score files written as sed_scores_eval's
    ``write_sed_scores`` writes them (pandas, tab-separated, ``-inf`` as text); boxes near
    the reference events with jittered bounds, missed ones, false ones and one box at
    ``+inf``."""
    rng = np.random.default_rng(seed)
    rows, durations = [], {}
    folder = tmp_path / "sebb"
    folder.mkdir()
    kept = {}
    for i in range(clips):
        clip = f"Y{i:03d}"
        duration = 10.0 if i % 5 else 8.5
        durations[clip] = duration
        boxes = []
        for label in CLASSES:
            t = float(rng.uniform(0, 3))
            while t < duration - 1:
                off = min(duration, t + float(rng.uniform(0.3, 3)))
                rows.append((clip, round(t, 3), round(off, 3), label))
                if rng.uniform() < 0.85:
                    on_b = round(max(0.0, t + float(rng.normal(0, 0.15))), 3)
                    off_b = round(min(duration, off + float(rng.normal(0, 0.15))), 3)
                    if off_b > on_b:
                        boxes.append((on_b, off_b, label, round(float(rng.uniform(0.2, 1)), 4)))
                t = off + float(rng.uniform(0.5, 4))
            if rng.uniform() < 0.3:
                on_b = round(float(rng.uniform(0, duration - 1)), 3)
                boxes.append((on_b, on_b + 0.8, label, round(float(rng.uniform(0, 0.6)), 4)))
        if i == 3:
            boxes.append((0.5, 1.5, "Dog", np.inf))
        boxes = kept[clip] = _disjoint(boxes)
        sebb_frame(boxes, duration).to_csv(folder / f"{clip}.tsv", sep="\t", index=False)
    ref = EventList.from_rows(rows, clips=tuple(durations))
    ref_path, durations_path = tmp_path / "ref.tsv", tmp_path / "durations.tsv"
    write_events(ref_path, ref)
    write_durations(durations_path, durations)
    return folder, ref_path, durations_path, kept


def _disjoint(boxes):
    """Same-class boxes that overlap keep the earlier one (SEBBs of one class are disjoint)."""
    kept = []
    for box in sorted(boxes, key=lambda b: (b[2], b[0])):
        if kept and kept[-1][2] == box[2] and box[0] < kept[-1][1]:
            continue
        kept.append(box)
    return kept


def test_a_sebb_folder_scores_to_sed_scores_eval_psds(tmp_path, capsys):
    """``sedcontract scores --pred-scores`` on the folder prints PSDS1 and PSDS2 equal to
    sed_scores_eval's on the same files, to 1e-9, and its mpAUC equal to sed_scores_eval's."""
    sse_psds = pytest.importorskip("sed_scores_eval.intersection_based")
    from sed_scores_eval import io, segment_based

    folder, ref, durations, _ = sebb_corpus(tmp_path)
    text = (folder / "Y003.tsv").read_text()
    assert "-inf" in text and "\tinf" in text  # the files hold infinities as text
    assert main(["scores", "--ref", str(ref), "--durations", str(durations), "--pred-scores",
                 str(folder), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth = io.read_ground_truth_events(str(ref))
        seconds = io.read_audio_durations(str(durations))
        for name in ("psds1", "psds2"):
            value, *_ = sse_psds.psds(str(folder), truth, seconds,
                                      **PRESETS[name].sed_scores_eval())
            assert data["psds"][name]["value"] == pytest.approx(value, abs=1e-9)
            assert value > 0.1
        mpauc, _ = segment_based.auroc(str(folder), truth, seconds, segment_length=1.0,
                                       max_fpr=0.1)
    assert data["auroc"]["mpauc"] == pytest.approx(mpauc["mean"], abs=1e-9)
    # at the decision threshold a -inf cell is never active, a +inf one always
    events = data["scores"]["event"]
    assert events["sys"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_infinite_cells_in_generated_corpora_give_sed_scores_eval_psds(seed):
    """Half the cells -inf (every run broken into boxes), some +inf: every scenario (presets,
    cross-triggers at alpha_ct 1, criteria that round to 0), overall and per class, to 1e-9."""
    ref, tables, durations, _ = corpus(seed, levels=(None, 5, 1)[seed % 3], hop=0.04)
    rng = np.random.default_rng(seed + 100)
    for clip, table in tables.items():
        s = table.scores.copy()
        s[rng.uniform(size=s.shape) < 0.5] = -np.inf
        if seed % 2 == 0:
            s[rng.uniform(size=s.shape) < 0.05] = np.inf
        tables[clip] = replace(table, scores=s)
    assert_sed_scores_eval_psds(ref, tables, durations)


def test_infinite_scores_in_memory_are_scores_too(tmp_path):
    """The same tables as DataFrames give the folder's PSDS."""
    folder, ref, durations, _ = sebb_corpus(tmp_path, seed=1, clips=8)
    frames = {p.stem: pd.read_csv(p, sep="\t") for p in sorted(folder.glob("*.tsv"))}
    assert np.isneginf(frames["Y003"]["Dog"].to_numpy()).any()
    from_folder = psds(folder, ref, durations)
    from_frames = psds(frames, ref, durations)
    for name in from_folder:
        assert from_frames[name]["value"] == from_folder[name]["value"]


def test_a_nan_score_is_refused_by_file_row_and_column(tmp_path):
    """In a file (numpy's fast reader and the line-by-line one: a blank line sends it there)
    and in a DataFrame, NaN is named where it stands; ``-inf`` and ``inf`` are read."""
    good = "onset\toffset\tDog\tSpeech\n0.0\t0.5\t-inf\t0.2\n0.5\t1.0\tinf\t-INF\n"
    path = tmp_path / "a.tsv"
    path.write_text(good)
    table = read_scores(path)
    assert np.isneginf(table.scores[0, 0]) and np.isposinf(table.scores[1, 0])
    assert np.isneginf(table.scores[1, 1])
    for text in ("onset\toffset\tDog\tSpeech\n0.0\t0.5\t0.1\t0.2\n0.5\t1.0\tnan\t0.3\n",
                 "onset\toffset\tDog\tSpeech\n0.0\t0.5\t0.1\t0.2\n\n0.5\t1.0\tnan\t0.3\n"):
        path.write_text(text)
        with pytest.raises(TraceFormatError, match="never NaN") as error:
            read_scores(path)
        assert (error.value.row, error.value.column) == (text.count("\n"), "Dog")
    path.write_text("onset\toffset\tDog\n0.0\tinf\t0.1\n")
    with pytest.raises(TraceFormatError, match="not a finite number") as error:
        read_scores(path)
    assert error.value.column == "offset"
    frame = pd.DataFrame({"onset": [0.0, 0.5], "offset": [0.5, 1.0], "Dog": [-np.inf, np.nan]})
    with pytest.raises(TraceFormatError, match="never NaN") as error:
        psds({"a": frame}, {"a": [(0.0, 0.5, "Dog")]}, {"a": 1.0})
    assert (error.value.row, error.value.column) == (2, "Dog")


def test_windows_meeting_plus_and_minus_infinity_are_refused():
    """The mean of +inf and -inf is not a number: merging such windows stops and says where."""
    a = Piece(np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([[0.1], [np.inf]]))
    b = Piece(np.array([1.0, 2.0]), np.array([2.0, 3.0]), np.array([[-np.inf], [0.3]]))
    with pytest.raises(TraceFormatError, match="1–2 s score \\+inf and -inf"):
        overlap_average([a, b], where="file x")
    merged = overlap_average([a, Piece(b.onset, b.offset, np.array([[0.5], [0.3]]))])
    assert np.isposinf(merged.scores[1, 0])


def test_a_folder_of_sebb_files_decides_events_at_a_threshold(tmp_path):
    """Thresholded, the events are the boxes whose confidence is above the threshold (the
    +inf one included); -inf cells are never active."""
    folder, ref, _, boxes = sebb_corpus(tmp_path, seed=2, clips=6)
    events = detections(ScoreFolder.open(folder), read_events(ref),
                        DecisionPolicy(threshold=0.5), str(folder))
    got = sorted((c, on, off, label) for c, on, off, label in events.to_rows())
    expected = sorted((clip, on, off, label) for clip, kept in boxes.items()
                      for on, off, label, confidence in kept if confidence > 0.5)
    assert any(np.isinf(b[3]) for b in boxes["Y003"])
    assert [(c, label) for c, *_, label in got] == [(c, label) for c, *_, label in expected]
    np.testing.assert_allclose([e[1:3] for e in got], [e[1:3] for e in expected], atol=1e-9)
