"""What a scores or audit request computed, rendering itself: :meth:`Audited.render` gives
Markdown, JSON or source rows (CSV), each part by the renderer of the package that owns it
(PSDS of operating points, a shard, the standard scores, the guard report with its
intervals, the table by annotation confidence, the curves)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sedcontract.analysis.confidence import ConfidenceTable, confidence_markdown, confidence_rows
from sedcontract.errors import SedContractError
from sedcontract.guard import GuardReport, ScoresReport, to_csv, to_dict, to_markdown
from sedcontract.guard.render import (
    auroc_markdown,
    intervals_dict,
    intervals_markdown,
    policy_id,
    psds_markdown,
    ranking_dict,
    ranking_markdown,
    scores_json,
    scores_markdown,
)
from sedcontract.traces.soft import SoftLabels

__all__ = ["FORMATS", "Audited"]


@dataclass(frozen=True)
class Audited:
    """The report (a guard report, the scores alone, or None for PSDS of operating points
    alone), PSDS, the bootstrap and comparison ``sections`` (``intervals``, ``comparison``),
    the soft labels and the table by annotation confidence, a shard's ``corpus`` key, the
    paired ``ranking`` differences and the curves' summary; with what rendering names:
    the ``system`` (source rows), the bootstrap ``seed``, the sections' ``titles`` and the
    ``shard``."""

    report: GuardReport | ScoresReport | None
    psds: dict[str, Any] | None = None
    sections: dict[str, dict] = field(default_factory=dict)
    soft: SoftLabels | None = None
    confidence: ConfidenceTable | None = None
    corpus: dict[str, Any] | None = None
    ranking: dict[str, dict[str, Any]] | None = None
    curves: dict[str, Any] | None = None
    system: str = "system"
    seed: int = 0
    titles: Mapping[str, str] = field(default_factory=dict)
    shard: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.report is None and self.psds is None:
            raise SedContractError("a result holds a report, or PSDS of operating points")
        if (self.corpus is None) != (self.shard is None):
            raise SedContractError("a shard's result holds its corpus key and its shard (I, N), "
                                   "both or neither")

    @property
    def kind(self) -> str:
        """``psds`` (of operating points alone), ``shard``, ``scores`` or ``audit``."""
        if self.report is None:
            return "psds"
        if self.corpus is not None:
            return "shard"
        return "audit" if isinstance(self.report, GuardReport) else "scores"

    def render(self, fmt: str = "md") -> str:
        """The text in ``fmt`` (:data:`FORMATS` says which each kind has)."""
        kind = self.kind
        if fmt not in FORMATS[kind]:
            raise SedContractError(f"a {kind} result renders as {', '.join(FORMATS[kind])}, "
                                   f"not {fmt!r}")
        return _RENDERERS[kind](self, fmt)


def _psds_text(done: Audited, fmt: str) -> str:
    from sedcontract.scores.psds.settings import without_curves

    if fmt == "json":
        return json.dumps({"psds": without_curves(done.psds)}, indent=2, allow_nan=False) + "\n"
    return psds_markdown(done.psds)


def _shard_text(done: Audited, fmt: str) -> str:
    from sedcontract.guard.shards import shard_json

    return shard_json(done.report, *done.shard, done.corpus, done.curves)


def _ranking_markdown(done: Audited) -> str:
    return "" if done.ranking is None else ranking_markdown(done.ranking,
                                                            done.titles.get("ranking", ""))


def _scores_text(done: Audited, fmt: str) -> str:
    report = done.report
    if fmt == "json":
        extra = {name: intervals_dict(value) for name, value in done.sections.items()}
        if done.ranking is not None:
            extra["ranking_comparison"] = ranking_dict(done.ranking)
        return scores_json(report, extra)
    text = scores_markdown(report.scores) + "".join(
        intervals_markdown(value, done.seed, "Bootstrap intervals")
        for value in done.sections.values())
    text += "\n" + psds_markdown(report.psds) if report.psds is not None else ""
    text += "\n" + auroc_markdown(report.auroc) if report.auroc is not None else ""
    return text + _ranking_markdown(done)


def _audit_text(done: Audited, fmt: str) -> str:
    from sedcontract.analysis import curve_summaries

    report = done.report
    if fmt == "csv":
        extra = () if done.confidence is None else confidence_rows(
            done.confidence, done.system, policy_id(report.policy))
        return to_csv(report, done.system, done.soft, extra, curves=None
                      if done.curves is None else curve_summaries.curve_metrics(done.curves))
    if fmt == "json":
        data = to_dict(report) | {name: intervals_dict(value)
                                  for name, value in done.sections.items()}
        if done.ranking is not None:
            data["ranking_comparison"] = ranking_dict(done.ranking)
        if done.curves is not None:
            data["curves"] = curve_summaries.summary_dict(done.curves)
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    text = to_markdown(report) + "".join(
        intervals_markdown(value, done.seed, done.titles.get(name, "Bootstrap intervals"),
                           signed=name == "comparison")
        for name, value in done.sections.items())
    text += _ranking_markdown(done)
    if done.confidence is not None:
        text += "\n" + confidence_markdown(done.confidence)
    if done.curves is not None:
        text += "\n" + curve_summaries.summary_markdown(done.curves)
    return text


_RENDERERS: dict[str, Callable[[Audited, str], str]] = {
    "psds": _psds_text, "shard": _shard_text, "scores": _scores_text, "audit": _audit_text}
FORMATS = {"psds": ("md", "json"), "shard": ("json",), "scores": ("md", "json"),
           "audit": ("md", "json", "csv")}
