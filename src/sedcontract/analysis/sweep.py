"""Tolerance sweeps: the guard vector of one or several systems as a function of the tolerance
radius ``eps``, as rows, tables and a figure, with the systems whose ranking flips between the
strictest and the loosest radius marked."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sedcontract.contracts.bounds import coerce_binding
from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.figures import png, pyplot, system_colours
from sedcontract.guard.bootstrap import bootstrap_intervals, paired_bootstrap
from sedcontract.guard.pipeline import audit
from sedcontract.guard.render import interval_text, markdown_text, row_counts, table_text
from sedcontract.resampling import Interval
from sedcontract.traces import EventList
from sedcontract.traces.csv_files import read_csv
from sedcontract.traces.times import parse_time

__all__ = ["SweepResult", "parse_radii", "read_sweep", "sweep", "sweep_csv", "sweep_markdown",
           "sweep_png"]

ROW_FIELDS = ("system", "eps", "coordinate", "satisfied", "obligations", "score")
MAX_RADII = 1000


def parse_radii(text: str) -> list[str]:
    """``"0,20ms,40ms,...,500ms"`` → the radii as bound texts; ``a, b, ..., z`` continues the
    step ``b − a`` up to ``z``. Radii are times (20ms, 0.2s); only 0 may go without a unit.
    Each must be a usable bound, and no two may be the same time (compared in µs)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise SedContractError("--eps needs at least one radius, e.g. 0,20ms,40ms,...,200ms")
    out: list[str] = []
    i = 0
    while i < len(parts):
        if parts[i] in ("...", "…"):
            if len(out) < 2 or i + 1 >= len(parts):
                raise SedContractError(f"--eps {text!r}: '...' continues two radii up to a "
                                       "last one (a, b, ..., z)")
            a, b, z = _us(out[-2]), _us(out[-1]), _us(parts[i + 1])
            if not (a < b <= z):
                raise SedContractError(f"--eps {text!r}: '...' needs increasing radii")
            count, rest = divmod(z - b, b - a)
            if count > MAX_RADII or rest:
                raise SedContractError(f"--eps {text!r}: {parts[i + 1]} is not reached from "
                                       f"{out[-1]} in steps of {_join(b - a)} (or too many)")
            out += [_join(b + k * (b - a)) for k in range(1, count + 1)]
            i += 2
            continue
        _us(parts[i])  # checks it
        out.append(parts[i])
        i += 1
    seen: dict[int, str] = {}
    for radius in out:
        us = _us(radius)
        if us in seen:
            raise SedContractError(f"--eps {text!r} lists one radius twice: {seen[us]} and "
                                   f"{radius} are the same radius ({_join(us)})")
        seen[us] = radius
    return out


def _us(radius: str) -> int:
    """A radius in whole microseconds, checked as a bound (size, precision): a time with its
    unit (only 0 may go without one; frames depend on the hop)."""
    time = parse_time(radius, "--eps radius")
    coerce_binding("eps", radius)  # names the radius when it is too large or finer than 1 µs
    return int(time.us)


def _join(us: int) -> str:
    """Microseconds as an exact bound text in ms (``20ms``, ``0.1ms``)."""
    whole, rest = divmod(us, 1000)
    return f"{whole}ms" if not rest else f"{whole}.{rest:03d}".rstrip("0") + "ms"


def _ms(radius: str) -> float:
    """A radius in milliseconds."""
    return _us(radius) / 1000


