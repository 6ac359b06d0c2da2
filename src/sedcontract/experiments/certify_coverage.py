"""The coverage experiment of certified decisions: split a corpus's clips at random into
calibration and test halves many times, certify on the calibration half, and count how often
the certified thresholds break a target on the test half, next to two control arms that
differ in one thing each:

- ``naive``: the same risk and procedure with the p-value replaced by the empirical rule
  "risk ≤ α" (p 0 or 1): what a certificate without the finite-sample correction does;
- ``curves``: today's ``audit --curves --curves-targets`` choice (pooled scores at least the
  targets on the calibration clips; the middle of the widest range), judged by what it
  promises: the pooled scores on new clips.

A violation is a target broken at some threshold of the arm's set (the certificate speaks of
all of them at once) or at the chosen one; it is judged on the test clips (what a deployer
sees) and on the whole corpus, the population the halves are drawn from (what the theorem
speaks of: sampling without replacement concentrates at least as well, Hoeffding 1963,
Theorem 4). An empty set breaks nothing. Conservativeness: how far, in threshold, the
certified set's permissive edge stays from the test clips' own edge, and the test risk's
slack below α there."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.analysis.certify import (
    DIRECTIONS,
    alphas_of,
    certify_sums,
    resolved_procedure,
)
from sedcontract.analysis.curve_summaries import decision_of, target_ranges
from sedcontract.analysis.risk_control import risk_p_value
from sedcontract.analysis.unit_losses import clip_counts, summed
from sedcontract.guard.curves import ClipChanges

__all__ = ["ARMS", "Pool", "coverage_rows", "coverage_table", "naive_p_value", "pool_of",
           "split_rows"]

ARMS = ("certified", "naive", "curves")
JUDGES = ("test", "corpus")


def naive_p_value(sums: Any, units: Any, alpha: float) -> np.ndarray:
    """The empirical rule as a p-value: 0 where the mean loss is at most α, else 1."""
    sums, units = np.asarray(sums, dtype=np.float64), np.asarray(units)
    return np.where((units > 0) & (sums <= alpha * units), 0.0, 1.0)


@dataclass(frozen=True)
class Pool:
    """A corpus's clips and, per class and target coordinate, every clip's satisfied and
    obligation counts on the grid: what the splits resample; and the changes, for the
    ``curves`` arm's pooled ranges."""

    changes: ClipChanges
    grid: np.ndarray
    classes: tuple[str, ...]
    counts: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]


def pool_of(changes: ClipChanges, coordinates: Sequence[str], grid: Sequence[float],
            classes: Sequence[str] | None = None) -> Pool:
    """The counts of ``coordinates`` for ``classes`` (default every class) at ``grid``."""
    grid = np.asarray(grid, dtype=np.float64)
    names = tuple(classes or changes.classes)
    counts = {(c, k): clip_counts(changes, k, changes.classes.index(c), grid)
              for c in names for k in coordinates}
    return Pool(changes, grid, names, counts)


def _mean(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The mean loss where some unit counts, else NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _judge(sat: np.ndarray, obl: np.ndarray, pooled: bool) -> np.ndarray:
    """The risk at each threshold of the clips given: the certificate's (the mean share of a
    clip with an obligation there) or, ``pooled``, today's (1 − Σ satisfied / Σ obligations:
    what ``--curves-targets`` promises); NaN where nothing is obliged."""
    if not pooled:
        return _mean(*summed(sat, obl))
    total = obl.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 1 - sat.sum(axis=0) / np.maximum(total, 1), np.nan)


def _edge(mask: np.ndarray, grid: np.ndarray, direction: int) -> float:
    """The most permissive threshold of ``mask`` along ``direction`` (NaN when empty)."""
    if not mask.any():
        return math.nan
    return float(grid[mask].max() if direction > 0 else grid[mask].min())


def _judged(arm: str, sets: Mapping[str, Any], alphas: Mapping[str, float],
            risks: Mapping[str, Mapping[str, np.ndarray]], grid: np.ndarray
            ) -> list[dict[str, Any]]:
    """One arm's rows of one split and class: per coordinate, whether its set and chosen
    threshold break the target on the test clips and on the corpus, the slack and edge gap."""
    mask, chosen = sets["mask"], sets["chosen"]
    rows = []
    for k, alpha in alphas.items():
        row: dict[str, Any] = {"arm": arm, "coordinate": k, "alpha": alpha,
                               "certified": bool(mask.any())}
        for judge in JUDGES:
            risk = risks[judge][k]
            row[f"set_{judge}"] = bool(np.any(risk[mask] > alpha + 1e-12))
            at = sets["chosen_risk"][judge][k] if chosen is not None else math.nan
            row[f"chosen_{judge}"] = bool(at > alpha + 1e-12)
        test = risks["test"][k]
        judged = test[mask][~np.isnan(test[mask])]  # thresholds where a test clip counts
        row["slack"] = float(alpha - judged.max()) if len(judged) else math.nan
        direction = DIRECTIONS.get(k)
        gap = math.nan
        if direction is not None and mask.any():
            own = _edge(test <= alpha + 1e-12, grid, direction)
            gap = direction * (own - _edge(mask, grid, direction))
        row["edge_gap"] = gap
        rows.append(row)
    return rows


def _curves_arm(curves: Any, grid: np.ndarray, cls: str, targets: Mapping[str, float]
                ) -> tuple[np.ndarray, float | None]:
    """Today's choice from the calibration clips' ``curves``: the grid points inside the
    ranges where the pooled scores meet every target, and the middle of the widest range
    (None: no range, or every threshold serves)."""
    ranges = target_ranges(curves, targets, cls)
    mask = np.zeros(len(grid), dtype=bool)
    for lo, hi in ranges:
        mask |= (grid >= lo) & (grid < hi)
    decision, _, _ = decision_of({cls: ranges})
    chosen = dict(decision.classes).get(cls)
    return mask, (chosen.threshold if chosen is not None else None)


