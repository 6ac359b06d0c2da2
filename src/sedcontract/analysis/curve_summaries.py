"""Threshold-free summaries of the guard vector at every threshold
(:mod:`sedcontract.guard.curves`). Three are defined here.

- **Each coordinate against a false-activity budget.** The budget is counted as PSDS counts
  its x-axis: the class's false predicted events (those overlapping no reference event of the
  class) per hour of audio. At budget ``x`` the coordinate's score is the best of the
  operating points whose false rate is at most ``x`` (rule ``best``, as a PSD-ROC staircase
  keeps the best TPR within each eFPR): the curve never falls as the budget grows, though the
  false rate need not grow as the threshold falls (runs merge) and a low threshold may score
  worse. Rule ``first``, the round-2 protocol's, reads the point a deployer reaches by
  lowering the threshold from the top until the false rate would first exceed ``x``. The
  summary is that coordinate's mean score over budgets from 0 to ``max_rate``: a PSD-ROC
  area per failure mode, normalised to [0, 1].
- **Threshold ranges.** Per class, the thresholds at which every target holds (e.g. missed,
  false and onset at least 0.8 for a speech gate); an empty range is said plainly.
- **A decision file.** A threshold inside each class's widest range (its middle) becomes
  that class's threshold."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.guard.curve_changes import Curve
from sedcontract.guard.curves import ClipChanges, GuardCurves
from sedcontract.guard.rows import curve_metric
from sedcontract.traces.decision import DecisionPolicy, decision_yaml
from sedcontract.traces.grid import SECONDS_PER_HOUR

__all__ = ["BUDGET_RULES", "BudgetCurve", "area_draws", "budget_areas", "budget_curve",
           "budget_steps", "curve_metrics",
           "curve_summary", "curves_png", "decision_file",
           "decision_of", "summary_dict", "summary_markdown", "target_ranges"]

RATE = "false"  # the coordinate whose failures are the false activity
BUDGET_RULES = ("best", "first")  # the best point within the budget; the first crossing
DRAW_CELLS = 1 << 20  # resamples × operating points of one count held at once (8 MB each)


def _curve(curves: GuardCurves, coordinate: str, cls: str) -> Curve:
    table = curves.union if cls == "*" else None
    if coordinate not in curves.typed:
        raise SedContractError(f"no curve of {coordinate!r}; curves hold "
                               f"{', '.join(curves.typed)}")
    if table is not None:
        return table[coordinate]
    if cls not in curves.typed[coordinate]:
        raise SedContractError(f"no class {cls!r}; the curves' classes are "
                               f"{', '.join(curves.classes)} (and * for the union trace)")
    return curves.typed[coordinate][cls]


def _operating_points(*found: Curve) -> np.ndarray:
    """One threshold per distinct set of counts of the curves, descending: each breakpoint
    ``v`` (it stands for the thresholds from ``v`` up to the breakpoint above it: the first
    for everything above), then ``-inf`` (below the lowest breakpoint)."""
    values = np.unique(np.concatenate([c.values for c in found] or [np.zeros(0)]))
    return np.r_[values[::-1], -math.inf]


def budget_steps(rates: np.ndarray, scores: np.ndarray, rule: str = "best"
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The budgets where the score at the budget changes (ascending) and the operating point
    (an index of ``rates``, descending thresholds) that holds from each on: under ``best``
    the best-scoring point of those with a false rate at most the budget (the first on the
    way down among equals), under ``first`` the last point before the rate first exceeds
    it."""
    if rule not in BUDGET_RULES:
        raise SedContractError(f"unknown budget rule {rule!r}; choose one of "
                               f"{', '.join(BUDGET_RULES)}")
    n = len(rates)
    if rule == "first":
        return np.maximum.accumulate(rates), np.arange(n)
    order = np.lexsort((np.arange(n), rates))
    values = scores[order]
    before = np.r_[math.nan, np.fmax.accumulate(values)[:-1]] if n else values
    better = ~np.isnan(values) & (np.isnan(before) | (values > before))
    return rates[order], order[np.maximum.accumulate(np.where(better, np.arange(n), 0))]


