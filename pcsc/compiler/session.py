"""The compiler pipeline, as explicit tuples of named passes:

    FILE_PASSES, per text:     parse -> lower (IR, libraries resolved)
    COMPILE_PASSES, per route: bind policy (pin, classes, criteria, point-in-time)
                               -> score (docs/formulas.md; DOCK's score too)
                               -> discharge (coverage) -> decide (what is released)
    CHECK_PASSES:              COMPILE_PASSES, then report uncovered changes as diagnostics

Every front end runs these: `pcsc compile` and the commands built on it
(`compile_route`), `pcsc check`, the API's `check` and the language server
(`check_route`), and the analyses that recompile edited routes. A pass reads what the
passes before it left on the unit (`SourceUnit`, `RouteUnit`) and adds its own.

A `Session` owns the diagnostics and the source texts of one run, and caches parsed
libraries and loaded policies so that a cohort parses each only once.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, TextIO, TypeVar

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
from pcsc.diagnostics.files import unreadable
from pcsc.diagnostics.messages import (
    E106_NO_FILES,
    E206_NAME_TOO_LONG,
    E206_NOT_A_NAME,
    E206_PINNED_NOT_FOUND,
    E206_UNKNOWN_LIBRARY,
    E207_UNKNOWN_CLASS,
    E208_UNKNOWN_CRITERION,
    E209_ROUTE_TWICE,
    E220_LIBRARY_ITEM_IN_ROUTE_FILE,
    E221_NO_ROUTE,
    E223_TOO_MANY_ROUTES,
    E301_NOT_USD,
    E307_TIER_WITHOUT_WEIGHT,
    E310_LATE_EVIDENCE,
    E311_IN_ROUTE,
    E401_UNKNOWN_POLICY,
    E402_PIN_MISMATCH,
    E403_MALFORMED_POLICY,
    E404_DECLARES_ANOTHER,
    E404_HAS_ERRORS,
    E408_LIBRARY_OUTSIDE,
    E408_POLICY_OUTSIDE,
    E409_REPLACES,
    E410_NOT_SHIPPED_CONTENT,
    E410_PINNED_SHA,
    E410_PINNED_VERSION,
    E410_VERSION_AGAINST_PIN,
    E413_NOT_NAMED,
    E414_NOT_REQUIRED,
    E415_VISION_VALUE,
    E419_NO_PAYOFFS,
    W601_LATE_EVIDENCE,
    W605_BELOW_MINIMUM_TIER,
    W607_DUPLICATE,
    W608_UNVERIFIED,
)
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.fmt import canonical_library
from pcsc.lang.ir import Evidence, Library, Route
from pcsc.lang.ir.names import MAX_NAME, is_name, split_policy_ref, split_requirement
from pcsc.lang.lower.common import policy_help, suggest
from pcsc.lang.lower.expr import unquote
from pcsc.lang.lower.library import lower_library
from pcsc.lang.lower.route import PolicyFacts, lower_route_facts
from pcsc.lang.lower.vision import check_vision
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax import parse_source
from pcsc.lang.syntax.limits import MAX_ROUTES
from pcsc.policy.load import OutsideRoots, PolicyError, PolicyStore, located_policy_problem
from pcsc.policy.model import Found, FoundIn, LoadedPolicy, Policy
from pcsc.score.finite import NotFinite
from pcsc.score.route import RouteNumbers, docked_score, score_route
from pcsc.score.units import check_amount_units
from pcsc.score.vision import VisionValueError


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
    """A route through every pass of `COMPILE_PASSES` without an error."""

    route: Route
    policy: LoadedPolicy
    numbers: RouteNumbers
    docked: float  # DOCK's score: R_0 with no value past the uncovered path (`docked_score`)
    coverage: Coverage | None  # None when coverage is off
    decision: Decision
    libraries: tuple[LibraryUse, ...] = ()


@attrs.define
class SourceUnit:
    """One text on its way through `FILE_PASSES`: parsed into ``tree``, lowered into
    ``routes`` (the routes with errors left diagnostics instead)."""

    text: str
    shown: str
    route_dir: Path  # the folder its libraries resolve from first
    tree: syn.SourceFile | None = None
    routes: list[Route] = attrs.field(factory=list)


@attrs.define
class RouteUnit:
    """One lowered route on its way through the route passes. Each field is set by the
    pass its comment names; a pass whose input an earlier pass could not give (it
    reported why) leaves its own unset."""

    route: Route
    policy: LoadedPolicy | None = None  # bind policy
    numbers: RouteNumbers | None = None  # score
    docked: float | None = None  # score: DOCK's score
    mode: Mode | None = None  # discharge: the coverage mode, and who set it
    mode_source: str = ""
    coverage: Coverage | None = None  # discharge; None when the mode is off
    decision: Decision | None = None  # decide

    def compiled(self, libraries: tuple[LibraryUse, ...]) -> Compiled | None:
        """The route compiled, when every pass gave its part."""
        if self.policy is None or self.numbers is None or self.docked is None or self.decision is None:
            return None
        return Compiled(self.route, self.policy, self.numbers, self.docked, self.coverage, self.decision, libraries)


Unit = TypeVar("Unit", SourceUnit, RouteUnit)


@attrs.frozen
class Pass(Generic[Unit]):
    """A named stage of the pipeline: ``run`` reads the unit and adds its part (a
    `Session` subclass overrides the steps a pass calls, such as `Session.bind`)."""

    name: str
    run: Callable[[Session, Unit], None]


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
        from pcsc.compiler.ircache import library_canonical

        def compute() -> str | None:
            canonical = canonical_library(text)
            return None if canonical is None else sha256_hex(canonical)

        if len(_CANONICAL_SHA256) >= 1024:
            _CANONICAL_SHA256.clear()
        _CANONICAL_SHA256[digest] = library_canonical(digest, compute)
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
    # where each library name resolved from a list of folders (`_find_library`), and each folder resolved
    _found: dict[tuple[str, tuple[Path, ...]], tuple[Path, ...]] = attrs.field(factory=dict)
    _roots: dict[Path, Path] = attrs.field(factory=dict)

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
        shipped_root = _shipped_root()
        roots = self.library_roots(route_dir)
        if len(name) > MAX_NAME:
            self.diags.diag(E206_NAME_TOO_LONG, span, start=name[:40], length=len(name), limit=MAX_NAME)
            return None
        if not is_name(name):
            self.diags.diag(E206_NOT_A_NAME, span, name=name, lower=name.lower())
            return None
        found = self._find_library(name, span, roots)
        if found is None:
            return None
        if not found:
            self.resolutions.append((name, None))
            known = sorted({p.stem for r in roots if os.path.isdir(r) for p in r.glob("*.obl")})
            self.diags.diag(E206_UNKNOWN_LIBRARY, span, name=name, suggestion=suggest(name, known))
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
            self.diags.diag(
                E410_VERSION_AGAINST_PIN,
                span,
                name=name,
                file=display(chosen),
                version=lib.version,
                policy=policy.ref if policy else "",
                pinned=pin.version,
            )
            return None
        if lib is not None and used is not None:
            found_in = self.library_found(name, chosen, roots, route_dir)
            used.append(LibraryUse(name, lib.version, digest.text, digest.canonical, pin, display(chosen), shipped,
                                   replaces, found_in))
        return lib

    def library_found(self, name: str, chosen: Path, roots: list[Path], route_dir: Path) -> Found:
        """Where the library file ``chosen`` (resolved) was found among ``roots``."""
        if chosen.parent == _shipped_root():
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
        key = (name, tuple(roots))
        if key in self._found:  # the same folders asked again in this session: the same answer
            return list(self._found[key])
        found: list[Path] = []
        for root in roots:
            candidate = root / f"{name}.obl"
            if not os.path.isfile(candidate):  # False, not OSError, for a name too long
                continue
            real = candidate.resolve()
            if not real.is_relative_to(self._resolved(root)):
                self.diags.diag(
                    E408_LIBRARY_OUTSIDE, span, name=name, file=display(candidate), real=real, folder=display(root)
                )
                return None
            if real not in found:
                found.append(real)
        self._found[key] = tuple(found)
        return found

    def _resolved(self, root: Path) -> Path:
        """``root`` resolved, once per session."""
        if root not in self._roots:
            self._roots[root] = root.resolve()
        return self._roots[root]

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
        self.diags.diag(
            E413_NOT_NAMED,
            span,
            name=name,
            file=display(chosen),
            why=why,
            suggestion=suggest(name, admitted),
            policy=policy.path,
            pin_it=pin_it,
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
                self.diags.diag(E206_PINNED_NOT_FOUND, span, policy=loaded.ref, name=name)
            elif path is not None and (digest is None or digest.canonical is None):
                self.load_library(path, name, span)  # unreadable, or a syntax error: the load says why
            elif path is not None and digest is not None:
                local = allow_local and path.parent != shipped_root
                if pin.sha256 is not None and digest.canonical != pin.sha256 and not local:
                    self.diags.diag(
                        E410_PINNED_SHA,
                        span,
                        policy=loaded.ref,
                        name=name,
                        pinned=pin.sha256,
                        file=display(path),
                        actual=digest.canonical,
                    )
                else:
                    lib = self.load_library(path, name, span)
                    if lib is not None and pin.version is not None and lib.version != pin.version and not local:
                        self.diags.diag(
                            E410_PINNED_VERSION,
                            span,
                            policy=loaded.ref,
                            name=name,
                            pinned=pin.version,
                            file=display(path),
                            version=lib.version,
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
            self.diags.diag(
                E410_NOT_SHIPPED_CONTENT,
                span,
                name=name,
                file=display(chosen),
                actual=actual,
                whose=whose,
                expected=expected,
                repin=repin,
            )
            return
        match = next((p for p in found if (d := self.library_digest(p)) is not None and d.canonical == expected), None)
        other = f"{display(match)}, the library {whose}" if match else f"the library {whose} (sha256 {expected[:12]}…)"
        self.diags.diag(E409_REPLACES, span, name=name, file=display(chosen), other=other, repin=repin)

    def load_library(self, path: Path, name: str, span: Span) -> Library | None:
        if path in self._libraries:
            return self._libraries[path]
        shown = display(path)
        self._libraries[path] = None
        start = len(self.diags)
        text = self.read(path, shown)
        lib = None
        if text is not None:
            lib = library_from_text(text, shown, self.diags)
        if lib is not None and lib.name != name:
            self.diags.diag(E404_DECLARES_ANOTHER, span, file=shown, declared=lib.name, name=name)
            lib = None
        elif lib is None and text is not None:
            self.diags.diag(E404_HAS_ERRORS, span, name=name, file=shown)
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

    def check_library_file(self, path: Path, shown: str | None = None) -> Library | None:
        """Read the `.obl` file at ``path`` and check it as a library (`library_from_text`),
        its problems in this session's diagnostics; None when it cannot be read or has errors."""
        shown = shown or str(path)
        text = self.read(path, shown)
        if text is None:
            return None
        self.inputs.append((shown, sha256_hex(text)))
        return library_from_text(text, shown, self.diags)

    def load_files(
        self, files: Sequence[tuple[Path, str]], *, bind: bool = False, keep_routes: bool = True,
        done: Callable[[int], None] | None = None,
    ) -> tuple[list[Route], int]:
        """The routes of ``files`` (path, shown), one after the other in this session,
        and how many were lowered; ``bind`` checks each route (`check_route`) as soon as
        its file is lowered. ``keep_routes=False`` keeps no route, and no text of a file
        that no diagnostic points into (a cohort's texts are most of its memory; only
        diagnostics show source lines). ``done`` is called with 1 after each file."""
        routes: list[Route] = []
        count = 0
        for path, shown in files:
            since = len(self.diags)
            got = self.load_routes(path, shown)
            if bind:
                for route in got:
                    self.check_route(route)
            count += len(got)
            if keep_routes:
                routes.extend(got)
            elif not any(d.span.file == shown for d in self.diags.items[since:]):
                self.sources.pop(shown, None)
            if done is not None:
                done(1)
        return routes, count

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
        """Run `FILE_PASSES` on route text that is a file's, or not (a splice, an editor's
        document); libraries resolve from ``route_dir`` as for a file there."""
        self.sources[shown] = text
        unit = SourceUnit(text, shown, route_dir)
        with paused_gc():  # parse and lower build objects that all stay alive (pcsc.base.gcpause)
            for stage in FILE_PASSES:
                stage.run(self, unit)
        return unit.routes

    def parse(self, unit: SourceUnit) -> None:
        """The parse pass: the text's syntax tree, or syntax errors."""
        unit.tree = parse_source(unit.text, unit.shown, self.diags)

    def lower(self, unit: SourceUnit) -> None:
        """The lower pass: each route block of the tree as IR, its libraries resolved under
        the policy it names; a route with errors still has its policy checked."""
        tree, text, shown, route_dir = unit.tree, unit.text, unit.shown, unit.route_dir
        if tree is None:
            return
        routes = unit.routes
        seen: dict[str, int] = {}
        items = tree.items
        if len(items) > MAX_ROUTES:
            self.diags.diag(
                E223_TOO_MANY_ROUTES, Span.whole_file(shown), file=shown, count=len(items), limit=MAX_ROUTES
            )
            return
        if not items:
            self.diags.diag(E221_NO_ROUTE, Span.whole_file(shown), file=shown)
        for item in items:
            span = item.span
            if not isinstance(item, syn.RouteBlock):
                self.diags.diag(E220_LIBRARY_ITEM_IN_ROUTE_FILE, span, form=item.form)
                continue
            name = item.name.text
            if name in seen:
                self.diags.diag(E209_ROUTE_TWICE, item.name.span, name=name, line=seen[name])
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
        if loaded is not None and not check_amount_units(route, loaded.policy, self.diags):
            return None
        if loaded is not None:
            self._evidence_notes(route.evidence, route.as_of, loaded)
        return loaded

    # ------------------------------------------------------------------ the route passes
    def compile_routes(self, routes: list[Route]) -> list[Compiled]:
        """Every route that compiles without errors, in order (the others left diagnostics)."""
        return [c for c in (self.compile_route(r) for r in routes) if c is not None]

    def compile_route(self, route: Route) -> Compiled | None:
        """``route`` through `COMPILE_PASSES`; None when a pass reported an error."""
        unit = self.run_passes(route, COMPILE_PASSES)
        return unit.compiled(self.library_uses.get((route.file, route.name), ()))

    def check_route(self, route: Route) -> RouteUnit:
        """What `pcsc check` checks (`CHECK_PASSES`): everything `compile_route` refuses,
        and each uncovered material change as a diagnostic on its transition (PCSC-E501
        under gate, PCSC-W501 under dock, none when coverage is off)."""
        return self.run_passes(route, CHECK_PASSES)

    def run_passes(self, route: Route, passes: Sequence[Pass[RouteUnit]]) -> RouteUnit:
        unit = RouteUnit(route)
        for stage in passes:
            stage.run(self, unit)
        return unit

    def bind_policy(self, unit: RouteUnit) -> None:
        """The bind pass: the route's policy (`bind`)."""
        unit.policy = self.bind(unit.route)

    def score(self, unit: RouteUnit) -> None:
        """The score pass: every number of the route under its policy, and DOCK's score
        (`score_checked`)."""
        if unit.policy is None:
            return
        scored = score_checked(unit.route, unit.policy.policy, self.diags)
        if scored is not None:
            unit.numbers, unit.docked = scored

    def discharge(self, unit: RouteUnit) -> None:
        """The discharge pass: the coverage mode (`mode_for`) and, unless it is off, which
        material changes the route's obligations cover. It needs the policy, not the
        numbers: `pcsc check` reports uncovered changes of a route whose score failed."""
        if unit.policy is None:
            return
        unit.mode, unit.mode_source = self.mode_for(unit.policy)
        if unit.mode != "off":
            unit.coverage = discharge_route(unit.route, unit.policy.policy)

    def decide(self, unit: RouteUnit) -> None:
        """The decide pass: the score the mode releases (`pcsc.coverage.decide`)."""
        if unit.numbers is None or unit.docked is None or unit.mode is None:
            return
        unit.decision = decide(unit.coverage, unit.mode, unit.mode_source, unit.numbers.score, unit.docked)

    def report(self, unit: RouteUnit) -> None:
        """`pcsc check`'s last pass: each uncovered material change as a diagnostic."""
        if unit.coverage is not None and unit.mode is not None:
            report_uncovered(unit.route, unit.coverage, unit.mode, self.sources.get(unit.route.file), self.diags,
                             unit.policy.policy if unit.policy is not None else None)

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
            self.diags.diag(E414_NOT_REQUIRED, ref.span, ref=ref, required=refused, by=by)
            return None
        before = len(self.diags)
        try:
            loaded = self.policies.load_ref(str(ref))
        except PolicyError as exc:
            unknown = any(m.startswith("no policy") for m in exc.messages)
            for problem in exc.messages:
                if unknown:
                    hint = policy_help(str(ref), self.policies.available())
                    self.diags.diag(E401_UNKNOWN_POLICY, ref.span, problem=problem, hint=hint)
                elif isinstance(exc, OutsideRoots):
                    self.diags.diag(E408_POLICY_OUTSIDE, ref.span, path=exc.path, problem=problem)
                elif problem in exc.located:
                    self.diags.items.append(located_policy_problem(exc, problem))
                else:
                    self.diags.diag(E403_MALFORMED_POLICY, ref.span, path=exc.path, problem=problem)
            return None
        if ref.sha256 is not None and ref.sha256 != loaded.sha256:
            self.diags.diag(E402_PIN_MISMATCH, ref.span, policy=ref, actual=loaded.sha256, pinned=ref.sha256)
        policy = loaded.policy
        for ref_class, class_span in facts.classes:
            if ref_class not in policy.priors:
                self.diags.diag(
                    E207_UNKNOWN_CLASS,
                    class_span,
                    ref_class=ref_class,
                    policy=ref,
                    suggestion=suggest(ref_class, policy.priors),
                )
        if policy.payoffs is None:
            for state, payoff_span in facts.payoffs:
                self.diags.diag(E419_NO_PAYOFFS, payoff_span, state=state, policy=ref)
        elif policy.units.fold == "usd":  # `payoff 300` is in the fold's unit, which a fold in usd must name
            for state, amount in facts.fold_payoffs:
                self.diags.diag(E301_NOT_USD, amount, what=f"the payoff of state `{state}`", value="a plain number")
        for c in facts.criteria:
            if c.name not in policy.criteria:
                self.diags.diag(
                    E208_UNKNOWN_CRITERION,
                    c.span,
                    criterion=c.name,
                    policy=ref,
                    suggestion=suggest(c.name, policy.criteria),
                    weighed=", ".join(f"`{k}`" for k in policy.criteria),
                )
        for e in facts.evidence:
            if e.captured is not None and facts.as_of is not None and e.captured > facts.as_of:
                if policy.evidence.strict_point_in_time:
                    self.diags.diag(
                        E310_LATE_EVIDENCE,
                        e.captured_span or e.span,
                        evidence=e.name,
                        captured=e.captured,
                        as_of=facts.as_of,
                    )
                else:
                    self.diags.diag(
                        W601_LATE_EVIDENCE,
                        e.captured_span or e.span,
                        evidence=e.name,
                        captured=e.captured,
                        as_of=facts.as_of,
                    )
            if e.tier < policy.evidence.min_tier:
                self.diags.diag(
                    W605_BELOW_MINIMUM_TIER,
                    e.tier_span or e.span,
                    evidence=e.name,
                    tier=e.tier,
                    minimum=policy.evidence.min_tier,
                )
            elif str(e.tier) not in policy.evidence.tier_weight:
                self.diags.diag(
                    E307_TIER_WITHOUT_WEIGHT,
                    e.tier_span or e.span,
                    evidence=e.name,
                    tier=e.tier,
                    policy=ref,
                    tiers=", ".join(sorted(policy.evidence.tier_weight)),
                )
        if facts.vision is not None:
            check_vision(facts.vision, policy.vision.fields, self.diags)
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
                self.diags.diag(W608_UNVERIFIED, e.span, evidence=e.name)
            elif why.kind == "duplicate":
                self.diags.diag(
                    W607_DUPLICATE, e.span, evidence=e.name, what=why.reason.split(":")[0], counted=why.duplicate_of
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


@cache
def _shipped_root() -> Path:
    """The shipped obligations/ folder, resolved (once per process)."""
    return data_dir("obligations").resolve()


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


def score_checked(route: Route, policy: Policy, diags: Diagnostics) -> tuple[RouteNumbers, float] | None:
    """The score pass's step, for any policy: every number of ``route`` (`score_route`)
    and DOCK's score (`docked_score`, which GATE and DOCK reports show, so it must be
    finite too); None when scoring reported an error in ``diags``, or a number
    overflowed (PCSC-E311: nothing is released)."""
    before = len(diags)
    try:
        numbers = score_route(route, policy, diags)
        if numbers.payoffs is None:
            docked = docked_score(numbers)
        else:  # DOCK credits a payoff only over a covered path
            docked = docked_score(numbers, discharge_route(route, policy).uncovered_transitions)
    except VisionValueError as exc:
        where = f"{policy.id}@{policy.version} line {exc.line}" if exc.line else f"{policy.id}@{policy.version}"
        values = ", ".join(f"{k} = {v:g}" for k, v in exc.inputs.items())
        diags.diag(E415_VISION_VALUE, exc.span or route.span, problem=exc.problem, formula=exc.formula,
                   where=where, values=values)
        return None
    except NotFinite as exc:
        diags.diag(E311_IN_ROUTE, exc.span or route.span, route=route.name, overflow=exc.message)
        return None
    if any(d.severity == "error" for d in diags.items[before:]):
        return None
    return numbers, docked


# Libraries that lowered without a diagnostic, by (shown name, sha256 of the text), for
# every session of the process: a library is a pure function of its text and name, and
# frozen, so sessions share it (a fresh session per compile parses `venture.obl` once).
_CLEAN_LIBRARIES: dict[tuple[str, str], Library] = {}


def library_from_text(text: str, shown: str, diags: Diagnostics) -> Library | None:
    """The library in ``text`` (the file ``shown``), parsed and lowered as a library
    (never as a route), its problems in ``diags``; None when it has errors. The one check
    of a library: a route's `uses`, `pcsc check` on an `.obl` file and the language server
    on an open one all run it."""
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


def gate_and_dock(c: Compiled, source: str) -> tuple[Decision, Decision, Coverage]:
    """What GATE and DOCK would each release for a compiled route, whatever mode it was
    compiled under (coverage is discharged here when it was off)."""
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    gate = decide(coverage, "gate", source, c.numbers.score, c.docked)
    dock = decide(coverage, "dock", source, c.numbers.score, c.docked)
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
                libraries = ", libraries in .obl" if ".obl" in suffixes else ""
                diags.diag(E106_NO_FILES, Span.file_only(arg), kinds=kinds, folder=arg, libraries=libraries)
            out.extend((f, str(f)) for f in found)
        else:
            out.append((p, arg))
    return out


def coverage_mode(c: Compiled) -> dict[str, str]:
    """The mode a route was decided under, where it came from, and the policy's own."""
    d = c.decision
    return {"mode": d.mode, "mode_source": d.mode_source, "policy_mode": c.policy.policy.policy.coverage}


#: The passes from a text to its routes (`Session.routes_from_text`); the IR cache
#: (`pcsc.compiler.ircache`) stands in for both when the text is unchanged.
FILE_PASSES: tuple[Pass[SourceUnit], ...] = (
    Pass("parse", Session.parse),
    Pass("lower", Session.lower),
)
#: The passes from a lowered route to what is released (`Session.compile_route`).
COMPILE_PASSES: tuple[Pass[RouteUnit], ...] = (
    Pass("bind policy", Session.bind_policy),
    Pass("score", Session.score),
    Pass("discharge", Session.discharge),
    Pass("decide", Session.decide),
)
#: `pcsc check`, the API's `check` and the language server (`Session.check_route`): the
#: same passes, then the uncovered changes reported.
CHECK_PASSES: tuple[Pass[RouteUnit], ...] = (*COMPILE_PASSES, Pass("report uncovered", Session.report))
