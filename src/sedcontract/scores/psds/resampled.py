"""PSDS of bootstrap resamples of the clips, from per-clip counts (as sed_scores_eval's
bootstrapped PSDS keeps each clip's deltas): a resample weighs each clip's counts, reference
events and duration by how often it was drawn, and the PSD-ROC is formed again from those
sums — nothing is read or counted twice. A block of resamples is weighed as one sparse
product and its PSD-ROCs formed together, each value the one its resample gives alone, bit for
bit (:func:`~sedcontract.scores.psds.of_scores.psds_values`). The draws are the project's
(:func:`sedcontract.resampling.index_chunks`), the same as every other interval of these clips
and seed; with every clip drawn once the value is the point estimate, bit for bit."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from sedcontract.blocks import block_results, with_jobs
from sedcontract.resampling import (
    CHUNK_CELLS,
    draw_counts,
    index_chunks,
    interval_dicts,
    percentile_intervals,
    resampling,
)
from sedcontract.scores.psds.of_scores import (
    ScoredCorpus,
    block_task,
    psds_from_counts,
    psds_values,
)
from sedcontract.scores.psds.score_counts import ClipKeyed, ScoreChanges, new_runs
from sedcontract.scores.psds.settings import PsdsSettings, PsdsUnavailable
from sedcontract.scores.truth import ClipTruth
from sedcontract.traces import EventList
from sedcontract.traces.given import durations_of, events_of, score_source

if TYPE_CHECKING:
    from scipy import sparse


@dataclass(frozen=True)
class ClipRows:
    """One scenario's counts of every clip, grouped once by (class, score) and by (class,
    other class, score): a resample only weighs and sums them."""

    n_classes: int
    n_clips: int
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
            new = new_runs(*(k[order] for k in keys))
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
        n_clips = max((p.first + (len(p.counts.ptr) - 1) // n_classes for p in parts),
                      default=0)
        return cls(n_classes, n_clips, clip.astype(np.int64), group, label[first], score[first],
                   joined("tp").astype(np.int64), joined("fp").astype(np.int64),
                   ct_clip.astype(np.int64), ct_group, ct_label[ct_first], ct_other[ct_first],
                   ct_score[ct_first], joined("ct").astype(np.int64))

    def weighted(self, weights: np.ndarray) -> ScoreChanges:
        """The counts of resamples ``weights[d]`` (``[resamples, clips]``) as curves d·K + c:
        each clip's rows counted ``weights[d, clip]`` times; a (class, score) is kept where a
        drawn clip's counts change (sed_scores_eval's change points), even when their changes
        cancel."""
        D, K = len(weights), self.n_classes
        rows, ct_rows = self._moves
        sums = np.asarray(rows.T @ weights.T).T            # [D, 3 · groups]: tp, fp, drawn
        ct_sums = np.asarray(ct_rows.T @ weights.T).T      # [D, 2 · groups]: count, drawn

        def kept(sums: np.ndarray, label: np.ndarray, parts: int
                 ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
            G = len(label)
            d, g = np.nonzero(sums[:, (parts - 1) * G:] > 0)
            curve = d * K + label[g]
            return (np.searchsorted(curve, np.arange(D * K + 1)), g,
                    [sums[d, k * G + g] for k in range(parts - 1)])

        ptr, g, (tp, fp) = kept(sums, self.label, 3)
        ct_ptr, ct_g, (ct,) = kept(ct_sums, self.ct_label, 2)
        return ScoreChanges(ptr, self.score[g], tp, fp, ct_ptr, self.ct_score[ct_g],
                            self.ct_other[ct_g].astype(np.int64), ct)

    @property
    def cells(self) -> int:
        """Numbers per resample that :meth:`weighted` holds at once."""
        return 3 * len(self.label) + 2 * len(self.ct_label)

    @cached_property
    def _moves(self) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
        """``[clips, 3 · groups]``: each clip's true and false positive changes per group and
        its number of rows there; ``[clips, 2 · groups]``: the same of cross-triggers."""
        from scipy import sparse  # imported where used: ``import sedcontract`` stays light

        def matrix(clip: np.ndarray, group: np.ndarray, n: int,
                   values: Sequence[np.ndarray]) -> sparse.csr_matrix:
            columns = np.concatenate([group + k * n for k in range(len(values) + 1)])
            data = np.concatenate([*values, np.ones(len(clip), dtype=np.int64)])
            return sparse.csr_matrix((data, (np.tile(clip, len(values) + 1), columns)),
                                     shape=(self.n_clips, n * (len(values) + 1)))

        return (matrix(self.clip, self.group, len(self.label), (self.tp, self.fp)),
                matrix(self.ct_clip, self.ct_group, len(self.ct_label), (self.ct,)))


def psds_draws(rows: Sequence[ClipRows], truth: ClipTruth, classes: Sequence[str],
               seconds: Sequence[float], settings: Mapping[str, PsdsSettings], resamples: int,
               seed: int) -> np.ndarray:
    """``[resamples, scenarios]``: each scenario's PSDS of each resample of the clips, many
    resamples at once; ``rows[k]``: scenario ``k``'s counts by clip, ``seconds[c]`` clip
    ``c``'s duration."""
    n_clips = len(truth.clips)
    lengths = np.asarray(seconds, dtype=np.float64)
    out = np.empty((resamples, len(rows)))
    done = 0
    for chunk in index_chunks(n_clips, resamples, seed):
        D = len(chunk)
        weights = draw_counts(chunk, n_clips)
        # summed clip after clip, as the corpus's total is: the same float
        totals = np.cumsum(weights * lengths, axis=1)[:, -1]
        for j, (chosen, scenario) in enumerate(zip(settings.values(), rows, strict=True)):
            step = max(1, CHUNK_CELLS // max(scenario.cells, 1))
            for a in range(0, D, step):
                w = weights[a:a + step]
                out[done + a:done + a + len(w), j] = psds_values(
                    scenario.weighted(w), truth, w, totals[a:a + step], chosen)
        done += D
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
    return corpus.results([[r.weighted(once[None])] for r in rows], settings, pred_cut,
                          cut), draws


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
                    subsets: Callable[[Sequence[str]], list[list[str]]], num_jobs: Any = 1
                    ) -> list[dict[str, Any]]:
    """One scenario's whole PSDS result (value, per class, PSD-ROC) of each subset of the
    clips that ``subsets(clips)`` names, each clip counted once (on ``num_jobs`` processes,
    in as many blocks of clips) and each subset summing its clips' counts, reference events
    and durations (sed_scores_eval's bootstrapped PSDS)."""
    ref = events_of(ref, "ground truth")
    given = durations_of(durations)
    if given is None:
        raise PsdsUnavailable("PSDS needs clip durations")
    source = score_source(scores, ref.clips)
    corpus = ScoredCorpus.of(source, ref, given, tuple(source.columns))

    def count(executor: Any, blocks: int | None) -> list[ClipKeyed]:
        if executor is None:
            return keyed_task(source, corpus.truth, corpus.classes, settings, 0)

        def task(a: int, b: int) -> Any:
            return executor.submit(keyed_task, source.select(corpus.clips[a:b]),
                                   corpus.truth.block(a, b), corpus.classes, settings, a)

        return [part for done in block_results(len(corpus.clips), blocks, task)
                for part in done]

    rows = ClipRows.of(with_jobs(num_jobs, __name__, count), len(corpus.classes))
    index = {clip: k for k, clip in enumerate(corpus.clips)}
    out = []
    for number, subset in enumerate(subsets(corpus.clips), start=1):
        weights = np.zeros(len(corpus.clips), dtype=np.int64)
        weights[[index[c] for c in subset]] = 1
        total = float(sum(given[c] for c in subset))
        result = psds_from_counts([rows.weighted(weights[None])], corpus.truth, corpus.classes,
                                  total, settings, weights)
        if "roc" not in result:
            raise PsdsUnavailable(f"subset {number} of the clips holds no reference event of "
                                  "some class: its PSDS is undefined")
        out.append(result)
    return out


def keyed_task(scores: Any, truth: ClipTruth, classes: tuple[str, ...], settings: PsdsSettings,
               first: int) -> list[ClipKeyed]:
    """One scenario's counts of a block of clips keyed by clip, the block's clips numbered
    from ``first`` (a task an executor runs)."""
    keyed, _ = block_task(scores, truth, classes, [settings], per_clip=True)
    return [replace(part, first=part.first + first) for part in keyed[0]]
