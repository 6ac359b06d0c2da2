"""A drop-in for sed_scores_eval as DESED_task's DCASE 2024 recipe calls it: the script in the
shape of the recipe's evaluation (``tests/helpers/desed_recipe.py``) runs with only its imports
changed and gives sed_scores_eval's numbers on a generated corpus (on the real DESED
validation files: ``tests/system/test_desed_recipe.py``). Then each drop-in call against its
oracle: return shapes, ``unit_of_time``, ``num_jobs``, ``bootstrapped_psds`` and ``io``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sedcontract.errors import SedContractError
from tests.helpers.desed_recipe import OURS, THEIRS, assert_same, run_recipe
from tests.helpers.real_dcase import DURATIONS, REF
from tests.helpers.score_tables import corpus

pd = pytest.importorskip("pandas")
pytest.importorskip("sed_scores_eval")

def test_the_recipe_gives_sed_scores_evals_numbers_on_a_generated_corpus(tmp_path):
    """A generated corpus with dense scores (ties, unscored tails), written as DCASE files."""
    from sedcontract.traces import write_durations, write_events

    ref, tables, durations, classes = corpus(11, clips=12, n_classes=3, frames=60, hop=0.064)
    ref = ref.merged()
    write_events(tmp_path / "ref.tsv", ref)
    write_durations(tmp_path / "durations.tsv", durations)
    frames = {clip: t.scores for clip, t in tables.items()}
    args = (frames, classes, 0.064, str(tmp_path / "ref.tsv"), str(tmp_path / "durations.tsv"),
            [1, 3, 5])
    assert_same(run_recipe(OURS, *args, str(tmp_path / "ours")),
                run_recipe(THEIRS, *args, str(tmp_path / "theirs")))


def sse():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_scores_eval
    return sed_scores_eval


@pytest.fixture(scope="module")
def generated():
    """Score DataFrames, merged ground truth and durations of a generated corpus."""
    from sedcontract.scores.io import create_score_dataframe

    ref, tables, durations, classes = corpus(5, clips=10, n_classes=3, frames=50, levels=20)
    truth = {clip: [] for clip in ref.clips}
    for clip, on, off, label in ref.merged().to_rows():
        truth[clip].append((on, off, label))
    frames = {clip: create_score_dataframe(t.scores, np.append(t.onset, t.offset[-1]),
                                           list(classes)) for clip, t in tables.items()}
    return frames, truth, durations


def test_psds_in_minutes_and_on_processes_and_its_bootstrap(generated):
    """``unit_of_time='minute'`` scales the eFPR axis and ``max_efpr`` (sed_scores_eval's
    numbers); ``num_jobs=2`` gives one process's result; ``bootstrapped_psds`` gives its
    folds' values, per-class values and curves (the folds drawn as it draws them), on two
    processes too."""
    from sedcontract.scores import intersection_based as ours

    frames, truth, durations = generated
    keywords = dict(dtc_threshold=0.5, gtc_threshold=0.5, alpha_st=1.0, unit_of_time="minute",
                    max_efpr=200.0)
    mine = ours.psds(frames, truth, durations, **keywords)
    assert_same(mine, sse().intersection_based.psds(frames, truth, durations, **keywords))
    assert_same(ours.psds(frames, truth, durations, num_jobs=2, **keywords), mine)
    assert_same(ours.psd_roc(frames, truth, durations, **keywords), mine[2:])
    folds = dict(n_folds=3, n_iterations=2)
    theirs = sse().intersection_based.bootstrapped_psds(frames, truth, durations, **keywords,
                                                        **folds)
    got = ours.bootstrapped_psds(frames, truth, durations, **keywords, **folds)
    assert len(got) == 4 and len(got[0]) == 6
    assert_same(got[:3], theirs[:3])
    on_two = ours.bootstrapped_psds(frames, truth, durations, **keywords, **folds, num_jobs=2)
    assert got[:2] == on_two[:2]  # counted in two blocks: the same values, bit for bit
    assert_same(on_two, got)
    for a, b in zip(got[3], theirs[3], strict=True):  # each class's (tpr, efpr) per fold
        assert_same({k: v[:2] for k, v in a.items()}, {k: v[:2] for k, v in b.items()})


def test_segment_roc_best_fscore_and_fscore_keywords(generated):
    """``roc_curve`` and ``auroc`` give ``(tpr, fpr, thresholds, stats)`` per class;
    ``best_fscore`` its five dicts under minimum precision and recall and another beta;
    ``num_jobs`` gives one process's result; a ``time_decimals`` other than 6 is refused."""
    from sedcontract.scores import collar_based, segment_based

    frames, truth, durations = generated
    theirs = sse().segment_based
    assert_same(segment_based.roc_curve(frames, truth, durations, segment_length=0.5),
                theirs.roc_curve(frames, truth, durations, segment_length=0.5))
    assert_same(segment_based.auroc(frames, truth, durations, segment_length=1.0, max_fpr=0.2,
                                    num_jobs=2),
                theirs.auroc(frames, truth, durations, segment_length=1.0, max_fpr=0.2))
    for keywords in (dict(), dict(min_precision=0.6, min_recall=0.3, beta=2.0)):
        assert_same(segment_based.best_fscore(frames, truth, durations, **keywords),
                    theirs.best_fscore(frames, truth, durations, **keywords))
    collar = dict(threshold=0.4, onset_collar=0.2, offset_collar=0.2, offset_collar_rate=0.2)
    assert_same(collar_based.fscore(frames, truth, num_jobs=2, time_decimals=6, **collar),
                collar_based.fscore(frames, truth, **collar))
    with pytest.raises(SedContractError, match=r"time_decimals=3: times are whole "
                                               r"microseconds here"):
        collar_based.fscore(frames, truth, time_decimals=3, **collar)
    with pytest.raises(SedContractError, match="num_jobs must be a whole number >= 1"):
        segment_based.auroc(frames, truth, durations, segment_length=1.0, num_jobs=0)


