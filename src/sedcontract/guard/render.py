"""Guard reports as JSON, CSV source rows (one per clip × class × coordinate) and Markdown.

Every table is a pure function of the report; JSON is byte-identical across runs.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sedcontract.errors import TraceFormatError, of_kind
from sedcontract.guard.report import Cell, GuardReport, ModeReport, ScoresReport
from sedcontract.guard.rows import SCHEMA_VERSION
from sedcontract.scores.counts import Counts, MetricResult
from sedcontract.scores.psds.settings import cut_note, without_curves
from sedcontract.traces.names import shorten

TEXT_FIELDS = ("system", "policy", "mode", "clip", "class", "coordinate", "role", "sort")
ROW_FIELDS = (*TEXT_FIELDS, "satisfied", "obligations")  # every source row has these
VALUE_FIELD = "value"  # a ranking row's number (PSDS, mAUC, …); optional in older files
MAX_COUNT = 2**63 - 1  # counts are summed as int64


def row_counts(row: dict[str, str], path: str | Path, line: int) -> tuple[int, int]:
    """A row's ``satisfied`` and ``obligations``: digits, at most ``MAX_COUNT``, and
    ``satisfied <= obligations``."""
    out = []
    for name in ("satisfied", "obligations"):
        text = row[name]
        if not (text.isascii() and text.isdigit() and len(text) < 20 and int(text) <= MAX_COUNT):
            raise TraceFormatError(f"{name} {shorten(text)!r} is not a whole number of 0 … "
                                   "2^63 − 1 (written in digits, e.g. 3)", path=str(path),
                                   row=line, column=name)
        out.append(int(text))
    if out[0] > out[1]:
        raise TraceFormatError(f"satisfied {out[0]} is outside 0 … obligations {out[1]}",
                               path=str(path), row=line, column="satisfied")
    return out[0], out[1]


def _cell(cell: Cell) -> dict[str, Any]:
    return {"score": None if cell.vacuous else cell.score, "satisfied": cell.satisfied,
            "obligations": cell.obligations, "vacuous": cell.vacuous}


def roles(report: GuardReport, mode: ModeReport) -> list[tuple[str, str]]:
    """Each coordinate and diagnostic of a mode with its role ("guard" or "diagnostic")."""
    return ([(n, "guard") for n in report.coordinates]
            + [(n, "diagnostic") for n in mode.diagnostics])


VECTOR_COLUMNS = ("mode", "coordinate", "role", "satisfied", "obligations", "score")


def vector_rows(report: GuardReport) -> list[list[Any]]:
    """The vector and diagnostics as table rows (``VECTOR_COLUMNS``): pooled counts, and the
    score under the report's aggregation (None when vacuous)."""
    rows = []
    for mode_name, mode in report.modes.items():
        for name, role in roles(report, mode):
            cell = mode.micro(name)
            score = mode.score(name, report.aggregation)
            rows.append([mode_name, name, role, cell.satisfied, cell.obligations,
                         None if math.isnan(score) else score])
    return rows


def to_dict(report: GuardReport) -> dict[str, Any]:
    """The report as plain data (the JSON schema of docs/guard-report.md)."""
    of_kind("report", report, GuardReport)
    modes = {}
    for name, mode in report.modes.items():
        entries = {}
        for coordinate, role in roles(report, mode):
            macro, classes = mode.macro(coordinate)
            entries[coordinate] = {
                "role": role, "sort": mode.sorts[coordinate], **_cell(mode.micro(coordinate)),
                "macro": {"score": None if math.isnan(macro) else macro,
                          "classes": classes},
                "per_class": {str(k): _cell(v) for k, v in mode.per_class(coordinate).items()
                              if k is not None},
                "per_clip": {k: [v.satisfied, v.obligations]
                             for k, v in mode.per_clip(coordinate).items()},
            }
        logic = report.logic(name)
        modes[name] = {
            "coordinates": {c: entries[c] for c in report.coordinates},
            "diagnostics": {c: entries[c] for c in mode.diagnostics},
            "logic": None if math.isnan(logic) else logic,
            "matchings": {
                m.name: {"method": m.method, "pairs": m.pairs,
                         "greedy_pairs": int(m.greedy_per_row.sum()),
                         "exact_pairs": int(m.exact_per_row.sum()),
                         "greedy_short": [
                             {"clip": mode.rows[r][0], "class": mode.rows[r][1],
                              "greedy": int(m.greedy_per_row[r]),
                              "exact": int(m.exact_per_row[r])} for r in m.short_rows]}
                for m in mode.matchings.values()},
        }
    data = {"schema_version": SCHEMA_VERSION, "policy": report.policy,
            "traces": report.traces, "aggregation": report.aggregation, "modes": modes}
    if report.scores is not None:
        data["scores"] = scores_dict(report.scores)
    if report.psds is not None:
        data["psds"] = without_curves(report.psds)
    if report.auroc is not None:
        data["auroc"] = auroc_dict(report.auroc)
    return data


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _counts(counts: Counts) -> dict[str, Any]:
    return {"f1": _number(counts.f1), "precision": counts.precision,
            "recall": _number(counts.recall), "error_rate": _number(counts.error_rate),
            "tp": counts.tp, "ref": counts.ref, "sys": counts.sys, "subs": counts.subs}


