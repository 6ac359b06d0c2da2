"""The cells and tables the protocol's pages share: a value over training seeds, a difference
with its interval, a system's label, and the tables of differences and of the post-processing
chosen on validation."""

from __future__ import annotations

import io
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from sedcontract.experiments.contract_losses import COORDINATES
from sedcontract.guard.bootstrap import count_scores


def cell(values: Sequence[float]) -> str:
    """Mean ± sample standard deviation of the defined values (one alone as it is; none: —)."""
    values = [v for v in values if v == v]
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"


def diff_cell(row: Mapping[str, str] | None) -> str:
    """A difference with its interval; **↑**/**↓** where the interval excludes 0."""
    if row is None:
        return "—"
    point, lo, hi = float(row["point"]), float(row["lo"]), float(row["hi"])
    if math.isnan(point) or math.isnan(lo):
        return "—"
    mark = " **↑**" if lo > 0 else " **↓**" if hi < 0 else ""
    return f"{point:+.3f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def label(system: str, post: str) -> str:
    """A system's name as a row says it, with its post-processing."""
    return system if post == "none" else f"{system} + tuned post"


def per_seed(rows: Sequence[Mapping[str, str]], benchmark: str, system: str, post: str,
             mode: str, coordinate: str) -> list[float]:
    """Per training seed, as a report scores its counts (:func:`count_scores`): satisfied /
    obligations, NaN when vacuous; ``logic`` the mean of the non-vacuous coordinates."""
    mine: dict[int, dict[str, tuple[int, int]]] = {}
    for r in rows:
        if (r["benchmark"], r["system"], r["post"], r["mode"]) == (benchmark, system, post, mode):
            mine.setdefault(int(r["seed"]), {})[r["coordinate"]] = (int(r["satisfied"]),
                                                                    int(r["obligations"]))
    names = list(COORDINATES) if coordinate == "logic" or mode != "scores" else [coordinate]
    out = []
    for seed in sorted(mine):
        totals = np.array([[[mine[seed][c][k]] for c in names] for k in (0, 1)])  # [2, K, 1]
        scores = count_scores(totals)  # the coordinates, then logic
        out.append(float(scores[-1] if coordinate == "logic" else
                         scores[names.index(coordinate)]))
    return out


def difference_table(intervals: Sequence[Mapping[str, str]], mode: str, heading: str, *,
                     pooled_first: bool) -> str:
    """The differences (system − control) of one mode, a row per contrast and benchmark: in
    the intervals' order, or (``pooled_first``) pooled first, places without intervals left out."""
    out = io.StringIO()
    out.write(f"\n{heading} Differences, {mode} (system − control)\n\n| benchmark | system | "
              "control | logic | " + " | ".join(COORDINATES) + " | event F1 | segment F1 "
              "|\n|---|---|---|" + "---|" * (len(COORDINATES) + 3) + "\n")
    contrasts = list(dict.fromkeys((r["system"], r["post"], r["control"], r["control_post"])
                                   for r in intervals))
    places = list(dict.fromkeys(r["benchmark"] for r in intervals))
    if pooled_first:
        places = ["pooled", *[p for p in places if p != "pooled"]]
    for (system, post, control, control_post), where in itertools.product(contrasts, places):
        found = {r["coordinate"]: r for r in intervals
                 if (r["system"], r["post"], r["control"], r["control_post"], r["mode"],
                     r["benchmark"]) == (system, post, control, control_post, mode, where)}
        if pooled_first and not found:
            continue
        cells = [diff_cell(found.get(c)) for c in ("logic", *COORDINATES, "event_f1",
                                                   "segment_f1")]
        name = f"**{where}**" if where == "pooled" else where
        out.write(f"| {name} | {label(system, post)} | {label(control, control_post)} | "
                  + " | ".join(cells) + " |\n")
    return out.getvalue()


def post_table(choices: Sequence[Mapping[str, str]]) -> str:
    """The post-processing chosen on validation, a row per run."""
    out = io.StringIO()
    out.write("\n## Post-processing chosen on validation\n\n| benchmark | system | seed | "
              "median filter (s) | threshold | hysteresis low | validation typed logic |\n"
              "|---|---|---|---|---|---|---|\n")
    for c in choices:
        low = "—" if c["low"] in (None, "", "None") else f"{float(c['low']):g}"
        out.write(f"| {c['benchmark']} | {c['system']} | {c['seed']} | "
                  f"{float(c['median_filter']):g} | {float(c['threshold']):g} | {low} | "
                  f"{float(c['validation_logic']):.3f} |\n")
    return out.getvalue()