def test_io_reads_and_writes_as_sed_scores_eval(tmp_path, generated):
    """Ground truth from a file and from a DataFrame, durations, score DataFrames made and
    checked, and score folders written byte for byte as sed_scores_eval writes them."""
    from sedcontract.scores import io

    frames, _, _ = generated
    for source in (REF, pd.read_csv(REF, sep="\t")):
        assert io.read_ground_truth_events(source) == sse().io.read_ground_truth_events(source)
    assert io.read_audio_durations(DURATIONS) == sse().io.read_audio_durations(DURATIONS)
    clip = next(iter(frames))
    times, classes = io.validate_score_dataframe(frames[clip])
    theirs = sse().io.validate_score_dataframe(frames[clip])
    np.testing.assert_array_equal(times, theirs[0])
    assert classes == theirs[1]
    io.write_sed_scores(frames, tmp_path / "ours")
    sse().io.write_sed_scores(frames, str(tmp_path / "theirs"))
    for name in frames:
        assert (tmp_path / "ours" / f"{name}.tsv").read_bytes() == \
            (tmp_path / "theirs" / f"{name}.tsv").read_bytes()
    back = io.read_sed_scores(tmp_path / "ours")
    assert set(back) == set(frames) and back[clip].equals(frames[clip])
    shuffled = frames[clip].iloc[::-1]
    with pytest.raises(SedContractError, match="not in time order"):
        io.write_sed_scores({clip: shuffled}, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()  # checked before the folder is made


def test_plot_psd_roc_draws_the_pair_and_refuses_anything_else(tmp_path, generated):
    """``utils.visualization.plot_psd_roc`` saves the PSD-ROC it is given as sed_scores_eval
    does; a dict (what DESED_task's recipe passes when it unpacks a 4-tuple as 3) is refused
    as a ValueError, as there."""
    from sedcontract.scores import intersection_based
    from sedcontract.scores.utils.visualization import plot_psd_roc

    frames, truth, durations = generated
    value, per_class, roc, _ = intersection_based.psds(frames, truth, durations,
                                                       dtc_threshold=0.5, gtc_threshold=0.5)
    keywords = dict(dtc_threshold=0.5, gtc_threshold=0.5, cttc_threshold=None, alpha_ct=0.0,
                    alpha_st=0.0, unit_of_time="hour", max_efpr=100.0, psds=value)
    plot_psd_roc(roc, filename=tmp_path / "roc.png", **keywords)
    assert (tmp_path / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for wrong in (per_class, (roc[0],)):
        with pytest.raises(ValueError, match=r"the PSD-ROC is the pair \(etpr, efpr\)"):
            plot_psd_roc(wrong, **keywords)
        with pytest.raises(ValueError, match="psd roc needs to be given as a tuple"):
            sse().utils.visualization.plot_psd_roc(wrong, **keywords)


def test_intersection_best_fscore_is_sed_scores_evals(generated):
    """``intersection_based.best_fscore``: each class's best F, its threshold and counts, and
    the averages, as sed_scores_eval's, under its defaults and under minimums and another
    beta; ``num_jobs=2`` gives one process's result."""
    from sedcontract.scores import intersection_based

    frames, truth, _ = generated
    for keywords in (dict(dtc_threshold=0.5, gtc_threshold=0.5),
                     dict(dtc_threshold=0.7, gtc_threshold=0.3, min_precision=0.5,
                          min_recall=0.2, beta=0.5)):
        ours = intersection_based.best_fscore(frames, truth, **keywords)
        theirs = sse().intersection_based.best_fscore(frames, truth, **keywords)
        assert_same(ours[:4], theirs[:4])
        for name, stats in theirs[4].items():
            assert {k: ours[4][name][k] for k in ("tps", "fps", "n_ref")} == \
                {k: float(stats[k]) for k in ("tps", "fps", "n_ref")}, name
    assert_same(intersection_based.best_fscore(frames, truth, num_jobs=2, **keywords), ours)
