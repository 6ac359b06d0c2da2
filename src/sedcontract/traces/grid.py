"""Frame grids and the declared projection of half-open event intervals onto them.

Times are compared in integer microseconds (docs/architecture.md: times and frame centres
are rounded to 1 µs before comparison), so a boundary that lands exactly on a frame centre is
decided the same way on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from sedcontract.errors import SignalError
from sedcontract.numbers import is_number

Projection = Literal["center", "any_overlap", "majority"]
PROJECTIONS: tuple[str, ...] = ("center", "any_overlap", "majority")
US_PER_SECOND = 1_000_000
SECONDS_PER_HOUR = 3600.0  # false-positive rates are per hour of audio
# the latest time a file or API may name (about 31.7 years): far inside int64 microseconds,
# so no time overflows when it is compared on the microsecond grid
MAX_SECONDS = 1e9
# the most frames a bound may count: the longest supported time on a 1 µs grid (far inside
# int64, so no window arithmetic on frame numbers overflows)
MAX_FRAMES = int(MAX_SECONDS * US_PER_SECOND)


def to_us(seconds: np.ndarray | float) -> np.ndarray:
    """Seconds → integer microseconds (round half away from zero)."""
    s = np.asarray(seconds, dtype=np.float64) * US_PER_SECOND
    return (np.sign(s) * np.floor(np.abs(s) + 0.5)).astype(np.int64)


@dataclass(frozen=True)
class Grid:
    """A frame grid: frame ``k`` covers ``[k·hop, (k+1)·hop)`` for ``k < n``."""

    hop: float
    n: int

    def __post_init__(self) -> None:
        if not is_number(self.hop, numpy=True):
            raise SignalError(f"grid hop must be a number of seconds, got "
                              f"{type(self.hop).__name__} {self.hop!r}")
        if not np.isfinite(self.hop) or self.hop <= 0:
            raise SignalError(f"grid hop must be a positive number of seconds, got {self.hop!r}")
        if self.hop > MAX_SECONDS:
            raise SignalError(f"grid hop {self.hop!r} s is longer than the longest supported "
                              f"time ({MAX_SECONDS:g} s)")
        if abs(self.hop * US_PER_SECOND - self.hop_us) > 1e-6 or self.hop_us <= 0:
            raise SignalError(f"grid hop {self.hop!r} s is not a whole number of microseconds")
        if int(self.n) != self.n or self.n < 0:
            raise SignalError(f"grid length must be a non-negative integer, got {self.n!r}")

    @property
    def hop_us(self) -> int:
        return int(to_us(self.hop))

    @classmethod
    def covering(cls, duration: float, hop: float) -> Grid:
        """The grid whose frames cover ``[0, duration)``; a partial last frame counts."""
        return cls(hop, int(frames_covering(to_us(duration), cls(hop, 0).hop_us)))

    def frame_starts(self) -> np.ndarray:
        """Start time of every frame in seconds."""
        return np.arange(self.n) * self.hop


def frames_covering(duration_us: np.ndarray | int, hop_us: int) -> np.ndarray:
    """Frames needed to cover ``[0, duration)`` (µs); a partial last frame counts."""
    return -(-np.asarray(duration_us, dtype=np.int64) // hop_us)


def project(onsets: np.ndarray, offsets: np.ndarray, hop: float,
            policy: Projection = "center") -> tuple[np.ndarray, np.ndarray]:
    """Frame range ``[first, end)`` of every interval ``[onset, offset)`` under ``policy``.

    ``center``: frame k is active iff its centre ``(k+½)·hop`` lies in the interval;
    ``any_overlap``: iff the frame shares positive time with it; ``majority``: iff it shares
    more than half a hop. Ranges are not clipped to a grid length (callers clip); an interval
    that covers no frame gets ``first == end`` (it vanishes under projection).
    """
    return project_us(to_us(onsets), to_us(offsets), int(to_us(hop)), policy)


def project_us(on: np.ndarray, off: np.ndarray, h: int, policy: Projection = "center"
               ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`project` of intervals given in whole microseconds, on a hop of ``h`` µs."""
    if policy not in PROJECTIONS:
        raise SignalError(f"unknown projection {policy!r}; choose one of {', '.join(PROJECTIONS)}")
    on, off = np.asarray(on, dtype=np.int64), np.asarray(off, dtype=np.int64)
    if policy == "center":
        # first k with (2k+1)·h ≥ 2·on, i.e. k ≥ (2·on − h) / 2h
        first = _ceil_div(2 * on - h, 2 * h)
        end = _ceil_div(2 * off - h, 2 * h)
    else:
        first = np.floor_divide(on, h)  # frame containing the onset
        end = _ceil_div(off, h)         # first frame starting at or after the offset
        if policy == "majority":
            def overlap(k: np.ndarray) -> np.ndarray:
                return np.minimum(off, (k + 1) * h) - np.maximum(on, k * h)
            first = np.where(2 * overlap(first) > h, first, first + 1)
            last = end - 1
            end = np.where(2 * overlap(last) > h, end, end - 1)
    first = np.maximum(first, 0)
    end = np.where(off > on, np.maximum(end, first), first)
    return first.astype(np.int64), end.astype(np.int64)


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -np.floor_divide(-a, b)