@dataclass(frozen=True)
class SweepResult:
    """``rows``: one per system × radius × coordinate (``ROW_FIELDS``); the radii and systems
    in their given order; the coordinates of the vector."""

    rows: list[dict[str, Any]]
    radii: tuple[str, ...]
    systems: tuple[str, ...]
    coordinates: tuple[str, ...]
    mode: str
    # with a bootstrap: (system, radius) → coordinate or "logic" → interval over clips, and
    # for each system but the baseline its paired difference from the baseline
    intervals: dict[tuple[str, str], dict[str, Interval]] | None = None
    differences: dict[tuple[str, str], dict[str, Interval]] | None = None
    baseline: str | None = None
    seed: int = 0

    def score(self, system: str, radius: str, coordinate: str) -> float:
        for row in self.rows:
            if (row["system"], row["eps"], row["coordinate"]) == (system, radius, coordinate):
                return math.nan if row["score"] is None else row["score"]
        raise KeyError((system, radius, coordinate))

    def logic(self, system: str, radius: str) -> float:
        """The mean of the non-vacuous coordinates at ``radius`` (NaN when all are vacuous)."""
        known = [v for c in self.coordinates
                 if not math.isnan(v := self.score(system, radius, c))]
        return sum(known) / len(known) if known else math.nan

    def varies(self, coordinate: str) -> bool:
        """Whether some system's counts of ``coordinate`` differ between radii: the coordinate
        depends on eps (``silence``, ``onset``, …) rather than on the events alone."""
        seen: dict[str, tuple[int, int]] = {}
        for row in self.rows:
            if row["coordinate"] == coordinate:
                counts = (row["satisfied"], row["obligations"])
                if seen.setdefault(row["system"], counts) != counts:
                    return True
        return False

    def flips(self, coordinate: str) -> list[str]:
        """Systems in a pair whose order on ``coordinate`` reverses between the first
        (strictest) and the last (loosest) radius: one scores higher at the one and lower at
        the other (a tie at either end is no reversal; vacuous scores are not ranked)."""
        strict = {s: self.score(s, self.radii[0], coordinate) for s in self.systems}
        loose = {s: self.score(s, self.radii[-1], coordinate) for s in self.systems}
        flipped: set[str] = set()
        for a in self.systems:
            for b in self.systems:
                if (strict[a] - strict[b]) * (loose[a] - loose[b]) < 0:  # NaN compares False
                    flipped |= {a, b}
        return [s for s in self.systems if s in flipped]


def sweep(ref: EventList | str | Path, systems: Mapping[str, EventList | str | Path],
          policy: AuditPolicy, radii: Sequence[str], *,
          durations: Mapping[str, float] | str | Path | None = None,
          mode: str = "typed", resamples: int = 0, seed: int = 0, level: float = 0.95,
          baseline: str | None = None) -> SweepResult:
    """Audit every system at every radius (the policy with ``eps`` replaced); with
    ``resamples`` > 0 every score and logic gets a bootstrap interval over the clips, and with
    a ``baseline`` system every other system its paired difference from it (the same resampled
    clips for both, at each radius)."""
    if not systems:
        raise SedContractError("a sweep needs at least one system (--pred)")
    if baseline is not None:
        if baseline not in systems:
            raise SedContractError(f"the baseline {baseline!r} is not one of the systems "
                                   f"({', '.join(systems)})")
        if len(systems) < 2:
            raise SedContractError("a paired comparison with a baseline needs a second system")
        if not resamples:
            raise SedContractError("a paired comparison with a baseline needs bootstrap "
                                   "resamples (--bootstrap N)")
    rows: list[dict[str, Any]] = []
    coordinates: tuple[str, ...] = ()
    intervals: dict[tuple[str, str], dict[str, Interval]] = {}
    differences: dict[tuple[str, str], dict[str, Interval]] = {}
    base: dict[str, Any] = {}
    order = [baseline, *(s for s in systems if s != baseline)] if baseline else list(systems)
    for name in order:
        pred = systems[name]
        for radius in radii:
            report = audit(ref, pred, policy.but(eps=radius), durations=durations, mode=mode)
            coordinates = report.coordinates
            if resamples:
                intervals[(name, radius)] = bootstrap_intervals(
                    report, mode=mode, resamples=resamples, seed=seed, level=level)
                if name == baseline:
                    base[radius] = report
                elif baseline is not None:
                    differences[(name, radius)] = paired_bootstrap(
                        report, base[radius], mode=mode, resamples=resamples, seed=seed,
                        level=level)
            for coordinate in report.coordinates:
                cell = report.modes[mode].micro(coordinate)
                score = report.modes[mode].score(coordinate, report.aggregation)
                rows.append({"system": name, "eps": radius, "coordinate": coordinate,
                             "satisfied": cell.satisfied, "obligations": cell.obligations,
                             "score": None if math.isnan(score) else score})
    rank = {s: i for i, s in enumerate(systems)}  # rows in the systems' given order
    rows.sort(key=lambda r: rank[r["system"]])
    return SweepResult(rows, tuple(radii), tuple(systems), coordinates, mode,
                       intervals or None, differences or None, baseline, seed)


