"""The declared decision policy that turns frame scores into events, for all classes or class by
class (as every DCASE recipe post-processes): an optional median filter, then a threshold
(active iff score > threshold), optionally with hysteresis (a run, once above the threshold,
continues while the score stays at or above ``low``). A decision file (YAML) holds it::

    threshold: 0.5          # every class not named below
    median_filter: 0.2s     # a time with its unit, or seconds
    low: null               # hysteresis off
    classes:
      Speech: {threshold: 0.3, median_filter: 0.45s}
      Dog: {threshold: 0.6, low: 0.4}

``sedcontract certify`` adds a ``certificate`` section (the guarantee and its numbers): a
record the reader checks is a mapping and otherwise leaves alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.numbers import is_number
from sedcontract.traces.times import seconds, spell

SETTINGS = ("threshold", "median_filter", "low")  # what a class may set for itself
# scipy.ndimage's modes past a clip's edges; DESED_task's class-wise filter takes its default
MEDIAN_EDGES = ("reflect", "nearest", "mirror", "constant", "wrap")


def _number(value: Any, what: str, *, finite: bool = True) -> float:
    if not is_number(value, numpy=True) or \
            (finite and not math.isfinite(value)):
        raise TraceFormatError(f"{what} must be a {'finite ' if finite else ''}number, got "
                               f"{value!r}")
    return float(value)


def _seconds(value: Any, what: str) -> float:
    """A median-filter length: seconds, or a text with its unit (``200ms``)."""
    value = seconds(value, what) if isinstance(value, str) else _number(value, what)
    if value < 0:
        raise TraceFormatError(f"{what} must be a non-negative number of seconds, got "
                               f"{value!r}")
    return value


OFF = "off"  # a class's ``low``: no hysteresis for it, whatever the policy's


@dataclass(frozen=True)
class ClassDecision:
    """One class's own settings; None keeps the policy's (``low="off"``: no hysteresis for
    this class even where the policy has one)."""

    threshold: float | None = None
    median_filter: float | None = None
    low: float | None = None

    @classmethod
    def of(cls, value: ClassDecision | Mapping[str, Any], name: str) -> ClassDecision:
        if isinstance(value, ClassDecision):
            return value
        if not isinstance(value, Mapping):
            raise TraceFormatError(f"decision for class {name!r} must map threshold, "
                                   f"median_filter or low to a value, got {value!r}")
        unknown = sorted(set(value) - set(SETTINGS))
        if unknown:
            raise TraceFormatError(f"unknown decision setting(s) {unknown} for class {name!r}; "
                                   f"a class may set {', '.join(SETTINGS)}")
        def setting(key: str, v: Any) -> Any:
            if v is None:
                return None
            if key == "low" and (v is False or v == OFF):  # YAML reads a bare off as false
                return OFF
            if key == "median_filter":
                return _seconds(v, f"median filter of class {name!r}")
            return _number(v, f"{key} of class {name!r}")

        return cls(**{k: setting(k, v) for k, v in value.items()})


@dataclass(frozen=True)
class Resolved:
    """A policy laid on some classes: per class, the threshold, the median filter (seconds)
    and the hysteresis low (NaN: none)."""

    threshold: np.ndarray
    median_filter: np.ndarray
    low: np.ndarray


@dataclass(frozen=True)
class DecisionPolicy:
    """How scores become events; part of every report. ``classes`` overrides the settings
    of some classes (a mapping of class → :class:`ClassDecision` or its settings, kept sorted
    by class)."""

    threshold: float = 0.5
    median_filter: float = 0.0  # seconds; 0 = off
    source: str = ""            # what made the scores (e.g. a detector's sigmoid), if known
    low: float | None = None    # hysteresis: a run continues while score >= low; None = off
    classes: Any = field(default=())  # ((class, ClassDecision), …)
    median_edge: str = "reflect"  # the median filter's edge rule: scipy's mode (DESED_task's)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TraceFormatError(f"the decision's source must be text, got {self.source!r}")
        if self.median_edge not in MEDIAN_EDGES:
            raise TraceFormatError(f"unknown median filter edge rule {self.median_edge!r}; "
                                   f"choose one of {', '.join(MEDIAN_EDGES)}")
        if self.low is not None:
            _number(self.low, "the hysteresis threshold (decision low)")
        _number(self.threshold, "decision threshold")
        _number(self.median_filter, "decision median_filter")
        if self.median_filter < 0:
            raise TraceFormatError(f"median filter must be a non-negative number of seconds, "
                                   f"got {self.median_filter!r}")
        given = self.classes
        if isinstance(given, Mapping):
            given = tuple(given.items())
        if not isinstance(given, tuple | list):
            raise TraceFormatError(f"decision classes must map class names to settings, got "
                                   f"{given!r}")
        pairs = []
        for item in given:
            if not (isinstance(item, tuple | list) and len(item) == 2
                    and isinstance(item[0], str) and item[0]):
                raise TraceFormatError(f"decision classes must map class names to settings, "
                                       f"got {item!r}")
            pairs.append((item[0], ClassDecision.of(item[1], item[0])))
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise TraceFormatError("the decision names a class twice")
        object.__setattr__(self, "classes", tuple(sorted(pairs)))
        for name, own in ((None, ClassDecision()), *self.classes):
            threshold, _, low = self.settings_of(name, own)
            if low is not None and low > threshold:
                whose = f"of class {name!r} (low" if name else "(decision low"
                raise TraceFormatError(f"the hysteresis threshold {whose}, {low:g}) must not "
                                       f"exceed the decision threshold ({threshold:g})")

    def settings_of(self, name: str | None, own: ClassDecision | None = None
                    ) -> tuple[float, float, float | None]:
        """``(threshold, median_filter, low)`` of class ``name`` (its own, else the policy's)."""
        if own is None:
            own = dict(self.classes).get(name, ClassDecision())
        low = self.low if own.low is None else (None if own.low == OFF else own.low)
        return (self.threshold if own.threshold is None else own.threshold,
                self.median_filter if own.median_filter is None else own.median_filter, low)

    @property
    def per_class(self) -> bool:
        return bool(self.classes)

    def resolve(self, classes: Sequence[str]) -> Resolved:
        """The settings of each of ``classes``; a class the policy names that is not among
        them is refused (its settings would silently do nothing)."""
        unknown = [n for n, _ in self.classes if n not in classes]
        if unknown:
            raise TraceFormatError(f"the decision sets class {unknown[0]!r}, which the scores "
                                   f"do not have (their classes: {', '.join(classes)})")
        values = [self.settings_of(c) for c in classes]
        return Resolved(np.array([v[0] for v in values], dtype=np.float64),
                        np.array([v[1] for v in values], dtype=np.float64),
                        np.array([np.nan if v[2] is None else v[2] for v in values]))

    def restricted(self, classes: Sequence[str]) -> DecisionPolicy:
        """This policy with the settings of ``classes`` alone (the others' are left out)."""
        return replace(self, classes=tuple((n, d) for n, d in self.classes if n in classes))

    def with_thresholds(self, thresholds: float | Mapping[str, float]) -> DecisionPolicy:
        """This policy with one threshold for every class, or one per named class."""
        if isinstance(thresholds, Mapping):
            own = dict(self.classes)
            for name, value in thresholds.items():
                own[name] = replace(own.get(name, ClassDecision()),
                                    threshold=_number(value, f"threshold of class {name!r}"))
            return replace(self, classes=tuple(own.items()))
        return replace(self, threshold=_number(thresholds, "threshold"))

    def describe(self) -> str:
        rule = _rule(self.threshold, self.median_filter, self.low)
        if self.classes:
            rule += "; per class: " + ", ".join(
                f"{name} {_rule(*self.settings_of(name))}" for name, _ in self.classes)
        if self.median_edge != "reflect" and self.filters():
            rule += f"; median filters with {self.median_edge} edges"
        return f"{self.source}; {rule}" if self.source else rule

    def filters(self) -> bool:
        """Whether any class is median filtered."""
        return any(self.settings_of(name)[1] > 0 for name in (None, *dict(self.classes)))

    def as_dict(self) -> dict[str, Any]:
        """The decision file's content (times in seconds)."""
        out: dict[str, Any] = {"threshold": self.threshold,
                               "median_filter": self.median_filter, "low": self.low}
        if self.source:
            out["source"] = self.source
        if self.median_edge != "reflect":
            out["median_edge"] = self.median_edge
        if self.classes:
            out["classes"] = {name: {k: getattr(own, k) for k in SETTINGS
                                     if getattr(own, k) is not None}
                              for name, own in self.classes}
        return out


def _rule(threshold: float, median_filter: float, low: float | None) -> str:
    mf = f", median filter {median_filter:g} s" if median_filter else ""
    if low is not None:
        return f"active from score > {threshold:g} while score >= {low:g} (hysteresis){mf}"
    return f"active iff score > {threshold:g}{mf}"


def read_decision(path: str | Path) -> DecisionPolicy:
    """A decision file (YAML, the module's layout, read safely:
    :mod:`~sedcontract.traces.documents`); errors name the file and the key."""
    from sedcontract.traces.documents import read_yaml

    path = Path(path)
    if not path.exists():
        raise TraceFormatError("no such decision file", path=str(path))
    return decision_of_data(read_yaml(path, "decision file"), str(path))


def decision_of_data(data: Any, where: str) -> DecisionPolicy:
    """A decision from its settings as read (a decision file's mapping, or
    :meth:`DecisionPolicy.as_dict`'s); errors name ``where`` and the key."""
    if not isinstance(data, Mapping):
        raise TraceFormatError("a decision file maps threshold, median_filter, median_edge, low, "
                               "source and classes to values", path=where)
    known = {f.name for f in fields(DecisionPolicy)}
    if not isinstance(data.get("certificate", {}), Mapping):
        raise TraceFormatError("'certificate' must be the mapping sedcontract certify writes",
                               path=where)
    unknown = sorted(set(data) - known - {"certificate"})
    if unknown:
        raise TraceFormatError(f"unknown decision setting(s) {unknown}; the settings are "
                               f"{', '.join(sorted(known))}", path=where)
    values = {k: v for k, v in data.items() if k != "certificate"}  # a record, not a setting
    if values.get("classes") is None:
        values.pop("classes", None)
    try:
        if isinstance(values.get("median_filter"), str):
            values["median_filter"] = seconds(values["median_filter"], "median_filter")
        return DecisionPolicy(**values)
    except SedContractError as exc:
        raise TraceFormatError(getattr(exc, "message", str(exc)), path=where) from None


def decision_yaml(policy: DecisionPolicy, comment: str = "", *,
                  certificate: Mapping[str, Any] | None = None) -> str:
    """The text of a decision file (``comment`` lines first), median filters with their unit;
    ``certificate``: the section :mod:`~sedcontract.analysis.certify` writes after it."""
    import yaml

    def unit(value: float) -> str | int:
        return spell(value) if value else 0

    data = policy.as_dict()
    data["median_filter"] = unit(data["median_filter"])
    for own in data.get("classes", {}).values():
        if "median_filter" in own:
            own["median_filter"] = unit(own["median_filter"])
    if certificate is not None:
        data["certificate"] = dict(certificate)
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def filter_frames(median_filter: float, hop: float, frames: int) -> int:
    """A median filter's length in frames of ``hop`` (1 = off); a filter longer than the
    clip's ``frames`` is refused (its cost would grow with the filter, not the clip)."""
    if median_filter <= 0:
        return 1
    size = max(1, round(median_filter / hop))
    if frames > 0 and size > frames:
        raise TraceFormatError(f"median filter of {median_filter:g} s is {size} frames "
                               f"of {hop:g} s, longer than the clip ({frames} frames)")
    return size


def odd_length(median_filter: float, hop: float) -> float:
    """A median filter of ``median_filter`` seconds snapped to the nearest odd number of
    frames of ``hop`` (centred, as DESED_task's lengths are; an even count halfway goes up;
    1 frame, or less: 0, off)."""
    frames = 2 * max(0, math.floor((median_filter / hop - 1) / 2 + 0.5)) + 1
    return 0.0 if frames == 1 else round(frames * hop, 6)


def filtered(scores: np.ndarray, median_filters: np.ndarray, hop: float,
             edge: str = "reflect") -> np.ndarray:
    """Frame scores ``[..., frames, classes]`` with each class's median filter (seconds,
    rounded to frames of ``hop``; 0: none) along frames, as DESED_task's class-wise filter
    applies it (scipy's ``median_filter``, an even length taking the upper median), past the
    edges by ``edge`` (scipy's mode; DESED_task's ``reflect`` by default): the part of a
    decision that comes before its threshold."""
    scores = np.asarray(scores, dtype=np.float64)
    sizes = np.array([filter_frames(m, hop, scores.shape[-2]) for m in median_filters],
                     dtype=np.int64)
    if (sizes > 1).any() and scores.shape[-2] > 0:
        from scipy.ndimage import median_filter  # imported where it is used: a slow import

        scores = scores.copy()
        for size in np.unique(sizes[sizes > 1]):
            columns = np.flatnonzero(sizes == size)
            shape = (1,) * (scores.ndim - 2) + (int(size), 1)
            scores[..., columns] = median_filter(scores[..., columns], size=shape,
                                                 mode=edge)
    return scores


def decide(scores: np.ndarray, policy: DecisionPolicy, hop: float,
           classes: Sequence[str] | None = None) -> np.ndarray:
    """Boolean activity from frame scores ``[..., frames, classes]`` under ``policy``: each
    class's median filter (its length in seconds rounded to frames of ``hop``) along frames,
    then its threshold (strictly above), or its hysteresis. ``classes`` names the columns
    (needed when the policy sets classes of their own)."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[-1]
    if policy.per_class and classes is None:
        raise TraceFormatError("a decision with settings per class needs the score columns' "
                               "class names")
    resolved = policy.resolve(classes) if classes is not None else Resolved(
        np.full(n, policy.threshold), np.full(n, policy.median_filter),
        np.full(n, np.nan if policy.low is None else policy.low))
    if len(resolved.threshold) != n:
        raise TraceFormatError(f"{len(resolved.threshold)} class names for {n} score columns")
    scores = filtered(scores, resolved.median_filter, hop, policy.median_edge)
    active = scores > resolved.threshold
    with_low = ~np.isnan(resolved.low)
    if with_low.any():
        columns = np.flatnonzero(with_low)
        active[..., columns] = hysteresis(scores[..., columns], resolved.low[columns],
                                          resolved.threshold[columns])
    return active


def hysteresis(scores: np.ndarray, low: float | np.ndarray, high: float | np.ndarray
               ) -> np.ndarray:
    """Boolean activity from scores ``[..., frames, classes]``: a run switches on at a frame
    above ``high`` and stays on while the score is at least ``low`` (``low <= high``; one
    value, or one per class); the frames of a run of ``>= low`` before its first frame above
    ``high`` stay off."""
    x = np.moveaxis(np.asarray(scores), -2, -1)  # frames last
    low = np.asarray(low, dtype=np.float64)[..., None] if np.ndim(low) else low
    high = np.asarray(high, dtype=np.float64)[..., None] if np.ndim(high) else high
    kept = x >= low
    above = x > high
    start = kept & ~np.concatenate([np.zeros_like(kept[..., :1]), kept[..., :-1]], -1)
    high_seen = np.cumsum(kept & above, -1)
    # high frames seen before each run's start, carried along the run (nondecreasing)
    before = np.maximum.accumulate(np.where(start, high_seen - above, 0), -1)
    return np.moveaxis(kept & (high_seen > before), -1, -2)