def scores_dict(scores: dict[str, MetricResult]) -> dict[str, Any]:
    """Standard scores as plain data: micro counts and rates, macro means, per class."""
    out = {}
    for name, result in scores.items():
        f1, classes = result.macro("f1")
        er, _ = result.macro("error_rate")
        out[name] = {**_counts(result.overall), "error_rate": _number(result.error_rate),
                     "macro": {"f1": _number(f1), "error_rate": _number(er),
                               "classes": classes},
                     "per_class": {c: _counts(v) for c, v in result.per_class.items()}}
        if result.ties is not None:  # collar pairs the two time comparisons decide apart
            out[name]["time_comparison_ties"] = int(result.ties.sum())
    return out


def psds_markdown(result: dict[str, Any]) -> str:
    """PSDS per scenario with every parameter and the rule that computed it, or why it is
    missing."""
    if "note" in result:
        return f"PSDS: not computed ({result['note']})\n"
    first = next(iter(result.values()))
    source = (f"psds_eval's rule, from {first['points']} operating points"
              if first["rule"] == "psds_eval" else "sed_scores_eval, from score files")
    lines = [f"PSDS ({source}; eFPR per hour):", "",
             "| scenario | PSDS | dtc | gtc | cttc | alpha_ct | alpha_st | max_efpr |",
             "|---|---|---|---|---|---|---|---|"]
    for name, value in result.items():
        s = value["settings"]
        interval = value.get("interval")
        bounds = "" if interval is None else f" [{interval['lo']:.4f}, {interval['hi']:.4f}]"
        lines.append(f"| {name} | {value['value']:.4f}{bounds} | {s['dtc']:g} | {s['gtc']:g} | "
                     f"{s['cttc']:g} | {s['alpha_ct']:g} | {s['alpha_st']:g} | "
                     f"{s['max_efpr']:g} |")
    joined = first.get("joined", {})
    if any(joined.values()):
        lines += ["", f"same-class events that overlap, joined into one (psds_eval refuses "
                  f"them): reference {joined['ref']}, operating points {joined['points']}"]
    unit = "detection(s)" if first["rule"] == "psds_eval" else "score table(s)"
    lines += ["", cut_note(first.get("cut"), unit)]
    if "interval" in first:
        i = first["interval"]
        lines.append(f"in brackets: {i['level']:.0%} bootstrap intervals, {i['resamples']} "
                     f"resamples of the clips (seed {i['seed']}), from per-clip counts")
    return "\n".join(lines) + "\n"


def auroc_dict(result: dict[str, Any]) -> dict[str, Any]:
    """Segment-based AUROC as plain data (an undefined value is null)."""
    out = {**{k: v for k, v in result.items() if k != "draws"},
           "mauc": _number(result["mauc"]), "mpauc": _number(result["mpauc"]),
           "per_class": {c: {k: _number(v) for k, v in values.items()}
                         for c, values in result["per_class"].items()}}
    if "intervals" in result:
        out["intervals"] = {name: {k: _number(v) if isinstance(v, float) else v
                                   for k, v in interval.items()}
                            for name, interval in result["intervals"].items()}
    return out