def _chosen_risks(pool: Pool, cls: str, alphas: Mapping[str, float], chosen: float | None,
                  clips: Mapping[str, np.ndarray], pooled: bool
                  ) -> dict[str, dict[str, float]]:
    """Each judge's risk of each coordinate at the chosen threshold (on the grid or off it:
    counted again; ``pooled``: :func:`_judge`)."""
    out: dict[str, dict[str, float]] = {j: {} for j in clips}
    for k in alphas:
        sat, obl = (None, None)
        if chosen is not None and chosen not in pool.grid:
            sat, obl = clip_counts(pool.changes, k, pool.changes.classes.index(cls), [chosen])
        grid_sat, grid_obl = pool.counts[(cls, k)]
        for judge, index in clips.items():
            if chosen is None:
                out[judge][k] = math.nan
                continue
            if sat is None:
                at = int(np.flatnonzero(pool.grid == chosen)[0])
                s, o = grid_sat[index, at:at + 1], grid_obl[index, at:at + 1]
            else:
                s, o = sat[index], obl[index]
            out[judge][k] = float(_judge(s, o, pooled)[0])
    return out


def split_rows(pool: Pool, targets: Mapping[str, float], delta: float, split: int,
               seed: int = 0, calibration: float = 0.5, procedure: str = "auto",
               p_value: Any = None) -> list[dict[str, Any]]:
    """Every arm's rows of split ``split`` (drawn from ``seed``): the clips shuffled, the
    first ``calibration`` share calibrates. ``p_value`` replaces the certified arm's (what a
    test that must fail with the naive rule swaps in)."""
    n = len(pool.changes.clips)
    order = np.random.default_rng([seed, split]).permutation(n)
    cut = round(calibration * n)
    cal, test = np.sort(order[:cut]), np.sort(order[cut:])
    alphas = alphas_of(targets)
    method = resolved_procedure(procedure, list(alphas))
    curves = pool.changes.select(cal).total()
    out = []
    for cls in pool.classes:
        sums, units = {}, {}
        risks = {pooled: {j: {} for j in JUDGES} for pooled in (False, True)}
        for k in alphas:
            sat, obl = pool.counts[(cls, k)]
            sums[k], units[k] = summed(sat[cal], obl[cal])
            for judge, clips in (("test", test), ("corpus", np.arange(n))):
                for pooled in (False, True):
                    risks[pooled][judge][k] = _judge(sat[clips], obl[clips], pooled)
        arms = {}
        for arm, fn in (("certified", p_value), ("naive", naive_p_value)):
            found = certify_sums(cls, pool.grid, sums, units, alphas, delta, method,
                                 p_value=fn or risk_p_value)
            arms[arm] = (found.certified, found.threshold)
        arms["curves"] = _curves_arm(curves, pool.grid, cls, targets)
        for arm, (mask, chosen) in arms.items():
            pooled = arm == "curves"  # each arm judged by what it promised
            chosen_risk = _chosen_risks(pool, cls, alphas, chosen,
                                        {"test": test, "corpus": np.arange(n)}, pooled)
            rows = _judged(arm, {"mask": mask, "chosen": chosen, "chosen_risk": chosen_risk},
                           alphas, risks[pooled], pool.grid)
            out += [{"split": split, "class": cls, "calibration_clips": cut, **row}
                    for row in rows]
    return out


def coverage_rows(pool: Pool, targets: Mapping[str, float], delta: float, splits: int,
                  seed: int = 0, calibration: float = 0.5, procedure: str = "auto",
                  p_value: Any = None) -> list[dict[str, Any]]:
    """:func:`split_rows` of ``splits`` splits."""
    return [row for s in range(splits)
            for row in split_rows(pool, targets, delta, s, seed, calibration, procedure,
                                  p_value)]


def _rate(flags: Sequence[bool]) -> tuple[float, float]:
    """A rate over splits and its Monte-Carlo standard error."""
    r = float(np.mean(flags)) if len(flags) else math.nan
    return r, math.sqrt(r * (1 - r) / len(flags)) if len(flags) else math.nan


def coverage_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per class, coordinate and arm: the share of splits with a non-empty set, the violation
    rates (set and chosen, on the test clips and on the corpus) with their Monte-Carlo
    standard errors, and the mean slack and edge gap where a set was made."""
    keys = sorted({(r["class"], r["coordinate"], ARMS.index(r["arm"])) for r in rows})
    out = []
    for cls, coordinate, arm_index in keys:
        arm = ARMS[arm_index]
        mine = [r for r in rows if r["class"] == cls and r["coordinate"] == coordinate
                and r["arm"] == arm]
        made = [r for r in mine if r["certified"]]
        entry: dict[str, Any] = {"class": cls, "coordinate": coordinate, "arm": arm,
                                 "alpha": mine[0]["alpha"], "splits": len(mine),
                                 "certified": _rate([r["certified"] for r in mine])[0]}
        for what in ("set_test", "chosen_test", "set_corpus", "chosen_corpus"):
            entry[what], entry[f"{what}_se"] = _rate([r[what] for r in mine])
        for what in ("slack", "edge_gap"):
            values = [r[what] for r in made if not math.isnan(r[what])]
            entry[what] = float(np.mean(values)) if values else math.nan
        out.append(entry)
    return out
