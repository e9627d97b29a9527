"""The compiler pipeline, as one explicit sequence:

    read -> parse -> lower (IR) -> bind policy (pin, classes, criteria, point-in-time)
         -> score (docs/formulas.md)

A `Session` owns the diagnostics and the source texts of one run, and caches parsed
libraries and loaded policies so that a cohort parses each only once.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Sequence
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

import attrs

from pcsc.base import files
from pcsc.base.canonical import sha256_hex
from pcsc.base.gcpause import paused_gc
from pcsc.base.modes import Mode, lowers
from pcsc.base.resources import data_dir
from pcsc.base.resources import display_path as display
from pcsc.compiler.walk import folder_files
from pcsc.coverage import Coverage, Decision, decide, discharge_route
from pcsc.coverage.diagnose import report_uncovered
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span, unreadable
from pcsc.lang.fmt import canonical_library
from pcsc.lang.ir import Evidence, Library, Route
from pcsc.lang.ir.names import MAX_NAME, is_name, split_policy_ref, split_requirement
from pcsc.lang.lower.common import policy_help, suggest
from pcsc.lang.lower.expr import unquote
from pcsc.lang.lower.library import lower_library
from pcsc.lang.lower.route import PolicyFacts, lower_route_facts
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax import parse_source
from pcsc.lang.syntax.limits import MAX_ROUTES
from pcsc.policy.load import OutsideRoots, PolicyError, PolicyStore
from pcsc.policy.model import Found, FoundIn, LoadedPolicy
from pcsc.score.finite import NotFinite
from pcsc.score.route import RouteNumbers, fold, fold_policy, score_route


@attrs.frozen
class Pin:
    """What let a route use a library: the policy's `[libraries.<name>]` entry (``by``
    "policy"; ``sha256`` None for a name a `local_libraries = true` policy names without
    pinning its content), or, under a policy that pins no library, the library PCSC
    ships under that name (``by`` "shipped", ``sha256`` its canonical hash)."""

    by: Literal["policy", "shipped"]
    version: str | None
    sha256: str | None

    def as_json(self) -> dict[str, str | None]:
        """The pin as packets and certificates record it."""
        return {"by": self.by, "version": self.version, "sha256": self.sha256}


@attrs.frozen
class LibraryUse:
    """A library a route used: the SHA-256 of its file's text (``sha256``, as `inputs`
    and certificates record files) and of its canonical text (``canonical_sha256``,
    what a pin compares), the pin that admitted it, and whether it is a local file (beside
    the route or on --lib-path) that the policy's `local_libraries = true` let replace
    the pinned or shipped content of that name; ``found`` says which folder it came from."""

    name: str
    version: str
    sha256: str
    canonical_sha256: str
    pin: Pin
    file: str
    shipped: bool
    replaces: bool = False
    found: Found | None = None


@attrs.frozen
class PolicyRequirement:
    """The policies a run lets its routes name (`--require-policy`, `require_policy`):
    each of ``allowed`` is an `id` (any version of it) or an `id@version`; ``source``
    says who asked ("command line", or a configuration file's path)."""

    allowed: tuple[str, ...]
    source: str

    def admits(self, ref: str) -> bool:
        parts = split_policy_ref(ref)
        return parts is not None and any(split_requirement(a) in (parts, (parts[0], None)) for a in self.allowed)

    def __str__(self) -> str:
        return ", ".join(f"`{a}`" for a in self.allowed)


@attrs.frozen
class LibraryHash:
    """The two hashes of a library file: of its text (UTF-8, CRLF read as LF) and of its
    canonical text (`pcsc.lang.fmt.canonical_library`), or None when it does not parse."""

    text: str
    canonical: str | None


if TYPE_CHECKING:
    from pcsc.compiler.ircache import IRCache


@attrs.frozen
class Compiled:
    route: Route
    policy: LoadedPolicy
    numbers: RouteNumbers
    coverage: Coverage | None  # None when coverage is off
    decision: Decision
    libraries: tuple[LibraryUse, ...] = ()


def library_sha256(path: Path) -> str | None:
    """What a policy's `[libraries.<name>] sha256` pins for the library file at ``path``:
    the SHA-256 of its canonical text (`pcsc.lang.fmt.canonical_library`, the text `pcsc fmt`
    writes); None when it cannot be read as text or does not parse."""
    found = library_hash(path)
    return None if found is None else found.canonical


def library_hash(path: Path) -> LibraryHash | None:
    """Both hashes of the library file at ``path``; None when it cannot be read as UTF-8
    or is over the size limit (loading it says which)."""
    try:
        text = files.decode(files.read_bytes(path), str(path))
    except files.Unreadable:
        return None
    text = text.replace("\r\n", "\n")
    digest = sha256_hex(text)
    if digest not in _CANONICAL_SHA256:
        canonical = canonical_library(text)
        if len(_CANONICAL_SHA256) >= 1024:
            _CANONICAL_SHA256.clear()
        _CANONICAL_SHA256[digest] = None if canonical is None else sha256_hex(canonical)
    return LibraryHash(digest, _CANONICAL_SHA256[digest])


# The canonical hash of each library text seen in this process, by the hash of the text:
# a pure function of the text, and each compile's fresh session would lay it out again.
_CANONICAL_SHA256: dict[str, str | None] = {}


@attrs.define
class Session:
    lib_path: list[Path] = attrs.field(factory=list)
    policies: PolicyStore = attrs.field(factory=PolicyStore)
    diags: Diagnostics = attrs.field(factory=Diagnostics)
    sources: dict[str, str] = attrs.field(factory=dict)
    inputs: list[tuple[str, str]] = attrs.field(factory=list)  # (path, sha256)
    coverage_mode: Mode | None = None  # an override of the policy's mode, which may lower it
    coverage_source: str = "command line"  # who set `coverage_mode`: the packets' `mode_source`
    config_coverage: Mode | None = None  # a configuration file's mode: it may only raise the policy's
    # every route's policy must be one each of these allows (none: any policy on the path)
    required_policies: tuple[PolicyRequirement, ...] = ()
    # who gave each --lib-path/lib_path folder (`FoundIn`, the configuration file), for the packet
    lib_origins: dict[Path, tuple[FoundIn, str | None]] = attrs.field(factory=dict)
    _libraries: dict[Path, Library | None] = attrs.field(factory=dict)
    # the libraries each route used, by (file, route), for the packet
    library_uses: dict[tuple[str, str], tuple[LibraryUse, ...]] = attrs.field(factory=dict)
    _digests: dict[Path, LibraryHash | None] = attrs.field(factory=dict)
    ir_cache: IRCache | None = None  # lowered IR of unchanged files (pcsc.compiler.ircache); None: off
    # every library resolution, in order: (name, resolved file or None when unknown)
    resolutions: list[tuple[str, Path | None]] = attrs.field(factory=list)
    # the diagnostics each library's load appended: (start, end) in `diags.items`
    library_loads: dict[Path, tuple[int, int]] = attrs.field(factory=dict)

    # ------------------------------------------------------------------ reading
    def read(self, path: Path, shown: str) -> str | None:
        """The text of the file at ``path`` (`pcsc.base.files`: a regular file within the
        size limit, UTF-8), kept as the source of ``shown``; None after a diagnostic."""
        try:
            return self._keep(files.read_text(path), shown)
        except files.Unreadable as exc:
            self.diags.items.append(unreadable(exc, shown))
            return None

    def read_stream(self, stream: TextIO, shown: str) -> str | None:
        """Standard input as `read` reads a file; None after a diagnostic."""
        try:
            return self._keep(files.read_stream(stream, shown), shown)
        except files.Unreadable as exc:
            self.diags.items.append(unreadable(exc, shown))
            return None

    def _keep(self, text: str, shown: str) -> str:
        self.sources[shown] = text
        return text

    # ------------------------------------------------------------------ libraries
    def library_roots(self, route_dir: Path) -> list[Path]:
        """The route's own folder, then --lib-path entries, then the shipped obligations/."""
        return [route_dir, *self.lib_path, data_dir("obligations")]

    def resolve_library(
        self,
        name: str,
        span: Span,
        route_dir: Path,
        policy: LoadedPolicy | None = None,
        used: list[LibraryUse] | None = None,
    ) -> Library | None:
        """The library ``name`` for a route in ``route_dir`` under ``policy``: the first
        `<root>/<name>.obl` of `library_roots`, which must lie inside its root. The policy
        must admit the name (`admit`), and the file must hold the content it pins (or,
        under a policy that pins nothing, the shipped content), unless the policy allows
        local libraries. Each use is appended to ``used``."""
        shipped_root = data_dir("obligations").resolve()
        roots = self.library_roots(route_dir)
        if len(name) > MAX_NAME:
            self.diags.add(codes.E206, f"`{name[:40]}…` ({len(name):,} characters) is not a library name", span,
                           f"a library name is at most {MAX_NAME} characters")
            return None
        if not is_name(name):
            self.diags.add(
                codes.E206,
                f"`{name}` is not a library name",
                span,
                f"library names are lowercase letters, digits and `_`: did you mean `{name.lower()}`?",
            )
            return None
        found = self._find_library(name, span, roots)
        if found is None:
            return None
        if not found:
            self.resolutions.append((name, None))
            known = sorted({p.stem for r in roots if os.path.isdir(r) for p in r.glob("*.obl")})
            self.diags.add(
                codes.E206,
                f"unknown library `{name}`",
                span,
                suggest(name, known)
                or f"looked for {name}.obl in the route's folder, --lib-path and the shipped obligations/",
            )
            return None
        chosen = found[0]
        self.resolutions.append((name, chosen))
        shipped = chosen.parent == shipped_root
        reference = next((p for p in found if p.parent == shipped_root), None)
        pin = self.admit(name, span, chosen, policy)
        if pin is None:
            return None
        digest = self.library_digest(chosen)
        if digest is None or digest.canonical is None:  # unreadable or a syntax error: the load says why
            lib = self.load_library(chosen, name, span)
            assert lib is None, "a library that lowers parses, and so has a canonical text"
            return None
        shipped_hash = self.library_digest(reference) if reference is not None else None
        if pin.by == "shipped":
            pin = attrs.evolve(pin, sha256=shipped_hash.canonical if shipped_hash else None)
        expected = pin.sha256 or (shipped_hash.canonical if shipped_hash else None)
        replaces = expected is not None and digest.canonical != expected
        allow_local = policy is not None and policy.policy.policy.local_libraries
        if replaces and not (allow_local and not shipped):
            self._refuse_library(name, span, chosen, found, expected or "", policy, shipped)
            return None
        lib = self.load_library(chosen, name, span)
        if lib is not None and pin.version is not None and lib.version != pin.version and not replaces:
            self.diags.add(
                codes.E410,
                f"library `{name}` ({display(chosen)}) is version {lib.version}, but policy "
                f"{policy.ref if policy else ''} pins version {pin.version} with its content",
                span,
                "the policy's pin is inconsistent; fix its [libraries] table",
            )
            return None
        if lib is not None and used is not None:
            found_in = self.library_found(name, chosen, roots, route_dir)
            used.append(LibraryUse(name, lib.version, digest.text, digest.canonical, pin, display(chosen), shipped,
                                   replaces, found_in))
        return lib

    def library_found(self, name: str, chosen: Path, roots: list[Path], route_dir: Path) -> Found:
        """Where the library file ``chosen`` (resolved) was found among ``roots``."""
        if chosen.parent == data_dir("obligations").resolve():
            return Found("shipped", None)
        for root in roots:
            candidate = root / f"{name}.obl"
            if candidate.is_file() and candidate.resolve() == chosen:
                if root == route_dir:
                    return Found("route folder", display(chosen))
                where, config = self.lib_origins.get(root, ("search path", None))
                return Found(where, display(chosen), config)
        return Found("search path", display(chosen))

    def _find_library(self, name: str, span: Span, roots: list[Path]) -> list[Path] | None:
        """Every `<root>/<name>.obl` of ``roots``, resolved, in order, each once; None,
        after PCSC-E408, when one resolves (through a link) outside its root."""
        found: list[Path] = []
        for root in roots:
            candidate = root / f"{name}.obl"
            if not os.path.isfile(candidate):  # False, not OSError, for a name too long
                continue
            real = candidate.resolve()
            if not real.is_relative_to(root.resolve()):
                self.diags.add(
                    codes.E408,
                    f"library `{name}`: {display(candidate)} resolves to {real}, outside its folder {display(root)}",
                    span,
                    "a library is read only from inside the route's folder, --lib-path and the shipped "
                    "obligations/; copy the file there instead of linking to it",
                )
                return None
            if real not in found:
                found.append(real)
        return found

    def admit(self, name: str, span: Span, chosen: Path, policy: LoadedPolicy | None) -> Pin | None:
        """Whether ``policy`` lets its routes use a library called ``name``: it names the
        library under `[libraries.<name>]`, or it names none and PCSC ships one called
        ``name``. Any other name is PCSC-E413, wherever the file sits: the author of a
        route never chooses who judges it. (Without a policy that loads nothing can be
        decided; such a route never compiles.)"""
        if policy is None:  # held to the shipped content of a shipped name, as under a policy that pins nothing
            return Pin("shipped", None, None)
        pins = policy.policy.libraries
        if name in pins:
            return Pin("policy", pins[name].version, pins[name].sha256)
        shipped_names = shipped_libraries()
        if not pins and name in shipped_names:
            return Pin("shipped", None, None)
        admitted = sorted(pins) or shipped_names
        if pins:
            why = f"policy {policy.ref} pins only " + ", ".join(f"`{n}`" for n in admitted)
        else:
            why = f"policy {policy.ref} pins no library, so only those PCSC ships may judge its routes (" + ", ".join(
                f"`{n}`" for n in admitted
            ) + ")"
        digest = self.library_digest(chosen)
        pin_it = f"`[libraries.{name}]` (its `version`" + (
            f' and `sha256 = "{digest.canonical}"`)' if digest is not None and digest.canonical else " and `sha256`)"
        )
        hint = suggest(name, admitted)
        self.diags.add(
            codes.E413,
            f"library `{name}` ({display(chosen)}) is not one the route's policy names: {why}",
            span,
            (f"{hint}; " if hint else "")
            + "the obligations that judge a route belong to its policy: to let this library judge, the policy "
            + f"({policy.path}) must pin it under {pin_it}",
        )
        return None

    def check_pins(self, loaded: LoadedPolicy) -> list[dict[str, object]]:
        """What `pcsc policy check` verifies of each `[libraries.<name>]` of ``loaded``:
        the library a route would resolve the name to, outside the route's own folder
        (--lib-path, then the shipped obligations/), exists and holds the pinned
        content and version, as compiling would demand. Each problem is a diagnostic at
        the pin's line; the result says, per name, what was found."""
        shipped_root = data_dir("obligations").resolve()
        allow_local = loaded.policy.policy.local_libraries
        report: list[dict[str, object]] = []
        for name, pin in sorted(loaded.policy.libraries.items()):
            span = pin_span(self.policies, loaded, name)
            before = len(self.diags)
            found = self._find_library(name, span, [*self.lib_path, data_dir("obligations")])
            path = found[0] if found else None
            digest = self.library_digest(path) if path is not None else None
            lib = None
            if path is None and before == len(self.diags) and not allow_local:
                self.diags.add(
                    codes.E206,
                    f"policy {loaded.ref} pins library `{name}`, but no {name}.obl is on the library path or shipped",
                    span,
                    "put the library on --lib-path (or `lib_path` of pcsc.toml) so that its pin can be checked",
                )
            elif path is not None and (digest is None or digest.canonical is None):
                self.load_library(path, name, span)  # unreadable, or a syntax error: the load says why
            elif path is not None and digest is not None:
                local = allow_local and path.parent != shipped_root
                if pin.sha256 is not None and digest.canonical != pin.sha256 and not local:
                    self.diags.add(
                        codes.E410,
                        f"policy {loaded.ref} pins library `{name}` with sha256 {pin.sha256}, but {display(path)} "
                        f"has sha256 {digest.canonical}",
                        span,
                        f'if {display(path)} is the content the policy should pin, set `sha256 = "{digest.canonical}"` '
                        f"under [libraries.{name}] (in a new version: a published policy never changes)",
                    )
                else:
                    lib = self.load_library(path, name, span)
                    if lib is not None and pin.version is not None and lib.version != pin.version and not local:
                        self.diags.add(
                            codes.E410,
                            f"policy {loaded.ref} pins library `{name}` at version {pin.version}, but "
                            f"{display(path)} declares version {lib.version}",
                            span,
                            "the pin's `version` must be the one the library's `library … version` line states",
                        )
            report.append({
                "name": name,
                "file": None if path is None else display(path),
                "version": None if lib is None else lib.version,
                "canonical_sha256": None if digest is None else digest.canonical,
                "pin": Pin("policy", pin.version, pin.sha256).as_json(),
                "ok": len(self.diags) == before,
            })
        return report

    def library_digest(self, path: Path) -> LibraryHash | None:
        """`library_hash` of a resolved library file, read once per session."""
        if path not in self._digests:
            self._digests[path] = library_hash(path)
        return self._digests[path]

    def _refuse_library(
        self,
        name: str,
        span: Span,
        chosen: Path,
        found: list[Path],
        expected: str,
        policy: LoadedPolicy | None,
        shipped: bool,
    ) -> None:
        """Report a library whose content is not the one the policy pins or ships."""
        pinned = policy is not None and name in policy.policy.libraries
        whose = f"policy {policy.ref} pins" if policy is not None and pinned else "PCSC ships"
        digest = self.library_digest(chosen)
        actual = digest.canonical if digest is not None else None
        repin = (
            f"if the policy should judge with this content, pin it: `[libraries.{name}]` with "
            f'`sha256 = "{actual}"` in {policy.path} (in a new version: a published policy never changes)'
            if policy is not None and actual is not None
            else "fix the policy's [libraries] table"
        )
        if shipped:
            self.diags.add(
                codes.E410,
                f"library `{name}` ({display(chosen)}) has sha256 {actual}, but {whose} {expected}",
                span,
                f"the pin names other content than the shipped library: put the pinned file beside the route or "
                f"on --lib-path; {repin}",
            )
            return
        match = next((p for p in found if (d := self.library_digest(p)) is not None and d.canonical == expected), None)
        other = f"{display(match)}, the library {whose}" if match else f"the library {whose} (sha256 {expected[:12]}…)"
        self.diags.add(
            codes.E409,
            f"library `{name}` in {display(chosen)} would replace {other}: "
            "the obligations that judge a route belong to its policy",
            span,
            f"remove or rename {display(chosen)} (only a policy with `local_libraries = true` under [policy] lets a "
            f"local library replace a pinned or shipped one); {repin}",
        )

    def load_library(self, path: Path, name: str, span: Span) -> Library | None:
        if path in self._libraries:
            return self._libraries[path]
        shown = display(path)
        self._libraries[path] = None
        start = len(self.diags)
        text = self.read(path, shown)
        lib = None
        if text is not None:
            lib = _clean_library(text, shown, self.diags)
        if lib is not None and lib.name != name:
            self.diags.add(codes.E404, f"`{shown}` declares library `{lib.name}`, not `{name}`", span)
            lib = None
        elif lib is None and text is not None:
            self.diags.add(codes.E404, f"library `{name}` ({shown}) has errors", span)
        self._libraries[path] = lib
        self.library_loads[path] = (start, len(self.diags))
        return lib

    def library_is_clean(self, path: Path) -> bool | None:
        """Whether the library at ``path`` loaded without a diagnostic; None if not loaded."""
        if path not in self.library_loads:
            return None
        start, end = self.library_loads[path]
        return self._libraries.get(path) is not None and start == end

    # ------------------------------------------------------------------ routes
    def load_routes(self, path: Path, shown: str | None = None) -> list[Route]:
        shown = shown or str(path)
        text = self.read(path, shown)
        if text is None:
            return []
        digest = sha256_hex(text)
        self.inputs.append((shown, digest))
        if self.ir_cache is not None:
            return self.ir_cache.routes(self, text, digest, shown, path.parent)
        return self.routes_from_text(text, shown, path.parent)

    def load_paths(self, args: list[str]) -> list[Route]:
        """The routes of files and folders (folders recursively, sorted); a folder with
        no .route file is an error."""
        routes: list[Route] = []
        for arg in args:
            for path, shown in self.route_files(arg):
                routes.extend(self.load_routes(path, shown))
        return routes

    def route_files(self, arg: str) -> list[tuple[Path, str]]:
        """The route files an argument names (`expand_inputs`, its errors reported here);
        a folder with none is an error."""
        return expand_inputs([arg], self.diags)

    def routes_from_text(self, text: str, shown: str, route_dir: Path) -> list[Route]:
        """Parse and lower route text that is not (or not only) a file, e.g. a splice;
        libraries resolve from ``route_dir`` as for a file there."""
        self.sources[shown] = text
        with paused_gc():  # parse and lower build objects that all stay alive (pcsc.base.gcpause)
            return self._routes_from_text(text, shown, route_dir)

    def _routes_from_text(self, text: str, shown: str, route_dir: Path) -> list[Route]:
        tree = parse_source(text, shown, self.diags)
        if tree is None:
            return []
        routes = []
        seen: dict[str, int] = {}
        items = tree.items
        if len(items) > MAX_ROUTES:
            self.diags.add(
                codes.E223,
                f"{shown} holds {len(items):,} routes; the limit is {MAX_ROUTES:,}",
                Span.whole_file(shown),
                "split it into several files",
            )
            return []
        if not items:
            self.diags.add(
                codes.E221,
                f"{shown} holds no route",
                Span.whole_file(shown),
                'a route file holds one or more `route NAME "title" { … }` blocks',
            )
        for item in items:
            span = item.span
            if not isinstance(item, syn.RouteBlock):
                self.diags.add(codes.E220, f"`{item.form}` belongs in an .obl library, not a route file", span)
                continue
            name = item.name.text
            if name in seen:
                self.diags.add(
                    codes.E209,
                    f"route `{name}` is defined twice in this file",
                    item.name.span,
                    f"first defined at line {seen[name]}",
                )
                continue
            seen[name] = span.line
            policy, used = self.route_policy(item), list[LibraryUse]()
            route, facts = lower_route_facts(
                item,
                shown,
                text,
                partial(self.resolve_library, route_dir=route_dir, policy=policy, used=used),
                self.diags,
            )
            self.library_uses[(shown, name)] = tuple(used)
            if route is not None:
                routes.append(route)
            else:
                # the route has errors; still report those that need its policy
                self.check_policy(facts)
        return routes

    # ------------------------------------------------------------------ policy binding
    def replay_library_uses(self, route: Route, shown: str, route_dir: Path) -> bool:
        """Resolve the libraries of a route taken from the IR cache as lowering would
        (the policy's pins checked today, the uses recorded for the packet); False, with
        the diagnostics left for the caller to drop, when any resolution complains."""
        policy = self.named_policy(str(route.policy))
        before = len(self.diags)
        used: list[LibraryUse] = []
        for name in route.uses:
            self.resolve_library(name, Span.whole_file(shown), route_dir, policy, used)
        self.library_uses[(shown, route.name)] = tuple(used)
        return len(self.diags) == before

    def route_policy(self, item: syn.RouteBlock) -> LoadedPolicy | None:
        """The policy a route block names, when it loads: its library pins govern how the
        route's `uses` resolve. Errors are left for `check_policy` to report."""
        for statement in item.items:
            if isinstance(statement, syn.PolicyPin):
                return self.named_policy(unquote(statement.ref.text))
        return None

    def named_policy(self, ref: str) -> LoadedPolicy | None:
        """The policy ``ref`` when it is well formed, one the run's requirements allow, and
        loads; else None (`check_policy` reports why)."""
        if split_policy_ref(ref) is None or not all(r.admits(ref) for r in self.required_policies):
            return None
        try:
            return self.policies.load_ref(ref)
        except PolicyError:
            return None

    def bind(self, route: Route) -> LoadedPolicy | None:
        """Load the route's policy and check what depends on it; None on errors."""
        loaded = self.check_policy(PolicyFacts.of(route))
        if loaded is not None:
            self._evidence_notes(route.evidence, route.as_of, loaded)
        return loaded

    def check_route(self, route: Route) -> LoadedPolicy | None:
        """What `pcsc check` checks: everything `compile_route` refuses (the policy
        bound, the route scored: an overflow is PCSC-E311), and each uncovered material
        change as a diagnostic on its transition (PCSC-E501 under gate, PCSC-W501 under
        dock, none when coverage is off)."""
        loaded = self.bind(route)
        if loaded is not None:
            self.score(route, loaded)
            mode, _ = self.mode_for(loaded)
            if mode != "off":
                coverage = discharge_route(route, loaded.policy)
                report_uncovered(route, coverage, mode, self.sources.get(route.file), self.diags)
        return loaded

    def mode_for(self, loaded: LoadedPolicy) -> tuple[Mode, str]:
        """The coverage mode and where it came from: an explicit override (a command-line
        flag, a policy test case's `coverage`, the Python API's argument:
        `coverage_source`), which may set any mode; else the policy's, unless a
        configuration file asks for a more demanding one (a file beside the routes never
        weakens their policy)."""
        if self.coverage_mode is not None:
            return self.coverage_mode, self.coverage_source
        own = loaded.policy.policy.coverage
        if self.config_coverage is not None and lowers(own, self.config_coverage):
            return self.config_coverage, "config"
        return own, "policy"

    def check_policy(self, facts: PolicyFacts) -> LoadedPolicy | None:
        """Load the pinned policy, check the pin, reference classes, criteria and
        point-in-time evidence against it; None when there is no policy or an error."""
        ref = facts.policy
        if ref is None:
            return None
        refused = next((r for r in self.required_policies if not r.admits(str(ref))), None)
        if refused is not None:  # refused before its file is read: the run never consults it
            by = "--require-policy" if refused.source == "command line" else f"`require_policy` in {refused.source}"
            self.diags.add(
                codes.E414,
                f"route names policy {ref}, but this run requires {refused} ({by})",
                ref.span,
                "the policy that judges a route is the maintainer's choice, not the route's: name a required "
                "policy, or ask the maintainer to require this one",
            )
            return None
        before = len(self.diags)
        try:
            loaded = self.policies.load_ref(str(ref))
        except PolicyError as exc:
            unknown = any(m.startswith("no policy") for m in exc.messages)
            for message in exc.messages:
                self.diags.add(
                    codes.E401 if unknown else codes.E408 if isinstance(exc, OutsideRoots) else codes.E403,
                    message if unknown else f"{exc.path}: {message}",
                    ref.span,
                    policy_help(str(ref), self.policies.available()) if unknown else None,
                )
            return None
        if ref.sha256 is not None and ref.sha256 != loaded.sha256:
            self.diags.add(
                codes.E402,
                f"policy {ref} has sha256 {loaded.sha256}, but the route pins {ref.sha256}",
                ref.span,
                "the policy changed since the route was pinned; review it, then update the pin",
            )
        policy = loaded.policy
        for ref_class, class_span in facts.classes:
            if ref_class not in policy.priors:
                self.diags.add(
                    codes.E207,
                    f'unknown reference class "{ref_class}" in policy {ref}',
                    class_span,
                    suggest(ref_class, policy.priors),
                )
        for c in facts.criteria:
            if c.name not in policy.criteria:
                self.diags.add(
                    codes.E208,
                    f"unknown criterion `{c.name}` in policy {ref}",
                    c.span,
                    suggest(c.name, policy.criteria)
                    or "the policy weighs " + ", ".join(f"`{k}`" for k in policy.criteria),
                )
        for e in facts.evidence:
            if e.captured is not None and facts.as_of is not None and e.captured > facts.as_of:
                if policy.evidence.strict_point_in_time:
                    self.diags.add(
                        codes.E310,
                        f"evidence `{e.name}` was captured {e.captured}, after as_of {facts.as_of}",
                        e.captured_span or e.span,
                        "the policy is strict about point-in-time evidence",
                    )
                else:
                    self.diags.add(
                        codes.W601,
                        f"evidence `{e.name}` was captured {e.captured}, after as_of "
                        f"{facts.as_of}: it is inadmissible and excluded",
                        e.captured_span or e.span,
                    )
            if e.tier < policy.evidence.min_tier:
                self.diags.add(
                    codes.W605,
                    f"evidence `{e.name}` is tier {e.tier}, below the policy's minimum "
                    f"tier {policy.evidence.min_tier}: excluded",
                    e.tier_span or e.span,
                )
            elif str(e.tier) not in policy.evidence.tier_weight:
                self.diags.add(
                    codes.E307,
                    f"evidence `{e.name}` is tier {e.tier}, which policy {ref} gives no weight",
                    e.tier_span or e.span,
                    "tiers with weights: " + ", ".join(sorted(policy.evidence.tier_weight)),
                )
        if any(d.severity == "error" for d in self.diags.items[before:]):
            return None
        return loaded

    def _evidence_notes(self, evidence: tuple[Evidence, ...], as_of: dt.date, loaded: LoadedPolicy) -> None:
        """An unverified item is excluded with a note, not silently; an item that repeats
        another's source or excerpt counts once, and the warning names both."""
        from pcsc.score.evidence import exclusions

        excluded = exclusions(evidence, as_of, loaded.policy)
        for e in evidence:
            why = excluded.get(e.name)
            if why is None:
                continue
            if why.kind == "unverified":
                self.diags.add(codes.W608, f"evidence `{e.name}` is marked unverified: it is excluded from W", e.span)
            elif why.kind == "duplicate":
                self.diags.add(
                    codes.W607,
                    f"evidence `{e.name}` has the {why.reason.split(':')[0]}: the two count once "
                    f"(`{e.name}` is excluded, `{why.duplicate_of}` counts)",
                    e.span,
                )

    def for_variants_of(self, route: Route) -> Session:
        """A child session for edited copies of ``route`` (splices, red-team edits): same
        policies and coverage mode, and the folders of the libraries the route actually
        used searched first, so an edit binds the same obligations even when the route
        was shown under a name that is not a path."""
        used = {Path(f.span.file).parent for f in route.fields} | {Path(o.span.file).parent for o in route.obligations}
        lib_path = [*sorted(used), *(p for p in self.lib_path if p not in used)]
        return Session(
            lib_path=lib_path,
            policies=self.policies,
            coverage_mode=self.coverage_mode,
            coverage_source=self.coverage_source,
            config_coverage=self.config_coverage,
            required_policies=self.required_policies,
            lib_origins={**{p: ("route folder", None) for p in used}, **self.lib_origins},
        )

    def score(self, route: Route, loaded: LoadedPolicy) -> RouteNumbers | None:
        """Every number of ``route`` under ``loaded``; None when scoring reported an
        error, or a number overflowed (PCSC-E311: nothing is released)."""
        before = len(self.diags)
        try:
            numbers = score_route(route, loaded.policy, self.diags)
            docked_score(numbers)  # DOCK's score, which GATE and DOCK reports show, must be finite too
        except NotFinite as exc:
            self.diags.add(codes.E311, f"route `{route.name}`: {exc.message}", exc.span or route.span, OVERFLOW_HELP)
            return None
        if any(d.severity == "error" for d in self.diags.items[before:]):
            return None
        return numbers

    def compile_routes(self, routes: list[Route]) -> list[Compiled]:
        """Every route that compiles without errors, in order (the others left diagnostics)."""
        return [c for c in (self.compile_route(r) for r in routes) if c is not None]

    def compile_route(self, route: Route) -> Compiled | None:
        loaded = self.bind(route)
        if loaded is None:
            return None
        numbers = self.score(route, loaded)
        if numbers is None:
            return None
        mode, source = self.mode_for(loaded)
        coverage = None if mode == "off" else discharge_route(route, loaded.policy)
        docked = None
        if coverage is not None and not coverage.complete and mode == "dock":
            docked = docked_score(numbers)
        decision = decide(coverage, mode, source, numbers.score, docked)
        uses = self.library_uses.get((route.file, route.name), ())
        return Compiled(route, loaded, numbers, coverage, decision, uses)


@cache
def shipped_libraries() -> list[str]:
    """The names of the libraries PCSC ships, sorted."""
    return sorted(p.stem for p in data_dir("obligations").glob("*.obl"))


def pin_span(store: PolicyStore, loaded: LoadedPolicy, name: str) -> Span:
    """Where ``loaded`` (or the policy it extends, when the pin is inherited) pins the
    library ``name``: the line of its `sha256`, else of its `[libraries.<name>]` header,
    else the policy file."""
    header = re.compile(rf'^\s*\[\s*libraries\s*\.\s*(?:{re.escape(name)}|"{re.escape(name)}")\s*\]')
    current: LoadedPolicy | None = loaded
    seen: set[str] = set()
    while current is not None and current.ref not in seen:
        seen.add(current.ref)
        try:
            lines = files.read_text(current.path).splitlines()
        except files.Unreadable:
            break
        start = next((i for i, line in enumerate(lines) if header.match(line)), None)
        if start is not None:
            for i in range(start + 1, len(lines)):
                if lines[i].lstrip().startswith("["):
                    break
                if re.match(r"\s*sha256\s*=", lines[i]):
                    return Span.file_only(current.path, i + 1)
            return Span.file_only(current.path, start + 1)
        parent = current.policy.policy.extends
        try:
            current = store.load_ref(parent) if parent else None
        except PolicyError:
            current = None
    return Span.file_only(loaded.path)


OVERFLOW_HELP = "the route's or the policy's numbers are too large to score; no score is released"


# Libraries that lowered without a diagnostic, by (shown name, sha256 of the text), for
# every session of the process: a library is a pure function of its text and name, and
# frozen, so sessions share it (a fresh session per compile parses `venture.obl` once).
_CLEAN_LIBRARIES: dict[tuple[str, str], Library] = {}


def _clean_library(text: str, shown: str, diags: Diagnostics) -> Library | None:
    key = (shown, sha256_hex(text))
    cached = _CLEAN_LIBRARIES.get(key)
    if cached is not None:
        return cached
    before = len(diags)
    lib = None
    tree = parse_source(text, shown, diags)
    if tree is not None:
        lib = lower_library(tree, shown, text, diags)
    if lib is not None and len(diags) == before and len(_CLEAN_LIBRARIES) < 256:
        _CLEAN_LIBRARIES[key] = lib
    return lib


def docked_score(numbers: RouteNumbers) -> float:
    """R_0 with the value over the uncovered path removed (R_n = 0), as DOCK releases it
    (by the policy's fold: discounted, and with the option to stop, as the score was)."""
    ps, cs = [t.p for t in numbers.transitions], [t.cost.c for t in numbers.transitions]
    shape = numbers.route.shape
    if shape is not None:  # a graph route: the series-parallel fold with V = 0
        from pcsc.score.graph import graph_fold

        ts = numbers.transitions
        return graph_fold(shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts], ps, cs,
                          [t.d for t in ts], 0.0, numbers.fold.abandonment).score
    if numbers.fold.is_default:
        return fold(ps, cs, 0.0)[0]
    return fold_policy(ps, cs, [t.d for t in numbers.transitions], 0.0, numbers.fold.abandonment)[0]


