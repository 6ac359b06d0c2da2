"""Guard curves as plain data and back: the changes of every count at each score value, so the
curves of blocks of clips written apart (a shard report's ``curves`` section) join exactly,
as the per-clip counts of the guard vector do."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from sedcontract.errors import SedContractError
from sedcontract.guard.curve_changes import Curve
from sedcontract.guard.curves import CURVE_COORDINATES, GuardCurves
from sedcontract.numbers import is_count

__all__ = ["curves_data", "curves_of_data"]

# a count a shard may state: summed over shards as float64 and int64 stays exact well past it
MAX_COUNT = 2**53


def _value(x: float) -> float | str:
    """A change point as JSON holds it: a number, or ``"inf"`` (a score of +inf)."""
    return "inf" if x == math.inf else float(x)


def _curve(curve: Curve) -> dict[str, Any]:
    sat, obl = curve.changes()
    return {"base": list(curve.base), "values": [_value(v) for v in curve.values.tolist()],
            "satisfied": sat.tolist(), "obligations": obl.tolist()}


def curves_data(curves: GuardCurves) -> dict[str, Any]:
    """``curves`` as plain data (JSON without NaN): the classes, each coordinate's curve per
    class and for the union trace (``"*"``) as its counts with nothing active and its changes
    at each score value (descending), and ``duration`` at its thresholds."""
    return {"classes": list(curves.classes),
            "curves": {name: {**{c: _curve(curves.typed[name][c]) for c in curves.classes},
                              "*": _curve(curves.union[name])}
                       for name in curves.typed},
            "duration_thresholds": list(curves.thresholds),
            "duration": {k: [list(cell) for cell in cells]
                         for k, cells in curves.duration.items()}}


def number(x: Any) -> float | None:
    """A finite number as JSON gives it (an integer beyond 2^53 is no measurement here), as a
    float; else None."""
    if type(x) is int:
        return float(x) if abs(x) <= MAX_COUNT else None
    return x if type(x) is float and math.isfinite(x) else None


def _read_curve(data: Any, where: str) -> Curve:
    """One curve's data, checked: whole counts, finite or ``"inf"`` values strictly
    descending, and counts that stay within 0 ≤ satisfied ≤ obligations at every value."""
    if not isinstance(data, Mapping) or set(data) != {"base", "values", "satisfied",
                                                      "obligations"}:
        raise SedContractError(f"{where}: a curve has base, values, satisfied and obligations")
    base, values, sat, obl = (data[k] for k in ("base", "values", "satisfied", "obligations"))
    if not (isinstance(base, list) and len(base) == 2
            and all(is_count(b, MAX_COUNT) for b in base)):
        raise SedContractError(f"{where}: base must be two whole numbers of 0 … 2^53 "
                               "(satisfied, obligations)")
    if not (isinstance(values, list) and isinstance(sat, list) and isinstance(obl, list)
            and len(values) == len(sat) == len(obl)):
        raise SedContractError(f"{where}: values, satisfied and obligations must be lists of "
                               "one length")
    if not all(is_count(x, MAX_COUNT, signed=True) for x in (*sat, *obl)):
        raise SedContractError(f"{where}: the changes must be whole numbers of at most 2^53")
    numbers = []
    for v in values:
        found = math.inf if v == "inf" else number(v)
        if found is None:
            raise SedContractError(f"{where}: a change point must be a finite number or "
                                   f"\"inf\", not {str(v)[:40]!r}")
        numbers.append(found)
    points = np.array(numbers, dtype=np.float64)
    if np.any(points[1:] >= points[:-1]):
        raise SedContractError(f"{where}: the change points must descend strictly")
    held_sat = base[0] + np.cumsum(np.array(sat, dtype=np.int64))
    held_obl = base[1] + np.cumsum(np.array(obl, dtype=np.int64))
    if base[0] > base[1] or np.any(held_sat < 0) or np.any(held_sat > held_obl) or \
            np.any(held_obl > MAX_COUNT):
        raise SedContractError(f"{where}: the counts leave 0 ≤ satisfied ≤ obligations ≤ "
                               "2^53")
    return Curve(points, held_sat, held_obl, (int(base[0]), int(base[1])))


def curves_of_data(data: Any, where: str) -> GuardCurves:
    """:func:`curves_data`'s output read back, every part checked (errors name ``where`` and
    the coordinate and class)."""
    if not isinstance(data, Mapping) or not {"classes", "curves", "duration_thresholds",
                                             "duration"} <= set(data):
        raise SedContractError(f"{where}: curves have classes, curves, duration_thresholds "
                               "and duration")
    classes = data["classes"]
    if not isinstance(classes, list) or not all(isinstance(c, str) and c != "*"
                                                for c in classes) \
            or len(set(classes)) != len(classes):
        raise SedContractError(f"{where}: the curves' classes must be distinct names")
    by_name = data["curves"]
    if not isinstance(by_name, Mapping) or set(by_name) != set(CURVE_COORDINATES):
        raise SedContractError(f"{where}: the curves must hold {', '.join(CURVE_COORDINATES)}")
    typed, union = {}, {}
    for name in CURVE_COORDINATES:
        keys = by_name[name]
        if not isinstance(keys, Mapping) or set(keys) != {*classes, "*"}:
            raise SedContractError(f"{where}: curves of {name} must name every class and *")
        typed[name] = {c: _read_curve(keys[c], f"{where}, {name}, class {c!r}")
                       for c in classes}
        union[name] = _read_curve(keys["*"], f"{where}, {name}, the union trace")
    thresholds = data["duration_thresholds"]
    if not isinstance(thresholds, list) or any(number(t) is None for t in thresholds):
        raise SedContractError(f"{where}: duration_thresholds must be finite numbers")
    duration = data["duration"]
    cells_ok = isinstance(duration, Mapping) and set(duration) <= {*classes, "*"} and all(
        isinstance(cells, list) and len(cells) == len(thresholds) and all(
            isinstance(cell, list) and len(cell) == 2 and all(is_count(x, MAX_COUNT) for x in cell)
            and cell[0] <= cell[1] for cell in cells) for cells in duration.values())
    if not cells_ok or (thresholds and set(duration) != {*classes, "*"}):
        raise SedContractError(f"{where}: duration must give (satisfied, obligations) per class "
                               "and * at each duration threshold")
    return GuardCurves(tuple(classes), typed, union, tuple(float(t) for t in thresholds),
                       {k: [(int(a), int(b)) for a, b in cells] for k, cells in duration.items()})
