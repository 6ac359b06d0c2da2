"""The function API on the field's data: sed_scores_eval's ``{clip: DataFrame}`` score tables,
``{clip: [(onset, offset, label)]}`` ground truth and DataFrames of DCASE rows, on the real DCASE
files — equal to sed_scores_eval's functions on the same objects and to the CLI on the same
files; and every example of ``docs/api.md`` runs."""

from __future__ import annotations

import json
import re
import tempfile
import warnings

import numpy as np
import pytest

import sedcontract
from sedcontract.errors import SedContractError, TraceFormatError
from tests.helpers.desed_recipe import merged_truth
from tests.helpers.paths import REPO
from tests.helpers.real_dcase import CLASSES, DURATIONS, FRAMES, HOP, REF, implied_scores

pd = pytest.importorskip("pandas")
DOCS = REPO / "docs" / "api.md"


@pytest.fixture(scope="module")
def field(teacher_points):
    """The real data as a participant holds it, read with pandas alone (not this project's
    readers): score DataFrames, the ground truth per clip (every clip, events as listed) and
    the durations."""
    frames = {}
    for clip, table in implied_scores(teacher_points).items():
        frame = pd.DataFrame(table, columns=list(CLASSES))
        frame.insert(0, "offset", (np.arange(FRAMES) + 1) * HOP)
        frame.insert(0, "onset", np.arange(FRAMES) * HOP)
        frames[clip] = frame
    rows = pd.read_csv(REF, sep="\t")
    truth: dict[str, list[tuple[float, float, str]]] = {}
    for name, on, off, label in zip(rows.filename, rows.onset, rows.offset, rows.event_label,
                                    strict=True):
        events = truth.setdefault(name.removesuffix(".wav"), [])
        if isinstance(label, str):
            events.append((float(on), float(off), label))
    seconds = pd.read_csv(DURATIONS, sep="\t")
    durations = dict(zip((n.removesuffix(".wav") for n in seconds.filename),
                         seconds.duration.astype(float), strict=True))
    return frames, truth, durations, rows, seconds


def sse():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_scores_eval
    return sed_scores_eval


def assert_same(ours, theirs, tol=1e-12):
    """``f, p, r`` dicts equal on every class and both averages."""
    for got, want in zip(ours[:3], theirs[:3], strict=True):
        assert set(got) == set(want)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=tol), key


@pytest.mark.parametrize("family", ["collar_based", "intersection_based", "segment_based"])
def test_fscores_of_score_dataframes_follow_sed_scores_eval(field, family):
    """``sedcontract.scores.<family>.fscore`` on the very objects sed_scores_eval takes, with
    its keywords: f, p, r per class, macro and micro average equal (every class has reference
    events here, so the declared NaN rule does not arise); tps, fps and n_ref too."""
    frames, truth, durations, _, _ = field
    truth = merged_truth(truth)
    ours_fn = getattr(sedcontract.scores, family).fscore
    theirs_fn = getattr(sse(), family).fscore
    keywords = {"collar_based": dict(onset_collar=0.2, offset_collar=0.2,
                                     offset_collar_rate=0.2),
                "intersection_based": dict(dtc_threshold=0.5, gtc_threshold=0.5),
                "segment_based": dict(segment_length=1.0)}[family]
    lead = (frames, truth, durations) if family == "segment_based" else (frames, truth)
    ours, theirs = ours_fn(*lead, 0.5, **keywords), theirs_fn(*lead, 0.5, **keywords)
    assert_same(ours, theirs)
    for name in CLASSES:
        assert {k: ours[3][name][k] for k in ("tps", "fps", "n_ref")} == \
            {k: int(theirs[3][name][k]) for k in ("tps", "fps", "n_ref")}, name
    assert 0.3 < ours[0]["micro_average"] < 0.9


