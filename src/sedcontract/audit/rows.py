"""The kinds of source row a report writes besides its coordinates, and how each is spelled in
the ``coordinate`` column: ``score:<name>/<part>`` (true positives of the references or of the
outputs of a standard score), ``matching:<clause>`` (greedy pairs of the exact pairs) and
``confidence:<stratum>/<clause>`` (obligations by annotation confidence). Written and read
here only, so the spelling lives in one place."""

from __future__ import annotations

from dataclasses import dataclass

SCORE, MATCHING, CONFIDENCE = "score", "matching", "confidence"
KINDS = (SCORE, MATCHING, CONFIDENCE)
SCORE_PARTS = ("recall", "precision")  # tp of the references, tp of the outputs


@dataclass(frozen=True)
class RowKind:
    """A row kind and what it names: ``name`` (a score, a clause, a stratum) and ``part``
    (a score's ``recall`` / ``precision``, a stratum's clause; empty for a matching)."""

    kind: str
    name: str
    part: str = ""

    @property
    def coordinate(self) -> str:
        """The spelling in the ``coordinate`` column."""
        return f"{self.kind}:{self.name}" + (f"/{self.part}" if self.part else "")

    @staticmethod
    def parse(coordinate: str) -> RowKind | None:
        """The kind a ``coordinate`` spells, or None for a coordinate of the contract (or a
        ``facts`` row such as ``activity``)."""
        kind, colon, rest = coordinate.partition(":")
        if not colon or kind not in KINDS:
            return None
        if kind == MATCHING:
            return RowKind(kind, rest)
        name, slash, part = rest.rpartition("/")
        return RowKind(kind, name, part) if slash else RowKind(kind, rest)


def score_row(name: str, part: str) -> str:
    """``score:<name>/<part>``, ``part`` one of :data:`SCORE_PARTS`."""
    return RowKind(SCORE, name, part).coordinate


def matching_row(clause: str) -> str:
    return RowKind(MATCHING, clause).coordinate


def confidence_row(stratum: str, clause: str) -> str:
    return RowKind(CONFIDENCE, stratum, clause).coordinate


def of_kind(coordinate: str, kind: str) -> RowKind | None:
    """The row kind of ``coordinate`` when it is of ``kind``, else None."""
    parsed = RowKind.parse(coordinate)
    return parsed if parsed is not None and parsed.kind == kind else None
