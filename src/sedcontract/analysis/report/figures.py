"""The report's figures: the guard vectors of every system, PSD-ROCs per class, staircases
and the curves' budget areas."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sedcontract.analysis.ranking import (
    Ranking,
)
from sedcontract.analysis.report.overview import Overview, system_label
from sedcontract.analysis.report.tables import Table
from sedcontract.figures import png, pyplot, system_colours
from sedcontract.guard.rows import (
    curve_coordinate,
)
from sedcontract.traces import MODES


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
    colours = colours or system_colours(system_label(key, policies) for key in systems)
    width = 0.8 / max(len(systems), 1)
    for ax, mode in zip(axes[0], modes, strict=True):
        for k, key in enumerate(systems):
            xs = [i - 0.4 + (k + 0.5) * width for i in range(len(coordinates))]
            ys = [data[mode].get(key, {}).get(c, math.nan) for c in coordinates]
            colour_k = colours[system_label(key, policies)]
            ax.bar(xs, [0.0 if math.isnan(y) else y for y in ys], width,
                   color=colour_k, label=system_label(key, policies))
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
    below. The lines are drawn widest first, each on top of the ones before, so systems whose
    staircases coincide show as nested colours instead of hiding each other."""
    plt = pyplot()
    cols = min(per_row, max(len(panels), 1))
    rows = -(-len(panels) // cols)
    height = 2.3 * rows + 0.9
    fig, axes = plt.subplots(rows, cols, figsize=(12, height), squeeze=False, sharex=True,
                             sharey=True)
    fig.subplots_adjust(left=0.06, right=0.99, top=1 - 0.3 / height, bottom=0.95 / height,
                        wspace=0.08, hspace=0.3)  # fixed margins: no layout pass to pay for
    for ax, (title, lines) in zip(axes.flat, panels, strict=False):
        for k, (key, (x, y, value)) in enumerate(lines.items()):
            end = top if top is not None else (float(x.max()) if len(x) else 1.0)
            ax.step(np.append(x, end), np.append(y, y[-1] if len(y) else 0.0), where="post",
                    color=colours[system_label(key, policies)], lw=line_width(k, len(lines)),
                    zorder=2 + k, label=f"{value:.3f}")
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

    fig.legend([Line2D([], [], color=colours[system_label(k, policies)]) for k in shown],
               [system_label(k, policies) for k in shown], loc="lower center",
               ncol=min(6, len(shown)), frameon=False, fontsize=9)
    return png(fig, dpi=100)


def line_width(k: int, n: int) -> float:
    """The width of the ``k``-th of ``n`` lines drawn on one another: the last 1.5 pt, each
    before it up to 2.5 pt wider (8.5 pt at most in all), so each coinciding line keeps an
    edge of its own on both sides."""
    return 1.5 + min(2.5, 7.0 / max(n - 1, 1)) * (n - 1 - k)