def test_per_class_thresholds_and_an_offset_collar_of_its_own(field):
    """A threshold per class and ``offset_collar`` apart from ``onset_collar`` mean what they
    mean in sed_scores_eval."""
    frames, truth, _, _, _ = field
    truth = merged_truth(truth)
    thresholds = {c: 0.2 + 0.06 * k for k, c in enumerate(CLASSES)}
    keywords = dict(onset_collar=0.2, offset_collar=0.4, offset_collar_rate=0.1)
    ours = sedcontract.scores.collar_based.fscore(frames, truth, thresholds, **keywords)
    assert_same(ours, sse().collar_based.fscore(frames, truth, thresholds, **keywords))
    same_collar = sedcontract.scores.collar_based.fscore(frames, truth, thresholds,
                                                         onset_collar=0.2, offset_collar=0.2,
                                                         offset_collar_rate=0.1)
    assert ours[3]["micro_average"]["tps"] > same_collar[3]["micro_average"]["tps"]


def test_psds_of_score_dataframes_follows_sed_scores_eval_and_the_cli(field, teacher_scores,
                                                                      capsys):
    """PSDS alone, without event predictions: ``intersection_based.psds`` returns what
    sed_scores_eval's does (value, per class, the PSD-ROC, each class's curve), and
    ``sedcontract.psds`` on DataFrames (ground truth and durations as DCASE DataFrames too)
    is the CLI's number on the same data written as files, bit for bit."""
    frames, truth, durations, rows, seconds = field
    keywords = dict(dtc_threshold=0.1, gtc_threshold=0.1, cttc_threshold=0.3, alpha_ct=0.5,
                    alpha_st=1.0, max_efpr=100.0)
    ours = sedcontract.scores.intersection_based.psds(frames, merged_truth(truth), durations,
                                                      **keywords)
    theirs = sse().intersection_based.psds(frames, merged_truth(truth), durations, **keywords)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-12)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-12)
    np.testing.assert_allclose(ours[2][0], theirs[2][0], rtol=1e-12)
    np.testing.assert_allclose(ours[2][1], theirs[2][1], rtol=1e-12)
    for name in CLASSES:
        np.testing.assert_allclose(ours[3][name][0], theirs[3][name][0], rtol=1e-12)
        np.testing.assert_allclose(ours[3][name][1], theirs[3][name][1], rtol=1e-12)
    result = sedcontract.psds(frames, rows, seconds)
    assert main_json(["scores", "--ref", str(REF), "--durations", str(DURATIONS),
                      "--pred-scores", str(teacher_scores), "--format", "json"],
                     capsys)["psds"]["psds2"]["value"] == result["psds2"]["value"]
    assert result["psds2"]["value"] == pytest.approx(ours[0], rel=1e-12)
    assert round(result["psds1"]["value"], 7) == 0.3534991


def main_json(args, capsys):
    from sedcontract.cli import main

    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_scores_and_the_guard_vector_of_dataframes_are_the_clis(field, teacher_scores, capsys):
    """``sedcontract.score`` and ``sedcontract.audit`` take the DataFrames (score tables made
    events at the default threshold, which the report names) and give the CLI's numbers on the
    same data as files: every standard score's counts, and the whole guard report (but where
    the first event cut at its clip's end was found: a file and row, or ``scores[clip]``)."""
    frames, truth, durations, _, _ = field
    report = sedcontract.score(truth, frames, durations=durations)
    cli = main_json(["scores", "--ref", str(REF), "--durations", str(DURATIONS),
                     "--pred-scores", str(teacher_scores), "--format", "json"], capsys)
    for name, result in report.scores.items():
        overall = result.overall
        assert (overall.tp, overall.ref, overall.sys) == \
            tuple(cli["scores"][name][k] for k in ("tp", "ref", "sys")), name
    assert report.policy["decision"] == cli["policy"]["decision"] == "active iff score > 0.5"
    guard = sedcontract.audit(truth, frames, durations=durations)
    cli = main_json(["audit", "--ref", str(REF), "--durations", str(DURATIONS),
                     "--pred-scores", str(teacher_scores), "--format", "json"], capsys)
    ours = json.loads(sedcontract.to_json(guard))

    def located(report):  # where the first cut event is: a score file, or scores[clip]
        warnings = report["traces"].pop("warnings")
        return [re.sub(r" \(the first: .*\)$", "", w) for w in warnings]

    theirs = located(cli)
    assert located(ours) == theirs and len(theirs) == 2
    assert ours == cli


