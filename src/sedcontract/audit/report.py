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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sedcontract.audit.confidence import STRATA
from sedcontract.audit.figures import png, pyplot
from sedcontract.audit.render import ROW_FIELDS, check_columns, read_csv, row_counts, table_text
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.traces import MODES

__all__ = ["Table", "read_rows", "report_files", "report_tables"]


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
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
                       + "</tr>" for row in self.rows)
        return (f'<h2 id="{self.name}">{html.escape(self.caption)}</h2>\n<table>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n")


def _cell(value: Any, blank: str = "vacuous") -> str:
    if isinstance(value, float):
        return blank if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _files(paths: Iterable[str | Path]) -> list[Path]:
    """Rows files, and the ``*_report.csv`` files of run directories."""
    out = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(path.rglob("*_report.csv"))
            if not found:
                raise SedContractError(f"{path}: no *_report.csv source rows in this folder (a "
                                       "training or evaluation run writes them)")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise SedContractError(f"{path}: no such rows file or run folder")
    return out


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
    guard = [c for c in sorted(order, key=order.get) if role[c] == "guard"]
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
    names = sorted({k[3].split(":", 1)[1].rsplit("/", 1)[0] for k in sums
                    if k[3].startswith("score:")})
    if names:
        scores = Table("scores", "Standard scores on the same events (micro): precision, "
                       "recall and F1", ("system", "policy", "score", "tp", "references",
                                         "outputs", "precision", "recall", "F1"), [])
        for system, policy in systems:
            for name in names:
                tp, n_ref = sums.get((system, policy, "typed", f"score:{name}/recall"), (0, 0))
                _, n_sys = sums.get((system, policy, "typed", f"score:{name}/precision"),
                                    (0, 0))
                precision = tp / n_sys if n_sys else 0.0  # no output scores 0, as in DCASE
                recall = tp / n_ref if n_ref else math.nan
                f1 = math.nan if math.isnan(recall) else (
                    0.0 if precision + recall == 0 else 2 * precision * recall /
                    (precision + recall))
                scores.rows.append((system, policy, name, tp, n_ref, n_sys, precision, recall,
                                    f1))
        out.append(scores)
    matchings = sorted({k[3] for k in sums if k[3].startswith("matching:")})
    if matchings:
        audit = Table("matching", "The matching audit: pairs greedy matching finds of the "
                      "maximum (exact) matching", ("system", "policy", "mode", "matching",
                                                   "greedy", "exact", "greedy / exact"), [])
        for system, policy in systems:
            for mode in MODES:
                for name in matchings:
                    if (system, policy, mode, name) in sums:
                        greedy, exact = sums[(system, policy, mode, name)]
                        audit.rows.append((system, policy, mode, name.split(":", 1)[1], greedy,
                                           exact, _score(greedy, exact)))
        out.append(audit)
    # the rows' order: strata, and clauses in the contract's order
    stratified = list(dict.fromkeys(k[3] for k in sums if k[3].startswith("confidence:")))
    if stratified:
        strata = list(dict.fromkeys(c.split(":", 1)[1].rsplit("/", 1)[0] for c in stratified))
        strata.sort(key=lambda label: STRATA.index(label) if label in STRATA else len(STRATA))
        clauses = list(dict.fromkeys(c.rsplit("/", 1)[1] for c in stratified))
        table = Table("by_confidence", "Obligations by annotation confidence (typed): each "
                      "coordinate's score where the soft label of its obligation lies in each "
                      "stratum", ("system", "policy", "coordinate",
                                  *(f"soft {label}" for label in strata)), [])
        for system, policy in systems:
            for clause in clauses:
                table.rows.append((system, policy, clause, *(
                    _score(*sums.get((system, policy, "typed", f"confidence:{label}/{clause}"),
                                     (0, 0))) for label in strata)))
        out.append(table)
    return out


def vectors_png(rows_table: Table) -> bytes:
    """Grouped bars: per mode a panel, per guard coordinate a group, per system a bar."""
    plt = pyplot()

    data: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    coordinates: list[str] = []
    for system, policy, mode, coordinate, role, _, _, score in rows_table.rows:
        if role != "guard":
            continue
        data[mode][f"{system} ({policy})"][coordinate] = score
        if coordinate not in coordinates:
            coordinates.append(coordinate)
    modes = [m for m in MODES if m in data]
    fig, axes = plt.subplots(1, len(modes), figsize=(6.5 * len(modes), 3.4), squeeze=False)
    for ax, mode in zip(axes[0], modes, strict=True):
        systems = sorted(data[mode])
        width = 0.8 / max(len(systems), 1)
        for k, system in enumerate(systems):
            xs = [i + k * width for i in range(len(coordinates))]
            ys = [data[mode][system].get(c, math.nan) for c in coordinates]
            ax.bar(xs, [0 if math.isnan(y) else y for y in ys], width, label=system)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(coordinates))])
        ax.set_xticklabels(coordinates, rotation=30, fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{mode} traces", fontsize=10)
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return png(fig, dpi=110)


def _img(data: bytes, alt: str) -> str:
    return (f'<img alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">')


def report_files(rows: Sequence[dict[str, Any]],
                 groups: Mapping[str, str] | None = None, *, sweep: Any = None,
                 timelines: Sequence[tuple[str, bytes]] = ()) -> dict[str, str | bytes]:
    """Every file of the report folder: ``<table>.md|csv``, ``vectors.png`` and
    ``report.html`` (the tables and the figure, embedded); with a ``sweep``
    (:class:`~sedcontract.audit.sweep.SweepResult`) its tables and figure too, and the
    ``timelines`` (caption, PNG) embedded as they are."""
    from sedcontract.audit.sweep import sweep_csv, sweep_markdown, sweep_png

    tables = report_tables(rows, groups)
    figure = vectors_png(next(t for t in tables if t.name == "vectors"))
    files: dict[str, str | bytes] = {}
    for table in tables:
        files[f"{table.name}.md"] = table.markdown()
        files[f"{table.name}.csv"] = table.csv()
    files["vectors.png"] = figure
    systems = sorted({(r["system"], r["policy"]) for r in rows})
    sections = ""
    if sweep is not None:
        files["sweep.md"], files["sweep.csv"] = sweep_markdown(sweep), sweep_csv(sweep)
        files["sweep.png"] = sweep_png(sweep)
        flips = {c: sweep.flips(c) for c in sweep.coordinates}
        sections += ('<h2 id="sweep">The tolerance sweep</h2>\n'
                     + _img(files["sweep.png"], "guard vector against eps") + "\n<p>Ranking "
                     f"flips between eps {html.escape(sweep.radii[0])} and "
                     f"{html.escape(sweep.radii[-1])}: "
                     + html.escape("; ".join(f"{c}: {', '.join(s)}" for c, s in flips.items()
                                             if s) or "none") + "</p>\n")
    if timelines:
        sections += '<h2 id="timelines">Failure timelines</h2>\n' + "".join(
            f"<figure>{_img(data, caption)}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>\n" for caption, data in timelines)
    files["report.html"] = (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sedcontract report"
        "</title><style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
        "table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;"
        "padding:2px 6px;text-align:right}</style></head><body>\n"
        f"<h1>Guard vectors of {len(systems)} system(s)</h1>\n"
        f"<p>Regenerated from {len(rows)} source rows by sedcontract report; every number "
        "below is a sum of those rows.</p>\n"
        + _img(figure, "guard vectors") + "\n"
        + "".join(t.html() for t in tables) + sections + "</body></html>\n")
    return files


def read_groups(path: str | Path) -> dict[str, str]:
    """Clip → group from a tsv whose first column names the clip and whose header names the
    group column: ``labels.tsv`` of a pathology set (pathology) or any ``filename<TAB>group``;
    read by the tsv rules (docs/guard-report.md), each clip once."""
    from sedcontract.traces.tsv import clip_id, read_fields

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
