"""Contract selection under a written risk order: on a calibration set (clips with labelled
failure kinds), the smallest set of guard coordinates, each with a threshold, that flags every
high-risk case and no low-risk case.

A clip is flagged by coordinate ``c`` when its score on ``c`` is below ``τ_c``; a vacuous score
(no obligations) never flags. Each ``τ_c`` is the lowest score of ``c`` on a low-risk case (so
no low-risk case is ever flagged) — the rule is the same whether or not a perfect separation
exists. Subsets are searched exhaustively, smallest first; ties go to the subset whose
coordinates rank highest in the risk order. When no subset flags every high-risk case, the
declared objective is: no low-risk case flagged, as many high-risk cases flagged as possible,
then fewest coordinates, then the risk order — and the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import yaml

from sedcontract.contracts.parser import parse_contract
from sedcontract.contracts.printer import format_contract
from sedcontract.contracts.syntax import Contract, EventClause, FrameClause, Match
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.guard.report import GuardReport
from sedcontract.traces.documents import compose_yaml
from sedcontract.traces.tsv import clip_id, read_fields

__all__ = ["Case", "RiskOrder", "Selection", "read_labels", "read_risk_order", "select",
           "selected_contract", "selection_markdown"]

MAX_COORDINATES = 20  # 2^20 subsets: the exhaustive search stays under a second or two


@dataclass(frozen=True)
class RiskOrder:
    """Failure kinds from most to least harmful (pathology and coordinate names), and the
    kinds above the cut (high risk)."""

    order: tuple[str, ...]
    high: frozenset[str]
    path: str = "<risk order>"
    targets: tuple[tuple[str, float], ...] = ()  # a kind's least acceptable score, if given

    def rank(self, name: str) -> int:
        return self.order.index(name) if name in self.order else len(self.order)


@dataclass(frozen=True)
class Case:
    """One calibration clip: its failure kind and severity, and whether it is high risk."""

    clip: str
    pathology: str
    severity: str
    high: bool


def read_risk_order(path: str | Path, known: Sequence[str]) -> RiskOrder:
    """A YAML risk order: ``order: [kind, …]`` (most harmful first) and ``high: N`` (the first
    N are high risk) or ``high: [kind, …]``, and optionally ``targets: {kind: score, …}`` (the
    least acceptable score of kinds in the order, each in [0, 1]), each key once. Names are
    read as written (a bare ``false`` is the kind, not a Boolean). Every kind must be a known
    pathology or coordinate; errors name the file and line."""
    where = str(path)
    root = compose_yaml(path, "risk order")
    nodes: dict[str, yaml.Node] = {}
    lines: dict[str, int] = {}
    for key, value in root.value if isinstance(root, yaml.MappingNode) else ():
        name = key.value if isinstance(key, yaml.ScalarNode) else "?"
        line = key.start_mark.line + 1
        if name in nodes:
            raise TraceFormatError(f"{name!r} is given twice (first at line {lines[name]})",
                                   path=where, row=line)
        if name not in ("order", "high", "targets"):
            raise TraceFormatError(f"unknown key {name!r}; a risk order has the keys order, "
                                   "high and (optionally) targets", path=where, row=line)
        nodes[name], lines[name] = value, line
    if "order" not in nodes or "high" not in nodes:
        raise TraceFormatError("a risk order has 'order: [kinds, most harmful first]' and "
                               "'high: N' (or a list of the high-risk kinds)", path=where)

    def names(node: yaml.Node, what: str) -> list[tuple[str, int]]:
        if not isinstance(node, yaml.SequenceNode) or not node.value or \
                not all(isinstance(n, yaml.ScalarNode) for n in node.value):
            raise TraceFormatError(f"'{what}' must be a non-empty list of names", path=where,
                                   row=node.start_mark.line + 1)
        return [(n.value, n.start_mark.line + 1) for n in node.value]

    order = names(nodes["order"], "order")
    for name, line in order:
        if name not in known:
            raise TraceFormatError(f"unknown pathology or coordinate {name!r}; known: "
                                   f"{', '.join(sorted(known))}", path=where, row=line)
    kinds = [name for name, _ in order]
    twice = [k for k in dict.fromkeys(kinds) if kinds.count(k) > 1]
    if twice:
        raise TraceFormatError(f"{twice[0]!r} is listed twice in 'order'", path=where,
                               row=nodes["order"].start_mark.line + 1)
    node = nodes["high"]
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        if not node.value.isdigit() or not 0 < int(node.value) < len(kinds):
            raise TraceFormatError(f"'high: {node.value}' must be a whole number that leaves at "
                                   f"least one kind on each side of the cut (1 … "
                                   f"{len(kinds) - 1}), or a list of kinds", path=where,
                                   row=line)
        high = kinds[:int(node.value)]
    else:
        high = [name for name, _ in names(node, "high")]
        stray = [k for k in high if k not in kinds]
        if stray:
            raise TraceFormatError(f"high-risk kind {stray[0]!r} is not in 'order'", path=where,
                                   row=line)
        if len(set(high)) == len(kinds):
            raise TraceFormatError("every kind is high risk: nothing to separate from",
                                   path=where, row=line)
    targets = _targets(nodes["targets"], kinds, where) if "targets" in nodes else ()
    return RiskOrder(tuple(kinds), frozenset(high), where, targets)


def _targets(node: yaml.Node, kinds: Sequence[str], where: str, among: str = "'order'"
             ) -> tuple[tuple[str, float], ...]:
    """``targets: {kind: score}`` of a risk order: kinds of its order (``among`` names them),
    scores in [0, 1]."""
    if not isinstance(node, yaml.MappingNode) or not node.value:
        raise TraceFormatError("'targets' must map kinds to their least score, e.g. "
                               "{missed: 0.8, onset: 0.5}", path=where,
                               row=node.start_mark.line + 1)
    out: dict[str, float] = {}
    for key, value in node.value:
        line = key.start_mark.line + 1
        name = key.value if isinstance(key, yaml.ScalarNode) else "?"
        try:
            number = float(value.value) if isinstance(value, yaml.ScalarNode) else math.nan
        except ValueError:
            number = math.nan
        if name not in kinds:
            raise TraceFormatError(f"target {name!r} is not in {among}", path=where, row=line)
        if name in out:
            raise TraceFormatError(f"target {name!r} is given twice", path=where, row=line)
        if not 0 <= number <= 1:
            raise TraceFormatError(f"target {name!r} must be a score in [0, 1]", path=where,
                                   row=line)
        out[name] = number
    return tuple(out.items())


@dataclass(frozen=True)
class Targets:
    """Least scores to certify: ``every`` class's, and ``classes``' own (added or overriding),
    as ``((kind, score), …)``."""

    every: tuple[tuple[str, float], ...]
    classes: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    def mappings(self) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        """Every class's targets and each named class's own, as mappings."""
        return dict(self.every), {c: dict(t) for c, t in self.classes}


def read_targets(path: str | Path, known: Sequence[str]) -> Targets:
    """A targets file: a risk order with ``targets:`` (its targets), or a file with just
    ``targets: {kind: score}`` and, optionally, ``classes: {class: {kind: score}}`` (a class's
    own targets). Kinds must be among ``known``; errors name the file and line."""
    where = str(path)
    root = compose_yaml(path, "targets file")
    nodes = {key.value: (key, value) for key, value in root.value
             if isinstance(key, yaml.ScalarNode)} if isinstance(root, yaml.MappingNode) else {}
    if "order" in nodes:
        risk = read_risk_order(path, known)
        if not risk.targets:
            raise TraceFormatError("the risk order gives no targets; add, e.g., targets: "
                                   "{missed: 0.8, \"false\": 0.8, onset: 0.5}", path=where)
        return Targets(risk.targets)
    among = f"the coordinates ({', '.join(known)})"
    for name, (key, _) in nodes.items():
        if name not in ("targets", "classes"):
            raise TraceFormatError(f"unknown key {name!r}; a targets file has targets: and "
                                   "classes: (or is a risk order with order, high and targets)",
                                   path=where, row=key.start_mark.line + 1)
    if not nodes:
        raise TraceFormatError("a targets file maps targets: {kind: least score} (and, "
                               "optionally, classes: {class: {kind: least score}})", path=where)
    every = _targets(nodes["targets"][1], known, where, among) if "targets" in nodes else ()
    classes = []
    if "classes" in nodes:
        node = nodes["classes"][1]
        if not isinstance(node, yaml.MappingNode) or not node.value:
            raise TraceFormatError("'classes' must map class names to their targets, e.g. "
                                   "{Speech: {missed: 0.95}}", path=where,
                                   row=node.start_mark.line + 1)
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.value in dict(classes):
                raise TraceFormatError("each class is named once, as text", path=where,
                                       row=key.start_mark.line + 1)
            classes.append((key.value, _targets(value, known, where, among)))
    return Targets(every, tuple(classes))


def read_labels(path: str | Path, clips: Sequence[str]) -> list[tuple[str, str, str]]:
    """``labels.tsv`` of a calibration set (``filename source_clip pathology severity``):
    ``(clip, pathology, severity)`` rows; a row naming a clip the reference lacks is an error
    naming its line."""
    known = set(clips)
    table = read_fields(Path(path))
    if not table or table[0][1][:4] != ["filename", "source_clip", "pathology", "severity"]:
        raise TraceFormatError("expected the header 'filename source_clip pathology "
                               "severity' (sedcontract data pathologies writes it)",
                               path=str(path), row=table[0][0] if table else 1)
    rows, lines = [], {}
    for line, row in table[1:]:
        if len(row) < 4:
            raise TraceFormatError(f"expected 4 columns, got {len(row)}", path=str(path),
                                   row=line)
        clip = clip_id(row[0])
        if clip not in known:
            raise TraceFormatError(f"clip {clip!r} is labelled but not in the calibration "
                                   "reference", path=str(path), row=line, column="filename")
        if clip in lines:
            raise TraceFormatError(f"clip {clip!r} is labelled twice (first at row "
                                   f"{lines[clip]})", path=str(path), row=line)
        lines[clip] = line
        rows.append((clip, row[2], row[3]))
    return rows


@dataclass(frozen=True)
class Choice:
    """One coordinate's threshold and what it flags on the calibration cases."""

    name: str
    threshold: float          # flag a clip whose score is below this
    flags: frozenset[str]     # high-risk clips it flags
    lowest_low: float         # the lowest score of a low-risk case (NaN: none has a score)


