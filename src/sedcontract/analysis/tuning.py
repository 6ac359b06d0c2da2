"""Per-class post-processing tuned on validation data for a named objective: each candidate
decision (a threshold and a median filter, the same for every class) is applied to the score
tables, the objective is read per class, and each class keeps the candidate that serves it
best. The objective is a standard score's per-class F1 (``event``: collar, ``intersection``,
``segment``, ``frame``), a guard coordinate of the typed vector (``onset``, ``offset``, …),
``logic`` (the mean of a class's non-vacuous coordinates), or ``risk``: the mean of a risk
order's high-risk kinds (coordinates or diagnostics of the contract, e.g. missed, leakage,
false), so the failures the consumer can least afford are the ones kept rarest. Classes are
independent under all of them (a class's score reads only its own events), so the per-class
choices compose.

Ties go to the smaller median filter, then to the threshold nearest the global default (0.5):
the choice is deterministic. A class whose objective is vacuous at every candidate (no
reference events in validation) keeps the best global setting, and is named."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sedcontract.analysis.selection import RiskOrder
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings, audit, score
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy, odd_length
from sedcontract.traces.given import TableMapping, detections, durations_of, events_of
from sedcontract.traces.given import score_source as table_source

F1_OBJECTIVES = ("event", "intersection", "segment", "frame")
RISK = "risk"  # the mean of a risk order's high-risk kinds
DEFAULT_THRESHOLDS = tuple(round(0.1 * k, 1) for k in range(1, 10))
DEFAULT_FILTERS = (0.0, 0.1, 0.2, 0.4)


@dataclass(frozen=True)
class Tuning:
    """What tuning found: the per-class decision and the best single one, each candidate's
    per-class value (``values[k, c]`` for ``candidates[k]``), and the macro objective (mean
    over the classes where it is defined) of the default, global and tuned decisions."""

    objective: str
    classes: tuple[str, ...]
    candidates: tuple[tuple[float, float], ...]   # (threshold, median filter)
    values: np.ndarray
    decision: DecisionPolicy
    global_decision: DecisionPolicy
    chosen: tuple[int, ...]                         # each class's candidate
    vacuous: tuple[str, ...]
    snapped: tuple[tuple[float, float], ...] = ()  # (asked, used) median filters, and
    hop: float | None = None                       # the frames they were snapped to

    @property
    def global_index(self) -> int:
        return self.candidates.index((self.global_decision.threshold,
                                      self.global_decision.median_filter))

    def macro(self, which: str) -> float:
        """The macro objective of ``default`` (threshold 0.5, no filter, when a candidate),
        ``global`` or ``tuned``."""
        if which == "tuned":
            row = np.array([self.values[k, c] for c, k in enumerate(self.chosen)])
        elif which == "global":
            row = self.values[self.global_index]
        elif (0.5, 0.0) in self.candidates:
            row = self.values[self.candidates.index((0.5, 0.0))]
        else:  # the default was not among the candidates
            return math.nan
        defined = row[~np.isnan(row)]
        return float(defined.mean()) if len(defined) else math.nan


def objective_names(policy: AuditPolicy) -> tuple[str, ...]:
    """The objectives a policy offers: the F1 scores, its contract's coordinates, logic and
    a risk order's high-risk kinds."""
    from sedcontract.guard.pipeline import clause_names

    return (*F1_OBJECTIVES, *clause_names(policy.parsed)[0], "logic", RISK)


def risk_kinds(policy: AuditPolicy, risk: RiskOrder | None) -> tuple[str, ...]:
    """The high-risk kinds of ``risk`` in its order, each a coordinate or diagnostic of the
    policy's contract (a pathology name that is neither is refused: tuning reads scores)."""
    from sedcontract.guard.pipeline import clause_names

    if risk is None:
        raise SedContractError("the objective risk needs a risk order (--risk-order FILE)")
    coordinates, diagnostics, _ = clause_names(policy.parsed)
    kinds = tuple(k for k in risk.order if k in risk.high)
    unknown = [k for k in kinds if k not in (*coordinates, *diagnostics)]
    if unknown:
        raise SedContractError(f"{risk.path}: the high-risk kind(s) {', '.join(unknown)} are "
                               "no coordinate or diagnostic of the contract, so tuning cannot "
                               f"score them (it knows {', '.join((*coordinates, *diagnostics))})")
    return kinds