COLLARS = dict(onset_collar=0.2, offset_collar=0.2, offset_collar_rate=0.2)


def test_the_forms_are_refused_clearly(field):
    """Each mistake is one error naming the input (the clip, the row or event) — never a
    silently different number."""
    frames, truth, _, _, _ = field
    collar = sedcontract.scores.collar_based.fscore
    clip = next(iter(frames))
    with pytest.raises(SedContractError, match="threshold"):
        collar(frames, truth, **COLLARS)  # tables need a threshold
    for partial in ({clip: frames[clip]}, {}):  # clips of the ground truth without a table
        with pytest.raises(TraceFormatError, match="no score table for clip"):
            collar(partial, truth, 0.5, **COLLARS)
    with pytest.raises(TraceFormatError, match="does not list: 'extra'"):
        collar({**frames, "extra": frames[clip]}, truth, 0.5, **COLLARS)
    bad = frames[clip].rename(columns={"onset": "start"})
    with pytest.raises(TraceFormatError, match=r"first columns are onset and offset"):
        sedcontract.scores.intersection_based.fscore({**frames, clip: bad}, truth, 0.5,
                                                     dtc_threshold=0.5, gtc_threshold=0.5)
    shuffled = frames[clip][["onset", "offset", *reversed(CLASSES)]]
    with pytest.raises(TraceFormatError, match=r"has the columns .* every table scores"):
        collar({**frames, clip: shuffled}, truth, 0.5, **COLLARS)
    nan = frames[clip].copy()
    nan.loc[3, "Dog"] = float("nan")
    with pytest.raises(TraceFormatError, match=r"scores\[.*row 4, column 'Dog'.*never NaN"):
        collar({**frames, clip: nan}, truth, 0.5, **COLLARS)
    reversed_rows = frames[clip].iloc[::-1]
    with pytest.raises(TraceFormatError, match="not in time order"):
        collar({**frames, clip: reversed_rows}, truth, 0.5, **COLLARS)
    with pytest.raises(TraceFormatError, match=r"ground truth\['a'\] event 1"):
        collar({}, {"a": [(0.0, 1.0)]}, None, **COLLARS)
    with pytest.raises(TraceFormatError, match="not a number of seconds"):
        collar({}, {"a": [(0.0, "1", "Dog")]}, None, **COLLARS)
    with pytest.raises(TraceFormatError, match=r"ground truth\['b'\], row 2.*offset"):
        collar({"a": [], "b": []}, {"a": [(0.0, 1.0, "Dog")], "b": [(0.0, 1.0, "Dog"),
                                                                  (2.0, 1.5, "Dog")]},
               **COLLARS)
    with pytest.raises(TraceFormatError, match="durations"):
        sedcontract.scores.segment_based.fscore(frames, truth, {clip: -1.0}, 0.5)
    rows = pd.DataFrame({"filename": ["a.wav"], "onset": ["x"], "offset": [1.0],
                         "event_label": ["Dog"]})
    with pytest.raises(TraceFormatError, match=r"ref, row 1, column 'onset'.*'x' is not a"):
        sedcontract.score(rows, rows)
    with pytest.raises(TypeError, match="onset_collar"):  # required, as in sed_scores_eval
        collar(frames, truth, 0.5)