@dataclass(frozen=True)
class Selection:
    """The chosen coordinates with thresholds, every coordinate's choice, the cases and
    whether the separation is perfect."""

    chosen: tuple[str, ...]
    choices: dict[str, Choice]
    cases: tuple[Case, ...]
    perfect: bool
    risk: RiskOrder
    mode: str
    skipped: dict[str, int]   # pathologies of the calibration set the risk order does not name

    @property
    def unflagged(self) -> list[str]:
        covered = set().union(*(self.choices[c].flags for c in self.chosen)) if self.chosen \
            else set()
        return [c.clip for c in self.cases if c.high and c.clip not in covered]


def select(report: GuardReport, labels: Sequence[tuple[str, str, str]], risk: RiskOrder, *,
           mode: str = "typed", coordinates: Sequence[str] | None = None) -> Selection:
    """The smallest separating coordinate set (see the module text) on ``report`` (an audit of
    the calibration set) and its ``labels``, among ``coordinates`` (default: every clause)."""
    if mode not in report.modes:
        raise SedContractError(f"the report has no {mode!r} trace mode")
    modes = report.modes[mode]
    names = (*report.coordinates, *modes.diagnostics)
    if coordinates is not None:
        unknown = [n for n in coordinates if n not in names]
        if unknown or len(set(coordinates)) < len(coordinates) or not coordinates:
            raise SedContractError(f"coordinates {', '.join(coordinates) or '(none)'}: name "
                                   f"each once, among the contract's {', '.join(names)}")
        names = tuple(n for n in names if n in coordinates)
    if len(names) > MAX_COORDINATES:
        raise SedContractError(f"{len(names)} coordinates: the exhaustive search covers at most "
                               f"{MAX_COORDINATES}; name at most {MAX_COORDINATES} of them to "
                               "search among (sedcontract select --coordinates a,b,...)")
    skipped: dict[str, int] = {}
    cases = []
    for clip, pathology, severity in labels:
        if pathology not in risk.order:
            skipped[pathology] = skipped.get(pathology, 0) + 1
            continue
        cases.append(Case(clip, pathology, severity, pathology in risk.high))
    if not any(c.high for c in cases) or all(c.high for c in cases):
        raise SedContractError("the calibration set needs cases on both sides of the cut; the "
                               f"risk order {risk.path} names pathologies with "
                               f"{sum(c.high for c in cases)} high-risk and "
                               f"{sum(not c.high for c in cases)} low-risk cases")
    scores = {name: {clip: cell.score for clip, cell in modes.per_clip(name).items()}
              for name in names}
    choices = {}
    for name in names:
        low = [scores[name].get(c.clip, math.nan) for c in cases if not c.high]
        low = [s for s in low if not math.isnan(s)]
        lowest = min(low) if low else math.nan
        threshold = lowest if low else 1.0
        flags = frozenset(c.clip for c in cases if c.high and
                          scores[name].get(c.clip, math.nan) < threshold)
        choices[name] = Choice(name, threshold, flags, lowest)
    high = {c.clip for c in cases if c.high}
    ranked = sorted(names, key=lambda n: (risk.rank(n), names.index(n)))
    best: tuple[Any, ...] | None = None
    for size in range(1, len(names) + 1):
        for subset in combinations(ranked, size):  # in risk order: the first found wins ties
            covered = set().union(*(choices[n].flags for n in subset))
            key = (-len(covered & high), size)
            if best is None or key < best[0]:
                best = (key, subset)
        if best is not None and -best[0][0] == len(high):
            break  # a perfect subset of this size: no larger one can be smaller
    assert best is not None
    (_, size), subset = best
    # drop coordinates that flag nothing the others do not (a size-1 search may pick one)
    chosen = tuple(n for n in subset if choices[n].flags)
    covered = set().union(*(choices[n].flags for n in chosen)) if chosen else set()
    return Selection(chosen, choices, tuple(cases), covered >= high, risk, mode, skipped)


