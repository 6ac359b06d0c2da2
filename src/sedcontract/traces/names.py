"""Canonical signal names (``ref.active``, ``pred.onset[speech]``, ``ref.active["dog bark"]``):
the one spelling shared by trace builders, the monitor and the contract printer."""

from __future__ import annotations

import re

BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SIDES: tuple[str, ...] = ("ref", "pred")  # the reference and the prediction, in that order


def quote(value: str) -> str:
    """A double-quoted string with ``\\`` and ``"`` escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def class_index(cls: str) -> str:
    """A class name as written inside ``[...]``: bare when it is an identifier, else quoted."""
    return cls if BARE.match(cls) else quote(cls)


def signal_name(side: str, kind: str, cls: str | None = None) -> str:
    """``side.kind`` with an optional class index, e.g. ``pred.active["people talking"]``."""
    return f"{side}.{kind}" + ("" if cls is None else f"[{class_index(cls)}]")


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (with ``…``) for a message."""
    return text if len(text) <= limit else text[:limit] + "…"
