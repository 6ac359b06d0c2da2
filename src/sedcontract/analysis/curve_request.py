"""The guard curves of score files as one request (``audit --curves``): the guard vector at
every threshold, summarised over false-activity budgets (:mod:`~sedcontract.analysis.
curve_summaries`), with bootstrap intervals over clips, or a shard's section that
``sedcontract merge`` joins. The threshold varies; the policy's decision gives the rest."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sedcontract.blocks import clip_range
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.grid import SECONDS_PER_HOUR
from sedcontract.traces.score_files import ScoreFolder

__all__ = ["CurvesRequest"]


@dataclass(frozen=True)
class CurvesRequest:
    """The curves' summary up to ``max_rate`` false events per hour (PSDS's max eFPR), each
    class's threshold ranges where every one of ``targets`` (coordinate → least score) holds,
    ``duration`` audited at ``thresholds``; ``resamples`` bootstrap draws of the areas over
    the clips (``seed``, ``level``); ``jobs`` processes share the clips; ``shard`` (I, N):
    the section of block I of N for merging."""

    max_rate: float = 100.0
    targets: tuple[tuple[str, float], ...] | None = None
    thresholds: tuple[float, ...] = ()
    resamples: int = 0
    seed: int = 0
    level: float = 0.95
    jobs: int = 1
    shard: tuple[int, int] | None = None

    def check(self, policy: AuditPolicy) -> None:
        """Refuse, before any file is read, what the curves are not exact for."""
        from sedcontract.guard.curves import check_curves

        check_curves(policy, policy.decision or DecisionPolicy(),
                     [name for name, _ in self.targets or ()])

    def settings(self, policy: AuditPolicy) -> dict[str, Any]:
        """What the summary is made under: the largest budget, the targets, the decision."""
        return {"max_rate": self.max_rate,
                "targets": dict(self.targets) if self.targets else None,
                "decision": policy.decision or DecisionPolicy()}

    def compute(self, ref: EventList, scores: ScoreFolder, durations: Mapping[str, float],
                policy: AuditPolicy) -> dict[str, Any]:
        """The summary (:func:`~sedcontract.analysis.curve_summaries.curve_summary`) of the
        curves of ``scores`` against ``ref``; with ``shard``, the shard's clips' ``curves``
        section (:func:`~sedcontract.guard.shards.curves_section`)."""
        from sedcontract.analysis.curve_summaries import area_draws, curve_summary
        from sedcontract.guard.curves import clip_changes, guard_curves
        from sedcontract.guard.shards import curves_section

        clips = list(ref.clips)
        if self.shard is not None:  # the shard's clips, as the audit takes them
            first, stop = clip_range(len(clips), *self.shard)
            clips = clips[first:stop]
            ref, scores = ref.select(clips=clips), scores.select(clips)
        given = {c: durations[c] for c in clips}
        settings = self.settings(policy)
        seconds = [float(durations[c]) for c in clips]
        hours = math.fsum(seconds) / SECONDS_PER_HOUR
        if self.resamples and self.shard is None:  # each clip's changes, to resample them
            changes = clip_changes(ref, scores, given, policy, thresholds=self.thresholds)
            draws = area_draws(changes, self.max_rate, self.resamples, self.seed)
            return curve_summary(changes.total(), hours, **settings, draws=draws,
                                 level=self.level, seed=self.seed)
        curves = guard_curves(ref, scores, given, policy, thresholds=self.thresholds,
                              jobs=self.jobs)
        if self.shard is not None:
            return curves_section(curves, seconds, settings)
        return curve_summary(curves, hours, **settings)
