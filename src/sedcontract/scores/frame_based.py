"""Frame-based F1 on the contract grid (the projection the guard vector uses)."""

from __future__ import annotations

from sedcontract.scores.counts import MetricResult, overlapping, row_sums
from sedcontract.traces import TraceSet


def frame_metrics(traces: TraceSet) -> MetricResult:
    """Frame-based F1 on the contract grid (the same projection the guard vector uses),
    counted on the runs."""
    ref, pred = traces.runs["ref"], traces.runs["pred"]
    n_rows = traces.rows("typed")
    ia, _, shared = overlapping(ref, pred)
    return MetricResult.of_rows(traces.clips, traces.classes, row_sums(ref.row[ia], shared, n_rows),
                                row_sums(ref.row, ref.end - ref.start, n_rows),
                                row_sums(pred.row, pred.end - pred.start, n_rows))
