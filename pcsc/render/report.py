"""`pcsc report`: compiled routes as one self-contained HTML page.

The page holds, per route, the header (verdict, score, policy), the route picture
(`pcsc.render.graph`), a waterfall of the staged fold, the coverage matrix
(transition × field), the undischarged obligations with their failing `require`
lines, and the seam table (`pcsc.analysis.seams.analysis`); for several routes, a summary
of the cohort (`pcsc.render.summary`: verdicts, buckets, the scores' histogram), a table
of contents and the ranking (`pcsc.analysis.rank`) come first, and the sections follow
in rank order. Every number comes from the compiled routes;
this module only arranges them into a view model, and the Jinja2 template
`pcsc/render/templates/report.html.j2` lays it out with inline CSS and inline SVG: no
script, no network, no external asset. The same routes give the same bytes.

Jinja2 is an optional extra (the extra ``pcsc[report]``); it is imported only
to render, through `pcsc.base.extras`, which says what to install when it is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from pcsc._version import __version__
from pcsc.analysis.rank import TIE_KEY_TEXT, Ranked, choose_key, decided_text, rank, sequence_text
from pcsc.analysis.seams.analysis import RouteSeams, analyse
from pcsc.base.escape import escape_controls
from pcsc.base.extras import require
from pcsc.base.humanize import compact, money, points, probability, significant
from pcsc.compiler.session import Compiled, Session, gate_and_dock
from pcsc.coverage import Coverage, payoff_credits
from pcsc.render.graph import route_graph, to_svg
from pcsc.render.summary import Summary, summarise
from pcsc.render.text import mode_text

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html.j2"


def require_jinja2() -> Any:
    """The ``jinja2`` module, or `pcsc.base.extras.ExtraMissing` naming the extra to install."""
    return require("report", "pcsc report")


# ---------------------------------------------------------------------- the view model
@attrs.frozen
class Bar:
    """One bar of the waterfall, laid out: it runs from ``start`` to ``end`` (USD)."""

    label: str  # "launch"
    detail: str  # "c 99,000 × reach 1.0000"
    start: float
    end: float
    kind: str  # cost | value | total | docked
    value: str  # the signed amount, formatted
    y: int  # SVG coordinates
    x: str
    width: str
    connector: str | None  # the x of the dashed line down to the next bar


@attrs.frozen
class Stage:
    """One row of the fold table: what a stage costs and what it keeps."""

    name: str
    p: str
    reach: str
    c: str
    bound_by: str
    expected_cost: str  # reach · c
    R_next: str
    keep: str  # p · d · R_next (d = 1 without a discount)
    R: str  # R_i = −c + p · d · R_next (max(0, ·) under the option to stop); R at the source state on a graph


@attrs.frozen
class Waterfall:
    bars: tuple[Bar, ...]
    stages: tuple[Stage, ...]
    height: int
    zero: str  # the x of 0 USD
    note: str
    keep_rule: str = "keep p · R next"  # the stage table's headers, as the policy's fold writes them
    R_rule: str = "Rᵢ = −c + p · R next"


@attrs.frozen
class Cell:
    state: str  # covered | uncovered | unmaterial | unchanged | off
    text: str  # "adoption", "uncovered", "not material"
    change: str  # "0 → 500"


@attrs.frozen
class CoverageRow:
    transition: str
    cells: tuple[Cell, ...]


@attrs.frozen
class Failure:
    where: str  # "obligations/venture.obl:12"
    require: str
    reason: str


@attrs.frozen
class Tried:
    obligation: str
    claimed: bool
    holds: bool
    failures: tuple[Failure, ...]


@attrs.frozen
class Undischarged:
    transition: str
    field: str
    change: str
    tried: tuple[Tried, ...]


@attrs.frozen
class SeamRow:
    k: int
    deleted: str
    delta: str
    identity: str
    threshold: str
    R_next: str
    silence: bool
    pipeline_delta: str
    verdict: str
    uncovered: str
    failed: str
    removed_payoff: str = "—"  # reach · v_k, the payoff of the state the deleted step leaves (routes with payoffs)


@attrs.frozen
class RouteReport:
    anchor: str  # the section id, unique in the page
    name: str
    title: str | None
    file: str
    as_of: str
    policy: str
    sha256: str
    verdict: str
    verdict_kind: str  # ok | refused | docked | off
    coverage_mode: str
    score: str
    value: str
    criteria: str
    eligible: bool
    gates: tuple[tuple[str, bool], ...]
    binding: str
    picture: str  # inline SVG, escaped by `pcsc.render.graph`
    waterfall: Waterfall
    fields: tuple[str, ...]
    matrix: tuple[CoverageRow, ...]
    coverage_applied: bool
    undischarged: tuple[Undischarged, ...]
    seams: tuple[SeamRow, ...]
    seams_note: str | None
    honest_gate: str
    payoffs: tuple[str, ...] = ()  # each payoff credited along the way, and what DOCK does with it
    unit: str = "USD"  # the fold's unit, as amounts are printed beside it


@attrs.frozen
class RankRow:
    rank: str
    anchor: str
    route: str
    file: str
    eligible: bool
    gates: tuple[tuple[str, bool], ...]
    verdict: str
    score: str  # the released score, or "withheld" (a refused route is ordered by T)
    T: str
    bucket: str
    decided_by: str  # what put it below the row above (`pcsc.analysis.rank.decided_text`), with
    # the value of a tie-break key the table has no column for


@attrs.frozen
class Ranking:
    key: str
    policies: tuple[str, ...]
    warnings: tuple[str, ...]
    rows: tuple[RankRow, ...]
    sequence: str  # the tie-break sequence in words (`pcsc.analysis.rank.sequence_text`)
    unit: str = "USD"  # the routes' fold unit (each route's score says its own when they differ)


@attrs.frozen
class Entry:
    """One line of the table of contents: a route's section, in the page's order."""

    anchor: str
    rank: str  # "3=" under a tie; "" without a ranking
    route: str
    verdict: str
    verdict_kind: str
    score: str


@attrs.frozen
class Report:
    version: str
    files: tuple[str, ...]
    routes: tuple[RouteReport, ...]
    ranking: Ranking | None  # only for several routes
    summary: Summary | None = None  # only for several routes
    contents: tuple[Entry, ...] = ()  # only for several routes


# ---------------------------------------------------------------------- building it
def build(compiled: Sequence[Compiled], session: Session) -> Report:
    """The view model of ``compiled``: for several routes the ranking, and the routes'
    sections in its order (in the given order when the routes have no common key).
    Raises `pcsc.analysis.rank.RankKeyConflict` when their policies name different keys."""
    anchors = [f"route-{i}-{c.route.name}" for i, c in enumerate(compiled)]
    routes = tuple(_route(c, session, i, anchors[i]) for i, c in enumerate(compiled))
    ranking = _ranking(compiled, anchors) if len(compiled) > 1 else None
    ranks: dict[str, str] = {}
    if ranking is not None:
        place = {row.anchor: i for i, row in enumerate(ranking.rows)}
        routes = tuple(sorted(routes, key=lambda r: place[r.anchor]))
        ranks = {row.anchor: row.rank for row in ranking.rows}
    files = tuple(dict.fromkeys(c.route.file for c in compiled))
    if len(compiled) < 2:
        return Report(__version__, files, routes, ranking)
    units = sorted({c.policy.policy.units.label for c in compiled})
    summary = summarise(compiled, units[0] if len(units) == 1 else "each route's unit")
    contents = tuple(Entry(r.anchor, ranks.get(r.anchor, ""), r.name, r.verdict, r.verdict_kind, r.score)
                     for r in routes)
    return Report(__version__, files, routes, ranking, summary, contents)


def render_html(report: Report) -> str:
    """The page: the template filled with ``report`` (autoescaped, control characters of
    the inputs escaped too; deterministic)."""
    jinja2 = require_jinja2()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        finalize=lambda value: escape_controls(value) if isinstance(value, str) else value,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    page: str = env.get_template(TEMPLATE).render(report=report)
    return page


def _verdict_kind(c: Compiled) -> str:
    d = c.decision
    if d.score is None:
        return "refused"
    if d.docked:
        return "docked"
    return "off" if d.verdict == "ungated" else "ok"


def _score(c: Compiled) -> str:
    d, n = c.decision, c.numbers
    unit = c.policy.policy.units.label
    if d.score is None:
        return f"withheld (ungated {money(n.score)} {unit})"
    if d.docked:
        return f"{money(d.score)} {unit} (docked; ungated {money(n.score)} {unit})"
    return f"{money(d.score)} {unit}"


def _route(c: Compiled, session: Session, index: int, anchor: str) -> RouteReport:
    n, r, d = c.numbers, c.route, c.decision
    b = n.transitions[n.binding]
    picture = to_svg([route_graph(c, index)]).split("\n", 1)[1]  # inline: no XML declaration
    _, _, coverage = gate_and_dock(c, "report")
    seams = analyse(c, session)
    return RouteReport(
        unit=c.policy.policy.units.label,
        anchor=anchor,
        name=r.name,
        title=r.title,
        file=r.file,
        as_of=r.as_of.isoformat(),
        policy=c.policy.ref,
        sha256=c.policy.sha256,
        verdict=d.verdict,
        verdict_kind=_verdict_kind(c),
        coverage_mode=mode_text(c),
        score=_score(c),
        value=f"{money(n.value)} {c.policy.policy.units.label}",
        criteria="—" if n.criteria_score is None else f"{points(n.criteria_score)} ({n.bucket})",
        eligible=n.eligible,
        gates=tuple((g.id, g.passed) for g in n.gates),
        binding=f"{b.name} (U {significant(b.U, 4)}, D {money(b.D)})"
        + ("" if n.tie_note is None else f" — {n.tie_note}"),
        picture=picture,
        waterfall=_waterfall(c),
        fields=tuple(f.name for f in r.fields),
        matrix=_matrix(c, coverage),
        coverage_applied=c.coverage is not None,
        undischarged=_undischarged(coverage),
        seams=tuple(_seam_rows(seams)),
        seams_note=None if seams.seams else (
            "no admissible deletion: no transition of this graph route leaves a state with one transition in and "
            "one out for a state that is neither a join nor the end state" if r.shape is not None
            else f"no admissible deletion (n = {len(r.transitions)}; seams need n ≥ 3)"
        ),
        honest_gate=seams.honest_gate.verdict,
        payoffs=tuple(
            f"{p.state}: {money(p.credited)} USD on {p.transition}"
            + ("" if p.bound_by == "route" else f" (written {money(p.written)}; the policy's cap)")
            + ("" if p.covered else f"; DOCK removes it: {p.reason}")
            for p in payoff_credits(n, c.coverage)
        ),
    )


def _signed(x: float) -> str:
    return ("+" if x >= 0 else "−") + money(abs(x))


# the waterfall's geometry (SVG user units; the picture is 1000 wide and scales down)
BAR_X, BAR_W, ROW_H = 230.0, 600.0, 38


def _n(x: float) -> str:
    """A coordinate: one decimal at most, never `-0`."""
    s = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _waterfall(c: Compiled) -> Waterfall:
    """The staged fold unrolled: R_0 = Σ −reach_i·c_i + reach_V·V. Each stage's cost counts
    as much as the (discounted) chance of reaching it; V counts as much as the chance of
    reaching the vision: Π p under the paper's fold, Π p·d with a discount, and 0 for a
    stage the planner does not walk to under the option to stop (docs/folds.md). On a
    graph, reach is the discounted chance of reaching the transition's source state, and
    reach_V the product of each main-line block's P·D (docs/graphs.md). Under DOCK the
    released score drops V (R_n = 0)."""
    n, d = c.numbers, c.decision
    spans: list[tuple[str, str, float, float, str]] = []
    running = 0.0
    walking = True  # under the option to stop: the planner pays this stage
    graph = c.route.shape is not None
    leaving = {t.source: t for t in reversed(n.transitions)}  # on a graph: a state's reach is that of a step from it
    credited: set[str] = set()
    for t in n.transitions:
        walking = walking and not t.stops
        cost = t.reach * t.cost.c if walking else 0.0
        detail = (f"c {money(t.cost.c)} × reach {probability(t.reach)}" if walking
                  else "not paid: the planner stops before it")
        spans.append((t.name, detail, running, running - cost, "cost"))
        running -= cost
        if graph and t.payoff is not None and walking and t.target not in credited and t.target in leaving:
            # on a graph a payoff counts as much as the chance of reaching its state (a join's: every branch), once
            credited.add(t.target)
            reached = leaving[t.target].reach
            gain = reached * t.payoff.credited
            spans.append((f"payoff {t.payoff.state}", f"v {money(t.payoff.credited)} × reach of "
                          f"{t.payoff.state} {probability(reached)}", running, running + gain, "value"))
            running += gain
        elif not graph and t.payoff is not None and walking:  # credited with the stage's success
            gain = t.reach * t.p * t.d * t.payoff.credited
            spans.append((f"payoff {t.payoff.state}", f"v {money(t.payoff.credited)} × reach of "
                          f"{t.payoff.state} {probability(t.reach * t.p * t.d)}", running, running + gain, "value"))
            running += gain
    if n.fold.is_default:
        kept = n.flat_product * n.value
        detail = f"V {compact(n.value)} × Π p {significant(n.flat_product, 4)}"
    else:  # the value's share of the fold: R_0 less the costs above
        kept = n.score - running
        share = kept / n.value if n.value else 0.0
        detail = (f"V {compact(n.value)} × reach of the vision {significant(share, 4)}"
                  + ("" if walking else " (the planner stops before it)"))
    spans.append(("value V", detail, running, running + kept, "value"))
    spans.append(("score R₀", "the staged fold, ungated", 0.0, n.score, "total"))
    note = "GATE releases this score: every material change is covered"
    if d.docked and d.score is not None:
        spans.append(("docked R₀", "V removed (R_n = 0)", 0.0, d.score, "docked"))
        note = "DOCK releases the docked score: the value over the uncovered path is removed"
    elif d.score is None:
        note = "GATE withholds this score until every material change is covered"
    elif d.verdict == "ungated":
        note = "coverage is off: the score is released ungated"
    points = [0.0, *(x for sp in spans for x in (sp[2], sp[3]))]
    low, high = min(points), max(points)
    scale = BAR_W / ((high - low) or 1.0)

    def at(usd: float) -> float:
        return BAR_X + (usd - low) * scale

    bars = []
    for i, (label, detail, start, end, kind) in enumerate(spans):
        left, right = at(min(start, end)), at(max(start, end))
        following = spans[i + 1][4] if i + 1 < len(spans) else None
        chained = kind in ("cost", "value") and following in ("cost", "value")
        bars.append(Bar(
            label, detail, start, end, kind, _signed(end - start),
            y=i * ROW_H + 6, x=_n(left), width=_n(max(right - left, 1.5)),
            connector=_n(at(end)) if chained else None,
        ))
    at_state = dict(zip((s.name for s in c.route.states), n.R, strict=True))
    stages = tuple(
        Stage(
            name=t.name,
            p=probability(t.p),
            reach=probability(t.reach),
            c=money(t.cost.c),
            bound_by=t.cost.bound_by,
            expected_cost=money(t.reach * t.cost.c),
            R_next=money(t.R_next),
            # on a graph R_next is x_e, what e's success brings: its target's payoff included
            keep=money(t.p * t.d * (t.R_next + (0.0 if t.payoff is None or graph else t.payoff.credited))),
            R=money(at_state[t.source]),  # R_i on a chain; R at the source state on a graph
        )
        for t in n.transitions
    )
    nxt = "(v + R next)" if n.payoffs is not None else "R next"
    pd = f"p · {nxt}" if n.fold.discount == 0 else f"p · d · {nxt}"
    if c.route.shape is not None:
        R_rule = "R at the source state"
    elif n.fold.abandonment:
        R_rule = f"Rᵢ = max(0, −c + {pd})"
    else:
        R_rule = f"Rᵢ = −c + {pd}"
    return Waterfall(tuple(bars), stages, len(bars) * ROW_H + 30, _n(at(0.0)), note, f"keep {pd}", R_rule)


def _change(source: float | bool, target: float | bool) -> str:
    return f"{compact(source)} → {compact(target)}"


def _matrix(c: Compiled, coverage: Coverage) -> tuple[CoverageRow, ...]:
    rows = []
    for name, ds in coverage.transitions:
        by_field = {x.delta.field: x for x in ds}
        cells = []
        for f in c.route.fields:
            x = by_field.get(f.name)
            if x is None or x.delta.source == x.delta.target:
                cells.append(Cell("unchanged", "unchanged", ""))
                continue
            change = _change(x.delta.source, x.delta.target)
            if x.covered is None:
                cells.append(Cell("unmaterial", "not material", change))
            elif x.covered:
                cells.append(Cell("covered", f"covered by {x.by}", change))
            else:
                cells.append(Cell("uncovered", "uncovered", change))
        rows.append(CoverageRow(name, tuple(cells)))
    return tuple(rows)


def _undischarged(coverage: Coverage) -> tuple[Undischarged, ...]:
    return tuple(
        Undischarged(
            u.transition,
            u.delta.field,
            _change(u.delta.source, u.delta.target),
            tuple(
                Tried(
                    a.obligation,
                    a.claimed,
                    a.holds,
                    tuple(Failure(f"{f.span.file}:{f.span.line}", f.require, f.reason) for f in a.failed),
                )
                for a in u.tried
            ),
        )
        for u in coverage.uncovered
    )


def _seam_rows(result: RouteSeams) -> list[SeamRow]:
    rows = []
    for s in result.seams:
        i, arm = s.identity, s.pipeline
        identity = ("exact" if i.identity_holds else "FAILS") + (
            ", sympy verified" if s.symbolically_verified else ", sympy FAILS"
        )
        rows.append(SeamRow(
            k=s.k,
            deleted=s.transition,
            delta=_signed(float(i.delta_formula)),
            identity=identity,
            threshold="—" if i.threshold is None else money(float(i.threshold)),
            R_next=money(float(i.R_next)),
            silence=i.silence_rewarded,
            pipeline_delta="—" if arm is None else _signed(arm.delta),
            verdict="did not compile" if arm is None else arm.verdict,
            uncovered="" if arm is None else ", ".join(f"{t}.{f}" for t, f in arm.uncovered),
            failed="" if arm is None else "; ".join(arm.failed_requires),
            removed_payoff=money(float(i.removed_payoff)),
        ))
    return rows


def _ranking(compiled: Sequence[Compiled], anchors: Sequence[str]) -> Ranking | None:
    choice = choose_key(compiled)
    if choice.key is None:
        return None
    where = {id(c): anchors[i] for i, c in enumerate(compiled)}
    units = sorted({c.policy.policy.units.label for c in compiled})
    ranked = rank(compiled, choice.key)
    return Ranking(choice.key, choice.policies, choice.warnings,
                   tuple(_rank_row(r, ranked[i - 1] if i else None, where[id(r.compiled)])
                         for i, r in enumerate(ranked)),
                   sequence_text(choice.key), units[0] if len(units) == 1 else "each route's unit")


def _decided(r: Ranked, above: Ranked | None) -> str:
    """`decided_text`, with both routes' values when the deciding key is a tie-break the
    table has no column for (the score and T have theirs)."""
    text = decided_text(r)
    if above is None or r.decided_by not in ("score_without_stop", "first_test_voi"):
        return text
    mine, theirs = dict(r.sequence).get(r.decided_by), dict(above.sequence).get(r.decided_by)

    def show(x: float | None) -> str:
        return "—" if x is None else money(x)

    return f"{TIE_KEY_TEXT[r.decided_by]}: {show(mine)} (above: {show(theirs)})"


def _rank_row(r: Ranked, above: Ranked | None, anchor: str) -> RankRow:
    c, n = r.compiled, r.compiled.numbers
    return RankRow(
        rank=f"{r.rank}{'=' if r.tied else ''}",
        anchor=anchor,
        route=c.route.name,
        file=c.route.file,
        eligible=n.eligible,
        gates=tuple((g.id, g.passed) for g in n.gates),
        verdict=c.decision.verdict,
        score="withheld" if c.decision.score is None else money(c.decision.score),
        T="—" if n.criteria_score is None else points(n.criteria_score),
        bucket=n.bucket or "—",
        decided_by=_decided(r, above),
    )
