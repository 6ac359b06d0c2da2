"""Window bounds → whole frames through the grid hop, under a declared rounding policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from sedcontract.contracts.lexer import tokenize
from sedcontract.contracts.syntax import Bound, Window
from sedcontract.errors import ContractCheckError
from sedcontract.traces.grid import Grid

Rounding = Literal["nearest", "floor", "ceil", "exact"]
ROUNDINGS: tuple[str, ...] = ("nearest", "floor", "ceil", "exact")
_UNIT_US = {"s": 1_000_000, "ms": 1_000}


@dataclass(frozen=True)
class Conversion:
    """How one time bound became frames: reported so that rounding is never silent."""

    text: str
    seconds: float
    frames: int
    hop: float
    rounding: str

    @property
    def exact(self) -> bool:
        return abs(self.frames * self.hop - self.seconds) < 1e-9

    def __str__(self) -> str:
        note = "" if self.exact else f" (rounded {self.rounding}: {self.frames * self.hop:g} s)"
        return f"{self.text} = {self.frames} frames at hop {self.hop:g} s{note}"


class BoundResolver:
    """Resolves bounds for one evaluation: ``let`` names, units, rounding; records conversions.

    ``bindings`` maps names to bounds (from ``let``) or to plain ints (frames) given through
    the API; ``source``/``name`` make errors point into the contract text.
    """

    def __init__(self, *, hop: float | None = None,
                 bindings: Mapping[str, Bound | int | str] | None = None,
                 rounding: Rounding = "nearest", source: str | None = None,
                 name: str = "<contract>") -> None:
        if rounding not in ROUNDINGS:
            raise ContractCheckError(f"unknown rounding {rounding!r}; choose one of "
                                     f"{', '.join(ROUNDINGS)}")
        if hop is not None:
            Grid(hop, 0)  # a positive, finite, whole number of microseconds
        self.hop, self.rounding, self.source, self.name = hop, rounding, source, name
        self.bindings: dict[str, Bound | int] = {}
        for key, value in (bindings or {}).items():
            self.bindings[key] = coerce_binding(key, value)
        self.conversions: dict[str, Conversion] = {}

    def error(self, message: str, bound: Bound | Window) -> ContractCheckError:
        if bound.span == (0, 0):  # made from an API/CLI binding, not from the contract text
            return ContractCheckError(f"{message} (value given as a binding or override)")
        return ContractCheckError(message, source=self.source, offset=bound.span[0],
                                  name=self.name)

    def frames(self, bound: Bound, _depth: int = 0) -> int:
        """Whole frames of ``bound``."""
        if bound.name is not None:
            if bound.name not in self.bindings:
                known = ", ".join(sorted(self.bindings)) or "none"
                raise self.error(f"unknown bound name {bound.name!r} (defined names: {known})",
                                 bound)
            value = self.bindings[bound.name]
            if isinstance(value, int):
                if value < 0:
                    raise self.error(f"bound {bound.name!r} = {value} is negative", bound)
                return value
            if _depth > len(self.bindings):
                raise self.error(f"bound {bound.name!r} is defined in terms of itself", bound)
            return self.frames(value, _depth + 1)
        if bound.unit is None:
            return int(bound.number)
        if self.hop is None:
            raise self.error(f"bound '{bound}' is a time; give the grid hop to convert it to "
                             "frames", bound)
        value_us = int(Decimal(bound.number) * _UNIT_US[bound.unit])
        if Decimal(bound.number) * _UNIT_US[bound.unit] != value_us:
            raise self.error(f"bound '{bound}' is finer than a microsecond", bound)
        hop_us = round(self.hop * 1_000_000)
        whole, rest = divmod(value_us, hop_us)
        if rest and self.rounding == "exact":
            raise self.error(f"bound '{bound}' is {value_us / hop_us:g} frames at hop "
                             f"{self.hop:g} s, not a whole number (rounding 'exact'); use "
                             "rounding nearest/floor/ceil or a multiple of the hop", bound)
        frames = whole + (1 if rest and (self.rounding == "ceil" or
                                         (self.rounding == "nearest" and 2 * rest >= hop_us))
                          else 0)
        text = str(bound)
        self.conversions.setdefault(text, Conversion(text, value_us / 1e6, frames, self.hop,
                                                     self.rounding))
        return frames

    def window(self, window: Window) -> tuple[int, int]:
        """``(lo, hi)`` in frames; ``[e]`` is ``[0:e]``."""
        hi = self.frames(window.hi)
        lo = 0 if window.lo is None else self.frames(window.lo)
        if lo > hi:
            raise self.error(f"window {window} is empty: lower bound {lo} frames exceeds upper "
                             f"bound {hi} frames", window)
        return lo, hi


def coerce_binding(key: str, value: Bound | int | str) -> Bound | int:
    """API bindings: ints are frames, strings are bound texts such as ``'200ms'``."""
    if isinstance(value, Bound):
        return value
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ContractCheckError(f"binding {key!r} must be frames (int) or a time such as "
                                 f"'200ms', got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ContractCheckError(f"binding {key!r} = {value} is negative")
        return value
    tokens = tokenize(value, name=f"binding {key!r}")
    if len(tokens) != 2 or tokens[0].kind != "number" or (tokens[0].unit is None
                                                           and "." in tokens[0].text):
        raise ContractCheckError(f"binding {key!r} = {value!r} is not a bound such as 10, "
                                 "'200ms' or '0.2s'")
    return Bound(number=tokens[0].text, unit=tokens[0].unit)
