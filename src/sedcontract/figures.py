"""Figures of the audit protocol: matplotlib without a display, and PNG bytes that depend only
on what is drawn (no software version in the metadata), so regenerated reports are identical."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (imported when a figure is drawn)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    return plt


def png(fig: Any, dpi: int = 110) -> bytes:
    """The figure as PNG bytes; the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    pyplot().close(fig)
    return buffer.getvalue()


def system_colours(names: Iterable[str]) -> dict[str, Any]:
    """One colour per system for every figure of a report, whatever figure names which
    systems: matplotlib's tab10 (tab20 past ten systems) in the sorted order of the names."""
    names = sorted(set(names))
    palette = pyplot().get_cmap("tab10" if len(names) <= 10 else "tab20")
    return {name: palette(k % palette.N) for k, name in enumerate(names)}
