"""Events that end past their clip's duration. Durations files round (DESED's to 0.1 s: 16
validation events end up to 0.115 s after their clip), and detectors score padded clips (the
DCASE baseline's 156 frames of 64 ms reach 9.984 s on shorter clips). A reference event that
ends past its clip by at most ``tolerance`` seconds is cut at the clip's end, a predicted event
by any amount (the audio ends there; nothing past it can be scored); each is counted in the
report's ``traces`` section with the first file and row. A reference event beyond the
tolerance — a durations file of other clips, or a shifted reference — and, with ``strict``,
any event past its clip is an error naming how many and the first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from sedcontract.errors import TraceFormatError
from sedcontract.numbers import is_number
from sedcontract.traces.events import EventList
from sedcontract.traces.grid import MAX_SECONDS, to_us

DURATION_TOLERANCE = 0.2  # seconds a reference event may end past its clip (rounded durations)
SIDE_NAMES = {"ref": "reference", "pred": "predicted"}


@dataclass(frozen=True)
class Cut:
    """The events of one side cut at their clip's end: which, and where the first one is."""

    cut: np.ndarray       # [events] bool
    first: str | None     # "file, row R" of the first cut event, None when none was

    @property
    def count(self) -> int:
        return int(self.cut.sum())


def _place(events: EventList, i: int) -> str:
    where = events.where(i)
    row = f", row {where['row']}" if where.get("row") is not None else ""
    return f"{where.get('path') or 'events'}{row}"


def fit_to_durations(events: EventList, durations: Mapping[str, float], side: str, *,
                     tolerance: float = DURATION_TOLERANCE, strict: bool = False
                     ) -> tuple[EventList, Cut]:
    """``events`` with every event past its clip's duration cut there (onset and offset at
    most the duration), and what was cut; refused as described in the module. Clips without a
    duration are left to the caller's check."""
    if not is_number(tolerance) \
            or not 0 <= tolerance <= MAX_SECONDS:
        raise TraceFormatError(f"the duration tolerance must be a number of seconds in "
                               f"[0, {MAX_SECONDS:g}], got {tolerance!r}")
    if not len(events):
        return events, Cut(np.zeros(0, dtype=bool), None)
    end, over_us, late = _overruns(events, durations)
    if not late.any():
        return events, Cut(late, None)
    name = SIDE_NAMES[side]
    beyond = late & (over_us > to_us(np.float64(tolerance))) if side == "ref" else \
        np.zeros_like(late)
    refused = late if strict else beyond
    if refused.any():
        i = int(np.flatnonzero(refused)[0])
        worst = float((events.offset - end)[refused].max())
        rule = ("--strict-durations: no event may end past its clip" if strict else
                f"more than the tolerance of {tolerance:g} s (--duration-tolerance)")
        raise TraceFormatError(
            f"{int(refused.sum())} {name} event(s) end past their clip's duration, "
            f"{rule}; the latest by {worst:.6g} s; the first: offset "
            f"{float(events.offset[i])!r} after the duration {float(end[i])!r}. Are the "
            "durations those of these clips?", **events.where(i), column="offset")
    return _cut(events, end, late), Cut(late, _place(events, int(np.flatnonzero(late)[0])))


def _overruns(events: EventList, durations: Mapping[str, float]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each event's clip end (0 where the clip has no duration), how far its offset passes it
    in microseconds, and whether it ends past a known duration."""
    distinct, codes = events.codes("clip")  # looked up once per clip
    known = np.array([c in durations for c in distinct], dtype=bool)
    end = np.array([float(durations[c]) if k else 0.0
                    for c, k in zip(distinct, known, strict=True)], dtype=np.float64)[codes]
    known = known[codes]
    over_us = to_us(events.offset) - to_us(end)  # compared on the microsecond grid
    return end, over_us, known & (over_us > 0)


def _cut(events: EventList, end: np.ndarray, late: np.ndarray) -> EventList:
    """The ``late`` events with onset and offset at most their clip's ``end``."""
    limit = np.where(late, end, np.inf)
    return replace(events, onset=np.minimum(events.onset, limit),
                   offset=np.minimum(events.offset, limit))


def cut_at_durations(events: EventList, durations: Mapping[str, float]
                     ) -> tuple[EventList, int]:
    """``events`` cut at their clip's duration, whatever they overrun by, and those that lie
    wholly past it (nothing left) dropped; how many were cut or dropped. PSDS's opt-in cut rule
    (``PsdsRequest(cut=True)``, ``--psds-cut``): one rule for references and predictions alike.
    Clips without a duration are left as they are."""
    if not len(events):
        return events, 0
    end, _, late = _overruns(events, durations)
    if not late.any():
        return events, 0
    empty = late & (to_us(events.onset) >= to_us(end))
    cut = _cut(events, end, late)
    return (cut.kept(~empty) if empty.any() else cut), int(late.sum())
