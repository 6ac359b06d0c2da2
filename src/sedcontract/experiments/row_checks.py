"""The protocol's source rows checked before a page is made from them, as ``sedcontract report``
checks its rows: whole counts with ``satisfied <= obligations``, numbers where numbers are,
intervals whose low end is not above their high end, systems the round knows, and every
system read on the same seeds. A bad row is named by file, row and column."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sedcontract.errors import ProtocolError

COUNTS = ("benchmark", "seed", "satisfied", "obligations", "defined", "resamples")
NUMBERS = ("psds1", "median_filter", "threshold", "validation_logic", "level")  # finite
UNDEFINED_OK = ("point", "lo", "hi", "value")  # finite, or nan where nothing was defined
OPTIONAL = ("low",)  # finite, or empty: no hysteresis
SYSTEM_COLUMNS = ("system", "control")


def _number(text: str, column: str) -> float | None:
    """The cell's number, None when the column allows no value and it is empty (or, for the
    benchmark, says the benchmarks pooled)."""
    if (column in OPTIONAL and text == "") or (column == "benchmark" and text == "pooled"):
        return None
    value = float(text)  # ValueError: not a number
    if column in COUNTS and not (value.is_integer() and value >= 0):
        raise ValueError
    if math.isnan(value) and column in UNDEFINED_OK:
        return value
    if not math.isfinite(value):
        raise ValueError
    return value


def check_rows(path: Path, rows: Iterable[tuple[int, Mapping[str, str]]],
               systems: Sequence[str], source: str) -> list[dict[str, str]]:
    """``rows`` (line, record) of one source file, checked; the records."""
    out = []
    for line, row in rows:
        where = f"{path}, row {line}"
        values = {}
        for column, text in row.items():
            if column in SYSTEM_COLUMNS and text not in systems:
                raise ProtocolError(f"{where}, column {column!r}: no system {text!r} in this "
                                    f"round (its systems: {', '.join(systems)})")
            if column in (*COUNTS, *NUMBERS, *UNDEFINED_OK, *OPTIONAL):
                try:
                    values[column] = _number(text.strip(), column)
                except ValueError:
                    kind = "a whole number >= 0" if column in COUNTS else "a finite number"
                    kind += " or 'pooled'" if column == "benchmark" else ""
                    raise ProtocolError(f"{where}, column {column!r}: {text!r} is not {kind} "
                                        f"(the rows {source} writes)") from None
        if values.get("satisfied", 0) > values.get("obligations", math.inf):
            raise ProtocolError(f"{where}: satisfied {row['satisfied']} exceeds obligations "
                                f"{row['obligations']}")
        if values.get("defined", 0) > values.get("resamples", math.inf):
            raise ProtocolError(f"{where}: defined {row['defined']} exceeds resamples "
                                f"{row['resamples']}")
        lo, hi = values.get("lo", math.nan), values.get("hi", math.nan)
        if lo > hi:
            raise ProtocolError(f"{where}: the interval's low end {row['lo']} is above its "
                                f"high end {row['hi']}")
        out.append(dict(row))
    _check_seeds(path, out)
    return out


def _check_seeds(path: Path, rows: Sequence[Mapping[str, str]]) -> None:
    """Every system of a benchmark is read on the benchmark's seeds (a missing seed would
    leave a mean over fewer runs that still reads as all of them)."""
    if not rows or "seed" not in rows[0]:
        return
    seeds: dict[str, set[str]] = {}
    found: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        seeds.setdefault(row["benchmark"], set()).add(row["seed"])
        found.setdefault((row["benchmark"], row["system"]), set()).add(row["seed"])
    for (benchmark, system), have in found.items():
        missing = sorted(seeds[benchmark] - have, key=float)
        if missing:
            raise ProtocolError(f"{path}: benchmark {benchmark}, system {system} has no row of "
                                f"seed {', '.join(missing)}, which the benchmark's other "
                                "systems have: a mean over its seeds would leave it out")
