"""A Dask cluster as an `Executor` (`--scheduler tcp://HOST:PORT`, the extra ``pcsc[dask]``).

The same contract as the local executors (`pcsc.compiler.parallel`): ``map`` returns the results
in the order of the items and re-raises a worker's exception, so a run on a cluster
prints what a run with ``--jobs 1`` prints. The function and the items travel to the
workers pickled by reference, so every worker must have ``pcsc`` (the same version)
importable and see the same files at the same absolute paths (a shared checkout, or
the same container image with the inputs mounted); a worker may run in any folder, as
the command sends paths resolved in its own (`pcsc.compiler.cohort.Settings`). Dask is imported
only here, and only when a command is given ``--scheduler``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from pcsc.base.extras import require

T = TypeVar("T")
R = TypeVar("R")

class SchedulerError(Exception):
    """The scheduler cannot be used (nobody listening at the address)."""


def _distributed() -> Any:
    return require("dask", "--scheduler")


class DaskExecutor:
    """Runs ``fn`` on the workers of the Dask scheduler at ``address``.

    ``jobs`` is the number of worker threads the cluster offers when it is first asked
    (at least 2: a cohort command then always ships its work out of this process). A
    client is connected for each ``map`` and closed after it, so nothing is left open
    when a command ends."""

    def __init__(self, address: str, *, timeout: float = 10.0) -> None:
        self.address = address
        self.timeout = timeout
        with self._client() as client:
            threads = sum(client.nthreads().values())
        self.jobs = max(2, threads)

    def _client(self) -> Any:
        distributed = _distributed()
        _refuse_fast(distributed, self.address)
        try:
            return distributed.Client(self.address, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SchedulerError(f"--scheduler {self.address}: cannot connect ({exc})") from None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        items = list(items)
        if not items:
            return []
        with self._client() as client:
            # pure=False: equal items are still separate tasks (no result shared by key)
            futures = client.map(fn, items, pure=False)
            results: list[R] = client.gather(futures)  # in the order of `futures`
        return results

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """The results in input order, each as soon as it and those before it are done
        (the items are chunks: `pcsc.compiler.cohort.chunks`)."""
        items = list(items)
        if not items:
            return
        with self._client() as client:
            futures = client.map(fn, items, pure=False)
            for future in futures:
                yield future.result()


def _refuse_fast(distributed: Any, address: str) -> None:
    """Fail at once where nobody listens on a ``tcp://`` address: Dask's client retries a
    refused connection until its timeout (10 s) before it gives up."""
    import socket

    try:
        scheme, location = distributed.comm.addressing.parse_address(address)
        if scheme != "tcp":
            return
        host, port = distributed.comm.addressing.parse_host_port(location)
    except (TypeError, ValueError):
        return  # the client's own message says what is wrong with the address
    try:
        with socket.create_connection((host, port), timeout=1.0):
            pass
    except ConnectionRefusedError as exc:
        raise SchedulerError(f"--scheduler {address}: cannot connect ({exc.strerror or exc})") from None
    except OSError:
        return  # slow or filtered: the client waits its timeout and reports
