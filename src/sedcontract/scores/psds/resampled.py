"""PSDS of bootstrap resamples of the clips, from per-clip counts (as sed_scores_eval's
bootstrapped PSDS keeps each clip's deltas): a resample weighs each clip's counts, reference
events and duration by how often it was drawn, and the PSD-ROC is formed again from those
sums — nothing is read or counted twice. The draws are the project's
(:func:`sedcontract.resampling.index_chunks`), the same as every other interval of these clips
and seed; with every clip drawn once the value is the point estimate, bit for bit."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.resampling import index_chunks, interval_dicts, percentile_intervals, resampling
from sedcontract.scores.psds.of_scores import ScoredCorpus, block_task, psds_from_counts
from sedcontract.scores.psds.score_counts import ClipKeyed, ScoreChanges
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.given import durations_of, events_of, score_source


@dataclass(frozen=True)
class ClipRows:
    """One scenario's counts of every clip, grouped once by (class, score) and by (class,
    other class, score): a resample only weighs and sums them."""

    n_classes: int
    clip: np.ndarray       # per row, the clip it came from
    group: np.ndarray      # per row, its (class, score) group
    label: np.ndarray      # per group
    score: np.ndarray
    tp: np.ndarray         # per row
    fp: np.ndarray
    ct_clip: np.ndarray
    ct_group: np.ndarray
    ct_label: np.ndarray   # per group
    ct_other: np.ndarray
    ct_score: np.ndarray
    ct: np.ndarray         # per row

    @classmethod
    def of(cls, parts: Sequence[ClipKeyed], n_classes: int) -> ClipRows:
        """``parts``: batches of counts keyed by (clip, class)."""
        def keyed(part: ClipKeyed, name: str) -> tuple[np.ndarray, np.ndarray]:
            key = np.repeat(np.arange(len(getattr(part.counts, name)) - 1),
                            np.diff(getattr(part.counts, name)))
            return key // n_classes + part.first, key % n_classes

        def grouped(keys: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
            if not len(keys[0]):
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            order = np.lexsort(keys[::-1])
            new = np.zeros(len(order), dtype=bool)
            new[0] = True
            for k in keys:
                new[1:] |= k[order][1:] != k[order][:-1]
            group = np.empty(len(order), dtype=np.int64)
            group[order] = np.cumsum(new) - 1
            return group, order[new]

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(p.counts, name) for p in parts] or [np.zeros(0)])

        rows = [keyed(p, "ptr") for p in parts]
        clip = np.concatenate([r[0] for r in rows] or [np.zeros(0, dtype=np.int64)])
        label = np.concatenate([r[1] for r in rows] or [np.zeros(0, dtype=np.int64)])
        score = joined("score")
        group, first = grouped((label, score))
        ct_rows = [keyed(p, "ct_ptr") for p in parts]
        ct_clip = np.concatenate([r[0] for r in ct_rows] or [np.zeros(0, dtype=np.int64)])
        ct_label = np.concatenate([r[1] for r in ct_rows] or [np.zeros(0, dtype=np.int64)])
        ct_other = joined("ct_other").astype(np.int64)
        ct_score = joined("ct_score")
        ct_group, ct_first = grouped((ct_label, ct_other, ct_score))
        return cls(n_classes, clip.astype(np.int64), group, label[first], score[first],
                   joined("tp").astype(np.int64), joined("fp").astype(np.int64),
                   ct_clip.astype(np.int64), ct_group, ct_label[ct_first], ct_other[ct_first],
                   ct_score[ct_first], joined("ct").astype(np.int64))

    def weighted(self, weights: np.ndarray) -> ScoreChanges:
        """The counts of a resample: each clip's rows counted ``weights[clip]`` times; a
        (class, score) is kept where a drawn clip's counts change (sed_scores_eval's change
        points), even when their changes cancel."""
        classes = np.arange(self.n_classes + 1)
        w = weights[self.clip]
        tp = np.bincount(self.group, weights=self.tp * w, minlength=len(self.label))
        fp = np.bincount(self.group, weights=self.fp * w, minlength=len(self.label))
        keep = np.bincount(self.group, weights=w, minlength=len(self.label)) > 0
        ct_w = weights[self.ct_clip]
        ct = np.bincount(self.ct_group, weights=self.ct * ct_w, minlength=len(self.ct_label))
        ct_keep = np.bincount(self.ct_group, weights=ct_w, minlength=len(self.ct_label)) > 0
        return ScoreChanges(np.searchsorted(self.label[keep], classes), self.score[keep],
                           tp[keep].astype(np.int64), fp[keep].astype(np.int64),
                           np.searchsorted(self.ct_label[ct_keep], classes),
                           self.ct_score[ct_keep], self.ct_other[ct_keep].astype(np.int64),
                           ct[ct_keep].astype(np.int64))


def psds_draws(rows: Sequence[ClipRows], truth: ClipTruth, classes: Sequence[str],
               seconds: Sequence[float], settings: Mapping[str, PsdsSettings], resamples: int,
               seed: int) -> np.ndarray:
    """``[resamples, scenarios]``: each scenario's PSDS of each resample of the clips;
    ``rows[k]``: scenario ``k``'s counts by clip, ``seconds[c]`` clip ``c``'s duration."""
    n_clips = len(truth.clips)
    lengths = np.asarray(seconds, dtype=np.float64)
    out = np.empty((resamples, len(rows)))
    k = 0
    for chunk in index_chunks(n_clips, resamples, seed):
        for draw in chunk:
            weights = np.bincount(draw, minlength=n_clips)
            # summed clip after clip, as the corpus's total is: the same float
            total = float(np.cumsum(weights * lengths)[-1]) if n_clips else 0.0
            for j, (chosen, scenario) in enumerate(zip(settings.values(), rows, strict=True)):
                out[k, j] = psds_from_counts([scenario.weighted(weights)], truth, classes,
                                             total, chosen, weights, value_only=True)["value"]
            k += 1
    return out


def psds_and_draws(scores: Any, ref: EventList, durations: Mapping[str, float],
                   settings: Mapping[str, PsdsSettings], classes: Sequence[str], *,
                   cut: bool = False, resamples: int, seed: int
                   ) -> tuple[dict[str, Any], np.ndarray]:
    """What :func:`~sedcontract.scores.psds.of_scores.psds_of_scores` gives (equal to it,
    bit for bit), counted clip by clip in this process, and ``[resamples, scenarios]``: each
    resample's PSDS."""
    corpus = ScoredCorpus.of(scores, ref, durations, classes, cut)
    keyed, pred_cut = block_task(scores, corpus.truth, corpus.classes,
                                 list(settings.values()), corpus.lengths, per_clip=True)
    rows = [ClipRows.of(k, len(corpus.classes)) for k in keyed]
    seconds = [float(durations[c]) for c in corpus.clips]  # as the total sums them
    draws = psds_draws(rows, corpus.truth, corpus.classes, seconds, settings, resamples, seed)
    once = np.ones(len(corpus.clips), dtype=np.int64)  # every clip once: the counts themselves
    return corpus.results([[r.weighted(once)] for r in rows], settings, pred_cut, cut), draws


