"""Class admission and the gold registry (docs/coverage.md): a claim its reference class
does not admit, and a route that departs from its registry, are refused like an
uncovered change; every expectation here is written by hand from the route texts."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from pcsc.compiler.session import Compiled, Session
from pcsc.lsp.analysis import analyse
from pcsc.policy import PolicyStore
from tests.conftest import ROOT, run_cli

PRODUCT = ROOT / "examples" / "product"
POLICIES = ROOT / "policies"  # product@1.0.0 is shipped
HONEST = PRODUCT / "language_app.route"
RECLASSED = PRODUCT / "refused" / "language_app_reclassed.route.txt"
MERGED = PRODUCT / "refused" / "language_app_merged.route.txt"
CLASS_LINE = 60  # `class "handoff/acceptance"` in the re-classed route
CLASS_COLUMN = 20  # where the class string starts on that line


def compile_one(text: str, policy_path: Path, name: str = "r.route", coverage: str | None = None) -> Compiled:
    session = Session(policies=PolicyStore([policy_path]), coverage_mode=coverage)  # type: ignore[arg-type]
    (route,) = session.routes_from_text(text, name, PRODUCT)
    c = session.compile_route(route)
    assert c is not None, session.diags.sorted()
    return c


def write_policy(root: Path, body: str) -> Path:
    """A policy `test@1.0.0` extending planner@1.0.0 with ``body``, filed under ``root``."""
    (root / "test").mkdir(parents=True, exist_ok=True)
    header = '[policy]\nid = "test"\nversion = "1.0.0"\nextends = "planner@1.0.0"\ncoverage = "gate"\n\n'
    (root / "test" / "1.0.0.toml").write_text(header + body, encoding="utf-8")
    return root


OPEN_TABLES = """
[admission."product/retention"]
fields = ["users", "retention"]

[admission."product/upsell"]
fields = ["users", "customers", "revenue"]