def test_tables_whatever_their_index_and_a_subset_of_classes(field):
    """A DataFrame's own index is not read (its positions are); ``classes`` scores a subset,
    each with its own threshold, as the whole set scores them."""
    frames, truth, _, _, _ = field
    shifted = {clip: frame.set_axis(frame.index + 100) for clip, frame in frames.items()}
    collar = sedcontract.scores.collar_based.fscore
    assert collar(shifted, merged_truth(truth), 0.5, **COLLARS)[0] == \
        collar(frames, merged_truth(truth), 0.5, **COLLARS)[0]
    some = ("Speech", "Dog")
    thresholds = {"Speech": 0.3, "Dog": 0.7}
    only = {clip: [e for e in events if e[2] in some]
            for clip, events in merged_truth(truth).items()}
    f, _, _, stats = collar(frames, only, thresholds, classes=some, **COLLARS)
    whole = collar(frames, merged_truth(truth), {**dict.fromkeys(CLASSES, 0.5), **thresholds},
                   **COLLARS)
    assert set(f) == {*some, "macro_average", "micro_average"}
    for name in some:
        assert f[name] == whole[0][name] and stats[name] == whole[3][name], name


def test_a_class_without_reference_events_is_nan_not_zero():
    """The one declared deviation: sed_scores_eval gives 0 to a class without references and
    averages it in; here its recall and F1 are NaN and the macro average skips it, saying over
    how many classes it ran."""
    truth = {"a": [(0.0, 1.0, "Dog")], "b": []}
    detections = {"a": [(0.0, 1.0, "Dog"), (2.0, 3.0, "Cat")], "b": []}
    f, p, r, stats = sedcontract.scores.collar_based.fscore(detections, truth, **COLLARS)
    assert np.isnan(f["Cat"]) and np.isnan(r["Cat"]) and p["Cat"] == 0.0
    assert f["Dog"] == 1.0 and f["macro_average"] == 1.0
    assert stats["macro_average"] == {"classes": 1}
    assert f["micro_average"] == pytest.approx(2 / 3)


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)


def test_the_api_page_has_examples():
    assert len(examples()) >= 6


@pytest.mark.parametrize("index", range(len(examples())))
def test_every_example_of_the_api_page_runs(index, tmp_path, monkeypatch, capsys):
    """Each example runs as written, in a fresh namespace, from the repository root (the
    examples read the real DCASE files under ``tests/data/real_dcase``), writing only to a
    temporary folder (here below the test's own)."""
    monkeypatch.chdir(DOCS.parents[1])
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where an example's temporary folder goes
    tempfile.tempdir = None
    try:
        exec(compile(examples()[index], f"{DOCS.name} example {index + 1}", "exec"),
             {"__name__": "__main__"})
    finally:
        tempfile.tempdir = None
    assert capsys.readouterr().out.strip(), "an example prints what it computed"


def test_durations_naming_a_clip_twice_are_refused_as_the_file_reader_refuses_them():
    """``a`` and ``a.wav`` are one clip; given two lengths (in a mapping or in DataFrame rows)
    the last one once won silently. The same length twice is one clip's duration."""
    from sedcontract.traces.given import durations_of

    truth = {"a": [(0.5, 1.5, "x")]}
    points = [pd.DataFrame({"filename": ["a.wav"], "onset": [0.5], "offset": [1.5],
                            "event_label": ["x"]})]
    for durations, where in (({"a": 10.0, "a.wav": 12.0}, "durations['a.wav']"),
                             (pd.DataFrame({"filename": ["a.wav", "a.wav"],
                                            "duration": [10.0, 12.0]}), "durations row 2")):
        with pytest.raises(TraceFormatError, match=f"{re.escape(where)}: clip 'a' listed twice "
                                                   "with different durations \\(10 s and 12 s\\)"):
            sedcontract.psds_of_points(points, truth, durations)
    assert durations_of({"a": 10.0, "a.wav": 10.0}) == {"a": 10.0}
    with pytest.raises(TraceFormatError, match=r"durations\['a'\] is 1e\+308, not a number of "
                                               r"seconds in \[0, 1e\+09\]"):
        durations_of({"a": 1e308})


