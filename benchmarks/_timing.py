"""Wall time of whole commands in fresh processes, for the benchmarks that time start-up."""

from __future__ import annotations

import statistics
import subprocess
import time


def wall(command: list[str], repeats: int) -> float:
    """Median wall time of ``command`` in fresh processes (one warm-up run first)."""
    subprocess.run(command, capture_output=True, check=True)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
