"""Wall time of whole commands in fresh processes, for the benchmarks that time start-up."""

from __future__ import annotations

import statistics
import subprocess
import time


def wall(command: list[str], repeats: int, env: dict[str, str] | None = None) -> float:
    """Median wall time of ``command`` in fresh processes (one warm-up run first); ``env``:
    their environment, else this process's."""
    subprocess.run(command, capture_output=True, check=True, env=env)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
