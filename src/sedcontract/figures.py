"""Figures of the audit protocol: matplotlib without a display, and PNG bytes that depend only
on what is drawn (no software version in the metadata), so regenerated reports are identical."""

from __future__ import annotations

import io
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
