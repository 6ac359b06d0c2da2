"""Sharded audits: the JSON report of one block of a corpus's clips carries its counts, and
``merge`` joins the reports of all blocks into the corpus's report (the same bytes as one
unsharded run), so any engine that maps a command over shards can audit a corpus larger than
one machine."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.contracts.policy import AuditPolicy
from sedcontract.errors import SedContractError
from sedcontract.guard.curve_data import MAX_COUNT as MAX_CURVE_COUNT
from sedcontract.guard.curve_data import curves_data, curves_of_data, number
from sedcontract.guard.curves import CURVE_COORDINATES, GuardCurves, check_curves, join_curves
from sedcontract.guard.facts import TraceFacts
from sedcontract.guard.pipeline import audit
from sedcontract.guard.render import MAX_COUNT, to_dict
from sedcontract.guard.report import GuardReport, MatchingCounts, ModeReport
from sedcontract.guard.rows import SCHEMA_VERSION
from sedcontract.numbers import is_count
from sedcontract.scores.counts import MetricResult
from sedcontract.traces import EventList
from sedcontract.traces.decision import DecisionPolicy, decision_of_data
from sedcontract.traces.documents import read_json
from sedcontract.traces.grid import MAX_SECONDS, SECONDS_PER_HOUR

__all__ = ["audit_shard", "corpus_key", "curves_section", "merge_shard_files", "merge_shards",
           "parse_shard", "read_shard", "shard_json"]

SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*\Z")
_EMPTY = np.zeros(0, dtype=np.int64)
MAX_DEPTH = 32  # a shard report nests 7 deep


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` → ``(i, n)``: shard i (from 0) of n."""
    match = SHARD.match(text)
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise SedContractError(f"--shard {text!r}: write i/n with whole numbers 0 <= i < n "
                               "(e.g. 0/4 … 3/4)")
    return int(match[1]), int(match[2])


def audit_shard(index: int, count: int, ref: str | Path, pred: str | Path,
                durations: str | Path | None = None, **settings: Any) -> GuardReport:
    """One task of a sharded audit, for any engine that maps a function over shards: shard
    ``index`` of ``count`` of the audit of these files (read and checked whole, projected and
    audited on the shard's clips). ``GuardReport.concat`` of all ``count`` results is the corpus's
    report."""
    return audit(ref, pred, durations=durations, shard=(index, count), **settings)


def corpus_key(ref: EventList, pred: EventList, classes: Sequence[str],
               durations: Mapping[str, float] | None) -> dict[str, Any]:
    """The corpus's size and a digest of everything audited (clips, classes, both event lists,
    durations): shards of different inputs never merge."""
    digest = hashlib.sha256()
    for events in (ref, pred):
        digest.update(json.dumps([list(events.clips), events.to_rows()]).encode("utf-8"))
    digest.update(json.dumps([list(classes), sorted((durations or {}).items())]).encode("utf-8"))
    return {"clips": len(ref.clips), "sha256": digest.hexdigest()}


def shard_json(report: GuardReport, index: int, count: int, corpus: dict[str, Any],
               curves: dict[str, Any] | None = None) -> str:
    """The JSON report of one shard (``report`` covers its clips only) with the section that
    ``merge`` reads: which shard of which corpus, its clips and every per-clip count, and
    with ``curves`` (:func:`curves_section`) the guard curves of its clips."""
    data = to_dict(report)
    data["shard"] = {"index": index, "count": count, "corpus": corpus,
                     "clips": list(report.clips), "widths": {}, "counts": {}}
    if curves is not None:
        data["shard"]["curves"] = curves
    for key, values in report.arrays().items():  # flat lists: an empty shard keeps its widths
        data["shard"]["widths"][key] = int(values.shape[1])
        data["shard"]["counts"][key] = values.reshape(-1).tolist()
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def curves_section(curves: GuardCurves, durations: Sequence[float],
                   settings: Mapping[str, Any]) -> dict[str, Any]:
    """A shard's ``curves`` section: its clips' durations (seconds, in clip order: the hours
    of the budgets), the summary's ``settings`` (``max_rate``, ``targets``) and the curves'
    changes (:func:`~sedcontract.guard.curve_data.curves_data`)."""
    return {"durations": [float(d) for d in durations],
            "settings": {k: v.as_dict() if isinstance(v, DecisionPolicy) else v
                         for k, v in settings.items()},
            "data": curves_data(curves)}


