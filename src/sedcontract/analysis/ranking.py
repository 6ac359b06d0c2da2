"""The ranking metrics of source rows (role ``ranking``: PSDS scenarios, mAUC, mpAUC), system
by system: each value, overall and per class, the audit's bootstrap draws and the PSD-ROC
staircases, and their intervals and paired differences at the report's level."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from sedcontract.analysis.source_rows import SourceRows
from sedcontract.guard.curves import CURVE_COORDINATES
from sedcontract.guard.rows import (
    CORPUS,
    CURVE_PARTS,
    DRAWS,
    RANKING,
    RowKind,
    curve_coordinate,
    numbered,
)
from sedcontract.resampling import Interval, percentile_intervals

__all__ = ["AUROC_METRICS", "Ranking", "metric_order", "paired_ranking", "rankings",
           "settings_items"]

AUROC_METRICS = ("mauc", "mpauc")


@dataclass
class Ranking:
    """One system's ranking metrics: ``values`` (metric → value on all clips), ``per_class``
    (metric → class → value), ``draws`` (metric → ``[resamples]``, NaN where a resample left it
    undefined) drawn with ``seed``, and ``curves`` (scenario → class → (eFPR, TPR); class
    ``*`` the effective curve)."""

    values: dict[str, float] = field(default_factory=dict)
    per_class: dict[str, dict[str, float]] = field(default_factory=dict)
    draws: dict[str, np.ndarray] = field(default_factory=dict)
    seed: int | None = None
    resamples: int = 0
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)

    def interval(self, metric: str, level: float) -> Interval:
        """The value and its percentile interval over the draws (NaN bounds without them)."""
        point = self.values.get(metric, math.nan)
        if metric not in self.draws or not self.resamples:
            return Interval(point, math.nan, math.nan, level, 0, 0)
        return percentile_intervals([metric], [point], self.draws[metric][:, None], level,
                                    self.resamples)[metric]


def metric_order(names: set[str] | list[str]) -> list[str]:
    """PSDS scenarios (by name) first, then mAUC and mpAUC, then the guard curves' budget
    areas (``curve_<coordinate>``, in the curves' order of coordinates)."""
    def rank(n: str) -> tuple:
        coordinate = curve_coordinate(n)
        if coordinate is not None:
            return (2, CURVE_COORDINATES.index(coordinate)
                    if coordinate in CURVE_COORDINATES else len(CURVE_COORDINATES), n)
        return (int(n in AUROC_METRICS), AUROC_METRICS.index(n) if n in AUROC_METRICS else 0,
                n)
    return sorted(names, key=rank)


def rankings(rows: SourceRows) -> dict[tuple[str, str], Ranking]:
    """The ranking rows of each (system, policy), gathered (a few thousand rows at most; their
    spelling was checked when they were read, :func:`~sedcontract.analysis.source_rows.
    read_rows`), with the draws' seed and number from the settings."""
    mask = rows.codes["role"] == (rows.vocab["role"].index(RANKING)
                                  if RANKING in rows.vocab["role"] else -1)
    out: dict[tuple[str, str], Ranking] = {}
    points: dict[tuple, dict[int, float]] = {}
    raw_draws: dict[tuple, dict[int, float]] = {}
    v = rows.vocab
    for i in np.flatnonzero(mask):
        key = (v["system"][rows.codes["system"][i]], v["policy"][rows.codes["policy"][i]])
        found = out.setdefault(key, Ranking())
        kind = RowKind.parse(v["coordinate"][rows.codes["coordinate"][i]])
        if kind is None or kind.kind != RANKING:
            continue
        clip, cls = v["clip"][rows.codes["clip"][i]], v["class"][rows.codes["class"][i]]
        value = float(rows.value[i])
        if kind.part in CURVE_PARTS and (k := numbered(clip, "point")) is not None:
            points.setdefault((key, kind.name, cls, kind.part), {})[k] = value
        elif not kind.part and clip == CORPUS:
            if cls == "*":
                found.values[kind.name] = value
            else:
                found.per_class.setdefault(kind.name, {})[cls] = value
        elif not kind.part and (r := numbered(clip, "resample")) is not None:
            raw_draws.setdefault((key, kind.name), {})[r] = value
    for key, found in out.items():
        settings = rows.settings.get(key, {})
        if f"setting:{DRAWS}.resamples" in settings:
            found.seed = int(settings[f"setting:{DRAWS}.seed"])
            found.resamples = int(settings[f"setting:{DRAWS}.resamples"])
    for (key, metric), drawn in raw_draws.items():
        found = out[key]
        values = np.full(found.resamples, math.nan)  # every index < resamples, checked
        values[list(drawn)] = list(drawn.values())
        found.draws[metric] = values
    for (key, metric, cls, part), staircase in points.items():
        if part != "efpr" or (key, metric, cls, "tpr") not in points:
            continue
        tpr = points[(key, metric, cls, "tpr")]
        ks = sorted(set(staircase) & set(tpr))
        out[key].curves.setdefault(metric, {})[cls] = (
            np.array([staircase[k] for k in ks]), np.array([tpr[k] for k in ks]))
    return out


def paired_ranking(mine: Ranking, theirs: Ranking, metric: str, level: float,
                   same_clips: bool) -> Interval | None:
    """``mine`` − ``theirs`` for ``metric`` with its paired interval: the same resample
    numbers are the same clips drawn when both audits drew with one seed and count over
    clips in one order (``same_clips``); without that, the difference alone (NaN bounds).
    None when either lacks the metric."""
    if metric not in mine.values or metric not in theirs.values:
        return None
    point = mine.values[metric] - theirs.values[metric]
    paired = (same_clips and metric in mine.draws and metric in theirs.draws
              and mine.seed == theirs.seed and mine.resamples == theirs.resamples > 0)
    if not paired:
        return Interval(point, math.nan, math.nan, level, 0, 0)
    return percentile_intervals([metric], [point],
                                (mine.draws[metric] - theirs.draws[metric])[:, None], level,
                                mine.resamples)[metric]


def settings_items(settings: Mapping[str, str]) -> dict[str, str]:
    """The settings a reader needs first, by name: the contract, eps, hop, each matching and
    the decision (what the rows record of them)."""
    out = {}
    for key, name, unit in (("setting:contract", "contract", ""), ("setting:eps", "eps", ""),
                            ("setting:hop", "hop", " s")):
        if key in settings:
            out[name] = settings[key] + unit
    for key, text in settings.items():
        if key.startswith("setting:matching."):
            out[f"matching ({key.removeprefix('setting:matching.')})"] = text
    if "setting:decision" in settings:
        out["decision"] = settings["setting:decision"]
    return out
