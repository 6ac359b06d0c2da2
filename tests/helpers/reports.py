"""Guard reports made from counts: a synthetic report of chosen counts, random counts, and
runs of a late detector scored beside their guard vectors."""

from __future__ import annotations

import numpy as np

import sedcontract
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.guard.pipeline import count_layout, empty_report
from sedcontract.guard.report import GuardReport
from sedcontract.traces import EventList
from tests.helpers.examples import random_reference

CLASSES = ("speech", "tone", "burst")


def synthetic(clips: int, counts: dict[str, np.ndarray], *, aggregation: str = "micro",
              classes: tuple[str, ...] = CLASSES) -> GuardReport:
    """A report of the standard contract over ``clips`` clips whose counts are zero except
    ``counts`` (keys of :meth:`GuardReport.arrays`, e.g. ``typed/satisfied/onset``)."""
    base = empty_report(AuditPolicy(aggregation=aggregation), classes)
    arrays = {k: np.zeros((clips, w), dtype=np.int64)
              for k, w in count_layout(AuditPolicy(), classes).items()}
    arrays |= {k: np.asarray(v, dtype=np.int64).reshape(clips, -1) for k, v in counts.items()}
    return base.rebuild([f"clip{i}" for i in range(clips)], arrays)


def random_counts(rng: np.random.Generator, clips: int, vacuous: float = 0.3,
                  rare: int | None = None) -> dict[str, np.ndarray]:
    """Random satisfied ≤ obligations for every coordinate, both modes; some cells empty, and
    fragmentation obliged in clip ``rare`` only (when given)."""
    out = {}
    for mode, width in (("typed", len(CLASSES)), ("union", 1)):
        for name in empty_report(AuditPolicy(), CLASSES).coordinates:
            obligations = rng.integers(0, 6, size=(clips, width))
            obligations[rng.random((clips, width)) < vacuous] = 0
            if name == "fragmentation" and rare is not None:
                obligations[np.arange(clips) != rare] = 0
                obligations[rare] = 1
            out[f"{mode}/obligations/{name}"] = obligations
            out[f"{mode}/satisfied/{name}"] = rng.integers(0, obligations + 1)
    return out


def scored_runs(seeds: int, shift: float, seed: int, scores: bool = True) -> list[GuardReport]:
    """Runs over ``seeds`` training seeds, onsets late by ``shift`` give or take 0.15 s, with the
    standard scores computed beside each guard vector (unless not ``scores``)."""
    rng = np.random.default_rng(seed)
    ref = random_reference(np.random.default_rng(11), 10)
    out = []
    for _ in range(seeds):
        moved = np.clip(ref.onset + shift + rng.normal(0, 0.15, len(ref)), 0, ref.offset - 0.05)
        out.append(sedcontract.audit(ref, EventList(ref.clip, moved, ref.offset, ref.label,
                                                    clips=ref.clips),
                                     AuditPolicy(scores=sedcontract.ScoreSettings() if scores
                                                 else None)))
    return out
