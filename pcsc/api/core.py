"""The public Python API of PCSC; `pcsc` re-exports the names in its ``__all__``.

What it is for: compiling, checking and analysing routes from Python and freezing the
results into a ledger, with typed, frozen results instead of JSON to pick apart. It
drives the same pipeline as the command line (`pcsc.compiler.session.Session`) and builds its
JSON with the same functions (`pcsc.render.packet`, `pcsc.render.envelope`), so
``Result.to_json()`` is the document `pcsc compile --format json` prints.

What it does not do: print, exit, or read `sys.argv`; it never imports the command
line. Bad input is reported as diagnostics in the result, never raised; only
programming errors (a wrong argument type, an unknown coverage mode) raise, and the
two operations without a result to carry diagnostics (`load_policy`, the ledger)
raise `PolicyError` and `LedgerError`. Everything here not re-exported by `pcsc`
is private.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from pcsc.base.canonical import sha256_hex
from pcsc.base.modes import MODES, VERDICTS, Mode, Verdict
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics import exits
from pcsc.diagnostics.model import Finding, condense, where
from pcsc.forecast.ledger import DEFAULT_PATH, LedgerError
from pcsc.forecast.ledger import Ledger as _Ledger
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.render import schemas as schemas
from pcsc.render.envelope import RESERVED, envelope

if TYPE_CHECKING:
    from pcsc.analysis.seams.analysis import RouteSeams, Seam
    from pcsc.coverage import DeltaCoverage
    from pcsc.forecast.ledger import Entry
    from pcsc.lang.ir import Route

#: The public API, its one list: `pcsc` re-exports these names (and `__version__`).
__all__ = [
    "AnalysisResult",
    "Attempt",
    "Binding",
    "CheckResult",
    "CoverageMode",
    "CoverageSetting",
    "DeltaResult",
    "Diagnostic",
    "ExperimentMode",
    "ExperimentResult",
    "FailedRequire",
    "FmtResult",
    "FormattedFile",
    "Gate",
    "Input",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerVerification",
    "PathLike",
    "Policy",
    "PolicyError",
    "PolicyInfo",
    "Result",
    "RouteResult",
    "ReportResult",
    "RouteSeamsResult",
    "SeamPipeline",
    "SeamResult",
    "SeamsResult",
    "SeamsSummary",
    "Source",
    "TransitionResult",
    "Uncovered",
    "Verdict",
    "analyse_seams",
    "check",
    "compile",
    "explain",
    "fmt",
    "load_policy",
    "open_ledger",
    "redteam",
    "report",
    "schemas",
    "sensitivity",
]

#: A path: a str or an os.PathLike.
PathLike: TypeAlias = str | os.PathLike[str]
#: What `compile`, `check` and `analyse_seams` accept: a path, route text, or several paths.
Source: TypeAlias = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
#: A coverage mode (`pcsc.base.modes.Mode`).
CoverageMode: TypeAlias = Mode
#: ``None`` keeps each policy's own coverage mode.
CoverageSetting: TypeAlias = Mode | None

#: How route source text is shown in diagnostics and inputs.
STRING_NAME = "<string>"
_COVERAGE_MODES = (None, *MODES)


# ---------------------------------------------------------------------- small values
@attrs.frozen(slots=True)
class Diagnostic:
    """A problem found in the input. Lines and columns are 1-based; the end is exclusive."""

    code: str
    severity: Literal["error", "warning"]
    message: str
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    help: str | None = None

    @classmethod
    def _of(cls, d: Finding) -> Diagnostic:
        s = d.span
        return cls(d.code, d.severity, d.message, s.file, s.line, s.column, s.end_line, s.end_column, d.help)

    def __str__(self) -> str:
        """``file:line:column: severity: message [code]``, as the command line prints it
        (``file: …`` for a problem with the file as a whole, line 0)."""
        return f"{where(self.file, self.line, self.column)}: {self.severity}: {self.message} [{self.code}]"


@attrs.frozen(slots=True)
class Input:
    """A text the run read: its path as shown (``<string>`` for route text) and SHA-256."""

    path: str
    sha256: str


@attrs.frozen(slots=True)
class PolicyInfo:
    """The identity of the policy a route is scored under."""

    id: str
    version: str
    sha256: str

    @property
    def ref(self) -> str:
        """``id@version``, as routes pin it."""
        return f"{self.id}@{self.version}"


@attrs.frozen(slots=True)
class Gate:
    """An eligibility or risk gate of the policy, and whether the route passed it."""

    id: str
    kind: str
    passed: bool


@attrs.frozen(slots=True)
class Binding:
    """The binding transition: the one whose resolution is worth most (highest D)."""

    transition: str
    U: float
    D: float
    learning_cost: float | None


@attrs.frozen(slots=True)
class DeltaResult:
    """A field a transition changes (``source`` -> ``target``); ``covered`` and ``by``
    are None when the change is not material or coverage is off."""

    field: str
    source: float | bool
    target: float | bool
    material: bool
    covered: bool | None
    by: str | None


@attrs.frozen(slots=True)
class TransitionResult:
    """One transition's numbers, named as in the compile packet (``source``/``target``
    are the packet's ``from``/``to``, ``ref_class`` its ``class``, ``W`` the reweighting)."""

    name: str
    source: str
    target: str
    ref_class: str
    p_prior: float
    W: float
    p: float
    budget: float
    floor_class: float
    floor_delta: float
    c: float
    cost_bound_by: str
    U: float
    D: float
    R_next: float
    due: dt.date | None
    deltas: tuple[DeltaResult, ...]


@attrs.frozen(slots=True)
class FailedRequire:
    """A ``require`` line of an obligation that did not hold, where it is, and why."""

    require: str
    file: str
    line: int
    reason: str


