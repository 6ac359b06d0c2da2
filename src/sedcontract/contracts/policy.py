"""The audit policy: everything that decides a number of a guard report — the contract and its
``eps``, the grid, projection, clip edges, rounding, matching, aggregation, how scores become
events, and the standard scores' settings — in one frozen object, checked in one place. It
travels from the command line or a Hydra config to the monitor, the training losses and the
report, whose ``policy`` section it writes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import cached_property
from typing import Any

from sedcontract.contracts.bounds import ROUNDINGS, BoundResolver, Conversion, coerce_binding
from sedcontract.contracts.contract import check_contract, contract_hash, load_contract, prepare
from sedcontract.contracts.matching import METHODS
from sedcontract.contracts.syntax import Bound, Contract
from sedcontract.errors import SedContractError, of_kind
from sedcontract.numbers import is_number, is_whole
from sedcontract.traces.activity import EDGES
from sedcontract.traces.decision import DecisionPolicy, read_decision
from sedcontract.traces.grid import MAX_SECONDS, PROJECTIONS, Grid, to_us
from sedcontract.traces.overrun import DURATION_TOLERANCE
from sedcontract.traces.times import bound, seconds
from sedcontract.traces.traceset import MAX_CLIP_FRAMES

AGGREGATIONS: tuple[str, ...] = ("micro", "macro")
EVENT_MATCHINGS: tuple[str, ...] = ("optimal", "greedy")  # sed_eval's names
# how collar conditions compare times: sed_scores_eval's (times rounded to 6 decimals, i.e.
# whole microseconds) or sed_eval's (float64 subtraction, so a pair exactly one collar apart
# may miss by a rounding error)
TIME_COMPARISONS: tuple[str, ...] = ("sed_scores_eval", "sed_eval")
LOGIC = "mean of the non-vacuous coordinates"


@dataclass(frozen=True)
class ScoreSettings:
    """Parameters of the standard scores, named as in the literature; part of every report."""

    t_collar: float = 0.2
    percentage_of_length: float = 0.2
    evaluate_onset: bool = True
    evaluate_offset: bool = True
    matching: str = "optimal"
    segment: float = 1.0
    dtc_threshold: float = 0.5
    gtc_threshold: float = 0.5
    boundary_frames: int = 10  # t_collar on the contract grid (the policy resolves it)
    time_comparison: str = "sed_scores_eval"  # collar comparisons: one of TIME_COMPARISONS

    def __post_init__(self) -> None:
        checks = [("t_collar", lambda v: v >= 0), ("percentage_of_length", lambda v: v >= 0),
                  ("segment", lambda v: v > 0 and to_us(v) > 0),
                  ("dtc_threshold", lambda v: 0 <= v <= 1),
                  ("gtc_threshold", lambda v: 0 <= v <= 1)]
        for name, ok in checks:
            value = getattr(self, name)
            if not (is_number(value, finite=True) and ok(value)):
                raise SedContractError(f"score setting {name} = {value!r} is out of range")
        for name in ("evaluate_onset", "evaluate_offset"):
            if not isinstance(getattr(self, name), bool):
                raise SedContractError(f"score setting {name} must be true or false, got "
                                       f"{getattr(self, name)!r}")
        if self.matching not in EVENT_MATCHINGS:
            raise SedContractError(f"unknown event matching {self.matching!r}; choose optimal "
                                   "or greedy")
        if self.time_comparison not in TIME_COMPARISONS:
            raise SedContractError(f"unknown time comparison {self.time_comparison!r}; choose "
                                   f"{' or '.join(TIME_COMPARISONS)}")


def _choice(name: str, value: Any, choices: tuple[str, ...], optional: bool = False) -> None:
    if optional and value is None:
        return
    if value not in choices:
        raise SedContractError(f"unknown {name} {value!r}; choose one of {', '.join(choices)}")


@dataclass(frozen=True, eq=False)
class AuditPolicy:
    """How a report's numbers are decided (see docs/guard-report.md).

    ``contract`` is a shipped name, a contract file or a parsed :class:`Contract`; ``eps``
    overrides its ``let eps`` (``'100ms'`` or frames); ``matching`` (greedy | exact) overrides
    every matching it declares; ``decision`` says how frame scores became the predictions
    (None: they were events); ``scores`` adds the standard scores; a clip of more than
    ``max_frames`` frames is refused.
    """

    contract: str | os.PathLike | Contract = "standard"
    eps: str | int | None = None
    hop: float = 0.02
    projection: str = "center"
    edges: str = "open"
    rounding: str = "nearest"
    matching: str | None = None
    aggregation: str = "micro"
    decision: DecisionPolicy | None = None
    scores: ScoreSettings | None = None
    max_frames: int = MAX_CLIP_FRAMES
    duration_tolerance: float = DURATION_TOLERANCE  # s a reference may end past its clip
    strict_durations: bool = False  # any event past its clip's duration is an error

    def __post_init__(self) -> None:
        if not isinstance(self.contract, str | os.PathLike | Contract) or self.contract == "":
            raise SedContractError(f"a contract is a shipped name such as 'standard', the path "
                                   f"of a .contract file or a parsed contract, got "
                                   f"{self.contract!r}")
        Grid(self.hop, 0)  # a usable hop, or a clear error
        _choice("projection", self.projection, PROJECTIONS)
        _choice("clip-edge policy", self.edges, EDGES)
        _choice("rounding", self.rounding, ROUNDINGS)
        _choice("matching method", self.matching, METHODS, optional=True)
        _choice("aggregation", self.aggregation, AGGREGATIONS)
        if self.eps is not None:
            if isinstance(self.eps, str):  # read as options and configs read it: 5f, 200ms
                object.__setattr__(self, "eps", bound(self.eps, "eps"))
            coerce_binding("eps", self.eps)  # frames, or a time such as '100ms'
        for name, kind in (("decision", DecisionPolicy), ("scores", ScoreSettings)):
            of_kind(name, getattr(self, name), kind, optional=True)
        if not is_number(self.duration_tolerance) \
                or not 0 <= self.duration_tolerance <= MAX_SECONDS:
            raise SedContractError(f"duration_tolerance must be a number of seconds in "
                                   f"[0, {MAX_SECONDS:g}], got {self.duration_tolerance!r}")
        if not isinstance(self.strict_durations, bool):
            raise SedContractError(f"strict_durations must be true or false, got "
                                   f"{self.strict_durations!r}")
        if not is_whole(self.max_frames) \
                or self.max_frames < 1:
            raise SedContractError(f"max_frames must be a positive integer, got "
                                   f"{self.max_frames!r}")

    @classmethod
    def from_config(cls, **values: Any) -> AuditPolicy:
        """A policy from Hydra's ``configs/contract/*.yaml`` values: as :meth:`from_mapping`,
        with ``eps`` written with its unit (``100ms``, ``0.1s``, ``5f`` for frames; a bare
        number other than 0 is refused, naming ``contract.eps``)."""
        if values.get("eps") is not None:
            values["eps"] = bound(str(values["eps"]), "contract.eps")
        return cls.from_mapping(values, "contract")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], prefix: str = "policy") -> AuditPolicy:
        """A policy from plain values: the ``decision`` and ``scores`` mappings become their
        objects, a null leaves them out (``decision.file``: a decision file in place of the
        block's settings); a time may be a number of seconds or a text with its unit
        (``20ms``); ``eps`` as :class:`AuditPolicy` takes it. Errors name ``prefix.key``."""
        values = dict(values)
        decision = values.get("decision")
        if isinstance(decision, Mapping) and "file" in decision:  # a decision file holds the
            decision = dict(decision)                             # whole decision
            path = decision.pop("file")
            if path is not None:
                defaults = asdict(DecisionPolicy())
                changed = sorted(k for k, v in decision.items()
                                 if k in defaults and v not in (defaults[k], {}, None))
                if changed:
                    raise SedContractError(
                        f"{prefix}.decision.file holds the whole decision: give it or "
                        f"{', '.join(f'{prefix}.decision.{k}' for k in changed)}, not both")
            values["decision"] = decision if path is None else read_decision(path)
        for name, kind in (("decision", DecisionPolicy), ("scores", ScoreSettings)):
            value = values.get(name)
            if isinstance(value, Mapping):
                known = {f.name for f in fields(kind)}
                unknown = sorted(set(value) - known)
                if unknown:
                    raise SedContractError(f"unknown {name} setting(s) {unknown}; the settings "
                                           f"are {', '.join(sorted(known))}")
                values[name] = kind(**_in_seconds(value, f"{prefix}.{name}"))
        values = _in_seconds(values, prefix)
        unknown = sorted(set(values) - {f.name for f in fields(cls)})
        if unknown:
            raise SedContractError(f"unknown policy setting(s) {unknown}; the settings are "
                                   f"{', '.join(f.name for f in fields(cls))}")
        return cls(**values)

    def but(self, **changes: Any) -> AuditPolicy:
        """This policy with some settings changed (checked again); unknown names are refused
        with the list of settings."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise SedContractError(f"unknown audit option(s) {unknown}; the options are "
                                   f"{', '.join(f.name for f in fields(self))}")
        if not changes:
            return self
        changed = replace(self, **changes)
        if "contract" not in changes and "parsed" in self.__dict__:
            changed.__dict__["parsed"] = self.__dict__["parsed"]  # parsed once, kept
        return changed

    @cached_property
    def parsed(self) -> Contract:
        """The contract, loaded and parsed once."""
        if isinstance(self.contract, Contract):
            return self.contract
        return load_contract(self.contract)

    @property
    def contract_name(self) -> str:
        """How the report names the contract: as given, or a parsed contract's own name."""
        if isinstance(self.contract, Contract):
            return self.contract.name
        return os.fspath(self.contract)

    @property
    def overrides(self) -> dict[str, str | int] | None:
        return {"eps": self.eps} if self.eps is not None else None

    def resolver(self) -> BoundResolver:
        """Check the contract under this policy and return the resolver every run shares (it
        records the time → frame conversions for the report)."""
        return prepare(self.parsed, hop=self.hop, overrides=self.overrides,
                       rounding=self.rounding, matching=self.matching)

    def conversions(self) -> list[Conversion]:
        """The time → frame conversions of the contract's bounds under this policy (checking
        it), for a report made without running it."""
        return check_contract(self.parsed, hop=self.hop, overrides=self.overrides,
                              rounding=self.rounding)

    def score_settings(self) -> ScoreSettings | None:
        """The standard scores' settings with the boundary tolerance (``t_collar``) in frames
        of this grid."""
        if self.scores is None:
            return None
        tolerance = Bound(number=repr(float(self.scores.t_collar)), unit="s")
        frames = BoundResolver(hop=self.hop, rounding=self.rounding).frames(tolerance)
        return replace(self.scores, boundary_frames=frames)

    def report(self, conversions: list[Conversion]) -> dict[str, Any]:
        """The ``policy`` section of a report (docs/guard-report.md)."""
        contract = self.parsed
        declared = contract.lets.get("eps")
        out: dict[str, Any] = {
            "contract": self.contract_name,
            "contract_sha256": contract_hash(contract),
            "hop": self.hop,
            "projection": self.projection,
            "edges": self.edges,
            "rounding": self.rounding,
            "eps": _spelled(self.eps if self.eps is not None else declared),
            "bounds": [str(c) for c in conversions],
            "matching": {m.name: self.matching or m.method for m in contract.matches.values()},
            "decision": self.decision.describe() if self.decision else "events as given",
            "aggregation": self.aggregation,
            "logic": LOGIC,
        }
        settings = self.score_settings()
        if settings is not None:
            out["scores"] = asdict(settings)
        return out