[admission."saas/repeatable-revenue"]
fields = ["users", "customers", "revenue"]
"""


def route_text(path: Path = HONEST, policy: str = "test@1.0.0") -> str:
    return path.read_text(encoding="utf-8").replace('"product@1.0.0"', f'"{policy}"')


# ------------------------------------------------------------------ the product example
def test_the_honest_roadmap_is_released_with_the_score_obligations_give_it() -> None:
    c = compile_one(HONEST.read_text(encoding="utf-8"), POLICIES)
    assert c.decision.verdict == "released"
    assert c.decision.score == pytest.approx(512_155.63, abs=0.01)
    assert c.coverage is not None and c.coverage.admission == () and c.coverage.registry == ()


def test_the_reclass_is_released_by_obligations_alone_and_refused_by_admission(tmp_path: Path) -> None:
    plain = compile_one(route_text(RECLASSED, "planner@1.0.0"), POLICIES)
    assert plain.decision.verdict == "released"  # the gap the issue measured
    assert plain.decision.score == pytest.approx(4_193_044.06, abs=0.01)
    c = compile_one(RECLASSED.read_text(encoding="utf-8"), POLICIES)
    assert c.decision.verdict == "suspend-and-ask" and c.decision.score is None
    assert c.coverage is not None and c.coverage.uncovered == []  # every change is covered
    refused = [(a.transition, a.ref_class, a.field, a.check) for a in c.coverage.admission]
    fields = ("users", "customers", "revenue")
    assert refused == [("school_licences", "handoff/acceptance", f, "fields") for f in fields]
    assert {(a.span.line, a.span.column) for a in c.coverage.admission} == {(CLASS_LINE, CLASS_COLUMN)}


def test_dock_removes_the_value_of_a_route_its_classes_do_not_admit() -> None:
    c = compile_one(RECLASSED.read_text(encoding="utf-8"), POLICIES, coverage="dock")
    assert c.decision.verdict == "docked" and c.decision.docked
    assert c.decision.score == c.docked < c.numbers.score


def test_check_reports_it_at_the_class_line_in_text_json_and_sarif(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", "--policy-path", str(POLICIES), str(RECLASSED))
    assert code == 1
    assert f"language_app_reclassed.route.txt:{CLASS_LINE}:{CLASS_COLUMN}: error: `school_licences` is of class " \
           "`handoff/acceptance`, which does not admit a change of users" in err
    assert "[PCSC-E502]" in err and "help: classes of this policy that would admit it: `saas/repeatable-revenue`" in err
    code, out, _ = run_cli(capsys, "check", "--policy-path", str(POLICIES), str(RECLASSED), "--format", "json")
    found = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PCSC-E502"]
    assert [(d["line"], d["column"]) for d in found] == [(CLASS_LINE, CLASS_COLUMN)] * 3
    code, out, _ = run_cli(capsys, "gate", "--policy-path", str(POLICIES), str(RECLASSED), "--format", "sarif")
    assert code == 3
    results = json.loads(out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"PCSC-E502"}  # the fact check reports, under its code
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} == {CLASS_LINE}


def test_gate_json_lists_what_is_not_admitted_and_suggest_the_classes_that_would(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "gate", "--suggest", "--policy-path", str(POLICIES), str(RECLASSED),
                           "--format", "json")
    assert code == 3
    doc = json.loads(out)
    (route,) = doc["routes"]
    assert [a["field"] for a in route["not_admitted"]] == ["users", "customers", "revenue"]
    assert doc["admitting_classes"] == [{"route": "language_app", "transition": "school_licences",
                                         "class": "handoff/acceptance", "admitting": ["saas/repeatable-revenue"]}]
    code, out, _ = run_cli(capsys, "gate", "--suggest", "--policy-path", str(POLICIES), str(RECLASSED))
    assert ("classes that would admit language_app.school_licences (now handoff/acceptance): "
            "saas/repeatable-revenue") in out


def test_the_language_server_shows_it_at_the_class_line_and_in_the_hover() -> None:
    from pcsc.lsp.analysis import transition_hover

    analysis = analyse(RECLASSED.read_text(encoding="utf-8"), RECLASSED, policy_path=[POLICIES])
    found = [d for d in analysis.diagnostics if d.code == "PCSC-E502"]
    assert len(found) == 3 and {(d.span.line, d.span.column) for d in found} == {(CLASS_LINE, CLASS_COLUMN)}
    (facts,) = analysis.routes
    (t,) = [t for t in facts.route.transitions if t.name == "school_licences"]
    assert "- users: **not admitted** by class `handoff/acceptance`" in transition_hover(facts, t)


# ------------------------------------------------------------------ the gold registry
REGISTRY = """
[coverage]
registry = "{mode}"

