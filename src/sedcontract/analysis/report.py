"""Reports regenerated from source rows (``audit --format csv``, the ``*_report.csv`` files of
training and evaluation runs): every table (Markdown and CSV), a figure and a self-contained
``report.html``, all pure functions of the rows, so the same rows give the same bytes."""

from __future__ import annotations

import base64
import csv
import html
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.analysis.confidence import STRATA
from sedcontract.analysis.ranking import (
    Ranking,
    metric_order,
    paired_ranking,
    rankings,
    settings_items,
)
from sedcontract.analysis.source_rows import SourceRows, read_rows
from sedcontract.analysis.sweep import sweep_csv, sweep_markdown, sweep_png
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.figures import png, pyplot, system_colours
from sedcontract.guard.bootstrap import (
    count_scores,
    resampled_f1,
    resampled_macro_f1,
    resampled_scores,
)
from sedcontract.guard.render import (
    direction,
    interval_text,
    table_text,
)
from sedcontract.guard.rows import (
    CONFIDENCE,
    MATCHING,
    RANKING,
    SCORE,
    SCORE_PARTS,
    RowKind,
    confidence_row,
    curve_coordinate,
    of_kind,
    score_row,
)
from sedcontract.numbers import is_whole
from sedcontract.resampling import Interval, percentile_intervals, resampling
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.traces import MODES
from sedcontract.traces.tsv import clip_id, read_fields

__all__ = ["Overview", "Table", "colour", "overview", "overview_csv", "overview_markdown",
           "read_rows", "report_files", "report_tables", "vectors_figure", "vectors_png"]


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


def _roles(rows: SourceRows, roles: Sequence[str]) -> np.ndarray:
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


def _guard(rows: SourceRows | Iterable[dict[str, Any]]) -> list[str]:
    """The guard coordinates in the order the rows first name them (a coordinate's role is
    the one its last row gives)."""
    rows = SourceRows.of(rows)
    coordinate = rows.codes["coordinate"][~_roles(rows, BESIDE)]
    role = rows.codes["role"][~_roles(rows, BESIDE)]
    if not len(coordinate):
        return []
    codes, first = np.unique(coordinate, return_index=True)
    last = len(coordinate) - 1 - np.unique(coordinate[::-1], return_index=True)[1]
    guard = rows.vocab["role"].index("guard") if "guard" in rows.vocab["role"] else -1
    return [rows.vocab["coordinate"][codes[k]] for k in np.argsort(first, kind="stable")
            if role[last[k]] == guard]


def _score_names(rows: SourceRows | Iterable[dict[str, Any]]) -> list[str]:
    """The standard scores the ``score:<name>/…`` rows count, sorted."""
    rows = SourceRows.of(rows)
    used = np.unique(rows.codes["coordinate"][_roles(rows, ("score",))])
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
    extra = _roles(rows, EXTRA_ROLES)
    vector = ~_roles(rows, BESIDE)
    is_typed = rows.codes["mode"] == (v["mode"].index("typed") if "typed" in v["mode"] else -1)
    facts: dict[tuple, tuple[int, int]] = {}  # activity, softness
    named = np.isin(rows.codes["coordinate"], [k for k, c in enumerate(v["coordinate"])
                                               if c in ("activity", "softness")])
    keys, sat, obl, _ = group_sums(rows, extra & named & is_typed, [
        rows.codes[c] for c in ("coordinate", "system", "policy", "class")])
    for i in range(len(sat)):
        facts[(v["coordinate"][keys[0][i]], v["system"][keys[1][i]], v["policy"][keys[2][i]],
               v["class"][keys[3][i]])] = (int(sat[i]), int(obl[i]))
    # a scope per row three times over: all ("*"), its class, its clip's group
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
    coordinate_codes, first = np.unique(rows.codes["coordinate"][vector], return_index=True)
    last = int(vector.sum()) - 1 - np.unique(rows.codes["coordinate"][vector][::-1],
                                              return_index=True)[1]
    order = {v["coordinate"][c]: int(f) for c, f in zip(coordinate_codes, first, strict=True)}
    role = {v["coordinate"][c]: v["role"][rows.codes["role"][vector][i]]
            for c, i in zip(coordinate_codes, last, strict=True)}
    pairs = np.unique(np.stack([rows.codes["system"][vector], rows.codes["policy"][vector]]),
                      axis=1) if vector.any() else np.zeros((2, 0), dtype=np.int64)
    systems = sorted({(v["system"][a], v["policy"][b]) for a, b in pairs.T})
    guard = _guard(rows)
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
    tables.append(mechanism)
    per_class = Table("per_class", "Guard vectors per class (typed): each coordinate and logic "
                      "of each class, the view in which classes that fail stand out",
                      ("class", "system", "policy", *guard, "logic"), [])
    for cls in classes:  # a class's systems side by side
        for system, policy in systems:
            values = [score(system, policy, "typed", f"class:{cls}", c) for c in guard]
            per_class.rows.append((cls, system, policy, *values, _mean(values)))
    tables.append(per_class)
    tables += _extra_tables(rows, extra, systems)
    return tables


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


@dataclass(frozen=True)
class Overview:
    """Per system (and policy): each mode's guard coordinates and logic, and the typed micro
    F1 of every standard score (``<score>_f1``), as :class:`Interval` s — the score on all the
    system's clips and its percentile bootstrap interval over them (NaN bounds, ``resamples``
    0, without ``--bootstrap``); with a ``baseline``, each other system's paired difference."""

    guard: tuple[str, ...]
    scores: tuple[str, ...]
    cells: dict[tuple[str, str], dict[str, dict[str, Interval]]]
    clips: dict[tuple[str, str], int]
    resamples: int
    seed: int
    level: float
    baseline: str | None = None
    comparison: dict[tuple[str, str], dict[str, dict[str, Interval]]] = field(
        default_factory=dict)
    ranking: tuple[str, ...] = ()  # PSDS scenarios, mauc, mpauc: typed cells by these names
    ranking_seeds: dict[tuple[str, str], int | None] = field(default_factory=dict)
    classes: tuple[str, ...] = ()  # the classes of the standard scores (macro F1)
    curves: tuple[str, ...] = ()  # the guard curves' budget areas (curve_<coordinate>) given

    @property
    def names(self) -> tuple[str, ...]:
        """The columns of a mode: the guard coordinates, then logic."""
        return (*self.guard, "logic")


def _clip_list(clips: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(c) for c in clips[:limit])
    return shown + (f", … ({len(clips)} in all)" if len(clips) > limit else "")


