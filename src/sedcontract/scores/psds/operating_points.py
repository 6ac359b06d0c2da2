"""PSDS from operating points, as psds_eval computes it: each operating point is a table of
detections (the system at one threshold); its true positives, false positives and
cross-triggers follow the intersection criteria (DTC, GTC, CTTC) against the reference and a
``world`` event spanning each clip; the per-class TPR-eFPR staircases over all points are
averaged into the PSD-ROC, whose area up to ``max_efpr`` is the score.

Times are compared as given, in float64, exactly as psds_eval does (durations are metadata: the
total time and the world events; nothing is cut unless ``cut=True`` asks). Where psds_eval
refuses an input this module says what it does instead: same-class events that overlap (share
more than a boundary) are joined into one and counted; with a single class there are no
cross-triggers (psds_eval's eFPR is undefined there). Pairs are found by sorted search per clip
and class, so memory follows the overlapping pairs, never all pairs of a clip."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from sedcontract.blocks import EXECUTOR_BLOCKS, block_results
from sedcontract.errors import SedContractError, TraceFormatError
from sedcontract.scores.psds.roc import staircase_area, staircase_at
from sedcontract.scores.psds.settings import (
    PsdsSettings,
    PsdsUnavailable,
    audio_seconds,
    scenarios,
)
from sedcontract.traces import EventList, read_events
from sedcontract.traces.given import durations_of, events_of, is_frame
from sedcontract.traces.grid import SECONDS_PER_HOUR
from sedcontract.traces.intervals import Intervals, distinct, expand_ranges, overlap_ranges
from sedcontract.traces.overrun import cut_at_durations
from sedcontract.traces.tsv import given_files, header_names

POINT_SUFFIXES = (".tsv", ".csv")


def point_files(paths: Sequence[str | Path],
                others: Mapping[str, str | Path | None] | None = None) -> list[Path]:
    """The operating-point tables: each path a table, or a folder of ``*.tsv`` / ``*.csv``
    tables (sorted by name). A file that is no such table — the reference or durations given
    with ``others`` (option → path), a score file, a durations table — is refused with the
    others that do not fit, saying what each is and which option takes it."""
    out = given_files(
        paths, lambda folder: [p for p in folder.iterdir()
                               if p.suffix in POINT_SUFFIXES and p.is_file()],
        none_here="no operating-point tables (*.tsv, *.csv) in this folder",
        missing="no such operating-point table or folder")
    if not out:
        raise SedContractError("no operating-point tables given")
    misfits = [f"{path.name} ({why})" for path in out
               if (why := _not_a_point(path, others or {})) is not None]
    if misfits:
        where = ", ".join(str(p) for p in paths)
        raise SedContractError(
            f"{where}: {len(misfits)} file(s) here are not operating-point tables (a system's "
            f"detections at one threshold): {'; '.join(misfits[:5])}"
            f"{' …' if len(misfits) > 5 else ''}; give --pred-points the tables alone (the "
            "files, or a folder holding only them)")
    return out


def _not_a_point(path: Path, others: Mapping[str, str | Path | None]) -> str | None:
    """What a file given as an operating-point table is instead (None: it may be one)."""
    for option, other in others.items():
        if other is not None and Path(other).is_file() and (
                os.path.samefile(path, other) or _same_bytes(path, Path(other))):
            return f"the same as {option} {other}"
    fields = header_names(path)  # an empty table, or one without a header, may be a point
    if fields[:2] == ["onset", "offset"]:
        return "a score file (onset offset <class…>): give its folder with --pred-scores"
    if set(fields) >= {"filename", "duration"} and "onset" not in fields:
        return "a durations table: give it with --durations"
    return None


def _same_bytes(a: Path, b: Path) -> bool:
    """Two files of the same size and bytes (a copy of the reference among the points)."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as x, b.open("rb") as y:
        for block in iter(lambda: x.read(1 << 20), b""):
            if block != y.read(len(block)):
                return False
    return True


