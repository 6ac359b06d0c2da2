"""Obligation-restricted clause scores: a clause is scored only where its obligation holds,
so a rare antecedent cannot make it vacuously perfect. No obligations → NaN, never 1.0."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


def clause_counts(ops: Any, obligation: Any, requirement: Any) -> tuple[Any, Any]:
    """``(satisfied, obligations)``: frames where obligation ∧ requirement, and where obligation
    holds. Generic over the backend's ``count`` so the same code runs symbolically."""
    return ops.count(ops.and_(obligation, requirement)), ops.count(obligation)


@dataclass(frozen=True)
class ClauseScore:
    """Counts of one clause, pooled over rows, with the per-row counts kept."""

    name: str
    satisfied_per_row: np.ndarray
    obligations_per_row: np.ndarray
    sort: str = "frame"          # frame | event
    diagnostic: bool = False     # reported beside the guard vector, not a coordinate of it

    @property
    def satisfied(self) -> int:
        return int(np.sum(self.satisfied_per_row))

    @property
    def obligations(self) -> int:
        return int(np.sum(self.obligations_per_row))

    @property
    def vacuous(self) -> bool:
        return self.obligations == 0

    @property
    def score(self) -> float:
        """``satisfied / obligations``; NaN when vacuous."""
        return math.nan if self.vacuous else self.satisfied / self.obligations

    def __str__(self) -> str:
        shown = "vacuous" if self.vacuous else f"{self.score:.3f}"
        return f"{self.name}: {shown} ({self.satisfied}/{self.obligations})"
