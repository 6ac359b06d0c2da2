"""The rows' per-clip counts in the layout the bootstrap resamples, and which systems pair
on the same clips."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sedcontract.analysis.report.tables import guard_names, of_roles, score_names
from sedcontract.analysis.source_rows import SourceRows
from sedcontract.errors import SedContractError
from sedcontract.guard.rows import (
    RANKING,
    SCORE,
    SCORE_PARTS,
    of_kind,
)
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.traces import MODES


def paired_members(systems: dict[tuple[str, str], tuple[int, ...]], baseline: str,
                    clip_names: Sequence[str]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """(system, its baseline) pairs within each policy; refused, naming the system and the
    clips, unless both are of the same clips."""
    known = sorted({s for s, _ in systems})
    if baseline not in known:
        raise SedContractError(f"--baseline {baseline}: no system of that name in the rows "
                               f"(systems: {', '.join(known)})")
    pairs = []
    for key in sorted(systems):
        system, policy = key
        if system == baseline:
            continue
        base = (baseline, policy)
        if base not in systems:
            raise SedContractError(f"--baseline {baseline}: the baseline has no rows of policy "
                                   f"{policy}, the policy of system {system}; a paired "
                                   "comparison is between systems measured alike")
        mine, theirs = set(systems[key]), set(systems[base])
        if mine != theirs:
            lacks = [clip_names[i] for i in systems[base] if i not in mine]
            extra = [clip_names[i] for i in systems[key] if i not in theirs]
            parts = ([f"lacks {len(lacks)} clip(s) of the baseline: {clip_list(lacks)}"]
                     if lacks else []) + ([f"has {len(extra)} clip(s) the baseline lacks: "
                                           f"{clip_list(extra)}"] if extra else [])
            raise SedContractError(f"--baseline {baseline}: system {system} is not of the "
                                   f"baseline's clips — it {' and '.join(parts)}; a paired "
                                   "bootstrap resamples the same clips for both systems")
        pairs.append((key, base))
    if not pairs:
        raise SedContractError(f"--baseline {baseline}: no other system in the rows to compare "
                               "with it")
    return pairs


@dataclass
class ResampledCounts:
    """The rows' per-clip counts, system by system, in the layout the bootstrap resamples:
    per clip a row of ``[mode, (satisfied, obligations), coordinate]`` guard counts, then
    ``[score, (tp, references, outputs)]``; and apart, per score and class (tp, references,
    outputs) for macro F1. Clips are numbered in the order the rows name them."""

    guard: list[str]
    scores: list[str]
    classes: list[str]
    clips: list[str]
    members: list[tuple[str, str]]  # (system, policy) by member number
    of: dict[tuple[str, str], tuple[int, ...]]  # its clips, sorted
    sequence: dict[tuple[str, str], tuple[int, ...]]  # its clips as its rows name them
    modes: dict[tuple[str, str], set[str]]
    scored: dict[tuple[str, str], set[str]]
    entries: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # clip, member, column, n
    by_class: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

    @property
    def width(self) -> int:
        return 4 * len(self.guard) + 3 * len(self.scores)

    @classmethod
    def from_rows(cls, rows: SourceRows) -> ResampledCounts:
        v, codes = rows.vocab, rows.codes
        guard, scores = guard_names(rows), score_names(rows)
        counted = ~of_roles(rows, (RANKING,))
        # clips in the order the rows first name them; members (system, policy) likewise
        clip_codes, first = np.unique(codes["clip"][counted], return_index=True)
        clip_of = np.full(len(v["clip"]), -1, dtype=np.int64)
        clip_of[clip_codes[np.argsort(first, kind="stable")]] = np.arange(len(clip_codes))
        clip = clip_of[codes["clip"]]
        pair = codes["system"].astype(np.int64) * len(v["policy"]) + codes["policy"]
        pair_codes = np.unique(pair[counted])
        at = np.minimum(np.searchsorted(pair_codes, pair), max(len(pair_codes) - 1, 0))
        member = np.where(pair_codes[at] == pair, at, -1) if len(pair_codes) else \
            np.full(len(pair), -1)
        members = [(v["system"][c // len(v["policy"])], v["policy"][c % len(v["policy"])])
                   for c in pair_codes]
        # each (member, clip) once, with its first row: a member's clips sorted and in the
        # order its rows name them
        pair_clip = member.astype(np.int64) * max(len(clip_codes), 1) + clip
        found, at = np.unique(pair_clip[counted], return_index=True)
        by_row = np.argsort(at, kind="stable")
        owner, clip_no = found // max(len(clip_codes), 1), found % max(len(clip_codes), 1)
        of = {key: tuple(int(c) for c in clip_no[owner == m]) for m, key in enumerate(members)}
        sequence = {key: tuple(int(c) for c in clip_no[by_row][owner[by_row] == m])
                    for m, key in enumerate(members)}
        k = len(guard)
        # guard rows: the column of each row's satisfied count (its obligations: + k)
        mode_at = np.array([MODES.index(m) if m in MODES else -1 for m in v["mode"]])
        guard_at = np.array([guard.index(c) if c in guard else -1 for c in v["coordinate"]])
        is_guard = (codes["role"] == (v["role"].index("guard") if "guard" in v["role"] else
                                      -1)) & (guard_at[codes["coordinate"]] >= 0) & counted
        column = mode_at[codes["mode"]] * 2 * k + guard_at[codes["coordinate"]]
        modes: dict[tuple[str, str], set[str]] = {key: set() for key in members}
        for pair_mode in np.unique(member[is_guard] * len(v["mode"]) + codes["mode"][is_guard]):
            modes[members[pair_mode // len(v["mode"])]].add(v["mode"][pair_mode % len(v["mode"])])
        # score rows (typed): tp and references from recall rows, outputs from precision rows
        kinds = [of_kind(c, SCORE) for c in v["coordinate"]]
        score_at = np.array([scores.index(kd.name) if kd is not None and kd.name in scores
                             and kd.part in SCORE_PARTS else -1 for kd in kinds])
        recall = np.array([kd is not None and kd.part == "recall" for kd in kinds])
        typed = codes["mode"] == (v["mode"].index("typed") if "typed" in v["mode"] else -1)
        is_score = (codes["role"] == (v["role"].index("score") if "score" in v["role"] else
                                      -1)) & typed & (score_at[codes["coordinate"]] >= 0)
        scored: dict[tuple[str, str], set[str]] = {key: set() for key in members}
        n = max(len(scores), 1)
        for pair_score in np.unique(member[is_score] * n
                                    + score_at[codes["coordinate"]][is_score]):
            scored[members[pair_score // n]].add(scores[pair_score % n])
        g, sc = np.flatnonzero(is_guard), np.flatnonzero(is_score)
        is_recall = recall[codes["coordinate"][sc]]
        rec, pre = sc[is_recall], sc[~is_recall]
        base = 4 * k + 3 * score_at[codes["coordinate"]]
        entries = tuple(np.concatenate(parts) for parts in zip(
            (clip[g], member[g], column[g], rows.satisfied[g]),
            (clip[g], member[g], column[g] + k, rows.obligations[g]),
            (clip[rec], member[rec], base[rec], rows.satisfied[rec]),
            (clip[rec], member[rec], base[rec] + 1, rows.obligations[rec]),
            (clip[pre], member[pre], base[pre] + 2, rows.obligations[pre]), strict=True))
        classes = sorted(v["class"][c] for c in np.unique(codes["class"][is_score]))
        class_at = np.array([classes.index(c) if c in classes else -1 for c in v["class"]])
        per = 3 * (score_at[codes["coordinate"]] * len(classes) + class_at[codes["class"]])
        by_class = tuple(np.concatenate(parts) for parts in zip(
            (clip[rec], member[rec], per[rec], rows.satisfied[rec]),
            (clip[rec], member[rec], per[rec] + 1, rows.obligations[rec]),
            (clip[pre], member[pre], per[pre] + 2, rows.obligations[pre]), strict=True))
        return cls(guard, scores, classes, [v["clip"][c] for c in
                                            clip_codes[np.argsort(first, kind="stable")]],
                   members, of, sequence, modes, scored, entries, by_class)

    def array(self, clips: Sequence[int], members: Sequence[tuple[str, str]],
              per_class: bool = False) -> np.ndarray:
        """``[clips, members, width]``: the members' counts on these clips (in this order);
        ``per_class``: ``[clips, members, scores, classes, 3]``, the counts of macro F1."""
        position = np.full(len(self.clips), -1)
        position[list(clips)] = np.arange(len(clips))
        slot = np.full(len(self.members), -1)
        slot[[self.members.index(m) for m in members]] = np.arange(len(members))
        clip, member, column, count = self.by_class if per_class else self.entries
        width = 3 * len(self.scores) * len(self.classes) if per_class else self.width
        out = np.zeros((len(clips), len(members), width), dtype=np.int64)
        keep = (slot[member] >= 0) if len(member) else np.zeros(0, dtype=bool)
        np.add.at(out, (position[clip[keep]], slot[member[keep]], column[keep]), count[keep])
        if per_class:
            return out.reshape(len(clips), len(members), len(self.scores), len(self.classes), 3)
        return out


def macro_points(totals: np.ndarray) -> np.ndarray:
    """``[members, scores, classes, 3]`` totals → each member's macro F1 per score, as
    :meth:`~sedcontract.scores.counts.MetricResult.macro` computes it (bit for bit)."""
    out = np.full(totals.shape[:2], math.nan)
    for m, s in np.ndindex(*totals.shape[:2]):
        out[m, s] = MetricResult.mean_of([Counts(*(int(n) for n in t)).f1
                                          for t in totals[m, s]])[0]
    return out


def clip_list(clips: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(c) for c in clips[:limit])
    return shown + (f", … ({len(clips)} in all)" if len(clips) > limit else "")
