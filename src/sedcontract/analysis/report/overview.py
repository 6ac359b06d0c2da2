"""The overview: every system's guard vector, standard scores and ranking metrics with
intervals over clips, paired differences against a baseline, as Markdown and CSV."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sedcontract.analysis.ranking import (
    Ranking,
    metric_order,
    paired_ranking,
    rankings,
)
from sedcontract.analysis.report.counts import (
    ResampledCounts,
    macro_points,
    paired_members,
)
from sedcontract.analysis.source_rows import SourceRows
from sedcontract.errors import SedContractError
from sedcontract.guard.bootstrap import (
    count_scores,
    resampled_f1,
    resampled_macro_f1,
    resampled_scores,
)
from sedcontract.guard.render import (
    interval_text,
    table_text,
)
from sedcontract.guard.rows import (
    curve_coordinate,
)
from sedcontract.numbers import is_whole
from sedcontract.resampling import Interval, percentile_intervals, resampling
from sedcontract.scores.counts import Counts
from sedcontract.traces import MODES


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
    counts = ResampledCounts.from_rows(rows)
    if resamples:
        resamples, seed = resampling(resamples, seed, level, len(counts.clips))
    order = counts.of
    pairs = [] if baseline is None else paired_members(order, baseline, counts.clips)
    # systems whose rows name the same clips in the same order are resampled together: each
    # system's clips in its own order, so its intervals are its audit's whatever else is given
    groups: dict[tuple[int, ...], list[tuple[str, str]]] = defaultdict(list)
    for key in sorted(order):
        groups[counts.sequence[key]].append(key)
    k, names = len(counts.guard), (*counts.guard, "logic")
    cells: dict[tuple[str, str], dict[str, dict[str, Interval]]] = {}
    drawn: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None]] = {}
    f1s: dict[tuple[str, str], tuple[list[str], np.ndarray, np.ndarray | None]] = {}
    for clips, members in groups.items():
        array = counts.array(clips, members)
        vector = array[..., :4 * k].reshape(len(clips), len(members), 2, 2, k, 1)
        parts = array[..., 4 * k:].reshape(len(clips), len(members), len(counts.scores), 3)
        points, totals = count_scores(vector.sum(axis=0)), parts.sum(axis=0)
        # [resamples, members, modes, K + 1] and [resamples, members, scores]: the same draws
        values = resampled_scores(vector, resamples, seed) if resamples else None
        f1 = resampled_f1(parts, resamples, seed) if resamples else None
        per_class = counts.array(clips, members, per_class=True)
        macro = macro_points(per_class.sum(axis=0))  # [members, scores]
        macro_draws = resampled_macro_f1(per_class, resamples, seed) if resamples else None
        for s, key in enumerate(members):
            drawn[key] = (points[s], None if values is None else values[:, s])
            cells[key] = {mode: _cells(names, points[s, m], drawn[key][1], m, level, resamples)
                          for m, mode in enumerate(MODES) if mode in counts.modes[key]}
            own = [j for j, name in enumerate(counts.scores) if name in counts.scored[key]]
            if own:
                names_f1 = [*(f"{counts.scores[j]}_f1" for j in own),
                            *(f"{counts.scores[j]}_macro_f1" for j in own)]
                points_f1 = np.array([*(Counts(*(int(n) for n in totals[s, j])).f1
                                        for j in own), *macro[s, own]])
                draws_f1 = None if f1 is None else np.concatenate(
                    [f1[:, s, own], macro_draws[:, s, own]], axis=1)
                f1s[key] = (names_f1, points_f1, draws_f1)
                cells[key].setdefault("typed", {}).update(_cells(
                    names_f1, list(points_f1), draws_f1, None, level, resamples))
    ranked = rankings(rows)
    metrics = metric_order({m for r in ranked.values() for m in r.values})
    for key, found in ranked.items():
        if key in cells or found.values:
            cells.setdefault(key, {}).setdefault("typed", {}).update(
                {m: found.interval(m, level) if resamples else
                 Interval(found.values[m], math.nan, math.nan, float(level), 0, 0)
                 for m in metrics if m in found.values})
    comparison = _comparison(pairs, drawn, counts, ranked, metrics, resamples, seed, level)
    for key, base in pairs:  # the standard scores' F1, micro and macro, paired as well
        if key in f1s and base in f1s:
            comparison[key].setdefault("typed", {}).update(
                _paired_f1(counts, key, base, f1s, resamples, seed, level))
    return Overview(tuple(counts.guard), tuple(counts.scores), cells,
                    {key: len(found) for key, found in order.items()}, resamples, seed,
                    float(level), baseline, comparison,
                    tuple(m for m in metrics if curve_coordinate(m) is None),
                    {key: r.seed for key, r in ranked.items() if r.draws},
                    tuple(counts.classes),
                    tuple(m for m in metrics if curve_coordinate(m) is not None))


def _comparison(pairs: Sequence[tuple[tuple[str, str], tuple[str, str]]],
                drawn: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray | None]],
                counts: ResampledCounts, ranked: Mapping[tuple[str, str], Ranking],
                metrics: Sequence[str], resamples: int, seed: int, level: float
                ) -> dict[tuple[str, str], dict[str, dict[str, Interval]]]:
    """Each system minus its baseline, paired: the guard coordinates and logic per mode from
    the same draws (both drawn in the baseline's order when the rows name the clips in
    another), and the ranking metrics from the audits' own draws."""
    k, names = len(counts.guard), (*counts.guard, "logic")
    comparison: dict[tuple[str, str], dict[str, dict[str, Interval]]] = {}
    for key, base in pairs:
        (mine, my_values), (theirs, their_values) = drawn[key], drawn[base]
        if counts.sequence[key] != counts.sequence[base] and resamples:
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
    return comparison


