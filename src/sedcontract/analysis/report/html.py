"""``report.html``'s pieces: the colour scale, the tables with their intervals, the legend,
what each coordinate means, the title, and the inline CSS."""

from __future__ import annotations

import base64
import html
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from sedcontract.analysis.ranking import (
    settings_items,
)
from sedcontract.analysis.report.overview import (
    Overview,
    system_label,
)
from sedcontract.analysis.report.style import SPREAD_FLOOR, VACUOUS, colour, relative
from sedcontract.analysis.report.tables import Table
from sedcontract.guard.render import (
    direction,
)
from sedcontract.guard.rows import (
    curve_coordinate,
)
from sedcontract.resampling import Interval
from sedcontract.traces import MODES

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


def html_cell(iv: Interval | None, where: str, signed: bool = False,
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
            html_cell(cells[key].get(mode, {}).get(name),
                       f"{system_label(key, policies)}, {heading.removesuffix(' traces')} {shown}",
                       signed, i == 0, spreads.get((mode, name)), missing)
            for heading, mode, names in groups for i, (name, shown) in enumerate(names))
        body.append(f'<tr><th scope="row">{label}</th>{row}</tr>')
    return (f'<div class="wide"><table class="overview"><caption>{html.escape(caption)}'
            f'</caption><thead><tr><th scope="col" rowspan="2">system</th>{top}</tr><tr>'
            f"{labels}</tr></thead><tbody>{''.join(body)}</tbody></table></div>\n")


def overview_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                    caption: str, signed: bool = False, modes: Sequence[str] = MODES) -> str:
    """Systems × (typed | union) × (guard coordinates, logic)."""
    return _grouped_table(ov, cells, caption, [
        (f"{mode} traces", mode, [(n, n) for n in ov.names]) for mode in modes], signed)


RANKING_LABELS = {"psds1": "PSDS1", "psds2": "PSDS2", "mauc": "mAUC", "mpauc": "mpAUC"}


def ranking_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                   caption: str, signed: bool = False) -> str:
    """The ranking metrics (PSDS scenarios, mAUC, mpAUC), one HTML table."""
    return _grouped_table(ov, cells, caption, [("what DCASE ranks on", "typed", [
        (m, RANKING_LABELS.get(m, m)) for m in ov.ranking])], signed, missing="n/a")




def curves_table(ov: Overview, cells: Mapping[tuple[str, str], dict[str, dict[str, Interval]]],
                  caption: str, signed: bool = False) -> str:
    """The guard curves' budget areas of the union trace (``curve_<coordinate>``), one HTML
    table."""
    return _grouped_table(ov, cells, caption, [("area over budgets, union trace", "typed", [
        (m, curve_coordinate(m) or m) for m in ov.curves])], signed, missing="n/a")


def scores_table(ov: Overview) -> str:
    """Each standard score's typed micro and macro F1, with intervals, one HTML table."""
    return _grouped_table(ov, ov.cells, "Standard scores on the same events: typed F1, micro "
                          "(pooled counts) and macro (the mean over the classes with "
                          "references)", [(name, "typed", [(f"{name}_f1", "micro"),
                                                           (f"{name}_macro_f1", "macro")])
                                          for name in ov.scores])


def paired_scores_tables(ov: Overview, baseline: str) -> str:
    """Each system minus ``baseline`` on each standard score's typed F1, micro then macro, a
    table each (signed cells with paired intervals are wide: one table would not fit)."""
    return "".join(_grouped_table(
        ov, ov.comparison, f"Standard scores: each system minus {baseline}, typed {part} F1"
        + (" (the mean over the classes with references)" if part == "macro" else ""),
        [(name, "typed", [(f"{name}{suffix}", part)]) for name in ov.scores], signed=True)
        for part, suffix in (("micro", "_f1"), ("macro", "_macro_f1")))


def legend_html(ov: Overview) -> str:
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


def figure_html(data: bytes, alt: str, caption: str) -> str:
    return (f"<figure>{_img(data, alt)}<figcaption>{html.escape(caption)}</figcaption>"
            "</figure>\n")




def page_title(ov: Overview, classes: int, settings: Mapping[tuple[str, str], Mapping[str, str]]
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