def _paired_members(systems: dict[tuple[str, str], tuple[int, ...]], baseline: str,
                    clip_names: Sequence[str]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """(system, its baseline) pairs within each policy; refused, naming the system and the
    clips, unless both are of the same clips."""
    known = sorted({s for s, _ in systems})
    if baseline not in known:
        raise SedContractError(f"--baseline {baseline}: no system of that name in the rows "
                               f"(systems: {', '.join(known)})")
    pairs = []
    for key in sorted(systems):
        system, policy = key
        if system == baseline:
            continue
        base = (baseline, policy)
        if base not in systems:
            raise SedContractError(f"--baseline {baseline}: the baseline has no rows of policy "
                                   f"{policy}, the policy of system {system}; a paired "
                                   "comparison is between systems measured alike")
        mine, theirs = set(systems[key]), set(systems[base])
        if mine != theirs:
            lacks = [clip_names[i] for i in systems[base] if i not in mine]
            extra = [clip_names[i] for i in systems[key] if i not in theirs]
            parts = ([f"lacks {len(lacks)} clip(s) of the baseline: {_clip_list(lacks)}"]
                     if lacks else []) + ([f"has {len(extra)} clip(s) the baseline lacks: "
                                           f"{_clip_list(extra)}"] if extra else [])
            raise SedContractError(f"--baseline {baseline}: system {system} is not of the "
                                   f"baseline's clips — it {' and '.join(parts)}; a paired "
                                   "bootstrap resamples the same clips for both systems")
        pairs.append((key, base))
    if not pairs:
        raise SedContractError(f"--baseline {baseline}: no other system in the rows to compare "
                               "with it")
    return pairs


@dataclass
class _ResampledCounts:
    """The rows' per-clip counts, system by system, in the layout the bootstrap resamples:
    per clip a row of ``[mode, (satisfied, obligations), coordinate]`` guard counts, then
    ``[score, (tp, references, outputs)]``; and apart, per score and class (tp, references,
    outputs) for macro F1. Clips are numbered in the order the rows name them."""

    guard: list[str]
    scores: list[str]
    classes: list[str]
    clips: list[str]
    members: list[tuple[str, str]]  # (system, policy) by member number
    of: dict[tuple[str, str], tuple[int, ...]]  # its clips, sorted
    sequence: dict[tuple[str, str], tuple[int, ...]]  # its clips as its rows name them
    modes: dict[tuple[str, str], set[str]]
    scored: dict[tuple[str, str], set[str]]
    entries: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # clip, member, column, n
    by_class: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

    @property
    def width(self) -> int:
        return 4 * len(self.guard) + 3 * len(self.scores)

    @classmethod
    def from_rows(cls, rows: SourceRows) -> _ResampledCounts:
        v, codes = rows.vocab, rows.codes
        guard, scores = _guard(rows), _score_names(rows)
        counted = ~_roles(rows, (RANKING,))
        # clips in the order the rows first name them; members (system, policy) likewise
        clip_codes, first = np.unique(codes["clip"][counted], return_index=True)
        clip_of = np.full(len(v["clip"]), -1, dtype=np.int64)
        clip_of[clip_codes[np.argsort(first, kind="stable")]] = np.arange(len(clip_codes))
        clip = clip_of[codes["clip"]]
        pair = codes["system"].astype(np.int64) * len(v["policy"]) + codes["policy"]
        pair_codes = np.unique(pair[counted])
        at = np.minimum(np.searchsorted(pair_codes, pair), max(len(pair_codes) - 1, 0))
        member = np.where(pair_codes[at] == pair, at, -1) if len(pair_codes) else \
            np.full(len(pair), -1)
        members = [(v["system"][c // len(v["policy"])], v["policy"][c % len(v["policy"])])
                   for c in pair_codes]
        # each (member, clip) once, with its first row: a member's clips sorted and in the
        # order its rows name them
        pair_clip = member.astype(np.int64) * max(len(clip_codes), 1) + clip
        found, at = np.unique(pair_clip[counted], return_index=True)
        by_row = np.argsort(at, kind="stable")
        owner, clip_no = found // max(len(clip_codes), 1), found % max(len(clip_codes), 1)
        of = {key: tuple(int(c) for c in clip_no[owner == m]) for m, key in enumerate(members)}
        sequence = {key: tuple(int(c) for c in clip_no[by_row][owner[by_row] == m])
                    for m, key in enumerate(members)}
        k = len(guard)
        # guard rows: the column of each row's satisfied count (its obligations: + k)
        mode_at = np.array([MODES.index(m) if m in MODES else -1 for m in v["mode"]])
        guard_at = np.array([guard.index(c) if c in guard else -1 for c in v["coordinate"]])
        is_guard = (codes["role"] == (v["role"].index("guard") if "guard" in v["role"] else
                                      -1)) & (guard_at[codes["coordinate"]] >= 0) & counted
        column = mode_at[codes["mode"]] * 2 * k + guard_at[codes["coordinate"]]
        modes: dict[tuple[str, str], set[str]] = {key: set() for key in members}
        for pair_mode in np.unique(member[is_guard] * len(v["mode"]) + codes["mode"][is_guard]):
            modes[members[pair_mode // len(v["mode"])]].add(v["mode"][pair_mode % len(v["mode"])])
        # score rows (typed): tp and references from recall rows, outputs from precision rows
        kinds = [of_kind(c, SCORE) for c in v["coordinate"]]
        score_at = np.array([scores.index(kd.name) if kd is not None and kd.name in scores
                             and kd.part in SCORE_PARTS else -1 for kd in kinds])
        recall = np.array([kd is not None and kd.part == "recall" for kd in kinds])
        typed = codes["mode"] == (v["mode"].index("typed") if "typed" in v["mode"] else -1)
        is_score = (codes["role"] == (v["role"].index("score") if "score" in v["role"] else
                                      -1)) & typed & (score_at[codes["coordinate"]] >= 0)
        scored: dict[tuple[str, str], set[str]] = {key: set() for key in members}
        n = max(len(scores), 1)
        for pair_score in np.unique(member[is_score] * n
                                    + score_at[codes["coordinate"]][is_score]):
            scored[members[pair_score // n]].add(scores[pair_score % n])
        g, sc = np.flatnonzero(is_guard), np.flatnonzero(is_score)
        is_recall = recall[codes["coordinate"][sc]]
        rec, pre = sc[is_recall], sc[~is_recall]
        base = 4 * k + 3 * score_at[codes["coordinate"]]
        entries = tuple(np.concatenate(parts) for parts in zip(
            (clip[g], member[g], column[g], rows.satisfied[g]),
            (clip[g], member[g], column[g] + k, rows.obligations[g]),
            (clip[rec], member[rec], base[rec], rows.satisfied[rec]),
            (clip[rec], member[rec], base[rec] + 1, rows.obligations[rec]),
            (clip[pre], member[pre], base[pre] + 2, rows.obligations[pre]), strict=True))
        classes = sorted(v["class"][c] for c in np.unique(codes["class"][is_score]))
        class_at = np.array([classes.index(c) if c in classes else -1 for c in v["class"]])
        per = 3 * (score_at[codes["coordinate"]] * len(classes) + class_at[codes["class"]])
        by_class = tuple(np.concatenate(parts) for parts in zip(
            (clip[rec], member[rec], per[rec], rows.satisfied[rec]),
            (clip[rec], member[rec], per[rec] + 1, rows.obligations[rec]),
            (clip[pre], member[pre], per[pre] + 2, rows.obligations[pre]), strict=True))
        return cls(guard, scores, classes, [v["clip"][c] for c in
                                            clip_codes[np.argsort(first, kind="stable")]],
                   members, of, sequence, modes, scored, entries, by_class)

    def array(self, clips: Sequence[int], members: Sequence[tuple[str, str]],
              per_class: bool = False) -> np.ndarray:
        """``[clips, members, width]``: the members' counts on these clips (in this order);
        ``per_class``: ``[clips, members, scores, classes, 3]``, the counts of macro F1."""
        position = np.full(len(self.clips), -1)
        position[list(clips)] = np.arange(len(clips))
        slot = np.full(len(self.members), -1)
        slot[[self.members.index(m) for m in members]] = np.arange(len(members))
        clip, member, column, count = self.by_class if per_class else self.entries
        width = 3 * len(self.scores) * len(self.classes) if per_class else self.width
        out = np.zeros((len(clips), len(members), width), dtype=np.int64)
        keep = (slot[member] >= 0) if len(member) else np.zeros(0, dtype=bool)
        np.add.at(out, (position[clip[keep]], slot[member[keep]], column[keep]), count[keep])
        if per_class:
            return out.reshape(len(clips), len(members), len(self.scores), len(self.classes), 3)
        return out


def overview(rows: SourceRows | Sequence[dict[str, Any]], *, resamples: int = 1000,
             seed: int = 0, level: float = 0.95, baseline: str | None = None) -> Overview:
    """Every system's guard coordinates, logic (both modes), standard-score F1 (typed, micro
    and macro) and ranking metrics on all its clips with percentile bootstrap intervals over
    them (``resamples`` 0: none), and with ``baseline`` every other system minus it, paired.

    The machinery is :mod:`sedcontract.guard.bootstrap`'s: a system's clips are drawn in the
    order its rows name them (an audit's rows name them in the audit's order), so its
    intervals are ``bootstrap_intervals`` of its (micro) audit whatever other rows are given,
    and a difference is ``paired_bootstrap`` of the two audits, for the same seed (both drawn
    in the baseline's order). Systems whose rows name the same clips alike get the same draws;
    logic per resample is the mean of its non-vacuous guard coordinates. The ranking metrics'
    intervals come from the audits' own draws (ranking rows)."""
    if not is_whole(resamples) or resamples < 0:
        raise SedContractError(f"--bootstrap must be a number of resamples >= 0 (0: no "
                               f"intervals), got {resamples!r}")
    if not resamples and baseline is not None:
        raise SedContractError("--baseline compares systems with paired bootstrap intervals: "
                               "give --bootstrap N (N >= 1)")
    rows = SourceRows.of(rows)
    counts = _ResampledCounts.from_rows(rows)
    if resamples:
        resamples, seed = resampling(resamples, seed, level, len(counts.clips))
    order = counts.of
    pairs = [] if baseline is None else _paired_members(order, baseline, counts.clips)
    # systems whose rows name the same clips in the same order are resampled together: each
    # system's clips in its own order, so its intervals are its audit's whatever else is given
    groups: dict[tuple[int, ...], list[tuple[str, str]]] = defaultdict(list)
    for key in sorted(order):
        groups[counts.sequence[key]].append(key)
    k, names = len(counts.guard), (*counts.guard, "logic")
    cells: dict[tuple[str, str], dict[str, dict[str, Interval]]] = {}
    drawn: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None]] = {}
    for clips, members in groups.items():
        array = counts.array(clips, members)
        vector = array[..., :4 * k].reshape(len(clips), len(members), 2, 2, k, 1)
        parts = array[..., 4 * k:].reshape(len(clips), len(members), len(counts.scores), 3)
        points, totals = count_scores(vector.sum(axis=0)), parts.sum(axis=0)
        # [resamples, members, modes, K + 1] and [resamples, members, scores]: the same draws
        values = resampled_scores(vector, resamples, seed) if resamples else None
        f1 = resampled_f1(parts, resamples, seed) if resamples else None
        per_class = counts.array(clips, members, per_class=True)
        macro = _macro_points(per_class.sum(axis=0))  # [members, scores]
        macro_draws = resampled_macro_f1(per_class, resamples, seed) if resamples else None
        for s, key in enumerate(members):
            drawn[key] = (points[s], None if values is None else values[:, s])
            cells[key] = {mode: _cells(names, points[s, m], drawn[key][1], m, level, resamples)
                          for m, mode in enumerate(MODES) if mode in counts.modes[key]}
            own = [j for j, name in enumerate(counts.scores) if name in counts.scored[key]]
            if own:
                cells[key].setdefault("typed", {}).update(_cells(
                    [f"{counts.scores[j]}_f1" for j in own],
                    [Counts(*(int(n) for n in totals[s, j])).f1 for j in own],
                    None if f1 is None else f1[:, s, own], None, level, resamples))
                cells[key]["typed"].update(_cells(
                    [f"{counts.scores[j]}_macro_f1" for j in own], list(macro[s, own]),
                    None if macro_draws is None else macro_draws[:, s, own], None, level,
                    resamples))
    ranked = rankings(rows)
    metrics = metric_order({m for r in ranked.values() for m in r.values})
    for key, found in ranked.items():
        if key in cells or found.values:
            cells.setdefault(key, {}).setdefault("typed", {}).update(
                {m: found.interval(m, level) if resamples else
                 Interval(found.values[m], math.nan, math.nan, float(level), 0, 0)
                 for m in metrics if m in found.values})
    comparison: dict[tuple[str, str], dict[str, dict[str, Interval]]] = {}
    for key, base in pairs:
        (mine, my_values), (theirs, their_values) = drawn[key], drawn[base]
        if counts.sequence[key] != counts.sequence[base] and resamples:
            # the same clips named in another order: both drawn in the baseline's order
            clips = counts.sequence[base]
            both = counts.array(clips, [key, base])[..., :4 * k].reshape(
                len(clips), 2, 2, 2, k, 1)
            values = resampled_scores(both, resamples, seed)
            my_values, their_values = values[:, 0], values[:, 1]
        comparison[key] = {
            mode: percentile_intervals(names, list(mine[m] - theirs[m]),
                                       my_values[:, m] - their_values[:, m], level, resamples)
            for m, mode in enumerate(MODES)
            if mode in counts.modes[key] and mode in counts.modes[base]}
        same = counts.sequence[key] == counts.sequence[base]
        for metric in metrics:
            if key in ranked and base in ranked and (iv := paired_ranking(
                    ranked[key], ranked[base], metric, level, same)) is not None:
                comparison[key].setdefault("typed", {})[metric] = iv
    return Overview(tuple(counts.guard), tuple(counts.scores), cells,
                    {key: len(found) for key, found in order.items()}, resamples, seed,
                    float(level), baseline, comparison,
                    tuple(m for m in metrics if curve_coordinate(m) is None),
                    {key: r.seed for key, r in ranked.items() if r.draws},
                    tuple(counts.classes),
                    tuple(m for m in metrics if curve_coordinate(m) is not None))


def _macro_points(totals: np.ndarray) -> np.ndarray:
    """``[members, scores, classes, 3]`` totals → each member's macro F1 per score, as
    :meth:`~sedcontract.scores.counts.MetricResult.macro` computes it (bit for bit)."""
    out = np.full(totals.shape[:2], math.nan)
    for m, s in np.ndindex(*totals.shape[:2]):
        out[m, s] = MetricResult.mean_of([Counts(*(int(n) for n in t)).f1
                                          for t in totals[m, s]])[0]
    return out


def _cells(names: Sequence[str], points: Sequence[float], values: np.ndarray | None,
           mode: int | None, level: float, resamples: int) -> dict[str, Interval]:
    """Intervals of ``values`` ``[resamples, (modes,) names]`` (``mode`` picks one) around
    ``points``; without resamples, the points alone (NaN bounds)."""
    if values is None:
        return {n: Interval(float(p), math.nan, math.nan, float(level), 0, 0)
                for n, p in zip(names, points, strict=True)}
    return percentile_intervals(names, list(points),
                                values if mode is None else values[:, mode], level, resamples)


def _label(key: tuple[str, str], policies: bool) -> str:
    return f"{key[0]} ({key[1]})" if policies else key[0]


def _heading(ov: Overview) -> str:
    if not ov.resamples:
        return "on all clips (no intervals: --bootstrap 0)"
    return (f"with {ov.level:.0%} percentile bootstrap intervals over clips ({ov.resamples} "
            f"resamples, seed {ov.seed})")


def overview_markdown(ov: Overview) -> str:
    """The overview as Markdown: a table per mode (systems × coordinates and logic), the
    standard scores' F1, and with a baseline the paired differences."""
    policies = len({p for _, p in ov.cells}) > 1
    out = [f"**Overview: guard coordinates and logic {_heading(ov)}**", ""]

    def table(title: str, columns: Sequence[str], cells: Mapping[tuple[str, str], Any],
              mode: str, signed: bool = False) -> None:
        keys = [key for key in sorted(cells) if mode in cells[key]]
        if not keys:
            return
        out.extend([f"{title}", "", "| system | " + " | ".join(map(table_text, columns))
                    + " |", "|---" * (len(columns) + 1) + "|"])
        out.extend("| " + table_text(_label(key, policies)) + " | " + " | ".join(
            interval_text(cells[key][mode].get(c), signed) for c in columns) + " |" for key in keys)
        out.append("")

    if ov.ranking:
        table(f"Ranking metrics ({_ranking_note(ov)}):", ov.ranking, ov.cells, "typed")
    if ov.curves:
        table(f"{CURVES_TITLE} ({_ranking_note(ov)}):", ov.curves, ov.cells, "typed")
    for mode in MODES:
        table(f"{mode} traces:", ov.names, ov.cells, mode)
    if ov.scores:
        table("Standard scores (typed, micro F1):", [f"{n}_f1" for n in ov.scores], ov.cells,
              "typed")
        table("Standard scores (typed, macro F1: the mean over classes with references):",
              [f"{n}_macro_f1" for n in ov.scores], ov.cells, "typed")
    if ov.baseline is not None:
        out.append(f"**Paired differences: each system minus {table_text(ov.baseline)}** (the "
                   "same resampled clips for both; ↑/↓: the interval excludes 0)")
        out.append("")
        if ov.ranking:
            table("Ranking metrics:", ov.ranking, ov.comparison, "typed", signed=True)
        if ov.curves:
            table(f"{CURVES_TITLE}:", ov.curves, ov.comparison, "typed", signed=True)
        for mode in MODES:
            table(f"{mode} traces:", ov.names, ov.comparison, mode, signed=True)
    return "\n".join(out).rstrip("\n") + "\n"


def _curve_rate(ov: Overview, settings: Mapping[tuple[str, str], Mapping[str, str]]
                ) -> float | None:
    """The largest budget of the curves' areas, when every system's audit used one."""
    rates = {_number(settings.get(key, {}).get(f"setting:{m}.max_efpr"))
             for key in ov.cells for m in ov.curves}
    rates.discard(None)
    return next(iter(rates)) if len(rates) == 1 else None


def _ranking_note(ov: Overview) -> str:
    """Where the ranking metrics' intervals come from: the audits' draws (``audit --format
    csv --bootstrap N``), which resample the same clips as the report when the seeds agree."""
    seeds = sorted({s for s in ov.ranking_seeds.values() if s is not None})
    if not ov.resamples:
        return "no intervals: --bootstrap 0"
    if not seeds:
        return "no intervals: the audits wrote no draws (audit --format csv --bootstrap N)"
    agree = "" if seeds == [ov.seed] else (
        f"; the report's own draws use seed {ov.seed}, so these are other resamples")
    return (f"intervals from the audits' bootstrap draws, seed {', '.join(map(str, seeds))}"
            f"{agree}")


INTERVAL_COLUMNS = ("mode", "name", "score", "lo", "hi", "level", "defined", "resamples")


def _interval_fields(iv: Interval) -> list[str]:
    def number(x: float) -> str:
        return "" if math.isnan(x) else repr(float(x))
    return [number(iv.point), number(iv.lo), number(iv.hi),
            repr(iv.level) if iv.resamples else "", str(iv.defined), str(iv.resamples)]


def overview_csv(ov: Overview) -> str:
    """One row per system, policy, mode and name (coordinate, logic, ``<score>_f1``): the
    score, the interval's bounds (blank when undefined or without resamples), its level, and
    how many of the resamples defined it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("system", "policy", *INTERVAL_COLUMNS))
    for key in sorted(ov.cells):
        for mode, by_name in ov.cells[key].items():
            for name, iv in by_name.items():
                writer.writerow([*key, mode, name, *_interval_fields(iv)])
    return out.getvalue()


def comparison_csv(ov: Overview) -> str:
    """One row per system, mode and name: the system minus the baseline (same policy), with
    its paired interval."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("system", "baseline", "policy", *INTERVAL_COLUMNS))
    for key in sorted(ov.comparison):
        for mode, by_name in ov.comparison[key].items():
            for name, iv in by_name.items():
                writer.writerow([key[0], ov.baseline, key[1], mode, name, *_interval_fields(iv)])
    return out.getvalue()


# the colour scale of the overview: 0 light orange, 0.5 near white, 1 light blue (ColorBrewer
# RdBu's light end, read apart by most colour-blind readers); black text stays readable on all
SCALE = ((0.0, (0xF4, 0xA5, 0x82)), (0.5, (0xF7, 0xF7, 0xF7)), (1.0, (0x92, 0xC5, 0xDE)))
VACUOUS = "#e4e4e4"
SPREAD_FLOOR = 0.05  # a column whose systems lie closer than this stays pale


def colour(value: float) -> str:
    """The overview's background for a position in [0, 1] (clipped), linear between the stops
    of :data:`SCALE`; grey for a vacuous (NaN) score."""
    if math.isnan(value):
        return VACUOUS
    value = min(1.0, max(0.0, value))
    (x0, c0), (x1, c1) = next(pair for pair in pairwise(SCALE) if value <= pair[1][0])
    t = (value - x0) / (x1 - x0)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(c0, c1, strict=True))


def relative(value: float, low: float, high: float) -> float:
    """Where ``value`` lies in its column of ``low`` … ``high``: 0 the lowest system, 1 the
    highest, 0.5 the middle; a column spanning less than :data:`SPREAD_FLOOR` stays near 0.5,
    so a colour marks a difference between systems, never the level all of them share."""
    if math.isnan(value):
        return math.nan
    return 0.5 + (value - (low + high) / 2) / max(high - low, SPREAD_FLOOR)


Spreads = dict[tuple[str, str], tuple[float, float]]  # (mode, name) → column's low, high


def _spreads(cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]]) -> Spreads:
    """Each column's lowest and highest score over the systems."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for by_mode in cells.values():
        for mode, by_name in by_mode.items():
            for name, iv in by_name.items():
                if not math.isnan(iv.point):
                    values[(mode, name)].append(iv.point)
    return {key: (min(v), max(v)) for key, v in values.items()}


def _html_cell(iv: Interval | None, where: str, signed: bool = False,
               first: bool = False, spread: tuple[float, float] | None = None,
               missing: str = "vacuous") -> str:
    """One overview cell: the score, the interval beneath it, the background by where the
    score lies in its column's ``spread`` (by sign for a difference whose interval excludes
    0) and the exact numbers as a tooltip; ``missing``: what an absent score is called."""
    start = " start" if first else ""
    if iv is None or math.isnan(iv.point):
        why = "vacuous (no obligations)" if missing == "vacuous" else missing
        return (f'<td class="vacuous{start}" style="background:{VACUOUS}" '
                f'title="{html.escape(where)}: {html.escape(why)}">{html.escape(missing)}</td>')
    f = "+.3f" if signed else ".3f"
    title = f"{where}: {iv.point:.4f}"
    below = ""
    if not math.isnan(iv.lo):
        title += (f"; {iv.level:.0%} interval {iv.lo:.4f} to {iv.hi:.4f} ({iv.defined} of "
                  f"{iv.resamples} resamples defined)")
        shown = f"[{iv.lo:{f}}, {iv.hi:{f}}]" if signed else f"{iv.lo:{f}}–{iv.hi:{f}}"
        below = f'<span class="iv">{shown}{direction(iv) if signed else ""}</span>'
    if signed:
        background = ("#b8e0c2" if iv.lo > 0 else "#f6c6a8" if iv.hi < 0 else "#ffffff") \
            if not math.isnan(iv.lo) else "#ffffff"
    else:
        background = colour(relative(iv.point, *(spread or (iv.point, iv.point))))
    return (f'<td class="cell{start}" style="background:{background}" '
            f'title="{html.escape(title)}">{iv.point:{f}}{below}</td>')


START = ' class="start"'  # the first column of a mode's group


def _breakable(name: str, at: int = 9) -> str:
    """A column name as HTML, a long one with a soft hyphen in its middle (a narrow column)."""
    if len(name) <= at:
        return html.escape(name)
    half = (len(name) + 1) // 2
    return html.escape(name[:half]) + "&shy;" + html.escape(name[half:])


def _grouped_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                   caption: str, groups: Sequence[tuple[str, str, Sequence[tuple[str, str]]]],
                   signed: bool = False, missing: str = "vacuous") -> str:
    """Systems × column groups, one HTML table (in a box that scrolls should it be wider than
    the page): ``groups`` are (heading, mode, [(cell name, column label)])."""
    policies = len({p for _, p in ov.cells}) > 1
    groups = [g for g in groups if any(g[1] in by_mode and any(
        n in by_mode[g[1]] for n, _ in g[2]) for by_mode in cells.values())]
    keys = [key for key in sorted(cells) if any(
        mode in cells[key] and any(n in cells[key][mode] for n, _ in names)
        for _, mode, names in groups)]
    if not keys:
        return ""
    spreads = _spreads({key: cells[key] for key in keys})
    top = "".join(f'<th scope="colgroup" colspan="{len(names)}" class="start">'
                  f"{html.escape(heading)}</th>" for heading, _, names in groups)
    labels = "".join(f'<th scope="col"{START if i == 0 else ""}>{_breakable(label)}</th>'
                     for _, _, names in groups for i, (_, label) in enumerate(names))
    body = []
    for key in keys:
        label = html.escape(key[0]) + (f'<span class="policy">{html.escape(key[1])}</span>'
                                       if policies else "")
        row = "".join(
            _html_cell(cells[key].get(mode, {}).get(name),
                       f"{_label(key, policies)}, {heading.removesuffix(' traces')} {shown}",
                       signed, i == 0, spreads.get((mode, name)), missing)
            for heading, mode, names in groups for i, (name, shown) in enumerate(names))
        body.append(f'<tr><th scope="row">{label}</th>{row}</tr>')
    return (f'<div class="wide"><table class="overview"><caption>{html.escape(caption)}'
            f'</caption><thead><tr><th scope="col" rowspan="2">system</th>{top}</tr><tr>'
            f"{labels}</tr></thead><tbody>{''.join(body)}</tbody></table></div>\n")


def _overview_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                    caption: str, signed: bool = False, modes: Sequence[str] = MODES) -> str:
    """Systems × (typed | union) × (guard coordinates, logic)."""
    return _grouped_table(ov, cells, caption, [
        (f"{mode} traces", mode, [(n, n) for n in ov.names]) for mode in modes], signed)


RANKING_LABELS = {"psds1": "PSDS1", "psds2": "PSDS2", "mauc": "mAUC", "mpauc": "mpAUC"}


def _ranking_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                   caption: str, signed: bool = False) -> str:
    """The ranking metrics (PSDS scenarios, mAUC, mpAUC), one HTML table."""
    return _grouped_table(ov, cells, caption, [("what DCASE ranks on", "typed", [
        (m, RANKING_LABELS.get(m, m)) for m in ov.ranking])], signed, missing="n/a")


CURVES_TITLE = "Guard curves: each coordinate's mean score over false-activity budgets"


def _curves_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                  caption: str, signed: bool = False) -> str:
    """The guard curves' budget areas of the union trace (``curve_<coordinate>``), one HTML
    table."""
    return _grouped_table(ov, cells, caption, [("area over budgets, union trace", "typed", [
        (m, curve_coordinate(m) or m) for m in ov.curves])], signed, missing="n/a")


def curves_budget_png(ranked: Mapping[tuple[str, str], Ranking], metrics: Sequence[str],
                      colours: Mapping[str, Any], policies: bool, top: float | None) -> bytes:
    """Each coordinate's score of the union trace against the false-activity budget (false
    events per hour, up to ``top``), a panel per coordinate (six to a row, 1200 px wide), a
    staircase per system in its report colour, its area in the panel's legend."""
    panels = [(curve_coordinate(m) or m,
               {key: (*ranked[key].curves[m]["*"], ranked[key].values.get(m, math.nan))
                for key in sorted(ranked) if "*" in ranked[key].curves.get(m, {})})
              for m in metrics]
    return _staircases_png([p for p in panels if p[1]], colours, policies, top, 6,
                           ("false events per hour", "score", "area"))


