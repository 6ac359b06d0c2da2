"""Peak memory of one call, for the side-by-side benchmarks: ``tracemalloc`` sees Python
objects and numpy arrays alike, so both tools are measured the same way in one process (a
separate, untimed call: tracing slows Python-heavy code)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def peak_mb(fn: Callable[[], Any]) -> float:
    """Peak traced allocation of ``fn()`` above what was allocated before, in MB."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()