def read_sweep(path: str | Path) -> SweepResult:
    """A sweep back from its source rows (``sweep --csv``), checked: whole counts with
    ``0 <= satisfied <= obligations``, the score ``satisfied / obligations`` (blank when there
    are none), one radius in ``eps``, and every system × radius × coordinate exactly once;
    radii, systems and coordinates in the order they first appear."""
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in read_csv(path, ROW_FIELDS, "sweep rows (sedcontract sweep --csv)"):
        satisfied, obligations = row_counts(row, path, line)
        key = (row["system"], row["eps"], row["coordinate"])
        if key in seen:
            raise TraceFormatError(f"this row repeats row {seen[key]} (same system, eps and "
                                   "coordinate)", path=str(path), row=line)
        seen[key] = line
        try:
            if parse_radii(row["eps"]) != [row["eps"]]:
                raise SedContractError(f"eps {row['eps']!r} is not one radius as sweep writes "
                                       "it (e.g. 20ms)")
        except SedContractError as exc:
            raise TraceFormatError(str(exc), path=str(path), row=line, column="eps") from None
        rows.append({**row, "satisfied": satisfied, "obligations": obligations,
                     "score": _row_score(row["score"], satisfied, obligations, path, line)})
    if not rows:
        raise TraceFormatError("no sweep rows", path=str(path))
    result = SweepResult(rows, tuple(dict.fromkeys(r["eps"] for r in rows)),
                         tuple(dict.fromkeys(r["system"] for r in rows)),
                         tuple(dict.fromkeys(r["coordinate"] for r in rows)), "typed")
    # every key before the first missing one is a distinct row: the search stops within rows
    missing = next(((s, r, c) for s in result.systems for r in result.radii
                    for c in result.coordinates if (s, r, c) not in seen), None)
    if missing:
        raise TraceFormatError("no row for system {}, eps {}, coordinate {}: a sweep has every "
                               "system at every radius on every coordinate".format(*missing),
                               path=str(path))
    return result


def _row_score(text: str, satisfied: int, obligations: int, path: str | Path,
               line: int) -> float | None:
    """A sweep row's score: blank exactly when vacuous, else ``satisfied / obligations`` (the
    rows hold micro scores: a sweep under ``--aggregation macro`` is not read back)."""
    def refuse(message: str) -> TraceFormatError:
        return TraceFormatError(message, path=str(path), row=line, column="score")

    if not text:
        if obligations:
            raise refuse(f"blank score (vacuous) for {satisfied}/{obligations}")
        return None
    try:
        score = float(text)
    except ValueError:
        raise refuse(f"score {text!r} is not a number") from None
    if not obligations:
        raise refuse(f"score {text} for a coordinate with no obligations: a vacuous score is "
                     "blank")
    if not math.isclose(score, satisfied / obligations, rel_tol=1e-9, abs_tol=1e-12):
        raise refuse(f"score {text} is not satisfied/obligations {satisfied}/{obligations} = "
                     f"{satisfied / obligations:.6g} (sweep rows hold micro scores: rows of a "
                     "sweep under --aggregation macro are not read back)")
    return score


def sweep_csv(result: SweepResult) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(result.rows)
    return out.getvalue()


