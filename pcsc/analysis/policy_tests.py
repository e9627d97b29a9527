"""Policy tests (the library behind `pcsc test`): files that state what a policy must
decide on given routes, each case run through the ordinary pipeline.

A test file is TOML, named `*.pcsctest.toml` (docs/policy-tests.md):

    [defaults]                       # optional: route, route_name, policy, coverage
    policy = "venture@1.1.0"

    [[case]]
    name  = "the reference route is released"
    route = "../../../examples/devtools_api.route"   # relative to the test file
    expect.verdict = "released"
    expect.score   = { min = 800_000, max = 900_000 }

A case compiles its route (`Session`), optionally under another policy than the one
it pins (the pin is replaced, never edited in the file), optionally spliced at seam K
(`pcsc.analysis.seams.splice`, recompiled as text), and optionally red-teamed
(`pcsc.analysis.redteam`); then it compares what came out with what the case expects. A file
that is not valid is refused whole, with path-addressed messages
(`case[2].expect.score.min: expected a number`), and none of its cases run.
"""

from __future__ import annotations

import math
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from pcsc.analysis.policy_diff import PinnedStore
from pcsc.analysis.redteam import DEFAULT_MAX_EDITS, redteam
from pcsc.analysis.seams.splice import SpliceError, splice_text
from pcsc.base.canonical import sha256_hex
from pcsc.base.files import NotText, decode, read_bytes
from pcsc.base.humanize import money as _money
from pcsc.base.humanize import plural, points
from pcsc.base.modes import MODES, VERDICTS
from pcsc.base.resources import display_path
from pcsc.compiler.session import Compiled, Session, coverage_mode, gate_and_dock
from pcsc.compiler.walk import folder_files
from pcsc.diagnostics.messages import (
    E801_AT,
    E801_BELOW_MINIMUM,
    E801_EMPTY_RANGE,
    E801_ERRORS_AND_MORE,
    E801_MIN_ABOVE_MAX,
    E801_NAME_TWICE,
    E801_NO_CASES,
    E801_NO_EXPECT,
    E801_NO_EXPECTATION,
    E801_NO_NAME,
    E801_NO_ROUTE,
    E801_NOT_A_BOOL,
    E801_NOT_A_CHOICE,
    E801_NOT_A_NUMBER,
    E801_NOT_A_POLICY,
    E801_NOT_A_RANGE,
    E801_NOT_A_SEAM,
    E801_NOT_A_STRING,
    E801_NOT_A_TABLE,
    E801_NOT_FINITE,
    E801_NOT_OF_FORM,
    E801_NOT_STRINGS,
    E801_NOT_TOML,
    E801_NOT_UTF8,
    E801_UNKNOWN_KEY,
    Message,
    phrase,
)
from pcsc.diagnostics.model import Diagnostics, Finding, Span
from pcsc.lang.ir import PolicyRef, Route
from pcsc.policy.load import PolicyError, PolicyStore

SUFFIX = ".pcsctest.toml"
BUCKETS = ("neg", "mix", "pos")
TOLERANCE = 0.01  # a bare number matches within this (a cent; a hundredth of a point of T)
_CODE = re.compile(r"^PCSC-[EW][0-9]{3}$")
_REF = re.compile(r"^[A-Za-z0-9_.\-/]+@[A-Za-z0-9_.\-+]+$")

Status = Literal["pass", "fail", "error"]


# ---------------------------------------------------------------------- the format
@attrs.frozen
class Range:
    """``{min = a, max = b}`` (either bound may be left out), or a bare number: equal
    within ``TOLERANCE``."""

    min: float | None = None
    max: float | None = None
    exact: float | None = None

    def holds(self, x: float) -> bool:
        if self.exact is not None:
            return abs(x - self.exact) <= TOLERANCE
        return (self.min is None or x >= self.min) and (self.max is None or x <= self.max)

    def text(self, fmt: Callable[[float], str]) -> str:
        if self.exact is not None:
            return fmt(self.exact)
        if self.min is not None and self.max is not None:
            return f"in [{fmt(self.min)}, {fmt(self.max)}]"
        if self.min is not None:
            return f">= {fmt(self.min)}"
        return f"<= {fmt(self.max or 0.0)}"


@attrs.frozen
class Expect:
    verdict: str | None = None
    score: Range | None = None
    ungated_score: Range | None = None
    T: Range | None = None
    bucket: str | None = None
    binding: str | None = None
    eligible: bool | None = None
    uncovered: tuple[str, ...] | None = None
    errors: tuple[str, ...] | None = None
    redteam_max_covered_gain: float | None = None  # a fraction of |honest ungated score|
    redteam_max_covered_gain_usd: float | None = None


