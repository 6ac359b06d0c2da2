"""The reference as the score-table metrics (PSDS, segment-based AUROC) read it: merged events
of some clips as arrays, sorted by clip, each class an index of the score columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.traces import EventList


@dataclass(frozen=True)
class ClipTruth:
    """The merged reference events of some clips, sorted by clip then onset: the clip's index
    (in ``clips``), class index (in the score columns), times in seconds."""

    clips: tuple[str, ...]
    clip: np.ndarray
    cls: np.ndarray
    onset: np.ndarray
    offset: np.ndarray

    @classmethod
    def of(cls, ref: EventList, clips: Sequence[str], classes: Sequence[str]) -> ClipTruth:
        """The reference of ``clips``, same-class events that overlap or touch merged (the
        events sed_scores_eval accepts); a label without a score column is refused."""
        merged = ref.merged()
        index = {c: k for k, c in enumerate(classes)}
        unknown = sorted(set(merged.label.tolist()) - set(index))
        if unknown:
            raise SedContractError(f"reference class {unknown[0]!r} has no score column (the "
                                   f"columns are {', '.join(classes)}): each score "
                                   "column is scored against the reference of its class")
        where = {c: k for k, c in enumerate(clips)}
        keep = np.array([c in where for c in merged.clip.tolist()], dtype=bool)
        clip = np.array([where[c] for c in merged.clip[keep].tolist()], dtype=np.int64)
        label = np.array([index[c] for c in merged.label[keep].tolist()], dtype=np.int64)
        onset, offset = merged.onset[keep].astype(float), merged.offset[keep].astype(float)
        order = np.lexsort((onset, clip))
        return cls(tuple(clips), clip[order], label[order], onset[order], offset[order])

    def block(self, first: int, stop: int) -> ClipTruth:
        """The truth of clips ``[first, stop)``, renumbered from 0."""
        lo, hi = np.searchsorted(self.clip, [first, stop])
        return ClipTruth(self.clips[first:stop], self.clip[lo:hi] - first, self.cls[lo:hi],
                         self.onset[lo:hi], self.offset[lo:hi])