def gate_and_dock(c: Compiled, source: str) -> tuple[Decision, Decision, Coverage]:
    """What GATE and DOCK would each release for a compiled route, whatever mode it was
    compiled under (coverage is discharged here when it was off)."""
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    docked = docked_score(c.numbers)
    gate = decide(coverage, "gate", source, c.numbers.score, docked)
    dock = decide(coverage, "dock", source, c.numbers.score, docked)
    return gate, dock, coverage


def expand_inputs(
    args: Sequence[str], diags: Diagnostics, suffixes: Sequence[str] = (".route",)
) -> list[tuple[Path, str]]:
    """Files as given; folders expand to their files with ``suffixes``, recursively,
    sorted, never leaving the folder (`pcsc.compiler.walk`: a link that leads out of it is an
    error in ``diags``, and is not read); a folder with none of them is an error."""
    out: list[tuple[Path, str]] = []
    for arg in args:
        p = Path(arg)
        if os.path.isdir(p):  # False, not OSError, for a name too long: reading it says why
            found, refused = folder_files(p, suffixes)
            diags.items.extend(refused)
            if not found and not refused:
                kinds = " or ".join(suffixes)
                diags.add(codes.E106, f"no {kinds} files in the folder {arg}", Span.file_only(arg),
                          "route files end in .route" + (", libraries in .obl" if ".obl" in suffixes else "")
                          + "; folders are searched recursively")
            out.extend((f, str(f)) for f in found)
        else:
            out.append((p, arg))
    return out


def coverage_mode(c: Compiled) -> dict[str, str]:
    """The mode a route was decided under, where it came from, and the policy's own."""
    d = c.decision
    return {"mode": d.mode, "mode_source": d.mode_source, "policy_mode": c.policy.policy.policy.coverage}