def auroc_markdown(result: dict[str, Any]) -> str:
    """mAUC and mpAUC, then each class's AUROC and partial AUROC (n/a: no positive or no
    negative segment), with the settings and where the durations came from."""
    def show(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:.4f}"

    def bounds(name: str) -> str:
        interval = result.get("intervals", {}).get(name)
        if interval is None:
            return ""
        return f" [{show(interval['lo'])}, {show(interval['hi'])}]"

    s = result["settings"]
    bound = f"{s['max_fpr']:g}"
    intervals = result.get("intervals")
    said = "" if not intervals else (
        f" (in brackets: {intervals['mauc']['level']:.0%} bootstrap intervals, "
        f"{intervals['mauc']['resamples']} resamples of the clips, seed "
        f"{intervals['mauc']['seed']})")
    lines = [f"Segment-based AUROC (sed_scores_eval's rule, from score files; "
             f"{s['segment_length']:g} s segments; durations: {result['durations']}): "
             f"mAUC {show(result['mauc'])}{bounds('mauc')}, mpAUC (max_fpr {bound}) "
             f"{show(result['mpauc'])}{bounds('mpauc')}, the mean over {result['classes']} of "
             f"{len(result['per_class'])} classes{said}", "",
             f"| class | AUROC | partial AUROC (max_fpr {bound}) |", "|---|---|---|"]
    for name, values in result["per_class"].items():
        lines.append(f"| {table_text(name)} | {show(values['auc'])} | "
                     f"{show(values['pauc'])} |")
    return "\n".join(lines) + "\n"


