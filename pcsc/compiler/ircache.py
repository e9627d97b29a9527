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

The cache is bounded (docs/cli.md, "The IR cache"): at most `PCSC_CACHE_MAX_ENTRIES`
entries (default 2,000) and `PCSC_CACHE_MAX_MB` megabytes (default 64). A hit sets the
entry's modification time to now (atime is unreliable: most file systems mount with
relatime or noatime), so that time is its last use; when a write takes the cache past
either bound, the least recently used entries go until it is at 90% of both, so that
pruning is rare. Every key changes with the compiler, so an upgraded or edited pcsc
leaves its predecessor's entries unused: they are the first to go.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import attrs

from pcsc._version import __version__
from pcsc.base.resources import data_dir
from pcsc.base.resources import display_path as display
from pcsc.diagnostics.model import Finding
from pcsc.lang.ir import Route

# `Session` (pcsc.compiler.session) uses this module; annotated `Any` here to keep the import one-way
Session = Any

FORMAT = 2

#: The bound's defaults: a cohort must fit whole (an LRU cache smaller than the set of
#: files a run reads misses on every file of every run), and a route file's entry is
#: 10 to 60 KB (the shipped examples: 20 KB at the median), so 2,000 entries hold a
#: cohort of 2,000 files in about 64 MB.
MAX_ENTRIES = 2000
MAX_MB = 64
ENV_MAX_ENTRIES = "PCSC_CACHE_MAX_ENTRIES"
ENV_MAX_MB = "PCSC_CACHE_MAX_MB"
#: What pruning leaves, as a share of each bound.
PRUNE_TO = 0.9
_MB = 2**20


class CacheSettingError(ValueError):
    """An environment variable that sets the cache's bound holds no usable value."""


@attrs.frozen
class Limits:
    entries: int
    bytes: int

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        """The bound set by `PCSC_CACHE_MAX_ENTRIES` and `PCSC_CACHE_MAX_MB`, else the defaults."""

        def read(name: str, default: int) -> int:
            text = environ.get(name, "").strip().replace("_", "")
            if not text:
                return default
            if not text.isdigit() or int(text) < 1:
                raise CacheSettingError(f"{name}={environ[name]!r}: expected a whole number, at least 1")
            return int(text)

        return cls(read(ENV_MAX_ENTRIES, MAX_ENTRIES), read(ENV_MAX_MB, MAX_MB) * _MB)


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
    diagnostics: tuple[Finding, ...]
    libraries: tuple[LibraryDep, ...]