def test_a_score_that_is_no_number_is_named_by_clip_row_and_class():
    """A ``'0.9x'`` in an object column, or ``pd.NA`` in a Float64 column, once gave "a score
    that is not a number" without the row and class the docs promise."""
    onsets = np.arange(3) * 0.1
    truth = {"clip1": [(0.0, 0.2, "Speech")]}
    for column, shown in ((pd.Series(["0.1", "0.9x", "0.2"], dtype=object), "'0.9x'"),
                          (pd.array([0.1, pd.NA, 0.3], dtype="Float64"), "<NA>")):
        frame = pd.DataFrame({"onset": onsets, "offset": onsets + 0.1, "Speech": 0.1,
                              "Dog": column})
        with pytest.raises(TraceFormatError, match=re.escape(
                f"scores['clip1'], row 2, column 'Dog': score {shown} is not a number")) as info:
            sedcontract.scores.collar_based.fscore({"clip1": frame}, truth, threshold=0.5,
                                                   onset_collar=0.2, offset_collar=0.2)
        assert isinstance(info.value, ValueError)


def test_a_mapping_with_one_table_names_the_clip_that_is_no_table():
    """``{clip1: <list>, clip2: DataFrame}`` with a threshold was refused as detections ("a
    threshold is for score tables"), blaming the wrong thing; clip1 is named now."""
    onsets = np.arange(3) * 0.1
    frame = pd.DataFrame({"onset": onsets, "offset": onsets + 0.1, "Speech": 0.9})
    truth = {"clip1": [(0.0, 0.2, "Speech")], "clip2": [(0.0, 0.2, "Speech")]}
    with pytest.raises(TraceFormatError, match=re.escape("scores['clip1'] is list; a score "
                                                         "table is a DataFrame")):
        sedcontract.scores.collar_based.fscore({"clip1": [1, 2], "clip2": frame}, truth,
                                               threshold=0.5, onset_collar=0.2,
                                               offset_collar=0.2)


def test_operating_points_as_threshold_to_table_or_a_list_and_one_table_refused():
    """``psds_of_points({'0.5': df}, …)`` once read the key '0.5' as a file name ("0.5: file
    not found"); a mapping of threshold → table is the points, and one table is refused."""
    truth = {"a": [(0.5, 1.5, "x")]}
    table = pd.DataFrame({"filename": ["a.wav"], "onset": [0.5], "offset": [1.5],
                          "event_label": ["x"]})
    by_threshold = sedcontract.psds_of_points({"0.5": table}, truth, {"a": 4.0})
    assert by_threshold["psds1"]["value"] == \
        sedcontract.psds_of_points([table], truth, {"a": 4.0})["psds1"]["value"] == 1.0
    for one in (table, truth, "points.tsv"):
        with pytest.raises(TraceFormatError, match=r"points are a list of operating-point "
                                                   r"tables .*; got one table"):
            sedcontract.psds_of_points(one, truth, {"a": 4.0})


