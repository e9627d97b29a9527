"""A content-addressed cache of lowered IR, one entry per route file.

Re-checking an unchanged tree should cost little: parsing and lowering are most of a
compile. An entry holds what `Session.routes_from_text` produced for one file (the
lowered routes and the file's own diagnostics, warnings included) and is found by a
key over

- the file's text (sha256) and the name it is shown under (spans carry it);
- the grammar, the pcsc version and the source of the pcsc package itself (so an
  edited compiler never reads IR an older one lowered), and the Python version;

and it records the libraries the file's routes used: each one's name, resolved path,
displayed name and sha256. An entry is used only when every library still resolves
to the same file with the same content; else it is a miss. Binding to the policy is
never cached (every command binds after loading), and a file is stored only when it
lowered without an error and every library it used loaded without a diagnostic, so an
entry does not depend on a policy, and replaying its diagnostics is exactly what a
fresh lowering would report.

Entries live in `$XDG_CACHE_HOME/pcsc/ir/` (default `~/.cache`), next to the parser
tables, only when that folder belongs to this user and no one else can write to it
(a pickle is loaded only from there); `PCSC_NO_CACHE=1` turns the cache off. Writes
are atomic (a temporary file, then a rename); an unreadable, truncated or foreign
entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import attrs

from pcsc._version import __version__
from pcsc.diagnostics.model import Diagnostic
from pcsc.ir import Route
from pcsc.lower.route import PolicyFacts
from pcsc.resources import data_dir
from pcsc.resources import display_path as display

# `Session` (pcsc.pipeline) uses this module; annotated `Any` here to keep the import one-way
Session = Any

FORMAT = 2


@attrs.frozen
class LibraryDep:
    name: str
    path: str  # resolved, absolute
    shown: str  # as spans show it (relative to the working folder when inside it)
    sha256: str


@attrs.frozen
class Entry:
    key: str
    routes: bytes  # the pickled tuple of routes: unpickled only by a command that needs the IR
    facts: tuple[PolicyFacts, ...]  # what binding each route reads (`pcsc check` needs no more)
    diagnostics: tuple[Diagnostic, ...]
    libraries: tuple[LibraryDep, ...]


def cache_folder() -> Path | None:
    """`$XDG_CACHE_HOME/pcsc/ir` (default `~/.cache`), or None when PCSC_NO_CACHE is
    set or the folder is not private to this user."""
    if os.environ.get("PCSC_NO_CACHE"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "pcsc" / "ir"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        for f in (folder.parent, folder):
            info = f.stat()
            if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
                return None
    except OSError:
        return None
    return folder


@cache
def compiler_fingerprint() -> str:
    """The grammar, the pcsc package's source, the version, and Python's."""
    h = hashlib.sha256(f"{FORMAT}\0{__version__}\0{sys.version_info[:3]}\0".encode())
    h.update((data_dir("grammar") / "pcsc.lark").read_bytes())
    package = Path(__file__).resolve().parent
    for source in sorted(package.rglob("*.py")):
        h.update(str(source.relative_to(package)).encode() + b"\0")
        h.update(source.read_bytes())
    return h.hexdigest()


class IRCache:
    """The lowered IR of route files, keyed by content (see the module)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    @classmethod
    def default(cls) -> IRCache | None:
        folder = cache_folder()
        return None if folder is None else cls(folder)

    def key(self, text_sha256: str, shown: str) -> str:
        return hashlib.sha256(f"{compiler_fingerprint()}\0{shown}\0{text_sha256}".encode()).hexdigest()

    def _file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"

    def get(self, key: str) -> Entry | None:
        try:
            with open(self._file(key), "rb") as f:
                if hasattr(os, "getuid") and os.fstat(f.fileno()).st_uid != os.getuid():
                    return None
                entry = pickle.load(f)
        except Exception:  # missing, truncated, corrupt, from an incompatible pcsc: a miss
            return None
        if not isinstance(entry, Entry) or entry.key != key:
            return None
        return entry

    def put(self, entry: Entry) -> None:
        target = self._file(entry.key)
        try:
            target.parent.mkdir(exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".pickle")
            try:
                with os.fdopen(fd, "wb") as f:
                    pickle.dump(entry, f, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except Exception:  # a cache that cannot be written is no cache, not an error
            pass

    # ------------------------------------------------------------------ the pipeline's use
    def routes(self, session: Session, text: str, text_sha256: str, shown: str, route_dir: Path) -> list[Route]:
        """`session.routes_from_text(text, shown, route_dir)`, from the cache when the
        file and every library it used are unchanged; stored after a clean miss."""
        key = self.key(text_sha256, shown)
        entry = self.get(key)
        if entry is not None:
            try:
                routes = pickle.loads(entry.routes)
            except Exception:
                routes = None
            if isinstance(routes, tuple) and self._replay(session, entry, text, shown, route_dir, routes):
                self.hits += 1
                return list(routes)
        return self._lower(session, key, text, shown, route_dir)

    def facts(
        self, session: Session, text: str, text_sha256: str, shown: str, route_dir: Path
    ) -> list[PolicyFacts]:
        """What binding reads of each route of the file, as `PolicyFacts.of` gives it
        for the routes `routes` returns (their diagnostics replayed or reported the
        same way), without unpickling the routes on a hit."""
        return [PolicyFacts.of(r) for r in self.routes(session, text, text_sha256, shown, route_dir)]

    def _lower(self, session: Session, key: str, text: str, shown: str, route_dir: Path) -> list[Route]:
        """A miss: lower the text in ``session``; store it when it is clean."""
        self.misses += 1
        before = len(session.diags)
        resolutions_before = len(session.resolutions)
        routes: list[Route] = session.routes_from_text(text, shown, route_dir)
        own = session.diags.items[before:]
        if any(d.severity == "error" for d in own):
            return routes
        libraries: list[LibraryDep] = []
        for name, path in session.resolutions[resolutions_before:]:
            dep = self._dependency(session, name, path)
            if dep is None:
                return routes
            if dep not in libraries:
                libraries.append(dep)
        if any(d.span.file != shown for d in own):
            return routes  # a library's own diagnostics: not the file's to replay
        blob = pickle.dumps(tuple(routes), protocol=pickle.HIGHEST_PROTOCOL)
        facts = tuple(PolicyFacts.of(r) for r in routes)
        self.put(Entry(key, blob, facts, tuple(own), tuple(libraries)))
        return routes

    @staticmethod
    def _dependency(session: Session, name: str, path: Path | None) -> LibraryDep | None:
        """The dependency on a library that loaded cleanly, else None (not cacheable)."""
        if path is None or session.library_is_clean(path) is not True:
            return None
        text = session.sources.get(display(path))
        if text is None:
            return None
        return LibraryDep(name, str(path), display(path), hashlib.sha256(text.encode("utf-8")).hexdigest())

    @staticmethod
    def _replay(
        session: Session, entry: Entry, text: str, shown: str, route_dir: Path, routes: tuple[Route, ...]
    ) -> bool:
        """Whether ``entry`` still holds: every library resolves as it did, to the same
        content, and passes the route's policy's pins today (a policy can change under
        the same name). Then the libraries are loaded into ``session`` through the same
        resolution lowering uses, and the file's diagnostics are replayed."""
        roots = session.library_roots(route_dir)
        found = []
        for dep in entry.libraries:
            path = next(
                (c for c in ((root / f"{dep.name}.obl").resolve() for root in roots) if c.is_file()),
                None,
            )
            if path is None or str(path) != dep.path or display(path) != dep.shown:
                return False
            try:
                data = path.read_bytes()
            except OSError:
                return False
            if hashlib.sha256(data).hexdigest() != dep.sha256:
                return False
            found.append((dep, path))
        del found  # checked above; resolution below loads them
        before = len(session.diags)
        session.sources[shown] = text
        for route in routes:
            if not session.replay_library_uses(route, shown, route_dir):
                del session.diags.items[before:]
                return False
        session.diags.items.extend(entry.diagnostics)
        return True