def cache_location() -> Path:
    """`$XDG_CACHE_HOME/pcsc/ir` (default `~/.cache`), whether or not it is in use."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pcsc" / "ir"


def cache_folder() -> Path | None:
    """`cache_location()`, made when missing, or None when PCSC_NO_CACHE is set or the
    folder is not private to this user."""
    if os.environ.get("PCSC_NO_CACHE"):
        return None
    folder = cache_location()
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
    """The grammar, the pcsc package's source, the version, and Python's. Hashing every
    source file costs tens of milliseconds, so the digest is kept beside the cache
    (`fingerprint-<stamp>.txt`) under a stamp of each file's path, size and modification
    time (what Python checks before it reuses a module's bytecode); any change to a file
    changes the stamp and the digest is computed again."""
    package = Path(__file__).resolve().parent.parent  # all of pcsc/, not only pcsc/compiler/
    grammar = data_dir("grammar") / "pcsc.lark"
    sources = sorted(package.rglob("*.py"))
    stamp = hashlib.sha256(f"{FORMAT}\0{__version__}\0{sys.version_info[:3]}\0".encode())
    try:
        for f in (grammar, *sources):
            info = f.stat()
            stamp.update(f"{f}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    except OSError:
        return _fingerprint(grammar, package, sources)
    folder = _stamp_folder()
    kept = None if folder is None else folder / f"fingerprint-{stamp.hexdigest()[:20]}.txt"
    if kept is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = kept.read_text(encoding="ascii").strip()
            if re.fullmatch(r"[0-9a-f]{64}", text):
                return text
    digest = _fingerprint(grammar, package, sources)
    if kept is not None:
        _write_atomic(kept, digest.encode("ascii"))
    return digest


def _fingerprint(grammar: Path, package: Path, sources: list[Path]) -> str:
    h = hashlib.sha256(f"{FORMAT}\0{__version__}\0{sys.version_info[:3]}\0".encode())
    h.update(grammar.read_bytes())
    for source in sources:
        h.update(str(source.relative_to(package)).encode() + b"\0")
        h.update(source.read_bytes())
    return h.hexdigest()


def _stamp_folder() -> Path | None:
    """The folder above the IR entries (`$XDG_CACHE_HOME/pcsc`), when the cache is in use."""
    folder = cache_folder()
    return None if folder is None else folder.parent


def _write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temporary file and a rename; a cache that
    cannot be written is no cache, not an error."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


# The canonical hash of each library text met, by the hash of the text (`library_canonical`)
_CANONICAL: dict[str, str | None] | None = None
MAX_CANONICAL = 1024


def _canonical_file() -> Path | None:
    folder = _stamp_folder()
    return None if folder is None else folder / f"canonical-{compiler_fingerprint()[:20]}.json"


def library_canonical(text_sha256: str, canonical: Callable[[], str | None]) -> str | None:
    """The SHA-256 of a library's canonical text (what a pin compares), by the SHA-256 of
    its text: ``canonical()`` computes it (a parse by the formatter's tree parser, the
    slowest part of a one-route check), and each result is kept beside the cache
    (`canonical-<compiler>.json`: it is a function of the text and the compiler alone), so
    a later run reads it. Off (computed every time) when the cache is off."""
    global _CANONICAL
    path = _canonical_file()
    if path is None:
        return canonical()
    if _CANONICAL is None:
        _CANONICAL = {}
        with contextlib.suppress(OSError, ValueError):
            got = json.loads(path.read_bytes())
            if isinstance(got, dict):
                _CANONICAL = {k: v for k, v in got.items()
                              if isinstance(k, str) and (v is None or isinstance(v, str) and len(v) == 64)}
    if text_sha256 in _CANONICAL:
        return _CANONICAL[text_sha256]
    found = canonical()
    if len(_CANONICAL) >= MAX_CANONICAL:
        _CANONICAL.clear()
    _CANONICAL[text_sha256] = found
    _write_atomic(path, json.dumps(_CANONICAL, sort_keys=True).encode("ascii"))
    return found


class IRCache:
    """The lowered IR of route files, keyed by content (see the module)."""

    def __init__(self, folder: Path, limits: Limits | None = None) -> None:
        self.folder = folder
        self.limits = limits or Limits(MAX_ENTRIES, MAX_MB * _MB)
        # every entry's (last use, size), read from the folder at this cache's first write
        self._index: dict[Path, tuple[float, int]] | None = None

    @classmethod
    def default(cls) -> IRCache | None:
        """The user's cache with the bound the environment sets; None when it is off.
        Raises `CacheSettingError`."""
        limits = Limits.from_environment()
        folder = cache_folder()
        return None if folder is None else cls(folder, limits)

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
        self._used(self._file(key))
        return entry

    def _used(self, path: Path) -> None:
        """Mark ``path`` used now: its modification time is the LRU clock."""
        try:
            os.utime(path)
            info = path.stat()
        except OSError:
            return
        if self._index is not None:
            self._index[path] = (info.st_mtime, info.st_size)

    def put(self, entry: Entry) -> None:
        import tempfile

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
            return
        if self._index is None:
            self._index = dict(_scan(self.folder))
        self._used(target)
        self.prune()

    def prune(self) -> int:
        """When the cache is past its bound, remove the least recently used entries until
        it is at `PRUNE_TO` of both; the number removed."""
        index = self._index if self._index is not None else dict(_scan(self.folder))
        self._index = index
        total = sum(size for _, size in index.values())
        if len(index) <= self.limits.entries and total <= self.limits.bytes:
            return 0
        keep_entries, keep_bytes = int(self.limits.entries * PRUNE_TO), int(self.limits.bytes * PRUNE_TO)
        removed = 0
        for path, (_, size) in sorted(index.items(), key=lambda kv: kv[1][0]):
            if len(index) <= keep_entries and total <= keep_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
            del index[path]
            total -= size
            removed += 1
        return removed

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
                return list(routes)
        return self._lower(session, key, text, shown, route_dir)

    def _lower(self, session: Session, key: str, text: str, shown: str, route_dir: Path) -> list[Route]:
        """A miss: lower the text in ``session``; store it when it is clean."""
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
        self.put(Entry(key, blob, tuple(own), tuple(libraries)))
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


_ENTRY = re.compile(r"[0-9a-f]{64}\.pickle")


def _scan(folder: Path) -> Iterator[tuple[Path, tuple[float, int]]]:
    """Every entry under ``folder`` with its (last use, size)."""
    try:
        shards = list(os.scandir(folder))
    except OSError:
        return
    for shard in shards:
        if not shard.is_dir(follow_symlinks=False):
            continue
        try:
            files = list(os.scandir(shard.path))
        except OSError:
            continue
        for f in files:
            if _ENTRY.fullmatch(f.name) and f.is_file(follow_symlinks=False):
                try:
                    info = f.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield Path(f.path), (info.st_mtime, info.st_size)


@attrs.frozen
class Usage:
    """What the cache holds: its entries and the other files pcsc caches beside them."""

    folder: Path
    enabled: bool
    why_off: str | None
    entries: int
    bytes: int
    other_files: int  # parser tables and proof records, in the folder above
    other_bytes: int
    limits: Limits


def _others(folder: Path) -> list[Path]:
    """The parser tables and proof records pcsc keeps next to the IR folder."""
    try:
        return [p for p in folder.parent.iterdir() if _OTHER.fullmatch(p.name) and p.is_file()]
    except OSError:
        return []


_OTHER = re.compile(r"grammar-[a-z]+-[0-9a-f]{20}\.cache|proofs-[0-9a-f]{20}\.json|\.tmp-proofs-.*"
                    r"|fingerprint-[0-9a-f]{20}\.txt|canonical-[0-9a-f]{20}\.json|\.tmp-.*\.(txt|json)")


def usage(limits: Limits) -> Usage:
    """The cache's location, whether it is used, and what it holds."""
    folder = cache_location()
    why = None
    if os.environ.get("PCSC_NO_CACHE"):
        why = "PCSC_NO_CACHE is set"
    elif folder.is_dir() and cache_folder() is None:
        why = "the folder is not private to this user"
    items = [size for _, (_, size) in _scan(folder)] if folder.is_dir() else []
    others = _others(folder)
    other_bytes = sum(p.stat().st_size for p in others)
    return Usage(folder, why is None, why, len(items), sum(items), len(others), other_bytes, limits)


def clear() -> tuple[int, int]:
    """Remove every entry, temporary file, parser table and proof record pcsc caches
    (each is rebuilt when next needed); (files removed, bytes freed). Only names pcsc
    writes are removed, and only in a folder private to this user. Raises OSError."""
    folder = cache_location()
    if not folder.is_dir():
        return 0, 0
    for f in (folder.parent, folder):
        info = f.lstat()
        if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022 or f.is_symlink()):
            raise PermissionError(f"{f} is not private to this user: nothing removed")
    files: list[Path] = [p for p, _ in _scan(folder)] + _others(folder)
    for shard in folder.iterdir():
        if shard.is_dir() and not shard.is_symlink():
            files += [p for p in shard.iterdir() if p.name.startswith(".tmp-") and p.is_file()]
    count, freed = 0, 0
    for path in files:
        size = path.stat().st_size
        path.unlink()
        count, freed = count + 1, freed + size
    for shard in folder.iterdir():
        if shard.is_dir() and not shard.is_symlink():
            with contextlib.suppress(OSError):
                shard.rmdir()  # only when empty
    return count, freed
