"""`pcsc sensitivity`: every margin reported is checked here by recompiling the route
through the pipeline with the what-if override at the margin (the decision has
flipped) and just inside it (it has not); a closed form agrees with the formula by
hand; and the route overrides the search uses work on `compile --set`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from pcsc.analysis.rank import choose_key, rank
from pcsc.compiler.session import Compiled, Session
from pcsc.lang.ir import Route
from pcsc.policy.overrides import Override, OverridingStore, override_route, parse_override
from pcsc.render import schemas
from tests.conftest import EXAMPLES, ROOT, SPEC_ROUTE
from tests.test_spec_numbers import hand_computation

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.chdir(ROOT)

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


_REPORTS: dict[tuple[str, ...], dict[str, Any]] = {}


def margins(run: Run, *argv: str) -> dict[str, Any]:
    """The JSON report of `pcsc sensitivity ARGV` (each run once per test session)."""
    if argv not in _REPORTS:
        code, out, err = run("sensitivity", *argv, "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        schemas.validate(doc)
        _REPORTS[argv] = doc["sensitivity"]
    return _REPORTS[argv]


_ROUTES: dict[Path, list[Route]] = {}


def routes_of(path: Path) -> list[Route]:
    if path not in _ROUTES:
        session = Session()
        _ROUTES[path] = session.load_paths([str(path)])
        assert not session.diags.has_errors
    return _ROUTES[path]


# ---------------------------------------------------------------------- the oracle
def decisions(path: Path, name: str, override: Override | None, extra: tuple[Path, ...] = ()) -> dict[str, str | None]:
    """The five decisions of route ``name`` of ``path``, recompiled with ``override``
    as `compile --set` applies it (a route override to this route only, a policy
    override to the policy every route of the file is compiled under)."""
    session = Session()
    routes = [*routes_of(path), *(r for e in extra for r in routes_of(e))]
    if override is not None and override.target == "policy":
        session.policies = OverridingStore([], overrides=(override,))
    compiled: list[Compiled] = []
    chosen: Compiled | None = None
    for r in routes:
        mine = r.name == name and r.file == str(path)
        edited: Route = override_route(r, [override]) if override is not None and mine else r
        c = session.compile_route(edited)
        assert c is not None or not mine, session.diags.items
        if c is not None:
            compiled.append(c)
            if mine:
                chosen = c
    assert chosen is not None
    n = chosen.numbers
    out: dict[str, str | None] = {
        "sign": "positive" if n.score > 0 else "not positive",
        "verdict": chosen.decision.verdict if n.eligible else f"ineligible ({chosen.decision.verdict})",
        "bucket": n.bucket,
        "binding": n.transitions[n.binding].name,
        "rank": None,
    }
    if len(compiled) > 1:
        key = choose_key(compiled).key
        assert key is not None
        order = rank(compiled, key)
        place = next(i for i, r in enumerate(order, 1) if r.compiled is chosen)
        out["rank"] = f"{place} of {len(order)}"
    return out


def at_value(path: Path, name: str, m: dict[str, Any], x: float) -> Override:
    """The override of margin ``m``'s parameter at ``x``."""
    text = m["set"].split("=", 1)[0] + "="
    if m["kind"] == "floor-table":  # the value scales the table's floors
        session = Session()
        [route] = [r for r in session.load_paths([str(path)]) if r.name == name]
        table = session.policies.load_ref(str(route.policy)).policy.floors.delta[m["key"].split(".")[2]]
        return parse_override(text + json.dumps([[dx, y * x] for dx, y in table.points]))
    return parse_override(text + repr(float(x)))


