"""The shipped cohort's gold registry (policies/cohort/registries/cohort.toml), the tool
that writes it (`python -m pcsc.tools.registry`), the policy that pins it
(cohort@1.0.0), and the co-author conditions v2a, v2b and v2a+b that take their class
admission and registry from that policy: no honest route of the cohort is suspended
under any of them."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import attrs
import pytest

from pcsc.analysis.routediff import chain
from pcsc.analysis.search import (
    CONDITIONS,
    Settings,
    condition_policy,
    search_route,
    ungrounded,
    with_features,
)
from pcsc.compiler.session import Compiled, Session
from pcsc.coverage import discharge_route
from pcsc.coverage.registry import registry_findings
from pcsc.policy.load import PolicyStore
from pcsc.tools import registry as tool
from tests.conftest import ROOT

COHORT = ROOT / "examples" / "cohort"
POLICY = ROOT / "policies" / "cohort" / "1.0.0.toml"
FILE = ROOT / "policies" / "cohort" / "registries" / "cohort.toml"
V2 = [c for c in CONDITIONS if c.name.startswith("v2")]


@pytest.fixture(scope="module")
def cohort() -> tuple[Session, list[Compiled]]:
    session = Session()
    compiled = session.compile_routes(session.load_paths([str(COHORT)]))
    assert len(compiled) == 30
    return session, compiled


def _header_and_source(text: str) -> tuple[list[str], str]:
    header = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    (source,) = {tomllib.loads(text)["registry"][r]["source"] for r in tomllib.loads(text)["registry"]}
    return header, source


def test_the_checked_in_registry_is_what_the_tool_writes_and_the_policy_pins_its_bytes() -> None:
    text = FILE.read_text(encoding="utf-8")
    header, source = _header_and_source(text)
    routes, errors = tool.load_routes([str(COHORT)])
    assert errors == [] and len(routes) == 30
    assert tool.registry_text(routes, source, header) == text, "run `python -m pcsc.tools.registry` again"
    pinned = tomllib.loads(POLICY.read_text(encoding="utf-8"))["coverage"]["registry_sha256"]
    assert hashlib.sha256(FILE.read_bytes()).hexdigest() == pinned


def test_each_registry_entry_is_its_honest_routes_chain_with_the_fields_written_there(
        cohort: tuple[Session, list[Compiled]]) -> None:
    """Read from the file as TOML, beside the compiled routes: the states in the order
    the transitions visit them, the fields the author listed at each, their values."""
    gold = tomllib.loads(FILE.read_text(encoding="utf-8"))["registry"]
    _, compiled = cohort
    assert set(gold) == {c.route.name for c in compiled}
    for c in compiled:
        states = gold[c.route.name]["states"]
        assert tuple(s["name"] for s in states) == chain(c), c.route.name
        for s in states:
            state = c.route.state(s["name"])
            assert set(s["fields"]) == set(state.listed), (c.route.name, s["name"])
            assert all(state.get(f) == v for f, v in s["fields"].items()), (c.route.name, s["name"])


def test_the_registry_refuses_a_skipped_state_and_a_restated_field(cohort: tuple[Session, list[Compiled]]) -> None:
    policy = PolicyStore().load_ref("cohort@1.0.0").policy
    _, compiled = cohort
    c = compiled[0]  # adaptive_sat_prep: tutoring -> diagnostic -> premium -> national
    route = c.route
    skipped = attrs.evolve(route, states=tuple(s for s in route.states if s.name != "diagnostic"))
    assert [(f.kind, f.state) for f in registry_findings(skipped, policy)] == [("skip", "diagnostic")]
    states = tuple(attrs.evolve(s, values=tuple((n, 50_000.0 if n == "users" else v) for n, v in s.values))
                   if s.name == "diagnostic" else s for s in route.states)
    restated = attrs.evolve(route, states=states)
    assert [(f.kind, f.state, f.field) for f in registry_findings(restated, policy)] == [
        ("restate", "diagnostic", "users")]


def test_the_tool_refuses_a_folder_without_routes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main([str(tmp_path), "--source", "x"]) == 1
    assert "error:" in capsys.readouterr().err


def test_zero_of_thirty_honest_routes_are_suspended_under_every_new_condition(
        cohort: tuple[Session, list[Compiled]]) -> None:
    """Every honest route of the cohort, under each of v2a, v2b and v2a+b with the
    features of cohort@1.0.0: nothing uncovered, every claim admitted by its class, no
    departure from the registry, eligible; and the condition's search releases the
    honest route (three routes, one revision each)."""
    session, compiled = cohort
    features = PolicyStore().load_ref("cohort@1.0.0").policy
    assert [c.name for c in V2] == ["v2a", "v2b", "v2a+b"]
    for condition in V2:
        for c in compiled:
            policy = condition_policy(with_features(c.policy.policy, features), condition)
            # not vacuous: the condition's policy has what it names
            assert bool(policy.admission) == ("admission" in condition.keeps), condition.name
            assert (policy.coverage.registry == "required") == ("registry" in condition.keeps), condition.name
            coverage = discharge_route(c.route, policy)
            assert coverage.uncovered == [] and coverage.admission == (), (condition.name, c.route.name)
            assert registry_findings(c.route, policy) == (), (condition.name, c.route.name)
            assert c.numbers.eligible and ungrounded(c.route, c.route, policy) == []
        settings = Settings(budget=1, features="cohort@1.0.0")
        refused = [s.route for s in (search_route(c, session, "gate", condition, settings) for c in compiled[:3])
                   if s.honest.released is None]
        assert refused == [], condition.name
