"""Certified decisions: per-class thresholds whose risks on new audio meet their targets with
probability at least 1 − δ over the calibration clips (Learn then Test: Angelopoulos, Bates,
Candès, Jordan and Lei, 2021, arXiv 2110.01052, Theorem 1).

Each target ``coordinate ≥ score`` bounds the risk ``α = 1 − score`` of
:mod:`~sedcontract.analysis.unit_losses` (a unit's mean share of unmet obligations). At each
threshold of a grid fixed before the data, the hypothesis "the risk exceeds α" gets a
Hoeffding–Bentkus p-value (:func:`~sedcontract.analysis.risk_control.risk_p_value`); the
thresholds whose hypotheses are rejected by a procedure that keeps the family-wise error rate
at most δ are certified, all of them at once:

- ``fixed-sequence``: each coordinate's thresholds tested from its conservative end (the
  direction its risk moves with the threshold, fixed before the data), δ split evenly over the
  coordinates (Bonferroni); a threshold is certified when every coordinate's sequence passed
  it (Bauer 1991; LTT section 3);
- ``holm``: Holm's step-down over the thresholds of the intersection–union p-value ``max_k
  p_k`` (a threshold is safe only if every coordinate is; Holm 1979), for coordinates without
  a direction (:data:`DIRECTIONS`);
- ``bonferroni``: ``max_k p_k ≤ δ / thresholds``.

Classes are certified each at level δ (each class's statement holds with probability ≥ 1 − δ),
or with ``joint`` all together (δ / classes each)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.analysis.risk_control import (
    bonferroni,
    check_delta,
    fixed_sequence,
    holm,
    risk_p_value,
)
from sedcontract.analysis.unit_losses import loss_sums
from sedcontract.errors import SedContractError
from sedcontract.numbers import is_number
from sedcontract.traces.decision import DecisionPolicy

__all__ = [
    "DIRECTIONS",
    "PROCEDURES",
    "Certificate",
    "Check",
    "ClassCertificate",
    "certify",
    "certify_changes",
    "certify_sums",
    "desed_grid",
    "read_target_file",
    "resolved_procedure",
]

# +1: the risk rises with the threshold (fewer frames active: more events missed, onsets
# later, releases earlier), so the lowest threshold is the conservative end; −1: it falls
# (less activity in silence, fewer early onsets and late releases). Chosen from what each
# coordinate counts, before any data; a wrong direction costs power, never validity (the order
# is fixed before the data). false, fragmentation and merge have none: they are counted over
# the clips with detections at the threshold, which vanish at the top of the grid, and onset
# and offset are worst at both ends.
DIRECTIONS = {"missed": 1, "late_onset": 1, "early_release": 1,
              "silence": -1, "early_onset": -1, "late_release": -1, "leakage": -1}
PROCEDURES = ("auto", "fixed-sequence", "holm", "bonferroni")


def desed_grid(count: int = 50) -> np.ndarray:
    """DESED_task's evaluation thresholds: ``count`` evenly spaced centres of [0, 1]
    (0.01, 0.03, …, 0.99 for 50), fixed before any data."""
    return np.round(np.arange(1 / (2 * count), 1, 1 / count), 10)


@dataclass(frozen=True)
class Check:
    """One target of one class: the risk bound ``alpha`` (1 − the least score), and at each
    threshold the units counted, the empirical risk, the p-value and whether the procedure
    rejected "risk > α" for this coordinate alone (fixed-sequence) or with every other
    (holm, bonferroni)."""

    coordinate: str
    alpha: float
    units: np.ndarray
    risk: np.ndarray
    p_values: np.ndarray
    passed: np.ndarray


@dataclass(frozen=True)
class ClassCertificate:
    """A class's certified thresholds (a mask over the grid), the one chosen (None: none
    certified, ``why`` says why) and its checks."""

    name: str
    checks: tuple[Check, ...]
    certified: np.ndarray
    threshold: float | None
    why: str = ""


def _targets_text(checks: Sequence[Check]) -> str:
    return ", ".join(f"{c.coordinate} ≤ {c.alpha:.3g}" for c in checks)


def _why(checks: Sequence[Check], grid: np.ndarray, delta: float, unit: str) -> str:
    """Why no threshold is certified, plainly: the targets and δ, and the closest threshold
    (least largest p-value) with each coordinate's risk, units and p-value there."""
    head = f"no threshold meets {_targets_text(checks)} with δ {delta:g}"
    empty = [c.coordinate for c in checks if not c.units.any()]
    if empty:
        return f"{head}: no {unit} carries an obligation of {', '.join(empty)} at any threshold"
    closest = int(np.argmin(np.max(np.stack([c.p_values for c in checks]), axis=0)))
    return f"{head}; the closest, t {grid[closest]:g}: " + ", ".join(
        f"{c.coordinate} risk {c.risk[closest]:.3f} on {c.units[closest]} {unit}s "
        f"(p {c.p_values[closest]:.2g})" for c in checks)


