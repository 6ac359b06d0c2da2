"""The guard report's source rows: one per mode × clip × class × coordinate with its counts,
as dicts (:func:`to_rows`) or as the CSV that ``report`` reads (:func:`to_csv`); and the
report's files written together (:func:`write_report`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.errors import of_kind
from sedcontract.guard.render import (
    ROW_FIELDS,
    VALUE_FIELD,
    policy_id,
    roles,
    scores_json,
    to_json,
    to_markdown,
)
from sedcontract.guard.report import GuardReport
from sedcontract.guard.rows import matching_row, score_row
from sedcontract.guard.summary_rows import ranking_rows, setting_rows
from sedcontract.outputs import atomic_write
from sedcontract.traces.soft import SoftLabels


def to_rows(report: GuardReport, system: str = "system",
            soft: SoftLabels | None = None) -> list[dict[str, Any]]:
    """Source rows: one per mode × clip × class × coordinate (class '*' on the union trace),
    named by ``system`` and the policy's digest. Besides the coordinates and diagnostics,
    ``matching:<m>`` rows count greedy pairs of the exact pairs, ``activity`` rows active
    reference frames of the clip's frames, and with standard scores
    ``score:<name>/recall`` and ``/precision`` rows count true positives of the references and
    of the outputs (segment scores: segments). With ``soft`` labels of the reference,
    ``softness`` rows hold the annotated segments' summed ambiguity ``1 − |2s − 1|`` and their
    number, both in thousandths (their ratio is the mean ambiguity).

    A row whose counts are both 0 adds nothing to any sum and is left out (most rows of a
    many-class corpus), except on each mode's first coordinate, so every clip and class keeps
    its row in order, and on the first clip, so every coordinate is named."""
    return [dict(zip(ROW_FIELDS, (*names[:3], clips[i], classes[i], *names[3:], done, owed),
                     strict=True))
            for names, clips, classes, kept, satisfied, obligations
            in _source_blocks(report, system, soft)
            for i, done, owed in zip(kept, satisfied, obligations, strict=True)]


Block = tuple[tuple[str, ...], list[str], list[str], list[int], list[int], list[int]]


def _source_blocks(report: GuardReport, system: str, soft: SoftLabels | None
                   ) -> Iterator[Block]:
    """:func:`to_rows`'s rows a mode and coordinate at a time, as columns: the names they
    share (system, policy, mode, coordinate, role, sort), every row's clip and class of the
    labels, and the kept rows with their counts (written without a dict per row)."""
    of_kind("report", report, GuardReport)
    policy = policy_id(report.policy)
    first_clip = report.clips[0] if report.clips else None
    named: set[str] = set()  # modes whose first coordinate was written in full
    columns: dict[int, tuple[Any, list[str], list[str], np.ndarray]] = {}

    def columns_of(labels: Sequence[tuple[str, str | None]]
                   ) -> tuple[list[str], list[str], np.ndarray]:
        """Each row's clip and class ('*' on the union trace), and whether it is of the first
        clip: made once per list of labels (held, so its id stays its own)."""
        if id(labels) not in columns:
            pairs = list(labels)
            clips = [clip for clip, _ in pairs]
            columns[id(labels)] = (labels, clips, ["*" if c is None else c for _, c in pairs],
                                   np.array([c == first_clip for c in clips], dtype=bool))
        return columns[id(labels)][1:]

    def block(mode: str, labels: Sequence[tuple[str, str | None]], coordinate: str, role: str,
              sort: str, satisfied: np.ndarray, obligations: np.ndarray) -> Block:
        every = mode not in named
        named.add(mode)
        clips, classes, first = columns_of(labels)
        satisfied = np.asarray(satisfied).astype(np.int64, copy=False)  # whole counts
        obligations = np.asarray(obligations).astype(np.int64, copy=False)
        kept = (np.arange(len(clips)) if every else
                np.flatnonzero((satisfied != 0) | (obligations != 0) | first))
        return ((system, policy, mode, coordinate, role, sort), clips, classes, kept.tolist(),
                satisfied[kept].tolist(), obligations[kept].tolist())

    for name, mode in report.modes.items():
        for coordinate, role in roles(report, mode):
            yield block(name, mode.rows, coordinate, role, mode.sorts[coordinate],
                        mode.satisfied[coordinate], mode.obligations[coordinate])
        for m in mode.matchings.values():  # greedy pairs of the maximum (exact) pairs
            yield block(name, mode.rows, matching_row(m.name), "matching", "event",
                        m.greedy_per_row, m.exact_per_row)
        facts = report.facts
        if facts.frames is not None and facts.active is not None:  # active reference frames
            per = len(facts.classes)
            active = facts.active[:, :per] if name == "typed" else facts.active[:, per:]
            frames = np.repeat(facts.frames, active.shape[1])
            yield block(name, mode.rows, "activity", "facts", "frame", active.reshape(-1),
                        frames)
    if soft is not None:
        facts = report.facts
        soft.check_covers(facts.clips)
        units, counts = soft.softness(facts.clips, facts.classes)
        labels = [(clip, cls) for clip in facts.clips for cls in facts.classes]
        yield block("typed", labels, "softness", "facts", "segment", units.reshape(-1),
                    1000 * counts.reshape(-1))
    for name, result in (report.scores or {}).items():  # true positives of references/outputs
        labels = [(clip, cls) for clip in result.clips for cls in result.classes]
        tp = result.tp.reshape(-1)
        yield block("typed", labels, score_row(name, "recall"), "score", name, tp,
                    result.ref.reshape(-1))
        yield block("typed", labels, score_row(name, "precision"), "score", name, tp,
                    result.sys.reshape(-1))


def _csv_field(text: str) -> str:
    """A text field as ``csv.writer`` writes it within a row (quoted only where it must be)."""
    if not text:
        return ""  # alone in a row it would be quoted; within one it is not
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text])
    return buffer.getvalue()[:-1]


def to_csv(report: GuardReport, system: str = "system", soft: SoftLabels | None = None,
           extra: Iterable[dict[str, Any]] = (),
           curves: Mapping[str, Any] | None = None) -> str:
    """The source rows of :func:`to_rows` as CSV, then ``extra`` rows (same columns), then
    the rows of what is no per-clip count: the policy's settings and the ranking metrics
    (:mod:`sedcontract.guard.summary_rows`), their number in the ``value`` column; ``curves``:
    the guard curves' areas as ranking metrics (``curve_<coordinate>``, in a PSDS result's
    layout). The bytes ``csv.writer`` writes: each distinct text quoted once, a line per row."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow((*ROW_FIELDS, VALUE_FIELD))
    quoted: dict[str, str] = {}  # each distinct text as written

    def field(text: str) -> str:
        if text not in quoted:
            quoted[text] = _csv_field(text)
        return quoted[text]

    lists: dict[int, tuple[list[str], list[str]]] = {}  # by the id of a block's clip list
    for names, clips, classes, kept, satisfied, obligations in _source_blocks(report, system,
                                                                               soft):
        if id(clips) not in lists:  # the list is held by the blocks while they are made
            lists[id(clips)] = ([field(c) for c in clips], [field(c) for c in classes])
        clip_of, class_of = lists[id(clips)]
        system_, policy, mode, coordinate, role, sort = map(field, names)
        head, middle = f"{system_},{policy},{mode},", f",{coordinate},{role},{sort},"
        out.write("".join([f"{head}{clip_of[i]},{class_of[i]}{middle}{done},{owed},\n"
                           for i, done, owed in zip(kept, satisfied, obligations,
                                                    strict=True)]))
    writer = csv.DictWriter(out, fieldnames=(*ROW_FIELDS, VALUE_FIELD), lineterminator="\n")
    writer.writerows(extra)
    digest = policy_id(report.policy)
    metrics = {**(report.psds or {}), **(curves or {})} or None
    writer.writerows(setting_rows(report.policy, metrics, report.auroc, system, digest))
    writer.writerows(ranking_rows(metrics, report.auroc, system, digest))
    return out.getvalue()


def write_report(report: GuardReport, directory: str | Path, stem: str,
                 system: str = "system", soft: SoftLabels | None = None, *,
                 inputs: Sequence[str | Path] = ()) -> list[Path]:
    """Write ``<stem>.json`` (the report), ``<stem>.md``, ``<stem>.csv`` (source rows, named
    ``system``, with softness rows from ``soft``) and, when the report has them,
    ``<stem>_scores.json`` (standard scores with their policy); never onto one of
    ``inputs``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    texts = {f"{stem}.json": to_json(report), f"{stem}.md": to_markdown(report),
             f"{stem}.csv": to_csv(report, system, soft)}
    if report.scores is not None:
        texts[f"{stem}_scores.json"] = scores_json(report)
    return [atomic_write(directory / name, text, inputs=inputs) for name, text in texts.items()]