def sweep_markdown(result: SweepResult) -> str:
    """Per coordinate: one row per radius, one column per system (with its interval after a
    bootstrap; then logic, and the paired differences from the baseline); then the ranking
    flips."""
    def show(system: str, radius: str, coordinate: str) -> str:
        if result.intervals is not None:
            return interval_text(result.intervals[(system, radius)][coordinate])
        value = result.score(system, radius, coordinate)
        return "vacuous" if math.isnan(value) else f"{value:.3f}"

    out = [f"Guard vector ({result.mode} traces) against the tolerance radius eps.", ""]
    names = [*result.coordinates, *(["logic"] if result.intervals is not None else [])]
    for coordinate in names:
        out += [f"### {coordinate}", "", "| eps | " + " | ".join(
                    table_text(s) for s in result.systems) + " |",
                "|---" * (len(result.systems) + 1) + "|"]
        for radius in result.radii:
            out.append(f"| {radius} | " + " | ".join(
                show(s, radius, coordinate) for s in result.systems) + " |")
        out.append("")
    if result.intervals is not None:
        first = next(iter(next(iter(result.intervals.values())).values()))
        out += [f"Intervals: {first.level:.0%} percentile bootstrap over the clips "
                f"({first.resamples} resamples, seed {result.seed}): the spread over test sets "
                "like this one, not over retrainings of the systems.", ""]
    if result.differences is not None:
        others = [s for s in result.systems if s != result.baseline]
        out += [f"### Paired difference from {table_text(result.baseline or '')}", "",
                "Each system minus the baseline on the same resampled clips at each radius "
                "(↑/↓: the interval excludes 0).", ""]
        for coordinate in names:
            out += [f"#### {coordinate}", "", "| eps | " + " | ".join(
                        f"{table_text(s)} − {table_text(result.baseline or '')}"
                        for s in others) + " |", "|---" * (len(others) + 1) + "|"]
            for radius in result.radii:
                out.append(f"| {radius} | " + " | ".join(
                    interval_text(result.differences[(s, radius)][coordinate], signed=True)
                    for s in others) + " |")
            out.append("")
    if len(result.systems) > 1:
        out += [f"Ranking flips (two systems swap places) between eps {result.radii[0]} and "
                f"{result.radii[-1]}:", ""]
        flips = {c: result.flips(c) for c in result.coordinates}
        if any(flips.values()):
            out += [f"- {c}: {markdown_text(', '.join(s))}" for c, s in flips.items() if s]
        else:
            out.append("- none: no two systems swap places on any coordinate")
        out.append("")
    return "\n".join(out)


def sweep_png(result: SweepResult, colours: Mapping[str, Any] | None = None) -> bytes:
    """The figure as PNG bytes: logic, then one panel per coordinate that depends on eps (the
    others are named in the title), a line per system in its colour (``colours``: name →
    colour, one per system across a report's figures) with its bootstrap interval as a band
    when there is one; on a panel, the systems whose ranking flips are drawn dashed. One
    legend below the panels."""
    plt = pyplot()

    colours = colours or system_colours(result.systems)
    x = [_ms(r) for r in result.radii]
    varying = [c for c in result.coordinates if result.varies(c)]
    fixed = [c for c in result.coordinates if c not in varying]
    panels = ["logic", *varying]
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows + 0.8), squeeze=False,
                             sharex=True)
    for ax, coordinate in zip(axes.flat, panels, strict=False):
        flips = set(result.flips(coordinate)) if len(result.systems) > 1 and \
            coordinate != "logic" else set()
        for system in result.systems:
            y = [result.logic(system, r) if coordinate == "logic" else
                 result.score(system, r, coordinate) for r in result.radii]
            ax.plot(x, y, marker="o", markersize=3, color=colours[system],
                    linestyle="--" if system in flips else "-")
            ivs = [result.intervals[(system, r)].get(coordinate) for r in result.radii] \
                if result.intervals is not None else []
            if ivs and all(iv is not None for iv in ivs):  # the bootstrap interval as a band
                ax.fill_between(x, [iv.lo for iv in ivs], [iv.hi for iv in ivs],
                                color=colours[system], alpha=0.15, linewidth=0)
        ax.set_title(coordinate + (" (dashed: ranking flips)" if flips else ""), fontsize=9)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("eps (ms)", fontsize=8)
    title = f"guard vector against the tolerance radius ({result.mode} traces)"
    if fixed:
        title += f"\nnot drawn, the same at every eps: {', '.join(fixed)}"
    fig.suptitle(title, fontsize=10)
    legend_rows = -(-len(result.systems) // 6)
    from matplotlib.lines import Line2D

    fig.legend([Line2D([], [], color=colours[s], marker="o", markersize=3)
                for s in result.systems], list(result.systems), loc="lower center",
               ncol=min(6, len(result.systems)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.03 * legend_rows, 1, 1))
    return png(fig, dpi=120)
