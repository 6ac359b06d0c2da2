"""Running code under a memory limit, in a fresh process."""

from __future__ import annotations


# -- running code under a memory limit --------------------------------------------------------
def run_limited(args: list[str], limit_mb: int, timeout: float = 300):
    """Run ``python args…`` in a fresh process whose address space is capped at ``limit_mb``
    MiB (one BLAS thread, so the cap does not depend on the machine's core count)."""
    import os
    import subprocess
    import sys

    # a script runs as python runs one: its folder first on the path (its helper modules)
    code = (f"import os, resource, runpy, sys; limit = {limit_mb} * 2**20; "
            f"resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); sys.argv = {args!r}; "
            "sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0]))) "
            "if sys.argv[0] != '-c' else None; "
            "runpy.run_path(sys.argv[0], run_name='__main__') if sys.argv[0] != '-c' "
            "else exec(sys.argv[1])")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout)


# -- running code that must not block on a pipe -------------------------------------------------
def without_blocking(call, pipe, timeout: float = 10.0):
    """``call()``'s result, or the exception it raised, from a thread that may take at most
    ``timeout`` seconds: a reader that opens the FIFO ``pipe`` would block until a writer comes,
    so the pipe is then opened for writing to release it and the test fails."""
    import os
    import threading

    import pytest

    outcome: list = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as exc:  # handed back to the test
            outcome.append(("raised", exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading blocked on the pipe {pipe}")
    kind, value = outcome[0]
    if kind == "raised":
        raise value
    return value
