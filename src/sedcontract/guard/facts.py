"""What projecting the events on the grid did, counted per clip (so the facts of disjoint sets
of clips add up: shards, processes, validation batches), and the warnings it calls for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.traces import EventList, TraceSet
from sedcontract.traces.names import SIDES, shorten

__all__ = ["TraceFacts", "class_warnings", "refuse_unseen"]


@dataclass(frozen=True)
class TraceFacts:
    """Events per clip × class, and per clip the events that covered no frame (vanished) or
    shared their grid interval with another of their class (merged), for both sides."""

    clips: tuple[str, ...]
    classes: tuple[str, ...]
    hop: float
    projection: str
    durations_given: bool
    events: dict[str, np.ndarray]    # side → [clips, classes]
    vanished: dict[str, np.ndarray]  # side → [clips]
    merged: dict[str, np.ndarray]    # side → [clips]
    frames: np.ndarray | None = None   # [clips] frames of each clip on the grid
    active: np.ndarray | None = None   # [clips, classes + 1] active reference frames per
                                       # class, then of any class (the union trace)
    cut: dict[str, np.ndarray] | None = None  # side → [clips] events cut at the clip's end
    cut_first: dict[str, str] | None = None   # side → file and row of the first cut event

    @classmethod
    def of(cls, traces: TraceSet, durations_given: bool,
           cut: tuple[dict[str, np.ndarray], dict[str, str]] | None = None) -> TraceFacts:
        n, per = len(traces.clips), len(traces.classes)
        active = np.zeros((n, per + 1), dtype=np.int64)
        for column, runs, width in ((slice(0, per), traces.runs["ref"], per),
                                    (slice(per, per + 1), traces.union_runs["ref"], 1)):
            active[:, column] = np.bincount(runs.row, weights=runs.end - runs.start,
                                            minlength=n * width).reshape(n, width)
        return cls(traces.clips, traces.classes, traces.hop, traces.projection, durations_given,
                   {s: traces.events[s].reshape((n, per)) for s in SIDES},
                   dict(traces.vanished), dict(traces.merged),
                   np.asarray(traces.lengths, dtype=np.int64), active,
                   None if cut is None else cut[0], None if cut is None else cut[1])

    def warnings(self) -> list[str]:
        """Events the grid cannot see, then class sets that cannot be meant."""
        notes = []
        for side, name in zip(SIDES, ("reference", "predicted"), strict=True):
            lost = int(self.vanished[side].sum())
            if lost:
                notes.append(f"{lost} of {int(self.events[side].sum())} {name} events cover no "
                             f"frame at hop {self.hop:g} s (projection {self.projection}); the "
                             "vector does not see them")
            cut = int(self.cut[side].sum()) if self.cut is not None else 0
            if cut:
                first = (self.cut_first or {}).get(side)
                notes.append(f"{cut} {name} event(s) ended past their clip's duration and were "
                             f"cut at it{f' (the first: {first})' if first else ''}")
        present = [{c for c, n in zip(self.classes, self.events[s].sum(axis=0), strict=True)
                    if n} for s in SIDES]
        return notes + class_warnings(*present)

    def as_dict(self) -> dict[str, Any]:
        """The ``traces`` section of a report."""
        return {"clips": len(self.clips), "classes": list(self.classes),
                "vanished": {s: int(self.vanished[s].sum()) for s in SIDES},
                "merged": {s: int(self.merged[s].sum()) for s in SIDES},
                "durations": "given" if self.durations_given else "latest offset per clip",
                **({"cut": {s: int(self.cut[s].sum()) for s in SIDES}}
                   if self.cut is not None else {}),
                "warnings": self.warnings()}

    def arrays(self) -> dict[str, np.ndarray]:
        """The per-clip counts, each ``[clips, width]``."""
        n = len(self.clips)
        out = {}
        for s in SIDES:
            out[f"events/{s}"] = self.events[s].reshape(n, len(self.classes))
            out[f"vanished/{s}"] = self.vanished[s].reshape(n, 1)
            out[f"merged/{s}"] = self.merged[s].reshape(n, 1)
        if self.frames is not None and self.active is not None:
            out["frames"] = self.frames.reshape(n, 1)
            out["active/ref"] = self.active.reshape(n, len(self.classes) + 1)
        if self.cut is not None:
            out |= {f"cut/{s}": self.cut[s].reshape(n, 1) for s in SIDES}
        return out

    def rebuild(self, clips: Sequence[str], arrays: dict[str, np.ndarray]) -> TraceFacts:
        """These facts for other clips, from :meth:`arrays` of theirs."""
        n = len(clips)
        return TraceFacts(tuple(clips), self.classes, self.hop, self.projection,
                          self.durations_given,
                          {s: arrays[f"events/{s}"].reshape(n, len(self.classes)) for s in SIDES},
                          {s: arrays[f"vanished/{s}"].reshape(n) for s in SIDES},
                          {s: arrays[f"merged/{s}"].reshape(n) for s in SIDES},
                          arrays["frames"].reshape(n) if "frames" in arrays else None,
                          arrays["active/ref"].reshape(n, len(self.classes) + 1)
                          if "active/ref" in arrays else None,
                          {s: arrays[f"cut/{s}"].reshape(n) for s in SIDES}
                          if "cut/ref" in arrays else None, self.cut_first)


def refuse_unseen(ref: EventList, seen: bool, hop: float, projection: str) -> None:
    """Refuse a grid on which no reference event is left (every score would be vacuous),
    given whether the grid sees any reference event."""
    positive = int(np.count_nonzero(ref.offset > ref.onset))
    if positive and not seen:
        raise TraceFormatError(f"none of the {positive} reference events covers a frame at hop "
                               f"{hop:g} s (projection {projection}): the grid is coarser than "
                               "the events and every score would be vacuous or perfect; choose "
                               "a smaller hop", path=ref.path)


def class_warnings(ref_classes: set[str], pred_classes: set[str]) -> list[str]:
    """Class sets that cannot be meant: classes that differ only in case, or a prediction with
    no class of the reference."""
    notes = []
    lower = {c.lower(): c for c in ref_classes}
    for c in sorted(pred_classes - ref_classes):
        if c.lower() in lower:
            notes.append(f"predicted class {shorten(c, 40)!r} and reference class "
                         f"{shorten(lower[c.lower()], 40)!r} differ only in case: they are "
                         "different classes")
    if ref_classes and pred_classes and not ref_classes & pred_classes:
        notes.append(f"the predictions share no class with the reference (reference: "
                     f"{_names(ref_classes)}; predictions: {_names(pred_classes)})")
    return notes


def _names(classes: set[str], most: int = 8) -> str:
    """Some class names for a message, shortened."""
    shown = [shorten(c, 40) for c in sorted(classes)[:most]]
    return ", ".join(shown) + (f" and {len(classes) - most} more" if len(classes) > most else "")
