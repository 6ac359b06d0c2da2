"""The risk a certified decision bounds, per coordinate and class: each unit's loss at each
threshold, read exactly off the guard curves kept clip by clip
(:class:`~sedcontract.guard.curves.ClipChanges`).

A unit is a clip, or a group of clips the user names (the clips cut from one recording are not
independent of each other; the recordings can be). A unit's loss at threshold ``t`` is its
share of unmet obligations, ``1 − satisfied/obligations`` summed over its clips, in [0, 1].
At each threshold the units counted are those that carry an obligation of the coordinate
there (a reference event to find; for ``false``, a detection to be right): a property of each
unit alone, so the units counted at ``t`` are independent draws of such units, and the risk
at ``t`` is the mean loss of a unit that carries an obligation there. Rates per hour are no
such risk: a clip's count of false events is bounded only by its frames."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.guard.curves import CURVE_COORDINATES, ClipChanges

__all__ = ["UnitLosses", "clip_counts", "loss_sums", "summed", "unit_losses"]


@dataclass(frozen=True)
class UnitLosses:
    """Every unit's loss ``[unit, threshold]`` (in [0, 1]) of one coordinate and class, and
    where it carries an obligation (``obliged``: the units counted at each threshold)."""

    units: tuple[str, ...]
    thresholds: np.ndarray
    losses: np.ndarray
    obliged: np.ndarray

    def counted(self) -> np.ndarray:
        """How many units are counted at each threshold."""
        return self.obliged.sum(axis=0)

    def risk(self) -> np.ndarray:
        """The empirical risk at each threshold: the counted units' mean loss (NaN without
        one)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.counted() > 0, self.losses.sum(axis=0) /
                            np.maximum(self.counted(), 1), np.nan)


def clip_counts(changes: ClipChanges, coordinate: str, key: int, thresholds: Sequence[float]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Every clip's satisfied and obligation counts ``[clip, threshold]`` of ``coordinate``
    for class index ``key`` (``len(classes)``: the union trace), exact."""
    if coordinate not in changes.changes:
        raise SedContractError(f"no curve of {coordinate!r}; the curves hold "
                               f"{', '.join(CURVE_COORDINATES)}")
    clip, keys, value, d_sat, d_obl = changes.changes[coordinate]
    mine = keys == key
    clip, value, d_sat, d_obl = clip[mine], value[mine], d_sat[mine], d_obl[mine]
    base = changes.base[coordinate][:, key, :].astype(np.int64)
    t = np.asarray(thresholds, dtype=np.float64)
    by_value = np.argsort(-value, kind="stable")
    falling = np.argsort(-t, kind="stable")  # thresholds from the highest down
    upto = np.searchsorted(-value[by_value], -t[falling], side="left")  # rows with value > t
    sat = np.empty((len(changes.clips), len(t)), dtype=np.int64)
    obl = np.empty_like(sat)
    held_sat, held_obl = base[:, 0].copy(), base[:, 1].copy()
    done = 0
    for j, stop in zip(falling, upto, strict=True):
        rows = by_value[done:stop]
        np.add.at(held_sat, clip[rows], d_sat[rows])
        np.add.at(held_obl, clip[rows], d_obl[rows])
        sat[:, j], obl[:, j] = held_sat, held_obl
        done = stop
    return sat, obl


def _unit_counts(changes: ClipChanges, coordinate: str, key: int, thresholds: Sequence[float],
                 groups: Mapping[str, str] | None) -> tuple[Sequence[str], np.ndarray, np.ndarray]:
    """The units' names and their satisfied and obligation counts ``[unit, threshold]``: a
    group's are its clips' summed."""
    sat, obl = clip_counts(changes, coordinate, key, thresholds)
    if groups is None:
        return changes.clips, sat, obl
    missing = [c for c in changes.clips if c not in groups]
    if missing:
        raise SedContractError(f"the groups name no group for clip {missing[0]!r} (and "
                               f"{len(missing) - 1} more); name every clip's recording")
    names, which = np.unique(np.array([groups[c] for c in changes.clips], dtype=object),
                             return_inverse=True)
    summed = []
    for m in (sat, obl):
        out = np.zeros((len(names), m.shape[1]), dtype=np.int64)
        np.add.at(out, which, m)
        summed.append(out)
    return [str(n) for n in names], summed[0], summed[1]


def _losses(sat: np.ndarray, obl: np.ndarray) -> np.ndarray:
    """``1 − satisfied/obligations`` where there are obligations, else 0 (not counted)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(obl > 0, (obl - sat) / np.maximum(obl, 1), 0.0)


def summed(sat: np.ndarray, obl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Units' counts ``[unit, threshold]`` as what a p-value reads: the summed losses at each
    threshold and the number of units counted there (those with an obligation)."""
    return _losses(sat, obl).sum(axis=0), (obl > 0).sum(axis=0).astype(np.int64)


def unit_losses(changes: ClipChanges, coordinate: str, key: int, thresholds: Sequence[float],
                groups: Mapping[str, str] | None = None) -> UnitLosses:
    """The losses of ``coordinate`` for class index ``key`` at ``thresholds``: a unit is a
    clip, or with ``groups`` (clip → group; every clip named) the group of clips, whose counts
    are summed before the share is taken. Memory: units × thresholds (:func:`loss_sums`
    keeps less)."""
    names, sat, obl = _unit_counts(changes, coordinate, key, thresholds, groups)
    return UnitLosses(tuple(names), np.asarray(thresholds, dtype=np.float64),
                      _losses(sat, obl), obl > 0)


def loss_sums(changes: ClipChanges, coordinate: str, key: int, thresholds: Sequence[float],
              groups: Mapping[str, str] | None = None, *, cells: int = 1 << 22
              ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unit_losses`' sums over the units at each threshold and the number of units
    counted there, a block of thresholds at a time (at most ``cells`` counts held)."""
    t = np.asarray(thresholds, dtype=np.float64)
    step = max(1, cells // max(1, len(changes.clips)))
    sums, counted = [], []
    for a in range(0, len(t), step):
        total, count = summed(*_unit_counts(changes, coordinate, key, t[a:a + step],
                                            groups)[1:])
        sums.append(total)
        counted.append(count)
    if not sums:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    return np.concatenate(sums), np.concatenate(counted)
