"""DESED_task's DCASE 2024 evaluation as a script in the shape of its recipe, run with
sed_scores_eval's imports or this project's (the drop-in's test), and a deep comparison of
their results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

THEIRS = ("import sed_scores_eval\n"
          "from sed_scores_eval.base_modules.scores import create_score_dataframe, "
          "validate_score_dataframe\n")
OURS = ("import sedcontract.scores as sed_scores_eval\n"
        "from sedcontract.scores.io import create_score_dataframe, validate_score_dataframe\n")

# The recipe's evaluation, as sed_trainer_pretrained.py and evaluation_measures.py make its
# calls (names, keywords, what is read from each result); only the imports above differ.
RECIPE = '''
import numpy as np
from scipy.ndimage import median_filter


def class_wise_median_filter(scores, lengths):
    return np.stack([median_filter(scores[:, c][:, None], (lengths[c], 1))[:, 0]
                     for c in range(scores.shape[1])], -1)


def merge_overlapping_events(events):
    out = []
    for onset, offset, label in sorted(events, key=lambda e: (e[2], e[0])):
        if out and out[-1][2] == label and onset <= out[-1][1]:
            out[-1][1] = max(out[-1][1], offset)
        else:
            out.append([onset, offset, label])
    return out


def compute_psds_from_scores(scores, ground_truth_file, durations_file, dtc_threshold=0.5,
                             gtc_threshold=0.5, cttc_threshold=0.3, alpha_ct=0, alpha_st=0,
                             max_efpr=100, num_jobs=4, save_dir=None):
    psds, single_class_psds, psd_roc, single_class_rocs, *_ = \\
        sed_scores_eval.intersection_based.psds(
            scores=scores, ground_truth=ground_truth_file, audio_durations=durations_file,
            dtc_threshold=dtc_threshold, gtc_threshold=gtc_threshold,
            cttc_threshold=cttc_threshold, alpha_ct=alpha_ct, alpha_st=alpha_st,
            max_efpr=max_efpr, num_jobs=num_jobs)
    if save_dir is not None:
        sed_scores_eval.io.write_sed_scores(scores, save_dir + "/scores")
        sed_scores_eval.utils.visualization.plot_psd_roc(
            psd_roc, filename=save_dir + "/psd_roc.png", dtc_threshold=dtc_threshold,
            gtc_threshold=gtc_threshold, cttc_threshold=cttc_threshold, alpha_ct=alpha_ct,
            alpha_st=alpha_st, unit_of_time="hour", max_efpr=max_efpr, psds=psds)
    return psds, single_class_psds, psd_roc, single_class_rocs


def evaluate(frame_scores, classes, hop, tsv, durations_tsv, filter_lengths, save_dir):
    ground_truth = sed_scores_eval.io.read_ground_truth_events(tsv)
    ground_truth = {k: merge_overlapping_events(v) for k, v in ground_truth.items()
                    if len(v) > 0}
    audio_durations = sed_scores_eval.io.read_audio_durations(durations_tsv)
    audio_durations = {k: audio_durations[k] for k in ground_truth.keys()}
    scores = {}
    for clip in ground_truth:
        c_scores = class_wise_median_filter(frame_scores[clip], filter_lengths)
        scores[clip] = create_score_dataframe(
            scores=c_scores, timestamps=np.arange(len(c_scores) + 1) * hop,
            event_classes=list(classes))
        validate_score_dataframe(scores[clip])
    out = {}
    for name, kw in (("psds1", dict(dtc_threshold=0.7, gtc_threshold=0.7, cttc_threshold=None,
                                    alpha_ct=0, alpha_st=1)),
                     ("psds2", dict(dtc_threshold=0.1, gtc_threshold=0.1, cttc_threshold=0.3,
                                    alpha_ct=0.5, alpha_st=1))):
        out[name] = compute_psds_from_scores(scores, ground_truth, audio_durations,
                                             num_jobs=2, save_dir=save_dir + "/" + name, **kw)
    out["intersection"] = sed_scores_eval.intersection_based.fscore(
        scores, ground_truth, threshold=0.5, dtc_threshold=0.5, gtc_threshold=0.5)[0]
    out["collar"] = sed_scores_eval.collar_based.fscore(
        scores, ground_truth, threshold=0.5, onset_collar=0.2, offset_collar=0.2,
        offset_collar_rate=0.2)[0]
    out["segment"] = sed_scores_eval.segment_based.best_fscore(
        scores, ground_truth, audio_durations, segment_length=1.0)
    out["mauc"] = sed_scores_eval.segment_based.auroc(
        scores, ground_truth, audio_durations, segment_length=1.0)[0]
    out["mpauc"] = sed_scores_eval.segment_based.auroc(
        scores, ground_truth, audio_durations, segment_length=1.0, max_fpr=0.1)[0]
    out["written"] = sed_scores_eval.io.read_sed_scores(save_dir + "/psds1/scores")
    import os
    out["plots"] = [os.path.getsize(save_dir + f"/{n}/psd_roc.png") > 10_000
                    for n in ("psds1", "psds2")]
    return out
'''


def run_recipe(imports: str, *args):
    namespace: dict = {"__name__": "recipe"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sed_scores_eval's own deprecation noise
        exec(compile(imports + RECIPE, "recipe", "exec"), namespace)
        return namespace["evaluate"](*args)


def assert_same(ours, theirs, path="") -> None:
    """Every number of the two results equal to 1e-9 (arrays and DataFrames too), the same
    structure (tuples, dicts and their keys)."""
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs), path
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, tuple | list):
        assert len(ours) == len(theirs), path
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(a, b, f"{path}[{k}]")
    elif hasattr(theirs, "to_numpy"):
        assert list(ours.columns) == list(theirs.columns), path
        np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-12, err_msg=path)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(np.asarray(ours, dtype=float), theirs.astype(float),
                                   rtol=1e-9, atol=1e-12, err_msg=path)
    elif isinstance(theirs, float | np.floating | int | np.integer):
        assert ours == pytest.approx(float(theirs), rel=1e-9, abs=1e-12, nan_ok=True), path
    else:
        assert ours == theirs, path


def merged_truth(truth: dict) -> dict:
    """Ground truth ``{clip: [[onset, offset, label], …]}`` with overlapping or touching events
    of a class joined, as the recipe's own merge (sed_scores_eval refuses them)."""
    out = {}
    for clip, events in truth.items():
        joined: list[list] = []
        for on, off, label in sorted(events, key=lambda e: (e[2], e[0])):
            if joined and joined[-1][2] == label and on <= joined[-1][1]:
                joined[-1][1] = max(joined[-1][1], off)
            else:
                joined.append([on, off, label])
        out[clip] = joined
    return out
