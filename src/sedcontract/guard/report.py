"""The guard report types: a coordinate's cell of counts, a mode's report (typed or union) and
the report of a run, per coordinate, per class and per clip, with the policy that produced it;
the standard scores alone."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.guard.facts import TraceFacts
from sedcontract.scores.counts import MetricResult
from sedcontract.traces.traceset import (
    RowLabels,
    row_labels,
)


@dataclass(frozen=True)
class Cell:
    """``satisfied / obligations``; NaN (vacuous) when there are no obligations."""

    satisfied: int
    obligations: int

    @property
    def score(self) -> float:
        return math.nan if self.obligations == 0 else self.satisfied / self.obligations

    @property
    def vacuous(self) -> bool:
        return self.obligations == 0


@dataclass(frozen=True)
class MatchingCounts:
    """One matching of the contract, per row: the pairs greedy and exact matching find (the
    declared method's are the pairs used)."""

    name: str
    method: str
    greedy_per_row: np.ndarray
    exact_per_row: np.ndarray

    @property
    def pairs(self) -> int:
        return int((self.greedy_per_row if self.method == "greedy"
                    else self.exact_per_row).sum())

    @property
    def short_rows(self) -> np.ndarray:
        """Rows where greedy finds fewer pairs than the maximum."""
        return np.flatnonzero(self.greedy_per_row < self.exact_per_row)


@dataclass(frozen=True)
class ModeReport:
    """All clause counts of one trace mode (typed or union), kept per row."""

    mode: str
    coordinates: tuple[str, ...]
    diagnostics: tuple[str, ...]
    sorts: dict[str, str]
    rows: Sequence[tuple[str, str | None]]      # (clip, class) per row; class None on union
    satisfied: dict[str, np.ndarray]
    obligations: dict[str, np.ndarray]
    matchings: dict[str, MatchingCounts] = field(default_factory=dict)

    def arrays(self, clips: int, per: int) -> dict[str, np.ndarray]:
        """Every per-row count, each ``[clips, per]`` (``per`` rows per clip)."""
        out = {}
        for name in (*self.coordinates, *self.diagnostics):
            out[f"satisfied/{name}"] = self.satisfied[name].reshape(clips, per)
            out[f"obligations/{name}"] = self.obligations[name].reshape(clips, per)
        for name, m in self.matchings.items():
            out[f"greedy/{name}"] = m.greedy_per_row.reshape(clips, per)
            out[f"exact/{name}"] = m.exact_per_row.reshape(clips, per)
        return out

    def rebuild(self, clips: Sequence[str], classes: Sequence[str],
                arrays: dict[str, np.ndarray]) -> ModeReport:
        """This mode's report for other clips, from :meth:`arrays` of theirs."""
        names = (*self.coordinates, *self.diagnostics)
        return ModeReport(
            self.mode, self.coordinates, self.diagnostics, self.sorts,
            row_labels(clips, classes, self.mode),
            {n: arrays[f"satisfied/{n}"].reshape(-1) for n in names},
            {n: arrays[f"obligations/{n}"].reshape(-1) for n in names},
            {n: MatchingCounts(n, m.method, arrays[f"greedy/{n}"].reshape(-1),
                               arrays[f"exact/{n}"].reshape(-1))
             for n, m in self.matchings.items()})

    def micro(self, name: str) -> Cell:
        """Counts pooled over every clip and class."""
        return Cell(int(self.satisfied[name].sum()), int(self.obligations[name].sum()))

    def _grouped(self, name: str, key: int) -> dict[Any, Cell]:
        """Counts per class (``key`` 1) or per clip (0), in the order the rows first name
        them."""
        if isinstance(self.rows, RowLabels):  # rows are clip-major: sum one axis
            shape = (len(self.rows.clips), self.rows.per)
            sat = self.satisfied[name].reshape(shape).sum(axis=1 - key)
            obl = self.obligations[name].reshape(shape).sum(axis=1 - key)
            names = self.rows.classes if key == 1 else self.rows.clips
            if not len(self.rows):  # no rows: no groups (as the loop below finds none)
                return {}
            return {k: Cell(int(a), int(b)) for k, a, b in zip(names, sat, obl, strict=True)}
        out: dict[Any, list[int]] = {}
        for i, row in enumerate(self.rows):
            cell = out.setdefault(row[key], [0, 0])
            cell[0] += int(self.satisfied[name][i])
            cell[1] += int(self.obligations[name][i])
        return {k: Cell(*v) for k, v in out.items()}

    def per_class(self, name: str) -> dict[str | None, Cell]:
        return self._grouped(name, 1)

    def per_clip(self, name: str) -> dict[str, Cell]:
        return self._grouped(name, 0)

    def macro(self, name: str) -> tuple[float, int]:
        """Mean over classes of the per-class scores, and how many classes were not vacuous.

        The union trace has no classes: its macro score is the pooled score, with 0 classes.
        """
        per_class = self.per_class(name)
        if set(per_class) <= {None}:
            return self.micro(name).score, 0
        scores = [c.score for c in per_class.values() if not c.vacuous]
        return (float(np.mean(scores)) if scores else math.nan), len(scores)

    def score(self, name: str, aggregation: str = "micro") -> float:
        return self.micro(name).score if aggregation == "micro" else self.macro(name)[0]

    def logic(self, aggregation: str = "micro",
              coordinates: Sequence[str] | None = None) -> float:
        """Mean of the non-vacuous coordinates (NaN when all are vacuous)."""
        scores = [self.score(n, aggregation) for n in coordinates or self.coordinates]
        scores = [s for s in scores if not math.isnan(s)]
        return float(np.mean(scores)) if scores else math.nan


@dataclass(frozen=True)
class GuardReport:
    """Guard vectors of one audit, by mode, with the policy and trace facts behind them.

    Every number in it is a count per clip (or per clip × class) or computed from such counts,
    so the reports of disjoint sets of clips of one corpus join into the corpus's report
    (:meth:`concat`): shards, processes and validation batches sum, they never recompute."""

    policy: dict[str, Any]
    facts: TraceFacts
    modes: dict[str, ModeReport]
    aggregation: str = "micro"
    coordinates: tuple[str, ...] = ()
    scores: dict[str, MetricResult] | None = None  # standard scores on the same traces
    psds: dict[str, Any] | None = None  # PSDS per scenario (score files or points), or a note
    auroc: dict[str, Any] | None = None  # segment-based mAUC and mpAUC (score files)

    @property
    def traces(self) -> dict[str, Any]:
        """The ``traces`` section: clips, classes, what projection lost, warnings."""
        return self.facts.as_dict()

    @property
    def clips(self) -> tuple[str, ...]:
        return self.facts.clips

    def vector(self, mode: str) -> dict[str, float]:
        """``{coordinate: score}`` under the report's aggregation."""
        report = self.modes[mode]
        return {name: report.score(name, self.aggregation) for name in self.coordinates}

    def logic(self, mode: str) -> float:
        return self.modes[mode].logic(self.aggregation, self.coordinates)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every count of the report, each ``[clips, width]`` (one row of numbers per clip)."""
        n, per = len(self.clips), len(self.facts.classes)
        out = {f"facts/{k}": v for k, v in self.facts.arrays().items()}
        for mode, report in self.modes.items():
            width = per if mode == "typed" else 1
            out |= {f"{mode}/{k}": v for k, v in report.arrays(n, width).items()}
        for name, result in (self.scores or {}).items():
            for part in ("tp", "ref", "sys"):
                out[f"scores/{name}/{part}"] = getattr(result, part).reshape(n, per)
            out[f"scores/{name}/subs"] = result.subs.reshape(n, 1)
            if result.ties is not None:
                out[f"scores/{name}/ties"] = result.ties.reshape(n, 1)
        return out

    def rebuild(self, clips: Sequence[str], arrays: Mapping[str, np.ndarray]) -> GuardReport:
        """This report's structure (policy, contract, classes) over other clips, from
        :meth:`arrays` of theirs."""
        classes = self.facts.classes

        def part(prefix: str) -> dict[str, np.ndarray]:
            return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}

        scores = None if self.scores is None else {
            name: MetricResult(tuple(clips), classes,
                               *(arrays[f"scores/{name}/{k}"].reshape(len(clips), len(classes))
                                 for k in ("tp", "ref", "sys")),
                               arrays[f"scores/{name}/subs"].reshape(len(clips)),
                               arrays[f"scores/{name}/ties"].reshape(len(clips))
                               if f"scores/{name}/ties" in arrays else None)
            for name in self.scores}
        return GuardReport(self.policy, self.facts.rebuild(clips, part("facts/")),
                           {m: r.rebuild(clips, classes, part(f"{m}/"))
                            for m, r in self.modes.items()},
                           self.aggregation, self.coordinates, scores, self.psds, self.auroc)

    @staticmethod
    def concat(parts: Iterable[GuardReport]) -> GuardReport:
        """The report of the union of disjoint clip sets (in order), from theirs; they must
        come from one policy and contract. PSDS and AUROC (curves over the whole corpus) are
        not sums of counts and are refused. ``parts`` may be an iterator: only each part's
        counts are kept, and each count is let go once joined, so a corpus in blocks peaks
        near its own size, not twice it."""
        first: GuardReport | None = None
        clips: list[str] = []
        arrays: list[dict[str, np.ndarray]] = []
        for part in parts:
            if first is None:
                first = part
            else:
                _check_joinable(first, part)
            if part.psds is not None or part.auroc is not None:
                raise SedContractError("PSDS and AUROC are curves over the whole corpus, not "
                                       "sums of counts: reports with them cannot be joined")
            clips += part.clips
            arrays.append(part.arrays())
        if first is None:
            raise SedContractError("no reports to join")
        twice = next((c for c, n in Counter(clips).items() if n > 1), None)
        if twice is not None:
            raise SedContractError(f"clip {twice!r} is in more than one of the joined reports")
        return first.rebuild(clips, {k: np.concatenate([a.pop(k) for a in arrays])
                                     for k in list(arrays[0])})


def _check_joinable(first: GuardReport, other: GuardReport) -> None:
    """Refuse to join reports of different policies, classes, modes or score settings."""
    for what in ("policy", "aggregation", "coordinates"):
        if getattr(other, what) != getattr(first, what):
            raise SedContractError(f"reports with different {what} cannot be joined")
    if other.facts.classes != first.facts.classes or set(other.modes) != \
            set(first.modes) or (other.scores is None) != (first.scores is None):
        raise SedContractError("reports of different classes, trace modes or score "
                               "settings cannot be joined")


@dataclass(frozen=True)
class ScoresReport:
    """The standard scores of one system alone (``sedcontract scores``): no contract runs."""

    policy: dict[str, Any]
    traces: dict[str, Any]
    scores: dict[str, MetricResult]
    psds: dict[str, Any] | None = None
    auroc: dict[str, Any] | None = None