def test_dataframe_rows_are_numbered_from_one_and_a_row_with_only_an_offset_is_refused():
    """Rows are the DataFrame's positions from 1, whatever its index: a row with a filename
    only declares a clip without events, but one with an offset and no onset or label is a
    broken event, named by its row and column; a later error (offset before onset) names the
    row too."""
    frame = pd.DataFrame({"filename": ["a.wav", "b.wav", "c.wav"],
                          "onset": [0.5, np.nan, np.nan], "offset": [1.5, np.nan, 2.0],
                          "event_label": ["x", np.nan, np.nan]}, index=[10, 11, 12])
    with pytest.raises(TraceFormatError, match=r"^ref, row 3, column 'onset': missing value$"):
        sedcontract.score(frame, frame)
    declared = frame.iloc[:2]  # b.wav: a clip without events
    events = sedcontract.traces.given.events_of(declared, "ref")
    assert events.clips == ("a", "b") and len(events) == 1
    backwards = pd.DataFrame({"filename": ["a.wav"] * 3, "onset": [0.0, 1.0, 3.0],
                              "offset": [0.5, 2.0, 2.5], "event_label": ["x"] * 3})
    with pytest.raises(TraceFormatError, match=r"^ref, row 3, column 'offset'"):
        sedcontract.score(backwards, backwards)
    durations = pd.DataFrame({"filename": ["a.wav", "b.wav"], "duration": [4.0, -1.0]})
    with pytest.raises(TraceFormatError, match=r"^durations row 2 is -1\.0"):
        sedcontract.traces.given.durations_of(durations)
    scores = pd.DataFrame({"onset": [0.0, 0.1], "offset": [0.1, 0.2], "x": [0.2, np.nan]})
    with pytest.raises(TraceFormatError, match=r"^scores\['a'\], row 2, column 'x'"):
        sedcontract.scores.collar_based.fscore({"a": scores}, {"a": []}, 0.5, **COLLARS)


def test_psd_roc_gives_the_roc_and_each_classs_curve_as_sed_scores_eval(field):
    """``intersection_based.psd_roc``: ``((etpr, efpr), {class: (tpr, efpr, …)})`` as
    sed_scores_eval's — the effective TPR first, and each class's TPR before its eFPR — and
    the same curves ``psds`` returns."""
    frames, truth, durations, _, _ = field
    keywords = dict(dtc_threshold=0.7, gtc_threshold=0.7, alpha_st=1.0, max_efpr=100.0)
    (etpr, efpr), classes = sedcontract.scores.intersection_based.psd_roc(
        frames, merged_truth(truth), durations, **keywords)
    (their_etpr, their_efpr), theirs = sse().intersection_based.psd_roc(
        frames, merged_truth(truth), durations, **keywords)
    np.testing.assert_allclose(etpr, their_etpr, rtol=1e-12)
    np.testing.assert_allclose(efpr, their_efpr, rtol=1e-12)
    assert list(classes) == list(theirs) == list(CLASSES)
    for name in CLASSES:
        tpr, class_efpr = classes[name][:2]
        np.testing.assert_allclose(tpr, theirs[name][0], rtol=1e-12)
        np.testing.assert_allclose(class_efpr, theirs[name][1], rtol=1e-12)
        assert tpr.max() <= 1.0 < class_efpr.max()  # rates, then per-hour rates
    psds = sedcontract.scores.intersection_based.psds(frames, merged_truth(truth), durations,
                                                      **keywords)
    np.testing.assert_array_equal(psds[2][0], etpr)
    for name in CLASSES:
        np.testing.assert_array_equal(psds[3][name][0], classes[name][0])


def _tiny():
    """Two clips of score DataFrames, their ground truth and durations."""
    k = np.arange(20)
    frames = {clip: pd.DataFrame({"onset": k * 0.1, "offset": (k + 1) * 0.1,
                                  "Speech": np.linspace(0, 1, 20), "Dog": v})
              for clip, v in (("a", 0.3), ("b", 0.7))}
    return frames, {"a": [(0.2, 1.0, "Speech")], "b": [(0.5, 1.5, "Dog")]}, {"a": 2.0, "b": 2.0}


