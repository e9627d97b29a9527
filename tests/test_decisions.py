"""Decisions you can re-check and act on: what-if overrides (`--set`) on `compile` and
`policy diff`, and decision certificates (`compile --cert`, `verify-cert`)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from pcsc.policy.overrides import OverrideError, parse_override, parse_value, split_key
from pcsc.render import schemas
from tests.conftest import ROOT, SPEC_ROUTE
from tests.test_spec_numbers import hand_computation

Run = Callable[..., tuple[int, str, str]]
EXAMPLES_COHORT = ROOT / "examples" / "cohort"
POLICY_FILE = ROOT / "policies" / "venture" / "1.0.0.toml"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.chdir(ROOT)

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def packet(run: Run, *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(*argv, "--format", "json")
    assert out, err
    return code, json.loads(out)


# ---------------------------------------------------------------------- overrides: syntax
def test_keys_split_on_dots_outside_quotes() -> None:
    assert split_key('priors."devtools/scale".p') == ("priors", "devtools/scale", "p")
    assert split_key("reweighting.decay") == ("reweighting", "decay")
    # as a shell passes the issue's own example, `--set priors."devtools/scale".p=0.2`, unquoted
    assert split_key("priors.devtools/scale.p") == ("priors", "devtools/scale", "p")
    with pytest.raises(OverrideError):
        split_key("priors.devtools scale.p")
    with pytest.raises(OverrideError):
        split_key('priors."devtools/scale.p')
    with pytest.raises(OverrideError):
        split_key("priors.")


def test_values_read_as_toml_then_as_the_languages_numbers() -> None:
    assert parse_value("0.2") == 0.2
    assert parse_value("5") == 5 and isinstance(parse_value("5"), int)
    assert parse_value("true") is True
    assert parse_value('"dock"') == "dock"
    assert parse_value("5B") == 5e9
    assert parse_value("12%") == 0.12
    assert parse_value("1.5M usd") == 1.5e6
    assert parse_value("dock") == "dock"
    assert parse_value("[[1e5, 5e4]]") == [[1e5, 5e4]]


def test_vision_keys_are_route_overrides() -> None:
    assert parse_override("vision.tam=5B").target == "route"
    assert parse_override("route.vision.capture=12%").value == 0.12
    assert parse_override('priors."devtools/scale".p=0.2').target == "policy"
    # a vision's names are the policy's (`[vision] fields`): any name parses, and one that no
    # compiled route's vision states is refused when applied (tests/test_vision_formula.py)
    assert parse_override("vision.size=3").target == "route"
    assert parse_override('vision.value="tam * capture"').target == "policy"
    with pytest.raises(OverrideError, match="vision.value.x: unknown key"):
        parse_override("route.vision.value.x=3")


# ---------------------------------------------------------------------- overrides: compile
def test_compile_with_overrides_moves_the_score_as_the_formula_says(run: Run) -> None:
    before = POLICY_FILE.read_bytes()
    _, base = packet(run, "compile", str(SPEC_ROUTE))
    code, doc = packet(run, "compile", str(SPEC_ROUTE), "--set", 'priors."devtools/scale".p=0.2',
                       "--set", "vision.tam=20B")
    assert code == 0
    assert POLICY_FILE.read_bytes() == before  # never written back
    assert [o["key"] for o in doc["overrides"]] == ['priors."devtools/scale".p', "vision.tam"]
    old, new = base["routes"][0], doc["routes"][0]
    assert new["policy"]["sha256"] != old["policy"]["sha256"]  # a visibly different identity
    assert new["policy"]["sha256"] != hashlib.sha256(before).hexdigest()
    # V = tam × capture × defensibility with the new tam; expand's p = 0.2 × its unchanged W
    hand = hand_computation()
    assert new["value"] == 20e9 * 0.10 * 0.6
    expand = new["transitions"][2]
    assert expand["W"] == old["transitions"][2]["W"]
    assert expand["p"] == 0.2 * expand["W"]
    assert [t["p"] for t in new["transitions"][:2]] == pytest.approx(hand["p"][:2], rel=1e-12)
    # the staged fold over the packet's own numbers, by hand
    ts = new["transitions"]
    R3 = new["value"]
    R2 = -ts[2]["c"] + ts[2]["p"] * R3
    R1 = -ts[1]["c"] + ts[1]["p"] * R2
    R0 = -ts[0]["c"] + ts[0]["p"] * R1
    assert new["score"] == R0
    assert new["score"] > old["score"]


def test_the_issues_example_works_as_a_shell_passes_it(run: Run) -> None:
    """`pcsc compile --set priors."devtools/scale".p=0.2 --set vision.tam=5B`, typed into a
    shell without single quotes, arrives with its double quotes stripped."""
    _, quoted = packet(run, "compile", str(SPEC_ROUTE), "--set", 'priors."devtools/scale".p=0.2')
    code, bare = packet(run, "compile", str(SPEC_ROUTE), "--set", "priors.devtools/scale.p=0.2",
                        "--set", "vision.tam=5B")
    assert code == 0
    assert bare["overrides"][0]["key"] == quoted["overrides"][0]["key"] == 'priors."devtools/scale".p'
    assert bare["routes"][0]["transitions"][2]["p_prior"] == 0.2
    assert bare["routes"][0]["value"] == 5e9 * 0.10 * 0.6


def test_an_unknown_override_key_is_a_path_addressed_error(run: Run) -> None:
    code, out, err = run("compile", str(SPEC_ROUTE), "--set", 'priors."devtools/scale".q=0.2')
    assert code == 1
    assert 'priors."devtools/scale".q: unknown key' in err
    assert "PCSC-E901" in err
    code, _, err = run("compile", str(SPEC_ROUTE), "--set", "reweighting.decay=2")
    assert code == 1 and "reweighting.decay" in err
    code, _, err = run("compile", str(SPEC_ROUTE), "--set", "nonsense")
    assert code == 1 and "KEY=VALUE" in err


def test_a_pinned_route_compiles_under_overrides(run: Run, tmp_path: Path) -> None:
    _, base = packet(run, "compile", str(SPEC_ROUTE))
    sha = base["routes"][0]["policy"]["sha256"]
    pinned = tmp_path / "pinned.route"
    pinned.write_text(SPEC_ROUTE.read_text().replace('"venture@1.0.0"', f'"venture@1.0.0" sha256 "{sha}"'))
    code, doc = packet(run, "compile", str(pinned), "--set", "criteria.team=3")
    assert code == 0, doc["diagnostics"]
    assert doc["routes"][0]["criteria_score"] != base["routes"][0]["criteria_score"]


def test_policy_diff_with_overrides_reports_the_moved_routes(run: Run) -> None:
    before = POLICY_FILE.read_bytes()
    code, doc = packet(run, "policy", "diff", "venture@1.0.0", "venture@1.0.0", str(SPEC_ROUTE),
                       str(ROOT / "examples" / "feature_flags.route"), "--set", 'priors."devtools/scale".p=0.2')
    assert code == 0
    assert POLICY_FILE.read_bytes() == before
    assert [c["path"] for c in doc["changes"]] == ['priors."devtools/scale".p']
    moved = {r["route"]: r for r in doc["routes"]}
    assert moved["devtools_api"]["moves"]
    assert [t["name"] for t in moved["devtools_api"]["transitions"] if t["moved"]] == ["expand"]
    assert doc["old"]["sha256"] != doc["new"]["sha256"]
    assert doc["overrides"][0]["key"] == 'priors."devtools/scale".p'


def test_policy_diff_over_an_empty_folder_is_an_error(run: Run, tmp_path: Path) -> None:
    code, _, err = run("policy", "diff", "venture@1.0.0", "venture@1.0.0", str(tmp_path), "--set", "vision.tam=5B")
    assert code == 1 and "PCSC-E106" in err


def test_policy_diff_route_overrides_apply_to_the_new_side(run: Run) -> None:
    code, doc = packet(run, "policy", "diff", "venture@1.0.0", "venture@1.0.0", str(SPEC_ROUTE),
                       "--set", "vision.tam=20B")
    assert code == 0
    route = doc["routes"][0]
    assert route["moves"] and route["new"]["score"] > route["old"]["score"]
    assert doc["changes"] == []


# ---------------------------------------------------------------------- certificates
CHECKER = ROOT / "pcsc" / "certify" / "check"


def checker_imports() -> set[str]:
    """What every module of the checker's package imports."""
    names: set[str] = set()
    for module in sorted(CHECKER.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.add("." * node.level + (node.module or ""))
    return names


def test_the_checker_imports_nothing_of_pcsc() -> None:
    """Its modules import one another (`pcsc.certify.check.<module>`) and the standard library."""
    own = {f"pcsc.certify.check.{m.stem}" for m in CHECKER.glob("*.py") if m.stem != "__init__"}
    assert len(own) >= 5, own  # a package of modules, each scanned
    imports = checker_imports() - own
    assert not [n for n in imports if n.startswith(("pcsc", "."))], imports
    # math: exp and log of a Platt calibration map, the one rule computed in floats as the compiler does
    # os, stat: a recorded file is read only when it is a regular file within the size limit
    allowed = {"__future__", "collections.abc", "datetime", "fractions", "hashlib", "json", "math", "os", "pathlib",
               "re", "stat", "tomllib", "typing"}
    assert imports <= allowed, imports - allowed


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The reference route, a copy of its library and a copy of its policy in a folder."""
    folder = tmp_path / "project"
    (folder / "policies" / "venture").mkdir(parents=True)
    shutil.copy(SPEC_ROUTE, folder / "devtools_api.route")
    shutil.copy(POLICY_FILE, folder / "policies" / "venture" / "1.0.0.toml")
    return folder


def certify(run: Run, project: Path, *extra: str) -> Path:
    cert = project / "out.json"
    code, out, err = run("compile", str(project / "devtools_api.route"), "--policy-path",
                         str(project / "policies"), "--cert", str(cert), *extra)
    assert code in (0, 3), err
    assert cert.is_file()
    return cert


def verify(run: Run, cert: Path, *extra: str) -> tuple[int, str]:
    code, out, err = run("verify-cert", str(cert), *extra)
    return code, out + err


def test_an_untouched_certificate_verifies(run: Run, project: Path) -> None:
    cert = certify(run, project)
    code, text = verify(run, cert)
    assert code == 0, text
    assert "verified" in text
    doc = json.loads(cert.read_text())
    assert doc["inputs"][0]["path"] == "devtools_api.route"
    assert doc["policies"][0]["files"][0] == {"base": "certificate", "path": "policies/venture/1.0.0.toml",
                                             "ref": "venture@1.0.0"}
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    assert steps["score"]["value"]["f"] == hand_computation()["R"][0]
    assert "exact" in steps["launch.W"]["value"]


def test_a_certificate_is_canonical_and_the_same_in_another_folder(run: Run, project: Path, tmp_path: Path) -> None:
    cert = certify(run, project)
    moved = tmp_path / "elsewhere" / "deep"
    shutil.copytree(project, moved)
    code, text = verify(run, moved / "out.json")
    assert code == 0, text
    again = certify(run, moved)
    assert again.read_bytes() == cert.read_bytes()
    raw = cert.read_text()
    assert raw == json.dumps(json.loads(raw), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def test_against_reads_the_given_files(run: Run, project: Path, tmp_path: Path) -> None:
    cert = certify(run, project)
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(cert, lone / "out.json")
    code, text = verify(run, lone / "out.json")
    assert code == 1 and "cannot be read" in text  # the recorded paths are not there
    code, text = verify(run, lone / "out.json", "--against", str(project / "devtools_api.route"),
                        str(project / "policies" / "venture" / "1.0.0.toml"))
    assert code == 0, text


def test_against_a_file_the_certificate_does_not_record_is_a_usage_error(run: Run, project: Path,
                                                                         tmp_path: Path) -> None:
    """Else the file would go unused and the recorded path be verified instead."""
    cert = certify(run, project)
    other = tmp_path / "other.route"
    other.write_text(SPEC_ROUTE.read_text())
    code, _, err = run("verify-cert", str(cert), "--against", str(other))
    assert code == 2 and "other.route" in err and "devtools_api.route" in err


def test_tampering_with_the_route_file_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    route = project / "devtools_api.route"
    route.write_text(route.read_text().replace("weight    0.8", "weight    0.9"))
    code, text = verify(run, cert)
    assert code == 1
    assert "input devtools_api.route" in text and "PCSC-E912" in text


def test_tampering_with_the_policy_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    policy = project / "policies" / "venture" / "1.0.0.toml"
    text = policy.read_text()
    assert "decay" in text
    policy.write_text(text.replace("decay = 0.5", "decay = 0.25"))
    code, out = verify(run, cert)
    assert code == 1
    assert "policy venture@1.0.0 (policies/venture/1.0.0.toml)" in out


def test_tampering_with_a_library_fails(run: Run, project: Path) -> None:
    shutil.copy(ROOT / "obligations" / "venture.obl", project / "venture.obl")
    cert = certify(run, project)
    doc = json.loads(cert.read_text())
    assert doc["libraries"][0]["base"] == "certificate" and doc["libraries"][0]["path"] == "venture.obl"
    assert verify(run, cert)[0] == 0
    lib = project / "venture.obl"
    lib.write_text(lib.read_text() + "\n# edited\n")
    code, out = verify(run, cert)
    assert code == 1
    assert "library venture (venture.obl)" in out


def tamper(cert: Path, edit: Callable[[dict[str, Any]], None], resign: bool = False) -> None:
    """Edit a certificate; with ``resign``, as a forger who knows the format would, with
    its digest made again (so only the checker's rules can see the edit)."""
    doc = json.loads(cert.read_text())
    edit(doc)
    if resign:
        body = {k: v for k, v in doc.items() if k != "digest"}
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        doc["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


def step(doc: dict[str, Any], symbol: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in doc["routes"][0]["steps"] if s["symbol"] == symbol)
    return found


def set_number(target: dict[str, Any], value: float) -> None:
    from fractions import Fraction

    x = Fraction(value)
    target["f"], target["q"] = value, f"{x.numerator}/{x.denominator}"


@pytest.mark.parametrize(
    ("symbol", "named"),
    [("launch.p", "launch.p (p = clip"), ("score", "score (score = R_0)"), ("monetize.c", "monetize.c (c = max")],
)
def test_tampering_with_a_number_fails_naming_it(run: Run, project: Path, symbol: str, named: str) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: set_number(step(d, symbol)["value"], step(d, symbol)["value"]["f"] * 1.01))
    code, out = verify(run, cert)
    assert code == 1
    assert named in out, out


def test_tampering_with_a_number_and_its_rational_is_still_caught(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: step(d, "launch.p")["value"].update(f=0.6))
    assert "launch.p" in verify(run, cert)[1]


def test_tampering_with_an_operand_from_the_policy_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: set_number(step(d, "expand.p_prior")["operands"]["prior"], 0.2))
    code, out = verify(run, cert)
    assert code == 1 and 'the policy\'s priors.devtools/scale.p is 0.1' in out


def test_tampering_with_a_coverage_result_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)

    def edit(d: dict[str, Any]) -> None:
        row = next(r for r in d["routes"][0]["coverage"] if r["material"] and r["obligations"])
        row["obligations"][0]["requires"][-1]["result"] = not row["obligations"][0]["requires"][-1]["result"]

    tamper(cert, edit)
    code, out = verify(run, cert)
    assert code == 1 and "coverage " in out and "recomputed" in out