@attrs.frozen(slots=True)
class Attempt:
    """An obligation tried on an uncovered change; ``claimed`` when the transition lists
    it in ``discharges``."""

    obligation: str
    claimed: bool
    failed: tuple[FailedRequire, ...]


@attrs.frozen(slots=True)
class Uncovered:
    """A material change no obligation discharged: why a route is refused or docked."""

    transition: str
    field: str
    source: float | bool
    target: float | bool
    tried: tuple[Attempt, ...]


@attrs.frozen(slots=True)
class RouteResult:
    """A compiled route: its verdict, its score and every number behind it.

    ``score`` is the released score (None when GATE refused it, i.e. verdict
    ``suspend-and-ask``); ``ungated_score`` is R_0 whatever the coverage."""

    name: str
    title: str | None
    file: str
    as_of: dt.date
    policy: PolicyInfo
    verdict: Verdict
    score: float | None
    ungated_score: float
    coverage_mode: CoverageMode
    coverage_mode_source: str
    value: float
    flat_product: float
    criteria_score: float | None
    bucket: str | None
    eligible: bool
    gates: tuple[Gate, ...]
    binding: Binding
    transitions: tuple[TransitionResult, ...]
    uncovered: tuple[Uncovered, ...]

    @property
    def refused(self) -> bool:
        """True when GATE withheld the score (verdict ``suspend-and-ask``)."""
        return self.verdict == "suspend-and-ask"

    def transition(self, name: str) -> TransitionResult:
        """The transition called ``name``; KeyError if there is none."""
        for t in self.transitions:
            if t.name == name:
                return t
        raise KeyError(f"route {self.name} has no transition {name!r}")