def check_every_margin(path: Path, report: dict[str, Any], extra: tuple[Path, ...] = ()) -> int:
    name = report["route"]
    start = decisions(path, name, None, extra)
    for d, now in start.items():
        assert report["current"][d] == now
    checked = 0
    for m in report["margins"]:
        if not m["flips"]:
            assert m["at"] is None and m["method"] == "none"
            continue
        assert m["before"] == start[m["decision"]]
        at = decisions(path, name, parse_override(m["set"]), extra)
        assert at[m["decision"]] == m["after"] != m["before"], m
        inside = decisions(path, name, at_value(path, name, m, m["inside"]), extra)
        assert inside[m["decision"]] == m["before"], m
        # inside lies between the current value and the flip, within the tolerance of the flip
        lo, hi = sorted((m["current"], m["at"]))
        assert lo <= m["inside"] <= hi
        assert abs(m["at"] - m["inside"]) <= 1.01e-9 * max(abs(m["at"]), abs(m["inside"]), abs(m["current"]), 1e-300)
        checked += 1
    return checked


def test_every_margin_of_the_spec_route_flips_at_it_and_not_inside(run: Run) -> None:
    started = time.perf_counter()
    report = margins(run, str(SPEC_ROUTE))
    assert time.perf_counter() - started < 30  # about 1 s on an idle machine
    flips = [m for m in report["margins"] if m["flips"]]
    assert {m["decision"] for m in flips} >= {"sign", "verdict", "bucket", "binding"}
    assert {m["method"] for m in flips} == {"closed form", "bisection"}
    assert check_every_margin(SPEC_ROUTE, report) == len(flips)


def test_every_margin_of_competing_routes_flips_at_it_and_not_inside(run: Run) -> None:
    path = EXAMPLES / "feature_flags.route"
    report = margins(run, str(path), "--route", "enterprise_first")
    assert report["rivals"] == ["self_serve"]
    ranks = [m for m in report["margins"] if m["decision"] == "rank" and m["flips"]]
    assert ranks and all(m["neighbour"] == "self_serve" and m["after"] == "1 of 2" for m in ranks)
    assert any(m["method"] == "closed form" for m in ranks)  # the score crosses the rival's, in V or a cost
    assert check_every_margin(path, report) > 0


def test_every_margin_against_rivals_of_the_cohort_flips_at_it_and_not_inside(run: Run) -> None:
    """`--rivals` ranks the route among routes of other files too (a cohort has one route
    per file, so without it there is no rank margin)."""
    path = EXAMPLES / "cohort" / "api_monitoring.route"
    extra = (EXAMPLES / "cohort" / "esign_contracts.route", EXAMPLES / "cohort" / "freelance_translators.route")
    report = margins(run, str(path), "--rivals", *map(str, extra))
    assert report["rivals"] == ["esign_contracts", "freelance_translators"]
    assert report["current"]["rank"] == "2 of 3"
    moved = [m for m in report["margins"] if m["decision"] == "rank" and m["flips"]]
    # up past one, down past the other, or down because the route itself is refused
    assert {m["neighbour"] for m in moved} == {"esign_contracts", "freelance_translators", None}
    for m in moved:
        if m["neighbour"] is None:
            assert (m["rank_cause"], m["rank_tier"], m["after"]) == ("route-tier", "refused", "3 of 3")
            assert decisions(path, report["route"], parse_override(m["set"]), extra)["verdict"] == "suspend-and-ask"
        else:
            assert m["rank_cause"] == "passed"
    assert check_every_margin(path, report, extra) > 0
    assert margins(run, str(path))["current"]["rank"] is None


@pytest.mark.parametrize("name", ["api_monitoring", pytest.param("smart_door_lock", marks=pytest.mark.slow)])
def test_every_margin_of_cohort_routes_flips_at_it_and_not_inside(run: Run, name: str) -> None:
    path = EXAMPLES / "cohort" / f"{name}.route"
    report = margins(run, str(path))
    assert check_every_margin(path, report) > 0


