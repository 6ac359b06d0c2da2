"""PSDS1 / PSDS2 with the DCASE 2024 Task 4 settings, computed by sed_scores_eval (the
official implementation, an optional dependency) from score files and our reference."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sedcontract.errors import SedContractError
from sedcontract.traces import EventList


class PsdsUnavailable(SedContractError):
    """sed_scores_eval is not installed."""

# DCASE 2024 Task 4
PSDS_SETTINGS: dict[str, dict[str, float]] = {
    "psds1": {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_ct": 0.0, "alpha_st": 1.0,
              "max_efpr": 100.0},
    "psds2": {"dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3,
              "alpha_ct": 0.5, "alpha_st": 1.0, "max_efpr": 100.0},
}


def ground_truth(ref: EventList) -> dict[str, list[tuple[float, float, str]]]:
    """Reference events per clip with overlapping or touching same-class events merged
    (sed_scores_eval rejects them; the guard report counts them as merged)."""
    merged: dict[str, list[list[Any]]] = {clip: [] for clip in ref.clips}
    for clip, on, off, label in sorted(ref.to_rows(), key=lambda e: (e[0], e[3], e[1])):
        events = merged[clip]
        if events and events[-1][2] == label and on <= events[-1][1]:
            events[-1][1] = max(events[-1][1], off)
        else:
            events.append([on, off, label])
    return {clip: [tuple(e) for e in events] for clip, events in merged.items()}


def psds(scores_dir: str | Path, ref: EventList,
         durations: Mapping[str, float] | None) -> dict[str, Any]:
    """``{"psds1": {"value", "per_class", "settings"}, "psds2": …}``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dcase_util imports pkg_resources
            from sed_scores_eval import intersection_based, io
    except ImportError:
        raise PsdsUnavailable("PSDS needs the optional sed_scores_eval: "
                              "pip install 'sedcontract[psds]'") from None
    if durations is None:
        raise SedContractError("PSDS needs clip durations (--durations)")
    try:
        scores = io.read_sed_scores(Path(scores_dir))
    except (ValueError, KeyError, OSError) as exc:
        raise SedContractError(f"{scores_dir}: sed_scores_eval cannot read these score files: "
                               f"{exc}") from None
    truth = ground_truth(ref)
    missing = sorted(set(truth) - set(scores))
    if missing:
        raise SedContractError(f"{scores_dir}: no score file for clip(s) {', '.join(missing[:5])}")
    audio = {clip: float(durations[clip]) for clip in truth}
    out = {}
    for name, settings in PSDS_SETTINGS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value, per_class, *_ = intersection_based.psds(
                {clip: scores[clip] for clip in truth}, truth, audio, **settings)
        out[name] = {"value": float(value),
                     "per_class": {c: float(v) for c, v in per_class.items()},
                     "settings": settings}
    return out
