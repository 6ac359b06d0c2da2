"""Options generated from the policy dataclasses: each default is declared once, on the
dataclass field, and the objects are built from the parsed options by field name."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any

from sedcontract.contracts import ROUNDINGS
from sedcontract.contracts.policy import (
    AGGREGATIONS,
    EVENT_MATCHINGS,
    SECONDS_KEYS,
    TIME_COMPARISONS,
)
from sedcontract.contracts.runs import BACKENDS
from sedcontract.contracts.syntax import METHODS
from sedcontract.errors import SedContractError
from sedcontract.guard import AuditPolicy, ScoreSettings
from sedcontract.resampling import MAX_RESAMPLES
from sedcontract.traces import EDGES, PROJECTIONS
from sedcontract.traces.decision import MEDIAN_EDGES, DecisionPolicy, read_decision
from sedcontract.traces.times import TimeError, bound, seconds, spell

# field -> (flag, choices, help); the default and the type come from the dataclass
POLICY = {
    "contract": ("--contract", None, "shipped contract name or a .contract file"),
    "eps": ("--eps", None, "override the contract's eps: 100ms, 0.1s or 5f (frames)"),
    "hop": ("--hop", None, "grid hop, e.g. 20ms"),
    "projection": ("--projection", PROJECTIONS, "how events become frames"),
    "edges": ("--edges", EDGES, "clip-edge policy"),
    "rounding": ("--rounding", ROUNDINGS, "how time bounds become whole frames"),
    "matching": ("--matching", METHODS, "override the method of every matching in the "
                 "contract"),
    "aggregation": ("--aggregation", AGGREGATIONS, "pool counts (micro) or average classes"),
    "max_frames": ("--max-frames", None, "refuse a clip of more frames than this"),
    "duration_tolerance": ("--duration-tolerance", None, "how far a reference event may end "
                           "past its clip's duration (--durations) and be cut there, e.g. "
                           "200ms"),
    "strict_durations": ("--strict-durations", None, "refuse any event that ends past its "
                         "clip's duration instead of cutting it"),
}
SCORES = {
    "t_collar": ("--t-collar", None, "collar of the event and boundary scores, e.g. 200ms"),
    "percentage_of_length": ("--percentage-of-length", None, "offset collar as a fraction of "
                             "the reference length"),
    "evaluate_onset": ("--evaluate-onset", None, "collar event scores check onsets"),
    "evaluate_offset": ("--evaluate-offset", None, "collar event scores check offsets"),
    "matching": ("--event-matching", EVENT_MATCHINGS, "event matching of the collar event "
                 "scores (sed_eval's)"),
    "segment": ("--segment", None, "segment length of the segment-based scores, e.g. 1s"),
    "dtc_threshold": ("--dtc", None, "detection tolerance criterion of the intersection F1"),
    "gtc_threshold": ("--gtc", None, "ground-truth intersection criterion of the "
                      "intersection F1"),
    "time_comparison": ("--time-comparison", TIME_COMPARISONS, "how collar conditions compare "
                        "times: whole microseconds (sed_scores_eval, default) or float64 "
                        "seconds (sed_eval, which the published DCASE tables used)"),
}
# fields that hold a time: given with a unit (sedcontract.traces.times), refused without one
TIMES: dict[str, Callable[[str, str], Any]] = {"eps": bound,
                                               **dict.fromkeys(SECONDS_KEYS, seconds)}
GROUPS: dict[type, tuple[str, dict[str, tuple[str, Any, str]]]] = {
    AuditPolicy: ("policy", POLICY), ScoreSettings: ("scores", SCORES)}


def _dest(kind: type, name: str) -> str:
    return f"{GROUPS[kind][0]}_{name}"


def add_options(parser: argparse.ArgumentParser, kind: type, *, only: tuple[str, ...] = (),
                without: tuple[str, ...] = ()) -> None:
    """Add the options of ``kind``'s fields (all that the table names, or ``only`` these)."""
    table = GROUPS[kind][1]
    for field in fields(kind):
        if field.name not in table or (only and field.name not in only) \
                or field.name in without:
            continue
        flag, choices, text = table[field.name]
        default = field.default
        assert default is not MISSING, field.name
        shown = "" if default is None else \
            f" (default {spell(default) if field.name in TIMES else default})"
        extra: dict[str, Any] = {"dest": _dest(kind, field.name), "default": default,
                                 "help": text + shown}
        if field.name in TIMES:
            extra["type"] = time_type(TIMES[field.name], flag)
        elif isinstance(default, bool):
            extra["action"] = argparse.BooleanOptionalAction
        elif isinstance(default, int | float):
            extra["type"] = type(default)
        elif default is None and "float" in str(field.type):
            extra["type"] = float
        if choices is not None:
            extra["choices"] = choices
        parser.add_argument(flag, **extra)


