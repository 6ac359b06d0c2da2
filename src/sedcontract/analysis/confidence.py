"""Obligations stratified by annotation confidence (soft-labelled corpora such as MAESTRO
Real): every obligation of the typed trace is placed in a stratum by the soft value the
annotators gave there, so a vector can be read separately where they agreed and where they
hesitated.

A frame obligation takes the soft value of the segment holding the frame (its class, its
clip); an event obligation (a reference or predicted interval, a matched pair) the mean soft
value over its frames. Strata are half-open bins of that value: ``0`` (nobody marked it),
``(0, 0.5]`` (below the hard threshold), ``(0.5, 0.75]``, ``(0.75, 1]``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sedcontract.contracts.contract import check_atom_classes, clause_outcomes
from sedcontract.contracts.contract import needed_signals as contract_signals
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.contracts.runs import RunTable
from sedcontract.guard.pipeline import prepare_traces
from sedcontract.guard.rows import confidence_row
from sedcontract.traces import EventList
from sedcontract.traces.intervals import Intervals
from sedcontract.traces.soft import SEGMENT, SoftLabels

EDGES = (0.0, 0.5, 0.75, 1.0)
STRATA = ("0", "(0, 0.5]", "(0.5, 0.75]", "(0.75, 1]")


def stratum(values: np.ndarray) -> np.ndarray:
    """The stratum index of soft values (see ``STRATA``)."""
    return np.where(values <= 0, 0, np.searchsorted(np.asarray(EDGES[1:]), values,
                                                     side="left") + 1).clip(0, len(STRATA) - 1)


@dataclass(frozen=True)
class ConfidenceTable:
    """Per clip × class row (typed trace) and clause: satisfied and obliged counts per
    stratum, ``[rows, strata]``."""

    rows: list[tuple[str, str]]
    coordinates: tuple[str, ...]
    roles: dict[str, str]
    sorts: dict[str, str]
    satisfied: dict[str, np.ndarray]
    obligations: dict[str, np.ndarray]

    def total(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Satisfied and obliged counts per stratum over all rows."""
        return self.satisfied[name].sum(axis=0), self.obligations[name].sum(axis=0)


Segments = tuple[np.ndarray, np.ndarray, np.ndarray]  # first frame, end frame, soft value


def _first_frame(segment: np.ndarray, hop: float) -> np.ndarray:
    """The first frame whose centre lies in ``segment`` or later (frame ``f``'s centre lies in
    segment ``⌊(f + 0.5) · hop / SEGMENT⌋``)."""
    def centre(frame: np.ndarray) -> np.ndarray:
        return np.floor((frame + 0.5) * hop / SEGMENT)

    guess = np.maximum(np.ceil(segment * SEGMENT / hop - 0.5), 0).astype(np.int64)
    guess -= (guess > 0) & (centre(guess - 1) >= segment)
    return guess + (centre(guess) < segment)


def _soft_rows(soft: SoftLabels, rows: Sequence[tuple[str, str]], hop: float
               ) -> list[Segments]:
    """Each row's annotated segments as frame spans and soft values, by segment (none for a
    clip or class without soft labels): memory follows the soft rows, not their span."""
    column = {c: k for k, c in enumerate(soft.classes)}
    out = []
    for clip, cls in rows:
        labels = soft.clips.get(clip)
        if labels is None or cls not in column:
            segment, value = np.zeros(0, dtype=np.int64), np.zeros(0)
        else:
            keep = labels.column == column[cls]
            segment, value = labels.segment[keep], labels.value[keep]
        out.append((_first_frame(segment, hop), _first_frame(segment + 1, hop), value))
    return out