def _scores_table(ov: Overview) -> str:
    """Each standard score's typed micro and macro F1, with intervals, one HTML table."""
    return _grouped_table(ov, ov.cells, "Standard scores on the same events: typed F1, micro "
                          "(pooled counts) and macro (the mean over the classes with "
                          "references)", [(name, "typed", [(f"{name}_f1", "micro"),
                                                           (f"{name}_macro_f1", "macro")])
                                          for name in ov.scores])


def _legend(ov: Overview) -> str:
    """What a cell shows, the colour scale as labelled swatches, and what the interval means."""
    swatches = "".join(f'<span class="swatch" style="background:{colour(v)}">{text}</span>'
                       for v, text in ((0.0, "lowest"), (0.5, "middle"), (1.0, "highest")))
    interval = (f"Beneath each score, its {ov.level:.0%} percentile bootstrap interval over "
                f"clips, low–high ({ov.resamples} resamples, seed {ov.seed}): the uncertainty "
                "from which clips happened to be in the test set, not from training seeds or "
                "annotators." if ov.resamples else "No intervals (--bootstrap 0).")
    return (f'<p class="legend">Each cell: the score on all clips (pooled counts). {interval} '
            f"Background: where the score lies among the systems in its column (the column's "
            f"spread, not the score itself): {swatches}; a column whose systems lie within "
            f"{SPREAD_FLOOR:g} of each other stays pale, and with one system every cell is. "
            f'<span class="swatch" style="background:{VACUOUS}">vacuous</span>: no obligations, '
            "never shown as 1. Every score is higher-is-better; the exact numbers are in each "
            "cell's tooltip and in overview.csv.</p>\n")