def time_type(parse: Callable[[str, str], Any], flag: str) -> Callable[[str], Any]:
    """An argparse ``type`` reading a time with its unit (``parse`` names ``flag`` in its
    error, which argparse prints with the usage, exit status 2)."""
    def convert(text: str) -> Any:
        try:
            return parse(text, flag)
        except TimeError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag} ")) from None
    convert.__name__ = "time"
    return convert


def build(kind: type, args: argparse.Namespace, **given: Any) -> Any:
    """``kind`` from the options ``add_options`` added (the missing ones keep their dataclass
    default), with ``given`` fields."""
    table = GROUPS[kind][1]
    values = {name: getattr(args, _dest(kind, name)) for name in table
              if hasattr(args, _dest(kind, name))}
    return kind(**values, **given)


def policy(args: argparse.Namespace, *, decision: DecisionPolicy | None = None,
           scores: bool = False) -> AuditPolicy:
    """The audit policy of the options, with the standard scores' settings when asked."""
    settings = build(ScoreSettings, args) if scores else None
    return build(AuditPolicy, args, decision=decision, scores=settings)


def add_monitor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default="runs",
                        help="monitor on run-length traces (default; cost follows the events) "
                             "or on frame arrays (the reference); the counts are the same")
    parser.add_argument("--jobs", type=whole_number(1), default=1,
                        help="processes sharing the clips, in blocks (a process pool as the "
                             "audit's executor); the report is the same for any number")


def threshold_list(text: str) -> tuple[float, ...]:
    """``0.1,0.3,0.5`` or a range ``START:STOP:STEP`` (both ends included)."""
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
            if not all(math.isfinite(v) for v in (start, stop, step)):
                raise argparse.ArgumentTypeError(f"{text!r}: START, STOP and STEP must be "
                                                 "finite numbers (0.05:0.95:0.05)")
            if step <= 0 or stop < start:
                raise ValueError
            steps = (stop - start) / step  # bounded before any threshold is made
            count = math.floor(steps + 1e-9) + 1 if steps < 1000 else math.inf  # never past STOP
            if count > 1000:  # infinite too: 0:1e300:1e-300
                raise argparse.ArgumentTypeError(f"{text!r} makes more than 1000 thresholds: "
                                                 "at most 1000")
            return tuple(round(start + k * step, 10) for k in range(count))
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give numbers (0.2,0.5) or a range "
                                         "START:STOP:STEP (0.05:0.95:0.05)") from None


