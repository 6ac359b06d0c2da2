"""``ContractMonitor``: the exact contract monitor of the audit layer as a torchmetrics
``Metric``, so validation reports the same guard vector as ``sedcontract audit``.

State is one slot per clip of the split (frame scores and a seen-count), reduced by sum. A
process writes a clip's slot (it never adds to it), so a clip seen twice by one process counts
once, and a clip that several processes saw (the distributed sampler pads the last batch) is
divided by its seen-count: the vector is identical on 1 or N processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import torch
from torchmetrics import Metric

from sedcontract.audit import AuditPolicy, GuardReport, audit
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.grid import frames_covering, to_us
from sedcontract.traces.scores import DecisionPolicy, activity_to_events, decide


class Audited:
    """What one ``compute`` returns: the guard report and the clips it covers. (A plain class:
    torchmetrics walks dataclass results and refuses frozen ones.)"""

    __slots__ = ("clips", "report")

    def __init__(self, report: GuardReport, clips: tuple[str, ...]) -> None:
        self.report, self.clips = report, clips


class ContractMonitor(Metric):
    """Guard vector (and standard scores) of frame scores ``[batch, classes, frames]`` against
    a split's reference events, under a declared decision policy and contract."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, reference: EventList, durations: Mapping[str, float],
                 classes: Sequence[str], policy: AuditPolicy | None = None, *,
                 source: str = "") -> None:
        super().__init__()
        missing = [c for c in reference.clips if c not in durations]
        if missing:
            raise SedContractError(f"no duration for clip {missing[0]!r} of the reference")
        self.reference, self.durations = reference, dict(durations)
        self.clips = tuple(reference.clips)
        self.index = {clip: i for i, clip in enumerate(self.clips)}
        policy = policy or AuditPolicy()
        # scores become events here: the policy says how, ``source`` where they came from
        decision = policy.decision or DecisionPolicy()
        if source:
            decision = replace(decision, source=source)
        self.policy = policy.but(decision=decision)
        self.classes, self.hop = tuple(classes), policy.hop
        hop_us = int(to_us(policy.hop))
        duration_us = to_us(np.array([self.durations[c] for c in self.clips]))
        self.lengths = frames_covering(duration_us, hop_us).astype(np.int64)  # the grid
        self.whole = (duration_us // hop_us).astype(np.int64)  # frames a front end gives
        frames = int(self.lengths.max()) if len(self.clips) else 0
        self.add_state("frame_scores", torch.zeros(len(self.clips), len(self.classes), frames),
                       dist_reduce_fx="sum")
        self.add_state("seen", torch.zeros(len(self.clips)), dist_reduce_fx="sum")

    def update(self, scores: torch.Tensor, clips: Sequence[str]) -> None:
        """Record the frame scores of a batch of clips (named by id)."""
        if scores.ndim != 3 or scores.shape[0] != len(clips) or \
                scores.shape[1] != len(self.classes):
            raise SedContractError(f"expected scores [{len(clips)}, {len(self.classes)}, "
                                   f"frames], got {list(scores.shape)}")
        unknown = [c for c in clips if c not in self.index]
        if unknown:
            raise SedContractError(f"clip {unknown[0]!r} is not in the reference of this split")
        index = [self.index[c] for c in clips]
        # a batch is as long as its longest clip: at least its whole frames, at most its grid
        whole, grid = int(self.whole[index].max()), int(self.lengths[index].max())
        if not whole <= scores.shape[-1] <= grid:
            raise SedContractError(
                f"scores of {scores.shape[-1]} frames for clips of {whole} whole frames of "
                f"{self.hop:g} s: do the detector's hop and the contract's hop agree?")
        rows = torch.tensor(index, device=self.seen.device)
        n = scores.shape[-1]
        slot = torch.zeros(len(clips), *self.frame_scores.shape[1:], device=self.seen.device)
        slot[..., :n] = scores[..., :n].detach().to(slot.dtype)
        self.frame_scores[rows] = slot
        self.seen[rows] = 1.0

    def events(self) -> tuple[EventList, tuple[str, ...]]:
        """Predicted events of every clip seen so far (after the decision policy) and the
        clips they cover."""
        seen = self.seen.detach().cpu().numpy()
        rows = np.flatnonzero(seen > 0)
        scores = (self.frame_scores[torch.from_numpy(rows).to(self.seen.device)].cpu().numpy()
                  / seen[rows, None, None])
        active = np.zeros(scores.shape, dtype=bool)
        for k, i in enumerate(rows):  # each clip on its own length (no filter across padding)
            n = int(self.lengths[i])
            active[k, :, :n] = decide(scores[k, :, :n].T, self.policy.decision, self.hop).T
        clips = tuple(self.clips[i] for i in rows)
        return activity_to_events(active, clips, self.classes, self.hop,
                                  self.lengths[rows]), clips

    def compute(self) -> Audited:
        pred, clips = self.events()
        if not clips:
            raise SedContractError("the contract monitor saw no clips")
        ref = self.reference if len(clips) == len(self.clips) else \
            self.reference.select(clips=clips)
        report = audit(ref, pred, self.policy, durations={c: self.durations[c] for c in clips},
                       classes=self.classes)
        return Audited(report, clips)