def test_the_value_at_which_the_score_is_zero_is_the_formula(run: Run) -> None:
    """V* = Σ reach_i·c_i / Π p_i (the score is affine in V); tam* = V* / (capture × defensibility)."""
    report = margins(run, str(SPEC_ROUTE))
    hand = hand_computation()
    p, c = hand["p"], hand["c"]
    assert isinstance(p, list) and isinstance(c, list)
    reach = [1.0, p[0], p[0] * p[1]]
    v_star = sum(r * ci for r, ci in zip(reach, c, strict=True)) / (p[0] * p[1] * p[2])
    [tam] = [m for m in report["margins"] if m["key"] == "vision.tam" and m["decision"] == "sign"]
    assert tam["method"] == "closed form" and tam["direction"] == "down"
    assert tam["at"] == pytest.approx(v_star / (0.10 * 0.6), rel=1e-12)
    assert tam["relative"] == pytest.approx(1 - v_star / hand["V"], rel=1e-9)  # type: ignore[operator]
    # the expand budget at which the score is zero: c_2* = c_2 + R_0 / (p_0·p_1)
    R = hand["R"]
    assert isinstance(R, list)
    [company] = [m for m in report["margins"]
                 if m["key"] == "route.transitions.expand.cost.company" and m["decision"] == "sign"]
    assert company["method"] == "closed form"
    assert company["at"] == pytest.approx(c[2] + R[0] / (p[0] * p[1]), rel=1e-12)


def test_a_pinned_route_has_the_same_margins(run: Run, tmp_path: Path) -> None:
    """Policy parameters of a route that pins its policy's sha256 are searched under the
    overridden policy (whose sha256 differs by design), as `compile --set` does."""
    code, out, _ = run("policy", "hash", "venture@1.0.0", "--format", "json")
    sha = json.loads(out)["sha256"]
    pinned = tmp_path / "devtools_api.route"
    pinned.write_text(SPEC_ROUTE.read_text().replace('"venture@1.0.0"', f'"venture@1.0.0" sha256 "{sha}"'))
    report = margins(run, str(pinned))
    assert report["margins"] == margins(run, str(SPEC_ROUTE))["margins"]
    assert any(m["flips"] and m["key"].startswith("priors.") for m in report["margins"])


def test_monotone_maps_are_marked(run: Run) -> None:
    report = margins(run, str(SPEC_ROUTE))
    for m in report["margins"]:
        if m["decision"] == "sign" and m["kind"] in ("value", "cost", "floor", "floor-table", "prior"):
            assert m["monotone"] is True  # every class of the spec route is used once
        elif m["decision"] in ("binding", "rank", "verdict"):
            assert m["monotone"] is None


def test_margins_are_sorted_by_the_relative_change(run: Run) -> None:
    report = margins(run, str(SPEC_ROUTE))
    flips = [m for m in report["margins"] if m["flips"]]
    rel = [m["relative"] for m in flips if m["relative"] is not None]
    assert rel == sorted(rel)
    first_no_flip = next(i for i, m in enumerate(report["margins"]) if not m["flips"])
    assert all(not m["flips"] for m in report["margins"][first_no_flip:])
    # the bucket depends on T only: no prior, cost or value moves it
    assert not any(m["flips"] and m["decision"] == "bucket" and m["kind"] not in ("criteria-weight", "bucket-bound")
                   for m in report["margins"])