# ---------------------------------------------------------------------- results
@attrs.frozen(slots=True)
class Result:
    """What `compile` returns: every route that compiled, and the diagnostics of all.

    A route with errors is absent from ``routes`` and explained in ``diagnostics``."""

    routes: tuple[RouteResult, ...]
    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]
    _compiled: tuple[Compiled, ...] = attrs.field(alias="_compiled", repr=False, eq=False)
    _internal: tuple[Finding, ...] = attrs.field(alias="_internal", repr=False, eq=False)
    _read: tuple[tuple[str, str], ...] = attrs.field(alias="_read", repr=False, eq=False)

    @property
    def ok(self) -> bool:
        """True when there are no errors (warnings and GATE refusals are not errors)."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def refused(self) -> bool:
        """True when GATE withheld the score of any route."""
        return any(r.refused for r in self.routes)

    @property
    def exit_code(self) -> int:
        """The exit code of `pcsc compile`: 1 for errors, else 3 when GATE refused a
        score, else 0."""
        return exits.exit_code(self.diagnostics, self.refused)

    def route(self, name: str) -> RouteResult:
        """The route called ``name``; KeyError if no route of that name compiled."""
        for r in self.routes:
            if r.name == name:
                return r
        raise KeyError(f"no compiled route {name!r}; compiled: {', '.join(r.name for r in self.routes) or 'none'}")

    def to_json(self) -> dict[str, Any]:
        """The document `pcsc compile --format json` prints, as a dict: the envelope
        (``pcsc``, ``schema``, ``inputs``), then ``policy``, ``diagnostics``, ``routes``."""
        from pcsc.render.packet import compile_packet

        packet = compile_packet(list(self._compiled), list(self._internal))
        return envelope("compile", _payload(packet), [(i.path, i.sha256) for i in self.inputs])


@attrs.frozen(slots=True)
class CheckResult:
    """What `check` returns: diagnostics only (routes parsed, lowered, bound to their
    policies and scored, as `compile` would; no packet)."""

    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]
    routes: tuple[str, ...]  # the names of the routes that lowered without errors
    _internal: tuple[Finding, ...] = attrs.field(alias="_internal", repr=False, eq=False)

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        """The exit code of `pcsc check`: 1 for errors, else 0."""
        return exits.exit_code(self.diagnostics)

    def to_json(self) -> dict[str, Any]:
        """The document `pcsc check --format json` prints: the envelope, then
        ``diagnostics``, where (as there) the same diagnostic at several places of one
        line is the first of them with the number of the others in ``repeats``
        (``diagnostics`` above lists every place)."""
        from pcsc.render.diagnostics import to_json

        diagnostics = [to_json(d) for d in condense(self._internal)]
        return envelope("check", {"diagnostics": diagnostics}, [(i.path, i.sha256) for i in self.inputs])


def _payload(packet: Mapping[str, Any]) -> dict[str, Any]:
    """A packet without the keys the envelope owns (it sets them itself)."""
    return {k: v for k, v in packet.items() if k not in RESERVED}


# ---------------------------------------------------------------------- loading
def _paths(value: PathLike | Iterable[PathLike], what: str) -> list[Path]:
    if isinstance(value, (str, os.PathLike)):
        return [Path(value)]
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a path or an iterable of paths, not {type(value).__name__}")
    out = []
    for item in value:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{what} must hold paths (str or os.PathLike), not {type(item).__name__}")
        out.append(Path(item))
    return out


def _exists(text: str) -> bool:
    try:
        return os.path.exists(text)
    except (OSError, ValueError):  # too long for a file name, or a NUL byte
        return False


def _is_route_text(source: str) -> bool:
    """The source-string rule: a str naming an existing file or folder is a path;
    any other str with a newline or a ``{`` is route text; anything else is a path
    (that does not exist, and is reported as such)."""
    return not _exists(source) and ("\n" in source or "{" in source)


def _folders(value: PathLike | Iterable[PathLike], what: str) -> list[Path]:
    """Search-path folders; each must exist, as on the command line (a missing folder
    would silently search nothing): a ValueError names the first that does not."""
    folders = _paths(value, what)
    for folder in folders:
        if not os.path.isdir(folder):
            raise ValueError(f"{what}: {os.fspath(folder)!r} is not a folder (no such folder)")
    return folders


def _session(policy_path: PathLike | Iterable[PathLike], lib_path: PathLike | Iterable[PathLike],
             coverage: CoverageSetting) -> Session:
    if coverage not in _COVERAGE_MODES:
        raise ValueError(f"coverage must be None, 'gate', 'dock' or 'off', not {coverage!r}")
    libraries, policies = _folders(lib_path, "lib_path"), _folders(policy_path, "policy_path")
    return Session(
        lib_path=libraries,
        policies=PolicyStore(policies, {p: ("api argument", None) for p in policies}),
        coverage_mode=coverage,
        coverage_source="api argument",
        lib_origins={p: ("api argument", None) for p in libraries},
    )


def _load(source: Source, session: Session) -> list[Route]:
    """Read and lower every route of ``source`` into ``session`` (see `compile`)."""
    if isinstance(source, str) and _is_route_text(source):
        session.inputs.append((STRING_NAME, sha256_hex(source)))
        return session.routes_from_text(source, STRING_NAME, Path.cwd())
    if isinstance(source, (str, os.PathLike)):
        args = [os.fspath(source)]
    elif isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(f"source must be a path, route text or an iterable of paths, not {type(source).__name__}")
    else:
        args = [os.fspath(p) for p in _paths(source, "source")]
    return session.load_paths(args)


def _diagnostics(session: Session) -> tuple[tuple[Diagnostic, ...], tuple[Finding, ...]]:
    internal = tuple(session.diags.sorted())
    return tuple(Diagnostic._of(d) for d in internal), internal


def _inputs(session: Session) -> tuple[Input, ...]:
    """The texts read, each path once (the first reading), as the command line lists them."""
    seen: dict[str, str] = {}
    for p, h in session.inputs:
        seen.setdefault(p, h)
    return tuple(Input(p, h) for p, h in seen.items())


def _envelope(kind: str, payload: Mapping[str, Any], session: Session) -> dict[str, Any]:
    return envelope(kind, payload, [(i.path, i.sha256) for i in _inputs(session)])


# ---------------------------------------------------------------------- compile
def compile(  # noqa: A001 - the public name is the verb
    source: Source,
    *,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> Result:
    """Compile the routes of ``source`` and return a `Result`: every route that compiled,
    with its verdict and numbers, and the diagnostics of all of them.

    ``source`` is an ``os.PathLike`` (a file, or a folder searched recursively for
    ``*.route``), an iterable of such paths, or a ``str``: a str naming an existing
    file or folder is that path; any other str with a newline or ``{`` is route text
    (shown as ``<string>``; its libraries resolve from the working folder, then
    ``lib_path``, then the shipped obligations); any other str is a path that does not
    exist, reported as an error diagnostic. ``policy_path`` folders are searched for
    policies before the shipped ones; ``coverage`` overrides every policy's coverage
    mode. Bad input never raises: read ``result.ok`` and ``result.diagnostics``."""
    session = _session(policy_path, lib_path, coverage)
    routes = _load(source, session)
    compiled = session.compile_routes(routes)
    return _result(session, compiled)


def _result(session: Session, compiled: list[Compiled]) -> Result:
    from pcsc.forecast.freeze import freeze_inputs

    public, internal = _diagnostics(session)
    return Result(
        routes=tuple(_route_result(c) for c in compiled),
        diagnostics=public,
        inputs=_inputs(session),
        _compiled=tuple(compiled),
        _internal=internal,
        _read=tuple(freeze_inputs(session)),
    )


def _policy_info(c: Compiled) -> PolicyInfo:
    return PolicyInfo(c.policy.policy.id, c.policy.policy.version, c.policy.sha256)


def _route_result(c: Compiled) -> RouteResult:
    n, r = c.numbers, c.route
    b = n.transitions[n.binding]
    transitions = []
    for t, tr in zip(n.transitions, r.transitions, strict=True):
        cov = {} if c.coverage is None else {x.delta.field: x for x in c.coverage.for_transition(t.name)}
        deltas = tuple(
            DeltaResult(
                d.field, d.source, d.target, d.material,
                cov[d.field].covered if d.material and d.field in cov else None,
                cov[d.field].by if d.material and d.field in cov else None,
            )
            for d in t.deltas
        )
        transitions.append(TransitionResult(
            name=t.name, source=t.source, target=t.target, ref_class=t.ref_class, p_prior=t.p_prior,
            W=t.reweight.W, p=t.p, budget=t.cost.budget, floor_class=t.cost.floor_class,
            floor_delta=t.cost.floor_delta, c=t.cost.c, cost_bound_by=t.cost.bound_by, U=t.U, D=t.D,
            R_next=t.R_next, due=tr.due, deltas=deltas,
        ))
    return RouteResult(
        name=r.name,
        title=r.title,
        file=r.file,
        as_of=r.as_of,
        policy=_policy_info(c),
        verdict=c.decision.verdict,
        score=c.decision.score,
        ungated_score=n.score,
        coverage_mode=c.decision.mode,
        coverage_mode_source=c.decision.mode_source,
        value=n.value,
        flat_product=n.flat_product,
        criteria_score=n.criteria_score,
        bucket=n.bucket,
        eligible=n.eligible,
        gates=tuple(Gate(g.id, g.kind, g.passed) for g in n.gates),
        binding=Binding(b.name, b.U, b.D, b.learning_cost),
        transitions=tuple(transitions),
        uncovered=tuple(_uncovered(u) for u in c.coverage.uncovered) if c.coverage else (),
    )


def _uncovered(u: DeltaCoverage) -> Uncovered:
    return Uncovered(
        transition=u.transition,
        field=u.delta.field,
        source=u.delta.source,
        target=u.delta.target,
        tried=tuple(
            Attempt(a.obligation, a.claimed,
                    tuple(FailedRequire(f.require, f.span.file, f.span.line, f.reason) for f in a.failed))
            for a in u.tried
        ),
    )


# ---------------------------------------------------------------------- check
def check(
    source: Source,
    *,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> CheckResult:
    """Parse, lower and check ``source`` (as `compile` reads it) against the pinned
    policies, reporting whatever `compile` refuses (an overflowing score too); return
    a `CheckResult` (diagnostics and route names).
    ``coverage`` overrides every policy's coverage mode, as in `compile`: an uncovered
    material change is an error under ``"gate"``, a warning under ``"dock"``, and not
    checked under ``"off"``."""
    session = _session(policy_path, lib_path, coverage)
    routes = _load(source, session)
    for route in routes:
        session.check_route(route)
    public, internal = _diagnostics(session)
    return CheckResult(public, _inputs(session), tuple(r.name for r in routes), _internal=internal)


# ---------------------------------------------------------------------- seams
@attrs.frozen(slots=True)
class SeamPipeline:
    """The pipeline arm of a seam: the spliced route printed, compiled again, and compared."""

    delta: float  # spliced ungated R_0 − honest ungated R_0
    drift: bool  # some p or c moved when the splice was recompiled
    drifted: tuple[str, ...]
    verdict: Verdict  # the spliced route's verdict under the active coverage mode
    gate: Verdict
    dock: Verdict
    dock_score: float | None
    ungated_score: float
    uncovered: tuple[tuple[str, str], ...]  # (transition, field)
    failed_requires: tuple[str, ...]


@attrs.frozen(slots=True)
class SeamResult:
    """Deleting interior transition ``k``: the deletion identity in exact rationals
    (``delta_exact``) and, when the splice compiled, the pipeline arm."""

    k: int
    transition: str
    delta: float
    delta_exact: Fraction
    delta_refold: Fraction
    identity_holds: bool
    symbolically_verified: bool
    threshold: float | None
    R_next: float
    sign_matches: bool | None
    removed_cost: float
    retained_value: float
    silence_rewarded: bool
    pipeline: SeamPipeline | None


@attrs.frozen(slots=True)
class RouteSeamsResult:
    """The seams of one compiled route."""

    name: str
    file: str
    policy: PolicyInfo
    ungated_score: float  # before coverage, as `RouteResult.ungated_score` (JSON: `score`)
    verdict: Verdict
    seams: tuple[SeamResult, ...]


@attrs.frozen(slots=True)
class SeamsSummary:
    """Counts over every seam of every route (the cohort summary)."""

    routes: int
    deletions: int
    identity_holds: int
    symbolically_verified: int
    sign_checked: int
    sign_matches: int
    routes_with_rewarded_deletion: int
    rewarded_deletions: int
    spliced_refused: int
    routes_all_splices_refused: int  # of the routes with an admissible deletion
    honest_suspended: int
    routes_without_deletion: int  # no admissible deletion, so no splice to refuse: reported apart


@attrs.frozen(slots=True)
class ExperimentMode:
    """Experiment A under one mode (``ungated``, ``gate`` or ``dock``)."""

    mode: str
    relative_wins: int
    fundability: int


@attrs.frozen(slots=True)
class ExperimentResult:
    """The paper's experiment A with GATE and DOCK, and the effect of delta-indexed floors."""

    modes: tuple[ExperimentMode, ...]
    splices: int
    beats_with_delta_floors: int
    beats_without_delta_floors: int


@attrs.frozen(slots=True)
class SeamsResult:
    """What `analyse_seams` returns: the seam table of every compiled route, and its summary."""

    routes: tuple[RouteSeamsResult, ...]
    summary: SeamsSummary
    experiment: ExperimentResult | None
    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]
    _document: Mapping[str, Any] = attrs.field(alias="_document", repr=False, eq=False, hash=False)

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        """The exit code of `pcsc seams`: 1 for errors, else 0."""
        return exits.exit_code(self.diagnostics)

    def route(self, name: str) -> RouteSeamsResult:
        """The seams of the route called ``name``; KeyError if it did not compile."""
        for r in self.routes:
            if r.name == name:
                return r
        raise KeyError(f"no compiled route {name!r}")

    def to_json(self) -> dict[str, Any]:
        """The `seams` document (`pcsc seams --format json`): the envelope, then
        ``routes``, ``summary``, ``experiment`` (when asked for) and ``diagnostics``."""
        import copy

        return copy.deepcopy(dict(self._document))


def analyse_seams(
    source: Source,
    *,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
    experiment: bool = False,
) -> SeamsResult:
    """Compile ``source`` (as `compile` does) and analyse every interior seam of every
    route: the deletion identity (checked exactly, and symbolically with sympy) and the
    spliced route recompiled. With ``experiment``, also run experiment A. Returns a
    `SeamsResult`."""
    from pcsc.analysis.seams.analysis import seams_of
    from pcsc.analysis.seams.experiment import experiment as run_experiment
    from pcsc.analysis.seams.experiment import summarise
    from pcsc.render.diagnostics import to_json
    from pcsc.render.packet import seams_packet

    session = _session(policy_path, lib_path, coverage)
    compiled = session.compile_routes(_load(source, session))
    results = [r for r in (seams_of(c, session) for c in compiled) if r is not None]  # else PCSC-E311
    summary = summarise(results)
    exp = run_experiment(results, session) if experiment else None
    public, internal = _diagnostics(session)
    payload = _payload(seams_packet(results, summary, exp))
    payload["diagnostics"] = [to_json(d) for d in condense(internal)]
    document = envelope("seams", payload, session.inputs)
    return SeamsResult(
        routes=tuple(_route_seams(r) for r in results),
        summary=SeamsSummary(**attrs.asdict(summary)),
        experiment=None if exp is None else ExperimentResult(
            tuple(ExperimentMode(m.mode, m.relative_wins, m.fundability) for m in exp.modes),
            exp.splices, exp.beats_with_floors, exp.beats_without_floors,
        ),
        diagnostics=public,
        inputs=_inputs(session),
        _document=document,
    )


def _route_seams(r: RouteSeams) -> RouteSeamsResult:
    c = r.compiled
    return RouteSeamsResult(c.route.name, c.route.file, _policy_info(c), c.numbers.score, c.decision.verdict,
                            tuple(_seam(s) for s in r.seams))


def _seam(s: Seam) -> SeamResult:
    i, arm = s.identity, s.pipeline
    pipeline = None
    if arm is not None:
        pipeline = SeamPipeline(
            delta=arm.delta, drift=bool(arm.drifted), drifted=tuple(str(d) for d in arm.drifted),
            verdict=_verdict(arm.verdict),
            gate=arm.gate.verdict, dock=arm.dock.verdict, dock_score=arm.dock.score,
            ungated_score=arm.ungated_score, uncovered=arm.uncovered, failed_requires=arm.failed_requires,
        )
    return SeamResult(
        k=s.k, transition=s.transition, delta=float(i.delta_formula), delta_exact=i.delta_formula,
        delta_refold=i.delta_refold, identity_holds=i.identity_holds,
        symbolically_verified=s.symbolically_verified,
        threshold=None if i.threshold is None else float(i.threshold), R_next=float(i.R_next),
        sign_matches=i.sign_matches, removed_cost=float(i.removed_cost), retained_value=float(i.retained_value),
        silence_rewarded=i.silence_rewarded, pipeline=pipeline,
    )


def _verdict(value: str) -> Verdict:
    for v in VERDICTS:
        if value == v:
            return v
    raise ValueError(f"not a verdict: {value!r}")


# ---------------------------------------------------------------------- explain, sensitivity, redteam, report
@attrs.frozen(slots=True)
class AnalysisResult:
    """What `explain`, `sensitivity` and `redteam` return: the command's ``kind``, its
    ``data`` (the payload of its JSON document without the envelope and the
    diagnostics; None when bad input left nothing to analyse), its ``text`` report and
    the diagnostics."""

    kind: str
    data: Mapping[str, Any] | None = attrs.field(eq=False, hash=False)
    text: str | None
    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]
    _document: Mapping[str, Any] = attrs.field(alias="_document", repr=False, eq=False, hash=False)

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        """The command's exit code: 1 for errors, else 0."""
        return exits.exit_code(self.diagnostics)

    def to_json(self) -> dict[str, Any]:
        """The document `pcsc <kind> --format json` prints: the envelope, the payload,
        ``diagnostics``."""
        import copy

        return copy.deepcopy(dict(self._document))