def resolved_procedure(procedure: str, coordinates: Sequence[str]) -> str:
    """``auto``: fixed-sequence when every coordinate has a direction, else Holm."""
    if procedure not in PROCEDURES:
        raise SedContractError(f"unknown procedure {procedure!r}; choose one of "
                               f"{', '.join(PROCEDURES)}")
    undirected = [c for c in coordinates if c not in DIRECTIONS]
    if procedure == "auto":
        return "holm" if undirected else "fixed-sequence"
    if procedure == "fixed-sequence" and undirected:
        raise SedContractError(f"fixed-sequence testing needs a direction in which the risk "
                               f"moves with the threshold; {undirected[0]} has none (it is "
                               "worst at both ends): use --procedure holm")
    return procedure


def certify_sums(name: str, grid: np.ndarray, sums: Mapping[str, np.ndarray],
                 units: Mapping[str, np.ndarray], alphas: Mapping[str, float], delta: float,
                 method: str, *, p_value: Any = risk_p_value, unit: str = "clip"
                 ) -> ClassCertificate:
    """Certify one class from each coordinate's summed unit losses at the grid's thresholds
    and the units counted at each, against ``alphas`` (coordinate → risk bound) at level
    ``delta`` by ``method`` (resolved: :func:`resolved_procedure`). ``p_value(sums, units,
    alpha)`` is swappable to show what a naive rule does instead (the coverage experiment);
    ``unit``: what a unit is, for messages."""
    p = {c: np.asarray(p_value(sums[c], units[c], alphas[c]), dtype=np.float64)
         for c in alphas}
    units = {c: np.asarray(units[c], dtype=np.int64) for c in alphas}
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = {c: np.where(units[c] > 0, sums[c] / np.maximum(units[c], 1), np.nan)
                for c in alphas}
    passed: dict[str, np.ndarray] = {}
    if method == "fixed-sequence":
        level = delta / len(alphas)
        for c in alphas:
            order = np.argsort(grid * DIRECTIONS[c], kind="stable")  # the conservative end first
            mask = np.zeros(len(grid), dtype=bool)
            mask[order[:fixed_sequence(p[c][order], level)]] = True
            passed[c] = mask
        certified = np.logical_and.reduce(list(passed.values()))
    else:
        joint = np.max(np.stack([p[c] for c in alphas]), axis=0)
        certified = (holm if method == "holm" else bonferroni)(joint, delta)
        passed = {c: certified for c in alphas}
    checks = tuple(Check(c, float(alphas[c]), units[c], risk[c], p[c], passed[c])
                   for c in alphas)
    if not certified.any():
        return ClassCertificate(name, checks, certified, None,
                                _why(checks, grid, delta, unit))
    margin = np.min(np.stack([c.alpha - c.risk for c in checks]), axis=0)
    best = int(np.argmax(np.where(certified, margin, -np.inf)))
    return ClassCertificate(name, checks, certified, float(grid[best]))


def _runs(grid: np.ndarray, mask: np.ndarray) -> list[list[float]]:
    """The certified thresholds as runs of consecutive grid points ``[first, last]``."""
    out: list[list[float]] = []
    previous = False
    for t, m in zip(grid.tolist(), mask.tolist(), strict=True):
        if m and previous:
            out[-1][1] = t
        elif m:
            out.append([t, t])
        previous = m
    return out


