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
from sedcontract.analysis.sweep import sweep_csv, sweep_markdown, sweep_png
from sedcontract.audit.bootstrap import count_scores, resampled_f1, resampled_scores
from sedcontract.audit.render import (
    ROW_FIELDS,
    check_columns,
    direction,
    interval_text,
    read_csv,
    row_counts,
    table_text,
)
from sedcontract.audit.rows import (
    CONFIDENCE,
    MATCHING,
    SCORE,
    SCORE_PARTS,
    RowKind,
    confidence_row,
    of_kind,
    score_row,
)
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.figures import png, pyplot
from sedcontract.resampling import Interval, percentile_intervals, resampling
from sedcontract.scores.counts import Counts
from sedcontract.traces import MODES
from sedcontract.traces.tsv import clip_id, given_files, read_fields

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

    def html(self) -> str:
        """The table folded: a ``<details>`` whose summary is the caption and the row count;
        a table wider than the page scrolls inside its box."""
        head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
                       + "</tr>" for row in self.rows)
        rows = f"{len(self.rows)} row{'' if len(self.rows) == 1 else 's'}"
        return (f'<details id="{self.name}"><summary><h3>{html.escape(self.caption)}</h3> '
                f'({rows})</summary>\n<div class="wide"><table><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table></div></details>\n")


def _cell(value: Any, blank: str = "vacuous") -> str:
    if isinstance(value, float):
        return blank if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _files(paths: Iterable[str | Path]) -> list[Path]:
    """Rows files, and the ``*_report.csv`` files of run directories."""
    return given_files(paths, lambda folder: list(folder.rglob("*_report.csv")),
                       none_here="no *_report.csv source rows in this folder (a training or "
                       "evaluation run writes them)",
                       missing="no such rows file or run folder")


def read_rows(paths: Iterable[str | Path], *, several_policies: bool = False
              ) -> list[dict[str, Any]]:
    """Source rows of every file (CSV; Parquet when pyarrow is installed), checked: all
    columns present, counts whole and ``0 <= satisfied <= obligations``, a known mode, no row
    given twice, and one policy unless ``several_policies`` says otherwise."""
    rows: list[dict[str, Any]] = []
    seen: dict[tuple, tuple[Path, int]] = {}
    policy: tuple[str, Path, int] | None = None
    for path in _files(paths):
        for line, row in _read(path):
            key = tuple(row[k] for k in ("system", "policy", "mode", "clip", "class",
                                         "coordinate"))
            if key in seen:
                first = seen[key]
                raise TraceFormatError(f"this row repeats row {first[1]} of {first[0]} (same "
                                       "system, policy, mode, clip, class and coordinate)",
                                       path=str(path), row=line)
            seen[key] = (path, line)
            if policy is None:
                policy = (row["policy"], path, line)
            elif row["policy"] != policy[0] and not several_policies:
                raise TraceFormatError(
                    f"policy {row['policy']} differs from policy {policy[0]} of {policy[1]} "
                    f"row {policy[2]}: rows of several policies (another contract, eps, hop or "
                    "matching) are compared only when asked (--several-policies)",
                    path=str(path), row=line, column="policy")
            rows.append(row)
    if not rows:
        raise SedContractError("the rows files hold no rows")
    return rows


ROWS = "source rows (sedcontract audit --format csv)"


def _read(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """A file's rows, each checked by :func:`_check` whatever the format."""
    records = _parquet(path) if path.suffix == ".parquet" else read_csv(path, ROW_FIELDS, ROWS)
    for line, record in records:
        yield line, _check(record, path, line)


def _parquet(path: Path) -> list[tuple[int, dict[str, str]]]:
    """Parquet records as the text CSV would hold (a null is an empty field), row 1 being the
    header as in CSV."""
    try:
        import pyarrow
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise SedContractError(f"{path}: reading Parquet needs pyarrow (pip install "
                               "pyarrow), or give the CSV rows") from exc
    try:
        table = pq.read_table(path)
        records = table.to_pylist()
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise TraceFormatError(f"not a Parquet file of source rows ({exc})",
                               path=str(path)) from None
    check_columns(table.column_names, ROW_FIELDS, path, ROWS)
    return [(line, {k: "" if r[k] is None else str(r[k]) for k in ROW_FIELDS})
            for line, r in enumerate(records, start=2)]


def _check(record: dict[str, str], path: Path, line: int) -> dict[str, Any]:
    """One row of text: whole counts with ``0 <= satisfied <= obligations`` and a known mode."""
    row: dict[str, Any] = dict(record)
    row["satisfied"], row["obligations"] = row_counts(record, path, line)
    if row["mode"] not in MODES:
        raise TraceFormatError(f"unknown mode {row['mode']!r}; modes are typed and union",
                               path=str(path), row=line, column="mode")
    return row


def _score(sat: int, obl: int) -> float:
    return sat / obl if obl else math.nan


EXTRA_ROLES = ("matching", "score", "facts")  # rows beside the vector


def _guard(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The guard coordinates in the order the rows first name them (a coordinate's role is
    the one its last row gives)."""
    role: dict[str, str] = {}
    for row in rows:
        if row["role"] not in EXTRA_ROLES:
            role[row["coordinate"]] = row["role"]
    return [c for c, r in role.items() if r == "guard"]


def _score_names(rows: Iterable[dict[str, Any]]) -> list[str]:
    """The standard scores the ``score:<name>/…`` rows count, sorted."""
    return sorted({kind.name for row in rows if row["role"] == "score"
                   and (kind := of_kind(row["coordinate"], SCORE)) is not None})


def _mean(values: Iterable[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return sum(known) / len(known) if known else math.nan


def report_tables(rows: Sequence[dict[str, Any]],
                  groups: Mapping[str, str] | None = None) -> list[Table]:
    """The systems' vectors (micro, per mode, with logic), typed against union, the vectors
    per clip group (``groups``: clip → e.g. perturbation family or pathology) and the
    union-versus-typed mechanism per class."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    role: dict[str, str] = {}
    order: dict[str, int] = {}
    extra = [row for row in rows if row["role"] in ("matching", "score", "facts")]
    rows = [row for row in rows if row["role"] not in ("matching", "score", "facts")]
    facts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])  # activity, softness
    for row in extra:
        if row["coordinate"] in ("activity", "softness") and row["mode"] == "typed":
            cell = facts[(row["coordinate"], row["system"], row["policy"], row["class"])]
            cell[0] += row["satisfied"]
            cell[1] += row["obligations"]
    for row in rows:
        role[row["coordinate"]] = row["role"]
        order.setdefault(row["coordinate"], len(order))
        base = (row["system"], row["policy"], row["mode"])
        for key in ((*base, "*", row["coordinate"]),
                    (*base, f"class:{row['class']}", row["coordinate"]),
                    (*base, f"group:{(groups or {}).get(row['clip'], '')}", row["coordinate"])):
            cell = counts[key]
            cell[0] += row["satisfied"]
            cell[1] += row["obligations"]
    systems = sorted({(r["system"], r["policy"]) for r in rows})
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
    classes = sorted({r["class"] for r in rows if r["mode"] == "typed"})
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
    tables += _extra_tables(extra, systems)
    return tables


def _extra_tables(rows: Sequence[dict[str, Any]], systems: Sequence[tuple[str, str]]
                  ) -> list[Table]:
    """The standard scores (micro precision, recall and F1 from the ``score:`` rows), the
    matching audit (greedy pairs of the maximum, from the ``matching:`` rows) and the vector
    by annotation confidence (from the ``confidence:`` rows)."""
    sums: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        cell = sums[(row["system"], row["policy"], row["mode"], row["coordinate"])]
        cell[0] += row["satisfied"]
        cell[1] += row["obligations"]
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
class _Counts:
    """The rows' per-clip counts, system by system, in the layout the bootstrap resamples:
    per clip a row of ``[mode, (satisfied, obligations), coordinate]`` guard counts, then
    ``[score, (tp, references, outputs)]``; clips numbered in the order the rows name them."""

    guard: list[str]
    scores: list[str]
    clips: dict[str, int] = field(default_factory=dict)
    of: dict[tuple[str, str], dict[int, None]] = field(default_factory=lambda: defaultdict(dict))
    modes: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    scored: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    entries: dict[tuple[str, str], list[tuple[int, int, int]]] = field(
        default_factory=lambda: defaultdict(list))  # (clip, column, count)

    @property
    def width(self) -> int:
        return 4 * len(self.guard) + 3 * len(self.scores)

    def add(self, row: dict[str, Any]) -> None:
        """One source row: its clip and, for a guard or score row, its counts."""
        key, k = (row["system"], row["policy"]), len(self.guard)
        clip = self.clips.setdefault(row["clip"], len(self.clips))
        self.of[key][clip] = None
        coordinate, sat, obl = row["coordinate"], row["satisfied"], row["obligations"]
        if row["role"] == "guard" and coordinate in self.guard:
            self.modes[key].add(row["mode"])
            column = MODES.index(row["mode"]) * 2 * k + self.guard.index(coordinate)
            self.entries[key] += [(clip, column, sat), (clip, column + k, obl)]
        elif row["role"] == "score" and row["mode"] == "typed" and \
                (kind := of_kind(coordinate, SCORE)) is not None:
            name, part = kind.name, kind.part
            if name in self.scores and part in SCORE_PARTS:
                self.scored[key].add(name)
                column = 4 * k + 3 * self.scores.index(name)
                self.entries[key] += ([(clip, column, sat), (clip, column + 1, obl)]
                                      if part == "recall" else [(clip, column + 2, obl)])

    def array(self, clips: Sequence[int], members: Sequence[tuple[str, str]]) -> np.ndarray:
        """``[clips, members, width]``: the members' counts on these clips (in this order)."""
        position = np.full(len(self.clips), -1)
        position[list(clips)] = np.arange(len(clips))
        out = np.zeros((len(clips), len(members), self.width), dtype=np.int64)
        for s, key in enumerate(members):
            if self.entries[key]:
                clip, column, value = np.asarray(self.entries[key], dtype=np.int64).T
                np.add.at(out, (position[clip], s, column), value)
        return out


def overview(rows: Sequence[dict[str, Any]], *, resamples: int = 1000, seed: int = 0,
             level: float = 0.95, baseline: str | None = None) -> Overview:
    """Every system's guard coordinates, logic (both modes) and standard-score F1 (typed) on
    all its clips with percentile bootstrap intervals over them (``resamples`` 0: none), and
    with ``baseline`` every other system minus it, paired.

    The machinery is :mod:`sedcontract.audit.bootstrap`'s: clips are drawn in the order the
    rows first name them (an audit's rows name them in the audit's order), so a system's
    intervals are ``bootstrap_intervals`` of its (micro) audit and a difference is
    ``paired_bootstrap`` of the two audits, for the same seed. Systems of the same clips get
    the same draws; logic per resample is the mean of its non-vacuous guard coordinates."""
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        raise SedContractError(f"--bootstrap must be a number of resamples >= 0 (0: no "
                               f"intervals), got {resamples!r}")
    if not resamples and baseline is not None:
        raise SedContractError("--baseline compares systems with paired bootstrap intervals: "
                               "give --bootstrap N (N >= 1)")
    counts = _Counts(_guard(rows), _score_names(rows))
    for row in rows:
        counts.add(row)
    if resamples:
        resamples, seed = resampling(resamples, seed, level, len(counts.clips))
    order = {key: tuple(sorted(found)) for key, found in counts.of.items()}
    pairs = [] if baseline is None else _paired_members(order, baseline, list(counts.clips))
    groups: dict[tuple[int, ...], list[tuple[str, str]]] = defaultdict(list)
    for key in sorted(order):  # systems of the same clips are resampled together
        groups[order[key]].append(key)
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
    comparison: dict[tuple[str, str], dict[str, dict[str, Interval]]] = {}
    for key, base in pairs:
        (mine, my_values), (theirs, their_values) = drawn[key], drawn[base]
        comparison[key] = {
            mode: percentile_intervals(names, list(mine[m] - theirs[m]),
                                       my_values[:, m] - their_values[:, m], level, resamples)
            for m, mode in enumerate(MODES)
            if mode in counts.modes[key] and mode in counts.modes[base]}
    return Overview(tuple(counts.guard), tuple(counts.scores), cells,
                    {key: len(found) for key, found in order.items()}, resamples, seed,
                    float(level), baseline, comparison)


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

    for mode in MODES:
        table(f"{mode} traces:", ov.names, ov.cells, mode)
    if ov.scores:
        table("Standard scores (typed, micro F1):", [f"{n}_f1" for n in ov.scores], ov.cells,
              "typed")
    if ov.baseline is not None:
        out.append(f"**Paired differences: each system minus {table_text(ov.baseline)}** (the "
                   "same resampled clips for both; ↑/↓: the interval excludes 0)")
        out.append("")
        for mode in MODES:
            table(f"{mode} traces:", ov.names, ov.comparison, mode, signed=True)
    return "\n".join(out).rstrip("\n") + "\n"


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


def colour(value: float) -> str:
    """The overview's background for a score in [0, 1] (clipped), linear between the stops
    of :data:`SCALE`; grey for a vacuous (NaN) score."""
    if math.isnan(value):
        return VACUOUS
    value = min(1.0, max(0.0, value))
    (x0, c0), (x1, c1) = next(pair for pair in pairwise(SCALE) if value <= pair[1][0])
    t = (value - x0) / (x1 - x0)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(c0, c1, strict=True))