[registry.language_app]
states = [
    {{ name = "today" }},
    {{ name = "sticky", fields = {{ retention = 0.28 }} }},
    {{ name = "family", fields = {{ customers = 16_000 }} }},
    {{ name = "schools" }},
]
"""


def test_a_merge_of_two_steps_is_released_by_obligations_and_caught_by_the_registry(tmp_path: Path) -> None:
    merged = route_text(MERGED)
    off = compile_one(merged, write_policy(tmp_path / "off", REGISTRY.format(mode="off")))
    assert off.decision.verdict == "released"
    assert off.decision.score == pytest.approx(1_624_206.52, abs=0.01)  # beats the honest 512,155.63
    required = compile_one(merged, write_policy(tmp_path / "req", REGISTRY.format(mode="required")))
    assert required.decision.verdict == "suspend-and-ask"
    assert required.coverage is not None and required.coverage.uncovered == []
    (skip,) = required.coverage.registry
    assert (skip.kind, skip.state, skip.span.line) == ("skip", "sticky", 23)  # the merged transition's line
    report = compile_one(merged, write_policy(tmp_path / "rep", REGISTRY.format(mode="report")))
    assert report.decision.verdict == "released" and len(report.coverage.registry) == 1  # type: ignore[union-attr]
    honest = compile_one(route_text(), write_policy(tmp_path / "h", REGISTRY.format(mode="required")))
    assert honest.decision.verdict == "released"


def test_restating_a_registry_field_is_refused_where_it_is_written(tmp_path: Path) -> None:
    text = route_text().replace("state sticky  { users 470k  retention 0.28 }",
                                "state sticky  { users 470k  retention 0.27 }").replace(
        "threshold  users >= 470k and retention >= 0.28", "threshold  users >= 470k and retention >= 0.27")
    c = compile_one(text, write_policy(tmp_path, REGISTRY.format(mode="required")))
    (f,) = c.coverage.registry  # type: ignore[union-attr]
    assert (f.kind, f.state, f.field) == ("restate", "sticky", "retention")
    assert "states retention 0.27; the registry says 0.28" in f.message
    assert f.span.line == text.splitlines().index("    state sticky  { users 470k  retention 0.27 }") + 1


def test_check_reports_registry_findings_by_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    merged = tmp_path / "merged.route"
    merged.write_text(route_text(MERGED), encoding="utf-8")
    for mode, code, expected in (("required", 1, "PCSC-E503"), ("report", 0, "PCSC-W504")):
        folder = write_policy(tmp_path / mode, REGISTRY.format(mode=mode))
        got, _, err = run_cli(capsys, "check", "--policy-path", str(folder), str(merged))
        assert got == code and f"[{expected}]" in err and "does not pass registry state `sticky`" in err


def test_a_route_without_a_registry_entry_is_refused_under_required(tmp_path: Path) -> None:
    text = route_text().replace("route language_app ", "route language_app_renamed ")
    c = compile_one(text, write_policy(tmp_path, REGISTRY.format(mode="required")))
    assert c.decision.verdict == "suspend-and-ask"
    assert [f.kind for f in c.coverage.registry] == ["no-entry"]  # type: ignore[union-attr]


# ------------------------------------------------------------------ bounds at the boundary
def _users_at_sticky(users: str) -> str:
    return route_text().replace("state sticky  { users 470k  retention 0.28 }",
                                f"state sticky  {{ users {users}  retention 0.28 }}").replace(
        "threshold  users >= 470k and retention >= 0.28", f"threshold  users >= {users} and retention >= 0.28")


@pytest.mark.parametrize(("bound", "users", "admitted"), [
    ("abs(delta) <= 70k", "470000", True),  # 400k -> 470k: exactly the bound
    ("abs(delta) <= 70k", "470001", False),
    ("relative <= 25%", "500000", True),  # 100k / 400k = 0.25 exactly
    ("relative <= 25%", "500001", False),
    ("target <= 470k", "470000", True),
    ("target <= 470k", "470001", False),
])
def test_a_bound_admits_a_change_at_it_and_refuses_one_just_over(tmp_path: Path, bound: str, users: str,
                                                                 admitted: bool) -> None:
    body = OPEN_TABLES.replace('fields = ["users", "retention"]',
                               f'fields = ["users", "retention"]\nbounds = {{ users = "{bound}" }}', 1)
    c = compile_one(_users_at_sticky(users), write_policy(tmp_path, body))
    assert c.coverage is not None and c.coverage.uncovered == []
    assert c.decision.verdict == ("released" if admitted else "suspend-and-ask")
    if not admitted:
        (a,) = c.coverage.admission
        assert (a.transition, a.field, a.check) == ("streaks", "users", bound)


@pytest.mark.parametrize(("tier", "admitted"), [(2, True), (3, False)])
def test_the_evidence_tier_a_class_needs(tmp_path: Path, tier: int, admitted: bool) -> None:
    """`family_plan`'s one supporting item is of tier 2."""
    fields = 'fields = ["users", "customers", "revenue"]'
    body = OPEN_TABLES.replace(fields, f'{fields}\nrequire = ["evidence(tier >= {tier}) >= 1"]', 1)
    c = compile_one(route_text(), write_policy(tmp_path, body))
    assert c.decision.verdict == ("released" if admitted else "suspend-and-ask")
    assert c.coverage is not None
    assert [(a.transition, a.field) for a in c.coverage.admission] == ([] if admitted else [("family_plan", None)])


