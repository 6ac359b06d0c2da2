"""The report's tables read off source rows: guard counts summed per system, policy, mode
and coordinate, and the rows beside the vector (matching, scores, facts)."""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.analysis.confidence import STRATA
from sedcontract.analysis.ranking import Ranking, metric_order, rankings
from sedcontract.analysis.report.style import colour, relative
from sedcontract.analysis.source_rows import SourceRows
from sedcontract.guard.render import (
    table_text,
)
from sedcontract.guard.rows import (
    CONFIDENCE,
    MATCHING,
    RANKING,
    SCORE,
    RowKind,
    confidence_row,
    curve_coordinate,
    of_kind,
    score_row,
)
from sedcontract.scores.counts import Counts
from sedcontract.traces import MODES


@dataclass(frozen=True)
class Table:
    """A named table: a caption, column names and rows of plain values."""

    name: str
    caption: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    def markdown(self) -> str:
        lines = [f"**{self.caption}**", "", "| " + " | ".join(map(table_text, self.columns)) + " |",
                 "|---" * len(self.columns) + "|"]
        lines += ["| " + " | ".join(table_text(_cell(v)) for v in row) + " |"
                  for row in self.rows]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows([[_cell(v, blank="") for v in row] for row in self.rows])
        return out.getvalue()

    def html(self, unfolded: bool = False, shaded: Sequence[str] = ()) -> str:
        """The table folded (``unfolded``: open): a ``<details>`` whose summary is the caption
        and the row count; a table wider than the page scrolls inside its box. The
        ``shaded`` columns are coloured by where each value lies in its column's spread."""
        spread = {}
        for c in shaded:
            j = self.columns.index(c)
            known = [r[j] for r in self.rows if isinstance(r[j], float) and not math.isnan(r[j])]
            if known:
                spread[j] = (min(known), max(known))

        def td(j: int, v: Any) -> str:
            if j in spread and isinstance(v, float):
                return (f'<td style="background:{colour(relative(v, *spread[j]))}">'
                        f"{html.escape(_cell(v))}</td>")
            return f"<td>{html.escape(_cell(v))}</td>"

        head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in self.columns)
        body = "".join("<tr>" + "".join(td(j, v) for j, v in enumerate(row)) + "</tr>"
                       for row in self.rows)
        rows = f"{len(self.rows)} row{'' if len(self.rows) == 1 else 's'}"
        return (f'<details id="{self.name}"{" open" if unfolded else ""}><summary><h3>'
                f"{html.escape(self.caption)}</h3> ({rows})</summary>\n<div class=\"wide\">"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
                "</details>\n")


def _cell(value: Any, blank: str = "vacuous") -> str:
    if isinstance(value, float):
        return blank if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _score(sat: int, obl: int) -> float:
    return sat / obl if obl else math.nan


EXTRA_ROLES = ("matching", "score", "facts")  # rows beside the vector


BESIDE = (*EXTRA_ROLES, RANKING)  # rows that are not a coordinate of the contract


def of_roles(rows: SourceRows, roles: Sequence[str]) -> np.ndarray:
    """The rows whose role is one of ``roles``."""
    wanted = [k for k, r in enumerate(rows.vocab["role"]) if r in roles]
    return np.isin(rows.codes["role"], wanted)


