"""Clips in consecutive blocks and the results of work on them, in order: how one audit, one
PSDS count or one shard is spread over processes or an executor (one block is one process)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from sedcontract.errors import ContractCheckError


def clip_range(clips: int, index: int, count: int) -> tuple[int, int]:
    """Clips ``[first, stop)`` of block ``index`` of ``count`` consecutive, nearly equal
    blocks (a block may be empty when there are fewer clips than blocks)."""
    if isinstance(index, bool) or isinstance(count, bool) or not isinstance(index, int) or \
            not isinstance(count, int) or count < 1 or not 0 <= index < count:
        raise ContractCheckError(f"shard {index!r}/{count!r}: need whole numbers 0 <= i < n")
    return clips * index // count, clips * (index + 1) // count


EXECUTOR_BLOCKS = 8  # blocks of clips an executor audits when not told


def process_pool(jobs: int, module: str) -> ProcessPoolExecutor:
    """A pool of ``jobs`` fresh (spawned: nothing inherited) processes, started now, each
    importing ``module`` (the tasks' own) as it starts: made before the caller reads and
    checks its inputs, the processes start up meanwhile instead of after."""
    pool = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"),
                               initializer=importlib.import_module, initargs=(module,))
    for _ in range(jobs):  # a process per task submitted while none is idle
        pool.submit(int)
    return pool


def block_results(clips: int, count: Any, submit: Callable[[int, int], Any], *,
                  empty: bool = False) -> Iterator[Any]:
    """The results, in order, of ``submit(first, stop)`` (a future) for each non-empty one of
    ``count`` consecutive blocks of ``clips`` clips (:func:`clip_range`; with ``empty``, one
    block of none when there are no clips): each future let go once its result is taken, the
    others cancelled when one fails."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ContractCheckError(f"blocks must be a whole number >= 1, got {count!r}")
    spans = [clip_range(clips, k, count) for k in range(count)]
    spans = [(a, b) for a, b in spans if a < b] or ([(0, 0)] if empty else [])
    futures: list[Any] = []
    try:
        for a, b in spans:
            futures.append(submit(a, b))
        while futures:
            yield futures.pop(0).result()
    except BaseException:
        for future in futures:
            future.cancel()
        raise