def _join_overlaps(key: np.ndarray, on: np.ndarray, off: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, int]:
    """Events of non-zero length, sorted by ``key`` (clip and class) and onset, with those of
    one key that overlap joined into one (psds_eval refuses them): the rows kept, their
    offsets (a joined event reaches the latest of its members), and how many rows were joined
    into another. As in psds_eval, touching events stay apart, and so do exact copies of one
    event that overlaps nothing else (psds_eval accepts and counts each)."""
    idx = _by_key_and_onset(np.flatnonzero(off > on), key, on)
    k, a, b = key[idx], on[idx], off[idx]
    if not len(idx):
        return idx, b, 0
    first = np.ones(len(idx), dtype=bool)
    first[1:] = k[1:] != k[:-1]
    inner = np.flatnonzero(~first)
    if not (a[inner] < b[inner - 1]).any():  # each starts where the one before it ended: the
        return idx, b, 0                      # offsets rise too, and nothing overlaps
    # the latest offset so far within each key, exactly: offsets as ranks, keys kept apart
    values, rank = np.unique(b, return_inverse=True)
    group = np.cumsum(first) - 1
    stride = len(values) + 1
    reach = np.maximum.accumulate(group * stride + rank)
    new = first.copy()
    new[inner] = a[inner] >= values[reach[inner - 1] - group[inner] * stride]
    starts = np.flatnonzero(new)
    size = np.diff(np.append(starts, len(idx)))
    latest = np.maximum.reduceat(b, starts)
    copies = (a[starts] == a[starts + size - 1]) & (latest == np.minimum.reduceat(b, starts))
    kept = np.repeat(copies, size) | new  # every copy of a copy group, else its first row
    offset = np.repeat(latest, size)[kept]
    return idx[kept], offset, int((size[~copies] - 1).sum())


def _by_key_and_onset(idx: np.ndarray, key: np.ndarray, on: np.ndarray) -> np.ndarray:
    """``idx`` ordered by key, then onset (events of one key with the same onset overlap, so
    their order never shows). Tables written clip by clip and class by class come in that
    order already, where a stable sort of the key costs a pass."""
    idx = idx[np.argsort(key[idx], kind="stable")]
    k, a = key[idx], on[idx]
    if ((k[1:] == k[:-1]) & (a[1:] < a[:-1])).any():
        idx = idx[np.lexsort((a, k))]
    return idx


def _joined(events: EventList) -> tuple[EventList, int]:
    """The events with overlaps of one clip and class joined (:func:`_join_overlaps`)."""
    _, clip = np.unique(events.clip.astype(str), return_inverse=True)
    _, label = np.unique(events.label.astype(str), return_inverse=True)
    key = clip.astype(np.int64) * (int(label.max(initial=0)) + 1) + label
    kept, offset, joined = _join_overlaps(key, events.onset, events.offset)
    return EventList(events.clip[kept], events.onset[kept], offset, events.label[kept],
                     clips=events.clips), joined


@dataclass(frozen=True)
class _Truth:
    """The reference as the criteria see it: per clip and class its events as sorted
    intervals, with counts and durations per class, and each clip's length (its world event,
    ``[0, length]``)."""

    classes: tuple[str, ...]
    clip_index: dict[str, int]
    intervals: Intervals          # row = clip · classes + class
    count: np.ndarray             # [classes] reference events
    seconds: np.ndarray           # [classes] total reference duration
    lengths: np.ndarray           # [clips] seconds
    joined: int

    @property
    def total(self) -> float:
        """Seconds of audio (the world events)."""
        return float(self.lengths.sum())


