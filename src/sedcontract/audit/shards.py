"""Sharded audits: the JSON report of one block of a corpus's clips carries its counts, and
``merge`` joins the reports of all blocks into the corpus's report (the same bytes as one
unsharded run), so any engine that maps a command over shards can audit a corpus larger than
one machine."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.audit.facts import TraceFacts
from sedcontract.audit.guard import GuardReport, MatchingCounts, ModeReport, audit
from sedcontract.audit.render import to_dict
from sedcontract.audit.scores import MetricResult
from sedcontract.errors import SedContractError
from sedcontract.traces import EventList

__all__ = ["audit_shard", "corpus_key", "merge_shards", "parse_shard", "read_shard",
           "shard_json"]

SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*\Z")
_EMPTY = np.zeros(0, dtype=np.int64)


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
    ``index`` of ``count`` of the audit of these files (read and projected whole, audited on
    the shard's clips). ``GuardReport.concat`` of all ``count`` results is the corpus's
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


def shard_json(report: GuardReport, index: int, count: int, corpus: dict[str, Any]) -> str:
    """The JSON report of one shard (``report`` covers its clips only) with the section that
    ``merge`` reads: which shard of which corpus, its clips and every per-clip count."""
    data = to_dict(report)
    data["shard"] = {"index": index, "count": count, "corpus": corpus,
                     "clips": list(report.clips), "widths": {}, "counts": {}}
    for key, values in report.arrays().items():  # flat lists: an empty shard keeps its widths
        data["shard"]["widths"][key] = int(values.shape[1])
        data["shard"]["counts"][key] = values.reshape(-1).tolist()
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


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


def read_shard(path: str | Path) -> tuple[GuardReport, dict[str, Any]]:
    """A shard report and its ``shard`` section (index, count, corpus)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SedContractError(f"{path}: cannot read a JSON shard report ({exc})") from exc
    shard = _need(data, str(path), "shard")
    clips = [str(c) for c in _need(shard, str(path), "clips")]
    skeleton = _skeleton(data, str(path))
    counts, widths = _need(shard, str(path), "counts"), _need(shard, str(path), "widths")
    try:
        arrays = {k: np.asarray(v, dtype=np.int64).reshape(len(clips), int(widths[k]))
                  for k, v in counts.items()}
        report = skeleton.rebuild(clips, arrays)
    except (KeyError, ValueError, TypeError) as exc:
        raise SedContractError(f"{path}: the shard's counts do not fit its report ({exc!r})") \
            from exc
    return report, {k: _need(shard, str(path), k) for k in ("index", "count", "corpus")}


def merge_shards(paths: Sequence[str | Path]) -> GuardReport:
    """The corpus's report from the reports of all its shards (any order, each once)."""
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
    missing = [i for i in range(first["count"]) if i not in by_index]
    if missing:
        raise SedContractError(f"shard(s) {', '.join(map(str, missing))} of {first['count']} "
                               "missing: a merged report covers the whole corpus")
    parts = [by_index[i][0] for i in range(first["count"])]
    for report, path in by_index.values():
        if report.policy != parts[0].policy:
            raise SedContractError(f"{path} was audited under another policy than "
                                   f"{by_index[0][1]}")
    return GuardReport.concat(parts)
