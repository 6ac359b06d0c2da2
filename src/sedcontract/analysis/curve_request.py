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
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number
from sedcontract.traces.decision import DecisionPolicy
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.grid import SECONDS_PER_HOUR

__all__ = ["CurvesRequest"]


@dataclass(frozen=True)
class CurvesRequest:
    """The curves' summary up to ``max_rate`` false events per hour (PSDS's max eFPR), each
    class's threshold ranges where every one of ``targets`` (coordinate → least score) holds,
    with ``certify`` (δ) the targets certified on these clips
    (:func:`~sedcontract.analysis.certify.certify_changes`), and ``duration`` audited at
    ``thresholds``. How it runs (bootstrap draws, processes, a shard) is said to
    :meth:`compute`, as an audit says it once for all it computes."""

    max_rate: float = 100.0
    targets: tuple[tuple[str, float], ...] | None = None
    thresholds: tuple[float, ...] = ()
    certify: float | None = None  # δ: the targets certified beside the ranges

    def check(self, policy: AuditPolicy, names: Mapping[str, str] | None = None) -> None:
        """Refuse, before any file is read, what the curves are not exact for (``names``: how
        the caller calls ``max_rate``)."""
        from sedcontract.guard.curves import check_curves

        if not (is_number(self.max_rate) and 0 < self.max_rate < math.inf):
            name = (names or {}).get("max_rate", "max_rate")
            raise SedContractError(f"{name} must be a positive number of false events per "
                                   f"hour, got {self.max_rate!r}")
        check_curves(policy, policy.decision or DecisionPolicy(),
                     [name for name, _ in self.targets or ()])
        if self.certify is not None:
            from sedcontract.analysis.certify import alphas_of
            from sedcontract.analysis.risk_control import check_delta

            if not self.targets:
                raise SedContractError("a certificate is of targets: give them (--curves-targets "
                                       "on the command line)")
            check_delta(self.certify, "δ")
            alphas_of(dict(self.targets))

    def settings(self, policy: AuditPolicy) -> dict[str, Any]:
        """What the summary is made under: the largest budget, the targets, the decision."""
        return {"max_rate": float(self.max_rate),
                "targets": dict(self.targets) if self.targets else None,
                "decision": policy.decision or DecisionPolicy()}

    def compute(self, ref: Any, scores: Any, durations: Any, policy: AuditPolicy | None = None,
                *, resamples: int = 0, seed: int = 0, level: float = 0.95, jobs: int = 1,
                shard: tuple[int, int] | None = None) -> dict[str, Any]:
        """The summary (:func:`~sedcontract.analysis.curve_summaries.curve_summary`) of the
        curves of ``scores`` (a folder, a table source or clip → table) against ``ref``
        (events or their file) over ``durations`` (a mapping or file) under ``policy`` (its
        decision gives the median filter); ``resamples`` bootstrap draws of the areas over the
        clips (``seed``, ``level``); ``jobs`` processes; ``shard`` (I, N): the ``curves``
        section of block I of N (:func:`~sedcontract.guard.shards.curves_section`) that
        ``sedcontract merge`` joins."""
        from sedcontract.analysis.curve_summaries import area_draws, curve_summary
        from sedcontract.guard.curves import clip_changes, guard_curves
        from sedcontract.guard.shards import curves_section

        policy = policy or AuditPolicy()
        self.check(policy)
        if shard is not None and self.certify is not None:
            raise SedContractError("a certificate needs every clip at once: certify the "
                                   "merged report's clips without --shard")
        ref, given = events_of(ref, "ground truth"), durations_of(durations)
        if given is None:
            raise SedContractError("curves need clip durations (predicted events are cut at "
                                   "them)")
        scores = score_source(scores, ref.clips)
        clips = list(ref.clips)
        if shard is not None:  # the shard's clips, as the audit takes them
            first, stop = clip_range(len(clips), *shard)
            clips = clips[first:stop]
            ref, scores = ref.select(clips=clips), scores.select(clips)
        seconds = [float(given[c]) for c in clips]
        given = {c: given[c] for c in clips}
        settings = self.settings(policy)
        hours = math.fsum(seconds) / SECONDS_PER_HOUR
        if (resamples or self.certify is not None) and shard is None:  # each clip's changes
            changes = clip_changes(ref, scores, given, policy, thresholds=self.thresholds)
            draws = area_draws(changes, self.max_rate, resamples, seed) if resamples else None
            out = curve_summary(changes.total(), hours, **settings, draws=draws,
                                level=level, seed=seed)
            if self.certify is not None:
                from sedcontract.analysis.certify import certify_changes

                out["certificate"] = certify_changes(changes, dict(self.targets or ()),
                                                     delta=self.certify,
                                                     decision=settings["decision"])
            return out
        curves = guard_curves(ref, scores, given, policy, thresholds=self.thresholds,
                              jobs=jobs)
        if shard is not None:
            return curves_section(curves, seconds, settings)
        return curve_summary(curves, hours, **settings)