def _paired_f1(counts: ResampledCounts, key: tuple[str, str], base: tuple[str, str],
               f1s: Mapping[tuple[str, str], tuple[list[str], np.ndarray, np.ndarray | None]],
               resamples: int, seed: int, level: float) -> dict[str, Interval]:
    """``key`` minus ``base`` on each standard score's micro and macro F1 both report, with
    paired intervals: the same draws for both (drawn again in the baseline's clip order when
    the rows name the clips in another)."""
    (mine, my_points, my_draws), (theirs, their_points, their_draws) = f1s[key], f1s[base]
    names = [n for n in mine if n in theirs]
    at_mine, at_theirs = [mine.index(n) for n in names], [theirs.index(n) for n in names]
    if counts.sequence[key] != counts.sequence[base]:
        clips = counts.sequence[base]
        k = len(counts.guard)
        both = counts.array(clips, [key, base])[..., 4 * k:].reshape(
            len(clips), 2, len(counts.scores), 3)
        per_class = counts.array(clips, [key, base], per_class=True)
        redrawn = np.concatenate([resampled_f1(both, resamples, seed),
                                  resampled_macro_f1(per_class, resamples, seed)], axis=2)
        index = {f"{n}_f1": j for j, n in enumerate(counts.scores)} | {
            f"{n}_macro_f1": len(counts.scores) + j for j, n in enumerate(counts.scores)}
        columns = [index[n] for n in names]
        difference = redrawn[:, 0, columns] - redrawn[:, 1, columns]
    else:
        difference = my_draws[:, at_mine] - their_draws[:, at_theirs]
    return percentile_intervals(names, list(my_points[at_mine] - their_points[at_theirs]),
                                difference, level, resamples)


def _cells(names: Sequence[str], points: Sequence[float], values: np.ndarray | None,
           mode: int | None, level: float, resamples: int) -> dict[str, Interval]:
    """Intervals of ``values`` ``[resamples, (modes,) names]`` (``mode`` picks one) around
    ``points``; without resamples, the points alone (NaN bounds)."""
    if values is None:
        return {n: Interval(float(p), math.nan, math.nan, float(level), 0, 0)
                for n, p in zip(names, points, strict=True)}
    return percentile_intervals(names, list(points),
                                values if mode is None else values[:, mode], level, resamples)


def system_label(key: tuple[str, str], policies: bool) -> str:
    return f"{key[0]} ({key[1]})" if policies else key[0]


def overview_heading(ov: Overview) -> str:
    if not ov.resamples:
        return "on all clips (no intervals: --bootstrap 0)"
    return (f"with {ov.level:.0%} percentile bootstrap intervals over clips ({ov.resamples} "
            f"resamples, seed {ov.seed})")


def overview_markdown(ov: Overview) -> str:
    """The overview as Markdown: a table per mode (systems × coordinates and logic), the
    standard scores' F1, and with a baseline the paired differences."""
    policies = len({p for _, p in ov.cells}) > 1
    out = [f"**Overview: guard coordinates and logic {overview_heading(ov)}**", ""]

    def table(title: str, columns: Sequence[str], cells: Mapping[tuple[str, str], Any],
              mode: str, signed: bool = False) -> None:
        keys = [key for key in sorted(cells) if mode in cells[key]]
        if not keys:
            return
        out.extend([f"{title}", "", "| system | " + " | ".join(map(table_text, columns))
                    + " |", "|---" * (len(columns) + 1) + "|"])
        out.extend("| " + table_text(system_label(key, policies)) + " | " + " | ".join(
            interval_text(cells[key][mode].get(c), signed) for c in columns) + " |" for key in keys)
        out.append("")

    if ov.ranking:
        table(f"Ranking metrics ({ranking_note(ov)}):", ov.ranking, ov.cells, "typed")
    if ov.curves:
        table(f"{CURVES_TITLE} ({ranking_note(ov)}):", ov.curves, ov.cells, "typed")
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
        if ov.scores:
            table("Standard scores (typed, micro F1):", [f"{n}_f1" for n in ov.scores],
                  ov.comparison, "typed", signed=True)
            table("Standard scores (typed, macro F1):", [f"{n}_macro_f1" for n in ov.scores],
                  ov.comparison, "typed", signed=True)
    return "\n".join(out).rstrip("\n") + "\n"


def curve_rate(ov: Overview, settings: Mapping[tuple[str, str], Mapping[str, str]]
                ) -> float | None:
    """The largest budget of the curves' areas, when every system's audit used one."""
    rates = {setting_number(settings.get(key, {}).get(f"setting:{m}.max_efpr"))
             for key in ov.cells for m in ov.curves}
    rates.discard(None)
    return next(iter(rates)) if len(rates) == 1 else None


def ranking_note(ov: Overview) -> str:
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


CURVES_TITLE = "Guard curves: each coordinate's mean score over false-activity budgets"


def setting_number(text: str | None) -> float | None:
    """A setting's text as a finite number, else None."""
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None
