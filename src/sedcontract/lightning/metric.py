"""``ContractMonitor``: the exact contract monitor of the audit layer as a torchmetrics
``Metric``, so validation reports the same guard vector as ``sedcontract audit`` (and the
segment-based mAUC and mpAUC of the frame scores, as ``sedcontract scores`` computes them);
and ``SoftClauseMetric``, the soft relaxation's validation numbers beside it.

Each ``update`` decides the batch's events and audits them at once: the state is the counts
of every clip of the split (a row of whole numbers per clip, the report's own counts) and a
seen-count, reduced by sum. A process *writes* a clip's row (it never adds to it), so a clip
seen twice by one process counts once, and a clip that several processes saw (the
distributed sampler pads the last batch) is divided by its seen-count: the vector is
identical on 1 or N processes, and what crosses processes grows with clips and classes,
never with frames. The contract is checked once, when the monitor is made, and the layout of
a clip's counts is the policy's (:func:`~sedcontract.guard.pipeline.count_layout`). For the AUROC
each clip adds its segment runs (:func:`~sedcontract.scores.segment_roc.clip_segments`: a row per
run of segments sharing their frames, so O(frames) a clip), gathered across processes and kept
once per clip. With ``curves``, each clip's frame scores are kept until ``compute``, which
makes the guard curves of the split (:func:`~sedcontract.guard.curves.guard_curves`: the
standard contract's counts at every threshold), each process those of the clips it owns,
joined exactly (:func:`~sedcontract.guard.curves.join_curves`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import numpy as np
import torch
from torch import distributed
from torchmetrics import Metric

from sedcontract.contracts.soft import ClauseTerms
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, GuardReport
from sedcontract.guard.curves import GuardCurves, check_curves, guard_curves, join_curves
from sedcontract.guard.pipeline import clip_counts, count_layout, empty_report, prepare_contract
from sedcontract.scores.segment_roc import (
    AurocSettings,
    SegmentRuns,
    auroc_result,
    clip_segments,
)
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy, decide
from sedcontract.traces.grid import frames_covering, to_us
from sedcontract.traces.score_files import ScoreTable, activity_to_events
from sedcontract.traces.traceset import check_classes
from sedcontract.traces.windows import Piece, check_windows, overlap_average

log = logging.getLogger(__name__)


class Audited:
    """What one ``compute`` returns: the guard report, the clips it covers, and with curves
    asked for their guard curves. (A plain class: torchmetrics walks dataclass results and
    refuses frozen ones.)"""

    __slots__ = ("auroc", "clips", "curves", "report")

    def __init__(self, report: GuardReport, clips: tuple[str, ...],
                 auroc: dict | None = None, curves: GuardCurves | None = None) -> None:
        self.report, self.clips, self.auroc, self.curves = report, clips, auroc, curves


class ContractMonitor(Metric):
    """Guard vector (and standard scores) of frame scores ``[batch, classes, frames]`` against
    a split's reference events, under a declared decision policy and contract."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, reference: EventList, durations: Mapping[str, float],
                 classes: Sequence[str], policy: AuditPolicy | None = None, *,
                 source: str = "",
                 windows: Mapping[str, tuple[str, float, float]] | None = None,
                 auroc: AurocSettings | None = None, curves: bool = False) -> None:
        super().__init__()
        # clips the batches name may be windows of the reference's files (id → file, start,
        # end): a batch then holds every window of its files, merged back to file time
        self.windows = dict(windows) if windows is not None else None
        self.window_ids: dict[str, set[str]] = {}
        for wid, (file, _, _) in (self.windows or {}).items():
            self.window_ids.setdefault(file, set()).add(wid)
        missing = [c for c in reference.clips if c not in durations]
        if missing:
            raise SedContractError(f"no duration for clip {missing[0]!r} of the reference")
        self.reference, self.durations = reference, dict(durations)
        for file, ids in self.window_ids.items():  # as a score folder's windows are checked
            check_windows(file, [(*self.windows[w][1:], w) for w in sorted(ids)],
                          self.durations.get(file))
        self.clips = tuple(reference.clips)
        self.index = {clip: i for i, clip in enumerate(self.clips)}
        # each clip's reference events, found once (a batch's are gathered, never searched)
        order: dict[str, list[int]] = {clip: [] for clip in self.clips}
        for i, clip in enumerate(reference.clip.tolist()):
            order[clip].append(i)
        self.events_of = {clip: np.asarray(idx, dtype=np.int64) for clip, idx in order.items()}
        policy = policy or AuditPolicy()
        # scores become events here: the policy says how, ``source`` where they came from
        decision = policy.decision or DecisionPolicy()
        if source:
            decision = replace(decision, source=source)
        self.policy = policy.but(decision=decision)
        self.curves = curves
        if curves:  # refused now, not after the first validation's batches
            check_curves(self.policy, decision)
        self.classes, self.hop = tuple(check_classes(classes)), policy.hop
        hop_us = int(to_us(policy.hop))
        duration_us = to_us(np.array([self.durations[c] for c in self.clips]))
        self.lengths = frames_covering(duration_us, hop_us).astype(np.int64)  # the grid
        self.whole = (duration_us // hop_us).astype(np.int64)  # frames a front end gives
        if not self.clips:
            raise SedContractError("the reference of the monitored split lists no clips")
        # the contract, checked once for every batch; the columns of the state (a clip's counts)
        self.resolver = prepare_contract(self.policy, self.classes)
        self.widths = count_layout(self.policy, self.classes)
        self.add_state("counts", torch.zeros(len(self.clips), sum(self.widths.values()),
                                             dtype=torch.int64), dist_reduce_fx="sum")
        self.add_state("seen", torch.zeros(len(self.clips), dtype=torch.int64),
                       dist_reduce_fx="sum")
        # segment runs for the AUROC (DCASE 2024's settings unless given): one float64 tensor
        # per clip, rows (clip, first segment, segments, scores…, positives…)
        self.auroc = auroc or AurocSettings()
        self.add_state("segments", [], dist_reduce_fx="cat")
        self.segment_entry: dict[str, int] = {}  # clip → its entry in this process's list
        self.label_index = {c: k for k, c in enumerate(self.classes)}
        # the decided events of the clips this process saw (for failure timelines; not
        # reduced across processes: O(events), kept until reset)
        self.predicted_rows: dict[str, list[tuple[str, float, float, str]]] = {}
        # with keep_scores (for score files: evaluate.py save_scores=true) or curves, each seen
        # clip's frame scores [frames, classes] on its own length; O(clips × frames × classes)
        # on each process, until reset
        self.keep_scores = False
        self.scores_of: dict[str, np.ndarray] = {}

    def reset(self) -> None:
        super().reset()
        self.predicted_rows = {}
        self.scores_of = {}
        self.segment_entry = {}

    def predicted(self) -> EventList:
        """The decided events of every clip this process saw since the last reset."""
        clips = tuple(c for c in self.clips if c in self.predicted_rows)
        return EventList.from_rows([r for c in clips for r in self.predicted_rows[c]],
                                   clips=clips)

    def update(self, scores: torch.Tensor, clips: Sequence[str]) -> None:
        """Audit a batch of clips (named by id) from their frame scores; keep their counts.
        With ``windows``, the batch's clips are windows, merged to their files first."""
        values = host(scores)  # the batch's one crossing to the host
        if self.windows is not None:
            values, clips = self.merged(values, clips)
        pred = self.decided(values, clips)
        if self.keep_scores or self.curves:
            for k, clip in enumerate(clips):
                n = int(self.lengths[self.index[clip]])
                kept = np.zeros((n, len(self.classes)), dtype=np.float32)
                m = min(n, values.shape[-1])
                kept[:m] = values[k, :, :m].T  # frames past the scores are 0, as decided
                self.scores_of[clip] = kept
        batch = tuple(dict.fromkeys(clips))
        self.add_segments(values, clips)
        take = np.concatenate([self.events_of[c] for c in batch])
        ref = self.reference
        reference = EventList(ref.clip[take], ref.onset[take], ref.offset[take],
                              ref.label[take], clips=batch, path=ref.path)
        arrays = clip_counts(reference, pred, self.policy, self.resolver,
                             durations={c: self.durations[c] for c in batch},
                             classes=self.classes)
        for clip in batch:
            self.predicted_rows[clip] = []
        for row in pred.to_rows():
            self.predicted_rows[row[0]].append(row)
        matrix = np.concatenate([arrays[k] for k in self.widths], axis=1)
        rows = torch.tensor([self.index[c] for c in batch], device=self.seen.device)
        self.counts[rows] = torch.from_numpy(matrix).to(self.counts)
        self.seen[rows] = 1

    def add_segments(self, values: np.ndarray, clips: Sequence[str]) -> None:
        """Each clip's segment runs (its last scores in the batch, on its own frames) as one
        entry of the ``segments`` state; a clip seen again by this process replaces its
        entry."""
        last = {c: k for k, c in enumerate(clips)}
        segment_us = int(to_us(self.auroc.segment_length))
        ref = self.reference
        for clip, k in last.items():
            i = self.index[clip]
            n = min(int(self.lengths[i]), values.shape[-1])
            frames = np.arange(n) * self.hop
            table = ScoreTable(frames, frames + self.hop, self.classes,
                               values[k, :, :n].T.astype(np.float64), np.arange(n) + 1)
            events = self.events_of[clip]
            runs = clip_segments(table, int(to_us(self.durations[clip])), segment_us,
                               to_us(ref.onset[events]), to_us(ref.offset[events]),
                               np.array([self.label_index[label] for label in
                                         ref.label[events].tolist()], dtype=np.int64), i)
            start = np.cumsum(runs.length) - runs.length
            rows = torch.from_numpy(np.column_stack([
                runs.clip, start, runs.length, runs.score, runs.positives]).astype(np.float64))
            if clip in self.segment_entry:
                self.segments[self.segment_entry[clip]] = rows
            else:
                self.segment_entry[clip] = len(self.segments)
                self.segments.append(rows)

    def segment_auroc(self) -> dict | None:
        """mAUC and mpAUC of the runs every process kept (a clip several processes saw kept
        once: their rows are alike), None when no clip was seen."""
        parts = self.segments if isinstance(self.segments, list) else [self.segments]
        parts = [p.detach().cpu().reshape(-1, 3 + 2 * len(self.classes)) for p in parts]
        if not parts:
            return None
        rows = np.unique(torch.cat(parts).numpy(), axis=0)
        if not len(rows):
            return None
        n = len(self.classes)
        counts = SegmentRuns(rows[:, 0].astype(np.int64), rows[:, 2].astype(np.int64),
                               rows[:, 3:3 + n], rows[:, 3 + n:].astype(np.int64))
        return auroc_result(counts, self.classes, self.auroc)

    def merged(self, scores: torch.Tensor | np.ndarray, clips: Sequence[str]
               ) -> tuple[np.ndarray, list[str]]:
        """Window scores ``[windows, classes, frames]`` merged into file scores (the mean of
        the windows covering each frame); every window of a file must be in the batch."""
        groups: dict[str, list[int]] = {}
        for k, clip in enumerate(clips):
            if clip not in self.windows:
                raise SedContractError(f"clip {clip!r} is not a window of this split")
            groups.setdefault(self.windows[clip][0], []).append(k)
        hop_us = int(to_us(self.hop))
        values = host(scores)
        files, merged = list(groups), []
        for file, ks in groups.items():
            if {clips[k] for k in ks} != self.window_ids[file]:
                raise SedContractError(
                    f"the batch holds {len(ks)} of the {len(self.window_ids[file])} windows "
                    f"of {file!r}: evaluation batches hold whole files")
            pieces = []
            for k in ks:
                _, start, end = self.windows[clips[k]]
                first = int(to_us(start)) // hop_us
                n = (int(to_us(end)) - int(to_us(start))) // hop_us
                if n > values.shape[-1]:
                    raise SedContractError(f"scores of {values.shape[-1]} frames for window "
                                           f"{clips[k]!r} of {n} whole frames of {self.hop:g} s")
                frames = (first + np.arange(n)) * self.hop
                pieces.append(Piece(frames, frames + self.hop, values[k, :, :n].T))
            piece = overlap_average(pieces, where=f"windows of {file!r}")
            index = np.rint(piece.onset / self.hop).astype(np.int64)
            if not np.array_equal(index, np.arange(len(index))):
                raise SedContractError(f"the windows of {file!r} do not start on the "
                                       f"{self.hop:g} s grid or leave its start uncovered")
            merged.append(piece.scores.T)
        out = np.zeros((len(files), len(self.classes), max(m.shape[1] for m in merged)),
                       dtype=np.float32)
        for i, m in enumerate(merged):
            out[i, :, :m.shape[1]] = m
        return out, files

    def decided(self, scores: torch.Tensor | np.ndarray, clips: Sequence[str]) -> EventList:
        """The events of a batch's frame scores ``[batch, classes, frames]`` under the decision
        policy, each clip on its own length (no filter across padding); a clip named twice in
        the batch keeps its last scores."""
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
        last = {c: k for k, c in enumerate(clips)}
        values = host(scores)
        batch = tuple(last)
        lengths = self.lengths[[self.index[c] for c in batch]]
        # frames past the scores (a clip's last partial frame) are 0, as a front end leaves them
        padded = np.zeros((len(batch), len(self.classes), grid), dtype=values.dtype)
        padded[..., :values.shape[-1]] = values[[last[c] for c in batch]]
        active = np.zeros(padded.shape, dtype=bool)
        for k in range(len(batch)):
            n = int(lengths[k])
            active[k, :, :n] = decide(padded[k, :, :n].T, self.policy.decision, self.hop,
                                       self.classes).T
        return activity_to_events(active, batch, self.classes, self.hop, lengths)

    def compute(self) -> Audited:
        seen = self.seen.detach().cpu().numpy()
        rows = np.flatnonzero(seen > 0)
        if not len(rows):
            raise SedContractError("the contract monitor saw no clips")
        total = self.counts.detach().cpu().numpy()[rows]
        times = seen[rows, None]
        if np.any(total % times):  # processes that saw one clip disagreed about it
            clash = [self.clips[i] for i in rows[np.any(total % times, axis=1)]]
            log.warning("%d clip(s) seen by several processes were scored differently by them "
                        "(first: %r); their counts are the rounded mean", len(clash), clash[0])
        matrix = np.rint(total / times).astype(np.int64)
        cuts = np.cumsum(list(self.widths.values()))[:-1]
        arrays = dict(zip(self.widths, np.split(matrix, cuts, axis=1), strict=True))
        clips = tuple(self.clips[i] for i in rows)
        # the bounds of the policy section are the ones the runs converted, in their order
        structure = empty_report(self.policy, self.classes,
                                 conversions=list(self.resolver.conversions.values()))
        return Audited(structure.rebuild(clips, arrays), clips, self.segment_auroc(),
                       self.joined_curves() if self.curves else None)

    def curves_of(self, clips: Sequence[str]) -> GuardCurves | None:
        """The guard curves of some of the clips this process kept (None for none): each
        clip's frame ``k`` a score row ``[k·hop, (k+1)·hop)`` cut at its duration, the frames
        its events were decided on."""
        if not clips:
            return None
        return guard_curves(self.reference_of(clips), KeptTables(self, tuple(clips)),
                            {c: self.durations[c] for c in clips}, self.policy,
                            decision=self.policy.decision)

    def reference_of(self, clips: Sequence[str]) -> EventList:
        """The reference events of ``clips`` (of this monitor's split), in their order."""
        take = np.concatenate([self.events_of[c] for c in clips])
        ref = self.reference
        return EventList(ref.clip[take], ref.onset[take], ref.offset[take], ref.label[take],
                         clips=tuple(clips), path=ref.path)

    def joined_curves(self) -> GuardCurves:
        """The curves of every clip any process saw, each clip once: under a distributed run
        (when the states are reduced) a clip belongs to the lowest rank that saw it, each rank
        makes the curves of its own and every rank joins them all."""
        mine = [c for c in self.clips if c in self.scores_of]
        if not (self.sync_on_compute and self.distributed_available_fn()):
            return self.curves_of(mine)  # compute has checked that this process saw clips
        group = self.process_group
        world, rank = distributed.get_world_size(group), distributed.get_rank(group)
        seen: list[list[str] | None] = [None] * world
        distributed.all_gather_object(seen, mine, group=group)
        parts: list[GuardCurves | None] = [None] * world
        distributed.all_gather_object(parts, self.curves_of(owned(seen, rank)), group=group)
        return join_curves([p for p in parts if p is not None])


def owned(seen: Sequence[Sequence[str] | None], rank: int) -> list[str]:
    """The clips of ``seen[rank]`` (the clips each rank saw) that no lower rank saw: each clip
    belongs to the lowest rank that saw it."""
    lower = {c for clips in seen[:rank] for c in clips or ()}
    return [c for c in seen[rank] or () if c not in lower]


class KeptTables(Mapping):
    """The kept frame scores of some clips (the monitor's, or ``scores_of`` kept past its
    reset) as score tables (clip → :class:`ScoreTable` and the name errors give), each made
    when it is read: one clip's float64 copy at a time."""

    def __init__(self, monitor: ContractMonitor, clips: tuple[str, ...],
                 scores_of: Mapping[str, np.ndarray] | None = None) -> None:
        self.monitor, self.clips = monitor, clips
        self.scores_of = monitor.scores_of if scores_of is None else scores_of

    def __getitem__(self, clip: str) -> tuple[ScoreTable, str]:
        if clip not in self.clips:
            raise KeyError(clip)
        scores = self.scores_of[clip]
        hop, k = self.monitor.hop, np.arange(len(scores))
        # the grid's last frame may pass the clip's end: its row ends there
        offset = np.minimum((k + 1) * hop, self.monitor.durations[clip])
        return ScoreTable(k * hop, offset, self.monitor.classes, scores.astype(np.float64),
                          k + 1), f"the validation scores of clip {clip!r}"

    def __iter__(self) -> Iterator[str]:
        return iter(self.clips)

    def __len__(self) -> int:
        return len(self.clips)


def host(scores: torch.Tensor | np.ndarray) -> np.ndarray:
    """Frame scores as a float32 array on the host (a tensor crosses once; an array stays)."""
    if isinstance(scores, torch.Tensor):
        return scores.detach().float().cpu().numpy()
    return np.asarray(scores, dtype=np.float32)


class SoftClauseMetric(Metric):
    """Soft satisfaction ``1 − Σ violations / Σ obligations`` of each relaxed clause over the
    validation batches: float64 sums per clause (fixed at construction), reduced by sum."""

    full_state_update = False
    is_differentiable = False
    higher_is_better = True

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = tuple(names)
        if len(set(self.names)) != len(self.names):
            raise SedContractError(f"clause names must be distinct, got {list(self.names)}")
        for state in ("violations", "obligations"):
            self.add_state(state, torch.zeros(len(self.names), dtype=torch.float64),
                           dist_reduce_fx="sum")

    def update(self, terms: Mapping[str, ClauseTerms]) -> None:
        """Add one batch's soft violations and obligations per clause (none: adds 0); stays
        on the device."""
        unknown = [n for n in terms if n not in self.names]
        if unknown:
            raise SedContractError(f"clause {unknown[0]!r} is not one of the monitored "
                                   f"clauses ({', '.join(self.names) or 'none'})")
        if not self.names:
            return
        zero = self.violations.new_zeros(())
        for state, field in ((self.violations, "violations"), (self.obligations, "obligations")):
            state += torch.stack([getattr(terms[n], field).detach().reshape(()).to(zero)
                                  if n in terms else zero for n in self.names])

    def compute(self) -> dict[str, float]:
        """``1 − violations / obligations`` per clause with obligations (the others left out)."""
        pairs = zip(self.names, self.violations.tolist(), self.obligations.tolist(), strict=True)
        return {n: 1 - v / o for n, v, o in pairs if o > 0}
