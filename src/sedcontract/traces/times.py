"""Times as people write them in options and configs: a number with its unit, ``200ms``,
``0.2s``, or ``10f`` (frames of the grid) where a value counts frames; ``0`` alone needs no
unit. A bare number is refused, naming the option: ``--eps 200`` could be 200 frames (4 s at
20 ms) or 200 ms, and nothing would say which was meant."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from sedcontract.errors import SedContractError
from sedcontract.traces.grid import MAX_FRAMES, MAX_SECONDS, US_PER_SECOND

# the contract language's numbers (``0.2``, never ``.2`` or ``2.``), so an option's time is
# always a bound the contract takes
_TIME = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Zµ]*)\s*\Z")
_US_PER = {"s": US_PER_SECOND, "ms": 1000}
SPELLING = "200ms, 0.2s or 10f (frames)"


class TimeError(SedContractError):
    """A time option without a unit, with an unknown one, or out of range."""


@dataclass(frozen=True)
class Time:
    """A time as written: its decimal ``number`` and ``unit`` (``s``, ``ms``, ``f``, or ``""``
    for a bare 0)."""

    number: str
    unit: str

    @property
    def frames(self) -> int | None:
        """Whole frames (``10f``, or 0), None for a time in seconds."""
        if self.unit == "f" or (self.unit == "" and Decimal(self.number) == 0):
            return int(Decimal(self.number))
        return None

    @property
    def seconds(self) -> float | None:
        """The time in seconds (the float nearest the decimal value), None for frames."""
        if self.unit == "f":
            return None
        return float(Decimal(self.number) * _US_PER.get(self.unit, 0) / US_PER_SECOND)

    @property
    def us(self) -> Decimal | None:
        """The exact time in microseconds (may be fractional), None for frames."""
        return None if self.unit == "f" else Decimal(self.number) * _US_PER.get(self.unit, 0)

    def __str__(self) -> str:
        return f"{self.number}{self.unit}"


def parse_time(text: str, option: str, *, frames: bool = False) -> Time:
    """``text`` as a :class:`Time` (``frames``: ``10f`` is allowed), or an error naming
    ``option`` and the spellings it takes."""
    spelling = SPELLING if frames else "200ms or 0.2s"
    match = _TIME.match(str(text))
    if match is None:
        raise TimeError(f"{option} {text!r} is not a time; write it with its unit: {spelling}"
                        f"{'' if frames else ' (a time in seconds, not frames)'}")
    number, unit = match[1], match[2]
    if unit == "" and Decimal(number) != 0:
        raise TimeError(f"{option} {text!r} has no unit; write {number}ms, {number}s"
                        f"{f' or {number}f (frames)' if frames else ''} (only 0 may go "
                        "without one)")
    if unit not in ("", *_US_PER) and not (frames and unit == "f"):
        known = "s, ms or f (frames)" if frames else "s or ms"
        raise TimeError(f"{option} {text!r}: unknown unit {unit!r}; the units are {known}")
    time = Time(number, unit)
    if unit == "f":
        if Decimal(number) != int(Decimal(number)):
            raise TimeError(f"{option} {text!r}: frames are whole")
        if Decimal(number) > MAX_FRAMES:
            raise TimeError(f"{option} {text!r} is more frames than the largest supported "
                            f"bound ({MAX_FRAMES})")
    elif time.us > MAX_SECONDS * US_PER_SECOND:
        raise TimeError(f"{option} {text!r} is longer than the longest supported time "
                        f"({MAX_SECONDS:g} s)")
    return time


def seconds(text: str, option: str) -> float:
    """A time option in seconds (``200ms``, ``0.2s``, ``0``)."""
    value = parse_time(text, option).seconds
    assert value is not None
    return value


def bound(text: str, option: str) -> str | int:
    """A tolerance bound: whole frames for ``10f`` (and 0), else the time as written
    (``200ms``), as the contract language and ``AuditPolicy(eps=…)`` take it."""
    time = parse_time(text, option, frames=True)
    return time.frames if time.frames is not None else f"{time.number}{time.unit}"


def spell(value: float) -> str:
    """Seconds as an exact text with a unit: milliseconds below a second (``0.02`` →
    ``20ms``), seconds from one on (``1.0`` → ``1s``), ``0`` → ``0``."""
    if value == 0:
        return "0"
    exact = Decimal(repr(float(value)))
    if exact >= 1:
        return f"{format(exact.normalize(), 'f')}s"
    return f"{format((exact * 1000).normalize(), 'f')}ms"