def selected_contract(contract: Contract, selection: Selection) -> str:
    """The source contract restricted to the chosen coordinates (diagnostics among them become
    clauses), with the thresholds and how they were found in its header."""
    keep = set(selection.chosen)
    used = {s.match for s in contract.clauses if isinstance(s, EventClause) and s.name in keep}
    statements = []
    for statement in contract.statements:
        if isinstance(statement, FrameClause | EventClause):
            if statement.name in keep:
                statements.append(replace(statement, diagnostic=False))
        elif not isinstance(statement, Match) or statement.name in used:
            statements.append(statement)
    body = format_contract(Contract(tuple(statements)))
    parse_contract(body)  # what is written must run (a check, not a transformation)
    n_high = sum(c.high for c in selection.cases)
    high = ", ".join(k for k in selection.risk.order if k in selection.risk.high)
    lines = [f"# Selected from {Path(contract.name).name} on a calibration set of "
             f"{len(selection.cases)} cases ({n_high} high risk), {selection.mode} traces,",
             f"# under the risk order {selection.risk.path}:",
             f"#   {' > '.join(selection.risk.order)} (high risk: {high})",
             "# A clip fails the contract when a coordinate scores below its threshold:"]
    for name in selection.chosen:
        lines.append(f"#   {name} < {selection.choices[name].threshold:.6g}")
    if not selection.perfect:
        lines.append(f"# Not a perfect separation: {len(selection.unflagged)} high-risk "
                     "case(s) pass (best under: no low-risk case flagged, most high-risk "
                     "cases flagged).")
    return "\n".join(lines) + "\n\n" + body


