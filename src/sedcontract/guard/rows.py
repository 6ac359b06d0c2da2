"""The kinds of source row a report writes besides its coordinates, and how each is spelled in
the ``coordinate`` column: ``score:<name>/<part>`` (true positives of the references or of the
outputs of a standard score), ``matching:<clause>`` (greedy pairs of the exact pairs) and
``confidence:<stratum>/<clause>`` (obligations by annotation confidence), and the ranking
rows of metrics that are no sum of counts (``ranking:<metric>``, role ``ranking``: PSDS, mAUC,
mpAUC, their bootstrap draws and PSD-ROC staircases, a number in the ``value`` column).
Written and read here only, so the spelling lives in one place."""

from __future__ import annotations

from dataclasses import dataclass

SCORE, MATCHING, CONFIDENCE, RANKING = "score", "matching", "confidence", "ranking"
KINDS = (SCORE, MATCHING, CONFIDENCE, RANKING)
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


SETTING = "setting"  # role and kind of a row that records one setting of the policy
# the layout of the JSON reports and the CSV rows (docs/schema.md): bumped with any change
SCHEMA_VERSION = 2
VERSION_SETTING = "setting:schema_version"  # the row that says it in the CSV
CORPUS = "*"  # the clip of a row about the whole corpus


CURVE_PARTS = ("efpr", "tpr")  # the parts of a PSD-ROC staircase's ranking rows
DRAWS = "draws"  # settings draws.seed and draws.resamples: how the ranking draws were drawn


def ranking_row(metric: str, part: str = "") -> str:
    """``ranking:<metric>`` (the value) or ``ranking:<metric>/<part>`` (a PSD-ROC staircase's
    ``efpr`` or ``tpr``)."""
    return RowKind(RANKING, metric, part).coordinate


CURVE_METRIC = "curve_"  # a ranking metric that is a guard curve's budget area: curve_onset


def curve_metric(coordinate: str) -> str:
    """The ranking metric of ``coordinate``'s budget area (``curve_<coordinate>``)."""
    return f"{CURVE_METRIC}{coordinate}"


def curve_coordinate(metric: str) -> str | None:
    """The coordinate whose budget area ``metric`` is, or None for another metric."""
    return metric[len(CURVE_METRIC):] if metric.startswith(CURVE_METRIC) else None


def metric_name(name: str) -> bool:
    """A ranking metric's name: ASCII letters, digits and underscores (it names a file)."""
    return bool(name) and name.isascii() and name.replace("_", "a").isalnum()


def setting_row(key: str) -> str:
    """``setting:<key>``, ``key`` dotted for a nested setting (``scores.t_collar``)."""
    return f"{SETTING}:{key}"


def resample_clip(r: int) -> str:
    """The clip column of resample ``r``'s draw of a ranking metric."""
    return f"resample:{r}"


def point_clip(k: int) -> str:
    """The clip column of point ``k`` of a PSD-ROC staircase."""
    return f"point:{k}"


def numbered(clip: str, prefix: str) -> int | None:
    """``r`` of ``resample:r`` (``prefix`` ``resample``) or ``k`` of ``point:k``, written in
    ASCII digits without leading zeros (one spelling per number); else None."""
    head, colon, tail = clip.partition(":")
    if colon and head == prefix and tail.isascii() and tail.isdigit() and len(tail) < 19 \
            and str(int(tail)) == tail:
        return int(tail)
    return None
