"""The shipped cohort (examples/cohort/): honest routes are covered and released,
every splice is refused by GATE, and the identity holds and is verified by sympy for
every seam. No score of a cohort route is asserted: the numbers are illustrative and
the visions are revised from time to time.
"""

from __future__ import annotations

import tomllib

import pytest

from pcsc.analysis.seams.analysis import RouteSeams, analyse
from pcsc.analysis.seams.experiment import summarise
from pcsc.compiler.session import Compiled, Session
from pcsc.policy.load import PolicyStore
from tests.conftest import EXAMPLES, ROOT

COHORT = EXAMPLES / "cohort"


@pytest.fixture(scope="module")
def cohort() -> tuple[Session, list[Compiled], list[RouteSeams]]:
    session = Session()
    routes = []
    for path in sorted(COHORT.glob("*.route")):
        found = session.load_routes(path)
        assert [r.name for r in found] == [path.stem], path  # one route a file, named as the file
        routes += found
    compiled = [session.compile_route(r) for r in routes]
    assert all(c is not None for c in compiled)
    done = [c for c in compiled if c is not None]
    results = [analyse(c, session) for c in done]
    return session, done, results


def test_cohort_compiles_cleanly(cohort: tuple[Session, list[Compiled], list[RouteSeams]]) -> None:
    session, compiled, _ = cohort
    errors = [f"{d.span.file}:{d.span.line}: {d.code} {d.message}" for d in session.diags.items
              if d.severity == "error"]
    assert errors == []
    assert len(compiled) >= 26
    for c in compiled:
        assert 3 <= len(c.route.transitions) <= 7, c.route.name
        assert str(c.route.policy) == "venture@1.1.0", c.route.name
        assert c.policy.policy.version == "1.1.0"


def test_every_honest_route_is_released(cohort: tuple[Session, list[Compiled], list[RouteSeams]]) -> None:
    _, compiled, results = cohort
    for c in compiled:
        assert c.decision.mode == "gate" and c.decision.mode_source == "policy", c.route.name
        assert c.coverage is not None and c.coverage.uncovered == [], c.route.name
        assert c.decision.verdict == "released" and c.decision.score == c.numbers.score, c.route.name
    for r in results:
        assert r.honest_gate.verdict == "released", r.compiled.route.name
        assert r.honest_dock.verdict == "released", r.compiled.route.name


def test_identity_holds_and_is_verified_for_every_seam(
    cohort: tuple[Session, list[Compiled], list[RouteSeams]],
) -> None:
    _, compiled, results = cohort
    seams = [s for r in results for s in r.seams]
    assert len(seams) == sum(len(c.route.transitions) - 2 for c in compiled)
    assert all(s.identity.identity_holds for s in seams)
    assert all(s.symbolically_verified for s in seams)
    assert all(s.identity.sign_matches is not False for s in seams)
    summary = summarise(results)
    assert summary.deletions == len(seams)
    assert summary.identity_holds == summary.symbolically_verified == summary.deletions


def test_every_splice_is_refused_by_gate(cohort: tuple[Session, list[Compiled], list[RouteSeams]]) -> None:
    _, _, results = cohort
    for r in results:
        for s in r.seams:
            where = f"{r.compiled.route.name} seam {s.k} ({s.transition})"
            assert s.pipeline is not None, where  # the splice compiled
            assert s.pipeline.gate.verdict == "suspend-and-ask", where
            assert s.pipeline.gate.score is None, where
            assert s.pipeline.uncovered, where
            assert s.pipeline.dock.verdict == "docked", where
            # the refusal is on the retargeted predecessor, which now claims e_k's changes
            predecessor = r.compiled.route.transitions[s.k - 1].name
            assert any(t == predecessor for t, _ in s.pipeline.uncovered), where
    summary = summarise(results)
    assert summary.spliced_refused == summary.deletions
    assert summary.routes_all_splices_refused == summary.routes
    assert summary.honest_suspended == 0


def test_policy_1_1_0_extends_1_0_0_with_illustrative_priors() -> None:
    base = tomllib.loads((ROOT / "policies/venture/1.0.0.toml").read_text(encoding="utf-8"))
    new = tomllib.loads((ROOT / "policies/venture/1.1.0.toml").read_text(encoding="utf-8"))
    assert new["policy"]["extends"] == "venture@1.0.0"
    added = set(new["priors"]) - set(base["priors"])
    assert added and added == set(new["priors"])  # it adds classes and overrides none
    for name in sorted(added):
        source = new["priors"][name].get("source")
        assert isinstance(source, str) and source.startswith("illustrative"), name
    # what it extends is inherited
    merged = PolicyStore().load_ref("venture@1.1.0").policy
    assert set(base["priors"]) | added == set(merged.priors)
    assert merged.priors["devtools/first-users"].p == base["priors"]["devtools/first-users"]["p"]
    assert set(merged.floors.delta) >= set(base["floors"]["delta"]) | set(new["floors"]["delta"])


def test_every_reference_class_a_cohort_route_uses_is_added_or_inherited(
    cohort: tuple[Session, list[Compiled], list[RouteSeams]],
) -> None:
    _, compiled, _ = cohort
    new = tomllib.loads((ROOT / "policies/venture/1.1.0.toml").read_text(encoding="utf-8"))
    base = tomllib.loads((ROOT / "policies/venture/1.0.0.toml").read_text(encoding="utf-8"))
    used = {t.ref_class for c in compiled for t in c.route.transitions}
    assert used <= set(new["priors"]) | set(base["priors"])