def class_values(ref: EventList, events: EventList, policy: AuditPolicy, objective: str,
                 classes: Sequence[str], durations: Mapping[str, float] | None,
                 kinds: Sequence[str] = ()) -> np.ndarray:
    """The objective per class (NaN where vacuous) of one candidate's events (``kinds``: the
    high-risk kinds the objective ``risk`` averages)."""
    if objective in F1_OBJECTIVES:
        report = score(ref, events, policy.but(scores=policy.scores or ScoreSettings()),
                       durations=durations, classes=classes)
        per = report.scores[objective].per_class
        return np.array([per[c].f1 for c in classes], dtype=np.float64)
    report = audit(ref, events, policy, durations=durations, mode="typed", classes=classes)
    typed = report.modes["typed"]
    names = report.coordinates if objective == "logic" else tuple(kinds) \
        if objective == RISK else (objective,)
    cells = {name: typed.per_class(name) for name in names}
    out = []
    for c in classes:
        scores = [cells[name][c].score for name in names if not cells[name][c].vacuous]
        out.append(float(np.mean(scores)) if scores else math.nan)
    return np.array(out, dtype=np.float64)


def tune(ref: Any, scores: Any, durations: Any, objective: str, *,
         policy: AuditPolicy | None = None, thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
         median_filters: Sequence[float] = DEFAULT_FILTERS,
         classes: Sequence[str] | None = None, where: str = "scores",
         risk: RiskOrder | None = None, median_edge: str = "reflect",
         snap: bool = True) -> Tuning:
    """Tune each class's threshold and median filter on ``scores`` (a folder, a table source
    or clip → DataFrame) against ``ref`` for ``objective`` (higher is better); ``policy``
    measures (its contract, hop, score settings); ``risk``: the risk order of the objective
    ``risk``. The filters are applied with ``median_edge``; with ``snap`` each is first
    snapped to an odd number of the tables' frames."""
    policy = policy or AuditPolicy()
    names = objective_names(policy)
    if objective not in names:
        raise SedContractError(f"unknown objective {objective!r}; choose one of "
                               f"{', '.join(names)}")
    if risk is not None and objective != RISK:
        raise SedContractError(f"a risk order is the objective risk's; --objective {objective} "
                               "does not read it")
    kinds = risk_kinds(policy, risk) if objective == RISK else ()
    thresholds = sorted({float(t) for t in thresholds})
    median_filters = sorted({float(m) for m in median_filters})
    if not thresholds or not median_filters:
        raise SedContractError("tuning needs at least one threshold and one median filter")
    if any(not math.isfinite(t) for t in thresholds) or any(
            not math.isfinite(m) or m < 0 for m in median_filters):
        raise SedContractError("thresholds must be finite numbers and median filters "
                               "non-negative seconds")
    ref = events_of(ref, "ref")
    durations = durations_of(durations)
    source = table_source(scores, ref.clips)
    if classes is not None:  # the chosen classes' columns and reference events alone
        source = source.only(classes)
        ref = EventList.from_rows([r for r in ref.to_rows() if r[3] in classes],
                                  clips=ref.clips, path=ref.path)
    # every table read once, then decided under each candidate from memory
    tables = TableMapping(dict(source.tables()))
    names_of = tuple(tables.columns)
    hops = sorted({table.hop for table, _ in tables.mapping.values()})
    snapped: tuple[tuple[float, float], ...] = ()
    if snap and len(hops) == 1:  # odd frame counts: a median filter centred on its frame
        snapped = tuple((m, odd_length(m, hops[0])) for m in median_filters)
        median_filters = sorted({used for _, used in snapped})
    candidates = tuple((t, m) for m in median_filters for t in thresholds)
    values = np.empty((len(candidates), len(names_of)))
    for k, (t, m) in enumerate(candidates):
        events = detections(tables, ref, DecisionPolicy(threshold=t, median_filter=m,
                                                        median_edge=median_edge), where)
        values[k] = class_values(ref, events, policy, objective, names_of, durations, kinds)
    tuning = choose(objective, names_of, candidates, values)
    return replace(tuning, decision=replace(tuning.decision, median_edge=median_edge),
                   global_decision=replace(tuning.global_decision, median_edge=median_edge),
                   snapped=tuple(pair for pair in snapped if pair[0] != pair[1]),
                   hop=hops[0] if len(hops) == 1 else None)