def test_a_class_the_rules_do_not_name_admits_no_change(tmp_path: Path) -> None:
    body = OPEN_TABLES.split('[admission."saas/repeatable-revenue"]')[0]
    c = compile_one(route_text(), write_policy(tmp_path, body))
    assert [(a.transition, a.field) for a in c.coverage.admission] == [
        ("school_licences", "users"), ("school_licences", "customers"), ("school_licences", "revenue")]


@pytest.mark.parametrize(("body", "message"), [
    ('[admission."no/such"]\nfields = []\n', 'admission."no/such": `no/such` is not a reference class'),
    ('[admission."product/upsell"]\nfields = ["users"]\nbounds = { revenue = "delta <= 1" }\n',
     'admission."product/upsell".bounds.revenue: bounds a field the class may not change'),
    ('[admission."product/upsell"]\nfields = ["users"]\nbounds = { users = "budget <= 1" }\n',
     "unknown name `budget`"),
    ('[admission."product/upsell"]\nfields = ["users"]\nrequire = ["typo(delta)"]\n', "unknown function `typo`"),
    ('[admission."product/upsell"]\nfields = "users"\n', 'admission."product/upsell".fields: expected an array'),
    ('[coverage]\nregistry = "strict"\n', "coverage.registry: expected one of off, report, required"),
])
def test_malformed_admission_rules_are_path_addressed_policy_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str) -> None:
    folder = write_policy(tmp_path, body)
    code, out, err = run_cli(capsys, "policy", "check", "--policy-path", str(folder), "test@1.0.0")
    assert code == 1 and message in out + err, out + err


# ------------------------------------------------------------------ the shipped venture policy
def _cohort_under(ref: str) -> list[Compiled]:
    session = Session()
    out = []
    for path in sorted((ROOT / "examples" / "cohort").glob("*.route")):
        text = path.read_text(encoding="utf-8").replace('"venture@1.1.0"', f'"{ref}"')
        (route,) = session.routes_from_text(text, str(path), path.parent)
        c = session.compile_route(route)
        assert c is not None, session.diags.sorted()
        out.append(c)
    return out


def test_the_cohort_keeps_zero_of_thirty_honest_routes_suspended_under_venture_1_3_0() -> None:
    compiled = _cohort_under("venture@1.3.0")
    assert len(compiled) == 30
    assert [c.route.name for c in compiled if c.decision.verdict != "released"] == []
    assert all(c.coverage is not None and c.coverage.admission == () for c in compiled)
    reference = ROOT / "examples" / "devtools_api.route"
    c = compile_one(reference.read_text(encoding="utf-8").replace('"venture@1.0.0"', '"venture@1.3.0"'),
                    ROOT / "policies")
    assert c.decision.verdict == "released"


def test_every_class_of_venture_1_3_0_has_admission_rules_and_the_old_versions_none() -> None:
    store = PolicyStore()
    new = store.load_ref("venture@1.3.0").policy
    assert sorted(new.admission) == sorted(new.priors) and len(new.priors) == 34
    assert store.load_ref("venture@1.1.0").policy.admission == {}
    own = tomllib.loads((ROOT / "policies/venture/1.3.0.toml").read_text(encoding="utf-8"))
    assert set(own) == {"policy", "admission"}  # admission rules, nothing else


def test_a_revenue_step_reclassed_as_compliance_is_released_under_1_1_0_and_refused_under_1_3_0() -> None:
    """`landlord_portal`'s last step (saas/scale, p 0.10) as saas/compliance (p 0.70)."""
    path = ROOT / "examples" / "cohort" / "landlord_portal.route"
    for ref, verdict in (("venture@1.1.0", "released"), ("venture@1.3.0", "suspend-and-ask")):
        text = path.read_text(encoding="utf-8").replace('"venture@1.1.0"', f'"{ref}"')
        honest = compile_one(text, ROOT / "policies")
        c = compile_one(text.replace('"saas/scale"', '"saas/compliance"'), ROOT / "policies")
        assert c.numbers.score > honest.numbers.score
        assert c.decision.verdict == verdict, ref


