"""PSDS on request: from score files or tables as sed_scores_eval computes it (every
threshold; :mod:`sedcontract.scores.psds.of_scores`, checked equal to it) or from
operating-point tables as psds_eval computes it (:mod:`sedcontract.scores.psds.operating_points`),
and the PSD-ROC figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.figures import png, pyplot
from sedcontract.resampling import interval_dicts, percentile_intervals, resampling
from sedcontract.scores.psds.of_scores import psds_of_scores
from sedcontract.scores.psds.operating_points import psds_of_points
from sedcontract.scores.psds.resampled import psds_and_draws, psds_with_intervals
from sedcontract.scores.psds.settings import PRESETS, PsdsSettings, PsdsUnavailable, scenarios
from sedcontract.traces import EventList
from sedcontract.traces.given import durations_of, events_of, score_source
from sedcontract.traces.score_files import ScoreFolder


@dataclass(frozen=True)
class PsdsRequest:
    """PSDS beside the standard scores: from score files or tables (``scores``: a folder,
    a :class:`~sedcontract.traces.score_files.ScoreFolder` or a mapping of clip → table;
    sed_scores_eval's rule) or from operating-point tables (``points``, psds_eval's rule), for
    each scenario of ``settings``. The reference and the predictions are taken as they come,
    as those tools take them; ``cut`` cuts both at the clips' durations (one rule for both
    routes, :func:`~sedcontract.traces.overrun.cut_at_durations`)."""

    scores: str | Path | ScoreFolder | Mapping[str, Any] | None = None
    points: Sequence[EventList] | None = None
    settings: Mapping[str, PsdsSettings] = field(default_factory=lambda: dict(PRESETS))
    cut: bool = False
    resamples: int = 0  # from score files: each scenario's bootstrap interval over the clips
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        if (self.scores is None) == (self.points is None):
            raise SedContractError("PSDS comes from score files or from operating points: give "
                                   "exactly one")
        if not self.settings:
            raise SedContractError("PSDS needs at least one scenario")
        if not isinstance(self.cut, bool):
            raise SedContractError(f"cut must be true or false, got {self.cut!r}")

    def compute(self, ref: EventList, durations: Mapping[str, float] | None,
                classes: Sequence[str] | None = None, *, executor: Any = None,
                blocks: int | None = None) -> dict[str, Any]:
        """The scenarios' PSDS against the reference ``ref`` as given (cut with the predictions
        when ``cut``); on ``executor`` in ``blocks`` of clips when given, the same result."""
        if self.scores is not None:
            return psds(self.scores, ref, durations, self.settings, executor=executor,
                        blocks=blocks, cut=self.cut, resamples=self.resamples,
                        seed=self.seed, level=self.level)
        return psds_of_points(self.points, ref, durations, self.settings, classes,
                              executor=executor, blocks=blocks, cut=self.cut)


def psds(scores: str | Path | ScoreFolder | Mapping[str, Any], ref: Any,
         durations: Mapping[str, float] | str | Path | Any | None,
         settings: Mapping[str, PsdsSettings] | None = None, *, executor: Any = None,
         blocks: int | None = None, cut: bool = False, resamples: int = 0, seed: int = 0,
         level: float = 0.95, floors: bool | None = None) -> dict[str, Any]:
    """``{scenario: {"value", "per_class", "settings", "rule", "roc"}}`` (default scenarios: the
    DCASE presets) of the score files of ``ref``'s clips in a folder (read one clip at a time;
    a file of another clip is refused, as the command line refuses it), a
    :class:`~sedcontract.traces.score_files.ScoreFolder` (opened as its caller decides)
    (or any table source with its ``columns``, ``select(clips)``, ``stream(clips)`` and
    ``in``), or a mapping of clip → DataFrame in sed_scores_eval's layout, table or (table,
    source). ``ref``: the ground truth (an event file or list, clip → [(onset, offset,
    label)], a DataFrame of DCASE rows); ``durations``: clip → seconds, a durations file or
    DataFrame. Each score column is a class; with an ``executor``, blocks of clips are
    counted where it runs (the same result). The reference and the tables are taken as they
    come (sed_scores_eval's PSDS on the same files); ``cut`` cuts both at the durations.
    ``roc`` holds the PSD-ROC (``efpr``, ``etpr``, ``mean``, ``std``) and each class's
    staircase (``classes``: class → ``tpr``, ``efpr``). ``floors`` (default: for tables in
    memory; ``True`` reads a folder twice) leaves out what lies below each class's score
    floor, where every threshold is past ``max_efpr``: the same result, dense scores at the
    cost of sparse ones (:mod:`~sedcontract.scores.psds.floors`)."""
    settings = scenarios(settings)
    ref = events_of(ref, "ground truth")
    durations = durations_of(durations)
    if durations is None:
        raise PsdsUnavailable("PSDS needs clip durations (--durations)")
    scores = score_source(scores, ref.clips)
    if resamples:  # counted clip by clip in this process, then resampled
        return psds_with_intervals(scores, ref, durations, settings,
                                   tuple(scores.columns), cut=cut, resamples=resamples,
                                   seed=seed, level=level)
    return psds_of_scores(scores, ref, durations, settings, tuple(scores.columns),
                          executor=executor, blocks=blocks, cut=cut, floors=floors)


def paired_psds(scores: Any, other: Any, ref: Any, durations: Any,
                settings: Mapping[str, PsdsSettings] | None = None, *, cut: bool = False,
                resamples: int = 2000, seed: int = 0, level: float = 0.95
                ) -> dict[str, dict[str, Any]]:
    """Each scenario's PSDS difference ``scores`` − ``other`` (two systems' score tables of
    the same clips, as :func:`psds` takes them) with its paired percentile bootstrap interval:
    every resample draws the same clips for both systems (their per-clip counts weighed);
    ``cut`` as :func:`psds` takes it."""
    ref = events_of(ref, "ground truth")
    durations = durations_of(durations)
    if durations is None:
        raise PsdsUnavailable("PSDS needs clip durations")
    settings = scenarios(settings)
    resamples, seed = resampling(resamples, seed, level, max(len(ref.clips), 1))
    done = []
    for tables in (scores, other):
        source = score_source(tables, ref.clips)
        done.append(psds_and_draws(source, ref, durations, settings, tuple(source.columns),
                                   cut=cut, resamples=resamples, seed=seed))
    (a, draws_a), (b, draws_b) = done
    names = list(settings)
    return interval_dicts(percentile_intervals(
        names, [a[n]["value"] - b[n]["value"] for n in names], draws_a - draws_b, level,
        resamples), seed)


def psd_roc_png(result: Mapping[str, Any]) -> bytes:
    """The PSD-ROC of each scenario, a panel each: the effective TPR against the effective FP
    rate up to ``max_efpr``, with each class's own curve and the mean TPR and its spread
    across classes where known."""
    if "note" in result:
        raise SedContractError(f"no PSD-ROC to draw: PSDS was not computed ({result['note']})")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(result), figsize=(5.0 * len(result), 4.6), squeeze=False)
    for ax, (name, value) in zip(axes[0], result.items(), strict=True):
        roc, s = value["roc"], value["settings"]
        x = np.asarray(roc["efpr"], dtype=float)
        keep = x <= s["max_efpr"]
        x_end = np.append(x[keep], s["max_efpr"])
        if "mean" in roc:
            mean, std = (np.append(np.asarray(roc[k])[keep], np.asarray(roc[k])[keep][-1])
                         for k in ("mean", "std"))
            ax.fill_between(x_end, np.maximum(mean - std, 0), np.minimum(mean + std, 1),
                            step="post", alpha=0.2, color="tab:blue",
                            label="mean TPR ± std over classes")
            ax.step(x_end, mean, where="post", color="tab:blue", linestyle="--", lw=1)
        for k, (cls, curve) in enumerate(sorted((roc.get("classes") or {}).items())):
            cx = np.asarray(curve["efpr"], dtype=float)
            cy = np.asarray(curve["tpr"], dtype=float)
            inside = cx <= s["max_efpr"]
            if inside.any():  # each class's own staircase, thin, beneath the summary curves
                ax.step(np.append(cx[inside], s["max_efpr"]),
                        np.append(cy[inside], cy[inside][-1]), where="post", lw=0.8,
                        alpha=0.7, color=f"C{k % 10}", label=cls)
        etpr = np.asarray(roc["etpr"], dtype=float)[keep]
        ax.step(x_end, np.append(etpr, etpr[-1]), where="post", color="black", lw=2,
                label=f"eTPR = mean − {s['alpha_st']:g}·std")
        ax.set_xlim(0, s["max_efpr"])
        ax.set_ylim(0, 1)
        ax.set_xlabel("eFPR per hour")
        ax.set_ylabel("eTPR")
        ax.set_title(f"{name.upper()} {value['value']:.4f} (dtc {s['dtc']:g}, gtc {s['gtc']:g}, "
                     f"cttc {s['cttc']:g}, α_ct {s['alpha_ct']:g})", fontsize=9)
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()  # the same curves in each panel
    fig.legend(handles, labels, loc="lower center", fontsize=7, frameon=False,
               ncol=min(len(labels), 3 * len(result)))
    rows = -(-len(labels) // (3 * len(result)))
    fig.tight_layout(rect=(0, 0.05 * rows, 1, 1))
    return png(fig)
