"""All standard scores of one system on the guard vector's traces, in one call."""

from __future__ import annotations

from collections.abc import Mapping

from sedcontract.contracts.policy import ScoreSettings
from sedcontract.scores.boundary import boundary_metrics
from sedcontract.scores.collar_based import event_metrics
from sedcontract.scores.counts import MetricResult
from sedcontract.scores.frame_based import frame_metrics
from sedcontract.scores.intersection_based import intersection_metrics
from sedcontract.scores.segment_based import segment_metrics
from sedcontract.traces import EventList, TraceSet

SCORE_NAMES: tuple[str, ...] = ("frame", "segment", "event", "intersection", "onset_boundary",
                               "offset_boundary")  # the keys of standard_scores, in order


def standard_scores(ref: EventList, pred: EventList, traces: TraceSet,
                    settings: ScoreSettings, *,
                    durations: Mapping[str, float] | None = None,
                    edges: str = "open",
                    given: tuple[EventList, EventList] | None = None
                    ) -> dict[str, MetricResult]:
    """Frame, segment, collar-event, intersection and boundary scores of one system on the
    same traces. Under ``time_comparison="sed_eval"`` the segment and collar-event scores are
    sed_eval's: on the events as ``given`` (before any cut at a clip's end) and, for segments,
    without durations (sed_eval reads none: each file's segments run to its latest event)."""
    classes = list(traces.classes)
    seg_ref, seg_pred, seg_durations = ref, pred, durations
    if settings.time_comparison == "sed_eval":
        if given is not None:
            ref, pred = given
        seg_ref, seg_pred, seg_durations = ref, pred, None
    return {
        "frame": frame_metrics(traces),
        "segment": segment_metrics(seg_ref, seg_pred, classes=classes,
                                   time_resolution=settings.segment, durations=seg_durations),
        "event": event_metrics(ref, pred, classes=classes, t_collar=settings.t_collar,
                               percentage_of_length=settings.percentage_of_length,
                               evaluate_onset=settings.evaluate_onset,
                               evaluate_offset=settings.evaluate_offset,
                               matching=settings.matching,
                               time_comparison=settings.time_comparison),
        "intersection": intersection_metrics(ref, pred, classes=classes,
                                             dtc_threshold=settings.dtc_threshold,
                                             gtc_threshold=settings.gtc_threshold),
        "onset_boundary": boundary_metrics(traces, frames=settings.boundary_frames,
                                           kind="onset", edges=edges),
        "offset_boundary": boundary_metrics(traces, frames=settings.boundary_frames,
                                            kind="offset", edges=edges),
    }
