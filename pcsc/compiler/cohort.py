"""Loading many route files, in this process or in a pool of workers (`--jobs N`).

`load_chunk` reads, parses and lowers a run of consecutive files (optionally binds
their routes to their policies) in one `Session`, as a run in one process would, and
returns everything the run needs from them: the routes, the diagnostics, the source
texts, the input hashes and the libraries loaded. Files go to the workers in chunks
(`chunks`), not one task per file, and a worker keeps what does not depend on the
file from one chunk to the next (`worker_session`): the loaded policies, the parsed
libraries that loaded cleanly, the libraries' hashes and the IR cache's index. So a
chunk's session is a fresh session in all that it reports, and a worker parses the
policy and the libraries once per run, not once per file.
A worker may run in another folder than the command (`dask worker` runs wherever it
was started): the command sends absolute paths (`Settings.cwd` is its working folder,
and every path it sends is resolved there) and the worker shows paths relative to
that folder, so its diagnostics name files as the command would.
`merge` appends that into the run's session as if the session had loaded the file
itself: a library's own diagnostics (its syntax errors, "library has errors") are
reported once per run, at its first use, so a worker's report of a library the run
has already loaded is dropped. Results are merged in input order, so the output of a
run is the same whatever the number of workers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from pcsc.base.resources import display_path as display
from pcsc.base.resources import shown_from
from pcsc.compiler.ircache import Limits
from pcsc.compiler.parallel import Executor
from pcsc.compiler.session import LibraryHash, LibraryUse, PolicyRequirement, Session
from pcsc.diagnostics.model import Finding, Span
from pcsc.lang.ir import Library, Route
from pcsc.policy.model import FoundIn

if TYPE_CHECKING:
    from pcsc.compiler.ircache import IRCache
    from pcsc.policy.load import PolicyStore

T = TypeVar("T")
R = TypeVar("R")


def _absolute(paths: tuple[Path, ...], cwd: Path) -> tuple[Path, ...]:
    return tuple(cwd / p for p in paths)  # an absolute path stays itself


@attrs.frozen
class Settings:
    """What a worker needs to build the run's session (picklable). ``cwd`` is the
    command's working folder: the search paths are resolved there when made."""

    lib_path: tuple[Path, ...] = ()
    policy_path: tuple[Path, ...] = ()
    coverage_mode: str | None = None
    config_coverage: str | None = None
    required_policies: tuple[PolicyRequirement, ...] = ()
    lib_origins: tuple[tuple[Path, tuple[FoundIn, str | None]], ...] = ()  # Session.lib_origins
    policy_origins: tuple[tuple[Path, tuple[FoundIn, str | None]], ...] = ()  # PolicyStore.origins
    ir_cache: bool = False
    cache_limits: Limits | None = None  # the client's bound (a worker's environment may differ)
    bind: bool = False  # bind each route to its policy (`pcsc check`)
    keep_routes: bool = True
    cwd: Path = attrs.field(factory=Path.cwd)
    # which run this is: a worker that outlives a command (`dask worker`) never serves
    # another run the policies and libraries it read for this one
    run: str = attrs.field(factory=lambda: os.urandom(8).hex())

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "lib_path", _absolute(self.lib_path, self.cwd))
        object.__setattr__(self, "policy_path", _absolute(self.policy_path, self.cwd))
        object.__setattr__(self, "lib_origins", tuple((self.cwd / p, o) for p, o in self.lib_origins))
        object.__setattr__(self, "policy_origins", tuple((self.cwd / p, o) for p, o in self.policy_origins))

    def session(self) -> Session:
        from pcsc.compiler.ircache import IRCache, cache_folder
        from pcsc.policy.load import PolicyStore

        folder = cache_folder() if self.ir_cache else None
        return Session(
            lib_path=list(self.lib_path),
            policies=PolicyStore(list(self.policy_path), dict(self.policy_origins)),
            coverage_mode=self.coverage_mode,  # type: ignore[arg-type]
            config_coverage=self.config_coverage,  # type: ignore[arg-type]
            required_policies=self.required_policies,
            lib_origins=dict(self.lib_origins),
            ir_cache=None if folder is None else IRCache(folder, self.cache_limits),
        )