def _area(steps: np.ndarray, values: np.ndarray, max_rate: float) -> float:
    """The mean of ``values`` (each holding from its step to the next) over budgets
    0 … ``max_rate``, the vacuous ones left out (NaN when all are)."""
    edges = np.r_[steps, math.inf]
    lo, hi = np.maximum(edges[:-1], 0.0), np.minimum(edges[1:], max_rate)
    kept = (hi > lo) & ~np.isnan(values)
    width = hi[kept] - lo[kept]
    area, defined = math.fsum(values[kept] * width), math.fsum(width)
    return area / defined if defined else math.nan


@dataclass(frozen=True)
class BudgetCurve:
    """One coordinate of one class (``*``: the union trace) against the false-activity
    budget: at each operating point (``thresholds``, descending), the false rate per hour and
    the coordinate's score (NaN where vacuous); ``steps``, the budgets where the score at the
    budget changes, and ``held``, the operating point that holds from each (``rule``: see
    :func:`budget_steps`); ``area`` is the mean score over budgets 0 … ``max_rate``, the
    budgets where it is vacuous left out (NaN when all are)."""

    coordinate: str
    cls: str
    thresholds: np.ndarray
    rates: np.ndarray
    scores: np.ndarray
    max_rate: float
    area: float
    steps: np.ndarray
    held: np.ndarray
    rule: str = "best"

    def at_budget(self, rate: float) -> tuple[float, float]:
        """The operating point a budget of ``rate`` false events per hour allows: (threshold,
        score); with a negative budget, the first operating point (nothing active)."""
        j = self.held[max(int(np.searchsorted(self.steps, rate, side="right")) - 1, 0)]
        return float(self.thresholds[j]), float(self.scores[j])


def budget_curve(curves: GuardCurves, coordinate: str, cls: str, hours: float,
                 max_rate: float = 100.0, rule: str = "best") -> BudgetCurve:
    """``coordinate``'s :class:`BudgetCurve` for class ``cls`` (``*``: the union trace) on
    ``hours`` of audio, up to ``max_rate`` false events per hour (PSDS's 100 by default),
    under the budget ``rule``."""
    if not hours > 0 or not math.isfinite(hours):
        raise SedContractError(f"hours of audio must be a positive number, got {hours!r}")
    if not max_rate > 0 or not math.isfinite(max_rate):
        raise SedContractError(f"max_rate must be a positive number, got {max_rate!r}")
    mine, false = _curve(curves, coordinate, cls), _curve(curves, RATE, cls)
    thresholds = _operating_points(mine, false)
    f_sat, f_obl = false.counts(thresholds)
    rates = (f_obl - f_sat) / hours
    sat, obl = mine.counts(thresholds)
    scores = np.full(len(thresholds), math.nan)
    np.divide(sat, obl, out=scores, where=obl > 0)
    steps, held = budget_steps(rates, scores, rule)
    return BudgetCurve(coordinate, cls, thresholds, rates, scores, float(max_rate),
                       _area(steps, scores[held], max_rate), steps, held, rule)


def budget_areas(rates: np.ndarray, scores: np.ndarray, max_rate: float,
                 rule: str = "best") -> np.ndarray:
    """:func:`budget_curve`'s area for each row of ``rates`` and ``scores`` ``[rows,
    operating points]`` at once (NaN where vacuous at every budget)."""
    if rule not in BUDGET_RULES:
        raise SedContractError(f"unknown budget rule {rule!r}; choose one of "
                               f"{', '.join(BUDGET_RULES)}")
    if rule == "first":
        steps, values = np.maximum.accumulate(rates, axis=1), scores
    else:  # ties in rate keep their order: the higher threshold first, as budget_steps
        order = np.argsort(rates, axis=1, kind="stable")
        steps = np.take_along_axis(rates, order, axis=1)
        values = np.fmax.accumulate(np.take_along_axis(scores, order, axis=1), axis=1)
    edges = np.concatenate([steps, np.full((len(rates), 1), math.inf)], axis=1)
    lo, hi = np.maximum(edges[:, :-1], 0.0), np.minimum(edges[:, 1:], max_rate)
    width = np.where((hi > lo) & ~np.isnan(values), hi - lo, 0.0)
    defined = width.sum(axis=1)
    area = np.where(width > 0, np.nan_to_num(values) * width, 0.0).sum(axis=1)
    out = np.full(len(rates), math.nan)
    np.divide(area, defined, out=out, where=defined > 0)
    return out