@dataclass(frozen=True)
class Certificate:
    """Every class's certificate on one grid at level ``delta`` by ``procedure``, and the
    decision it starts from (median filters and uncertified classes' thresholds kept)."""

    grid: np.ndarray
    delta: float
    procedure: str
    joint: bool
    unit: str
    classes: tuple[ClassCertificate, ...]
    decision: DecisionPolicy

    def level(self) -> float:
        """Each class's share of δ."""
        return _level(self.delta, len(self.classes), self.joint)

    def index(self, c: ClassCertificate) -> int:
        """Where ``c``'s chosen threshold sits on the grid (it has one)."""
        return int(np.flatnonzero(self.grid == c.threshold)[0])

    def decided(self) -> DecisionPolicy:
        """The decision: each certified class at its chosen threshold."""
        chosen = {c.name: c.threshold for c in self.classes if c.threshold is not None}
        source = (f"sedcontract certify (δ {self.delta:g}, {self.procedure}, "
                  f"{len(chosen)} of {len(self.classes)} classes certified)")
        if self.decision.source:  # what made the scores stays said
            source = f"{self.decision.source}; {source}"
        return replace(self.decision.with_thresholds(chosen) if chosen else self.decision,
                       source=source)

    def guarantee(self) -> str:
        """The statement the certificate makes, in words."""
        scope = "all classes together" if self.joint else "each class"
        return (f"with probability at least {1 - self.delta:g} over the draw of the calibration "
                f"{self.unit}s, for {scope}, every threshold certified (possibly none) keeps "
                f"each target's risk on new {self.unit}s, drawn independently as they were, at "
                f"most its alpha; the risk at a threshold is the mean share of unmet "
                f"obligations (1 - satisfied / obligations) of a {self.unit} that carries an "
                f"obligation of the coordinate there")

    def as_dict(self) -> dict[str, Any]:
        """The decision file's ``certificate`` section (plain data)."""
        grid = self.grid
        classes = {}
        for c in self.classes:
            entry: dict[str, Any] = {"certified": c.threshold is not None}
            if c.threshold is not None:
                at = self.index(c)
                entry["threshold"] = c.threshold
                entry["certified_thresholds"] = _runs(grid, c.certified)
            else:
                at, entry["why"] = None, c.why
            entry["targets"] = {k.coordinate: {
                "alpha": k.alpha,
                **({"units": int(k.units[at]), "risk": _finite(k.risk[at]),
                    "p_value": float(k.p_values[at])} if at is not None else {})}
                for k in c.checks}
            classes[c.name] = entry
        return {"guarantee": self.guarantee(), "delta": self.delta,
                "procedure": self.procedure, "family": "joint" if self.joint else "per class",
                "unit": self.unit, "thresholds": [float(t) for t in grid],
                "classes": classes}

    def markdown(self) -> list[str]:
        """The certificate as Markdown lines: what it guarantees, then a row per class (its
        certified thresholds, the one chosen, each target's risk and p-value there; or why
        none is certified)."""
        names = list(dict.fromkeys(k.coordinate for c in self.classes for k in c.checks))
        scope = "all classes jointly" if self.joint else "each class"
        lines = [f"Certified thresholds at δ {self.delta:g} ({self.procedure}; "
                 f"{len(self.grid)} thresholds {self.grid[0]:g} … {self.grid[-1]:g}; "
                 f"{scope}): {self.guarantee()}.", "",
                 "| class | certified thresholds | threshold | "
                 + " | ".join(f"{n} risk (p, {self.unit}s)" for n in names) + " |",
                 "|---" * (3 + len(names)) + "|"]
        for c in self.classes:
            own = {k.coordinate: k for k in c.checks}
            if c.threshold is None:
                lines.append(f"| {c.name} | none (below) | kept | " + " | ".join(
                    f"α {own[n].alpha:.3g}" if n in own else "" for n in names) + " |")
                continue
            at = self.index(c)
            runs = ", ".join(f"{a:g}" if a == b else f"{a:g}–{b:g}"
                             for a, b in _runs(self.grid, c.certified))
            lines.append(f"| {c.name} | {runs} | {c.threshold:g} | " + " | ".join(
                f"{own[n].risk[at]:.3f} ≤ {own[n].alpha:.3g} ({own[n].p_values[at]:.2g}, "
                f"{own[n].units[at]})" if n in own else "" for n in names) + " |")
        missing = [c for c in self.classes if c.threshold is None]
        if missing:
            lines += ["", "Not certified:", ""] + [f"- {c.name}: {c.why}" for c in missing]
        return lines


def _level(delta: float, classes: int, joint: bool) -> float:
    """Each class's share of δ: all of it, or with ``joint`` δ / classes (Bonferroni)."""
    return delta / classes if joint and classes else delta


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def alphas_of(targets: Mapping[str, float], where: str = "targets") -> dict[str, float]:
    """Least scores (coordinate → score in (0, 1)) as risk bounds ``α = 1 − score``."""
    from sedcontract.guard.curves import CURVE_COORDINATES

    out = {}
    for name, score in targets.items():
        if name not in CURVE_COORDINATES:
            raise SedContractError(f"{where}: no curve of {name!r} to certify; the curves hold "
                                   f"{', '.join(CURVE_COORDINATES)}")
        if not is_number(score) or not 0 < score < 1:
            raise SedContractError(f"{where}: the least score of {name} must be in (0, 1) to "
                                   f"be certified (1 is a risk of 0, which no finite sample "
                                   f"shows), got {score!r}")
        out[name] = round(1.0 - float(score), 12)
    if not out:
        raise SedContractError(f"{where}: no target to certify")
    return out


