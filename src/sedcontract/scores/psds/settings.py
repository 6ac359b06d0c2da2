"""PSDS scenarios (every parameter; the DCASE PSDS1 / PSDS2 presets) and the small rules both
PSDS routes share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number
from sedcontract.traces import EventList


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
            if not is_number(value) \
                    or not 0 <= value <= 1:
                raise SedContractError(f"PSDS {name} must be a number in [0, 1], got {value!r}")
        if not is_number(self.alpha_st) \
                or not 0 <= self.alpha_st < float("inf"):
            raise SedContractError(f"PSDS alpha_st must be a number >= 0, got {self.alpha_st!r}")
        if not is_number(self.max_efpr) \
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


def scenarios(settings: Mapping[str, PsdsSettings] | None) -> Mapping[str, PsdsSettings]:
    """The scenarios a PSDS function is given: name → :class:`PsdsSettings` (None: the DCASE
    presets); anything else is refused by name, not met later as a missing attribute."""
    if settings is None:
        return PRESETS
    if not isinstance(settings, Mapping) or not settings:
        raise SedContractError(f"PSDS settings are a mapping of scenario name → PsdsSettings "
                               f"(e.g. sedcontract.PRESETS), got {type(settings).__name__}"
                               f"{' (empty)' if isinstance(settings, Mapping) else ''}")
    for name, chosen in settings.items():
        if not isinstance(name, str) or not isinstance(chosen, PsdsSettings):
            raise SedContractError(f"PSDS scenario {name!r} is {type(chosen).__name__}, not "
                                   "PsdsSettings (its name a string)")
    return settings


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
    """A PSDS result as reports hold it: the values, settings and counts, not the curves nor
    the bootstrap draws."""
    return {name: {k: v for k, v in value.items() if k not in ("roc", "draws")}
            if isinstance(value, dict) else value for name, value in result.items()}


def ground_truth(ref: EventList) -> dict[str, list[tuple[float, float, str]]]:
    """Reference events per clip, overlapping or touching same-class events merged
    (sed_scores_eval rejects them; the guard report counts them as merged)."""
    truth: dict[str, list[tuple[float, float, str]]] = {clip: [] for clip in ref.clips}
    for clip, on, off, label in ref.merged().to_rows():
        truth[clip].append((on, off, label))
    return truth