def _joined_curves(sections: Sequence[tuple[Any, str]]) -> dict[str, Any] | None:
    """The shards' ``curves`` sections joined (every shard has one, or none does): the
    curves of the corpus, the hours of its clips and the summary's settings, all shards'
    alike."""
    given = [(section, path) for section, path in sections if section is not None]
    if not given:
        return None
    if len(given) != len(sections):
        missing = next(path for section, path in sections if section is None)
        raise SedContractError(f"{missing} has no curves but {given[0][1]} has: audit every "
                               "shard with --curves, or none")
    parts, seconds, settings = [], [], None
    for section, path in given:
        if not isinstance(section, dict) or set(section) != {"durations", "settings", "data"}:
            raise SedContractError(f"{path}: the shard's curves have durations, settings and "
                                   "data")
        found = section["durations"]
        if not isinstance(found, list) or not all(
                (x := number(d)) is not None and 0 <= x <= MAX_SECONDS for d in found):
            raise SedContractError(f"{path}: the shard's curve durations must be seconds in "
                                   f"[0, {MAX_SECONDS:g}]")
        found = [float(d) for d in found]
        if settings is None:
            settings = section["settings"]
        elif section["settings"] != settings:
            raise SedContractError(f"{path}: its curves were summarised under other settings "
                                   f"than {given[0][1]}'s ({str(section['settings'])[:200]})")
        seconds += found
        parts.append(curves_of_data(section["data"], f"{path}, curves"))
    other = next((path for part, (_, path) in zip(parts, given, strict=True)
                  if part.classes != parts[0].classes
                  or part.thresholds != parts[0].thresholds), None)
    if other is not None:
        raise SedContractError(f"{other}: its curves are of other classes or duration "
                               f"thresholds than {given[0][1]}'s")
    for name in CURVE_COORDINATES:  # the joined counts stay exact sums (no int64 wrap)
        for k in range(len(parts[0].classes) + 1):
            most = sum(max(c.base[1], int(c.obligations.max()) if len(c.obligations) else 0)
                       for c in (p.union[name] if k == len(p.classes) else
                                 p.typed[name][p.classes[k]] for p in parts))
            if most > MAX_CURVE_COUNT:
                raise SedContractError(f"{given[0][1]} …: the shards' counts of {name} add up "
                                       "past 2^53")
    joined = join_curves(parts)
    if not isinstance(settings, dict) or set(settings) != {"max_rate", "targets", "decision"}:
        raise SedContractError(f"{given[0][1]}: the shard's curve settings are max_rate, "
                               "targets and decision")
    where = f"{given[0][1]}, curve settings"
    rate, targets = number(settings["max_rate"]), settings["targets"]
    if rate is None or not rate > 0 or not (targets is None or (isinstance(targets, dict) and all(
            isinstance(k, str) and (v := number(x)) is not None and 0 <= v <= 1
            for k, x in targets.items()))):
        raise SedContractError(f"{where}: a positive max_rate and targets of scores in [0, 1]")
    decision = decision_of_data(settings["decision"], where)
    try:
        check_curves(AuditPolicy(), decision, list(targets or ()))
    except SedContractError as exc:
        raise SedContractError(f"{where}: {getattr(exc, 'message', exc)}") from None
    return {"curves": joined, "hours": math.fsum(seconds) / SECONDS_PER_HOUR,
            "settings": {"max_rate": rate, "targets": targets, "decision": decision}}


def _need(data: Any, path: str, *keys: str) -> Any:
    """``data[k0][k1]…`` or a clear error naming the file and the missing key."""
    for depth, key in enumerate(keys):
        if not isinstance(data, dict) or key not in data:
            where = "/".join(keys[:depth + 1])
            raise SedContractError(f"{path}: not a shard report of sedcontract audit --shard "
                                   f"(no {where!r})")
        data = data[key]
    return data