def _truth(ref: EventList, durations: Mapping[str, float], classes: Sequence[str], *,
           every_class: bool = True) -> _Truth:
    """The reference on the clips of the reference and of the durations file (psds_eval's
    metadata: a clip only the durations file names is audio without events); ``every_class``:
    refuse a class without reference events (a block of clips may lack some)."""
    events, joined = _joined(ref)
    clips = list(dict.fromkeys([*ref.clips, *durations]))
    missing = [c for c in clips if c not in durations]
    if missing:
        raise SedContractError(f"PSDS needs the duration of every clip: no duration for "
                               f"{len(missing)} clip(s), first {missing[0]}")
    clip_index = {c: i for i, c in enumerate(clips)}
    class_index = {c: k for k, c in enumerate(classes)}
    cls = np.array([class_index[lab] for lab in events.label], dtype=np.int64)
    clip = np.array([clip_index[c] for c in events.clip], dtype=np.int64)
    length = np.array([float(durations[c]) for c in clips], dtype=np.float64)
    row = clip * len(classes) + cls
    start, end = events.onset, events.offset
    order = np.lexsort((start, row))
    count = np.bincount(cls, minlength=len(classes))
    absent = [c for c, n in zip(classes, count, strict=True) if n == 0]
    if absent and every_class:
        raise SedContractError(f"PSDS needs reference events of every class: none of "
                               f"{', '.join(absent)} (its TPR would be undefined); leave the "
                               "class out (--classes)")
    seconds = np.bincount(cls, weights=events.offset - events.onset, minlength=len(classes))
    return _Truth(tuple(classes), clip_index, Intervals(row[order], start[order], end[order]),
                  count, seconds, length, joined)


def _ids(points: Sequence[EventList], truth: _Truth) -> tuple[np.ndarray, np.ndarray]:
    """The clip and class index of every detection of ``points``, one point after another; a
    clip neither in the reference nor in the durations file, or a label not among the
    classes, is refused by file, row and column."""
    ends = np.cumsum([len(det) for det in points], dtype=np.int64)
    out, refused = [], []
    for name, index, column, what in (
            ("clip", truth.clip_index, "filename",
             "clip {!r} is neither in the reference nor in the durations file"),
            ("label", {c: k for k, c in enumerate(truth.classes)}, "event_label",
             "label {!r} is not one of the classes (" + ", ".join(truth.classes) + ")")):
        values = np.concatenate([getattr(det, name) for det in points] or
                                [np.zeros(0, dtype=object)])
        ids = np.fromiter(map(index.get, values.tolist(), repeat(-1)), dtype=np.int64,
                          count=len(values))
        bad = np.flatnonzero(ids < 0)
        if bad.size:  # (point, its clips before its labels): the first refusal, point by point
            i = int(bad[0])
            k = int(np.searchsorted(ends, i, side="right"))
            refused.append((k, len(refused), what.format(values[i]), i, column))
        out.append(ids)
    if refused:
        k, _, message, i, column = min(refused)
        raise TraceFormatError(message, **points[k].where(i - (int(ends[k - 1]) if k else 0)),
                               column=column)
    return out[0], out[1]


