"""Parallel maps for cohort commands (`--jobs N`).

A command hands an `Executor` a picklable function and a list of items; the executor
returns the results in the order of the items, whatever order the work finished in,
so a command's output does not depend on how many workers computed it. `executor(1)`
runs in the calling process (no pool, nothing pickled); `executor(n)` for n > 1 is a
pool of n processes; `executor(1, scheduler)` runs on a Dask cluster
(`pcsc.compiler.parallel_dask`). Another scheduler plugs in by implementing `Executor.map` with
the same contract: results in input order, exceptions re-raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every item; results in input order."""

    jobs: int

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]: ...

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """The results one by one, in input order, as they are ready (`map`'s contract)."""
        ...


class SerialExecutor:
    """In this process, one item after the other (``--jobs 1``)."""

    jobs = 1

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [fn(item) for item in items]

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        return (fn(item) for item in items)


class ProcessExecutor:
    """A pool of ``jobs`` worker processes (forked where the platform allows, so the
    workers start with this process's modules and parser tables). Items go out in
    chunks; ``fn`` and the items must be picklable (a module-level function)."""

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.jobs = jobs

    @property
    def forks(self) -> bool:
        """Whether the workers are forked from this process (and so start with what it
        has built, such as the parser's tables)."""
        import multiprocessing

        return "fork" in multiprocessing.get_all_start_methods()

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        items = list(items)
        # a few chunks per worker: large enough to amortise pickling, small enough to balance
        return list(self._imap(fn, items, max(1, len(items) // (min(self.jobs, len(items) or 1) * 4))))

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """One item a task: the items are already chunks (`pcsc.compiler.cohort.chunks`)."""
        return self._imap(fn, list(items), 1)

    def _imap(self, fn: Callable[[T], R], items: list[T], chunksize: int) -> Iterator[R]:
        if len(items) < 2 or self.jobs == 1:
            yield from (fn(item) for item in items)
            return
        import multiprocessing  # here: a serial run (one route, --jobs 1) never needs them
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(items)), mp_context=context) as pool:
            yield from pool.map(fn, items, chunksize=chunksize)


def executor(jobs: int | None, scheduler: str | None = None) -> Executor:
    """The executor for ``--jobs``: 1 (or None) runs serially; 0 means one per CPU.
    A ``scheduler`` address runs on that Dask cluster (`pcsc.compiler.parallel_dask`) instead."""
    if scheduler:
        from pcsc.compiler.parallel_dask import DaskExecutor

        return DaskExecutor(scheduler)
    if jobs is None or jobs == 1:
        return SerialExecutor()
    if jobs == 0:
        jobs = os.cpu_count() or 1
    return ProcessExecutor(jobs) if jobs > 1 else SerialExecutor()