# the settings (of the policy, its decision and scores) that hold a time in seconds
SECONDS_KEYS = ("hop", "duration_tolerance", "median_filter", "t_collar", "segment")


def _in_seconds(values: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Config values with each time given as a text with its unit (``20ms``) in seconds."""
    return {key: seconds(value, f"{prefix}.{key}")
            if key in SECONDS_KEYS and isinstance(value, str) else value
            for key, value in values.items()}


def _spelled(eps: Bound | str | int | None) -> str | None:
    """A tolerance as a report shows it: with its unit, frames as ``10f``."""
    if eps is None:
        return None
    value = eps if isinstance(eps, Bound) else coerce_binding("eps", eps)
    if isinstance(value, int) or (value.unit is None and value.name is None):
        return f"{value}f"
    return str(value)


def policy_of(value: AuditPolicy | Mapping[str, Any] | None = None, /,
              **changes: Any) -> AuditPolicy:
    """A policy from a policy, a config mapping or nothing (the defaults), with ``changes``."""
    if value is None:
        policy = AuditPolicy()
    elif isinstance(value, AuditPolicy):
        policy = value
    elif isinstance(value, Mapping):
        policy = AuditPolicy.from_mapping(value)
    else:
        raise SedContractError(f"a policy is an AuditPolicy or a mapping of its settings, got "
                               f"{type(value).__name__}")
    return policy.but(**changes)