def _overlaps(segments: Segments, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Frames of ``start … end − 1`` in each annotated segment holding any, and its value (a
    frame in no annotated segment has soft value 0)."""
    first, stop, value = segments
    a, b = np.searchsorted(stop, start, side="right"), np.searchsorted(first, end)
    return np.minimum(stop[a:b], end) - np.maximum(first[a:b], start), value[a:b]


def _frame_counts(runs: Intervals, values: list[Segments]) -> np.ndarray:
    """Frames of ``runs`` per row and stratum of their frames' soft values."""
    out = np.zeros((len(values), len(STRATA)), dtype=np.int64)
    for r, s, e in zip(runs.row.tolist(), runs.start.tolist(), runs.end.tolist(), strict=True):
        frames, value = _overlaps(values[r], s, e)
        np.add.at(out[r], stratum(value), frames)
        out[r, 0] += e - s - int(frames.sum())
    return out


def _element_counts(runs: Intervals, values: list[Segments]) -> np.ndarray:
    """Elements of ``runs`` per row and stratum of their mean soft value."""
    out = np.zeros((len(values), len(STRATA)), dtype=np.int64)
    for r, s, e in zip(runs.row.tolist(), runs.start.tolist(), runs.end.tolist(), strict=True):
        frames, value = _overlaps(values[r], s, e)
        mean = math.fsum((frames * value).tolist()) / (e - s) if e > s else 0.0
        out[r, int(stratum(np.array([mean]))[0])] += 1
    return out


def by_confidence(ref: EventList | str | Path, pred: EventList | str | Path,
                  policy: AuditPolicy, soft: SoftLabels, *,
                  durations: Mapping[str, float] | str | Path | None = None,
                  classes: Sequence[str] | None = None) -> ConfidenceTable:
    """Every clause's obligations on the typed trace, counted per stratum of annotation
    confidence. The counts of each clause over all strata are the guard report's."""
    prepared = prepare_traces(ref, pred, policy, durations=durations, classes=classes)
    traces = prepared.traces
    soft.check_covers(traces.clips)
    contract = policy.parsed
    check_atom_classes(contract, traces.classes)
    needed = contract_signals(contract) | {"ref.active"}
    table = RunTable(traces.run_signals("typed", needed), traces.row_lengths("typed"),
                     edges=policy.edges)
    outcomes = clause_outcomes(contract, table, policy.resolver(),
                               row_classes=traces.row_classes("typed"), classes=traces.classes,
                               matching=policy.matching)
    rows = traces.row_labels("typed")
    values = _soft_rows(soft, rows, traces.hop)
    count = {"frame": _frame_counts, "event": _element_counts}
    satisfied, obligations, roles, sorts = {}, {}, {}, {}
    for clause in contract.clauses:
        outcome = outcomes[clause.name]
        obliged = count[outcome.sort](outcome.obligations, values)
        failed = count[outcome.sort](outcome.failures, values)
        satisfied[clause.name], obligations[clause.name] = obliged - failed, obliged
        roles[clause.name] = "diagnostic" if clause.diagnostic else "guard"
        sorts[clause.name] = outcome.sort
    return ConfidenceTable(rows, tuple(c.name for c in contract.clauses), roles, sorts,
                           satisfied, obligations)


def confidence_markdown(table: ConfidenceTable) -> str:
    """Each coordinate's score per stratum (typed trace): satisfied / obliged."""
    lines = ["By annotation confidence (typed; the soft value where each obligation lies):",
             "", "| coordinate | " + " | ".join(f"soft {s}" for s in STRATA) + " |",
             "|---|" + "---|" * len(STRATA)]
    for name in table.coordinates:
        sat, obl = table.total(name)
        cells = [f"{s / o:.3f} ({s}/{o})" if o else "vacuous (0/0)"
                 for s, o in zip(sat.tolist(), obl.tolist(), strict=True)]
        mark = "" if table.roles[name] == "guard" else " (diagnostic)"
        lines.append(f"| {name}{mark} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def confidence_rows(table: ConfidenceTable, system: str, policy: str) -> list[dict]:
    """Source rows (role ``facts``, coordinate ``confidence:<stratum>/<clause>``) per clip ×
    class, for ``sedcontract report``'s table by annotation confidence."""
    out = []
    for name in table.coordinates:
        for k, label in enumerate(STRATA):
            coordinate = confidence_row(label, name)
            sat, obl = table.satisfied[name][:, k], table.obligations[name][:, k]
            for r, (clip, cls) in enumerate(table.rows):
                out.append({"system": system, "policy": policy, "mode": "typed", "clip": clip,
                            "class": cls, "coordinate": coordinate, "role": "facts",
                            "sort": table.sorts[name], "satisfied": int(sat[r]),
                            "obligations": int(obl[r])})
    return out
