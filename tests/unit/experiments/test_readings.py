"""A run's readings and the intervals over them (:mod:`sedcontract.experiments.readings`,
:mod:`sedcontract.experiments.intervals`): the post-processing chosen on validation is the
first best of the grid, and every interval row names its contrast and pools the benchmarks
with their own draws."""

from __future__ import annotations

import math

import pytest

from sedcontract.errors import ProtocolError
from sedcontract.experiments import readings
from sedcontract.experiments.contract_losses import CONTRASTS, LOW_BELOW, MEDIAN, THRESHOLD
from sedcontract.experiments.intervals import interval_rows
from sedcontract.guard import hierarchical_bootstrap, stratified_bootstrap
from tests.helpers.reports import scored_runs


def test_interval_rows_label_each_contrast_and_pool_the_benchmarks_with_their_own_draws():
    """Each benchmark's interval is its two-stage bootstrap (benchmark k from seed k), the
    pooled one the stratified mean with the same draws; every row names its system, control
    and the post-processing of each."""
    reports = {}
    for k, d in enumerate((2, 3)):
        reports[(d, "contract", "tuned")] = scored_runs(2, 0.05, 10 + k)
        reports[(d, "contract", "none")] = scored_runs(2, 0.1, 20 + k)
        reports[(d, "bce_only", "tuned")] = scored_runs(2, 0.3, 30 + k)
        reports[(d, "bce_only", "none")] = scored_runs(2, 0.2, 40 + k)
    rows = interval_rows(reports, (2, 3), CONTRASTS, 200)
    labels = {(r["system"], r["post"], r["control"], r["control_post"]) for r in rows}
    assert labels == set(CONTRASTS)

    def row(where: str, contrast: tuple, coordinate: str) -> dict:
        (found,) = [r for r in rows if (r["benchmark"], r["system"], r["post"], r["control"],
                                        r["control_post"], r["mode"], r["coordinate"])
                    == (where, *contrast, "typed", coordinate)]
        return found

    contrast = ("contract", "none", "bce_only", "tuned")
    pairs = [(reports[(d, "contract", "none")], reports[(d, "bce_only", "tuned")])
             for d in (2, 3)]
    for k, where in enumerate(("2", "3")):
        want = hierarchical_bootstrap(*pairs[k], resamples=200, seed=k)
        for name in ("onset", "logic", "event_f1"):
            got = row(where, contrast, name)
            assert (float(got["point"]), float(got["lo"]), float(got["hi"])) == pytest.approx(
                (want[name].point, want[name].lo, want[name].hi), abs=1e-6), (where, name)
    pooled = stratified_bootstrap(pairs, resamples=200, seed=0)["onset"]
    got = row("pooled", contrast, "onset")
    assert (float(got["lo"]), float(got["hi"])) == pytest.approx((pooled.lo, pooled.hi),
                                                                 abs=1e-6)
    one = interval_rows(reports, (2,), CONTRASTS, 50)  # one benchmark: nothing is pooled
    assert {r["benchmark"] for r in one} == {"2"}


def test_the_post_processing_search_keeps_the_first_best_and_skips_vacuous_points(
        tmp_path, monkeypatch):
    """Grid order decides ties; a decision whose validation logic is vacuous (NaN) is never
    chosen, even first; a grid without any defined value is refused."""
    values = iter([math.nan, 0.5, 0.9, 0.9] + [0.1] * 36)
    seen = []

    class Report:
        def __init__(self, logic: float) -> None:
            self.value = logic

        def logic(self, mode: str) -> float:
            return self.value

    monkeypatch.setattr(readings, "read_score_dir", lambda folder: {})
    monkeypatch.setattr(readings, "tables_to_events",
                        lambda tables, decision, folder: seen.append(decision) or decision)
    monkeypatch.setattr(readings, "audited", lambda data, d, events, split:
                        Report(next(values)) if split == "validation" else Report(-1.0))
    report, choice = readings.tuned(tmp_path, 2, tmp_path, "test")
    grid = [(m, t, b) for m in MEDIAN for t in THRESHOLD for b in LOW_BELOW]
    median, threshold, below = grid[2]  # the first of the two 0.9s
    assert choice == {"median_filter": median, "threshold": threshold,
                      "low": None if below is None else round(threshold - below, 6),
                      "validation_logic": 0.9}
    assert seen[-1].threshold == threshold and report.value == -1.0
    monkeypatch.setattr(readings, "audited", lambda *a: Report(math.nan))
    with pytest.raises(ProtocolError, match="leaves the validation split's typed logic vacuous"):
        readings.tuned(tmp_path, 2, tmp_path, "test")