CSS = ("body{font-family:sans-serif;font-size:15px;line-height:1.35;color:#111;"
       "max-width:1240px;margin:1em auto;padding:0 12px}"
       "img{max-width:100%;height:auto}figure{margin:1em 0}"
       "figcaption{font-size:13px;color:#333}"
       "table{border-collapse:collapse;margin-bottom:1em}"
       "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
       "caption{text-align:left;font-weight:bold;padding:4px 0}"
       ".wide{overflow-x:auto;max-width:100%}"
       "table.overview{font-size:13px;font-variant-numeric:tabular-nums}"
       "table.overview td{padding:2px;text-align:center;white-space:nowrap}"
       "table.overview th{background:#f2f2f2;text-align:center;font-size:12px}"
       "table.overview th[scope=row]{text-align:left;min-width:6em;max-width:12em;"
       "overflow-wrap:anywhere}"
       "table.overview .iv{display:block;font-size:10.5px;color:#222}"
       "table.overview .policy{display:block;font-weight:normal;font-size:11px}"
       ".start{border-left:2px solid #555}td.vacuous{font-style:italic;color:#333}"
       ".swatch{display:inline-block;padding:0 6px;border:1px solid #999;margin-right:2px;"
       "font-size:12px}"
       "details{margin:.4em 0}summary{cursor:pointer}summary h3{display:inline;"
       "font-size:16px}.settings{color:#333}ul.meanings{margin-top:.2em}")


