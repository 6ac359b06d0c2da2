"""The report folder: every table, figure and ``report.html`` written from the rows at once,
the same rows giving the same bytes; and the groups file that names systems' groups."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.analysis.ranking import (
    rankings,
)
from sedcontract.analysis.report.figures import curves_budget_png, psd_roc_classes_png, vectors_png
from sedcontract.analysis.report.html import (
    CSS,
    RANKING_LABELS,
    curves_table,
    figure_html,
    legend_html,
    meanings,
    overview_table,
    page_title,
    paired_scores_tables,
    ranking_table,
    scores_table,
)
from sedcontract.analysis.report.overview import (
    CURVES_TITLE,
    Overview,
    comparison_csv,
    curve_rate,
    overview,
    overview_csv,
    overview_heading,
    overview_markdown,
    ranking_note,
    setting_number,
    system_label,
)
from sedcontract.analysis.report.tables import report_tables
from sedcontract.analysis.source_rows import SourceRows
from sedcontract.analysis.sweep import sweep_csv, sweep_markdown, sweep_png
from sedcontract.errors import TraceFormatError
from sedcontract.figures import system_colours
from sedcontract.traces import MODES
from sedcontract.traces.tsv import clip_id, read_fields


def report_files(rows: SourceRows | Sequence[dict[str, Any]],
                 groups: Mapping[str, str] | None = None, *, sweep: Any = None,
                 timelines: Sequence[tuple[str, bytes]] = (), resamples: int = 1000,
                 seed: int = 0, level: float = 0.95, baseline: str | None = None,
                 title: str | None = None) -> dict[str, str | bytes]:
    """Every file of the report folder: ``overview.md|csv`` (with a ``baseline``, also
    ``comparison.csv``), ``<table>.md|csv``, ``vectors.png``, ``psd_roc_<scenario>.png`` when
    the rows hold PSD-ROC staircases, and ``report.html``: a heading naming the data and
    settings, the overview first (the ranking metrics, the guard vectors typed and union, the
    standard scores' micro and macro F1, each with its bootstrap interval over clips —
    ``resamples`` of them, ``seed``, ``level`` — coloured by each column's spread), what each
    coordinate means in words, the per-class vectors unfolded, then the figures (one colour per
    system in all), then every other table folded. With a ``sweep``
    (:class:`~sedcontract.analysis.sweep.SweepResult`) its tables and figure too, and the
    ``timelines`` (caption, PNG) embedded as they are. ``title`` (the data, e.g. "DESED
    validation") heads the page and ``overview.md``."""
    rows = SourceRows.of(rows)
    ov = overview(rows, resamples=resamples, seed=seed, level=level, baseline=baseline)
    tables = report_tables(rows, groups)
    named = {t.name: t for t in tables}
    policies = len({p for _, p in ov.cells}) > 1
    colours = _colours(ov, policies, sweep)
    figure = vectors_png(named["vectors"], ov, colours)
    files: dict[str, str | bytes] = {"overview.md": (f"# {title}\n\n" if title else "")
                                     + overview_markdown(ov),
                                     "overview.csv": overview_csv(ov)}
    if baseline is not None:
        files["comparison.csv"] = comparison_csv(ov)
    for table in tables:
        files[f"{table.name}.md"] = table.markdown()
        files[f"{table.name}.csv"] = table.csv()
    files["vectors.png"] = figure
    per_class = named["per_class"]
    heading, settings_text = page_title(ov, len({row[0] for row in per_class.rows}),
                                        rows.settings)
    top = _overview_html(ov, rows, baseline)
    sentences = meanings(named["vectors"], ov, rows.settings)
    if sentences:
        top += ('<h3 id="meanings">What the numbers say</h3>\n<ul class="meanings">'
                + "".join(f"<li>{html.escape(x)}</li>" for x in sentences) + "</ul>\n")
    top += per_class.html(unfolded=True, shaded=per_class.columns[3:])
    shown = _figures_html(files, figure, ov, rows, colours, policies, sweep, timelines)
    files["report.html"] = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>sedcontract report: {html.escape(f'{title}: ' if title else '')}"
        f"{html.escape(heading)}</title><style>{CSS}</style></head><body>\n"
        + (f"<h1>{html.escape(title)}</h1>\n<p class=\"subtitle\">Guard vectors of "
           f"{html.escape(heading)}</p>\n" if title else
           f"<h1>Guard vectors of {html.escape(heading)}</h1>\n") +
        f'<p class="settings">{html.escape(settings_text)}</p>\n'
        f"<p>Regenerated from {len(rows)} source rows by sedcontract report; every score below "
        "is a sum of those rows, or (the ranking metrics) read from them.</p>\n" + top
        + '<h2 id="figures">Figures</h2>\n' + shown
        + '<h2 id="tables">Tables</h2>\n<p>Every table in full, folded: open one to read it '
        "(each is also beside this page as Markdown and CSV).</p>\n"
        + "".join(t.html() for t in tables if t.name != "per_class") + "</body></html>\n")
    return files


def _colours(ov: Overview, policies: bool, sweep: Any) -> dict[str, Any]:
    """One colour per system in every figure; a sweep names systems without policies, so each
    takes its rows' colour."""
    labels = [system_label(key, policies) for key in ov.cells]
    colours = system_colours([*labels, *(sweep.systems if sweep is not None else ())])
    if sweep is not None:
        for name in sweep.systems:
            colours[name] = next((colours[system_label(key, policies)]
                                  for key in sorted(ov.cells) if key[0] == name), colours[name])
    return colours


def _overview_html(ov: Overview, rows: SourceRows, baseline: str | None) -> str:
    """The page's overview: the legend, the ranking metrics, the guard vectors, the curves'
    areas and the standard scores, then each system minus the baseline, paired."""
    top = '<h2 id="overview">Overview</h2>\n' + legend_html(ov)
    if ov.ranking:
        top += (ranking_table(ov, ov.cells, f"Ranking metrics ({ranking_note(ov)})")
                + '<p class="legend">PSDS: the area under the PSD-ROC, DCASE\'s ranking metric '
                "for DESED (PSDS1: tight boundaries, dtc = gtc = 0.7; PSDS2: detection of the "
                "class, cross-triggers penalised); mAUC / mpAUC: the segment-based AUROC and "
                "its partial area up to a false positive rate of 0.1, DCASE 2024's metric for "
                "MAESTRO. Each comes with the audit's bootstrap draws over the same clips "
                "(audit --format csv --bootstrap N).</p>\n")
    top += overview_table(ov, ov.cells, f"Guard coordinates and logic {overview_heading(ov)}")
    if ov.curves:
        rate = curve_rate(ov, rows.settings)
        top += (curves_table(ov, ov.cells, f"{CURVES_TITLE} up to "
                             f"{'max_rate' if rate is None else f'{rate:g}'} per hour "
                             f"({ranking_note(ov)})")
                + '<p class="legend">The guard vector at every threshold (audit --curves): at '
                "each budget of false events per hour, the best score of the thresholds whose "
                "false rate is within it (as a PSD-ROC keeps the best TPR, so it never falls as "
                "the budget grows); each cell is that coordinate's mean score over the budgets, "
                "of the union trace (n/a: vacuous at every budget). A "
                "threshold someone picked does not enter it (docs/curves.md).</p>\n")
    if ov.scores:
        top += scores_table(ov)
    if baseline is not None:
        top += (f'<h2 id="comparison">Each system minus {html.escape(baseline)}, paired</h2>\n'
                '<p class="legend">Each cell: the difference on all clips and beneath it its '
                f"{ov.level:.0%} paired bootstrap interval: every resample draws the same clips "
                "for both systems, so what the clips share cancels. ↑ (green): the interval "
                "lies above 0; ↓ (orange): below 0; white: it includes 0.</p>\n"
                + (ranking_table(ov, ov.comparison, f"Ranking metrics: each system minus "
                                 f"{baseline}", signed=True) if ov.ranking else "")
                + (curves_table(ov, ov.comparison, f"Guard curves: each system minus "
                                f"{baseline}", signed=True) if ov.curves else "")
                + "".join(overview_table(ov, ov.comparison, f"{mode} traces: each system "
                                         f"minus {baseline} {overview_heading(ov)}",
                                         signed=True, modes=(mode,)) for mode in MODES)
                + (paired_scores_tables(ov, baseline) if ov.scores else ""))
    return top


def _figures_html(files: dict[str, str | bytes], figure: bytes, ov: Overview, rows: SourceRows,
                  colours: dict[str, Any], policies: bool, sweep: Any,
                  timelines: Sequence[tuple[str, bytes]]) -> str:
    """The page's figures (the guard vectors, PSD-ROCs per class, the curves, the sweep and the
    timelines), each figure added to ``files`` as it is drawn."""
    shown = figure_html(figure, "guard vectors: a panel per mode, a bar per system", (
        "Guard vectors, a panel per mode; the black lines are the intervals of the overview"
        if ov.resamples else "Guard vectors, a panel per mode")
        + "; × on the axis: vacuous (no obligations).")
    ranked = rankings(rows)
    for scenario in (m for m in ov.ranking if any(m in r.curves for r in ranked.values())):
        tops = {setting_number(rows.settings.get(key, {}).get(f"setting:{scenario}.max_efpr"))
                for key in ranked}
        top_efpr = next(iter(tops)) if len(tops) == 1 else None
        name = f"psd_roc_{scenario}.png"
        files[name] = psd_roc_classes_png(ranked, scenario, colours, policies, top_efpr)
        shown += figure_html(files[name], f"{scenario} PSD-ROC per class, a line per system", (
            f"{RANKING_LABELS.get(scenario, scenario)}: each class's PSD-ROC (true positive rate "
            "against false positives per hour, up to max_efpr), a line per system, drawn "
            "widest first so that coinciding lines show as nested colours; in each panel's "
            "legend, the class's PSDS"))
    if any("*" in r.curves.get(m, {}) for r in ranked.values() for m in ov.curves):
        files["curves.png"] = curves_budget_png(ranked, ov.curves, colours, policies,
                                                curve_rate(ov, rows.settings))
        shown += figure_html(files["curves.png"], "guard curves against the false-activity "
                             "budget, a line per system", (
                                 "Guard curves of the union trace: each coordinate's score at "
                                 "each budget of false events per hour, a line per system "
                                 "(widest first: coinciding lines show as nested colours); in "
                                 "each panel's legend, the area"))
    if sweep is not None:
        files["sweep.md"], files["sweep.csv"] = sweep_markdown(sweep), sweep_csv(sweep)
        files["sweep.png"] = sweep_png(sweep, colours)
        flips = {c: sweep.flips(c) for c in sweep.coordinates}
        shown += (figure_html(files["sweep.png"], "guard vector against eps",
                              "The tolerance sweep: logic and each coordinate that depends on "
                              "eps, against eps")
                  + f'<p id="sweep">Ranking flips between eps {html.escape(sweep.radii[0])} '
                  f"and {html.escape(sweep.radii[-1])}: "
                  + html.escape("; ".join(f"{c}: {', '.join(s)}" for c, s in flips.items()
                                          if s) or "none") + "</p>\n")
    if timelines:
        shown += '<h3 id="timelines">Failure timelines</h3>\n' + "".join(
            figure_html(data, caption, caption) for caption, data in timelines)
    return shown


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