def group_sums(rows: SourceRows, mask: np.ndarray, columns: Sequence[np.ndarray]
               ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``mask`` grouped by ``columns`` (integer arrays over all rows): each
    group's key columns, its ``satisfied`` and ``obligations`` sums (int64, exact) and its
    first row, the groups in the order their first rows come."""
    picked = np.flatnonzero(mask)
    key = np.zeros(len(picked), dtype=np.int64)
    for column in columns:
        values = np.asarray(column)[picked].astype(np.int64)
        size = int(values.max()) + 1 if len(values) else 1
        if len(key) and int(key.max()) + 1 > (2**62) // size:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * size + values
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else \
        np.zeros(0, dtype=np.int64)
    first = picked[order[starts]]
    by_first = np.argsort(first, kind="stable")
    sums = [np.add.reduceat(v[picked][order], starts)[by_first] if len(starts) else
            np.zeros(0, dtype=np.int64) for v in (rows.satisfied, rows.obligations)]
    return [np.asarray(c)[first[by_first]] for c in columns], sums[0], sums[1], \
        first[by_first]


def guard_names(rows: SourceRows | Iterable[dict[str, Any]]) -> list[str]:
    """The guard coordinates in the order the rows first name them (a coordinate's role is
    the one its last row gives)."""
    rows = SourceRows.of(rows)
    coordinate = rows.codes["coordinate"][~of_roles(rows, BESIDE)]
    role = rows.codes["role"][~of_roles(rows, BESIDE)]
    if not len(coordinate):
        return []
    codes, first = np.unique(coordinate, return_index=True)
    last = len(coordinate) - 1 - np.unique(coordinate[::-1], return_index=True)[1]
    guard = rows.vocab["role"].index("guard") if "guard" in rows.vocab["role"] else -1
    return [rows.vocab["coordinate"][codes[k]] for k in np.argsort(first, kind="stable")
            if role[last[k]] == guard]


def score_names(rows: SourceRows | Iterable[dict[str, Any]]) -> list[str]:
    """The standard scores the ``score:<name>/…`` rows count, sorted."""
    rows = SourceRows.of(rows)
    used = np.unique(rows.codes["coordinate"][of_roles(rows, ("score",))])
    return sorted({kind.name for c in used
                   if (kind := of_kind(rows.vocab["coordinate"][c], SCORE)) is not None})


def _mean(values: Iterable[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return sum(known) / len(known) if known else math.nan


def report_tables(rows: SourceRows | Sequence[dict[str, Any]],
                  groups: Mapping[str, str] | None = None) -> list[Table]:
    """The systems' vectors (micro, per mode, with logic), typed against union, the vectors
    per clip group (``groups``: clip → e.g. perturbation family or pathology) and the
    union-versus-typed mechanism per class."""
    rows = SourceRows.of(rows)
    v = rows.vocab
    extra = of_roles(rows, EXTRA_ROLES)
    vector = ~of_roles(rows, BESIDE)
    is_typed = rows.codes["mode"] == (v["mode"].index("typed") if "typed" in v["mode"] else -1)
    facts = _facts(rows, extra & is_typed)
    counts = _scoped_counts(rows, vector, groups)
    coordinate_codes, first = np.unique(rows.codes["coordinate"][vector], return_index=True)
    last = int(vector.sum()) - 1 - np.unique(rows.codes["coordinate"][vector][::-1],
                                              return_index=True)[1]
    order = {v["coordinate"][c]: int(f) for c, f in zip(coordinate_codes, first, strict=True)}
    role = {v["coordinate"][c]: v["role"][rows.codes["role"][vector][i]]
            for c, i in zip(coordinate_codes, last, strict=True)}
    pairs = np.unique(np.stack([rows.codes["system"][vector], rows.codes["policy"][vector]]),
                      axis=1) if vector.any() else np.zeros((2, 0), dtype=np.int64)
    systems = sorted({(v["system"][a], v["policy"][b]) for a, b in pairs.T})
    guard = guard_names(rows)
    coordinates = sorted(order, key=lambda c: (role[c] != "guard", order[c]))

    def score(system, policy, mode, scope, coordinate) -> float:
        return _score(*counts.get((system, policy, mode, scope, coordinate), (0, 0)))

    vectors = Table("vectors", "Guard vectors and diagnostics (micro: pooled counts)",
                    ("system", "policy", "mode", "coordinate", "role", "satisfied",
                     "obligations", "score"), [])
    logic = Table("logic", "Logic: the mean of the non-vacuous guard coordinates",
                  ("system", "policy", "typed", "union", "typed − union"), [])
    for system, policy in systems:
        means = {}
        for mode in MODES:
            for coordinate in coordinates:
                key = (system, policy, mode, "*", coordinate)
                if key in counts:
                    sat, obl = counts[key]
                    vectors.rows.append((system, policy, mode, coordinate, role[coordinate],
                                         sat, obl, _score(sat, obl)))
            means[mode] = _mean(score(system, policy, mode, "*", c) for c in guard)
        logic.rows.append((system, policy, means["typed"], means["union"],
                           means["typed"] - means["union"]))
    gap = Table("typed_vs_union", "Typed against union traces, per guard coordinate",
                ("system", "policy", "coordinate", "typed", "union", "typed − union"), [])
    for system, policy in systems:
        for coordinate in guard:
            typed, union = (score(system, policy, m, "*", coordinate) for m in MODES)
            gap.rows.append((system, policy, coordinate, typed, union, typed - union))
    tables = [logic, vectors, gap]
    if groups:
        names = sorted({g for g in groups.values()})
        by_group = Table("by_group", "Guard vectors per clip group (typed)",
                         ("system", "policy", "group", *guard, "logic"), [])
        for system, policy in systems:
            for group in names:
                values = [score(system, policy, "typed", f"group:{group}", c) for c in guard]
                by_group.rows.append((system, policy, group, *values, _mean(values)))
        tables.append(by_group)
    classes = sorted(v["class"][c] for c in np.unique(rows.codes["class"][vector & is_typed]))
    mechanism = _mechanism(systems, classes, guard, counts, facts, score)
    tables.append(mechanism)
    beside, by_class = _class_scores(rows, extra & is_typed, systems)
    per_class = Table("per_class", "Guard vectors per class (typed): each coordinate and logic "
                      "of each class, the view in which classes that fail stand out, then "
                      "each standard score's F1 and each ranking metric of the class",
                      ("class", "system", "policy", *guard, "logic", *beside), [])
    for cls in classes:  # a class's systems side by side
        for system, policy in systems:
            values = [score(system, policy, "typed", f"class:{cls}", c) for c in guard]
            per_class.rows.append((cls, system, policy, *values, _mean(values),
                                   *(by_class.get((system, policy, cls, name), math.nan)
                                     for name in beside)))
    tables.append(per_class)
    tables += _extra_tables(rows, extra, systems)
    return tables


def _class_scores(rows: SourceRows, typed_extra: np.ndarray, systems: Sequence[tuple[str, str]]
                  ) -> tuple[list[str], dict[tuple[str, str, str, str], float]]:
    """The per-class columns beside the vectors: each standard score's F1 of the class
    (``<score>_f1``, from its ``score:`` rows; NaN without references) and each ranking
    metric the rows give per class (PSDS, mAUC, mpAUC); (system, policy, class, column) →
    value."""
    v = rows.vocab
    keys, sat, obl, _ = group_sums(rows, typed_extra, [rows.codes[c] for c in
                                                       ("system", "policy", "class",
                                                        "coordinate")])
    sums = {tuple(v[c][keys[k][i]] for k, c in enumerate(("system", "policy", "class",
                                                          "coordinate"))): (int(sat[i]),
                                                                            int(obl[i]))
            for i in range(len(sat))}
    names = sorted({kind.name for k in sums if (kind := of_kind(k[3], SCORE)) is not None})
    out: dict[tuple[str, str, str, str], float] = {}
    for system, policy, cls, coordinate in sums:
        kind = of_kind(coordinate, SCORE)
        if kind is not None and kind.part == "recall":
            tp, n_ref = sums[(system, policy, cls, coordinate)]
            _, n_sys = sums.get((system, policy, cls, score_row(kind.name, "precision")),
                                (tp, 0))
            out[(system, policy, cls, f"{kind.name}_f1")] = Counts(tp, n_ref, n_sys).f1
    ranked = rankings(rows)
    metrics = [m for m in metric_order({m for r in ranked.values() for m in r.per_class})
               if curve_coordinate(m) is None]
    for key in systems:
        for metric in metrics:
            for cls, value in ranked.get(key, Ranking()).per_class.get(metric, {}).items():
                out[(*key, cls, metric)] = value
    return [*(f"{n}_f1" for n in names), *metrics], out


def _facts(rows: SourceRows, typed_extra: np.ndarray) -> dict[tuple, tuple[int, int]]:
    """The ``activity`` and ``softness`` facts of the typed rows, summed per (fact, system,
    policy, class)."""
    v = rows.vocab
    named = np.isin(rows.codes["coordinate"], [k for k, c in enumerate(v["coordinate"])
                                               if c in ("activity", "softness")])
    keys, sat, obl, _ = group_sums(rows, typed_extra & named, [
        rows.codes[c] for c in ("coordinate", "system", "policy", "class")])
    return {(v["coordinate"][keys[0][i]], v["system"][keys[1][i]], v["policy"][keys[2][i]],
             v["class"][keys[3][i]]): (int(sat[i]), int(obl[i])) for i in range(len(sat))}


def _scoped_counts(rows: SourceRows, vector: np.ndarray, groups: Mapping[str, str] | None
                   ) -> dict[tuple, tuple[int, int]]:
    """Each coordinate's counts per (system, policy, mode, scope): a scope per row three times
    over, all (``*``), its class (``class:<c>``) and its clip's group (``group:<g>``)."""
    v = rows.vocab
    n_classes = len(v["class"])
    group_names = sorted({g for g in (groups or {}).values()} | {""})
    clip_group = np.array([group_names.index((groups or {}).get(c, "")) for c in v["clip"]],
                          dtype=np.int64)
    scope_names = ["*", *(f"class:{c}" for c in v["class"]), *(f"group:{g}" for g in
                                                               group_names)]
    counts: dict[tuple, tuple[int, int]] = {}
    base = [rows.codes[c] for c in ("system", "policy", "mode")]
    scopes = [np.zeros(len(rows), dtype=np.int64), 1 + rows.codes["class"]]
    if groups:
        scopes.append(1 + n_classes + clip_group[rows.codes["clip"]])
    for scope in scopes:
        keys, sat, obl, _ = group_sums(rows, vector, [*base, scope, rows.codes["coordinate"]])
        for i in range(len(sat)):
            counts[(v["system"][keys[0][i]], v["policy"][keys[1][i]], v["mode"][keys[2][i]],
                    scope_names[keys[3][i]], v["coordinate"][keys[4][i]])] = \
                (int(sat[i]), int(obl[i]))
    return counts


def _mechanism(systems: Sequence[tuple[str, str]], classes: Sequence[str],
               guard: Sequence[str], counts: Mapping[tuple, tuple[int, int]],
               facts: Mapping[tuple, tuple[int, int]], score: Callable[..., float]) -> Table:
    """Union against typed, per class, beside what could explain it (support, imbalance,
    sparsity, softness)."""
    mechanism = Table(
        "mechanism", "Union against typed, per class: support (reference intervals, from the "
        "'missed' obligations), share of the support, imbalance (support over the mean "
        "support), sparsity (the share of frames without the class), annotation softness of "
        "soft-labelled corpora (the mean of 1 − |2s − 1| over the annotated segments: 0 "
        "certain, 1 all at 0.5; blank without soft labels) beside the class's typed logic and "
        "the union logic",
        ("system", "policy", "class", "support", "share", "imbalance", "sparsity", "softness",
         "typed logic", "union logic", "typed − union"), [])
    for system, policy in systems:
        support = {c: counts.get((system, policy, "typed", f"class:{c}", "missed"), (0, 0))[1]
                   for c in classes}
        total = sum(support.values())
        mean_support = total / len(classes) if classes else math.nan
        union = _mean(score(system, policy, "union", "*", c) for c in guard)
        for cls in classes:
            typed = _mean(score(system, policy, "typed", f"class:{cls}", c) for c in guard)
            active, frames = facts.get(("activity", system, policy, cls), (0, 0))
            ambiguity, segments = facts.get(("softness", system, policy, cls), (0, 0))
            mechanism.rows.append((system, policy, cls, support[cls],
                                   support[cls] / total if total else math.nan,
                                   support[cls] / mean_support if mean_support else math.nan,
                                   1 - active / frames if frames else math.nan,
                                   ambiguity / segments if segments else math.nan,
                                   typed, union, typed - union))
    return mechanism


def _extra_tables(rows: SourceRows, extra: np.ndarray, systems: Sequence[tuple[str, str]]
                  ) -> list[Table]:
    """The standard scores (micro precision, recall and F1 from the ``score:`` rows), the
    matching audit (greedy pairs of the maximum, from the ``matching:`` rows) and the vector
    by annotation confidence (from the ``confidence:`` rows)."""
    v = rows.vocab
    keys, sat, obl, _ = group_sums(rows, extra, [rows.codes[c] for c in
                                                 ("system", "policy", "mode", "coordinate")])
    sums = {(v["system"][keys[0][i]], v["policy"][keys[1][i]], v["mode"][keys[2][i]],
             v["coordinate"][keys[3][i]]): (int(sat[i]), int(obl[i])) for i in range(len(sat))}
    out = []
    names = sorted({kind.name for k in sums if (kind := of_kind(k[3], SCORE)) is not None})
    if names:
        scores = Table("scores", "Standard scores on the same events (micro): precision, "
                       "recall and F1", ("system", "policy", "score", "tp", "references",
                                         "outputs", "precision", "recall", "F1"), [])
        for system, policy in systems:
            for name in names:
                tp, n_ref = sums.get((system, policy, "typed", score_row(name, "recall")),
                                     (0, 0))
                _, n_sys = sums.get((system, policy, "typed", score_row(name, "precision")),
                                    (0, 0))
                counts = Counts(tp, n_ref, n_sys)  # no output scores 0, as in DCASE
                scores.rows.append((system, policy, name, tp, n_ref, n_sys, counts.precision,
                                    counts.recall, counts.f1))
        out.append(scores)
    matchings = sorted({k[3] for k in sums if of_kind(k[3], MATCHING) is not None})
    if matchings:
        audit = Table("matching", "The matching audit: pairs greedy matching finds of the "
                      "maximum (exact) matching", ("system", "policy", "mode", "matching",
                                                   "greedy", "exact", "greedy / exact"), [])
        for system, policy in systems:
            for mode in MODES:
                for name in matchings:
                    if (system, policy, mode, name) in sums:
                        greedy, exact = sums[(system, policy, mode, name)]
                        audit.rows.append((system, policy, mode, RowKind.parse(name).name,
                                           greedy, exact, _score(greedy, exact)))
        out.append(audit)
    # the rows' order: strata, and clauses in the contract's order
    stratified = [kind for c in dict.fromkeys(k[3] for k in sums)
                  if (kind := of_kind(c, CONFIDENCE)) is not None]
    if stratified:
        strata = list(dict.fromkeys(kind.name for kind in stratified))
        strata.sort(key=lambda label: STRATA.index(label) if label in STRATA else len(STRATA))
        clauses = list(dict.fromkeys(kind.part for kind in stratified))
        table = Table("by_confidence", "Obligations by annotation confidence (typed): each "
                      "coordinate's score where the soft label of its obligation lies in each "
                      "stratum", ("system", "policy", "coordinate",
                                  *(f"soft {label}" for label in strata)), [])
        for system, policy in systems:
            for clause in clauses:
                table.rows.append((system, policy, clause, *(
                    _score(*sums.get((system, policy, "typed", confidence_row(label, clause)),
                                     (0, 0))) for label in strata)))
        out.append(table)
    return out