def _resampled(changes: ClipChanges, name: str, key: int, points: np.ndarray,
               weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The satisfied and obligation counts of ``name`` for ``key`` at each operating point
    (descending values, then -inf) of each resample (``weights``: ``[resamples, clips]``, how
    often each clip is drawn)."""
    from scipy import sparse

    clip, keys, value, sat, obl = changes.changes[name]
    mine = keys == key
    group = np.searchsorted(-points, -value[mine])  # the point at each change's value
    n = len(changes.clips)
    out = []
    for column, delta in ((0, sat), (1, obl)):
        moves = sparse.csr_matrix((delta[mine].astype(np.float64), (clip[mine], group)),
                                  shape=(n, len(points)))
        # a count at a point: the base plus the changes at every value above it
        above = np.cumsum(np.asarray((moves.T @ weights.T).T), axis=1)
        held = weights @ changes.base[name][:, key, column].astype(np.float64)
        out.append(held[:, None] + np.concatenate([np.zeros((len(weights), 1)),
                                                   above[:, :-1]], axis=1))
    return out[0], out[1]


def area_draws(changes: ClipChanges, max_rate: float = 100.0, resamples: int = 1000,
               seed: int = 0) -> dict[str, np.ndarray]:
    """Each coordinate's budget area (:func:`budget_curve`) on each bootstrap resample of
    the clips (``sedcontract.resampling``'s draws: the same resamples as every other
    interval of these clips and seed): ``draws[coordinate]`` ``[resamples, classes + 1]`` (the
    union trace last), NaN where a resample leaves it vacuous. The hours of each resample are
    its clips' durations."""
    from sedcontract.resampling import index_chunks, resampling

    n = len(changes.clips)
    resamples, seed = resampling(resamples, seed, 0.95, n)
    keys = len(changes.classes) + 1
    out = {name: np.full((resamples, keys), math.nan) for name in changes.changes}
    first = 0
    for chunk in index_chunks(n, resamples, seed):
        weights = np.zeros((len(chunk), n))
        np.add.at(weights, (np.repeat(np.arange(len(chunk)), n), chunk.ravel()), 1.0)
        hours = weights @ changes.seconds / SECONDS_PER_HOUR
        for key in range(keys):
            # one set of operating points for every coordinate of the key: points where no
            # count changes add budgets of zero width, so each area is unchanged
            values = np.unique(np.concatenate(
                [v[k == key] for _, k, v, _, _ in changes.changes.values()]))
            points = np.r_[values[::-1], -math.inf]
            step = max(1, DRAW_CELLS // len(points))  # resamples × points held at once
            for a in range(0, len(chunk), step):
                some = weights[a:a + step]
                f_sat, f_obl = _resampled(changes, RATE, key, points, some)
                rates = (f_obl - f_sat) / np.maximum(hours[a:a + step], 1e-300)[:, None]
                for name in changes.changes:
                    sat, obl = _resampled(changes, name, key, points, some)
                    scores = np.full(sat.shape, math.nan)
                    np.divide(sat, obl, out=scores, where=obl > 0)
                    out[name][first + a:first + a + len(some), key] = budget_areas(
                        rates, scores, max_rate)
        first += len(chunk)
    return out


def target_ranges(curves: GuardCurves, targets: Mapping[str, float], cls: str
                  ) -> list[tuple[float, float]]:
    """The thresholds ``[lo, hi)`` at which every coordinate of ``targets`` scores at least
    its target for class ``cls`` (``*``: the union trace); a vacuous coordinate (no
    obligation at that threshold) breaks no target, it claims nothing. Empty when no
    threshold serves."""
    for name, target in targets.items():
        if not 0 <= float(target) <= 1:
            raise SedContractError(f"the target of {name} must lie in [0, 1], got {target!r}")
    found = [_curve(curves, name, cls) for name in targets]
    points = _operating_points(*found)
    holds = np.ones(len(points), dtype=bool)
    for curve, target in zip(found, targets.values(), strict=True):
        sat, obl = curve.counts(points)  # every operating point at once
        with np.errstate(divide="ignore", invalid="ignore"):
            holds &= (obl == 0) | (sat / np.maximum(obl, 1) >= float(target))
    holds = holds.tolist()
    # point j stands for the thresholds [points[j], points[j-1]) (the first: up to +inf)
    out: list[tuple[float, float]] = []
    for j, ok in enumerate(holds):
        lo, hi = float(points[j]), float(points[j - 1]) if j else math.inf
        if not ok or not lo < hi:  # a breakpoint at +inf stands for no finite threshold
            continue
        if out and out[-1][0] == hi:
            out[-1] = (lo, out[-1][1])
        else:
            out.append((lo, hi))
    return out


def _inside(lo: float, hi: float) -> float | None:
    """A threshold in ``[lo, hi)``: the middle, the lower end when the range is unbounded
    above, the value just below the upper end when unbounded below; None for all of them."""
    if math.isinf(lo) and math.isinf(hi):
        return None
    if math.isinf(hi):
        return lo
    if math.isinf(lo):
        return float(np.nextafter(hi, -math.inf))
    middle = (lo + hi) / 2
    return middle if lo <= middle < hi else lo


def decision_of(ranges: Mapping[str, Sequence[tuple[float, float]]],
                default: DecisionPolicy | None = None
                ) -> tuple[DecisionPolicy, list[str], list[str]]:
    """``default`` (its median filters and other settings kept) with each class's threshold
    inside its widest range (:func:`_inside`); and the classes that keep the default's
    threshold: those no threshold serves, and those every threshold serves."""
    default = default or DecisionPolicy()
    chosen: dict[str, float] = {}
    unserved, any_threshold = [], []
    for cls, found in ranges.items():
        spans = [(lo, hi) for lo, hi in found if lo < hi]
        if not spans:
            unserved.append(cls)
            continue
        lo, hi = max(spans, key=lambda s: (s[1] - s[0] if math.isfinite(s[1] - s[0])
                                           else math.inf, -s[0]))
        t = _inside(lo, hi)
        if t is None:
            any_threshold.append(cls)
        else:
            chosen[cls] = t
    return default.with_thresholds(chosen) if chosen else default, unserved, any_threshold


def curve_summary(curves: GuardCurves, hours: float, max_rate: float = 100.0,
                  targets: Mapping[str, float] | None = None,
                  decision: DecisionPolicy | None = None, *,
                  draws: Mapping[str, np.ndarray] | None = None, level: float = 0.95,
                  seed: int = 0) -> dict[str, Any]:
    """What ``audit --curves`` reports: each coordinate's budget area per class and for the
    union trace (``areas[coordinate][class]``, NaN where vacuous at every budget), and with
    ``targets`` each class's threshold ranges, ``decision`` (the one the curves were made
    under) with thresholds inside them, and the classes no threshold serves or every one
    does. With ``draws`` (:func:`area_draws`, drawn with ``seed``), each area's percentile
    interval at ``level`` (``intervals[coordinate][class]``)."""
    from sedcontract.resampling import percentile_intervals

    keys = [*curves.classes, "*"]
    out: dict[str, Any] = {
        "curves": curves, "max_rate": float(max_rate), "hours": float(hours),
        "areas": {name: {k: budget_curve(curves, name, k, hours, max_rate).area for k in keys}
                  for name in curves.typed}}
    if draws is not None:
        out["draws"] = dict(draws)
        out["intervals"] = {name: percentile_intervals(
            keys, [out["areas"][name][k] for k in keys], draws[name], level, len(draws[name]))
            for name in curves.typed}
        out["seed"] = int(seed)
    if targets:
        ranges = {c: target_ranges(curves, targets, c) for c in curves.classes}
        made, unserved, any_threshold = decision_of(ranges, decision)
        chosen = {c: made.settings_of(c)[0] for c in curves.classes
                  if c not in unserved and c not in any_threshold}
        out |= {"targets": dict(targets), "ranges": ranges, "decision": made,
                "chosen": chosen, "unserved": unserved, "any_threshold": any_threshold}
    return out


def curve_metrics(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The summary's areas as ranking metrics, in the layout of a PSDS result (what source
    rows write, :func:`~sedcontract.guard.summary_rows.ranking_rows`): ``curve_<coordinate>``
    → the union trace's area (``value``), each class's (``per_class``), the union trace's
    budget curve as a staircase (``roc``: false events per hour, score) up to ``max_rate``
    (``settings.max_efpr``), and with intervals the union's draws and their seed."""
    out: dict[str, dict[str, Any]] = {}
    curves, hours, top = summary["curves"], summary["hours"], summary["max_rate"]
    for name, by_key in summary["areas"].items():
        value = by_key["*"]
        if math.isnan(value):
            continue  # vacuous at every budget: no metric
        union = budget_curve(curves, name, "*", hours, top)
        edges = np.r_[union.steps, math.inf]
        lo, hi = np.maximum(edges[:-1], 0.0), np.minimum(edges[1:], top)
        held = union.scores[union.held]
        step = (hi > lo) & ~np.isnan(held)  # the budgets each score holds over
        entry: dict[str, Any] = {
            "value": value, "settings": {"max_efpr": top},
            "per_class": {c: v for c, v in by_key.items() if c != "*" and not math.isnan(v)},
            "roc": {"efpr": lo[step].tolist(), "etpr": held[step].tolist()}}
        if "draws" in summary:
            interval = summary["intervals"][name]["*"]
            entry["draws"] = summary["draws"][name][:, -1].tolist()
            entry["interval"] = {"seed": summary["seed"], "resamples": interval.resamples}
        out[curve_metric(name)] = entry
    return out


def _range_text(ranges: Sequence[tuple[float, float]]) -> str:
    if not ranges:
        return "none: no threshold meets every target"
    if ranges == [(-math.inf, math.inf)]:
        return "every threshold"
    return ", ".join(f"{lo:.4g} ≤ t < {hi:.4g}" for lo, hi in ranges)


def decision_file(summary: Mapping[str, Any]) -> str:
    """The decision file (YAML) of a summary with targets: each class's threshold inside its
    widest range, with a header saying which targets and which classes kept theirs."""
    wanted = ", ".join(f"{n} >= {v:g}" for n, v in summary["targets"].items())
    unserved, every = summary["unserved"], summary["any_threshold"]
    return decision_yaml(summary["decision"], (
        f"sedcontract audit --curves: each class's threshold inside its widest range where "
        f"{wanted}"
        + (f"\nno threshold serves {', '.join(unserved)}: its threshold kept"
           if unserved else "")
        + (f"\nevery threshold serves {', '.join(every)}: its threshold kept"
           if every else "")))


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The summary as Markdown: the areas (a row per coordinate, a column per class and the
    union), then with targets each class's ranges and chosen threshold."""
    areas = summary["areas"]
    keys = list(next(iter(areas.values())))
    lines = [f"## The guard vector at every threshold: area up to {summary['max_rate']:g} false "
             f"events per hour ({summary['hours']:.2f} h of audio)", "",
             "Each coordinate's mean score over false-activity budgets (at each budget, the "
             "best score of the thresholds whose false rate is within it); n/a: vacuous at "
             "every budget.",
             "", "| coordinate | " + " | ".join("union" if k == "*" else k for k in keys) + " |",
             "|---" * (len(keys) + 1) + "|"]
    intervals = summary.get("intervals")
    if intervals:
        first = next(iter(next(iter(intervals.values())).values()))
        lines[2] += (f" In brackets: {first.level:.0%} bootstrap intervals over the clips "
                     f"({first.resamples} resamples, seed {summary['seed']}).")

    def cell(name: str, key: str, v: float) -> str:
        if math.isnan(v):
            return "n/a"
        found = intervals[name][key] if intervals else None
        return f"{v:.3f}" if found is None or math.isnan(found.lo) else \
            f"{v:.3f} [{found.lo:.3f}, {found.hi:.3f}]"

    for name, by_key in areas.items():
        lines.append(f"| {name} | " + " | ".join(
            cell(name, k, v) for k, v in by_key.items()) + " |")
    curves = summary["curves"]
    if curves.thresholds:
        columns = [*curves.classes, "*"]
        lines += ["", "duration (its matching is no step function of the threshold: audited at "
                  "these thresholds only):", "",
                  "| threshold | " + " | ".join("union" if k == "*" else k for k in columns)
                  + " |", "|---" * (len(columns) + 1) + "|"]
        for i, t in enumerate(curves.thresholds):
            lines.append(f"| {t:g} | " + " | ".join(
                "n/a" if not curves.duration[k][i][1] else
                f"{curves.duration[k][i][0] / curves.duration[k][i][1]:.3f}"
                for k in columns) + " |")
    else:
        lines += ["", "duration: its matching is no step function of the threshold; audit it "
                  "at chosen thresholds (--curves-duration-at 0.3,0.5,0.7)."]
    if "ranges" in summary:
        wanted = ", ".join(f"{n} ≥ {v:g}" for n, v in summary["targets"].items())
        chosen = summary["chosen"]
        lines += ["", f"Thresholds at which every target holds ({wanted}):", "",
                  "| class | thresholds | chosen |", "|---|---|---|"]
        for cls, found in summary["ranges"].items():
            text = f"{chosen[cls]:.4g}" if cls in chosen else "default kept"
            lines.append(f"| {cls} | {_range_text(found)} | {text} |")
    if "certificate" in summary:
        lines += ["", *summary["certificate"].markdown()]
    return "\n".join(lines) + "\n"


def summary_dict(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary as plain data (NaN and infinities as null)."""
    def number(x: float) -> float | None:
        return None if not math.isfinite(x) else float(x)

    curves = summary["curves"]
    out: dict[str, Any] = {"max_rate": summary["max_rate"], "hours": summary["hours"],
                           "areas": {n: {k: number(v) for k, v in by.items()}
                                     for n, by in summary["areas"].items()},
                           "duration": {"thresholds": list(curves.thresholds),
                                        "counts": {k: [list(c) for c in cells]
                                                   for k, cells in curves.duration.items()}}}
    if "intervals" in summary:
        from sedcontract.resampling import interval_dicts

        out["intervals"] = {n: {k: {f: number(x) if isinstance(x, float) else x
                                    for f, x in d.items()}
                                for k, d in interval_dicts(by, summary["seed"]).items()}
                            for n, by in summary["intervals"].items()}
    if "ranges" in summary:
        out |= {"targets": summary["targets"],
                "ranges": {c: [[number(lo), number(hi)] for lo, hi in found]
                           for c, found in summary["ranges"].items()},
                "thresholds": dict(summary["chosen"]),
                "unserved": list(summary["unserved"]),
                "any_threshold": list(summary["any_threshold"])}
    if "certificate" in summary:
        out["certificate"] = summary["certificate"].as_dict()
    return out


GUARD = ("onset", "offset", "missed", "false", "silence", "fragmentation")  # drawn by default


def curves_png(curves: GuardCurves, hours: float, max_rate: float = 100.0,
               coordinates: Sequence[str] = GUARD) -> bytes:
    """The curves as a figure 1200 px wide: a column per coordinate; on top its score against
    the threshold, beneath it against the false-activity budget (false events per hour, up to
    ``max_rate``); a line per class, the union trace in black. Vacuous stretches are gaps."""
    from sedcontract.figures import png, pyplot, system_colours

    plt = pyplot()
    colours = system_colours(curves.classes)
    fig, axes = plt.subplots(2, len(coordinates), figsize=(12, 5.6), squeeze=False,
                             sharey=True)
    for col, name in enumerate(coordinates):
        for cls in (*curves.classes, "*"):
            colour, width = ("black", 1.8) if cls == "*" else (colours[cls], 0.9)
            mine = _curve(curves, name, cls)
            points = _operating_points(mine)
            finite = points[np.isfinite(points)]
            if len(finite):
                scores = [s / o if o else math.nan for s, o in map(mine.at, finite)]
                axes[0][col].step(finite, scores, where="post", color=colour, lw=width)
            found = budget_curve(curves, name, cls, hours, max_rate)
            keep = found.steps <= max_rate
            held = found.scores[found.held][keep]
            axes[1][col].step(np.r_[found.steps[keep], max_rate],
                              np.r_[held, held[-1:]] if keep.any() else [math.nan],
                              where="post", color=colour, lw=width,
                              label="union" if cls == "*" else cls)
        axes[0][col].set_title(name, fontsize=10)
        axes[0][col].set_xlabel("threshold", fontsize=8)
        axes[1][col].set_xlabel("false events per hour", fontsize=8)
        axes[1][col].set_xlim(0, max_rate)
        for ax in (axes[0][col], axes[1][col]):
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("score", fontsize=9)
    axes[1][0].set_ylabel("score at the budget", fontsize=9)
    handles, labels = axes[1][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               frameon=False)
    rows = -(-len(labels) // 6)
    fig.tight_layout(rect=(0, 0.04 * rows, 1, 1))
    return png(fig, dpi=100)