def _point_counts(truth: _Truth, point: np.ndarray, clip: np.ndarray, label: np.ndarray,
                  onset: np.ndarray, offset: np.ndarray, n_pts: int, settings: PsdsSettings
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """True positives ``[points, classes]``, false positives ``[points, classes]`` and
    cross-triggers ``[points, detected class, reference class]`` (``None`` when the scenario
    gives them no weight) of the detections of every operating point at once (``point``: each
    detection's point; in (point, clip, class, onset) order, as :func:`_join_overlaps` leaves
    them; psds_eval's criteria)."""
    n_cls = len(truth.classes)
    ref = truth.intervals
    n, n_ref = len(point), len(ref)
    # each detection against the reference events of its own class (its DTC and GTC)
    lo, hi = overlap_ranges(Intervals(clip * n_cls + label, onset, offset), ref)
    j, g = expand_ranges(lo, hi)
    inter = np.minimum(offset[j], ref.end[g]) - np.maximum(onset[j], ref.start[g])
    precision = inter / (offset[j] - onset[j])
    dtc_pass = (np.bincount(j, weights=precision, minlength=n) >= settings.dtc) & (hi > lo)
    # the GTC: per reference event of one point, summed over the pairs that name it
    chosen = np.flatnonzero(dtc_pass[j])
    key, members = _groups(point[j[chosen]] * n_ref + g[chosen])
    coverage = inter[chosen] / (ref.end[g[chosen]] - ref.start[g[chosen]])
    found = np.bincount(members, weights=coverage, minlength=len(key)) >= settings.gtc
    at = key[found]
    tp = np.bincount((at // n_ref) * n_cls + ref.row[at % n_ref] % n_cls,
                     minlength=n_pts * n_cls).reshape(n_pts, n_cls)
    true_det = np.zeros(n, dtype=bool)
    true_det[j[chosen[found[members]]]] = True
    # false: neither true nor within the DTC, and on the clip (its world event)
    false = ~true_det & ~dtc_pass & (onset < truth.lengths[clip]) & (offset > 0)
    fp = np.bincount(point[false] * n_cls + label[false],
                     minlength=n_pts * n_cls).reshape(n_pts, n_cls)
    if settings.alpha_ct == 0 or n_cls < 2:
        return tp, fp, None
    return tp, fp, _cross_triggers(truth, point, clip, label, onset, offset,
                                   np.flatnonzero(~dtc_pass), n_pts, settings.cttc)


def _cross_triggers(truth: _Truth, point: np.ndarray, clip: np.ndarray, label: np.ndarray,
                    onset: np.ndarray, offset: np.ndarray, outside: np.ndarray, n_pts: int,
                    cttc: float) -> np.ndarray:
    """Cross-triggers ``[points, detected class, reference class]``: a detection outside the
    DTC (``outside``: their indices) whose share on the reference events of another class of
    its clip reaches ``cttc``."""
    n_cls = len(truth.classes)
    ref = truth.intervals
    rows = distinct(ref.row)  # the (clip, class) rows that hold events
    d, at = expand_ranges(np.searchsorted(rows, clip[outside] * n_cls),
                          np.searchsorted(rows, clip[outside] * n_cls + n_cls))
    other = rows[at] % n_cls != label[outside[d]]
    d, at = d[other], at[other]
    i = outside[d]
    lo, hi = overlap_ranges(Intervals(rows[at], onset[i], offset[i]), ref)
    pair, g = expand_ranges(lo, hi)
    j = i[pair]
    inter = np.minimum(offset[j], ref.end[g]) - np.maximum(onset[j], ref.start[g])
    key, members = _groups(d[pair] * n_cls + ref.row[g] % n_cls)
    share = np.bincount(members, weights=inter / (offset[j] - onset[j]), minlength=len(key))
    counted = key[share >= cttc]
    kj, kk = outside[counted // n_cls], counted % n_cls
    return np.bincount((point[kj] * n_cls + label[kj]) * n_cls + kk,
                       minlength=n_pts * n_cls * n_cls).reshape(n_pts, n_cls, n_cls)


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, and each element's group among them; keys that come in order (as
    the pairs of detections in time order do) are grouped without a sort. Summed with
    ``bincount`` over the groups, the sums are taken in the elements' order either way."""
    if len(key) and not (key[1:] >= key[:-1]).all():
        return np.unique(key, return_inverse=True)
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    return key[new], np.cumsum(new) - 1


@dataclass(frozen=True)
class PointRates:
    """Per operating point (the last column is psds_eval's added zero point): TPR and FP rate
    ``[classes, points + 1]``, cross-trigger rate ``[classes, classes, points + 1]`` (NaN on the
    diagonal), per hour; ``ctr`` is ``None`` where the scenario gives cross-triggers no
    weight (α_ct = 0, or one class), and they are not counted."""

    tpr: np.ndarray
    fpr: np.ndarray
    ctr: np.ndarray | None


def _classes(ref: EventList, classes: Sequence[str] | None) -> tuple[str, ...]:
    """The declared classes, else those of the reference's events of non-zero length."""
    if classes is not None:
        return tuple(classes)
    return tuple(sorted(set(ref.label[ref.offset > ref.onset])))


def _block_counts(points: Sequence[EventList], truth: _Truth, settings: PsdsSettings
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """The whole counts of one block of clips: true positives ``[points, classes]``, false
    positives ``[points, classes]``, cross-triggers ``[points, classes, classes]`` (or
    ``None``, :class:`PointRates`), and the detections joined into another. Counts of
    disjoint blocks add up to the corpus's."""
    width = len(truth.classes)
    clip, label = _ids(points, truth)
    point = np.repeat(np.arange(len(points)), [len(det) for det in points])
    onset, offset = (np.concatenate([getattr(det, name) for det in points] or [np.zeros(0)])
                     for name in ("onset", "offset"))
    # all points' detections at once: overlaps joined within a point, clip and class
    kept, offset, joined = _join_overlaps((point * len(truth.clip_index) + clip) * width
                                          + label, onset, offset)
    tp, fp, ct = _point_counts(truth, point[kept], clip[kept], label[kept], onset[kept],
                               offset, len(points), settings)
    return tp, fp, ct, joined


def block_counts(points: Sequence[EventList], ref: EventList, durations: Mapping[str, float],
                 settings: PsdsSettings, classes: Sequence[str]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """:func:`_block_counts` of the clips of ``durations`` (a block of them), as a task an
    executor runs: the events already checked by the caller."""
    return _block_counts(points, _truth(ref, durations, classes, every_class=False), settings)


def point_rates(points: Sequence[EventList], ref: EventList, durations: Mapping[str, float],
                settings: PsdsSettings, classes: Sequence[str] | None = None, *,
                executor: Any = None, blocks: int | None = None
                ) -> tuple[PointRates, dict[str, int]]:
    """The rates of every operating point, and what was joined (``{"ref": n, "points": n}``).
    The classes (default: those of the reference) count only events of non-zero length, as
    psds_eval's do. With an ``executor`` (anything with ``submit(fn, *args)`` returning a
    future: a process pool, a Dask client, …) the clips are cut into ``blocks`` whose whole
    counts are summed: the same rates as one process, bit for bit."""
    live = ref.offset > ref.onset
    classes = _classes(ref, classes)
    if not points:
        raise SedContractError("PSDS from operating points needs at least one table")
    known = set(classes)
    unknown = [i for i in np.flatnonzero(live) if ref.label[i] not in known]
    if unknown:
        i = int(unknown[0])
        raise TraceFormatError(f"label {ref.label[i]!r} is not one of the classes",
                               **ref.where(i), column="event_label")
    truth = _truth(ref, durations, classes)
    audio_seconds(durations, list(truth.clip_index))  # rates per hour of some audio
    if executor is None:  # the detections are checked as they are counted
        tp, fp, ct, joined = _block_counts(points, truth, settings)
    else:
        _ids(points, truth)  # every detection checked here, before any block leaves
        tp, fp, ct, joined = _summed(executor, points, ref, durations, settings, classes,
                                     list(truth.clip_index), blocks)
    n_cls = len(classes)
    zero = np.zeros((n_cls, 1))
    ctr = None
    if ct is not None:
        rate = ct * SECONDS_PER_HOUR / truth.seconds[None, None, :]  # every class has events
        rate[:, np.eye(n_cls, dtype=bool)] = np.nan
        ctr = np.concatenate([rate.transpose(1, 2, 0), np.zeros((n_cls, n_cls, 1))], axis=2)
    return (PointRates(np.concatenate([(tp / truth.count).T, zero], axis=1),
                       np.concatenate([(fp * SECONDS_PER_HOUR / truth.total).T, zero], axis=1),
                       ctr),
            {"ref": truth.joined, "points": joined})


def _summed(executor: Any, points: Sequence[EventList], ref: EventList,
            durations: Mapping[str, float], settings: PsdsSettings, classes: Sequence[str],
            clips: list[str], blocks: int | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """:func:`block_counts` of consecutive blocks of ``clips`` on ``executor``, summed."""
    def task(a: int, b: int) -> Any:
        block = clips[a:b]
        return executor.submit(
            block_counts, [p.select(clips=block) for p in points], ref.select(clips=block),
            {c: durations[c] for c in block if c in durations}, settings, tuple(classes))

    tp = fp = joined = 0
    ct = None
    for part in block_results(len(clips), blocks if blocks is not None else EXECUTOR_BLOCKS,
                              task):
        tp, fp, joined = tp + part[0], fp + part[1], joined + part[3]
        ct = part[2] if ct is None else ct + part[2]
    return tp, fp, ct, joined


def psd_roc(rates: PointRates, settings: PsdsSettings) -> dict[str, np.ndarray]:
    """The PSD-ROC: the common eFPR axis, each class's staircase TPR on it, their mean and
    standard deviation, and the effective TPR ``mean − alpha_st · std`` (at least 0)."""
    n_cls = rates.tpr.shape[0]
    efpr = rates.fpr
    if rates.ctr is not None:  # the mean over the other classes (the diagonal is NaN)
        efpr = efpr + settings.alpha_ct * np.nanmean(rates.ctr, axis=1)
    axis = np.unique(efpr)
    curves = np.stack([staircase_at(axis, efpr[c], rates.tpr[c]) for c in range(n_cls)])
    mean, std = np.nanmean(curves, axis=0), np.nanstd(curves, axis=0)
    etpr = np.maximum(np.nan_to_num(mean - settings.alpha_st * std, nan=0.0), 0.0)
    return {"efpr": axis, "tpr": curves, "mean": mean, "std": std, "etpr": etpr}


def psds_of_points(points: Sequence[Any], ref: Any, durations: Mapping[str, float] | Any,
                   settings: Mapping[str, PsdsSettings] | None = None,
                   classes: Sequence[str] | None = None, *, executor: Any = None,
                   blocks: int | None = None, cut: bool = False) -> dict[str, Any]:
    """``{scenario: {"value", "per_class", "settings", "rule", "points", "joined", "cut",
    "roc"}}``: PSDS of each scenario (default: the DCASE presets) from the operating points;
    ``per_class`` is the area of each class's own staircase (alpha_st not applied). The
    reference and the points are taken as they come (psds_eval's input); ``cut`` cuts both at
    the durations (``"cut"``: how many reference events and detections were). ``executor``,
    ``blocks``: as :func:`point_rates` (the same result). Each point, ``ref`` and
    ``durations`` may be a file, an event list or mapping, or a DataFrame (psds_eval's
    ``filename onset offset event_label`` and ``filename duration`` tables)."""
    settings = scenarios(settings)
    ref = events_of(ref, "ground truth")
    durations = durations_of(durations)
    if durations is None:
        raise PsdsUnavailable("PSDS needs clip durations (--durations)")
    tables = (EventList, str, os.PathLike)
    if isinstance(points, Mapping) and not is_frame(points) and all(
            is_frame(t) or isinstance(t, tables) for t in points.values()):  # threshold -> table
        points = [events_of(table, f"operating point {key!r}") for key, table in points.items()]
    elif isinstance(points, Mapping | EventList | str | os.PathLike) or is_frame(points):
        raise TraceFormatError("points are a list of operating-point tables (or a mapping of "
                               "threshold → table), one per threshold; got one table")
    points = [events_of(table, f"operating point {k + 1}") for k, table in enumerate(points)]
    counted = None
    if cut:
        ref, ref_cut = cut_at_durations(ref, durations)
        fitted = [cut_at_durations(table, durations) for table in points]
        points = [table for table, _ in fitted]
        counted = {"ref": ref_cut, "pred": sum(n for _, n in fitted)}
    out: dict[str, Any] = {}
    for name, chosen in settings.items():
        rates, joined = point_rates(points, ref, durations, chosen, classes, executor=executor,
                                    blocks=blocks)
        roc = psd_roc(rates, chosen)
        value = staircase_area(roc["efpr"], roc["etpr"], chosen.max_efpr) / chosen.max_efpr
        names = _classes(ref, classes)
        per_class = {c: staircase_area(roc["efpr"], roc["tpr"][i], chosen.max_efpr)
                     / chosen.max_efpr
                     for i, c in enumerate(names)}
        out[name] = {"value": value, "per_class": per_class, "settings": chosen.as_dict(),
                     "rule": "psds_eval", "points": len(points), "joined": joined,
                     "cut": counted,
                     "roc": {"efpr": roc["efpr"].tolist(), "etpr": roc["etpr"].tolist(),
                             "mean": roc["mean"].tolist(), "std": roc["std"].tolist()}}
    return out


def read_points(paths: Sequence[str | Path],
                others: Mapping[str, str | Path | None] | None = None) -> list[EventList]:
    """Every operating-point table of ``paths`` (files or folders), read as they come
    (:func:`point_files` says which files are not tables)."""
    return [read_events(path) for path in point_files(paths, others)]
