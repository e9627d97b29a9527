"""The compiler pipeline, as one explicit sequence:

    read -> parse -> lower (IR) -> bind policy (pin, classes, criteria, point-in-time)
         -> score (DESIGN §5)

A `Session` owns the diagnostics and the source texts of one run, and caches parsed
libraries and loaded policies so that a cohort parses each only once.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import attrs

from pcsc.canonical import sha256_hex
from pcsc.coverage import Coverage, Decision, decide, discharge_route
from pcsc.coverage.verdict import Mode
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.ir import Evidence, Library, Route
from pcsc.lower.common import suggest
from pcsc.lower.library import lower_library
from pcsc.lower.route import PolicyFacts, lower_route_facts
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.policy.model import LoadedPolicy
from pcsc.resources import data_dir
from pcsc.resources import display_path as display
from pcsc.score.route import RouteNumbers, fold, score_route
from pcsc.syntax import nodes as syn
from pcsc.syntax import parse_source


@attrs.frozen
class Compiled:
    route: Route
    policy: LoadedPolicy
    numbers: RouteNumbers
    coverage: Coverage | None  # None when coverage is off
    decision: Decision


@attrs.define
class Session:
    lib_path: list[Path] = attrs.field(factory=list)
    policies: PolicyStore = attrs.field(factory=PolicyStore)
    diags: Diagnostics = attrs.field(factory=Diagnostics)
    sources: dict[str, str] = attrs.field(factory=dict)
    inputs: list[tuple[str, str]] = attrs.field(factory=list)  # (path, sha256)
    coverage_mode: Mode | None = None  # a command-line override of the policy's mode
    _libraries: dict[Path, Library | None] = attrs.field(factory=dict)

    # ------------------------------------------------------------------ reading
    def read(self, path: Path, shown: str) -> str | None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.diags.add(codes.E105, f"cannot read {shown}: {exc.strerror or exc}", Span.whole_file(shown))
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            column = exc.start - data.rfind(b"\n", 0, exc.start)
            self.diags.add(
                codes.E105,
                f"{shown} is not UTF-8 text: byte 0x{data[exc.start]:02X} cannot be decoded",
                Span(shown, line, column, line, column + 1),
                "save the file as UTF-8",
            )
            return None
        self.sources[shown] = text
        return text

    # ------------------------------------------------------------------ libraries
    def library_roots(self, route_dir: Path) -> list[Path]:
        """The route's own folder, then --lib-path entries, then the shipped obligations/."""
        return [route_dir, *self.lib_path, data_dir("obligations")]

    def resolve_library(self, name: str, span: Span, route_dir: Path) -> Library | None:
        roots = self.library_roots(route_dir)
        for root in roots:
            candidate = (root / f"{name}.obl").resolve()
            if candidate.is_file():
                return self.load_library(candidate, name, span)
        known = sorted({p.stem for r in roots if r.is_dir() for p in r.glob("*.obl")})
        self.diags.add(
            codes.E206,
            f"unknown library `{name}`",
            span,
            suggest(name, known)
            or f"looked for {name}.obl in the route's folder, --lib-path and the shipped obligations/",
        )
        return None

    def load_library(self, path: Path, name: str, span: Span) -> Library | None:
        if path in self._libraries:
            return self._libraries[path]
        shown = display(path)
        self._libraries[path] = None
        text = self.read(path, shown)
        lib = None
        if text is not None:
            tree = parse_source(text, shown, self.diags)
            if tree is not None:
                lib = lower_library(tree, shown, text, self.diags)
        if lib is not None and lib.name != name:
            self.diags.add(codes.E404, f"`{shown}` declares library `{lib.name}`, not `{name}`", span)
            lib = None
        elif lib is None and text is not None:
            self.diags.add(codes.E404, f"library `{name}` ({shown}) has errors", span)
        self._libraries[path] = lib
        return lib

    # ------------------------------------------------------------------ routes
    def load_routes(self, path: Path, shown: str | None = None) -> list[Route]:
        shown = shown or str(path)
        text = self.read(path, shown)
        if text is None:
            return []
        self.inputs.append((shown, sha256_hex(text)))
        return self.routes_from_text(text, shown, path.parent)

    def load_paths(self, args: list[str]) -> list[Route]:
        """The routes of files and folders (folders recursively, sorted); a folder with
        no .route file is an error."""
        routes: list[Route] = []
        for arg in args:
            found = expand_inputs([arg])
            if Path(arg).is_dir() and not found:
                self.diags.add(
                    codes.E106,
                    f"no .route files in the folder {arg}",
                    Span.whole_file(arg),
                    "route files end in .route; folders are searched recursively",
                )
            for path, shown in found:
                routes.extend(self.load_routes(path, shown))
        return routes

    def routes_from_text(self, text: str, shown: str, route_dir: Path) -> list[Route]:
        """Parse and lower route text that is not (or not only) a file, e.g. a splice;
        libraries resolve from ``route_dir`` as for a file there."""
        self.sources[shown] = text
        tree = parse_source(text, shown, self.diags)
        if tree is None:
            return []
        routes = []
        seen: dict[str, int] = {}
        items = tree.items
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
            route, facts = lower_route_facts(
                item, shown, text, lambda n, s: self.resolve_library(n, s, route_dir), self.diags
            )
            if route is not None:
                routes.append(route)
            else:
                # the route has errors; still report those that need its policy
                self.check_policy(facts)
        return routes

    # ------------------------------------------------------------------ policy binding
    def bind(self, route: Route) -> LoadedPolicy | None:
        """Load the route's policy and check what depends on it; None on errors."""
        loaded = self.check_policy(PolicyFacts.of(route))
        if loaded is not None:
            self._evidence_notes(route.evidence, route.as_of, loaded)
        return loaded

    def check_policy(self, facts: PolicyFacts) -> LoadedPolicy | None:
        """Load the pinned policy, check the pin, reference classes, criteria and
        point-in-time evidence against it; None when there is no policy or an error."""
        ref = facts.policy
        if ref is None:
            return None
        before = len(self.diags)
        try:
            loaded = self.policies.load_ref(str(ref))
        except PolicyError as exc:
            unknown = any(m.startswith("no policy") for m in exc.messages)
            for message in exc.messages:
                self.diags.add(
                    codes.E401 if unknown else codes.E403,
                    message if unknown else f"{exc.path}: {message}",
                    ref.span,
                    suggest(str(ref), self.policies.available()) if unknown else None,
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
                self.diags.add(codes.W606, f"evidence `{e.name}` is marked unverified: it is excluded from W", e.span)
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
        return Session(lib_path=lib_path, policies=self.policies, coverage_mode=self.coverage_mode)

    def compile_routes(self, routes: list[Route]) -> list[Compiled]:
        """Every route that compiles without errors, in order (the others left diagnostics)."""
        return [c for c in (self.compile_route(r) for r in routes) if c is not None]

    def compile_route(self, route: Route) -> Compiled | None:
        loaded = self.bind(route)
        if loaded is None:
            return None
        before = len(self.diags)
        numbers = score_route(route, loaded.policy, self.diags)
        if any(d.severity == "error" for d in self.diags.items[before:]):
            return None
        if self.coverage_mode is not None:
            mode, source = self.coverage_mode, "command line"
        else:
            mode, source = loaded.policy.policy.coverage, "policy"
        coverage = None if mode == "off" else discharge_route(route, loaded.policy)
        docked = None
        if coverage is not None and not coverage.complete and mode == "dock":
            docked = docked_score(numbers)
        decision = decide(coverage, mode, source, numbers.score, docked)
        return Compiled(route, loaded, numbers, coverage, decision)


def docked_score(numbers: RouteNumbers) -> float:
    """R_0 with the value over the uncovered path removed (R_n = 0), as DOCK releases it."""
    return fold([t.p for t in numbers.transitions], [t.cost.c for t in numbers.transitions], 0.0)[0]


def gate_and_dock(c: Compiled, source: str) -> tuple[Decision, Decision, Coverage]:
    """What GATE and DOCK would each release for a compiled route, whatever mode it was
    compiled under (coverage is discharged here when it was off)."""
    coverage = c.coverage if c.coverage is not None else discharge_route(c.route, c.policy.policy)
    docked = docked_score(c.numbers)
    gate = decide(coverage, "gate", source, c.numbers.score, docked)
    dock = decide(coverage, "dock", source, c.numbers.score, docked)
    return gate, dock, coverage


def expand_inputs(args: list[str]) -> list[tuple[Path, str]]:
    """Files as given; folders expand to their *.route files, recursively, sorted."""
    out: list[tuple[Path, str]] = []
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            for f in sorted(p.rglob("*.route")):
                out.append((f, str(f)))
        else:
            out.append((p, arg))
    return out