def choose(objective: str, classes: tuple[str, ...], candidates: tuple[tuple[float, float], ...],
           values: np.ndarray) -> Tuning:
    """Each class's best candidate and the best single one (by the macro objective), with the
    module's tie rule."""
    def rank(k: int, value: float) -> tuple:
        t, m = candidates[k]
        return (-value, m, round(abs(t - 0.5), 9), t)

    with np.errstate(invalid="ignore"):
        macro = np.array([np.nanmean(row) if (~np.isnan(row)).any() else np.nan
                          for row in values])
    if np.isnan(macro).all():
        raise SedContractError(f"the objective {objective!r} is vacuous for every class at "
                               "every candidate (no reference events?)")
    best = min((k for k in range(len(candidates)) if not np.isnan(macro[k])),
               key=lambda k: rank(k, macro[k]))
    chosen, vacuous = [], []
    for c, name in enumerate(classes):
        column = values[:, c]
        defined = [k for k in range(len(candidates)) if not np.isnan(column[k])]
        if not defined:
            chosen.append(best)
            vacuous.append(name)
            continue
        chosen.append(min(defined, key=lambda k: rank(k, column[k])))
    global_t, global_m = candidates[best]
    decision = DecisionPolicy(threshold=global_t, median_filter=global_m, classes={
        name: {"threshold": candidates[k][0], "median_filter": candidates[k][1]}
        for name, k in zip(classes, chosen, strict=True) if k != best})
    return Tuning(objective, classes, candidates, values, decision,
                  DecisionPolicy(threshold=global_t, median_filter=global_m), tuple(chosen),
                  tuple(vacuous))


def tuning_markdown(tuning: Tuning) -> str:
    """Each class's tuned setting and value beside the best global setting's and the
    default's, and the macro objective of each."""
    def show(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:.3f}"

    g = tuning.global_index
    has_default = (0.5, 0.0) in tuning.candidates
    d = tuning.candidates.index((0.5, 0.0)) if has_default else None
    gt, gm = tuning.candidates[g]
    lines = [f"Tuned for {tuning.objective} per class on {len(tuning.candidates)} candidates "
             f"(best single setting: threshold {gt:g}, median filter {gm:g} s)", ""]
    if tuning.snapped and tuning.hop is not None:
        lines += ["Median filters snapped to odd frame counts of "
                  f"{tuning.hop * 1000:g} ms (an even count is off-centre): " + ", ".join(
                      f"{asked:g} s → " + (f"{used:g} s ({round(used / tuning.hop)} frames)"
                                           if used else "off (1 frame)")
                      for asked, used in tuning.snapped), ""]
    lines += ["| class | threshold | median filter (s) | tuned | global | default (0.5, 0 s) |",
              "|---|---|---|---|---|---|"]
    for c, name in enumerate(tuning.classes):
        k = tuning.chosen[c]
        t, m = tuning.candidates[k]
        note = " (vacuous: global kept)" if name in tuning.vacuous else ""
        lines.append(f"| {name}{note} | {t:g} | {m:g} | {show(tuning.values[k, c])} | "
                     f"{show(tuning.values[g, c])} | "
                     f"{show(tuning.values[d, c]) if d is not None else 'n/a'} |")
    lines.append(f"| macro | | | {show(tuning.macro('tuned'))} | {show(tuning.macro('global'))}"
                 f" | {show(tuning.macro('default')) if has_default else 'n/a'} |")
    return "\n".join(lines) + "\n"