def _skeleton(data: dict[str, Any], path: str) -> GuardReport:
    """The structure of a report (policy, contract, classes, modes, scores), no clips."""
    traces, policy = _need(data, path, "traces"), _need(data, path, "policy")
    classes = tuple(_need(traces, path, "classes"))
    facts = TraceFacts((), classes, float(_need(policy, path, "hop")),
                       _need(policy, path, "projection"),
                       _need(traces, path, "durations") == "given", {}, {}, {})
    modes, coordinates = {}, ()
    for name, mode in _need(data, path, "modes").items():
        coordinates = tuple(_need(mode, path, "coordinates"))
        diagnostics = tuple(_need(mode, path, "diagnostics"))
        entries = {**mode["coordinates"], **mode["diagnostics"]}
        modes[name] = ModeReport(
            name, coordinates, diagnostics, {k: _need(v, path, "sort") for k, v in entries.items()},
            [], {}, {}, {k: MatchingCounts(k, _need(v, path, "method"), _EMPTY, _EMPTY)
                         for k, v in _need(mode, path, "matchings").items()})
    scores = None if "scores" not in data else {
        name: MetricResult((), classes, _EMPTY, _EMPTY, _EMPTY, _EMPTY)
        for name in data["scores"]}
    return GuardReport(policy, facts, modes, _need(data, path, "aggregation"), coordinates,
                       scores, data.get("psds"))


def _arrays(shard: dict[str, Any], clips: Sequence[str], path: str) -> dict[str, np.ndarray]:
    """The per-clip counts, each ``len(clips) × width`` whole numbers as written: memory grows
    with the numbers the file holds, never with one it states."""
    counts, widths = _need(shard, path, "counts"), _need(shard, path, "widths")
    if not isinstance(counts, dict) or not isinstance(widths, dict):
        raise SedContractError(f"{path}: the shard's 'counts' and 'widths' must be mappings")
    arrays = {}
    for key, values in counts.items():
        width = widths.get(key)
        if not (is_count(width, MAX_COUNT) and isinstance(values, list)
                and len(values) == len(clips) * width
                and all(is_count(v, MAX_COUNT) for v in values)):
            raise SedContractError(f"{path}: the shard's counts {key!r} are not {len(clips)} "
                                   f"clips × {width!r} whole numbers of 0 … 2^63 − 1")
        arrays[key] = np.asarray(values, dtype=np.int64).reshape(len(clips), width)
    return arrays


def _bounds(key: str) -> list[tuple[str, str, str]]:
    """The counts that bound those of ``key``: (their key, what ``key`` counts, what they
    count); satisfied ≤ obligations, greedy ≤ exact pairs, true positives ≤ references and
    outputs, as the source rows check them."""
    head, part, name = [*key.split("/", 2), "", ""][:3]
    if head == "scores" and name == "tp":
        return [(f"scores/{part}/ref", "true positives", "references"),
                (f"scores/{part}/sys", "true positives", "outputs")]
    if head not in ("scores", "facts") and part in ("satisfied", "greedy"):
        bound = "obligations" if part == "satisfied" else "exact"
        return [(f"{head}/{bound}/{name}", part, bound)]
    return []


def _check_bounds(arrays: Mapping[str, np.ndarray], clips: Sequence[str], path: str) -> None:
    """Refuse a count above its bound (:func:`_bounds`), naming the clip."""
    for key, counts in arrays.items():
        for bound, what, limit in _bounds(key):
            over = np.flatnonzero((counts > arrays[bound]).any(axis=1))
            if over.size:
                raise SedContractError(f"{path}: {what} above {limit} in the shard's counts "
                                       f"{key!r} for clip {clips[over[0]]!r}")


