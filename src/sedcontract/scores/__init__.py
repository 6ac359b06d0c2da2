"""The standard SED scores by family, as sed_eval, sed_scores_eval and the literature name them
— :mod:`~sedcontract.scores.collar_based`, :mod:`~sedcontract.scores.segment_based`,
:mod:`~sedcontract.scores.intersection_based` (each with ``fscore`` on score tables at a
threshold or on detections), frame-based and boundary F1 on the contract grid — their shared
counts, and PSDS (:mod:`sedcontract.scores.psds`). With :mod:`~sedcontract.scores.io`, the
calls DESED_task makes into sed_scores_eval run on ``import sedcontract.scores as
sed_scores_eval`` (docs/api.md lists them)."""

from sedcontract.scores import (
    boundary,
    collar_based,
    frame_based,
    intersection_based,
    io,
    psds,
    segment_based,
    utils,
)
from sedcontract.scores.boundary import boundary_metrics
from sedcontract.scores.collar_based import event_metrics
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.scores.frame_based import frame_metrics
from sedcontract.scores.fscores import fscore_dicts
from sedcontract.scores.intersection_based import intersection_metrics
from sedcontract.scores.segment_based import segment_metrics
from sedcontract.scores.standard import SCORE_NAMES, standard_scores

__all__ = ["SCORE_NAMES", "Counts", "MetricResult", "boundary", "boundary_metrics",
           "collar_based", "event_metrics", "frame_based", "frame_metrics", "fscore_dicts",
           "intersection_based", "intersection_metrics", "io", "psds", "segment_based",
           "segment_metrics", "standard_scores", "utils"]
