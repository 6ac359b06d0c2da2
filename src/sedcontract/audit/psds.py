"""PSDS1 / PSDS2 with the DCASE 2024 Task 4 settings, computed by sed_scores_eval (the
official implementation, an optional dependency) from score files and our reference."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.scores import ScoreTable


class PsdsUnavailable(SedContractError):
    """PSDS cannot be computed here (library missing, no durations, or the library refused the
    data); the report carries the reason instead of a number."""

# DCASE 2024 Task 4
PSDS_SETTINGS: dict[str, dict[str, float]] = {
    "psds1": {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_ct": 0.0, "alpha_st": 1.0,
              "max_efpr": 100.0},
    "psds2": {"dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3,
              "alpha_ct": 0.5, "alpha_st": 1.0, "max_efpr": 100.0},
}


def ground_truth(ref: EventList) -> dict[str, list[tuple[float, float, str]]]:
    """Reference events per clip, overlapping or touching same-class events merged
    (sed_scores_eval rejects them; the guard report counts them as merged)."""
    truth: dict[str, list[tuple[float, float, str]]] = {clip: [] for clip in ref.clips}
    for clip, on, off, label in ref.merged().to_rows():
        truth[clip].append((on, off, label))
    return truth


def psds(scores: str | Path | Mapping[str, tuple[ScoreTable, str]], ref: EventList,
         durations: Mapping[str, float] | None) -> dict[str, Any]:
    """``{"psds1": {"value", "per_class", "settings"}, "psds2": …}`` of a directory of score
    files, or of score tables already read (:func:`~sedcontract.traces.scores.read_score_dir`:
    class-mapped, windows merged)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dcase_util imports pkg_resources
            from sed_scores_eval import intersection_based, io
            from sed_scores_eval.base_modules.scores import create_score_dataframe
    except ImportError:
        raise PsdsUnavailable("PSDS needs the optional sed_scores_eval: "
                              "pip install 'sedcontract[psds]'") from None
    if durations is None:
        raise PsdsUnavailable("PSDS needs clip durations (--durations)")
    scores_dir = scores if isinstance(scores, str | Path) else "the score files"
    if isinstance(scores, str | Path):
        try:
            scores = io.read_sed_scores(Path(scores))
        except (ValueError, KeyError, OSError) as exc:
            raise SedContractError(f"{scores}: sed_scores_eval cannot read these score files: "
                                   f"{exc}") from None
    else:
        scores = {clip: create_score_dataframe(
            table.scores, np.concatenate([table.onset, table.offset[-1:]]), table.classes)
            for clip, (table, _) in scores.items()}
    truth = ground_truth(ref)
    missing = sorted(set(truth) - set(scores))
    if missing:
        raise SedContractError(f"{scores_dir}: no score file for clip(s) {', '.join(missing[:5])}")
    audio = {clip: float(durations[clip]) for clip in truth}
    out = {}
    for name, settings in PSDS_SETTINGS.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value, per_class, *_ = intersection_based.psds(
                    {clip: scores[clip] for clip in truth}, truth, audio, **settings)
        except (AssertionError, ValueError, KeyError) as exc:
            raise PsdsUnavailable(f"sed_scores_eval refused the data for {name}: {exc}") from None
        out[name] = {"value": float(value),
                     "per_class": {c: float(v) for c, v in per_class.items()},
                     "settings": settings}
    return out
