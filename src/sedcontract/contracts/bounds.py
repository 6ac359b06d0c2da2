"""Window bounds → whole frames through the grid hop, under a declared rounding policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Literal

from sedcontract.contracts.lexer import tokenize
from sedcontract.contracts.syntax import Bound, Window
from sedcontract.errors import ContractCheckError
from sedcontract.traces.grid import MAX_FRAMES, MAX_SECONDS, Grid

Rounding = Literal["nearest", "floor", "ceil", "exact"]
ROUNDINGS: tuple[str, ...] = ("nearest", "floor", "ceil", "exact")
_UNIT_US = {"s": 1_000_000, "ms": 1_000}
MAX_BOUND_FRAMES = MAX_FRAMES  # the largest bound (sedcontract.traces.grid.MAX_FRAMES)


def bound_us(bound: Bound) -> int | None:
    """A literal time bound in whole microseconds (None for frames or a name); raises
    ValueError saying why when it is finer than 1 µs or longer than ``MAX_SECONDS``."""
    if bound.name is not None or bound.unit is None:
        return None
    with localcontext(prec=len(bound.number) + 8):  # exact: no rounding to 28 digits
        value = Decimal(bound.number) * _UNIT_US[bound.unit]
    if value > MAX_BOUND_FRAMES:  # microseconds of the longest supported time
        raise ValueError(f"bound '{bound}' is longer than the longest supported time "
                         f"({MAX_SECONDS:g} s)")
    if value != int(value):
        raise ValueError(f"bound '{bound}' is finer than a microsecond")
    return int(value)


def bound_frames(bound: Bound) -> int | None:
    """A literal frame bound (None for a time or a name); raises ValueError when it is more
    than ``MAX_BOUND_FRAMES``."""
    if bound.name is not None or bound.unit is not None:
        return None
    if Decimal(bound.number) > MAX_BOUND_FRAMES:  # Decimal: no 4300-digit int() limit
        raise ValueError(f"bound '{_short(bound.number)}' is more frames than the largest "
                         f"supported bound ({MAX_BOUND_FRAMES} frames)")
    return int(bound.number)


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"


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

    def check(self, bound: Bound) -> int | None:
        """A literal bound that can run (see :func:`bound_us`, :func:`bound_frames`), or an
        error pointing at it; its microseconds when it is a time."""
        try:
            bound_frames(bound)
            return bound_us(bound)
        except ValueError as exc:
            raise self.error(str(exc), bound) from None

    def frames(self, bound: Bound, _depth: int = 0) -> int:
        """Whole frames of ``bound``."""
        if bound.name is not None:
            if bound.name not in self.bindings:
                known = ", ".join(sorted(self.bindings)) or "none"
                raise self.error(f"unknown bound name {bound.name!r} (defined names: {known})",
                                 bound)
            value = self.bindings[bound.name]
            if isinstance(value, int):  # checked by coerce_binding
                return value
            if _depth > len(self.bindings):
                raise self.error(f"bound {bound.name!r} is defined in terms of itself", bound)
            return self.frames(value, _depth + 1)
        value_us = self.check(bound)
        if value_us is None:
            return int(bound.number)
        if self.hop is None:
            raise self.error(f"bound '{bound}' is a time; give the grid hop to convert it to "
                             "frames", bound)
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
        if value > MAX_BOUND_FRAMES:
            raise ContractCheckError(f"binding {key!r} = {value} frames is more than the "
                                     f"largest supported bound ({MAX_BOUND_FRAMES} frames)")
        return value
    tokens = tokenize(value, name=f"binding {key!r}")
    if len(tokens) != 2 or tokens[0].kind != "number" or (tokens[0].unit is None
                                                           and "." in tokens[0].text):
        raise ContractCheckError(f"binding {key!r} = {value!r} is not a bound such as 10, "
                                 "'200ms' or '0.2s'")
    bound = Bound(number=tokens[0].text, unit=tokens[0].unit)
    try:
        bound_frames(bound)
        bound_us(bound)
    except ValueError as exc:
        raise ContractCheckError(f"binding {key!r} = {value!r}: {exc}") from None
    return bound