def psds_with_intervals(scores: Any, ref: EventList, durations: Mapping[str, float],
                        settings: Mapping[str, PsdsSettings], classes: Sequence[str], *,
                        cut: bool = False, resamples: int, seed: int = 0,
                        level: float = 0.95) -> dict[str, Any]:
    """:func:`psds_and_draws`'s results, each scenario with its ``"interval"``: the
    percentile bootstrap interval over the clips (a resample without events of some class is
    undefined, left out and counted)."""
    resamples, seed = resampling(resamples, seed, level, max(len(ref.clips), 1))
    out, draws = psds_and_draws(scores, ref, durations, settings, classes, cut=cut,
                                resamples=resamples, seed=seed)
    names = list(settings)
    intervals = interval_dicts(percentile_intervals(
        names, [out[n]["value"] for n in names], draws, level, resamples), seed)
    for j, name in enumerate(names):
        out[name]["interval"] = intervals[name]
        out[name]["draws"] = draws[:, j]  # kept for source rows; reports leave them out
    return out


def psds_of_subsets(scores: Any, ref: Any, durations: Any, settings: PsdsSettings,
                    subsets: Callable[[Sequence[str]], list[list[str]]]) -> list[dict[str, Any]]:
    """One scenario's whole PSDS result (value, per class, PSD-ROC) of each subset of the
    clips that ``subsets(clips)`` names, each clip counted once and each subset summing its
    clips' counts, reference events and durations (sed_scores_eval's bootstrapped PSDS)."""
    ref = events_of(ref, "ground truth")
    given = durations_of(durations)
    if given is None:
        raise PsdsUnavailable("PSDS needs clip durations")
    source = score_source(scores, ref.clips)
    corpus = ScoredCorpus.of(source, ref, given, tuple(source.columns))
    keyed, _ = block_task(source, corpus.truth, corpus.classes, [settings], per_clip=True)
    rows = ClipRows.of(keyed[0], len(corpus.classes))
    index = {clip: k for k, clip in enumerate(corpus.clips)}
    out = []
    for number, subset in enumerate(subsets(corpus.clips), start=1):
        weights = np.zeros(len(corpus.clips), dtype=np.int64)
        weights[[index[c] for c in subset]] = 1
        total = float(sum(given[c] for c in subset))
        result = psds_from_counts([rows.weighted(weights)], corpus.truth, corpus.classes,
                                  total, settings, weights)
        if "roc" not in result:
            raise PsdsUnavailable(f"subset {number} of the clips holds no reference event of "
                                  "some class: its PSDS is undefined")
        out.append(result)
    return out
