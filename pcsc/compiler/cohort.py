"""Loading many route files, in this process or in a pool of workers (`--jobs N`).

`load_file` reads, parses and lowers one file (optionally binds its routes to their
policies) in a fresh `Session`, and returns everything the run needs from it: the
routes, the diagnostics, the source texts, the input hash and the libraries loaded.
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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from pcsc.base.resources import shown_from
from pcsc.compiler.ircache import Limits
from pcsc.compiler.parallel import Executor
from pcsc.compiler.session import LibraryUse, PolicyRequirement, Session
from pcsc.diagnostics.model import Finding
from pcsc.lang.ir import Library, Route
from pcsc.policy.model import FoundIn

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
    """Read, parse and lower one route file in a fresh session (a worker's job)."""
    settings, path, shown = task
    session = settings.session()
    with shown_from(settings.cwd):
        routes, count = _load(session, settings, settings.cwd / path, shown)
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
            if settings.keep_routes or any(d.span.file == shown for d in session.diags.items)
        ),
        inputs=tuple(session.inputs),
    )


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
    done: Callable[[], None] | None = None,
) -> tuple[list[Route], int]:
    """The routes of ``files`` (path, shown) and how many were lowered, loaded by
    ``executor`` and merged into ``session`` in input order. One job loads them in
    ``session`` itself, one after the other. ``done``, when given, is called after each
    file (for a progress bar)."""
    routes: list[Route] = []
    count = 0
    if executor.jobs == 1:
        for path, shown in files:
            since = len(session.diags)
            got, n = _load(session, settings, path, shown)
            count += n
            routes.extend(got)
            if not settings.keep_routes:
                _forget_sources(session, shown, since)
            if done is not None:
                done()
        return routes, count
    tasks = [(settings, path, shown) for path, shown in files]
    for loaded in executor.map(load_file, tasks):
        routes.extend(merge(session, loaded))
        count += loaded.count
        if done is not None:
            done()
    return routes, count


def _forget_sources(session: Session, shown: str, since: int) -> None:
    """Drop the text of a file that no diagnostic of its load points into (a cohort's
    texts are most of its memory; only diagnostics show source lines)."""
    if not any(d.span.file == shown for d in session.diags.items[since:]):
        session.sources.pop(shown, None)


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