@attrs.frozen
class FileLoad:
    routes: tuple[Route, ...]
    count: int  # routes lowered (also when they are not kept)
    diagnostics: tuple[Finding, ...]
    library_loads: tuple[tuple[Path, int, int], ...]  # (library, start, end) in `diagnostics`
    libraries: tuple[tuple[Path, Library | None], ...]
    sources: tuple[tuple[str, str], ...]
    inputs: tuple[tuple[str, str], ...]
    uses: tuple[tuple[tuple[str, str], tuple[LibraryUse, ...]], ...] = ()  # the packet's `libraries`


def load_file(task: tuple[Settings, Path, str]) -> FileLoad:
    """Read, parse and lower one route file in a fresh session."""
    settings, path, shown = task
    return load_chunk((settings, ((path, shown),)))


def load_chunk(task: tuple[Settings, Sequence[tuple[Path, str]]]) -> FileLoad:
    """Read, parse and lower consecutive route files, in order, in one session that
    reports what a fresh one would (a worker's job): `worker_session`."""
    settings, chunk = task
    session = worker_session(settings)
    count = 0
    routes: list[Route] = []
    with shown_from(settings.cwd):
        for path, shown in chunk:
            got, n = _load(session, settings, settings.cwd / path, shown)
            routes.extend(got)
            count += n
    files_with_diagnostics = {d.span.file for d in session.diags.items}
    return FileLoad(
        routes=tuple(routes),
        count=count,
        diagnostics=tuple(session.diags.items),
        library_loads=tuple((p, a, b) for p, (a, b) in session.library_loads.items()),
        libraries=tuple(session._libraries.items()),
        uses=tuple(session.library_uses.items()),
        sources=tuple(
            (shown, text)
            for shown, text in session.sources.items()
            if settings.keep_routes or shown in files_with_diagnostics
        ),
        inputs=tuple(session.inputs),
    )


@attrs.define
class _WorkerCaches:
    """What a worker keeps between the chunks of one run (`worker_session`)."""

    settings: Settings
    policies: PolicyStore
    ir_cache: IRCache | None
    digests: dict[Path, LibraryHash | None] = attrs.field(factory=dict)
    # libraries that loaded without a diagnostic: (library, its text), by path and name
    clean: dict[tuple[Path, str], tuple[Library, str]] = attrs.field(factory=dict)


_WORKER = threading.local()  # a thread's caches: a Dask worker may run chunks in several threads


@attrs.define
class ChunkSession(Session):
    """A session for one chunk that takes from its worker's caches what a fresh session
    would compute the same: a library that loaded cleanly in an earlier chunk of the run
    is loaded again without reading or parsing (no diagnostic to report either way), and
    the policies and the libraries' hashes are the worker's."""

    caches: _WorkerCaches | None = None

    def load_library(self, path: Path, name: str, span: Span) -> Library | None:
        caches = self.caches
        if caches is None or path in self._libraries:
            return super().load_library(path, name, span)
        hit = caches.clean.get((path, name))
        if hit is not None:
            n = len(self.diags)
            self._libraries[path] = hit[0]
            self.sources[display(path)] = hit[1]
            self.library_loads[path] = (n, n)
            return hit[0]
        loaded = super().load_library(path, name, span)
        text = self.sources.get(display(path))
        if loaded is not None and self.library_is_clean(path) and text is not None:
            caches.clean[(path, name)] = (loaded, text)
        return loaded


def worker_session(settings: Settings) -> Session:
    """A fresh session for a chunk of ``settings``'s run, sharing this worker thread's
    caches for that run (made at its first chunk; another run's are dropped)."""
    caches: _WorkerCaches | None = getattr(_WORKER, "caches", None)
    if caches is None or caches.settings != settings:
        base = settings.session()
        caches = _WorkerCaches(settings, base.policies, base.ir_cache)
        _WORKER.caches = caches
    return ChunkSession(
        lib_path=list(settings.lib_path),
        policies=caches.policies,
        coverage_mode=settings.coverage_mode,  # type: ignore[arg-type]
        config_coverage=settings.config_coverage,  # type: ignore[arg-type]
        required_policies=settings.required_policies,
        lib_origins=dict(settings.lib_origins),
        digests=caches.digests,
        ir_cache=caches.ir_cache,
        caches=caches,
    )


