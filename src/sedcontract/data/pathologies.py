"""Calibration sets of known pathologies: reference event lists corrupted into predictions
with one declared failure mode at a graded severity (or a declared mixture).

Every corruption keeps events inside their clip, keeps same-class events of a clip disjoint
(so nothing merges by accident) and is deterministic from the seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.outputs import Outputs
from sedcontract.traces import EventList
from sedcontract.traces.tsv import durations_tsv, events_tsv

Event = tuple[str, float, float, str]
MIN_LENGTH = 0.06   # seconds: no corrupted event gets shorter than three 20 ms frames
GAP = 0.04          # seconds: separation kept between pieces and next to events

# pathology → default severities (seconds, fractions, counts or factors; see each function)
PATHOLOGIES: dict[str, tuple[float, ...]] = {
    "late_onset": (0.1, 0.3, 0.6),
    "early_onset": (0.1, 0.3, 0.6),
    "late_release": (0.1, 0.3, 0.6),
    "early_release": (0.1, 0.3, 0.6),
    "missed": (0.25, 0.5, 1.0),
    "false": (1, 2, 4),
    "leakage": (0.06, 0.09, 0.12),
    "fragmentation": (2, 3, 4),
    "duration": (0.5, 1.5, 2.5),
    "class_swap": (0.5, 1.0),
    "late_release+fragmentation": (0.3,),
    "missed+false": (0.5,),
}


def _neighbours(events: list[Event], i: int, duration: float) -> tuple[float, float]:
    """The room event ``i`` may grow into: up to halfway (less half a gap) to the previous and
    next event of its clip and class, so that two events growing towards each other never
    touch."""
    clip, on, off, label = events[i]
    before, after = 0.0, duration
    for j, (c, o, f, lab) in enumerate(events):
        if j != i and c == clip and lab == label:
            if f <= on:
                before = max(before, (f + on + GAP) / 2)
            elif o >= off:
                after = min(after, (off + o - GAP) / 2)
    return before, after


def _shift(events, duration, rng, severity, *, side: str, sign: int) -> list[Event]:
    out = []
    for i, (clip, on, off, label) in enumerate(events):
        before, after = _neighbours(events, i, duration)
        if side == "onset":
            on = float(np.clip(on + sign * severity, before, off - MIN_LENGTH))
        else:
            off = float(np.clip(off + sign * severity, on + MIN_LENGTH, after))
        out.append((clip, min(on, off), off, label))
    return out


def _missed(events, duration, rng, severity) -> list[Event]:
    keep = rng.random(len(events)) >= severity
    return [e for e, k in zip(events, keep, strict=True) if k]


def _false(events, duration, rng, severity, *, length: float = 0.3,
           margin: float = 0.5) -> list[Event]:
    """``severity`` events per clip, each at least ``margin`` s from any reference event."""
    out = list(events)
    labels = sorted({e[3] for e in events}) or ["event"]
    for clip in dict.fromkeys(e[0] for e in events):
        busy = [(o - margin, f + margin) for c, o, f, _ in out if c == clip]
        for _ in range(int(severity)):
            for _attempt in range(50):
                start = float(rng.uniform(0, max(duration - length, 0)))
                if all(start + length <= b0 or start >= b1 for b0, b1 in busy):
                    out.append((clip, start, start + length, labels[rng.integers(len(labels))]))
                    busy.append((start - margin, start + length + margin))
                    break
    return out


def _leakage(events, duration, rng, severity) -> list[Event]:
    """A blip of ``severity`` s, ``GAP`` after each offset: separate, but within eps."""
    out = list(events)
    for i, (clip, _on, off, label) in enumerate(events):
        _, after = _neighbours(events, i, duration)
        start, end = off + GAP, off + GAP + severity
        if end <= after and end <= duration:
            out.append((clip, start, end, label))
    return out


def _fragmentation(events, duration, rng, severity) -> list[Event]:
    """Each event split into ``severity`` pieces separated by gaps of ``GAP`` s."""
    out = []
    pieces = int(severity)
    for clip, on, off, label in events:
        if off - on < pieces * (MIN_LENGTH + GAP):
            out.append((clip, on, off, label))
            continue
        edges = np.linspace(on, off, pieces + 1)
        out += [(clip, float(a) + (GAP / 2 if k else 0.0), float(b) - (GAP / 2 if k < pieces - 1
                                                                      else 0.0), label)
                for k, (a, b) in enumerate(itertools.pairwise(edges))]
    return out


def _duration(events, duration, rng, severity) -> list[Event]:
    """Length scaled by ``severity`` around the event centre, within the room it has."""
    out = []
    for i, (clip, on, off, label) in enumerate(events):
        before, after = _neighbours(events, i, duration)
        centre, half = (on + off) / 2, max((off - on) * severity / 2, MIN_LENGTH / 2)
        out.append((clip, float(max(centre - half, before)), float(min(centre + half, after)),
                    label))
    return out


def _class_swap(events, duration, rng, severity) -> list[Event]:
    """A ``severity`` fraction of events relabelled to the next class (alphabetically); an
    event that would overlap or touch an event of that class keeps its label (no merges)."""
    labels = sorted({e[3] for e in events})
    if len(labels) < 2:
        raise SedContractError("class_swap needs at least two classes in the reference")
    out = list(events)
    for i in np.flatnonzero(rng.random(len(events)) < severity):
        clip, on, off, label = out[i]
        target = labels[(labels.index(label) + 1) % len(labels)]
        if all(not (c == clip and lab == target and o <= off + GAP and f >= on - GAP)
               for c, o, f, lab in out):
            out[i] = (clip, on, off, target)
    return out


CORRUPTIONS: dict[str, Callable[..., list[Event]]] = {
    "late_onset": lambda e, d, r, s: _shift(e, d, r, s, side="onset", sign=+1),
    "early_onset": lambda e, d, r, s: _shift(e, d, r, s, side="onset", sign=-1),
    "late_release": lambda e, d, r, s: _shift(e, d, r, s, side="offset", sign=+1),
    "early_release": lambda e, d, r, s: _shift(e, d, r, s, side="offset", sign=-1),
    "missed": _missed,
    "false": _false,
    "leakage": _leakage,
    "fragmentation": _fragmentation,
    "duration": _duration,
    "class_swap": _class_swap,
    "late_release+fragmentation": lambda e, d, r, s: _fragmentation(
        _shift(e, d, r, s, side="offset", sign=+1), d, r, 2),
    "missed+false": lambda e, d, r, s: _false(_missed(e, d, r, s), d, r, 2),
}


def corrupt(events: Sequence[Event], duration: float, pathology: str, severity: float,
            rng: np.random.Generator) -> list[Event]:
    """One clip's reference events turned into a prediction with ``pathology``."""
    if pathology not in CORRUPTIONS:
        raise SedContractError(f"unknown pathology {pathology!r}; known: "
                               f"{', '.join(CORRUPTIONS)}")
    ordered = sorted(events, key=lambda e: (e[3], e[1]))
    return sorted(CORRUPTIONS[pathology](ordered, duration, rng, severity),
                  key=lambda e: (e[1], e[3]))


