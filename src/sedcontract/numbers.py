"""The type checks every setting shares, in one place: a number is an int or a float, a whole
number an int, and neither is ever a bool (``True`` is an int to Python, never a count, a rate
or a fraction to a user). ``numpy``: numpy's scalars count too, where a value may come out of
an array; a setting that is written into a report or a manifest takes Python's own."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError


def is_number(value: Any, *, finite: bool = False, numpy: bool = False) -> bool:
    """Whether ``value`` is a number (and, with ``finite``, neither NaN nor infinite)."""
    kinds = int | float | np.number if numpy else int | float
    if isinstance(value, bool | np.bool_) or not isinstance(value, kinds):
        return False
    return not finite or math.isfinite(value)


def is_whole(value: Any, *, numpy: bool = False) -> bool:
    """Whether ``value`` is a whole number."""
    kinds = int | np.integer if numpy else int
    return not isinstance(value, bool | np.bool_) and isinstance(value, kinds)


def is_count(value: Any, most: int, *, signed: bool = False) -> bool:
    """Whether ``value`` is a count a file may state: a whole number in ``[0, most]``
    (``[-most, most]`` when ``signed``, as a change of a count)."""
    return is_whole(value) and (-most if signed else 0) <= value <= most


def number_in(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """``value`` as a float when it is a finite number in ``[low, high]``, else an error naming
    the keyword ``name``: a function's numeric keyword checked where it is taken."""
    if not (is_number(value, finite=True, numpy=True) and low <= value <= high):
        where = f">= {low:g}" if high == math.inf else f"in [{low:g}, {high:g}]"
        raise SedContractError(f"{name} must be a finite number {where}, got {value!r}")
    return float(value)