def ranking_dict(comparison: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Paired differences of PSDS and AUROC as plain data (an undefined bound is null)."""
    return {name: {k: _number(v) if isinstance(v, float) else v for k, v in values.items()}
            for name, values in comparison.items()}


def ranking_markdown(comparison: Mapping[str, Mapping[str, Any]], title: str) -> str:
    """One table: each scenario's PSDS, mAUC and mpAUC difference with its paired interval
    (↑/↓ where the interval excludes 0)."""
    first = next(iter(comparison.values()))
    lines = [f"\n## {title} ({first['level']:.0%}, {first['resamples']} paired resamples of "
             f"the clips, seed {first['seed']})\n", "| metric | difference |", "|---|---|"]
    for name, d in comparison.items():
        if math.isnan(d["point"]):
            cell = "vacuous"
        else:
            arrow = " ↑" if d["lo"] > 0 else " ↓" if d["hi"] < 0 else ""
            cell = f"{d['point']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}]{arrow}"
        lines.append(f"| {name} | {cell} |")
    lines.append("\nEach resample draws the same clips for both systems and recomputes each "
                 "one's PSDS and AUROC from its per-clip counts.")
    return "\n".join(lines) + "\n"


def scores_markdown(scores: dict[str, MetricResult]) -> str:
    """One table: F1 micro and macro, error rate, and the counts behind them."""
    def show(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:.3f}"

    lines = ["| score | F1 (micro) | F1 (macro) | error rate | tp / ref / sys |",
             "|---|---|---|---|---|"]
    for name, result in scores.items():
        f1, classes = result.macro("f1")
        o = result.overall
        lines.append(f"| {name} | {show(o.f1)} | {show(f1)} ({classes} classes) | "
                     f"{show(result.error_rate)} | {o.tp} / {o.ref} / {o.sys} |")
    ties = [(n, int(r.ties.sum())) for n, r in scores.items()
            if r.ties is not None and r.ties.sum()]
    for name, count in ties:
        lines.append(f"\n{name}: {count} reference/prediction pair(s) lie exactly on a collar; "
                     "sed_eval's float64 and sed_scores_eval's microsecond comparisons decide "
                     "them differently (--time-comparison)")
    return "\n".join(lines) + "\n"


def to_json(report: GuardReport) -> str:
    return json.dumps(to_dict(report), indent=2, allow_nan=False) + "\n"


def policy_id(policy: dict[str, Any]) -> str:
    """A short digest of how a report measures (its policy section without ``decision``, which
    says how the system made its events): rows measured alike share it."""
    measured = {k: v for k, v in policy.items() if k != "decision"}
    return hashlib.sha256(json.dumps(measured, sort_keys=True).encode()).hexdigest()[:12]


def _show(cell: Cell) -> str:
    if cell.vacuous:
        return "vacuous (0/0)"
    return f"{cell.score:.3f} ({cell.satisfied}/{cell.obligations})"


def _show_macro(mode: ModeReport, name: str) -> str:
    score, classes = mode.macro(name)
    if math.isnan(score):
        return "vacuous"
    return f"{score:.3f} (pooled, no classes)" if classes == 0 and mode.mode == "union" else \
        f"{score:.3f} (mean of {classes} classes)"


def _line(report: GuardReport) -> Callable[[str], str]:
    """A table row of one coordinate or diagnostic, a cell per mode."""
    def line(name: str) -> str:
        cells = [_show(report.modes[m].micro(name)) if report.aggregation == "micro"
                 else _show_macro(report.modes[m], name) for m in report.modes]
        return f"| {name} | {' | '.join(cells)} |"
    return line


def vector_markdown(report: GuardReport) -> str:
    """The guard vector alone: one row per coordinate, a column per mode, then logic."""
    modes = list(report.modes)
    line = _line(report)
    out = [f"| coordinate | {' | '.join(modes)} |", "|---" * (len(modes) + 1) + "|"]
    out += [line(name) for name in report.coordinates]
    logic = [("vacuous" if math.isnan(v) else f"{v:.3f}")
             for v in (report.logic(m) for m in modes)]
    out.append(f"| logic | {' | '.join(logic)} |")
    return "\n".join(out) + "\n"


def markdown_text(text: str) -> str:
    """Text as Markdown: ``&``, ``<``, ``>`` as entities (no HTML gets through from a name),
    line breaks of any kind as spaces."""
    return html.escape(_BREAKS.sub(" ", text), quote=False)


def table_text(text: str) -> str:
    """Text as one Markdown table cell (:func:`markdown_text`, and ``|`` escaped)."""
    return markdown_text(text).replace("|", "\\|")


_BREAKS = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


WIDE_CLASSES = 12   # more classes than this: a row per class instead of a column
SHOWN_CLASSES = 20  # and only the classes with the most reference events, the rest counted


def per_class_markdown(typed: ModeReport, coordinates: Sequence[str],
                       classes: Sequence[str], support: Mapping[str, int]) -> list[str]:
    """The per-class table: a column per class for a few classes; for more, a row per class,
    the :data:`SHOWN_CLASSES` with the most reference events (``support``) first and the number
    left out (every class is in ``--format csv`` and ``json``)."""
    per = {name: typed.per_class(name) for name in coordinates}
    if len(classes) <= WIDE_CLASSES:
        lines = ["Per class (typed):", "",
                 f"| coordinate | {' | '.join(table_text(c) for c in classes)} |",
                 "|---" * (len(classes) + 1) + "|"]
        return lines + [f"| {name} | " + " | ".join(_show(per[name].get(c, Cell(0, 0)))
                                                     for c in classes) + " |"
                        for name in coordinates]
    order = sorted(classes, key=lambda c: (-support.get(c, 0), c))
    shown = order[:SHOWN_CLASSES]
    lines = [f"Per class (typed), the {len(shown)} of {len(classes)} classes with the most "
             "reference events:", "",
             f"| class | {' | '.join(coordinates)} |", "|---" * (len(coordinates) + 1) + "|"]
    lines += [f"| {table_text(c)} | " + " | ".join(_show(per[name].get(c, Cell(0, 0)))
                                                   for name in coordinates) + " |"
              for c in shown]
    if len(order) > len(shown):
        lines += ["", f"{len(order) - len(shown)} more classes not shown: every class is in "
                  "--format csv and json."]
    return lines


def _class_list(classes: Sequence[str]) -> str:
    """The classes, or for many their number and the first few."""
    if len(classes) <= WIDE_CLASSES:
        return ", ".join(classes)
    return f"{len(classes)} classes: {', '.join(classes[:5])}, …"


def to_markdown(report: GuardReport) -> str:
    """Warnings first, then the guard vector (typed and union side by side), logic,
    diagnostics, per-class table, matching audit and policy."""
    of_kind("report", report, GuardReport)
    modes = list(report.modes)
    out = [f"> warning: {markdown_text(w)}" for w in report.traces.get("warnings", [])]
    out += [""] if out else []
    out += vector_markdown(report).splitlines()
    line = _line(report)
    if report.scores is not None:
        settings = report.policy["scores"]
        out += ["", "Standard scores on the same events (typed, class-aware):", "",
                scores_markdown(report.scores).rstrip(),
                f"(collar t_collar {settings['t_collar']:g} s, percentage_of_length "
                f"{settings['percentage_of_length']:g}, {settings['matching']} matching; "
                f"segments {settings['segment']:g} s; boundary tolerance "
                f"{settings['boundary_frames']} frames)"]
    if report.psds is not None:
        out += ["", psds_markdown(report.psds).rstrip()]
    if report.auroc is not None:
        out += ["", auroc_markdown(report.auroc).rstrip()]
    first = report.modes[modes[0]]
    if first.diagnostics:
        out += ["", "Diagnostics (beside the vector, not part of it):", "",
                f"| diagnostic | {' | '.join(modes)} |", "|---" * (len(modes) + 1) + "|"]
        out += [line(name) for name in first.diagnostics]
    classes = report.traces["classes"]
    if "typed" in report.modes and classes:
        events = report.facts.events["ref"].sum(axis=0)
        out += ["", *per_class_markdown(report.modes["typed"], report.coordinates, classes,
                                        dict(zip(report.facts.classes, events.tolist(),
                                                 strict=True)))]
    out.append("")
    for name in modes:
        for m in report.modes[name].matchings.values():
            greedy, exact = int(m.greedy_per_row.sum()), int(m.exact_per_row.sum())
            out.append(f"matching {m.name} ({name}): {m.method}, {m.pairs} pairs; "
                       f"greedy {greedy} vs exact {exact}, greedy short in "
                       f"{len(m.short_rows)} clip×class rows")
    p, t = report.policy, report.traces
    out += [
        f"contract: {markdown_text(p['contract'])} (sha256 {p['contract_sha256'][:12]}), "
        f"eps {p['eps']}; bounds: {'; '.join(p['bounds']) or 'none'}",
        f"grid: hop {p['hop']:g} s, projection {p['projection']}, clip edges {p['edges']}, "
        f"rounding {p['rounding']}; predictions: {p['decision']}",
        f"clips: {t['clips']} (durations: {t['durations']}), classes: "
        f"{markdown_text(_class_list(t['classes'])) or 'none'}; merged events ref "
        f"{t['merged']['ref']} / pred {t['merged']['pred']}, lost to projection ref "
        f"{t['vanished']['ref']} / pred {t['vanished']['pred']}",
        f"aggregation: {report.aggregation}; logic = {p['logic']}, shown after the vector.",
    ]
    return "\n".join(out) + "\n"


def scores_json(report: GuardReport | ScoresReport,
                intervals: Mapping[str, Any] | None = None) -> str:
    """The standard scores of a report with the policy behind them (PSDS and AUROC when
    present, and ``intervals``, already plain data, when given)."""
    data = {"schema_version": SCHEMA_VERSION, "policy": report.policy,
            "scores": scores_dict(report.scores or {})}
    if intervals:
        data |= intervals
    if report.psds is not None:
        data["psds"] = without_curves(report.psds)
    if report.auroc is not None:
        data["auroc"] = auroc_dict(report.auroc)
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def intervals_dict(intervals: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Bootstrap intervals (mode → name → :class:`~sedcontract.resampling.Interval`) as
    plain data."""
    return {mode: {name: {"point": _number(iv.point), "lo": _number(iv.lo),
                          "hi": _number(iv.hi), "level": iv.level, "defined": iv.defined,
                          "resamples": iv.resamples}
                   for name, iv in by_name.items()}
            for mode, by_name in intervals.items()}


def interval_text(iv: Any, signed: bool = False) -> str:
    """``0.871 [0.862, 0.880]``: an interval's point and bounds (``vacuous`` when undefined; a
    signed difference marked ↑ or ↓ when its interval excludes 0)."""
    if iv is None or math.isnan(iv.point):
        return "vacuous"
    f = "+.3f" if signed else ".3f"
    if math.isnan(iv.lo):
        return f"{iv.point:{f}}"
    return f"{iv.point:{f}} [{iv.lo:{f}}, {iv.hi:{f}}]{direction(iv) if signed else ''}"


def direction(iv: Any) -> str:
    """`` ↑`` or `` ↓`` when a difference's interval lies above or below 0, else nothing."""
    return " ↑" if iv.lo > 0 else " ↓" if iv.hi < 0 else ""


def intervals_markdown(intervals: dict[str, dict[str, Any]], seed: int,
                       title: str = "Bootstrap intervals", signed: bool = False) -> str:
    """One table: each coordinate, logic and standard score, per mode, with its interval."""
    modes = list(intervals)
    names = list(dict.fromkeys(n for by_name in intervals.values() for n in by_name))
    first = next(iter(next(iter(intervals.values())).values()))

    lines = [f"\n## {title} ({first.level:.0%}, {first.resamples} resamples of the "
             f"clips, seed {seed})\n",
             "| | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for name in names:  # "—": not measured in that column (a standard score under a mode)
        lines.append(f"| {name} | " + " | ".join(
            interval_text(intervals[m][name], signed) if name in intervals[m] else "—"
            for m in modes) + " |")
    lines.append("\nEach resample draws the clips with replacement and recomputes every score "
                 "from the per-clip counts: the spread over test sets like this one, not over "
                 "retrainings of the system.")
    return "\n".join(lines) + "\n"
