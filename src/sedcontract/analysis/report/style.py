"""The report's colour scale: a score's colour, pale where systems lie close, and grey for a
vacuous cell."""

from __future__ import annotations

import math
from itertools import pairwise

# the colour scale of the overview: 0 light orange, 0.5 near white, 1 light blue (ColorBrewer
# RdBu's light end, read apart by most colour-blind readers); black text stays readable on all
SCALE = ((0.0, (0xF4, 0xA5, 0x82)), (0.5, (0xF7, 0xF7, 0xF7)), (1.0, (0x92, 0xC5, 0xDE)))
VACUOUS = "#e4e4e4"
SPREAD_FLOOR = 0.05  # a column whose systems lie closer than this stays pale


def colour(value: float) -> str:
    """The overview's background for a position in [0, 1] (clipped), linear between the stops
    of :data:`SCALE`; grey for a vacuous (NaN) score."""
    if math.isnan(value):
        return VACUOUS
    value = min(1.0, max(0.0, value))
    (x0, c0), (x1, c1) = next(pair for pair in pairwise(SCALE) if value <= pair[1][0])
    t = (value - x0) / (x1 - x0)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(c0, c1, strict=True))


def relative(value: float, low: float, high: float) -> float:
    """Where ``value`` lies in its column of ``low`` … ``high``: 0 the lowest system, 1 the
    highest, 0.5 the middle; a column spanning less than :data:`SPREAD_FLOOR` stays near 0.5,
    so a colour marks a difference between systems, never the level all of them share."""
    if math.isnan(value):
        return math.nan
    return 0.5 + (value - (low + high) / 2) / max(high - low, SPREAD_FLOOR)