def selection_markdown(selection: Selection) -> str:
    """Why each coordinate was kept or dropped, and the outcome."""
    n_high = sum(c.high for c in selection.cases)
    out = [f"Selection on {len(selection.cases)} calibration cases ({n_high} high risk, "
           f"{len(selection.cases) - n_high} low risk), {selection.mode} traces.", ""]
    if selection.perfect:
        out.append(f"Perfect separation with {len(selection.chosen)} coordinate(s): "
                   f"{', '.join(selection.chosen)}.")
    else:
        out.append(f"No subset flags every high-risk case without flagging a low-risk one. "
                   f"Best under the declared objective (no low-risk case flagged, most "
                   f"high-risk cases flagged, then fewest coordinates, then the risk order): "
                   f"{', '.join(selection.chosen) or 'none'}; "
                   f"{len(selection.unflagged)} high-risk case(s) pass: "
                   f"{', '.join(selection.unflagged[:10])}"
                   + (" …" if len(selection.unflagged) > 10 else "") + ".")
    if selection.skipped:
        out.append("Not in the risk order (left out): " + ", ".join(
            f"{k} ({v} cases)" for k, v in sorted(selection.skipped.items())) + ".")
    out += ["", "| coordinate | risk rank | threshold | lowest low-risk score | high-risk cases "
            "flagged | decision |", "|---|---|---|---|---|---|"]
    covered_by_others = {}
    for name in selection.chosen:
        others = set().union(*(selection.choices[n].flags for n in selection.chosen
                               if n != name)) if len(selection.chosen) > 1 else set()
        covered_by_others[name] = selection.choices[name].flags - others
    for name, choice in sorted(selection.choices.items(),
                               key=lambda kv: (selection.risk.rank(kv[0]), kv[0])):
        rank = selection.risk.rank(name)
        shown_rank = str(rank + 1) if rank < len(selection.risk.order) else "-"
        low = "none scored" if math.isnan(choice.lowest_low) else f"{choice.lowest_low:.4f}"
        if name in selection.chosen:
            why = f"kept: the only one to flag {len(covered_by_others[name])} case(s)"
        elif not choice.flags:
            why = "dropped: flags no high-risk case below the lowest low-risk score"
        else:
            why = "dropped: its cases are flagged by the kept coordinates (or a smaller set)"
        out.append(f"| {name} | {shown_rank} | {choice.threshold:.4f} | {low} | "
                   f"{len(choice.flags)} / {n_high} | {why} |")
    return "\n".join(out) + "\n"


def known_kinds(pathologies: Mapping[str, Any], report: GuardReport, mode: str) -> list[str]:
    """Names a risk order may use: pathologies and the report's coordinates."""
    return sorted({*pathologies, *report.coordinates, *report.modes[mode].diagnostics})