def test_the_text_table_and_nothing_is_written(run: Run, tmp_path: Path) -> None:
    route = tmp_path / "devtools_api.route"
    route.write_text(SPEC_ROUTE.read_text())
    policy = ROOT / "policies" / "venture" / "1.0.0.toml"
    before = (route.read_bytes(), policy.read_bytes())
    code, out, _ = run("sensitivity", str(route), "--wide")
    assert code == 0
    assert "margins, smallest relative change first" in out
    assert "vision.tam" in out and "sign: positive → not positive" in out and "closed form" in out
    assert "no flip in range" in out
    assert (route.read_bytes(), policy.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["devtools_api.route"]


def test_several_routes_need_a_route_and_errors_are_diagnostics(run: Run, tmp_path: Path) -> None:
    code, _, err = run("sensitivity", str(EXAMPLES / "feature_flags.route"))
    assert code == 2 and "--route" in err
    broken = tmp_path / "broken.route"
    broken.write_text(SPEC_ROUTE.read_text().replace("launch: garage", "launch: garag"))
    code, out, err = run("sensitivity", str(broken), "--format", "json")
    assert code == 1 and "Traceback" not in err
    doc = json.loads(out)
    assert doc["sensitivity"] is None and doc["diagnostics"]
    schemas.validate(doc)


def test_rivals_that_cannot_be_read_are_diagnostics(run: Run, tmp_path: Path) -> None:
    code, out, err = run("sensitivity", str(SPEC_ROUTE), "--rivals", str(tmp_path / "nope.route"), str(tmp_path))
    assert code == 1 and "PCSC-E105" in err and "PCSC-E106" in err and "Traceback" not in err
    assert out == ""


# ---------------------------------------------------------------------- the route overrides it uses
def test_cost_and_evidence_overrides_parse() -> None:
    o = parse_override("route.transitions.launch.cost.engineers=50k")
    assert (o.path, o.value, o.target) == (("route", "transitions", "launch", "cost", "engineers"), 50e3, "route")
    assert o.key == "route.transitions.launch.cost.engineers"
    o = parse_override("route.evidence.hn_launch.weight=0.1")
    assert (o.path, o.value, o.target) == (("route", "evidence", "hn_launch", "weight"), 0.1, "route")
    from pcsc.policy.overrides import OverrideError

    for bad in ("route.evidence.hn_launch.weight=1.5", "route.transitions.launch.cost.engineers=-1",
                "route.transitions.launch.cost=1", "route.evidence.hn_launch.tier=2"):
        with pytest.raises(OverrideError):
            parse_override(bad)


def test_compile_with_a_cost_override_moves_the_score_by_the_budget(run: Run) -> None:
    code, out, _ = run("compile", str(SPEC_ROUTE), "--format", "json")
    base = json.loads(out)["routes"][0]
    code, out, _ = run("compile", str(SPEC_ROUTE), "--format", "json",
                       "--set", "route.transitions.launch.cost.engineers=50k",
                       "--set", "route.evidence.hn_launch.weight=0.8")
    assert code == 0
    new = json.loads(out)["routes"][0]
    # the first transition is reached with certainty: R_0 falls by exactly the added budget (2 × 5k)
    assert new["score"] == pytest.approx(base["score"] - 10_000, rel=1e-12)
    assert new["transitions"][0]["c"] == 2 * 50e3 + 6 * 1.5e3


def test_an_override_of_a_missing_item_is_an_error(run: Run) -> None:
    code, _, err = run("compile", str(SPEC_ROUTE), "--set", "route.evidence.nope.weight=0.5")
    assert code == 1 and "PCSC-E901" in err and "no route compiled has evidence `nope`" in err
    code, _, err = run("compile", str(SPEC_ROUTE), "--set", "route.transitions.launch.cost.nope=5")
    assert code == 1 and "cost item `nope`" in err


def test_a_certificate_under_cost_and_evidence_overrides_verifies(run: Run, tmp_path: Path) -> None:
    route = tmp_path / "devtools_api.route"
    route.write_text(SPEC_ROUTE.read_text())
    cert = tmp_path / "cert.json"
    code, _, err = run("compile", str(route), "--set", "route.transitions.launch.cost.engineers=50k",
                       "--set", "route.evidence.hn_launch.weight=0.3", "--cert", str(cert))
    assert code == 0, err
    recorded = json.loads(cert.read_text())["overrides"]
    assert [o["path"] for o in recorded] == [["route", "transitions", "launch", "cost", "engineers"],
                                             ["route", "evidence", "hn_launch", "weight"]]
    code, out, err = run("verify-cert", str(cert))
    assert code == 0 and "verified" in out, err


# ---------------------------------------------------------------------- what moved the rank
def _ranked_at(paths: tuple[Path, ...], name: str, override: Override | None) -> list[tuple[str, str]]:
    """(route, verdict) of every route of ``paths`` in rank order, recompiled with
    ``override`` as `compile --set` applies it (a route override to route ``name`` only)."""
    session = Session()
    if override is not None and override.target == "policy":
        session.policies = OverridingStore([], overrides=(override,))
    compiled = []
    for r in (r for p in paths for r in routes_of(p)):
        edited = override_route(r, [override]) if override is not None and override.target == "route" \
            and r.name == name else r
        c = session.compile_route(edited)
        if c is not None:
            compiled.append(c)
    key = choose_key(compiled).key
    assert key is not None
    return [(x.compiled.route.name, x.compiled.decision.verdict) for x in rank(compiled, key)]


def test_a_rank_margin_names_what_moved_the_route() -> None:
    """A rank that moves because a rival is refused names that rival (not the route now
    next to it), one that moves because the route itself is refused says so, and one
    that moves on the rank key names the rival passed; each checked by recompiling."""
    from pcsc.analysis.sensitivity import Evaluator, Report, parameters, report_text, search

    main, log_search, columnar = (EXAMPLES / "feature_flags.route", EXAMPLES / "log_search.route",
                                  EXAMPLES / "domains" / "columnar_engine.route")
    paths = (main, log_search, columnar)
    session = Session()
    me = next(r for r in routes_of(main) if r.name == "enterprise_first")
    c = session.compile_route(me)
    assert c is not None
    rivals = [r for p in paths for r in routes_of(p) if r is not me]
    ev = Evaluator(c, session, rivals)
    start = _ranked_at(paths, me.name, None)
    assert [n for n, _ in start] == ["log_search", "self_serve", "enterprise_first", "columnar_engine"]
    by_key = {p.key: p for p in parameters(c)}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    margins_ = []
    for key in ("floors.delta.arr.points", "route.transitions.paid_pilots.cost.founders", "vision.tam"):
        for m in search(ev, by_key[key]):
            if m.decision == "rank" and m.at is not None:
                found[key, m.direction or ""] = m.json()
                margins_.append(m)

    up = found["floors.delta.arr.points", "up"]  # a dearer arr floor refuses log_search: up one place
    at = _ranked_at(paths, me.name, parse_override(up["set"]))
    assert ("log_search", "suspend-and-ask") in at and at.index(("log_search", "suspend-and-ask")) > 1
    assert (up["after"], up["neighbour"]) == ("2 of 4", "log_search")  # not columnar_engine, still below it
    assert (up["rank_cause"], up["rank_tier"]) == ("rival-tier", "refused")
    down = found["route.transitions.paid_pilots.cost.founders", "down"]  # a budget under its floor refuses the route
    at = _ranked_at(paths, me.name, parse_override(down["set"]))
    assert at[-1] == ("enterprise_first", "suspend-and-ask")
    assert (down["after"], down["neighbour"], down["rank_cause"]) == ("4 of 4", None, "route-tier")
    passed = found["vision.tam", "up"]  # a larger vision: the score passes self_serve's
    at = _ranked_at(paths, me.name, parse_override(passed["set"]))
    assert [n for n, _ in at][:3] == ["log_search", "enterprise_first", "self_serve"]
    assert (passed["neighbour"], passed["rank_cause"]) == ("self_serve", "passed")

    report = Report(me.name, me.file, c.policy.ref, ev.start, tuple(margins_), ev.compiles,
                    tuple(r.name for r in rivals))
    text = report_text(report)
    assert "rank: 3 of 4 → 2 of 4 (log_search now refused)" in text
    assert "rank: 3 of 4 → 4 of 4 (this route now refused)" in text
    assert "rank: 3 of 4 → 2 of 4 (past self_serve)" in text