def _analysis(kind: str, session: Session, payload: Mapping[str, Any] | None, text: str | None) -> AnalysisResult:
    from pcsc.render.diagnostics import to_json

    public, internal = _diagnostics(session)
    document = {**(payload or {}), "diagnostics": [to_json(d) for d in condense(internal)]}
    data = None if payload is None or all(v is None for v in payload.values()) else dict(payload)
    return AnalysisResult(kind, data, text, public, _inputs(session), _envelope(kind, document, session))


def _chosen(routes: list[Route], name: str | None, session: Session) -> Route | None:
    """The route called ``name`` (or the only route); None when input errors leave it
    out. A name that matches no route of clean input, or several routes and no name, is
    a programming error (ValueError), as on the command line (a usage error)."""
    if not routes:
        return None
    if name is None:
        if len(routes) > 1:
            raise ValueError("the source holds several routes; choose one with route=: "
                             + ", ".join(r.name for r in routes))
        return routes[0]
    for r in routes:
        if r.name == name:
            return r
    if session.diags.has_errors:
        return None
    raise ValueError(f"no route {name!r}; routes: {', '.join(r.name for r in routes)}")


def explain(
    source: Source,
    *,
    route: str | None = None,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> AnalysisResult:
    """Every number of ``route`` (or the only route of ``source``), rule by rule, and the
    coverage decision behind its verdict, as `pcsc explain` prints it (``data["explain"]``;
    None when the route has errors, then read ``diagnostics``)."""
    from pcsc.analysis import explain as _explain

    session = _session(policy_path, lib_path, coverage)
    chosen = _chosen(_load(source, session), route, session)
    compiled = session.compile_route(chosen) if chosen is not None else None
    payload = {"explain": _explain.to_json(compiled) if compiled else None}
    return _analysis("explain", session, payload, _explain.to_text(compiled) if compiled else None)


def sensitivity(
    source: Source,
    *,
    route: str | None = None,
    rivals: PathLike | Iterable[PathLike] = (),
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> AnalysisResult:
    """The margins of ``route`` (or the only route of ``source``), as `pcsc sensitivity`
    finds them: for each prior, floor, evidence weight, gain, cost item and vision value,
    the change that flips the score's sign, the verdict, the bucket, the binding
    transition or the rank among the other routes of its file and the routes of
    ``rivals`` (``data["sensitivity"]``; None on input errors)."""
    from pcsc.analysis.sensitivity import report_json, report_text
    from pcsc.analysis.sensitivity import sensitivity as _sensitivity

    session = _session(policy_path, lib_path, coverage)
    routes = _load(source, session)
    chosen = _chosen(routes, route, session)
    compiled = session.compile_route(chosen) if chosen is not None else None
    if compiled is None or session.diags.has_errors:
        return _analysis("sensitivity", session, {"sensitivity": None}, None)
    me = (compiled.route.name, Path(compiled.route.file).resolve())
    others = [r for r in routes if r.name != compiled.route.name and r.file == compiled.route.file]
    more = [os.fspath(p) for p in _paths(rivals, "rivals")]
    if more:
        known = {(r.name, Path(r.file).resolve()) for r in others}
        loaded = session.load_paths(more)
        if session.diags.has_errors:
            return _analysis("sensitivity", session, {"sensitivity": None}, None)
        others += [r for r in loaded if (r.name, Path(r.file).resolve()) not in {me, *known}]
    found = _sensitivity(compiled, session, others)
    return _analysis("sensitivity", session, {"sensitivity": report_json(found)}, report_text(found))


def redteam(
    source: Source,
    *,
    route: str | None = None,
    max_edits: int | None = None,
    depth: Literal[1, 2] = 1,
    reclass: Literal["all", "category", "none"] = "all",
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> AnalysisResult:
    """Search the edits that raise each route's score (only ``route``'s when given),
    recompiled through the whole pipeline, and report which of them coverage catches,
    as `pcsc redteam` does (``data``: ``routes``, ``summary`` and the settings).
    ``max_edits`` (the command's default when None) bounds the edited routes compiled per
    route; ``depth`` 2 also tries pairs of score-raising edits."""
    from pcsc.analysis.redteam import DEFAULT_MAX_EDITS, report_json, report_text
    from pcsc.analysis.redteam import redteam as _redteam

    edits = DEFAULT_MAX_EDITS if max_edits is None else max_edits
    if edits < 1 or depth not in (1, 2) or reclass not in ("all", "category", "none"):
        raise ValueError("max_edits must be at least 1, depth 1 or 2, reclass 'all', 'category' or 'none'")
    session = _session(policy_path, lib_path, coverage)
    routes = _load(source, session)
    if route is not None:
        chosen = _chosen(routes, route, session)
        routes = [] if chosen is None else [chosen]
    reports = [_redteam(c, session, edits, depth, reclass) for c in session.compile_routes(routes)]
    payload = report_json(reports, edits, depth, reclass)
    return _analysis("redteam", session, payload, report_text(reports) if reports else None)


@attrs.frozen(slots=True)
class ReportResult:
    """What `report` returns: the HTML page `pcsc report` writes (None when no route
    compiled: PCSC-E751 in ``diagnostics``) and the diagnostics. The page has no JSON
    form, as on the command line."""

    html: str | None
    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]

    @property
    def ok(self) -> bool:
        """True when there are no errors."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        """The exit code of `pcsc report`: 1 for errors, else 0."""
        return exits.exit_code(self.diagnostics)


def report(
    source: Source,
    *,
    route: str | None = None,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
    coverage: CoverageSetting = None,
) -> ReportResult:
    """The compiled routes of ``source`` (only ``route`` when given) as the self-contained
    HTML page `pcsc report` writes, the same bytes. Needs Jinja2 (the extra
    ``pcsc[report]``): without it, raises `pcsc.base.extras.ExtraMissing` before any work."""
    from pcsc.analysis.rank import RankKeyConflict
    from pcsc.diagnostics.messages import E751_NO_ROUTES
    from pcsc.diagnostics.model import Span
    from pcsc.render.report import build, render_html, require_jinja2

    require_jinja2()
    session = _session(policy_path, lib_path, coverage)
    routes = _load(source, session)
    if route is not None:
        chosen = _chosen(routes, route, session)
        routes = [] if chosen is None else [chosen]
    compiled = session.compile_routes(routes)
    page = None
    if not compiled:
        text = isinstance(source, str) and _is_route_text(source)
        shown = [STRING_NAME] if text else [os.fspath(p) for p in _paths(source, "source")]
        session.diags.diag(E751_NO_ROUTES, Span.file_only(shown[0]), what="report", files=", ".join(shown))
    else:
        try:
            page = render_html(build(compiled, session))
        except RankKeyConflict as exc:
            raise ValueError(str(exc)) from None
    return ReportResult(page, _diagnostics(session)[0], _inputs(session))


# ---------------------------------------------------------------------- fmt
@attrs.frozen(slots=True)
class FormattedFile:
    """A file (or route text) laid out as `pcsc fmt` would: ``status`` is ``unchanged``,
    ``changed``, ``error`` (it does not parse: see the diagnostics) or ``refused``
    (formatting would change its meaning, a bug in pcsc: ``reason`` says how);
    ``text`` is the canonical text (None on error or refusal)."""

    path: str
    status: Literal["unchanged", "changed", "error", "refused"]
    text: str | None
    reason: str | None = None


@attrs.frozen(slots=True)
class FmtResult:
    """What `fmt` returns: each input in the canonical layout, and the diagnostics.
    Nothing is written: write ``file.text`` back where ``file.status == "changed"``."""

    files: tuple[FormattedFile, ...]
    diagnostics: tuple[Diagnostic, ...]
    inputs: tuple[Input, ...]
    _document: Mapping[str, Any] = attrs.field(alias="_document", repr=False, eq=False, hash=False)

    @property
    def ok(self) -> bool:
        """True when there are no errors and nothing was refused."""
        return not any(d.severity == "error" for d in self.diagnostics) and all(
            f.status != "refused" for f in self.files)

    @property
    def changed(self) -> bool:
        """True when some input is not in the canonical layout."""
        return any(f.status == "changed" for f in self.files)

    @property
    def exit_code(self) -> int:
        """The exit code of `pcsc fmt --check`: 70 when a file was refused, else 1 for
        errors or a file that would change, else 0."""
        if any(f.status == "refused" for f in self.files):
            return exits.EXIT_INTERNAL
        return exits.EXIT_INPUT if self.changed or not self.ok else exits.EXIT_OK

    def to_json(self) -> dict[str, Any]:
        """The document `pcsc fmt --check --format json` prints for the same input (route
        text: what `pcsc fmt --check --format json -` prints for it on standard input,
        shown as ``<string>`` instead of ``<stdin>``)."""
        import copy

        return copy.deepcopy(dict(self._document))


def fmt(
    source: Source,
    *,
    policy_path: PathLike | Iterable[PathLike] = (),
    lib_path: PathLike | Iterable[PathLike] = (),
) -> FmtResult:
    """Lay out ``source`` (route or library text, a ``.route``/``.obl`` file, a folder of
    them searched recursively, or several paths; the str rule of `compile`) in the
    canonical layout, as `pcsc fmt` does, checking first that the comments, the parse
    tree and the lowered IR stay the same. Writes nothing; returns a `FmtResult`."""
    from pcsc.compiler.meaning import semantics
    from pcsc.compiler.session import expand_inputs
    from pcsc.lang.fmt import check_format, format_source, opens_a_library
    from pcsc.render.diagnostics import to_json

    session = _session(policy_path, lib_path, None)
    libraries, policies = session.lib_path, _folders(policy_path, "policy_path")
    if isinstance(source, str) and _is_route_text(source):
        items: list[tuple[Path, str, str | None]] = [(Path.cwd() / STRING_NAME, STRING_NAME, source)]
    else:
        names = [os.fspath(p) for p in _paths(source, "source")]
        items = [(path, shown, session.read(path, shown)) for path, shown in
                 expand_inputs(names, session.diags, (".route", ".obl"))]
    files = []
    for path, shown, text in items:
        if text is None:
            files.append(FormattedFile(shown, "error", None))
            continue
        session.inputs.append((shown, sha256_hex(text)))
        formatted = format_source(text, shown, session.diags)
        if formatted is None:
            files.append(FormattedFile(shown, "error", None))
        elif formatted == text:
            files.append(FormattedFile(shown, "unchanged", formatted))
        else:
            library = opens_a_library(text) if shown == STRING_NAME else shown.endswith(".obl")

            def meaning(t: str, shown: str = shown, library: bool = library, folder: Path = path.parent) -> Any:
                return semantics(t, shown, library, folder, libraries, policies)

            reason = check_format(text, formatted, shown, meaning)
            files.append(FormattedFile(shown, "changed", formatted) if reason is None
                         else FormattedFile(shown, "refused", None, reason))
    public, internal = _diagnostics(session)
    listed = [{"path": f.path, "status": f.status, **({"reason": f.reason} if f.reason else {})} for f in files]
    document = _envelope("fmt", {"files": listed, "diagnostics": [to_json(d) for d in condense(internal)]}, session)
    return FmtResult(tuple(files), public, _inputs(session), document)


# ---------------------------------------------------------------------- policies
@attrs.frozen(slots=True)
class Policy:
    """A loaded policy: its identity, where it was read, and the merged document (the
    file with what it ``extends`` merged in, as `pcsc policy show` prints it)."""

    id: str
    version: str
    sha256: str
    path: str
    document: Mapping[str, Any] = attrs.field(eq=False, hash=False)

    @property
    def ref(self) -> str:
        """``id@version``, as routes pin it."""
        return f"{self.id}@{self.version}"


def load_policy(ref_or_path: PathLike, *, policy_path: PathLike | Iterable[PathLike] = ()) -> Policy:
    """Load, merge and validate a policy given as ``id@version`` (searched in
    ``policy_path``, then the shipped policies) or as a path to a ``.toml`` file filed
    as ``policies/<id>/<version>.toml``; return it as a `Policy`. Raises `PolicyError`
    (with path-addressed ``messages``) when the policy cannot be found or is invalid."""
    from pcsc.policy.load import _jsonable

    if not isinstance(ref_or_path, (str, os.PathLike)):
        raise TypeError(f"ref_or_path must be a policy reference or a path, not {type(ref_or_path).__name__}")
    roots = _folders(policy_path, "policy_path")
    target = os.fspath(ref_or_path)
    path = Path(target)
    if isinstance(ref_or_path, os.PathLike) or target.endswith(".toml") or os.path.isfile(path):
        loaded = PolicyStore([path.parent.parent, *roots]).load_path(path)
    else:
        loaded = PolicyStore(roots).load_ref(target)
    return Policy(loaded.policy.id, loaded.policy.version, loaded.sha256, loaded.path, _jsonable(loaded.resolved))


# ---------------------------------------------------------------------- the ledger
@attrs.frozen(slots=True)
class LedgerEntry:
    """A frozen forecast as the ledger holds it. ``payload`` is the stored document:
    ``{"packet": <the route's compile packet>, "rank": <its rank when frozen>, "mode":
    <prospective|retrospective>}``."""

    seq: int
    route: str
    file: str
    policy: PolicyInfo
    pcsc_version: str
    inputs: tuple[Input, ...]
    frozen_at: str  # UTC, ISO 8601 to the second
    payload: Mapping[str, Any] = attrs.field(eq=False, hash=False)
    payload_sha256: str
    prev_sha256: str
    entry_sha256: str

    @property
    def verdict(self) -> str | None:
        """The verdict frozen with the route."""
        value = self.payload.get("packet", {}).get("verdict")
        return value if isinstance(value, str) else None

    @property
    def score(self) -> float | None:
        """The released score frozen with the route (None when GATE withheld it)."""
        value = self.payload.get("packet", {}).get("score")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def rank(self) -> int | None:
        """The route's rank among the routes frozen with it."""
        value = self.payload.get("rank", {}).get("rank")
        return value if isinstance(value, int) else None

    @property
    def mode(self) -> str:
        """``"prospective"`` or ``"retrospective"``: how the forecast was frozen (entries
        frozen before modes were recorded are prospective)."""
        from pcsc.forecast.freeze import entry_mode

        return entry_mode(self.payload)

    @classmethod
    def _of(cls, e: Entry) -> LedgerEntry:
        document = e.document()
        return cls(
            seq=e.seq, route=e.route, file=e.file, policy=PolicyInfo(e.policy.id, e.policy.version, e.policy.sha256),
            pcsc_version=e.pcsc_version, inputs=tuple(Input(p, h) for p, h in e.inputs), frozen_at=e.frozen_at,
            payload=document if isinstance(document, dict) else {}, payload_sha256=e.payload_sha256,
            prev_sha256=e.prev_sha256, entry_sha256=e.entry_sha256,
        )


@attrs.frozen(slots=True)
class LedgerVerification:
    """What `Ledger.verify` found: ``ok`` when both hash chains are intact. ``problems``
    name the first bad row of each table (``"entries seq 3: …"``) and missing guards."""

    ok: bool
    entries: int
    outcomes: int
    entries_head: str
    outcomes_head: str
    problems: tuple[str, ...]


class Ledger:
    """An open forecast ledger (an append-only, hash-chained SQLite file). Open it with
    `open_ledger`; use it as a context manager, or call `close`."""

    __slots__ = ("_ledger",)

    def __init__(self, ledger: _Ledger) -> None:
        self._ledger = ledger

    @property
    def path(self) -> Path:
        """Where the ledger file is."""
        return self._ledger.path

    def freeze(self, result: Result, *, frozen_at: dt.datetime | None = None,
               mode: str = "prospective") -> tuple[LedgerEntry, ...]:
        """Rank the routes of ``result`` together and store each one's packet and rank in
        one transaction, as `pcsc freeze` does; return the entries written, in the
        order of ``result.routes``. ``frozen_at`` (UTC; now by default) is the time
        stamp stored. ``mode`` is ``"prospective"`` (the default) or
        ``"retrospective"`` (`pcsc freeze --retrospective`: every route's as_of must be
        before the freeze date, and `evaluate` grades the forecast only against
        outcomes recorded after it was frozen); each entry records it. Raises
        `LedgerError`, storing nothing, when ``result`` has errors, holds no route,
        mixes policies whose rank keys differ, or, in retrospective mode, holds a route
        whose as_of is not in the past, when the ledger does not verify, or when a row
        is not read back as written; `ValueError` for an unknown mode."""
        from pcsc.analysis.rank import RankKeyConflict, choose_key, rank
        from pcsc.forecast.freeze import MODES, freeze_records, in_input_order, not_in_the_past

        if not isinstance(result, Result):
            raise TypeError(f"freeze takes a pcsc.Result, not {type(result).__name__}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}, not {mode!r}")
        if not result.ok:
            raise LedgerError("nothing frozen: the input has errors")
        compiled = list(result._compiled)
        if not compiled:
            raise LedgerError("nothing to freeze: the result holds no route")
        try:
            choice = choose_key(compiled)
        except RankKeyConflict as exc:
            raise LedgerError(f"nothing frozen: {exc}") from None
        assert choice.key is not None  # there are routes
        if mode == "retrospective":
            if frozen_at is not None and frozen_at.tzinfo is None:
                raise ValueError("frozen_at must be timezone-aware (UTC)")
            today = (frozen_at.astimezone(dt.UTC) if frozen_at is not None else dt.datetime.now(dt.UTC)).date()
            late = not_in_the_past(compiled, today)
            if late:
                names = ", ".join(f"{c.route.name} (as_of {c.route.as_of})" for c in late)
                raise LedgerError(f"nothing frozen: a retrospective freeze takes routes whose as_of is in the past "
                                  f"(before {today}); not {names}; freeze them in prospective mode")
        ranked = in_input_order(compiled, rank(compiled, choice.key))
        records = freeze_records(ranked, "retrospective" if mode == "retrospective" else "prospective")
        entries = self._ledger.append_forecasts(records, inputs=result._read, frozen_at=frozen_at)
        return tuple(LedgerEntry._of(e) for e in entries)

    def entries(self, route: str | None = None) -> tuple[LedgerEntry, ...]:
        """The frozen forecasts, oldest first; only those of ``route`` when given."""
        try:
            return tuple(LedgerEntry._of(e) for e in self._ledger.entries(route))
        except ValueError as exc:  # a row edited behind the ledger's back
            raise LedgerError(f"{self.path}: cannot read the ledger: {exc}; verify() names the bad row") from None

    def __iter__(self) -> Iterator[LedgerEntry]:
        return iter(self.entries())

    def verify(self) -> LedgerVerification:
        """Recompute every hash and link of both chains; return what was found."""
        v = self._ledger.verify()
        return LedgerVerification(v.ok, v.entries, v.outcomes, v.entries_head, v.outcomes_head,
                                  tuple(str(p) for p in v.problems))

    def close(self) -> None:
        """Close the file."""
        self._ledger.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<pcsc.Ledger {self.path}>"


def open_ledger(path: PathLike = DEFAULT_PATH, *, create: bool = True) -> Ledger:
    """Open the ledger at ``path`` (``.pcsc/ledger.sqlite`` by default, as `pcsc freeze`
    uses); with ``create``, make it and its folders when absent. Returns a `Ledger`.
    Raises `LedgerError` for a missing ledger (without ``create``), a file that is not
    a PCSC ledger, or a newer schema."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    from pcsc.forecast.stores import open_ledger as _open

    return Ledger(_open(path if isinstance(path, str) else Path(path), create=create))  # str: postgresql://