@attrs.frozen
class Case:
    index: int  # 1-based, as in `case[1]`
    name: str
    route: str  # as written in the file
    route_name: str | None
    policy: str | None
    splice: int | None
    coverage: str | None
    expect: Expect


@attrs.frozen
class PolicyTestFile:
    path: Path
    shown: str
    sha256: str
    cases: tuple[Case, ...]

    def resolve(self, relative: str) -> Path:
        """A path named in the file, relative to the file's folder."""
        p = Path(relative)
        return p if p.is_absolute() else self.path.parent / p


class PolicyTestError(Exception):
    """A test file that cannot be used; ``messages`` are path-addressed, one per problem,
    ``line`` the line of a TOML syntax error (else 0)."""

    def __init__(self, shown: str, messages: list[str], line: int = 0) -> None:
        super().__init__("; ".join(f"{shown}: {m}" for m in messages))
        self.shown = shown
        self.messages = messages
        self.line = line


_CASE_KEYS = ("name", "route", "route_name", "policy", "splice", "coverage", "expect")
_DEFAULT_KEYS = ("route", "route_name", "policy", "coverage")
_EXPECT_KEYS = tuple(a.name for a in attrs.fields(Expect))


class _Reader:
    """Collects every problem of one file, each addressed by its key path."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def report(self, msg: Message, where: str, **fields: object) -> None:
        """The problem ``msg`` (a template of `pcsc.diagnostics.messages`) at the key path ``where``."""
        self.errors.append(phrase(E801_AT, where=where, problem=phrase(msg, **fields)))

    def keys(self, table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
        for key in table:
            if key not in allowed:
                self.report(E801_UNKNOWN_KEY, f"{where}.{key}" if where else key, allowed=", ".join(allowed))

    def string(self, value: Any, where: str, choices: Sequence[str] = ()) -> str | None:
        if not isinstance(value, str):
            self.report(E801_NOT_A_STRING, where)
            return None
        if choices and value not in choices:
            self.report(E801_NOT_A_CHOICE, where, choices=", ".join(choices), value=value)
            return None
        return value

    def number(self, value: Any, where: str, *, minimum: float | None = None) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.report(E801_NOT_A_NUMBER, where)
            return None
        if not math.isfinite(value):
            self.report(E801_NOT_FINITE, where)
            return None
        if minimum is not None and value < minimum:
            self.report(E801_BELOW_MINIMUM, where, minimum=minimum)
            return None
        return float(value)

    def range(self, value: Any, where: str) -> Range | None:
        if isinstance(value, dict):
            self.keys(value, ("min", "max"), where)
            if not value.keys() & {"min", "max"}:
                self.report(E801_EMPTY_RANGE, where)
                return None
            lo = self.number(value["min"], f"{where}.min") if "min" in value else None
            hi = self.number(value["max"], f"{where}.max") if "max" in value else None
            if lo is not None and hi is not None and lo > hi:
                self.report(E801_MIN_ABOVE_MAX, where, min=lo, max=hi)
            return Range(lo, hi)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.report(E801_NOT_A_RANGE, where)
            return None
        exact = self.number(value, where)
        return None if exact is None else Range(exact=exact)

    def strings(
        self, value: Any, where: str, pattern: re.Pattern[str] | None = None, what: str = ""
    ) -> tuple[str, ...] | None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.report(E801_NOT_STRINGS, where)
            return None
        if pattern is not None:
            for i, v in enumerate(value):
                if not pattern.match(v):
                    self.report(E801_NOT_OF_FORM, f"{where}[{i}]", what=what, value=v)
        return tuple(value)

    def expect(self, value: Any, where: str) -> Expect:
        if not isinstance(value, dict) or not value:
            self.report(E801_NO_EXPECTATION, where, keys=", ".join(_EXPECT_KEYS))
            return Expect()
        self.keys(value, _EXPECT_KEYS, where)
        got: dict[str, Any] = {}
        for key, v in value.items():
            here = f"{where}.{key}"
            if key == "verdict":
                got[key] = self.string(v, here, VERDICTS)
            elif key == "bucket":
                got[key] = self.string(v, here, BUCKETS)
            elif key == "binding":
                got[key] = self.string(v, here)
            elif key in ("score", "ungated_score", "T"):
                got[key] = self.range(v, here)
            elif key == "eligible":
                if isinstance(v, bool):
                    got[key] = v
                else:
                    self.report(E801_NOT_A_BOOL, here)
            elif key == "uncovered":
                got[key] = self.strings(v, here, re.compile(r"^[A-Za-z_]\w*\.[A-Za-z_]\w*$"), "transition.field")
            elif key == "errors":
                got[key] = self.strings(v, here, _CODE, "a code such as PCSC-E207")
            elif key in ("redteam_max_covered_gain", "redteam_max_covered_gain_usd"):
                got[key] = self.number(v, here, minimum=0.0)
        if "errors" in value and len(value) > 1:
            self.report(E801_ERRORS_AND_MORE, f"{where}.errors")
        return Expect(**{k: v for k, v in got.items() if v is not None})


def load_test_file(path: Path, shown: str | None = None) -> PolicyTestFile:
    """Read and validate a test file; raises ``PolicyTestError`` (and `Unreadable`)."""
    shown = shown or str(path)
    data = read_bytes(path)
    try:
        doc = tomllib.loads(decode(data, shown))
    except NotText:
        raise PolicyTestError(shown, [phrase(E801_NOT_UTF8)]) from None
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+)", str(exc))
        raise PolicyTestError(shown, [phrase(E801_NOT_TOML, reason=exc)], int(match.group(1)) if match else 0) from None
    r = _Reader()
    r.keys(doc, ("defaults", "case"), "")
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        r.report(E801_NOT_A_TABLE, "defaults")
        defaults = {}
    r.keys(defaults, _DEFAULT_KEYS, "defaults")
    raw_cases = doc.get("case")
    if not isinstance(raw_cases, list) or not raw_cases:
        r.report(E801_NO_CASES, "case")
        raw_cases = []
    cases: list[Case] = []
    names: dict[str, int] = {}
    for i, raw in enumerate(raw_cases, start=1):
        where = f"case[{i}]"
        if not isinstance(raw, dict):
            r.report(E801_NOT_A_TABLE, where)
            continue
        r.keys(raw, _CASE_KEYS, where)
        merged = {**defaults, **raw}
        name = r.string(raw.get("name"), f"{where}.name") if "name" in raw else None
        if "name" not in raw:
            r.report(E801_NO_NAME, f"{where}.name")
        elif name is not None:
            if name in names:
                r.report(E801_NAME_TWICE, f"{where}.name", name=name, first=names[name])
            names.setdefault(name, i)
        route = r.string(merged.get("route"), f"{where}.route") if "route" in merged else None
        if "route" not in merged:
            r.report(E801_NO_ROUTE, f"{where}.route")
        route_name = r.string(merged["route_name"], f"{where}.route_name") if "route_name" in merged else None
        policy = r.string(merged["policy"], f"{where}.policy") if "policy" in merged else None
        if policy is not None and not (_REF.match(policy) or policy.endswith(".toml")):
            r.report(E801_NOT_A_POLICY, f"{where}.policy", policy=policy)
        coverage = r.string(merged["coverage"], f"{where}.coverage", MODES) if "coverage" in merged else None
        seam = None
        if "splice" in raw:
            v = raw["splice"]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                r.report(E801_NOT_A_SEAM, f"{where}.splice")
            else:
                seam = v
        if "expect" not in raw:
            r.report(E801_NO_EXPECT, f"{where}.expect")
        expect = r.expect(raw.get("expect", {}), f"{where}.expect") if "expect" in raw else Expect()
        cases.append(Case(i, name or "", route or "", route_name, policy, seam, coverage, expect))
    if r.errors:
        raise PolicyTestError(shown, r.errors)
    return PolicyTestFile(path, shown, sha256_hex(data), tuple(cases))


def find_test_files(folder: Path) -> tuple[list[Path], list[Finding]]:
    """The test files under ``folder``, recursively, sorted, and an error for each link
    that leads out of the folder (not read: `pcsc.compiler.walk`)."""
    return folder_files(folder, (SUFFIX,))


# ---------------------------------------------------------------------- running
@attrs.frozen
class CaseResult:
    file: str
    case: Case
    status: Status
    failures: tuple[str, ...]  # one line per expectation that failed, or why it could not run
    observed: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.case.name


class CaseError(Exception):
    """A case that cannot run: its route file, route, policy or seam cannot be found."""


@attrs.define
class Runner:
    """Runs the cases of test files. ``lib_path`` and ``policy_path`` are searched as
    for any command; a test file in ``<root>/<id>/tests/`` also finds policies in
    ``<root>`` first (the folder of the policy it tests)."""

    lib_path: list[Path] = attrs.field(factory=list)
    policy_path: list[Path] = attrs.field(factory=list)
    max_edits: int = DEFAULT_MAX_EDITS
    inputs: list[tuple[str, str]] = attrs.field(factory=list)
    _stores: dict[tuple[Path, ...], PolicyStore] = attrs.field(factory=dict)

    def roots(self, tf: PolicyTestFile) -> list[Path]:
        folder = tf.path.parent
        extra = [folder.parent.parent] if folder.name == "tests" and any(folder.parent.glob("*.toml")) else []
        return [*extra, *(p for p in self.policy_path if p not in extra)]

    def store(self, roots: list[Path]) -> PolicyStore:
        key = tuple(roots)
        if key not in self._stores:
            self._stores[key] = PolicyStore(list(roots))
        return self._stores[key]

    def run_file(self, tf: PolicyTestFile) -> list[CaseResult]:
        self.inputs.append((tf.shown, tf.sha256))
        return [self.run_case(tf, case) for case in tf.cases]

    def run_case(self, tf: PolicyTestFile, case: Case) -> CaseResult:
        try:
            return self._run(tf, case)
        except CaseError as exc:
            return CaseResult(tf.shown, case, "error", (str(exc),), {})

    def _session(self, tf: PolicyTestFile, case: Case) -> tuple[Session, PolicyRef | None]:
        roots = self.roots(tf)
        mode = case.coverage
        if case.policy is None:
            return Session(lib_path=list(self.lib_path), policies=self.store(roots), coverage_mode=mode,  # type: ignore[arg-type]
                           coverage_source=TEST_CASE), None
        try:
            if case.policy.endswith(".toml"):
                path = tf.resolve(case.policy)
                loaded = PolicyStore([path.parent.parent, *roots]).load_path(path)
                store: PolicyStore = PinnedStore(list(roots), pinned=loaded)
            else:
                store = self.store(roots)
                loaded = store.load_ref(case.policy)
        except PolicyError as exc:
            raise CaseError(f"policy {case.policy}: " + "; ".join(exc.messages)) from None
        ref = PolicyRef(loaded.policy.id, loaded.policy.version, None, _NOWHERE)
        return Session(lib_path=list(self.lib_path), policies=store, coverage_mode=mode,  # type: ignore[arg-type]
                       coverage_source=TEST_CASE), ref

    def _run(self, tf: PolicyTestFile, case: Case) -> CaseResult:
        path = tf.resolve(case.route)
        if not path.is_file():
            raise CaseError(f"route file {case.route} not found (looked for {path})")
        session, override = self._session(tf, case)
        routes = session.load_routes(path, _shown(path))
        self.inputs.extend(session.inputs)
        route = _choose(routes, case, session)
        if route is None:
            return self._errors(tf, case, session.diags)
        if override is not None:
            route = attrs.evolve(route, policy=attrs.evolve(override, span=route.policy.span))
        compiled = session.compile_route(route)
        if compiled is not None and case.splice is not None:
            compiled = self._splice(compiled, case, session)
        if compiled is None or session.diags.has_errors:
            return self._errors(tf, case, session.diags)
        if case.expect.errors is not None:
            return CaseResult(
                tf.shown, case, "fail", (f"expected errors {_list(case.expect.errors)}, but the route compiles",), {}
            )
        observed = _observe(compiled)
        failures = _compare(case.expect, observed)
        e = case.expect
        if e.redteam_max_covered_gain is not None or e.redteam_max_covered_gain_usd is not None:
            failures.extend(self._redteam(compiled, session, e, observed))
        return CaseResult(tf.shown, case, "fail" if failures else "pass", tuple(failures), observed)

    def _splice(self, c: Compiled, case: Case, session: Session) -> Compiled | None:
        route = c.route
        k = case.splice or 0
        try:
            text = splice_text(route, k)
        except SpliceError as exc:
            raise CaseError(f"splice {k}: {exc}") from None
        child = session.for_variants_of(route)
        child.diags = session.diags
        shown = f"{route.file}#{route.name}/seam-{k}"
        spliced = child.routes_from_text(text, shown, Path(route.file).parent)
        return child.compile_route(spliced[0]) if len(spliced) == 1 else None

    def _redteam(self, c: Compiled, session: Session, e: Expect, observed: dict[str, Any]) -> list[str]:
        report = redteam(c, session, self.max_edits)
        honest = c.numbers.score
        gains = [t for t in report.trials if t.outcome == "covered-gain" and t.gain is not None]
        best = max(gains, key=lambda t: t.gain or 0.0, default=None)
        top = best.gain if best is not None and best.gain is not None else 0.0
        relative = top / abs(honest) if honest else (math.inf if top > 0 else 0.0)
        observed["redteam_max_covered_gain"] = relative if math.isfinite(relative) else None
        observed["redteam_max_covered_gain_usd"] = top
        observed["redteam_max_covered_gain_edit"] = best.description if best is not None else None
        out = []
        unit = c.policy.policy.units.label
        what = f"{_money(top)} {unit} by {best.description}" if best is not None else ""
        if e.redteam_max_covered_gain is not None and relative > e.redteam_max_covered_gain:
            share = f"{relative:.1%}" if math.isfinite(relative) else "an unbounded share"
            out.append(
                f"expected no covered red-team gain above {e.redteam_max_covered_gain:.1%} of the honest score "
                f"({_money(honest)} {unit}), got {share}: {what}"
            )
        if e.redteam_max_covered_gain_usd is not None and top > e.redteam_max_covered_gain_usd:
            limit = _money(e.redteam_max_covered_gain_usd)
            out.append(f"expected no covered red-team gain above {limit} {unit}, got {what}")
        return out

    def _errors(self, tf: PolicyTestFile, case: Case, diags: Diagnostics) -> CaseResult:
        errors = [d for d in diags.sorted() if d.severity == "error"]
        codes = sorted({d.code for d in errors})
        observed = {"errors": codes}
        expected = case.expect.errors
        if expected is not None:
            missing = [c for c in expected if c not in codes]
            if not missing:
                return CaseResult(tf.shown, case, "pass", (), observed)
            failure = f"expected errors {_list(expected)}, got {_list(codes)}"
            return CaseResult(tf.shown, case, "fail", (failure,), observed)
        lines = [f"the route does not compile ({plural(len(errors), 'error')})"]
        lines += [f"{d.span.file}:{d.span.line}: {d.code} {d.message}" for d in errors[:5]]
        if len(errors) > 5:
            lines.append(f"… and {len(errors) - 5} more")
        return CaseResult(tf.shown, case, "fail", tuple(lines), observed)


#: The `mode_source` of a case that sets `coverage`.
TEST_CASE = "test case"
_NOWHERE = Span.whole_file("")  # replaced by the route's own `policy` span


def _shown(path: Path) -> str:
    return display_path(path)


def _choose(routes: list[Route], case: Case, session: Session) -> Route | None:
    if session.diags.has_errors and not routes:
        return None
    names = [r.name for r in routes]
    if case.route_name is not None:
        for r in routes:
            if r.name == case.route_name:
                return r
        if session.diags.has_errors:
            return None
        raise CaseError(f"no route `{case.route_name}` in {case.route} (it holds {', '.join(names) or 'none'})")
    if len(routes) > 1:
        raise CaseError(f"{case.route} holds several routes; choose one with route_name: {', '.join(names)}")
    return routes[0] if routes else None


def _observe(c: Compiled) -> dict[str, Any]:
    n = c.numbers
    _, _, coverage = gate_and_dock(c, "test")
    return {
        "route": c.route.name,
        "policy": c.policy.ref,
        "verdict": c.decision.verdict,
        "score": c.decision.score,
        "ungated_score": n.score,
        "T": n.criteria_score,
        "bucket": n.bucket,
        "binding": n.transitions[n.binding].name,
        "eligible": n.eligible,
        "uncovered": sorted(f"{u.transition}.{u.delta.field}" for u in coverage.uncovered),
        "coverage": coverage_mode(c),
    }



def _list(items: Iterable[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _compare(e: Expect, got: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("verdict", "bucket", "binding"):
        want = getattr(e, key)
        if want is not None and got[key] != want:
            out.append(f"expected {key} {want}, got {got[key] if got[key] is not None else 'none'}")
    if e.eligible is not None and got["eligible"] != e.eligible:
        out.append(f"expected eligible {str(e.eligible).lower()}, got {str(got['eligible']).lower()}")
    ranges: tuple[tuple[str, Range | None, Callable[[float], str]], ...] = (
        ("score", e.score, _money),
        ("ungated_score", e.ungated_score, _money),
        ("T", e.T, points),
    )
    for key, want_range, fmt in ranges:
        if want_range is None:
            continue
        value = got[key]
        if value is None:
            why = f" (withheld: {got['verdict']})" if key == "score" else ""
            out.append(f"expected {key} {want_range.text(fmt)}, got none{why}")
        elif not want_range.holds(value):
            out.append(f"expected {key} {want_range.text(fmt)}, got {fmt(value)}")
    if e.uncovered is not None and sorted(set(e.uncovered)) != got["uncovered"]:
        out.append(f"expected uncovered {_list(sorted(set(e.uncovered)))}, got {_list(got['uncovered'])}")
    return out


# ---------------------------------------------------------------------- reports
@attrs.frozen
class FileReport:
    shown: str
    results: tuple[CaseResult, ...] = ()
    problems: tuple[str, ...] = ()  # the file could not be used (then no case ran)


def counts(reports: Sequence[FileReport]) -> dict[str, int]:
    results = [r for f in reports for r in f.results]
    return {
        "files": len(reports),
        "cases": len(results),
        "passed": sum(1 for r in results if r.status == "pass"),
        "failed": sum(1 for r in results if r.status == "fail"),
        "errors": sum(1 for r in results if r.status == "error"),
        "bad_files": sum(1 for f in reports if f.problems),
    }


def ok(reports: Sequence[FileReport]) -> bool:
    c = counts(reports)
    return c["failed"] == c["errors"] == c["bad_files"] == 0


def case_json(r: CaseResult) -> dict[str, Any]:
    c = r.case
    return {
        "index": c.index,
        "name": c.name,
        "status": r.status,
        "failures": list(r.failures),
        "route": c.route,
        "route_name": c.route_name,
        "policy": c.policy,
        "splice": c.splice,
        "coverage": c.coverage,
        "observed": dict(r.observed),
    }


def to_json(reports: Sequence[FileReport]) -> dict[str, Any]:
    return {
        "ok": ok(reports),
        "files": [
            {
                "file": f.shown,
                "ok": not f.problems,
                "problems": list(f.problems),
                "cases": [case_json(r) for r in f.results],
            }
            for f in reports
        ],
        "summary": counts(reports),
    }


_MARK = {"pass": "pass ", "fail": "FAIL ", "error": "ERROR"}


def to_text(reports: Sequence[FileReport]) -> str:
    lines: list[str] = []
    for f in reports:
        lines.append(f.shown)
        if f.problems:
            lines.append("  ERROR  the file cannot be used (see the diagnostics); no case ran")
        for r in f.results:
            lines.append(f"  {_MARK[r.status]}  {r.name}")
            lines.extend(f"         {line}" for line in r.failures)
    c = counts(reports)
    tail = f", {plural(c['bad_files'], 'file')} not usable" if c["bad_files"] else ""
    lines.append(
        f"{plural(c['cases'], 'case')} in {plural(c['files'], 'file')}: "
        f"{c['passed']} passed, {c['failed']} failed, {c['errors']} could not run{tail}"
    )
    return "\n".join(lines) + "\n"


def to_junit(reports: Sequence[FileReport]) -> str:
    """JUnit XML: one <testsuite> per file, one <testcase> per case; a failed case has
    a <failure>, a case that could not run an <error>; a file that cannot be used is a
    suite with one <testcase name="(file)"> in error. No times or host names: the same
    run writes the same bytes."""
    c = counts(reports)
    top = ET.Element(
        "testsuites",
        name="pcsc test",
        tests=str(c["cases"] + c["bad_files"]),
        failures=str(c["failed"]),
        errors=str(c["errors"] + c["bad_files"]),
    )
    for f in reports:
        fc = counts([f])
        suite = ET.SubElement(
            top,
            "testsuite",
            name=f.shown,
            tests=str(fc["cases"] + fc["bad_files"]),
            failures=str(fc["failed"]),
            errors=str(fc["errors"] + fc["bad_files"]),
            skipped="0",
        )
        if f.problems:
            case = ET.SubElement(suite, "testcase", classname=f.shown, name="(file)", file=f.shown)
            error = ET.SubElement(case, "error", message=f.problems[0], type="malformed")
            error.text = "\n".join(f.problems)
        for r in f.results:
            case = ET.SubElement(suite, "testcase", classname=f.shown, name=r.name, file=f.shown)
            if r.status != "pass":
                tag = "failure" if r.status == "fail" else "error"
                kind = "expectation" if r.status == "fail" else "cannot-run"
                el = ET.SubElement(case, tag, message=r.failures[0] if r.failures else r.status, type=kind)
                el.text = "\n".join(r.failures)
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"