def test_tampering_with_the_verdict_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["routes"][0]["decision"].update(verdict="docked"))
    code, out = verify(run, cert)
    assert code == 1 and "verdict" in out


def test_tampering_with_an_authored_operand_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: set_number(step(d, "launch.U")["operands"]["estimates"][0], 0.56))
    code, out = verify(run, cert)
    assert code == 1 and "launch.U" in out


def test_an_edit_no_rule_sees_is_caught_by_the_digest(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d.update(pcsc="0.0.0"))
    code, out = verify(run, cert)
    assert code == 1 and "edited after it was written" in out


def test_an_invented_admissible_item_is_caught_by_the_gate_operands(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["routes"][0]["admissible_evidence"].append("invented"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "`evidence.admissible`" in out, out


def test_a_refused_route_and_an_overridden_policy_certify(run: Run, project: Path) -> None:
    spliced = project / "spliced.route"
    code, _, err = run("splice", str(project / "devtools_api.route"), "--seam", "1", "-o", str(spliced))
    assert code == 0, err
    cert = project / "spliced.json"
    code, _, err = run("compile", str(spliced), "--cert", str(cert))
    assert code == 3, err
    code, out = verify(run, cert)
    assert code == 0, out
    assert "suspend-and-ask" in out
    cert = certify(run, project, "--set", 'priors."devtools/scale".p=0.2', "--set", "vision.tam=20B",
                   "--coverage", "dock")
    code, out = verify(run, cert)
    assert code == 0, out
    doc = json.loads(cert.read_text())
    assert doc["policies"][0]["sha256"] != doc["policies"][0]["file_sha256"]


def test_the_whole_cohort_certifies(run: Run, tmp_path: Path) -> None:
    # every route of examples/: those under a policy `[fold]` extension, the graph routes and those with payoffs
    # a certificate names only files inside its own folder: copy the examples beside it
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    every = sorted((tmp_path / "examples").rglob("*.route"))
    routes = [str(p) for p in every]
    assert any(p.name == "school_branches.route" for p in every)  # a route that forks and joins with payoffs
    assert len(routes) >= 50
    cert = tmp_path / "cohort.json"
    code, _, err = run("compile", *routes, "--cert", str(cert), "-q")
    assert code == 0, err
    code, out = verify(run, cert)
    assert code == 0, out
    doc = json.loads(cert.read_text())
    assert len(doc["inputs"]) == len(routes) and len(doc["routes"]) >= len(routes)
    folds = {(r["fold"]["discount"]["f"], r["fold"]["abandonment"]["v"]) for r in doc["routes"]}
    assert {(0.0, False), (0.08, False), (0.08, True)} <= folds  # the paper's, the discounted, the option to stop


def test_standard_input_cannot_be_certified(monkeypatch: pytest.MonkeyPatch, run: Run, tmp_path: Path) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(SPEC_ROUTE.read_text()))
    code, out, err = run("compile", "-", "--cert", str(tmp_path / "x.json"))
    assert code == 1 and "PCSC-E911" in err and "<stdin>" in err
    assert not (tmp_path / "x.json").exists()


def test_verify_cert_output_validates(run: Run, project: Path) -> None:
    cert = certify(run, project)
    code, out, _ = run("verify-cert", str(cert), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["verified"] is True
    schemas.validate(doc)
    tamper(cert, lambda d: d["routes"][0]["decision"].update(verdict="docked"))
    code, out, _ = run("verify-cert", str(cert), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["verified"] is False and "verdict" in doc["difference"]["what"]
    schemas.validate(doc)


# ---------------------------------------------------------------------- certificates: authored numbers
def _bindings(node: Any) -> list[dict[str, Any]]:
    """Every `written` place recorded anywhere under ``node``."""
    if isinstance(node, dict):
        if {"line", "column", "end_line", "end_column", "text"} <= set(node):
            return [node]
        return [b for v in node.values() for b in _bindings(v)]
    if isinstance(node, list):
        return [b for v in node for b in _bindings(v)]
    return []


def forge(run: Run, project: Path, old: str, new: str, restore_text: bool) -> Path:
    """The forgery a digest cannot see: the route compiled with one number changed
    (``old`` -> ``new``), so every step that depends on it is recomputed by the compiler
    itself, put in the honest certificate of the unchanged file (whose hash it keeps)
    and the digest made again. With ``restore_text`` each recorded `written` text is
    also set to what the unchanged file has at that place."""
    cert = certify(run, project)
    forger = project.parent / "forger"
    shutil.copytree(project, forger)
    route = forger / "devtools_api.route"
    text = route.read_text()
    assert text.count(old) == 1
    route.write_text(text.replace(old, new))
    routes = json.loads(certify(run, forger).read_text())["routes"]
    assert routes != json.loads(cert.read_text())["routes"]
    if restore_text:
        lines = (project / "devtools_api.route").read_text().split("\n")
        for b in _bindings(routes):
            assert b["line"] == b["end_line"]
            b["text"] = lines[b["line"] - 1][b["column"] - 1 : b["end_column"] - 1]
    tamper(cert, lambda d: d.update(routes=routes), resign=True)
    return cert


AUTHORED = [
    # a cost item's count and unit cost changed, the budget kept: no step changes
    ("engineers  2 * 45k usd", "engineers  3 * 30k usd", "launch.budget: cost item `engineers`", 27),
    ("hosting    6 * 1.5k usd", "hosting    6 * 1k usd", "launch.budget: cost item `hosting`", 28),
    ("tam            10B usd", "tam            20B usd", "V: vision `tam`", 13),
    ("defensibility  0.6", "defensibility  0.9", "V: vision `defensibility`", 15),
    ("tier      2\n        weight    0.8", "tier      3\n        weight    0.8",
     "launch.sat(C): evidence `hn_launch` tier", 70),
    ("weight    0.8", "weight    0.9", "launch.sat(C): evidence `hn_launch` weight", 71),
    ("estimates  0.55 0.7 0.6", "estimates  0.55 0.9 0.6", "launch.U: estimates", 31),
    ("team     70", "team     90", "T: criterion `team`", 104),
    # another transition's threshold, which the file does write (only not for launch)
    ("threshold  developers >= 500", "threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd",
     "`threshold` (line 23 of devtools_api.route)", 23),
]


@pytest.mark.parametrize(("old", "new", "named", "line"), AUTHORED, ids=[a[2].split(": ")[-1] for a in AUTHORED])
def test_a_forged_authored_number_with_every_step_recomputed_fails_naming_it(
    run: Run, project: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, named: str, line: int
) -> None:
    import pcsc.certify.check.certificate
    import pcsc.certify.check.recompute
    from pcsc.base.resources import data_dir

    bases = {"certificate": project, "shipped-obligations": data_dir("obligations"),
             "shipped-policies": data_dir("policies")}
    for restore_text in (False, True):
        cert = forge(run, project, old, new, restore_text)
        code, out = verify(run, cert)
        assert code == 1 and "PCSC-E912" in out, out
        assert named in out and f"line {line} of devtools_api.route" in out, out
        with monkeypatch.context() as m:  # every other rule holds: only the file's numbers tell the forgery
            m.setattr(pcsc.certify.check.certificate, "check_written", lambda *a: None)
            m.setattr(pcsc.certify.check.recompute, "check_written_conditions", lambda *a: None)
            pcsc.certify.check.verify(cert.read_text(), bases)
        shutil.rmtree(project.parent / "forger")


def test_an_authored_number_bound_to_another_statement_fails(run: Run, project: Path) -> None:
    """The forger points a number's `written` at a statement elsewhere in the file that
    writes the value it wants: another evidence item's weight, another transition's
    cost item of the same name."""
    cert = forge(run, project, "weight    0.8", "weight    0.7", restore_text=False)
    pricing = next(i for i, x in enumerate(SPEC_ROUTE.read_text().splitlines(), 1) if "weight    0.7" in x)

    def point(d: dict[str, Any]) -> None:
        row = step(d, "launch.sat(C)")["operands"]["items"][0]
        row["written"]["weight"].update(line=pricing, end_line=pricing)

    tamper(cert, point, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "evidence `hn_launch` weight" in out and "is not the `weight` statement of" in out, out
    shutil.rmtree(project.parent / "forger")
    cert = forge(run, project, "engineers  2 * 45k usd", "engineers  4 * 150k usd", restore_text=False)
    monetize = next(i for i, x in enumerate(SPEC_ROUTE.read_text().splitlines(), 1) if "4 * 150k" in x)
    tamper(cert, lambda d: step(d, "launch.budget")["operands"]["items"][0]["written"].update(
        line=monetize, end_line=monetize), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "cost item `engineers`" in out and "transition launch > cost" in out, out


def test_a_cost_item_left_out_with_every_step_recomputed_fails(run: Run, project: Path) -> None:
    cert = forge(run, project, "hosting    6 * 1.5k usd", "# hosting", restore_text=False)
    code, out = verify(run, cert)
    assert code == 1 and "launch.budget: its cost items are engineers;" in out and "engineers, hosting" in out, out


def test_a_number_a_route_override_sets_is_checked_against_the_override(run: Run, project: Path) -> None:
    cert = certify(run, project, "--set", "route.transitions.launch.cost.engineers=50k", "--set", "vision.tam=20B")
    assert verify(run, cert)[0] == 0
    assert step(json.loads(cert.read_text()), "launch.budget")["operands"]["items"][0]["written"]["text"] == (
        "engineers  2 * 45k usd")
    tamper(cert, lambda d: d["overrides"].pop(), resign=True)  # the cost override stays; tam is not set now
    code, out = verify(run, cert)
    assert code == 1 and "V: vision `tam` (line 13 of devtools_api.route): is 20000000000.0, but the file " \
        "writes 10000000000.0" in out, out


# ---------------------------------------------------------------------- certificates: expressions
def requires(doc: dict[str, Any], expr: str, transition: str | None = None) -> list[dict[str, Any]]:
    """Every recorded evaluation of a require line with the expression ``expr``."""
    return [req for row in doc["routes"][0]["coverage"] for o in row["obligations"] for req in o["requires"]
            if req["expr"] == expr and transition in (None, row["transition"])]


def gates(doc: dict[str, Any]) -> dict[str, Any]:
    operands: dict[str, Any] = step(doc, "eligible")["operands"]
    return operands


@pytest.fixture
def ci_cache(tmp_path: Path) -> Path:
    """A route whose `soc2` change is covered by `require grounded(asset)`."""
    folder = tmp_path / "ci"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "ci_cache.route", folder / "ci_cache.route")
    return folder


def certify_file(run: Run, route: Path, *extra: str) -> Path:
    cert = route.parent / "out.json"
    code, _, err = run("compile", str(route), "--cert", str(cert), *extra)
    assert code in (0, 3), err
    return cert


def test_a_certificate_records_each_expression_and_its_operands(run: Run, project: Path) -> None:
    doc = json.loads(certify(run, project).read_text())
    (budget, *_) = requires(doc, "budget >= floor(delta)", "monetize")
    assert budget["operands"] == {"budget": {**step(doc, "monetize.budget")["value"], "step": "monetize.budget"}}
    assert [d["field"] for d in budget["delta"]] == ["paying_teams", "arr"]
    (measured, *_) = requires(doc, "measured(delta)", "launch")
    line = next(i for i, x in enumerate(SPEC_ROUTE.read_text().splitlines(), 1) if "developers >= 500" in x)
    column = SPEC_ROUTE.read_text().splitlines()[line - 1].index("developers") + 1
    assert measured["operands"]["threshold"] == {
        "v": "developers >= 500",
        "written": {"line": line, "column": column, "end_line": line, "end_column": column + len("developers >= 500"),
                    "text": "developers >= 500"},
    }
    (evidence, *_) = requires(doc, "evidence(tier >= 2) >= 1", "launch")
    assert [e["name"] for e in evidence["evidence"]] == ["hn_launch"]
    gate = gates(doc)
    assert gate["gates"][0]["rule"] == "count(evidence.admissible) >= 1"
    assert gate["names"]["score"]["step"] == "score"


def test_tampering_with_a_gate_result_fails_naming_the_gate(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: gates(d)["gates"][0].update(passed=False), resign=True)
    code, out = verify(run, cert)
    assert code == 1
    assert "gate `has-admissible-evidence` (`count(evidence.admissible) >= 1`)" in out
    assert "recorded passed=False, recomputed True" in out


def test_tampering_with_a_gate_operand_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["routes"][0]["admissible_evidence"].clear()
           or gates(d)["names"]["evidence"]["record"]["admissible"]["v"].clear(), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "`evidence.admissible`" in out, out
    cert = certify(run, project)
    tamper(cert, lambda d: set_number(gates(d)["names"]["score"], 1.0), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "eligible" in out and "`score`" in out and "but step `score` is" in out, out


def test_tampering_with_a_grounded_result_fails(run: Run, ci_cache: Path) -> None:
    cert = certify_file(run, ci_cache / "ci_cache.route")
    assert verify(run, cert)[0] == 0
    doc = json.loads(cert.read_text())
    assert [r["result"] for r in requires(doc, "grounded(asset)")] == [True]
    tamper(cert, lambda d: requires(d, "grounded(asset)")[0].update(result=False), resign=True)
    code, out = verify(run, cert)
    assert code == 1
    assert "coverage soc2_audit.soc2: compliance: `require grounded(asset)` (line 26)" in out
    assert "recorded False, recomputed True" in out


def test_tampering_with_an_evidence_excerpt_fails(run: Run, ci_cache: Path) -> None:
    cert = certify_file(run, ci_cache / "ci_cache.route")

    def edit(d: dict[str, Any]) -> None:
        item = requires(d, "grounded(asset)")[0]["evidence"][0]
        item["excerpt"] = item["excerpt"].replace("SOC 2 Type II report", "security review")

    tamper(cert, edit, resign=True)
    code, out = verify(run, cert)
    assert code == 1
    assert "evidence `security_reviews`: its excerpt" in out and "`evidence security_reviews` in ci_cache.route" in out


def test_tampering_with_a_grounded_operand_fails(run: Run, ci_cache: Path) -> None:
    cert = certify_file(run, ci_cache / "ci_cache.route")
    tamper(cert, lambda d: requires(d, "grounded(asset)")[0]["operands"]["asset"].update(v="SOC 3 report"),
           resign=True)
    code, out = verify(run, cert)
    assert code == 1
    assert "`asset`: is 'SOC 3 report', but" in out and "ci_cache.route writes" in out


def test_a_malformed_or_older_certificate_is_a_difference_not_a_crash(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["routes"][0]["coverage"][0].pop("obligations"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E912" in out and "certificate: malformed: KeyError 'obligations'" in out, out
    cert = certify(run, project)
    tamper(cert, lambda d: d.update(version=7), resign=True)  # 7: no payoffs, a registry taken as recorded
    code, out = verify(run, cert)
    assert code == 1 and "a certificate of format version 7" in out and "this checker reads version 8" in out, out


def test_claiming_an_obligation_the_route_does_not_list_fails(run: Run, project: Path) -> None:
    """A forger who marks an obligation claimed (so that it would cover a change) is
    caught: the transition's `discharges` in the hashed route file says otherwise."""
    cert = certify(run, project)

    def edit(d: dict[str, Any]) -> None:
        row = next(r for r in d["routes"][0]["coverage"] if r["transition"] == "launch" and r["material"])
        row["obligations"][0]["claimed"] = False

    tamper(cert, edit, resign=True)
    code, out = verify(run, cert)
    assert code == 1, out
    assert "coverage launch.developers: adoption: is recorded claimed=False, but `launch` in devtools_api.route " \
           "lists adoption in its `discharges`" in out


def test_tampering_with_the_evidence_an_evidence_call_reads_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: requires(d, "evidence(tier >= 2) >= 1", "launch")[0]["evidence"].clear(), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "is not the admissible supporting evidence `launch.sat(C)` weighs, in the order" in out
    cert = certify(run, project)
    tamper(cert, lambda d: set_number(requires(d, "evidence(tier >= 2) >= 1", "launch")[0]["evidence"][0]["tier"],
                                      3.0), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "evidence `hn_launch`: its tier or weight" in out


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: set_number(requires(d, "budget >= floor(delta)", "monetize")[0]["operands"]["budget"], 1e9),
         "`budget`: is 1000000000.0, but step `monetize.budget` is 720000.0"),
        (lambda d: requires(d, "measured(delta)", "launch")[0]["delta"][0].update(target=50.0),
         "`delta`: its changes are not the transition's material changes"),
        (lambda d: requires(d, "measured(delta)", "launch")[0]["operands"]["threshold"].update(v="developers >= 50"),
         "`threshold`: `developers >= 50` is not the threshold of a transition"),
        (lambda d: requires(d, "evidence(tier >= 2) >= 1", "launch")[0].update(expr="evidence(tier >= 1) >= 1"),
         "its require lines are not those its library writes, in order"),
        (lambda d: requires(d, "kill", "launch")[0]["operands"].clear(),
         "`require kill` (line 11): recorded True, recomputed False"),
    ],
    ids=["budget", "delta", "threshold", "expression", "missing-operand"],
)
def test_tampering_with_a_require_operand_fails_naming_it(
    run: Run, project: Path, edit: Callable[[dict[str, Any]], None], named: str
) -> None:
    cert = certify(run, project)
    tamper(cert, edit, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and named in out, out


EXTRA_OBLIGATION = """
obligation extras covers developers, paying_teams {
    require not grounded(asset) or budget > 2 * learning_cost
    require evidence(source != none and captured >= 2012-01-01 and excerpt != "") >= 1
    require count(evidence(weight > 0.6 or tier >= 3)) == 1
    require min(budget, 5k usd) + max(1, 2, 3) / 3 * 1 usd > 0.1k usd
    require -budget < -(1_000 usd) and horizon >= 90 days
    require horizon <= 3 months and horizon < 1 years and horizon + 1 days > 90 days and horizon * 2 / 90 days == 2
    require horizon >= 12 months or horizon / 2 <= 6 months - 90 days or budget == 0
    require as_of > 2012-01-01 and class != "none"
    require delta.developers >= 10% * 100 or delta.paying_teams > 0
    require grounded("the first WEEK") or grounded(mechanism)
    require evidence(name == "hn_launch") == evidence(tier == 2)
    require floor(delta) <= budget * 10 and measured(delta)
    require budget / 0 > 1 usd
    require kill and threshold and actor == none
}
"""
EXTRA_GATES = """
[[gates]]
id = "arith"
kind = "risk"
rule = "score / value > 0.001 and flat_product * 100 >= 1.5 or not (criteria_score < 50)"

[[gates]]
id = "dates"
kind = "risk"
rule = "route.as_of >= 2012-06-01 and route.name == \\"devtools_api\\" and count(route.transitions) == 3"

[[gates]]
id = "fails"
kind = "risk"
rule = "count(evidence.all) > count(evidence.admissible) or min(score, 1 usd) > 2 usd"
"""


def test_the_checker_evaluates_the_language_as_the_compiler_does(run: Run, project: Path) -> None:
    """Gate rules and require lines over the whole language (arithmetic, literals with
    suffixes and units, dates, texts, none, attributes, every built-in, an error): the
    checker's own evaluator agrees with the compiler's on every one, true or false, and
    a flipped result is caught on every one."""
    library = project / "venture.obl"
    library.write_text((ROOT / "obligations" / "venture.obl").read_text() + EXTRA_OBLIGATION)
    digest = hashlib.sha256(library.read_bytes()).hexdigest()
    policy = project / "policies" / "venture" / "1.0.0.toml"
    text = policy.read_text()
    old = hashlib.sha256((ROOT / "obligations" / "venture.obl").read_bytes()).hexdigest()
    assert old in text
    policy.write_text(text.replace(old, digest) + EXTRA_GATES)
    cert = certify(run, project)
    code, out = verify(run, cert)
    assert code == 0, out
    doc = json.loads(cert.read_text())
    extras = [req for row in doc["routes"][0]["coverage"] for o in row["obligations"] if o["obligation"] == "extras"
              for req in o["requires"]]
    assert len(extras) >= 24
    results = [r["result"] for r in extras]
    assert True in results and False in results
    assert any(r.get("error") == "division by zero" for r in extras)
    assert {g["id"]: g["passed"] for g in gates(doc)["gates"]} == {
        "has-admissible-evidence": True, "arith": True, "dates": True, "fails": False}
    for i in range(len(extras)):
        flipped = cert.parent / "flipped.json"
        shutil.copy(cert, flipped)

        def flip(d: dict[str, Any], i: int = i) -> None:
            found = [req for row in d["routes"][0]["coverage"] for o in row["obligations"]
                     if o["obligation"] == "extras" for req in o["requires"]]
            found[i]["result"] = not found[i]["result"]

        tamper(flipped, flip, resign=True)
        code, out = verify(run, flipped)
        assert code == 1 and f"`{extras[i]['require']}`" in out and "recomputed" in out, out
    for gate_id in ("arith", "dates", "fails"):
        flipped = cert.parent / "flipped.json"
        shutil.copy(cert, flipped)
        tamper(flipped, lambda d, g=gate_id: next(x for x in gates(d)["gates"] if x["id"] == g).update(
            passed=not next(x for x in gates(d)["gates"] if x["id"] == g)["passed"]), resign=True)
        code, out = verify(run, flipped)
        assert code == 1 and f"gate `{gate_id}`" in out, out
    for name, forged in (("learning_cost", 1.0), ("horizon", 9.0)):
        flipped = cert.parent / "flipped.json"
        shutil.copy(cert, flipped)
        tamper(flipped, lambda d, n=name, x=forged: set_number(next(
            req for row in d["routes"][0]["coverage"] for o in row["obligations"] for req in o["requires"]
            if n in req["operands"])["operands"][n], x), resign=True)
        code, out = verify(run, flipped)
        assert code == 1 and f"`{name}`: is {forged}, but `launch` in devtools_api.route states" in out, out


# ---------------------------------------------------------------------- gate --suggest
@pytest.fixture
def spliced(run: Run, tmp_path: Path) -> Path:
    out = tmp_path / "spliced.route"
    code, _, err = run("splice", str(SPEC_ROUTE), "--seam", "1", "-o", str(out))
    assert code == 0, err
    return out


def apply_every_suggestion(run: Run, route: Path, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    """Apply each suggestion for ``route`` alone; each edited route must be released, at
    the score the suggestion showed. Returns the suggestions."""
    code, doc = packet(run, "gate", str(route), "--suggest", *extra)
    assert code == 3
    suggestions: list[dict[str, Any]] = doc["suggestions"]
    assert suggestions
    schemas.validate(doc)
    covered = {c for s in suggestions for c in s["changes"]}
    assert covered == {f"{u['transition']}.{u['field']}" for u in doc["routes"][0]["uncovered"]}
    for s in suggestions:
        fixed = tmp_path / f"fixed{s['n']}.route"
        code, _, err = run("gate", str(route), "--suggest", *extra, "--apply", str(s["n"]), "-o", str(fixed))
        assert code == 3, err  # the refused route itself is still refused
        code, out = packet(run, "compile", str(fixed))
        assert code == 0, out["diagnostics"]
        compiled = out["routes"][0]
        assert compiled["verdict"] == "released"
        assert compiled["score"] == s["score_after"]
    return suggestions


def test_every_suggestion_for_the_spliced_route_releases_it(run: Run, spliced: Path, tmp_path: Path) -> None:
    apply_every_suggestion(run, spliced, tmp_path)


def test_restoring_the_deleted_transition_is_suggested_and_releases_it(run: Run, spliced: Path,
                                                                       tmp_path: Path) -> None:
    """Given the version it was spliced from, the first suggestion restores the deleted
    transition: applied, it is that version again (no typed difference, the same score)."""
    suggestions = apply_every_suggestion(run, spliced, tmp_path, "--was", str(SPEC_ROUTE))
    first = suggestions[0]
    assert first["edits"] == ["restore the deleted transition `monetize` from the earlier version: "
                              "`launch` ends at `wedge` again"]
    assert len(suggestions) == 2  # and the edits that release it without restoring
    _, honest = packet(run, "compile", str(SPEC_ROUTE))
    assert first["score_after"] == honest["routes"][0]["score"]
    code, diff = packet(run, "diff", str(SPEC_ROUTE), str(tmp_path / "fixed1.route"))
    assert code == 0
    assert diff["removed"] == diff["added"] == diff["retargeted"] == diff["seam_skips"] == []
    # without the earlier version, no restore is offered
    code, doc = packet(run, "gate", str(spliced), "--suggest")
    assert not any("restore" in e for s in doc["suggestions"] for e in s["edits"])


def test_missing_evidence_of_the_needed_tier_is_suggested(run: Run, spliced: Path, tmp_path: Path) -> None:
    """`require evidence(tier >= 2) >= 1` fails when launch's only evidence is tier 1:
    a placeholder of tier 2 supporting launch is added, and it releases the route."""
    text = spliced.read_text()
    at = text.index("evidence hn_launch")
    weak = tmp_path / "weak.route"
    weak.write_text(text[:at] + re.sub(r"tier(\s+)2", r"tier\g<1>1", text[at:], count=1))
    suggestions = apply_every_suggestion(run, weak, tmp_path)
    assert any("add evidence of tier 2 supporting `launch`" in e for s in suggestions for e in s["edits"])
    fixed = (tmp_path / "fixed1.route").read_text()
    assert "evidence needed_launch_tier2 {" in fixed and re.search(r"supports\s+launch", fixed)
    # the placeholder is marked for the author and weighs nothing until filled in
    assert "TODO" in fixed and re.search(r"weight\s+0\n", fixed)


def test_suggest_on_nothing_compiled_says_only_the_error(run: Run, tmp_path: Path) -> None:
    code, out, err = run("gate", str(tmp_path), "--suggest")
    assert code == 1 and "PCSC-E106" in err and "suggestions" not in out


def test_an_earlier_version_that_does_not_load_is_a_diagnostic(run: Run, spliced: Path, tmp_path: Path) -> None:
    code, _, err = run("gate", str(spliced), "--suggest", "--was", str(tmp_path / "nope.route"))
    assert code == 1 and "PCSC-E105" in err and "Traceback" not in err


def test_suggestions_name_their_edits(run: Run, spliced: Path) -> None:
    code, out, _ = run("gate", str(spliced), "--suggest")
    assert code == 3
    assert "list `monetization` in the `discharges` of `launch`" in out
    assert "add `developers >= 5_000`" in out
    assert "floor_gap" in out


def test_a_released_route_has_no_suggestion(run: Run) -> None:
    code, doc = packet(run, "gate", str(SPEC_ROUTE), "--suggest")
    assert code == 0 and doc["suggestions"] == []
    code, _, err = run("gate", str(SPEC_ROUTE), "--suggest", "--apply", "1")
    assert code == 2 and "there are 0 suggestions" in err


# ---------------------------------------------------------------------- acceptance: any number, any structure
def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict):
        return [leaf for k, v in node.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(node, list):
        return [leaf for i, v in enumerate(node) for leaf in _leaves(v, (*path, i))]
    return [(path, node)]


def test_tampering_with_any_number_of_a_certificate_fails(run: Run, project: Path) -> None:
    """Every number of the reference route's certificate, changed alone (its float and
    rational kept consistent, so only the checker's rules and the digest can see it),
    makes the checker fail; most are named by the step or coverage row that uses them."""
    from fractions import Fraction

    from pcsc.base.resources import data_dir
    from pcsc.certify.check import Mismatch
    from pcsc.certify.check import verify as check

    cert = certify(run, project)
    doc = json.loads(cert.read_text())
    bases = {"certificate": project, "shipped-obligations": data_dir("obligations"),
             "shipped-policies": data_dir("policies")}
    numbers = [(p, x) for p, x in _leaves(doc) if isinstance(x, (int, float)) and not isinstance(x, bool)]
    assert len(numbers) > 200
    named = 0
    for path, x in numbers:
        edited = json.loads(cert.read_text())
        node = edited
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = x * 1.01 + 1
        if path[-1] == "f" and "q" in node:
            exact = Fraction(float(node["f"]))
            node["q"] = f"{exact.numerator}/{exact.denominator}"
        with pytest.raises(Mismatch) as caught:
            check(json.dumps(edited), bases)
        named += "edited after it was written" not in caught.value.message
    assert named > len(numbers) // 2


def test_a_malformed_certificate_is_a_diagnostic_not_a_crash(run: Run, project: Path, tmp_path: Path) -> None:
    cert = certify(run, project)
    doc = json.loads(cert.read_text())
    bad = tmp_path / "bad.json"
    edits: list[Callable[[dict[str, Any]], None]] = [
        *[(lambda d, k=k: d.pop(k)) for k in sorted(doc) if k not in ("certificate", "version")],
        lambda d: step(d, "launch.p")["value"].update(q="not/a number"),
        lambda d: step(d, "launch.p").pop("operands"),
        lambda d: d["routes"][0]["coverage"][0].pop("obligations"),
        lambda d: d["routes"][0].update(steps="none"),
    ]
    for edit in edits:
        edited = json.loads(cert.read_text())
        edit(edited)
        bad.write_text(json.dumps(edited))
        code, out, err = run("verify-cert", str(bad))
        assert code == 1, (out, err)
        assert "PCSC-E912" in err and "internal error" not in err, err
    from pcsc.certify.check import VERSION

    bad.write_text(json.dumps({"certificate": "pcsc-decision-certificate", "version": VERSION}))
    code, _, err = run("verify-cert", str(bad))
    assert code == 1 and "malformed" in err and "policies" in err


def test_vision_overrides_are_checked_as_the_route_language_checks_them(run: Run) -> None:
    for bad in ("vision.tam=-5", "vision.capture=1.5", "route.vision.defensibility=-1", "vision.tam=inf"):
        code, _, err = run("compile", str(SPEC_ROUTE), "--set", bad)
        assert code == 1 and "PCSC-E901" in err, (bad, err)
    assert parse_override("vision.capture=100%").value == 1.0


def test_freeze_stores_the_certificate_beside_the_packet(run: Run, project: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    code, _, err = run("freeze", "devtools_api.route", "--policy-path", "policies", "--ledger", "l.sqlite", "--cert")
    assert code == 0, err
    code, out, err = run("ledger", "show", "--ledger", "l.sqlite", "--format", "json")
    [entry] = json.loads(out)["entries"]
    assert set(entry["payload"]) >= {"packet", "certificate"}
    assert entry["payload"]["certificate"]["routes"][0]["decision"]["verdict"] == entry["payload"]["packet"]["verdict"]
    assert run("ledger", "verify", "--ledger", "l.sqlite")[0] == 0  # the chain covers it
    code, _, err = run("ledger", "show", "--ledger", "l.sqlite", "--cert", "1", "-o", "stored.json")
    assert code == 0, err
    code, out, _ = run("ledger", "show", "--ledger", "l.sqlite", "--cert", "1", "--format", "json")
    schemas.validate(json.loads(out))
    compiled = certify(run, project)  # the same route compiled with --cert in the same folder
    assert (project / "stored.json").read_bytes() == compiled.read_bytes()
    assert verify(run, project / "stored.json")[0] == 0
    route = project / "devtools_api.route"
    route.write_text(route.read_text().replace("estimates  0.55 0.7 0.6", "estimates  0.55 0.7 0.65"))
    code, out = verify(run, project / "stored.json")
    assert code == 1 and "input devtools_api.route" in out


def test_a_forecast_frozen_without_cert_has_none_to_show(run: Run, project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    code, _, err = run("freeze", "devtools_api.route", "--policy-path", "policies", "--ledger", "l.sqlite")
    assert code == 0, err
    code, out, _ = run("ledger", "show", "--ledger", "l.sqlite", "--format", "json")
    assert "certificate" not in json.loads(out)["entries"][0]["payload"]
    for seq, why in (("1", "frozen without --cert"), ("7", "no such forecast")):
        code, out, err = run("ledger", "show", "--ledger", "l.sqlite", "--cert", seq)
        assert code == 1 and "PCSC-E911" in err and why in err and out == ""
        code, out, err = run("ledger", "show", "--ledger", "l.sqlite", "--cert", seq, "--format", "json")
        doc = json.loads(out)
        assert code == 1 and doc["ok"] is False and why in doc["error"]
        schemas.validate(doc)


def test_a_certificate_is_the_same_on_a_machine_with_other_line_ends_and_install_folders(
    run: Run, project: Path, tmp_path: Path
) -> None:
    """Another machine: the route and policy checked out with CRLF line ends, in another
    folder, and PCSC's shipped library and policies installed somewhere else."""
    from pcsc.base.resources import data_dir
    from pcsc.certify.check import verify as check

    cert = certify(run, project)
    other = tmp_path / "windows" / "checkout"
    for f in project.rglob("*"):
        if f.is_file() and f.suffix in (".route", ".toml"):
            target = other / f.relative_to(project)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes().replace(b"\n", b"\r\n"))
    again = certify(run, other)
    assert again.read_bytes() == cert.read_bytes()
    install = tmp_path / "site-packages" / "pcsc"
    shutil.copytree(data_dir("obligations"), install / "obligations")
    shutil.copytree(data_dir("policies"), install / "policies")
    summary = check(cert.read_text(), {"certificate": other, "shipped-obligations": install / "obligations",
                                       "shipped-policies": install / "policies"})
    assert summary["inputs"] == 1 and summary["libraries"] == 1


def test_tampering_with_a_policy_it_extends_fails_naming_it(run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "ext"
    shutil.copytree(ROOT / "policies" / "venture", folder / "policies" / "venture")
    shutil.copy(EXAMPLES_COHORT / "api_monitoring.route", folder / "api_monitoring.route")
    cert = folder / "c.json"
    code, _, err = run("compile", str(folder / "api_monitoring.route"), "--policy-path", str(folder / "policies"),
                       "--cert", str(cert))
    assert code == 0, err
    assert verify(run, cert)[0] == 0
    parent = folder / "policies" / "venture" / "1.0.0.toml"
    parent.write_text(parent.read_text().replace("decay = 0.5", "decay = 0.25"))
    code, out = verify(run, cert)
    assert code == 1 and "venture@1.0.0 (policies/venture/1.0.0.toml)" in out


# ---------------------------------------------------------------------- certificates under the policy's fold
BINDERS = ROOT / "examples" / "domains" / "protein_binders.route"
STOP = "R_i = max(0, −c_i + p_i · d_i · R_{i+1})"


@pytest.fixture
def binders(run: Run, tmp_path: Path) -> Path:
    """The certificate of protein_binders under planner-stop@1.0.0 (8% a year, the option
    to stop): every stage's plain continuation is negative, so the planner stops before
    each, and the score is max(0, ·) = 0."""
    folder = tmp_path / "binders"
    folder.mkdir()
    shutil.copy(BINDERS, folder / BINDERS.name)
    return certify_file(run, folder / BINDERS.name)


STAGES = ("wet_lab", "open_release", "pharma_deal", "first_candidate")


def test_a_certificate_records_the_fold_each_discount_and_each_stop(run: Run, binders: Path) -> None:
    code, out = verify(run, binders)
    assert code == 0, out
    doc = json.loads(binders.read_text())
    fold = doc["routes"][0]["fold"]
    assert fold["discount"]["f"] == 0.08 and fold["discount"]["policy"] == ["fold", "discount"]
    assert fold["abandonment"] == {"v": True, "policy": ["fold", "abandonment"]}
    d = step(doc, "wet_lab.d")
    assert d["operands"]["horizon"]["f"] == 10.0 and d["operands"]["unit"] == {"v": "months"}
    assert d["operands"]["rate"]["f"] == 0.08
    # the discount by hand: 10 months at 8% a year, 4 years at 8% a year
    assert d["value"]["f"] == pytest.approx(1.08 ** (-10 / 12), rel=1e-15)
    assert step(doc, "first_candidate.d")["value"]["f"] == pytest.approx(1.08 ** -4, rel=1e-15)
    last = step(doc, "R_3")
    assert last["rule"] == STOP and {k: o["step"] for k, o in last["operands"].items()} == {
        "c": "first_candidate.c", "p": "first_candidate.p", "d": "first_candidate.d", "R_next": "R_4"}
    c, p = step(doc, "first_candidate.c")["value"]["f"], step(doc, "first_candidate.p")["value"]["f"]
    assert step(doc, "R_4")["value"]["f"] == 180e6 and -c + p * 1.08 ** -4 * 180e6 < 0  # the plain fold loses
    assert last["value"]["f"] == 0.0 and step(doc, "score")["value"]["f"] == 0.0
    assert [step(doc, f"{t}.stops")["value"]["v"] for t in STAGES] == [True] * 4
    assert [step(doc, f"{t}.walking")["value"]["v"] for t in STAGES] == [False] * 4
    assert [step(doc, f"{t}.D")["value"]["f"] for t in STAGES] == [0.0] * 4


def _horizon(doc: dict[str, Any]) -> None:
    """wet_lab's horizon as 11 months, with d made again to match it (a careful forger)."""
    d = step(doc, "wet_lab.d")
    set_number(d["operands"]["horizon"], 11.0)
    set_number(d["value"], (1.0 + 0.08) ** -(11.0 / 12.0))
    for s in doc["routes"][0]["steps"]:
        for o in s["operands"].values():
            if isinstance(o, dict) and o.get("step") == "wet_lab.d":
                set_number(o, d["value"]["f"])


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: set_number(d["routes"][0]["fold"]["discount"], 0.09),
         "fold: the discount rate: is 0.09, but the policy's fold.discount is 0.08"),
        (lambda d: set_number(step(d, "open_release.d")["operands"]["rate"], 0.05),
         "open_release.d (d = (1 + r)^(−h)"),
        (_horizon, "wet_lab.d (d = (1 + r)^(−h), h the horizon in years (days / 365.25, months / 12, none: 0)): "
                   "horizon 11.0 months is recorded, but `wet_lab` in protein_binders.route states horizon 10.0 "
                   "months"),
        (lambda d: step(d, "first_candidate.d")["operands"]["unit"].update(v="months"),
         "horizon 4.0 months is recorded, but `first_candidate` in protein_binders.route states horizon 4.0 years"),
        (lambda d: set_number(step(d, "pharma_deal.d")["value"], step(d, "pharma_deal.d")["value"]["f"] * 0.99),
         "pharma_deal.d (d = (1 + r)^(−h)"),
        (lambda d: step(d, "pharma_deal.stops")["value"].update(v=False),
         "pharma_deal.stops (stops = −c + p · d · R_next < 0 (the planner stops before paying this stage)): "
         "recorded False, recomputed True"),
        (lambda d: set_number(step(d, "R_0")["value"], -418_000.0),
         f"R_0 ({STOP}): recorded -418000.0, recomputed 0.0"),
        (lambda d: step(d, "open_release.walking")["value"].update(v=True), "open_release.walking (walking = "),
        (lambda d: step(d, "R_2").update(rule="R_i = −c_i + p_i · R_{i+1}"),
         "is a rule of the paper's fold, but the policy's fold is the fold with the option to stop"),
        (lambda d: d["routes"][0]["fold"]["abandonment"].update(v=False),
         "fold: abandonment: is recorded False, but the policy's fold.abandonment is True"),
    ],
    ids=["rate", "rate-of-a-step", "horizon", "unit", "d", "stop-flag", "max0", "walking", "paper-rule", "no-stop"],
)
def test_tampering_with_the_fold_is_caught_and_named(run: Run, binders: Path,
                                                     edit: Callable[[dict[str, Any]], None], named: str) -> None:
    tamper(binders, edit, resign=True)  # re-signed: only the checker's rules can see the edit
    code, out = verify(run, binders)
    assert code == 1 and "PCSC-E912" in out and named in out, out


def test_a_discount_over_days_set_by_an_override_certifies(run: Run, project: Path) -> None:
    """The spec route's horizons are in days: under `--set fold.discount=0.1` (and the
    option to stop) each d is 1.1^(−days/365.25), and the overridden policy is re-hashed."""
    cert = certify(run, project, "--set", "fold.discount=0.1", "--set", "fold.abandonment=true")
    code, out = verify(run, cert)
    assert code == 0, out
    doc = json.loads(cert.read_text())
    launch = step(doc, "launch.d")
    assert launch["operands"]["unit"] == {"v": "days"}
    days = launch["operands"]["horizon"]["f"]
    assert launch["value"]["f"] == pytest.approx(1.1 ** (-days / 365.25), rel=1e-15) and launch["value"]["f"] < 1
    assert step(doc, "R_0")["rule"] == STOP
    tamper(cert, lambda d: set_number(d["routes"][0]["fold"]["discount"], 0.0), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "the policy's fold.discount is 0.1" in out, out


def test_a_planner_who_walks_then_stops_certifies(run: Run, tmp_path: Path) -> None:
    """organoid_screens made free to start (no class floor, no cost, no delta floor on
    `units`) and worth little (tam 2M): the planner walks `second_lab` (its continuation
    is 0, not below) and stops before `early_access`. A walking step that forgets the
    stage before it (so that a stop upstream would not count) is caught."""
    folder = tmp_path / "organoid"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "domains" / "organoid_screens.route", folder / "organoid_screens.route")
    cert = certify_file(run, folder / "organoid_screens.route", "--set", 'priors."biotech/prototype".floor_usd=0',
                        "--set", "route.transitions.second_lab.cost.founders=0",
                        "--set", "route.transitions.second_lab.cost.plates=0", "--set", "vision.tam=2M",
                        "--set", "floors.delta.units.points=[[1e9, 0]]")
    code, out = verify(run, cert)
    assert code == 0, out
    doc = json.loads(cert.read_text())
    stages = ("second_lab", "early_access", "launch")
    assert [step(doc, f"{t}.stops")["value"]["v"] for t in stages] == [False, True, True]
    assert [step(doc, f"{t}.walking")["value"]["v"] for t in stages] == [True, False, False]
    tamper(cert, lambda d: step(d, "launch.walking")["operands"].update(before={"v": True}), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "launch.walking" in out and "`before` is not step `early_access.walking`" in out, out


def test_an_operand_naming_a_same_valued_other_step_is_caught_and_named(run: Run, project: Path) -> None:
    """A forger who points `launch.c`'s `floor_delta` at `launch.budget` (its value copied,
    so every number still agrees and c is unchanged) hides the delta floor: the checker
    requires the transition's own delta-floor step and names the step it was given."""
    cert = certify(run, project)

    def point_at_budget(d: dict[str, Any]) -> None:
        ops = step(d, "launch.c")["operands"]
        ops["floor_delta"] = dict(ops["budget"])
        assert ops["floor_delta"]["step"] == "launch.budget"

    tamper(cert, point_at_budget, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E912" in out, out
    assert "operand `floor_delta` names step `launch.budget`, but the rule reads `launch.floor_delta`" in out, out


def test_the_fold_must_read_its_own_stage(run: Run, project: Path) -> None:
    """R_1 reads stage 1's c and p: pointing its `c` at stage 0's, with the value
    copied, is named even where the recomputed numbers would not show it."""
    cert = certify(run, project)
    doc = json.loads(cert.read_text())
    t = [s["symbol"].removesuffix(".p_prior") for s in doc["routes"][0]["steps"] if s["symbol"].endswith(".p_prior")]

    def other_stage(d: dict[str, Any]) -> None:
        step(d, "R_1")["operands"]["c"]["step"] = f"{t[0]}.c"

    tamper(cert, other_stage, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and f"operand `c` names step `{t[0]}.c`, but the rule reads `{t[1]}.c`" in out, out


def _coverage_row(d: dict[str, Any], transition: str, field: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in d["routes"][0]["coverage"]
                                 if r["transition"] == transition and r["field"] == field)
    return found


def test_state_values_are_bound_to_the_state_blocks(run: Run, project: Path) -> None:
    """Each coverage row binds the source and target the states write: `launch` takes
    `developers` from 0 (`state garage`) to 500 (`state wedge`)."""
    cert = certify(run, project)
    row = _coverage_row(json.loads(cert.read_text()), "launch", "developers")
    assert row["written"]["source"]["text"] == "developers 0"
    assert row["written"]["target"]["text"] == "developers 500"
    assert (row["source"], row["target"]) == (0.0, 500.0)
    # `wedge` lists only `developers`: `paying_teams` is carried forward from `garage`, so not bound there
    assert _coverage_row(json.loads(cert.read_text()), "launch", "paying_teams")["written"]["target"] is None


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: _coverage_row(d, "launch", "developers").update(target=5.0),
         "coverage launch/developers: target (state `wedge`) (line 8 of devtools_api.route): is 5.0, "
         "but the file writes 500.0"),
        (lambda d: _coverage_row(d, "launch", "developers")["written"].update(target=None),
         "coverage launch/developers: target (state `wedge`): is not bound, but `state wedge` in "
         "devtools_api.route writes `developers`"),
        (lambda d: _coverage_row(d, "launch", "developers")["written"].update(
            target=_coverage_row(d, "monetize", "developers")["written"]["target"]),
         "coverage launch/developers: target (state `wedge`) (line 9 of devtools_api.route)"),
    ],
    ids=["value", "unbound", "other-state"],
)
def test_tampering_with_a_state_value_is_caught_and_named(run: Run, project: Path,
                                                          edit: Callable[[dict[str, Any]], None], named: str) -> None:
    cert = certify(run, project)
    tamper(cert, edit, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E912" in out and named in out, out


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: _coverage_row(d, "launch", "developers")["material_rule"].update(amount={"f": 0.5, "q": "1/2"}),
         "coverage launch/developers: material: is 0.5 relative, but library venture writes 0.1 relative "
         "for `developers`"),
        (lambda d: _coverage_row(d, "launch", "developers")["material_rule"].update(relative=False),
         "coverage launch/developers: material: is 0.1, but library venture writes 0.1 relative"),
        (lambda d: _coverage_row(d, "launch", "developers").update(material_rule=None),
         "coverage launch/developers: material: is none, but library venture writes a `material` clause"),
    ],
    ids=["amount", "absolute", "none"],
)
def test_a_material_amount_is_bound_to_the_library_file(run: Run, project: Path,
                                                        edit: Callable[[dict[str, Any]], None], named: str) -> None:
    """`field developers count material 10%` in venture.obl: the row's rule must be that."""
    cert = certify(run, project)
    tamper(cert, edit, resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E912" in out and named in out, out