def read_shard(path: str | Path) -> tuple[GuardReport, dict[str, Any]]:
    """A shard report and its ``shard`` section (index, count, corpus), checked: nesting, the
    shard's numbers and every count against its clips and report."""
    where = str(path)
    data = read_json(path, "shard report", max_bytes=None, max_depth=MAX_DEPTH)  # its counts
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise SedContractError(f"{path}: a shard report of schema version {version!r}; this "
                               f"sedcontract merges version {SCHEMA_VERSION} (audit the shard "
                               "again with it)")
    shard = _need(data, where, "shard")
    info = {k: _need(shard, where, k) for k in ("index", "count", "corpus")}
    if not is_count(info["count"], MAX_COUNT) or not info["count"]:
        raise SedContractError(f"{path}: the shard's 'count' must be a whole number of at least "
                               f"1, not {info['count']!r}")
    if not is_count(info["index"], MAX_COUNT) or info["index"] >= info["count"]:
        raise SedContractError(f"{path}: the shard's 'index' must be a whole number below its "
                               f"count {info['count']}, not {info['index']!r}")
    clips = _need(shard, where, "clips")
    if not isinstance(clips, list) or not all(isinstance(c, str) for c in clips):
        raise SedContractError(f"{path}: the shard's 'clips' must be a list of names")
    arrays = _arrays(shard, clips, where)
    try:
        report = _skeleton(data, where).rebuild(clips, arrays)
        fits = {k: v.shape for k, v in report.arrays().items()} == \
            {k: v.shape for k, v in arrays.items()}
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SedContractError(f"{path}: the shard's counts do not fit its report ({exc!r})") \
            from exc
    if not fits:
        raise SedContractError(f"{path}: the shard's counts do not fit its report (their names "
                               "or widths are not those of its classes, modes and scores)")
    _check_bounds(arrays, clips, where)
    info["curves"] = curves = shard.get("curves")  # checked when the shards are joined
    given = curves.get("durations") if isinstance(curves, dict) else None
    if isinstance(given, list) and len(given) != len(clips):
        raise SedContractError(f"{path}: the shard's curves give {len(given)} durations for "
                               f"its {len(clips)} clips")
    return report, info


def merge_shards(paths: Sequence[str | Path]) -> GuardReport:
    """The corpus's report from the reports of all its shards (any order, each once)."""
    return merge_shard_files(paths)[0]


def merge_shard_files(paths: Sequence[str | Path]) -> tuple[GuardReport, dict[str, Any] | None]:
    """The corpus's report from the reports of all its shards (any order, each once), and
    their curves joined (``curves``, ``hours``, ``settings``; None when the shards have
    none)."""
    if not paths:
        raise SedContractError("merge needs the shard reports to join")
    shards = [(read_shard(p), str(p)) for p in paths]
    (_, first), first_path = shards[0]
    by_index: dict[int, tuple[GuardReport, str]] = {}
    for (report, info), path in shards:
        if info["count"] != first["count"] or info["corpus"] != first["corpus"]:
            raise SedContractError(f"{path} is shard {info['index']}/{info['count']} of another "
                                   f"corpus or split than {first_path} (shard "
                                   f"{first['index']}/{first['count']})")
        if info["index"] in by_index:
            raise SedContractError(f"{path} and {by_index[info['index']][1]} are both shard "
                                   f"{info['index']}/{info['count']}")
        by_index[info["index"]] = (report, path)
    lacking = first["count"] - len(by_index)  # each index is below the count
    if lacking:  # name the first few, never list them all: the count is a number in a file
        shown = [i for i in range(len(by_index) + 5) if i not in by_index][:min(5, lacking)]
        more = f" and {lacking - len(shown)} more" if lacking > len(shown) else ""
        given = ", ".join(f"{p} ({i}/{first['count']})"
                          for i, (_, p) in sorted(by_index.items())[:3])
        given += " …" if len(by_index) > 3 else ""
        raise SedContractError(f"shard(s) {', '.join(map(str, shown))}{more} of "
                               f"{first['count']} missing, the count the given shard(s) state "
                               f"({given}): a merged report covers the whole corpus")
    parts = [by_index[i][0] for i in range(first["count"])]
    owner: dict[str, str] = {}
    for report, path in by_index.values():
        for clip in report.clips:
            if owner.setdefault(clip, path) != path:
                raise SedContractError(f"clip {clip!r} is in {owner[clip]} and in {path}")
    for report, path in by_index.values():
        if report.policy != parts[0].policy:
            raise SedContractError(f"{path} was audited under another policy than "
                                   f"{by_index[0][1]}")
    infos = {info["index"]: info for (_, info), _ in shards}
    curves = _joined_curves([(infos[i]["curves"], by_index[i][1])
                             for i in range(first["count"])])
    return GuardReport.concat(parts), curves