def read_target_file(path: str | Path) -> Any:
    """A risk order with ``targets:``, or a file of just ``targets:`` (and ``classes:``)
    (:func:`~sedcontract.analysis.selection.read_targets`), its kinds among the standard
    contract's coordinates and diagnostics."""
    from sedcontract.analysis.selection import read_targets
    from sedcontract.contracts.contract import load_contract
    from sedcontract.guard.pipeline import clause_names

    coordinates, diagnostics, _ = clause_names(load_contract("standard"))
    return read_targets(path, [*coordinates, *diagnostics])


def certify_changes(changes: Any, targets: Mapping[str, float], *, delta: float = 0.1,
                    thresholds: Sequence[float] | None = None, procedure: str = "auto",
                    groups: Mapping[str, str] | None = None, joint: bool = False,
                    classes: Sequence[str] | None = None,
                    class_targets: Mapping[str, Mapping[str, float]] | None = None,
                    decision: DecisionPolicy | None = None) -> Certificate:
    """:func:`certify` from the curves kept clip by clip
    (:func:`~sedcontract.guard.curves.clip_changes`)."""
    check_delta(delta)
    grid = desed_grid() if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    if not len(grid) or not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
        raise SedContractError("the thresholds must be finite and strictly increasing")
    names = list(classes) if classes is not None else \
        list(changes.classes) if targets else list(class_targets or {})
    unknown = [c for c in [*names, *(class_targets or {})] if c not in changes.classes]
    if unknown:
        raise SedContractError(f"no class {unknown[0]!r} in the scores (their classes: "
                               f"{', '.join(changes.classes)})")
    if len(set(names)) != len(names):
        raise SedContractError("classes: name each class once")
    left_out = [c for c in class_targets or {} if c not in names]
    if left_out:
        raise SedContractError(f"targets are given for class {left_out[0]!r}, which the classes "
                               f"to certify leave out ({', '.join(names)})")
    per_class = {c: alphas_of({**targets, **(class_targets or {}).get(c, {})},
                              f"targets of {c}") for c in names}
    methods = {c: resolved_procedure(procedure, list(per_class[c]))  # refused before counting
               for c in names}
    level, unit = _level(delta, len(names), joint), "group" if groups is not None else "clip"
    done = []
    for c in names:
        key = changes.classes.index(c)
        sums, units = {}, {}
        for k in per_class[c]:
            sums[k], units[k] = loss_sums(changes, k, key, grid, groups)
        done.append(certify_sums(c, grid, sums, units, per_class[c], level, methods[c],
                                 unit=unit))
    return Certificate(grid, float(delta), " and ".join(sorted(set(methods.values()))), joint,
                       unit, tuple(done), decision or DecisionPolicy())


def certify(ref: Any, scores: Any, durations: Any, targets: Mapping[str, float], *,
            delta: float = 0.1, policy: Any = None, thresholds: Sequence[float] | None = None,
            procedure: str = "auto", groups: Mapping[str, str] | None = None,
            joint: bool = False, classes: Sequence[str] | None = None,
            class_targets: Mapping[str, Mapping[str, float]] | None = None) -> Certificate:
    """Per-class thresholds of score tables (a folder, a table source or clip → DataFrame)
    against ``ref`` over ``durations`` whose risks meet ``targets`` (coordinate → least score,
    as a risk order's ``targets:``; ``class_targets`` adds or overrides per class) on new
    clips with probability ≥ 1 − ``delta``. ``thresholds``: the grid, fixed before the data
    (default DESED_task's 50); ``groups`` (clip → recording): the independent unit;
    ``policy``: the standard contract's policy, whose decision gives the median filters."""
    from sedcontract.contracts.policy import AuditPolicy
    from sedcontract.guard.curves import check_curves, clip_changes

    policy = policy or AuditPolicy()
    decision = policy.decision or DecisionPolicy()
    named = [*targets, *(k for own in (class_targets or {}).values() for k in own)]
    check_curves(policy, decision, named)
    for name, own in {"every class": targets, **(class_targets or {})}.items():
        if own:  # refused before any file is read
            alphas_of(own, f"targets of {name}")
    if not named:
        raise SedContractError("no target to certify")
    changes = clip_changes(ref, scores, durations, policy)
    return certify_changes(changes, targets, delta=delta, thresholds=thresholds,
                           procedure=procedure, groups=groups, joint=joint, classes=classes,
                           class_targets=class_targets, decision=decision)