@dataclass(frozen=True)
class PathologySet:
    """Reference, corrupted predictions, durations and labels: clip → (pathology, severity)."""

    ref: EventList
    pred: EventList
    durations: dict[str, float]
    labels: list[tuple[str, str, str, float]]  # (clip, source clip, pathology, severity)
    # pathology → cases left out because the corruption found no room (the prediction would
    # equal the reference: a "failure" a calibration set must not label)
    unchanged: dict[str, int] = field(default_factory=dict)


def pathology_set(ref: EventList, durations: Mapping[str, float] | None = None, *,
                  seed: int = 0,
                  pathologies: Mapping[str, Sequence[float]] | None = None) -> PathologySet:
    """Every reference clip × pathology × severity as a new clip ``<clip>__<pathology>_<sev>``
    whose reference is the original and whose prediction is the corrupted copy; a case whose
    corruption found no room (the copy equals the original) is left out and counted."""
    if seed < 0:
        raise SedContractError(f"the seed must be a non-negative integer, got {seed}")
    chosen = dict(pathologies or PATHOLOGIES)
    if pathologies is None and len(set(ref.label.tolist())) < 2:
        chosen.pop("class_swap")  # the default set skips what a one-class reference cannot do
    unknown = [p for p in chosen if p not in CORRUPTIONS]
    if unknown:
        raise SedContractError(f"unknown pathology {unknown[0]!r}; known: "
                               f"{', '.join(CORRUPTIONS)}")
    by_clip: dict[str, list[Event]] = {clip: [] for clip in ref.clips}
    for event in ref.to_rows():
        by_clip[event[0]].append(event)
    rng = np.random.default_rng(seed)
    ref_rows, pred_rows, new_durations, labels = [], [], {}, []
    unchanged: dict[str, int] = {}
    for clip, events in by_clip.items():
        duration = (durations or {}).get(clip, max((e[2] for e in events), default=0.0))
        for pathology, severities in chosen.items():
            for severity in severities:
                name = f"{clip}__{pathology}_{severity:g}"
                corrupted = corrupt(events, duration, pathology, severity, rng)
                if sorted(corrupted) == sorted(events):
                    unchanged[pathology] = unchanged.get(pathology, 0) + 1
                    continue
                ref_rows += [(name, o, f, lab) for _, o, f, lab in events]
                pred_rows += [(name, o, f, lab) for _, o, f, lab in corrupted]
                new_durations[name] = duration
                labels.append((name, clip, pathology, float(severity)))
    names = tuple(new_durations)
    return PathologySet(EventList.from_rows(ref_rows, clips=names),
                        EventList.from_rows(pred_rows, clips=names), new_durations, labels,
                        unchanged)


FILES = ("ref.tsv", "pred.tsv", "durations.tsv", "labels.tsv")  # what pathology_files holds


def pathology_files(data: PathologySet) -> dict[str, str]:
    """``ref.tsv``, ``pred.tsv``, ``durations.tsv`` and ``labels.tsv`` (clip, source_clip,
    pathology, severity) of a pathology set, ready for ``sedcontract audit``."""
    return {
        "ref.tsv": events_tsv(data.ref),
        "pred.tsv": events_tsv(data.pred),
        "durations.tsv": durations_tsv(data.durations),
        "labels.tsv": "filename\tsource_clip\tpathology\tseverity\n" + "".join(
            f"{clip}.wav\t{source}\t{pathology}\t{severity:g}\n"
            for clip, source, pathology, severity in data.labels),
    }


def write_pathology_set(folder: str | Path, data: PathologySet, *,
                        inputs: Iterable[str | Path | None] = ()) -> list[Path]:
    """Write :func:`pathology_files` into ``folder``, all or none: if any of them is one of
    ``inputs`` (the files the set was made from) nothing is written."""
    texts = {Path(folder) / name: text for name, text in pathology_files(data).items()}
    with Outputs(reads=inputs, writes=list(texts), creates=[folder]) as out:
        for path, text in texts.items():
            out.write(path, text)
    return list(texts)