def test_under_dock_check_warns_instead(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", "--coverage", "dock", "--policy-path", str(POLICIES), str(RECLASSED))
    assert code == 0 and err.count("[PCSC-W502]") == 3 and "DOCK docks the score" in err
    merged = tmp_path / "merged.route"
    merged.write_text(route_text(MERGED), encoding="utf-8")
    folder = write_policy(tmp_path / "p", REGISTRY.format(mode="required"))
    code, _, err = run_cli(capsys, "check", "--coverage", "dock", "--policy-path", str(folder), str(merged))
    assert code == 0 and "[PCSC-W503]" in err and "does not pass registry state `sticky`" in err


def test_the_example_readme_says_what_the_program_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """Each row of the table in examples/product/README.md, recomputed."""
    readme = (PRODUCT / "README.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:4]]
            for line in readme.splitlines() if line.startswith("| ") and "USD" in line}
    files = {"honest": HONEST, "re-classed": RECLASSED, "merged": MERGED}
    assert set(rows) == set(files)
    for name, path in files.items():
        plain = compile_one(route_text(path, "planner@1.0.0"), POLICIES)
        assert plain.decision.score is not None
        assert rows[name][0] == f"released, {plain.decision.score:,.2f} USD", name
        code, _, err = run_cli(capsys, "check", str(path))
        if name == "honest":
            c = compile_one(path.read_text(encoding="utf-8"), POLICIES)
            assert code == 0 and rows[name][1] == f"released, {c.decision.score:,.2f} USD"
            continue
        assert code == 1
        for cited in ("PCSC-E502", "PCSC-E503"):
            assert (cited in rows[name][1]) == (f"[{cited}]" in err), (name, cited)
    assert f"(line {CLASS_LINE})" in rows["re-classed"][1]
    assert "`sticky` skipped" in rows["merged"][1] and "does not pass registry state `sticky`" in run_cli(
        capsys, "check", str(MERGED))[2]
    code, out, _ = run_cli(capsys, "gate", "--suggest", str(RECLASSED))
    assert code == 3 and out.rstrip().endswith("(now handoff/acceptance): saas/repeatable-revenue")
    assert "only\n`saas/repeatable-revenue`" in readme


def test_a_certificate_of_refused_and_released_routes_verifies(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    for path in (HONEST, RECLASSED, MERGED):
        shutil.copy(path, tmp_path / path.name)
    names = [str(tmp_path / p.name) for p in (HONEST, RECLASSED, MERGED)]
    cert = tmp_path / "cert.json"
    code, _, _ = run_cli(capsys, "compile", *names, "--cert", str(cert), "-q")
    assert code == 3
    routes = json.loads(cert.read_text(encoding="utf-8"))["routes"]
    assert [len(r["refusals"]["not_admitted"]) for r in routes] == [0, 3, 1]
    assert [len(r["refusals"]["registry"]) for r in routes] == [0, 0, 1]
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 0 and "(1 released, 2 suspend-and-ask)" in out + err
    # a certificate that drops the re-classed route's refusals is caught: the checker derives them again
    doc = json.loads(cert.read_text(encoding="utf-8"))
    doc["routes"][1]["refusals"]["not_admitted"] = []
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run_cli(capsys, "verify-cert", str(forged))
    assert code != 0 and "refusals.not_admitted: recorded 0, derived again 3" in out + err


def test_the_new_keys_are_in_the_gate_and_compile_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    from jsonschema import Draft202012Validator

    from pcsc.render import schemas

    for kind, argv in (("gate", ["gate", "--suggest", str(RECLASSED)]), ("compile", ["compile", str(MERGED)])):
        code, out, _ = run_cli(capsys, *argv, "--format", "json")
        assert code == 3
        doc = json.loads(out)
        route = doc["routes"][0]
        assert route["not_admitted"] and route["registry"]["mode"] == "required"
        schema = schemas.load(kind)
        Draft202012Validator(schema, registry=schemas.registry()).validate(doc)
        broken = json.loads(out)
        broken["routes"][0]["not_admitted"][0]["line"] = "sixty"
        assert list(Draft202012Validator(schema, registry=schemas.registry()).iter_errors(broken))


def test_product_policy_pins_its_registry_file_by_hash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib
    import shutil

    loaded = PolicyStore().load_ref("product@1.0.0")
    assert "registry" not in loaded.resolved  # the registry is the file's, not the policy text's
    assert [s.name for s in loaded.policy.registry["language_app"].states] == ["today", "sticky", "family", "schools"]
    shutil.copytree(ROOT / "policies" / "product", tmp_path / "product")
    registry = tmp_path / "product" / "registries" / "language_app.toml"
    assert hashlib.sha256(registry.read_bytes()).hexdigest() == loaded.policy.coverage.registry_sha256
    registry.write_text(registry.read_text(encoding="utf-8").replace("retention = 0.28", "retention = 0.2"),
                        encoding="utf-8")  # an edit of the file after the policy pinned it
    code, out, err = run_cli(capsys, "gate", "--policy-path", str(tmp_path), str(MERGED))
    assert code == 1 and "PCSC-E403" in err
    assert "coverage.registry_sha256: `registries/language_app.toml` has sha256" in err
    policy = tmp_path / "product" / "1.0.0.toml"
    policy.write_text(policy.read_text(encoding="utf-8").replace('"registries/language_app.toml"', '"../x.toml"'),
                      encoding="utf-8")
    code, out, err = run_cli(capsys, "gate", "--policy-path", str(tmp_path), str(MERGED))
    assert code == 1 and "coverage.registry_file: `../x.toml` is not a file inside the policy's folder" in err


def _gainful_released_reclasses(ref: str) -> tuple[int, int]:
    """Of every single re-class of a cohort transition into another class of ``ref``: how
    many are released with a higher score than the honest route, of how many."""
    import attrs

    gained = total = 0
    for c in _cohort_under(ref):
        session = Session()
        for i, t in enumerate(c.route.transitions):
            for cls in c.policy.policy.priors:
                if cls == t.ref_class:
                    continue
                transitions = list(c.route.transitions)
                transitions[i] = attrs.evolve(t, ref_class=cls)
                r = session.compile_route(attrs.evolve(c.route, transitions=tuple(transitions)))
                if r is None:
                    continue
                total += 1
                score = r.decision.score
                gained += r.decision.verdict == "released" and score is not None and score > c.numbers.score
    return gained, total


def test_the_reclass_counts_docs_coverage_md_gives() -> None:
    text = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    new, total = _gainful_released_reclasses("venture@1.3.0")
    old, total_old = _gainful_released_reclasses("venture@1.1.0")
    assert total == total_old
    said = f"{new} of the {total:,} single\n  re-classes that compile are released with a higher score ({old:,} under"
    assert said in text
    assert new < old / 10


def test_verify_cert_derives_bound_and_evidence_refusals_as_the_compiler_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = OPEN_TABLES.replace(
        'fields = ["users", "retention"]',
        'fields = ["users", "retention"]\nbounds = { users = "abs(delta) <= 70k", retention = "relative <= 25%" }', 1,
    ).replace('fields = ["users", "customers", "revenue"]',
              'fields = ["users", "customers", "revenue"]\nrequire = ["evidence(tier >= 3) >= 1"]', 1)
    folder = write_policy(tmp_path / "pol", body)
    route = tmp_path / "r.route"
    route.write_text(_users_at_sticky("470001"), encoding="utf-8")
    cert = tmp_path / "c.json"
    code, _, _ = run_cli(capsys, "compile", "--policy-path", str(folder), str(route), "--cert", str(cert), "-q")
    assert code == 3
    (r,) = json.loads(cert.read_text(encoding="utf-8"))["routes"]
    assert [(a["transition"], a["field"], a["check"]) for a in r["refusals"]["not_admitted"]] == [
        ("streaks", "users", "abs(delta) <= 70k"),  # 70,001 over 70k
        ("streaks", "retention", "relative <= 25%"),  # 0.06 / 0.22 = 0.27 over 25%
        ("family_plan", None, "evidence(tier >= 3) >= 1"),  # its one item is of tier 2
    ]
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 0, out + err


def test_explain_shows_the_admission_and_registry_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "explain", str(MERGED), "--route", "language_app")
    assert "family_plan.retention admitted = no" in out
    assert "registry skip = sticky" in out
    assert "GATE: suspend-and-ask when any material change is uncovered or not admitted by its class" in out


def test_a_registry_file_that_links_out_of_the_policy_folder_is_never_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(ROOT / "policies" / "product", tmp_path / "pol" / "product")
    registry = tmp_path / "pol" / "product" / "registries" / "language_app.toml"
    outside = tmp_path / "outside.toml"
    outside.write_bytes(registry.read_bytes())  # the pinned bytes, but outside the folder
    registry.unlink()
    registry.symlink_to(outside)
    code, _, err = run_cli(capsys, "gate", "--policy-path", str(tmp_path / "pol"), str(HONEST))
    assert code == 1 and "`registries/language_app.toml` is not a file inside the policy's folder" in err


def test_the_redteam_counts_the_example_readme_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = " ".join((PRODUCT / "README.md").read_text(encoding="utf-8").split())
    plain = tmp_path / "language_app.route"
    plain.write_text(route_text(HONEST, "planner@1.0.0"), encoding="utf-8")
    counts = {}
    for name, path in (("planner", plain), ("product", HONEST)):
        code, out, _ = run_cli(capsys, "redteam", str(path), "--format", "json")
        assert code in (0, 3)
        edits = json.loads(out)["routes"][0]["edits"]
        gains = [e["kind"] for e in edits if e["class"] == "covered-gain"]
        counts[name] = (len(edits), sum(e["class"] == "refused" for e in edits), gains)
    tried, _, gains = counts["planner"]
    assert f"tries {tried} single edits" in readme
    assert f"it finds {len(gains)} covered gains, {gains.count('re-class')} of them re-classes" in readme
    tried, refused, gains = counts["product"]
    said = f"GATE refuses {refused} of the {tried} edits and the {len(gains)} covered gains left each drop a cost"
    assert said in readme
    assert set(gains) == {"drop-cost"}


def test_the_compile_text_says_why_the_score_is_withheld(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compile", str(RECLASSED))
    assert code == 3
    assert "withheld: GATE refuses it until every material change is covered, admitted by its class" in out
    assert "  changes their class does not admit:\n    school_licences (handoff/acceptance," in out


def test_the_search_conditions_remove_admission_and_the_registry_and_the_shipped_one_keeps_them() -> None:
    from pcsc.analysis.search import CONDITIONS, SHIPPED, condition_policy

    policy = PolicyStore().load_ref("product@1.0.0").policy
    kept = condition_policy(policy, SHIPPED)
    assert kept.admission == policy.admission and kept.coverage.registry == "required"
    for condition in CONDITIONS[:4]:  # the paper's four conditions predate both
        removed = condition_policy(policy, condition)
        assert removed.admission == {} and removed.coverage.registry == "off", condition.name
        assert removed.priors == policy.priors
    for condition in CONDITIONS[4:]:  # v2a keeps admission, v2b the registry, v2a+b both
        kept = condition_policy(policy, condition)
        assert (kept.admission == policy.admission) == ("admission" in condition.keeps), condition.name
        assert (kept.coverage.registry == "required") == ("registry" in condition.keeps), condition.name


def test_the_search_releases_no_revision_its_class_does_not_admit() -> None:
    """The co-author's search judges a revision as GATE does: the re-classed roadmap,
    covered by its obligations but not admitted by its class, is no released revision."""
    from pcsc.analysis.search import SHIPPED, Settings, _Search
    from pcsc.compiler.session import Session

    session = Session()
    (honest,) = session.compile_routes(session.load_paths([str(HONEST)]))
    search = _Search(honest, session, "gate", SHIPPED, Settings(budget=1))
    revision = search.evaluate(RECLASSED.read_text(encoding="utf-8"), (), ())
    assert revision is not None and revision.coverage.admission
    assert revision.released is None and any(".admitted(" in u for u in revision.uncovered)
    assert search.evaluate(HONEST.read_text(encoding="utf-8"), (), ()).released is not None  # type: ignore[union-attr]
