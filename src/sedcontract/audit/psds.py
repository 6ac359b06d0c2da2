"""PSDS scenarios (every parameter; the DCASE PSDS1 / PSDS2 presets), and PSDS from score
files as sed_scores_eval computes it (every threshold; :mod:`sedcontract.audit.score_psds`,
checked equal to it) or from operating-point tables as psds_eval computes it
(:mod:`sedcontract.audit.operating_points`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.traces import EventList
from sedcontract.traces.scores import ScoreFolder


class PsdsUnavailable(SedContractError):
    """PSDS cannot be computed here (no durations, or a scored class without reference
    events); the report carries the reason instead of a number."""


@dataclass(frozen=True)
class PsdsSettings:
    """The parameters of one PSDS scenario (psds_eval's names, thresholds in [0, 1])."""

    dtc: float = 0.5       # detection tolerance criterion
    gtc: float = 0.5       # ground-truth intersection criterion
    cttc: float = 0.3      # cross-trigger tolerance criterion
    alpha_ct: float = 0.0  # weight of the cross-trigger rate in the effective FP rate
    alpha_st: float = 0.0  # weight of the spread across classes taken off the mean TPR
    max_efpr: float = 100.0  # eFPR (per hour) up to which the area is taken

    def __post_init__(self) -> None:
        for name in ("dtc", "gtc", "cttc", "alpha_ct"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not 0 <= value <= 1:
                raise SedContractError(f"PSDS {name} must be a number in [0, 1], got {value!r}")
        if isinstance(self.alpha_st, bool) or not isinstance(self.alpha_st, int | float) \
                or not 0 <= self.alpha_st < float("inf"):
            raise SedContractError(f"PSDS alpha_st must be a number >= 0, got {self.alpha_st!r}")
        if isinstance(self.max_efpr, bool) or not isinstance(self.max_efpr, int | float) \
                or not 0 < self.max_efpr < float("inf"):
            raise SedContractError(f"PSDS max_efpr must be a number > 0, got {self.max_efpr!r}")

    def as_dict(self) -> dict[str, float]:
        return {"dtc": self.dtc, "gtc": self.gtc, "cttc": self.cttc, "alpha_ct": self.alpha_ct,
                "alpha_st": self.alpha_st, "max_efpr": self.max_efpr}

    def sed_scores_eval(self) -> dict[str, float | None]:
        """The keywords of sed_scores_eval's ``intersection_based.psds`` (no CTTC without a
        cross-trigger weight, as it requires)."""
        return {"dtc_threshold": self.dtc, "gtc_threshold": self.gtc,
                "cttc_threshold": self.cttc if self.alpha_ct > 0 else None,
                "alpha_ct": self.alpha_ct, "alpha_st": self.alpha_st, "max_efpr": self.max_efpr}


# DCASE 2024 Task 4 (and 2021-2023): scenario 1 localises tightly, scenario 2 tells classes apart
PRESETS: dict[str, PsdsSettings] = {
    "psds1": PsdsSettings(dtc=0.7, gtc=0.7, cttc=0.3, alpha_ct=0.0, alpha_st=1.0,
                          max_efpr=100.0),
    "psds2": PsdsSettings(dtc=0.1, gtc=0.1, cttc=0.3, alpha_ct=0.5, alpha_st=1.0,
                          max_efpr=100.0),
}


@dataclass(frozen=True)
class PsdsRequest:
    """PSDS beside the standard scores: from score files or tables (``scores``: a folder,
    a :class:`~sedcontract.traces.scores.ScoreFolder` or a mapping of clip → table;
    sed_scores_eval's rule) or from operating-point tables (``points``, psds_eval's rule), for
    each scenario of ``settings``. The reference and the predictions are taken as they come,
    as those tools take them; ``cut`` cuts both at the clips' durations (one rule for both
    routes, :func:`~sedcontract.traces.overrun.cut_at_durations`)."""

    scores: str | Path | ScoreFolder | Mapping[str, Any] | None = None
    points: Sequence[EventList] | None = None
    settings: Mapping[str, PsdsSettings] = field(default_factory=lambda: dict(PRESETS))
    cut: bool = False

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
                        blocks=blocks, cut=self.cut)
        if durations is None:
            raise PsdsUnavailable("PSDS needs clip durations (--durations)")
        from sedcontract.audit.operating_points import psds_of_points

        return psds_of_points(self.points, ref, durations, self.settings, classes,
                              executor=executor, blocks=blocks, cut=self.cut)


def audio_seconds(durations: Mapping[str, float], clips: Sequence[str]) -> float:
    """The clips' total duration, the time false-positive rates are per; refused when it is 0
    (a rate per hour of no audio is undefined)."""
    total = float(sum(float(durations[c]) for c in clips))
    if not total > 0:
        raise PsdsUnavailable(f"the durations of the {len(clips)} clip(s) add up to 0 s: "
                              "false positives per hour of no audio are undefined; check the "
                              "durations file")
    return total


def cut_note(cut: Mapping[str, int] | None, unit: str) -> str:
    """How a PSDS result took the durations: as they come, or cut (``--psds-cut``)."""
    if cut is None:
        return ("reference and predictions as they come, not cut at the clip durations "
                "(--psds-cut cuts both)")
    return (f"reference and predictions cut at the clip durations (--psds-cut): "
            f"{cut['ref']} reference event(s), {cut['pred']} {unit}")


def without_curves(result: Mapping[str, Any]) -> dict[str, Any]:
    """A PSDS result as reports hold it: the values, settings and counts, not the curves."""
    return {name: {k: v for k, v in value.items() if k != "roc"} if isinstance(value, dict)
            else value for name, value in result.items()}


def ground_truth(ref: EventList) -> dict[str, list[tuple[float, float, str]]]:
    """Reference events per clip, overlapping or touching same-class events merged
    (sed_scores_eval rejects them; the guard report counts them as merged)."""
    truth: dict[str, list[tuple[float, float, str]]] = {clip: [] for clip in ref.clips}
    for clip, on, off, label in ref.merged().to_rows():
        truth[clip].append((on, off, label))
    return truth


def psds(scores: str | Path | ScoreFolder | Mapping[str, Any], ref: EventList,
         durations: Mapping[str, float] | None,
         settings: Mapping[str, PsdsSettings] | None = None, *, executor: Any = None,
         blocks: int | None = None, cut: bool = False) -> dict[str, Any]:
    """``{scenario: {"value", "per_class", "settings", "rule", "roc"}}`` (default scenarios: the
    DCASE presets) of the score files of ``ref``'s clips in a folder (read one clip at a time;
    files of other clips are left aside), a :class:`~sedcontract.traces.scores.ScoreFolder`
    (or any table source with its ``columns``, ``select(clips)``, ``stream(clips)`` and
    ``in``), or a mapping of clip → table or (table, source) (e.g. from
    :func:`~sedcontract.traces.scores.read_score_dir`). Each score column is a class; with an
    ``executor``, blocks of clips are counted where it runs (the same result). The reference
    and the tables are taken as they come (sed_scores_eval's PSDS on the same files); ``cut``
    cuts both at the durations."""
    from sedcontract.audit.score_psds import TableMapping, psds_of_scores

    if durations is None:
        raise PsdsUnavailable("PSDS needs clip durations (--durations)")
    if isinstance(scores, str | Path):
        scores = ScoreFolder.open(scores, ref.clips, skipped=[])
    elif not hasattr(scores, "stream"):  # tables in memory, not a table source
        scores = TableMapping(scores)
    return psds_of_scores(scores, ref, durations, settings or PRESETS, tuple(scores.columns),
                          executor=executor, blocks=blocks, cut=cut)


def psd_roc_png(result: Mapping[str, Any]) -> bytes:
    """The PSD-ROC of each scenario, a panel each: the effective TPR against the effective FP
    rate up to ``max_efpr`` (with the mean TPR and its spread across classes where known)."""
    from sedcontract.audit.figures import png, pyplot

    if "note" in result:
        raise SedContractError(f"no PSD-ROC to draw: PSDS was not computed ({result['note']})")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(result), figsize=(5.0 * len(result), 3.8), squeeze=False)
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
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return png(fig)
