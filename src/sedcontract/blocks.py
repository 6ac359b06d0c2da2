"""Clips in consecutive blocks and the results of work on them, in order: how one audit, one
PSDS count or one shard is spread over processes or an executor (one block is one process)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from sedcontract.errors import ContractCheckError
from sedcontract.numbers import is_whole


def clip_range(clips: int, index: int, count: int) -> tuple[int, int]:
    """Clips ``[first, stop)`` of block ``index`` of ``count`` consecutive, nearly equal
    blocks (a block may be empty when there are fewer clips than blocks)."""
    if not is_whole(index) or not is_whole(count) or count < 1 or not 0 <= index < count:
        raise ContractCheckError(f"shard {index!r}/{count!r}: need whole numbers 0 <= i < n")
    return clips * index // count, clips * (index + 1) // count


T = TypeVar("T")
EXECUTOR_BLOCKS = 8  # blocks of clips an executor audits when not told


class ProcessesAndCaller:
    """``jobs`` processes at work: a pool of ``jobs − 1`` fresh (spawned: nothing inherited)
    ones beside the calling process. They are started at once, each importing ``module`` (the
    tasks' own), so they start up while the caller reads and checks its inputs; a task
    submitted while every one of them is busy runs in the calling process, at once (it would
    only wait): with ``jobs`` blocks, the last is the caller's."""

    def __init__(self, jobs: int, module: str) -> None:
        # imported where a pool is made: ``import sedcontract`` stays light
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        self.workers = jobs - 1
        self.pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"),
                                        initializer=importlib.import_module,
                                        initargs=(module,))
        for _ in range(self.workers):  # a process per task submitted while none is idle
            self.pool.submit(int)
        self.sent: list[Future] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        self.sent = [f for f in self.sent if not f.done()]
        if len(self.sent) < self.workers:
            self.sent.append(self.pool.submit(fn, *args, **kwargs))
            return self.sent[-1]
        here: Future = Future()
        try:
            here.set_result(fn(*args, **kwargs))
        except Exception as exc:  # raised where its result is taken, as a worker's would be
            here.set_exception(exc)
        return here

    def shutdown(self) -> None:
        self.pool.shutdown()


def check_jobs(jobs: Any, name: str = "jobs") -> int:
    """``jobs``, a whole number of processes >= 1 (``name``: the keyword it was given as)."""
    if not is_whole(jobs) or jobs < 1:
        raise ContractCheckError(f"{name} must be a whole number >= 1, got {jobs!r}")
    return jobs


def on_processes(jobs: int, module: str, work: Callable[[ProcessesAndCaller], T]) -> T:
    """``work(pool)`` on ``jobs`` processes (:class:`ProcessesAndCaller`, started at once,
    each importing ``module``), shut down however it ends."""
    pool = ProcessesAndCaller(jobs, module)  # they start while the inputs are checked
    try:
        return work(pool)
    finally:
        pool.shutdown()


def with_jobs(num_jobs: Any, module: str, work: Callable[[Any, int | None], T]) -> T:
    """``work(executor, blocks)`` as sed_scores_eval's ``num_jobs`` asks: in this process
    (``None, None``) for 1, else on ``num_jobs`` processes (each importing ``module``) in as
    many blocks of clips; the result is the same either way."""
    jobs = check_jobs(num_jobs, "num_jobs")
    if jobs == 1:
        return work(None, None)
    return on_processes(jobs, module, lambda pool: work(pool, jobs))


def block_results(clips: int, count: Any, submit: Callable[[int, int], Any], *,
                  empty: bool = False) -> Iterator[Any]:
    """The results, in order, of ``submit(first, stop)`` (a future) for each non-empty one of
    ``count`` consecutive blocks of ``clips`` clips (:func:`clip_range`; with ``empty``, one
    block of none when there are no clips): each future let go once its result is taken, the
    others cancelled when one fails."""
    if not is_whole(count) or count < 1:
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
