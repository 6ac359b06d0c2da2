"""Failure timelines: for one clip, the reference and predicted intervals per class, and for
every coordinate where it was obliged and where it failed (frames for frame clauses,
intervals for event clauses), with eps drawn around the reference boundaries — how a
detector fails, not only how often. What is drawn is what the report counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.contracts.contract import Outcome, check_atom_classes, clause_outcomes
from sedcontract.contracts.contract import needed_signals as contract_signals
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.runs import RunTable
from sedcontract.contracts.syntax import Bound
from sedcontract.errors import SedContractError
from sedcontract.figures import png, pyplot
from sedcontract.guard.pipeline import check_corpus
from sedcontract.traces import EventList
from sedcontract.traces.intervals import Intervals

__all__ = ["Timeline", "timeline", "timeline_png", "timeline_text"]


@dataclass(frozen=True)
class Timeline:
    """One clip on the contract grid: ``rows`` (class names, or ``*`` for the union trace),
    both sides' runs per row, and every clause's outcome per row."""

    clip: str
    hop: float
    frames: int
    mode: str
    rows: tuple[str, ...]
    ref: Intervals
    pred: Intervals
    outcomes: dict[str, Outcome]
    coordinates: tuple[str, ...]
    eps_frames: int

    def failed(self, name: str) -> np.ndarray:
        """Per row: failing frames (frame clauses) or failing elements (event clauses)."""
        return self._count(self.outcomes[name].failures, self.outcomes[name].sort)

    def obliged(self, name: str) -> np.ndarray:
        return self._count(self.outcomes[name].obligations, self.outcomes[name].sort)

    def _count(self, runs: Intervals, sort: str) -> np.ndarray:
        weights = (runs.end - runs.start) if sort == "frame" else None
        return np.bincount(runs.row, weights=weights, minlength=len(self.rows)).astype(np.int64)


def timeline(ref: EventList | str | Path, pred: EventList | str | Path, policy: AuditPolicy,
             clip: str, *, durations: Mapping[str, float] | str | Path | None = None,
             mode: str = "typed", classes: Sequence[str] | None = None) -> Timeline:
    """The timeline of ``clip`` under ``policy`` (the inputs are read and checked whole, so
    the classes and grid are those of the full audit; only the clip is projected)."""
    corpus = check_corpus(ref, pred, policy, durations=durations, classes=classes)
    clips = corpus.clips
    if clip not in clips:
        near = [c for c in clips if clip in c or c in clip][:5]
        raise SedContractError(f"clip {clip!r} is not in the reference"
                               + (f"; did you mean {', '.join(map(repr, near))}?" if near
                                  else f" ({len(clips)} clips)"))
    index = clips.index(clip)
    traces = corpus.block(index, index + 1).project(policy).traces
    contract = policy.parsed
    check_atom_classes(contract, traces.classes)
    needed = contract_signals(contract) | {"ref.active"}
    table = RunTable(traces.run_signals(mode, needed), traces.row_lengths(mode),
                     edges=policy.edges)
    resolver = policy.resolver()
    outcomes = clause_outcomes(contract, table, resolver, row_classes=traces.row_classes(mode),
                               classes=traces.classes, matching=policy.matching)
    eps = policy.eps if policy.eps is not None else contract.lets.get("eps")
    eps_frames = 0
    if eps is not None:
        eps_frames = resolver.frames(eps if isinstance(eps, Bound) else Bound(name="eps"))
    runs = traces.runs if mode == "typed" else traces.union_runs
    rows = traces.classes if mode == "typed" else ("*",)
    guard = tuple(c.name for c in contract.clauses if not c.diagnostic)
    return Timeline(clip, traces.hop, int(traces.lengths[0]), mode, tuple(rows), runs["ref"],
                    runs["pred"], outcomes, guard, eps_frames)


def _spans(runs: Intervals, row: int, hop: float) -> list[tuple[float, float]]:
    keep = runs.row == row
    return [(s * hop, e * hop) for s, e in zip(runs.start[keep].tolist(),
                                               runs.end[keep].tolist(), strict=True)]


def silent_rows(tl: Timeline, names: Sequence[str]) -> list[int]:
    """The rows (classes) without reference or predicted activity in the clip and without a
    failure of any of ``names``: nothing to show but empty lanes."""
    return [r for r in range(len(tl.rows))
            if not _spans(tl.ref, r, tl.hop) and not _spans(tl.pred, r, tl.hop)
            and not any(tl.failed(n)[r] for n in names)]


def _silent_note(tl: Timeline, silent: Sequence[int]) -> str:
    names = ", ".join(str(tl.rows[r]) for r in silent)
    return f"{len(silent)} class(es) silent on both sides, nothing failing: {names}"


def timeline_text(tl: Timeline, names: Sequence[str] | None = None) -> str:
    """Every failing obligation, in seconds, per coordinate and row; the rows silent on both
    sides without a failure are named once."""
    silent = silent_rows(tl, list(names or tl.outcomes))
    out = [f"clip {tl.clip}: {tl.frames} frames of {tl.hop:g} s, {tl.mode} traces, "
           f"eps {tl.eps_frames} frames"]
    for r, row in enumerate(tl.rows):
        if r not in silent:
            out.append(f"  [{row}] ref {_show(_spans(tl.ref, r, tl.hop))}; "
                       f"pred {_show(_spans(tl.pred, r, tl.hop))}")
    if silent:
        out.append(f"  ({_silent_note(tl, silent)})")
    for name in names or tl.outcomes:
        outcome = tl.outcomes[name]
        unit = "frames" if outcome.sort == "frame" else "intervals"
        for r, row in enumerate(tl.rows):
            obliged, failed = int(tl.obliged(name)[r]), int(tl.failed(name)[r])
            if failed:
                out.append(f"  {name} [{row}]: {failed} of {obliged} obliged {unit} fail: "
                           f"{_show(_spans(outcome.failures, r, tl.hop))}")
    return "\n".join(out) + "\n"


def _show(spans: list[tuple[float, float]], most: int = 8) -> str:
    if not spans:
        return "none"
    text = ", ".join(f"{a:.2f}–{b:.2f} s" for a, b in spans[:most])
    return text + (f" and {len(spans) - most} more" if len(spans) > most else "")


def timeline_png(tl: Timeline, names: Sequence[str] | None = None) -> bytes:
    """The timeline as PNG bytes: per row (class), the reference (with ±eps around its
    boundaries) and the prediction, then one lane per coordinate: obligations in grey,
    failures in red. Rows silent on both sides without a failure get no lanes; the title
    names them."""
    plt = pyplot()

    names = list(names or tl.outcomes)
    silent = silent_rows(tl, names)
    lanes: list[tuple[str, str, int]] = []  # (label, kind, row)
    for r, row in enumerate(tl.rows):
        if r in silent:
            continue
        lanes += [(f"{row}: ref", "ref", r), (f"{row}: pred", "pred", r)]
        lanes += [(f"{row}: {n}", n, r) for n in names if tl.obliged(n)[r] > 0]
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(lanes) + 1.2))
    eps = tl.eps_frames * tl.hop
    for y, (_, kind, r) in enumerate(lanes):
        y = len(lanes) - 1 - y
        if kind in ("ref", "pred"):
            spans = _spans(tl.ref if kind == "ref" else tl.pred, r, tl.hop)
            color = "tab:blue" if kind == "ref" else "tab:orange"
            ax.broken_barh([(a, b - a) for a, b in spans], (y - 0.35, 0.7), color=color)
            if kind == "ref" and eps > 0:
                bands = [(t - eps, 2 * eps) for a, b in spans for t in (a, b)]
                ax.broken_barh(bands, (y - 0.45, 0.9), color="tab:blue", alpha=0.15)
        else:
            outcome = tl.outcomes[kind]
            obliged = _spans(outcome.obligations, r, tl.hop)
            failed = _spans(outcome.failures, r, tl.hop)
            ax.broken_barh([(a, b - a) for a, b in obliged], (y - 0.3, 0.6), color="0.85")
            ax.broken_barh([(a, b - a) for a, b in failed], (y - 0.3, 0.6), color="tab:red")
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([label for label, _, _ in reversed(lanes)], fontsize=7)
    ax.set_xlim(0, tl.frames * tl.hop)
    ax.set_xlabel("seconds")
    ax.set_title(f"{tl.clip} ({tl.mode} traces, eps {tl.eps_frames * tl.hop:g} s)\nreference "
                 "blue (±eps shaded), prediction orange; per coordinate: obligations grey, "
                 "failures red" + (f"\n{_silent_note(tl, silent)}" if silent else ""),
                 fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return png(fig, dpi=110)