def vectors_figure(rows_table: Table, ov: Overview | None = None,
                   colours: Mapping[str, Any] | None = None) -> Any:
    """Grouped bars drawn for a page about 1200 px wide: a panel per mode side by side, a
    group per guard coordinate, a bar per system, the interval of ``ov`` (when it has
    resamples) as an error bar, a vacuous score as an × on the axis (no bar), and one legend
    below the panels, never over a bar. The figure is returned open."""
    plt = pyplot()

    data: dict[str, dict[tuple[str, str], dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict))
    coordinates: list[str] = []
    for system, policy, mode, coordinate, role, _, _, score in rows_table.rows:
        if role != "guard":
            continue
        data[mode][(system, policy)][coordinate] = score
        if coordinate not in coordinates:
            coordinates.append(coordinate)
    modes = [m for m in MODES if m in data]
    systems = sorted({key for by_system in data.values() for key in by_system})
    policies = len({p for _, p in systems}) > 1
    ncol = min(len(systems), 6)
    legend_rows = math.ceil(len(systems) / max(ncol, 1))
    fig, axes = plt.subplots(1, len(modes), figsize=(12, 3.8 + 0.3 * legend_rows),
                             squeeze=False, sharey=True, layout="constrained")
    colours = colours or system_colours(_label(key, policies) for key in systems)
    width = 0.8 / max(len(systems), 1)
    for ax, mode in zip(axes[0], modes, strict=True):
        for k, key in enumerate(systems):
            xs = [i - 0.4 + (k + 0.5) * width for i in range(len(coordinates))]
            ys = [data[mode].get(key, {}).get(c, math.nan) for c in coordinates]
            colour_k = colours[_label(key, policies)]
            ax.bar(xs, [0.0 if math.isnan(y) else y for y in ys], width,
                   color=colour_k, label=_label(key, policies))
            gone = [x for x, y in zip(xs, ys, strict=True) if math.isnan(y)]
            if gone:
                ax.plot(gone, [0.02] * len(gone), "x", color=colour_k, markersize=4)
            cells = ov.cells.get(key, {}).get(mode, {}) if ov is not None else {}
            bars = [(x, cells[c]) for x, c in zip(xs, coordinates, strict=True)
                    if c in cells and not math.isnan(cells[c].lo)]
            if bars:
                ax.errorbar([x for x, _ in bars], [iv.point for _, iv in bars],
                            yerr=[[iv.point - iv.lo for _, iv in bars],
                                  [iv.hi - iv.point for _, iv in bars]],
                            fmt="none", ecolor="#222222", elinewidth=0.8)
        ax.set_xticks(range(len(coordinates)))
        ax.set_xticklabels(coordinates, rotation=20, ha="right", fontsize=9)
        ax.set_xlim(-0.5, len(coordinates) - 0.5)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{mode} traces", fontsize=11)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("score (satisfied / obligations)", fontsize=9)
    handles, labels = axes[0][0].get_legend_handles_labels()
    # matplotlib fills the legend column by column: this order reads row by row
    order = [r * ncol + c for c in range(ncol) for r in range(legend_rows)
             if r * ncol + c < len(handles)]
    fig.legend([handles[i] for i in order], [labels[i] for i in order],
               loc="outside lower center", ncol=ncol, frameon=False, fontsize=9)
    return fig