def _html_cell(iv: Interval | None, where: str, signed: bool = False,
               first: bool = False) -> str:
    """One overview cell: the score, the interval beneath it, the background by value (by
    sign for a difference whose interval excludes 0) and the exact numbers as a tooltip."""
    start = " start" if first else ""
    if iv is None or math.isnan(iv.point):
        return (f'<td class="vacuous{start}" style="background:{VACUOUS}" '
                f'title="{html.escape(where)}: vacuous (no obligations)">vacuous</td>')
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
        background = colour(iv.point)
    return (f'<td class="cell{start}" style="background:{background}" '
            f'title="{html.escape(title)}">{iv.point:{f}}{below}</td>')


START = ' class="start"'  # the first column of a mode's group


def _breakable(name: str, at: int = 9) -> str:
    """A column name as HTML, a long one with a soft hyphen in its middle (a narrow column)."""
    if len(name) <= at:
        return html.escape(name)
    half = (len(name) + 1) // 2
    return html.escape(name[:half]) + "&shy;" + html.escape(name[half:])


def _overview_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                    caption: str, signed: bool = False, modes: Sequence[str] = MODES) -> str:
    """Systems × (typed | union) × (guard coordinates, logic), one HTML table (in a box that
    scrolls should a contract have too many coordinates for the page)."""
    policies = len({p for _, p in ov.cells}) > 1
    modes = [m for m in modes if any(m in by_mode for by_mode in cells.values())]
    top = "".join(f'<th scope="colgroup" colspan="{len(ov.names)}" class="start">{m} traces'
                  "</th>" for m in modes)
    names = "".join(f'<th scope="col"{START if i == 0 else ""}>{_breakable(n)}</th>'
                    for _ in modes for i, n in enumerate(ov.names))
    body = []
    for key in sorted(cells):
        label = html.escape(key[0]) + (f'<span class="policy">{html.escape(key[1])}</span>'
                                       if policies else "")
        row = "".join(
            _html_cell(cells[key].get(m, {}).get(n), f"{_label(key, policies)}, {m} {n}",
                       signed, i == 0)
            for m in modes for i, n in enumerate(ov.names))
        body.append(f'<tr><th scope="row">{label}</th>{row}</tr>')
    return (f'<div class="wide"><table class="overview"><caption>{html.escape(caption)}'
            f'</caption><thead><tr><th scope="col" rowspan="2">system</th>{top}</tr><tr>{names}'
            f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>\n")


def _scores_table(ov: Overview) -> str:
    """The typed micro F1 of every standard score, with intervals, one HTML table."""
    policies = len({p for _, p in ov.cells}) > 1
    keys = [key for key in sorted(ov.cells)
            if any(f"{n}_f1" in ov.cells[key].get("typed", {}) for n in ov.scores)]
    head = "".join(f'<th scope="col">{_breakable(n)}</th>' for n in ov.scores)
    body = "".join(
        f'<tr><th scope="row">{html.escape(_label(key, policies))}</th>' + "".join(
            _html_cell(ov.cells[key]["typed"].get(f"{n}_f1"),
                       f"{_label(key, policies)}, {n} F1") for n in ov.scores) + "</tr>"
        for key in keys)
    return ('<div class="wide"><table class="overview"><caption>Standard scores on the same '
            f'events: typed micro F1</caption><thead><tr><th scope="col">system</th>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table></div>\n")


def _legend(ov: Overview) -> str:
    """What a cell shows, the colour scale as labelled swatches, and what the interval means."""
    swatches = "".join(f'<span class="swatch" style="background:{colour(v)}">{v:.2f}</span>'
                       for v in (0.0, 0.25, 0.5, 0.75, 1.0))
    interval = (f"Beneath each score, its {ov.level:.0%} percentile bootstrap interval over "
                f"clips, low–high ({ov.resamples} resamples, seed {ov.seed}): the uncertainty "
                "from which "
                "clips happened to be in the test set, not from training seeds or annotators."
                if ov.resamples else "No intervals (--bootstrap 0).")
    return (f'<p class="legend">Each cell: the score on all clips (pooled counts). {interval} '
            f'Background by score: {swatches} <span class="swatch" style="background:'
            f'{VACUOUS}">vacuous</span> (no obligations; never shown as 1). The exact numbers '
            "are in each cell's tooltip and in overview.csv.</p>\n")


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
       "font-size:16px}")


def vectors_figure(rows_table: Table, ov: Overview | None = None) -> Any:
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
    palette = plt.get_cmap("tab10" if len(systems) <= 10 else "tab20")
    width = 0.8 / max(len(systems), 1)
    for ax, mode in zip(axes[0], modes, strict=True):
        for k, key in enumerate(systems):
            xs = [i - 0.4 + (k + 0.5) * width for i in range(len(coordinates))]
            ys = [data[mode].get(key, {}).get(c, math.nan) for c in coordinates]
            colour_k = palette(k % palette.N)
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


def vectors_png(rows_table: Table, ov: Overview | None = None) -> bytes:
    """:func:`vectors_figure` as PNG bytes, 1200 px wide."""
    return png(vectors_figure(rows_table, ov), dpi=100)


def _img(data: bytes, alt: str) -> str:
    return (f'<img alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">')


def _figure(data: bytes, alt: str, caption: str) -> str:
    return (f"<figure>{_img(data, alt)}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>\n")


def report_files(rows: Sequence[dict[str, Any]],
                 groups: Mapping[str, str] | None = None, *, sweep: Any = None,
                 timelines: Sequence[tuple[str, bytes]] = (), resamples: int = 1000,
                 seed: int = 0, level: float = 0.95, baseline: str | None = None
                 ) -> dict[str, str | bytes]:
    """Every file of the report folder: ``overview.md|csv`` (with a ``baseline``, also
    ``comparison.csv``), ``<table>.md|csv``, ``vectors.png`` and ``report.html``: the overview
    first (systems × coordinates, typed and union, each score with its bootstrap interval over
    clips — ``resamples`` of them, ``seed``, ``level`` — coloured by value), then the figures,
    then every table folded. With a ``sweep``
    (:class:`~sedcontract.analysis.sweep.SweepResult`) its tables and figure too, and the
    ``timelines`` (caption, PNG) embedded as they are."""
    ov = overview(rows, resamples=resamples, seed=seed, level=level, baseline=baseline)
    tables = report_tables(rows, groups)
    figure = vectors_png(next(t for t in tables if t.name == "vectors"), ov)
    files: dict[str, str | bytes] = {"overview.md": overview_markdown(ov),
                                     "overview.csv": overview_csv(ov)}
    if baseline is not None:
        files["comparison.csv"] = comparison_csv(ov)
    for table in tables:
        files[f"{table.name}.md"] = table.markdown()
        files[f"{table.name}.csv"] = table.csv()
    files["vectors.png"] = figure
    systems = sorted({(r["system"], r["policy"]) for r in rows})
    clips = sorted(set(ov.clips.values()))
    top = ('<h2 id="overview">Overview</h2>\n' + _legend(ov)
           + _overview_table(ov, ov.cells, f"Guard coordinates and logic {_heading(ov)}"))
    if ov.scores:
        top += _scores_table(ov)
    if baseline is not None:
        top += (f'<h2 id="comparison">Each system minus {html.escape(baseline)}, paired</h2>\n'
                '<p class="legend">Each cell: the difference on all clips and beneath it its '
                f"{ov.level:.0%} paired bootstrap interval: every resample draws the same clips "
                "for both systems, so what the clips share cancels. ↑ (green): the interval "
                "lies above 0; ↓ (orange): below 0; white: it includes 0.</p>\n"
                + "".join(_overview_table(ov, ov.comparison, f"{mode} traces: each system "
                                          f"minus {baseline} {_heading(ov)}", signed=True,
                                          modes=(mode,)) for mode in MODES))
    shown = _figure(figure, "guard vectors: a panel per mode, a bar per system", (
        "Guard vectors, a panel per mode; the black lines are the intervals of the overview"
        if ov.resamples else "Guard vectors, a panel per mode")
        + "; × on the axis: vacuous (no obligations).")
    if sweep is not None:
        files["sweep.md"], files["sweep.csv"] = sweep_markdown(sweep), sweep_csv(sweep)
        files["sweep.png"] = sweep_png(sweep)
        flips = {c: sweep.flips(c) for c in sweep.coordinates}
        shown += (_figure(files["sweep.png"], "guard vector against eps",
                          "The tolerance sweep: each coordinate against eps")
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
        f"<title>sedcontract report</title><style>{CSS}</style></head><body>\n"
        f"<h1>Guard vectors of {len(systems)} system(s)</h1>\n"
        f"<p>Regenerated from {len(rows)} source rows by sedcontract report "
        f"({' or '.join(map(str, clips))} clips per system); every score below is a sum of "
        "those rows.</p>\n" + top
        + '<h2 id="figures">Figures</h2>\n' + shown
        + '<h2 id="tables">Tables</h2>\n<p>Every table in full, folded: open one to read it '
        "(each is also beside this page as Markdown and CSV).</p>\n"
        + "".join(t.html() for t in tables) + "</body></html>\n")
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