def chunks(files: Sequence[T], jobs: int, most: int = 64) -> list[list[T]]:
    """``files`` cut into consecutive chunks for ``jobs`` workers: about eight chunks a
    worker (so a slow chunk does not leave the others idle at the end), at most ``most``
    files each (so results, and the progress bar, come back steadily)."""
    size = max(1, min(most, len(files) // (max(1, jobs) * 8)))
    return [list(files[i:i + size]) for i in range(0, len(files), size)]


def _load(session: Session, settings: Settings, path: Path, shown: str) -> tuple[list[Route], int]:
    """One file's routes (none unless kept) and their number; checked when asked
    (`Session.check_route`)."""
    routes = session.load_routes(path, shown)
    if settings.bind:
        for route in routes:
            session.check_route(route)
    return (routes if settings.keep_routes else []), len(routes)


def merge(session: Session, loaded: FileLoad) -> list[Route]:
    """Append one file's load into ``session`` as if it had loaded the file itself."""
    offset = len(session.diags)
    skip: set[int] = set()
    for path, start, end in loaded.library_loads:
        if path in session.library_loads:
            skip.update(range(start, end))  # reported when the run first loaded it
    kept = [d for i, d in enumerate(loaded.diagnostics) if i not in skip]
    session.diags.items.extend(kept)
    for path, start, end in loaded.library_loads:
        if path not in session.library_loads:
            before = sum(1 for i in skip if i < start)
            session.library_loads[path] = (offset + start - before, offset + end - before)
    for path, lib in loaded.libraries:
        session._libraries.setdefault(path, lib)
    for shown, text in loaded.sources:
        session.sources.setdefault(shown, text)
    for key, used in loaded.uses:
        session.library_uses.setdefault(key, used)
    session.inputs.extend(loaded.inputs)
    return list(loaded.routes)


def load_files(
    session: Session, settings: Settings, files: Sequence[tuple[Path, str]], executor: Executor,
    done: Callable[[int], None] | None = None,
) -> tuple[list[Route], int]:
    """The routes of ``files`` (path, shown) and how many were lowered, loaded by
    ``executor`` in chunks (`load_chunk`) and merged into ``session`` in input order.
    One job loads them in ``session`` itself, one after the other. ``done``, when given,
    is called with the number of files loaded as they come in (for a progress bar)."""
    routes: list[Route] = []
    count = 0
    if executor.jobs == 1:
        return session.load_files(files, bind=settings.bind, keep_routes=settings.keep_routes, done=done)
    parts = chunks(files, executor.jobs)
    if len(parts) > 1 and getattr(executor, "forks", False):
        from pcsc.lang.syntax.parser import parser_kind

        parser_kind()  # the parser's tables built once, here, before the workers fork
    tasks = [(settings, part) for part in parts]
    for part, loaded in zip(parts, executor.imap(load_chunk, tasks), strict=True):
        routes.extend(merge(session, loaded))
        count += loaded.count
        if done is not None:
            done(len(part))
    return routes, count


def _on_route(task: tuple[Settings, Callable[[Session, Any], R], Any]) -> tuple[R, list[Finding]]:
    settings, fn, item = task
    session = settings.session()
    with shown_from(settings.cwd):
        result = fn(session, item)
    return result, session.diags.items


def map_routes(
    session: Session, settings: Settings, fn: Callable[[Session, T], R], items: Sequence[T], executor: Executor
) -> list[R]:
    """``[fn(session, item) for item in items]``, by ``executor``: a worker runs ``fn``
    in a fresh session with the run's settings (``fn`` must use the session only for
    its search paths, policies and diagnostics, as the seam and red-team analyses do),
    and its diagnostics are appended to ``session`` in input order. ``fn`` must be
    picklable: a module-level function, or a `functools.partial` of one."""
    if executor.jobs == 1 or len(items) < 2:
        return [fn(session, item) for item in items]
    out: list[R] = []
    for result, diagnostics in executor.map(_on_route, [(settings, fn, item) for item in items]):
        session.diags.items.extend(diagnostics)
        out.append(result)
    return out