def vectors_png(rows_table: Table, ov: Overview | None = None,
                colours: Mapping[str, Any] | None = None) -> bytes:
    """:func:`vectors_figure` as PNG bytes, 1200 px wide."""
    return png(vectors_figure(rows_table, ov, colours), dpi=100)


def psd_roc_classes_png(ranked: Mapping[tuple[str, str], Ranking], scenario: str,
                        colours: Mapping[str, Any], policies: bool, top: float | None) -> bytes:
    """Each class's PSD-ROC of ``scenario``, a panel per class (five to a row, 1200 px wide),
    a staircase per system in its report colour up to ``top`` (``max_efpr``), the class's
    PSDS in the legend of its panel; one legend of systems below."""
    classes = sorted({c for r in ranked.values() for c in r.curves.get(scenario, {})
                      if c != "*"})
    panels = [(cls, {key: (*ranked[key].curves[scenario][cls],
                           ranked[key].per_class.get(scenario, {}).get(cls, math.nan))
                     for key in sorted(ranked) if cls in ranked[key].curves.get(scenario, {})})
              for cls in classes]
    return _staircases_png(panels, colours, policies, top, 5, ("eFPR per hour", "TPR", "PSDS"))


def _staircases_png(panels: Sequence[tuple[str, Mapping[tuple[str, str], tuple]]],
                    colours: Mapping[str, Any], policies: bool, top: float | None,
                    per_row: int, labels: tuple[str, str, str]) -> bytes:
    """Panels (title, system → (x, y, value)) of staircases up to ``top``, ``per_row`` to a row
    (1200 px wide), a line per system in its report colour with its value in the panel's
    legend; ``labels``: the x and y axes' and the legend's titles; one legend of systems
    below."""
    plt = pyplot()
    cols = min(per_row, max(len(panels), 1))
    rows = -(-len(panels) // cols)
    height = 2.3 * rows + 0.9
    fig, axes = plt.subplots(rows, cols, figsize=(12, height), squeeze=False, sharex=True,
                             sharey=True)
    fig.subplots_adjust(left=0.06, right=0.99, top=1 - 0.3 / height, bottom=0.95 / height,
                        wspace=0.08, hspace=0.3)  # fixed margins: no layout pass to pay for
    for ax, (title, lines) in zip(axes.flat, panels, strict=False):
        for key, (x, y, value) in lines.items():
            end = top if top is not None else (float(x.max()) if len(x) else 1.0)
            ax.step(np.append(x, end), np.append(y, y[-1] if len(y) else 0.0), where="post",
                    color=colours[_label(key, policies)], lw=1.4, label=f"{value:.3f}")
        ax.set_title(title, fontsize=9, pad=3)
        ax.set_ylim(0, 1.02)
        ax.set_yticks((0, 0.5, 1))
        if top is not None:
            ax.set_xlim(0, top)
            ax.set_xticks(np.linspace(0, top, 5))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right", title=labels[2], title_fontsize=7,
                  frameon=False)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(labels[0], fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel(labels[1], fontsize=8)
    shown = sorted({key for _, lines in panels for key in lines})
    from matplotlib.lines import Line2D

    fig.legend([Line2D([], [], color=colours[_label(k, policies)]) for k in shown],
               [_label(k, policies) for k in shown], loc="lower center",
               ncol=min(6, len(shown)), frameon=False, fontsize=9)
    return png(fig, dpi=100)


# The standard contract's coordinates in words (typed traces): what an obligation is, and what
# satisfying it takes; {eps} is the policy's tolerance.
MEANINGS = {
    "onset": ("reference onsets", "had a predicted onset of their class within {eps} on either "
              "side"),
    "offset": ("reference offsets", "had a predicted offset of their class within {eps} on "
               "either side"),
    "missed": ("reference events", "overlap at least one predicted event of their class (the "
               "others were missed)"),
    "false": ("predicted events", "overlap some reference event of their class (the others "
              "are false alarms)"),
    "silence": ("frames farther than {eps} from any reference activity of the class",
                "stay silent in the prediction"),
    "duration": ("matched (reference, prediction) pairs", "keep the reference's length within "
                 "the larger of {eps} and 20 % of it"),
    "fragmentation": ("detected reference events", "are covered by one predicted event, not "
                      "split into several"),
}


def meanings(vectors: Table, ov: Overview, settings: Mapping[tuple[str, str], Mapping[str, str]]
             ) -> list[str]:
    """One sentence per guard coordinate and logic saying what its typed score means, on the
    counts of one system (the baseline, else the first): the standard contract's clauses in
    words, any other clause as satisfied obligations."""
    keys = sorted(ov.cells)
    key = next((k for k in keys if k[0] == ov.baseline), keys[0] if keys else None)
    if key is None:
        return []
    mine = settings.get(key, {})
    standard = mine.get("setting:contract") == "standard"
    eps = mine.get("setting:eps", "eps")
    counts = {row[3]: (row[5], row[6], row[7]) for row in vectors.rows
              if (row[0], row[1], row[2]) == (*key, "typed")}
    out = []
    for coordinate in ov.guard:
        if coordinate not in counts:
            continue
        sat, obl, value = counts[coordinate]
        if not obl:
            out.append(f"{coordinate}: vacuous — {key[0]} has no obligation of it, so it says "
                       "nothing (never 1).")
            continue
        if standard and coordinate in MEANINGS:
            noun, verb = MEANINGS[coordinate]
            out.append(f"{coordinate} {value:.3f}: {sat:,} of the {obl:,} "
                       f"{noun.format(eps=eps)} ({value:.1%}) {verb.format(eps=eps)}.")
        else:
            out.append(f"{coordinate} {value:.3f}: {sat:,} of its {obl:,} obligations "
                       f"({value:.1%}) were satisfied.")
    logic = ov.cells.get(key, {}).get("typed", {}).get("logic")
    if logic is not None and not math.isnan(logic.point):
        out.append(f"logic {logic.point:.3f}: the mean of the non-vacuous coordinates above, a "
                   "summary to rank by, not a share of anything.")
    return [f"{key[0]}, typed traces — " + out[0], *out[1:]] if out else []


def _img(data: bytes, alt: str) -> str:
    return (f'<img alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">')


def _figure(data: bytes, alt: str, caption: str) -> str:
    return (f"<figure>{_img(data, alt)}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>\n")


def _number(text: str | None) -> float | None:
    """A setting's text as a finite number, else None."""
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _title(ov: Overview, classes: int, settings: Mapping[tuple[str, str], Mapping[str, str]]
           ) -> tuple[str, str]:
    """The page's heading (how many systems, on how many clips and classes) and the line of
    settings beneath it: those all systems share, then each system's own."""
    n = len(ov.cells)
    clips = sorted(set(ov.clips.values()))
    heading = (f"{n} system{'s' if n != 1 else ''} on {' or '.join(map(str, clips))} clips × "
               f"{classes} class{'es' if classes != 1 else ''}")
    items = {key: settings_items(settings.get(key, {})) for key in sorted(ov.cells)}
    given = [found for found in items.values() if found]
    if not given:
        return heading, "Settings: not in the rows (rows written before sedcontract recorded them)."
    shared = {k: v for k, v in given[0].items() if all(g.get(k) == v for g in given)}
    own = {key[0]: "; ".join(f"{k} {v}" for k, v in found.items() if k not in shared)
           for key, found in items.items()}
    text = "Settings: " + "; ".join(f"{k} {v}" for k, v in shared.items())
    if any(own.values()):
        text += ". Per system — " + "; ".join(f"{name}: {v}" for name, v in own.items() if v)
    return heading, text + "."


def report_files(rows: SourceRows | Sequence[dict[str, Any]],
                 groups: Mapping[str, str] | None = None, *, sweep: Any = None,
                 timelines: Sequence[tuple[str, bytes]] = (), resamples: int = 1000,
                 seed: int = 0, level: float = 0.95, baseline: str | None = None
                 ) -> dict[str, str | bytes]:
    """Every file of the report folder: ``overview.md|csv`` (with a ``baseline``, also
    ``comparison.csv``), ``<table>.md|csv``, ``vectors.png``, ``psd_roc_<scenario>.png`` when
    the rows hold PSD-ROC staircases, and ``report.html``: a heading naming the data and
    settings, the overview first (the ranking metrics, the guard vectors typed and union, the
    standard scores' micro and macro F1, each with its bootstrap interval over clips —
    ``resamples`` of them, ``seed``, ``level`` — coloured by each column's spread), what each
    coordinate means in words, the per-class vectors unfolded, then the figures (one colour per
    system in all), then every other table folded. With a ``sweep``
    (:class:`~sedcontract.analysis.sweep.SweepResult`) its tables and figure too, and the
    ``timelines`` (caption, PNG) embedded as they are."""
    rows = SourceRows.of(rows)
    ov = overview(rows, resamples=resamples, seed=seed, level=level, baseline=baseline)
    tables = report_tables(rows, groups)
    named = {t.name: t for t in tables}
    policies = len({p for _, p in ov.cells}) > 1
    labels = [_label(key, policies) for key in ov.cells]
    colours = system_colours([*labels, *(sweep.systems if sweep is not None else ())])
    if sweep is not None:  # a sweep names systems without policies: each its rows' colour
        for name in sweep.systems:
            colours[name] = next((colours[_label(key, policies)] for key in sorted(ov.cells)
                                  if key[0] == name), colours[name])
    figure = vectors_png(named["vectors"], ov, colours)
    files: dict[str, str | bytes] = {"overview.md": overview_markdown(ov),
                                     "overview.csv": overview_csv(ov)}
    if baseline is not None:
        files["comparison.csv"] = comparison_csv(ov)
    for table in tables:
        files[f"{table.name}.md"] = table.markdown()
        files[f"{table.name}.csv"] = table.csv()
    files["vectors.png"] = figure
    per_class = named["per_class"]
    classes = len({row[0] for row in per_class.rows})
    heading, settings_text = _title(ov, classes, rows.settings)
    top = '<h2 id="overview">Overview</h2>\n' + _legend(ov)
    if ov.ranking:
        top += (_ranking_table(ov, ov.cells, f"Ranking metrics ({_ranking_note(ov)})")
                + '<p class="legend">PSDS: the area under the PSD-ROC, DCASE\'s ranking metric '
                "for DESED (PSDS1: tight boundaries, dtc = gtc = 0.7; PSDS2: detection of the "
                "class, cross-triggers penalised); mAUC / mpAUC: the segment-based AUROC and "
                "its partial area up to a false positive rate of 0.1, DCASE 2024's metric for "
                "MAESTRO. Each comes with the audit's bootstrap draws over the same clips "
                "(audit --format csv --bootstrap N).</p>\n")
    top += _overview_table(ov, ov.cells, f"Guard coordinates and logic {_heading(ov)}")
    if ov.curves:
        rate = _curve_rate(ov, rows.settings)
        top += (_curves_table(ov, ov.cells, f"{CURVES_TITLE} up to "
                              f"{'max_rate' if rate is None else f'{rate:g}'} per hour "
                              f"({_ranking_note(ov)})")
                + '<p class="legend">The guard vector at every threshold (audit --curves): at '
                "each budget of false events per hour, the threshold is lowered from the top "
                "until the budget is first exceeded; each cell is that coordinate's mean score "
                "over the budgets, of the union trace (n/a: vacuous at every budget). A "
                "threshold someone picked does not enter it (docs/curves.md).</p>\n")
    if ov.scores:
        top += _scores_table(ov)
    if baseline is not None:
        top += (f'<h2 id="comparison">Each system minus {html.escape(baseline)}, paired</h2>\n'
                '<p class="legend">Each cell: the difference on all clips and beneath it its '
                f"{ov.level:.0%} paired bootstrap interval: every resample draws the same clips "
                "for both systems, so what the clips share cancels. ↑ (green): the interval "
                "lies above 0; ↓ (orange): below 0; white: it includes 0.</p>\n"
                + (_ranking_table(ov, ov.comparison, f"Ranking metrics: each system minus "
                                  f"{baseline}", signed=True) if ov.ranking else "")
                + (_curves_table(ov, ov.comparison, f"Guard curves: each system minus "
                                 f"{baseline}", signed=True) if ov.curves else "")
                + "".join(_overview_table(ov, ov.comparison, f"{mode} traces: each system "
                                          f"minus {baseline} {_heading(ov)}", signed=True,
                                          modes=(mode,)) for mode in MODES))
    sentences = meanings(named["vectors"], ov, rows.settings)
    if sentences:
        top += ('<h3 id="meanings">What the numbers say</h3>\n<ul class="meanings">'
                + "".join(f"<li>{html.escape(x)}</li>" for x in sentences) + "</ul>\n")
    top += per_class.html(unfolded=True, shaded=(*ov.guard, "logic"))
    shown = _figure(figure, "guard vectors: a panel per mode, a bar per system", (
        "Guard vectors, a panel per mode; the black lines are the intervals of the overview"
        if ov.resamples else "Guard vectors, a panel per mode")
        + "; × on the axis: vacuous (no obligations).")
    ranked = rankings(rows)
    for scenario in (m for m in ov.ranking if any(m in r.curves for r in ranked.values())):
        tops = {_number(rows.settings.get(key, {}).get(f"setting:{scenario}.max_efpr"))
                for key in ranked}
        top_efpr = next(iter(tops)) if len(tops) == 1 else None
        name = f"psd_roc_{scenario}.png"
        files[name] = psd_roc_classes_png(ranked, scenario, colours, policies, top_efpr)
        shown += _figure(files[name], f"{scenario} PSD-ROC per class, a line per system", (
            f"{RANKING_LABELS.get(scenario, scenario)}: each class's PSD-ROC (true positive rate "
            "against false positives per hour, up to max_efpr), a line per system; in each "
            "panel's legend, the class's PSDS"))
    if any("*" in r.curves.get(m, {}) for r in ranked.values() for m in ov.curves):
        files["curves.png"] = curves_budget_png(ranked, ov.curves, colours, policies,
                                                _curve_rate(ov, rows.settings))
        shown += _figure(files["curves.png"], "guard curves against the false-activity "
                         "budget, a line per system", (
                             "Guard curves of the union trace: each coordinate's score at "
                             "each budget of false events per hour, a line per system; in "
                             "each panel's legend, the area"))
    if sweep is not None:
        files["sweep.md"], files["sweep.csv"] = sweep_markdown(sweep), sweep_csv(sweep)
        files["sweep.png"] = sweep_png(sweep, colours)
        flips = {c: sweep.flips(c) for c in sweep.coordinates}
        shown += (_figure(files["sweep.png"], "guard vector against eps",
                          "The tolerance sweep: logic and each coordinate that depends on eps, "
                          "against eps")
                  + f'<p id="sweep">Ranking flips between eps {html.escape(sweep.radii[0])} '
                  f"and {html.escape(sweep.radii[-1])}: "
                  + html.escape("; ".join(f"{c}: {', '.join(s)}" for c, s in flips.items()
                                          if s) or "none") + "</p>\n")
    if timelines:
        shown += '<h3 id="timelines">Failure timelines</h3>\n' + "".join(
            _figure(data, caption, caption) for caption, data in timelines)
    files["report.html"] = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>sedcontract report: {html.escape(heading)}</title><style>{CSS}</style>"
        f"</head><body>\n<h1>Guard vectors of {html.escape(heading)}</h1>\n"
        f'<p class="settings">{html.escape(settings_text)}</p>\n'
        f"<p>Regenerated from {len(rows)} source rows by sedcontract report; every score below "
        "is a sum of those rows, or (the ranking metrics) read from them.</p>\n" + top
        + '<h2 id="figures">Figures</h2>\n' + shown
        + '<h2 id="tables">Tables</h2>\n<p>Every table in full, folded: open one to read it '
        "(each is also beside this page as Markdown and CSV).</p>\n"
        + "".join(t.html() for t in tables if t.name != "per_class") + "</body></html>\n")
    return files


def read_groups(path: str | Path) -> dict[str, str]:
    """Clip → group from a tsv whose first column names the clip and whose header names the
    group column: ``labels.tsv`` of a pathology set (pathology) or any ``filename<TAB>group``;
    read by the tsv rules (docs/guard-report.md), each clip once."""
    rows = read_fields(Path(path))
    if not rows or len(rows[0][1]) < 2:
        raise TraceFormatError("expected a header: filename, then a group column (e.g. "
                               "labels.tsv's pathology)", path=str(path),
                               row=rows[0][0] if rows else 1)
    header = rows[0][1]
    column = header.index("pathology") if "pathology" in header else 1
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    for line, row in rows[1:]:
        if len(row) <= column:
            raise TraceFormatError(f"expected {column + 1} columns, got {len(row)}",
                                   path=str(path), row=line)
        clip = clip_id(row[0])
        if clip in lines:
            raise TraceFormatError(f"clip {clip!r} is grouped twice (first at row "
                                   f"{lines[clip]})", path=str(path), row=line)
        lines[clip], out[clip] = line, row[column]
    return out