def _bad_calls():
    """(what, call, message) of API calls with one bad value or object each."""
    frames, truth, durations = _tiny()
    collar, segment = sedcontract.scores.collar_based, sedcontract.scores.segment_based
    intersection = sedcontract.scores.intersection_based
    report = sedcontract.audit(truth, truth, durations=durations)
    c = dict(onset_collar=0.2, offset_collar=0.2)
    return [
        ("negative collar", lambda: collar.fscore(frames, truth, 0.5, onset_collar=-1,
                                                  offset_collar=0.2),
         r"onset_collar must be a finite number in \[0, 1e\+09\], got -1"),
        ("collar as text", lambda: collar.fscore(frames, truth, 0.5, onset_collar=0.2,
                                                 offset_collar="0.2"),
         r"offset_collar must be a finite number .*got '0.2'"),
        ("NaN collar", lambda: collar.fscore(frames, truth, 0.5, onset_collar=np.nan,
                                             offset_collar=0.2), r"onset_collar .* got nan"),
        ("negative rate", lambda: collar.fscore(frames, truth, 0.5, offset_collar_rate=-1, **c),
         r"offset_collar_rate must be a finite number >= 0, got -1"),
        ("segment of 0 s", lambda: segment.fscore(frames, truth, durations, 0.5,
                                                  segment_length=0),
         r"segment_length must be a finite number in \[1e-06, 1e\+09\], got 0"),
        ("segment of 1e300 s", lambda: segment.fscore(frames, truth, durations, 0.5,
                                                      segment_length=1e300),
         r"segment_length .* got 1e\+300"),
        ("dtc above 1", lambda: intersection.fscore(frames, truth, 0.5, dtc_threshold=2,
                                                    gtc_threshold=0.5),
         r"dtc_threshold must be a finite number in \[0, 1\], got 2"),
        ("PSDS settings a list", lambda: sedcontract.psds(frames, truth, durations, ["psds1"]),
         r"PSDS settings are a mapping of scenario name → PsdsSettings .*got list"),
        ("PSDS scenario no settings", lambda: sedcontract.psds(frames, truth, durations,
                                                               {"x": "dtc=0.5"}),
         r"PSDS scenario 'x' is str, not PsdsSettings"),
        ("AUROC settings text", lambda: sedcontract.segment_auroc(frames, truth, durations,
                                                                  "x"),
         r"AUROC settings are an AurocSettings, got str"),
        ("audit psds a name", lambda: sedcontract.audit(truth, truth, durations=durations,
                                                        psds="psds1"),
         r"psds must be a PsdsRequest or None, got str"),
        ("score auroc a number", lambda: sedcontract.score(truth, truth, durations=durations,
                                                           auroc=3),
         r"auroc must be an AurocRequest or None, got int"),
        ("shard as text", lambda: sedcontract.audit(truth, truth, durations=durations,
                                                    shard="1/2"),
         r"shard must be a pair \(index, count\), got '1/2'"),
        ("bootstrap of a dict", lambda: sedcontract.bootstrap_intervals({"a": 1}),
         r"report must be a GuardReport, got dict"),
        ("bootstrap scores as text", lambda: sedcontract.bootstrap_intervals(
            report, scores="yes", resamples=10), r"scores must be a bool, got str"),
        ("paired with a list inside", lambda: sedcontract.paired_bootstrap([report, [1]],
                                                                           report),
         r"each report must be a GuardReport, got list"),
        ("write a mapping", lambda: sedcontract.write_events("never.tsv", truth),
         r"events must be an EventList, got dict"),
        ("check a text", lambda: sedcontract.check_contract("G ref.active"),
         r"contract must be a Contract, got str"),
        ("rows of a number", lambda: sedcontract.to_csv(3), r"report must be a GuardReport"),
    ]


@pytest.mark.parametrize("index", range(19))
def test_a_bad_value_or_object_is_a_valueerror_naming_the_keyword(index, tmp_path,
                                                                   monkeypatch):
    """Each once ended in a numpy error, an AttributeError or a TypeError from deep inside
    (a negative collar: "repeats may not contain negative values"), or was taken (a NaN
    collar, a dtc of 2, a segment of 0 s): now a ``ValueError`` naming the keyword, and
    nothing written."""
    monkeypatch.chdir(tmp_path)
    calls = _bad_calls()
    assert len(calls) == 19  # one test each
    what, call, message = calls[index]
    with pytest.raises(SedContractError, match=message) as info:
        call()
    assert isinstance(info.value, ValueError), what
    assert list(tmp_path.iterdir()) == [], what