def whole_number(least: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least ``least`` (``--shards 0`` would wait
    forever for a block that never comes)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is less than {least}")
        return value
    convert.__name__ = "whole number"
    return convert


def _resamples(text: str) -> int:
    """``--bootstrap N``: a whole number of resamples, 0 … :data:`MAX_RESAMPLES`, checked
    before anything is drawn."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of resamples") \
            from None
    if not 0 <= value <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"{value:,} resamples: give 0 (none) to "
                                         f"{MAX_RESAMPLES:,} (percentile intervals settle at "
                                         "a few thousand)")
    return value


def add_bootstrap_options(parser: argparse.ArgumentParser, *, default: int, what: str) -> None:
    """``--bootstrap N`` (resamples of the clips; ``what`` says what gets intervals),
    ``--bootstrap-seed`` and ``--level``: the same three options wherever intervals are."""
    parser.add_argument("--bootstrap", type=_resamples, default=default, metavar="N",
                        help=f"resamples of the clips behind a bootstrap interval for {what} "
                             f"(default {default}{'' if default else ': none'}; at most "
                             f"{MAX_RESAMPLES:,})")
    parser.add_argument("--bootstrap-seed", type=int, default=0,
                        help="seed of the bootstrap's draws (default 0)")
    parser.add_argument("--level", type=float, default=0.95,
                        help="coverage of the bootstrap intervals (default 0.95)")


# --threshold, --median-filter, --hysteresis-low: DecisionPolicy field, its help
DECISION = {
    "threshold": ("--threshold", "decision threshold for --pred-scores (active iff score > it; "
                  "default 0.5)"),
    "median_filter": ("--median-filter", "median filter applied to scores before the threshold, "
                      "e.g. 200ms (default 0: off)"),
    "low": ("--hysteresis-low", "hysteresis: a run, once above --threshold, continues while the "
            "score is at least this (default: off)"),
}
PER_CLASS = ("one value for every class, CLASS=VALUE pairs, or both, comma-separated: "
             "{example}")


def per_class_type(flag: str, parse: Callable[[str], float], example: str
                   ) -> Callable[[str], tuple[float | None, dict[str, float]]]:
    """An argparse ``type`` for a decision setting: ``0.5``, ``Speech=0.3,Dog=0.5`` or
    ``0.5,Speech=0.3`` (one default at most; a class named once). A bare list of numbers is
    refused: their classes would be guessed from the columns' order."""
    def convert(text: str) -> tuple[float | None, dict[str, float]]:
        default: float | None = None
        named: dict[str, float] = {}
        for item in (part.strip() for part in text.split(",")):
            name, sep, value = item.rpartition("=")
            name = name.strip()
            if sep and not name:
                raise argparse.ArgumentTypeError(f"{item!r} names no class")
            try:
                number = parse(value.strip())
            except SedContractError as exc:  # a time: its message names the option first
                raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag} ")) from None
            except ValueError:
                raise argparse.ArgumentTypeError(f"{value.strip()!r} is not a number") \
                    from None
            if not sep:
                if default is not None:
                    raise argparse.ArgumentTypeError(
                        f"{text!r} gives two values without a class; " +
                        PER_CLASS.format(example=example) +
                        " (the classes of a bare list would be guessed from the columns' "
                        "order)")
                default = number
            elif name in named:
                raise argparse.ArgumentTypeError(f"class {name!r} is given twice")
            else:
                named[name] = number
        return default, named
    convert.__name__ = "value or CLASS=VALUE list"
    return convert


def _float(text: str) -> float:
    return float(text)


def add_decision_options(parser: argparse.ArgumentParser) -> None:
    """The decision of ``--pred-scores``: ``--threshold``, ``--median-filter`` and
    ``--hysteresis-low`` (each one value or per class), or ``--decision FILE`` (YAML)."""
    parse = {"threshold": _float, "low": _float,
             "median_filter": lambda text: seconds(text, "--median-filter")}
    examples = {"threshold": "0.5,Speech=0.3,Dog=0.6", "median_filter": "200ms,Dog=450ms",
                "low": "Speech=0.2"}
    for name, (flag, text) in DECISION.items():
        parser.add_argument(flag, dest=f"decision_{name}", default=None,
                            type=per_class_type(flag, parse[name], examples[name]),
                            help=f"{text}; " + PER_CLASS.format(example=examples[name]))
    parser.add_argument("--median-edge", dest="decision_median_edge", default=None,
                        choices=MEDIAN_EDGES,
                        help="how the median filter reads past a clip's edges: scipy's mode "
                             "(default reflect, as DESED_task's class-wise filter)")
    parser.add_argument("--decision", default=None, metavar="FILE",
                        help="the decision of --pred-scores as a YAML file (threshold, "
                             "median_filter, median_edge, low, and classes: {CLASS: "
                             "{threshold, median_filter, low}}), e.g. one sedcontract tune "
                             "wrote")


def decision_asked(args: argparse.Namespace) -> tuple[str, ...]:
    """The decision options given on the command line."""
    return tuple(flag for name, (flag, _) in DECISION.items()
                 if getattr(args, f"decision_{name}", None) is not None) + \
        (("--median-edge",) if getattr(args, "decision_median_edge", None) is not None
         else ()) + \
        (("--decision",) if getattr(args, "decision", None) is not None else ())


def decision(args: argparse.Namespace) -> DecisionPolicy:
    """The decision of the options (or of ``--decision FILE``; the two are not mixed)."""
    asked = decision_asked(args)
    if args.decision is not None:
        if len(asked) > 1:
            raise SedContractError(f"--decision {args.decision} holds the whole decision: give "
                                   f"it or {', '.join(a for a in asked if a != '--decision')}, "
                                   "not both")
        return read_decision(args.decision)
    values: dict[str, Any] = {}
    classes: dict[str, dict[str, float]] = {}
    for name in DECISION:
        given = getattr(args, f"decision_{name}")
        if given is None:
            continue
        default, named = given
        if default is not None:
            values[name] = default
        for cls, value in named.items():
            classes.setdefault(cls, {})[name] = value
    if args.decision_median_edge is not None:
        values["median_edge"] = args.decision_median_edge
    return DecisionPolicy(**values, classes=classes)
