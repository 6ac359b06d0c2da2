"""PSDS (polyphonic sound detection score): from score tables at every threshold, as
sed_scores_eval computes it, or from operating-point tables, as psds_eval does."""

from sedcontract.scores.psds.of_scores import psds_of_scores
from sedcontract.scores.psds.operating_points import psds_of_points, read_points
from sedcontract.scores.psds.request import PsdsRequest, paired_psds, psd_roc_png, psds
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings, PsdsUnavailable

__all__ = ["PRESETS", "PsdsRequest", "PsdsSettings", "PsdsUnavailable", "paired_psds",
           "psd_roc_png", "psds", "psds_of_points", "psds_of_scores", "read_points"]
