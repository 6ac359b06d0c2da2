"""The script in the shape of DESED_task's DCASE 2024 evaluation (``tests/helpers/
desed_recipe.py``) on the real DESED validation files: with only its imports changed, this
project gives sed_scores_eval's numbers."""

from __future__ import annotations

import pytest

from tests.helpers.desed_recipe import OURS, THEIRS, assert_same, merged_truth, run_recipe
from tests.helpers.real_dcase import CLASSES, DURATIONS, FRAMES, HOP, REF, implied_scores

pytest.importorskip("pandas")
pytest.importorskip("sed_scores_eval")


def test_the_recipe_gives_sed_scores_evals_numbers_on_desed_validation(teacher_points,
                                                                      tmp_path):
    """DESED validation (1,168 clips, 10 classes), the DCASE baseline's own frame scores,
    its median filter lengths: every number the recipe reads, and the rest of each result
    (PSD-ROCs, per-class curves with thresholds, best thresholds and their counts), equal."""
    frames = implied_scores(teacher_points)
    lengths = [3, 9, 9, 5, 5, 5, 9, 7, 11, 9]  # the recipe's, in its class order
    args = (frames, CLASSES, HOP, str(REF), str(DURATIONS), lengths)
    ours = run_recipe(OURS, *args, str(tmp_path / "ours"))
    theirs = run_recipe(THEIRS, *args, str(tmp_path / "theirs"))
    assert_same(ours, theirs)
    assert round(ours["psds1"][0], 4) > 0.3 and len(ours["written"]) == len(theirs["written"])
    assert all(f.shape == (FRAMES, 2 + len(CLASSES)) for f in ours["written"].values())
    for clip in list(theirs["written"])[:20]:  # the files the recipe writes, byte for byte
        for name in ("psds1", "psds2"):
            assert (tmp_path / "ours" / name / "scores" / f"{clip}.tsv").read_bytes() == \
                (tmp_path / "theirs" / name / "scores" / f"{clip}.tsv").read_bytes()


def test_intersection_best_fscore_on_desed_validation(teacher_points):
    """``intersection_based.best_fscore`` (dtc = gtc = 0.5) on DESED validation: sed_scores_eval's
    F, precision, recall and threshold of every class and both averages."""
    import warnings

    import numpy as np

    from sedcontract.scores import intersection_based
    from sedcontract.scores.io import create_score_dataframe, read_ground_truth_events

    frames = {clip: create_score_dataframe(s, np.arange(len(s) + 1) * HOP, list(CLASSES))
              for clip, s in implied_scores(teacher_points).items()}
    truth = merged_truth(read_ground_truth_events(REF))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_scores_eval
    keywords = dict(dtc_threshold=0.5, gtc_threshold=0.5)
    assert_same(intersection_based.best_fscore(frames, truth, **keywords)[:4],
                sed_scores_eval.intersection_based.best_fscore(frames, truth, **keywords)[:4])
