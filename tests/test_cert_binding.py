"""Certificates that bind everything (issue 18): the checker reads only files inside
the certificate's own folder, recomputes the coverage rows from the route and the
pinned library, holds every library to the policy's pin, the mode to the policy's and
the routes to those of the hashed files; and a forgery of any single field fails."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, SPEC_ROUTE
from tests.test_decisions import Run, certify, project, run, tamper, verify

__all__ = ["project", "run"]  # the fixtures this module uses from test_decisions


def _set_input_path(path: str) -> Any:
    def edit(d: dict[str, Any]) -> None:
        d["inputs"][0]["path"] = path
        d["routes"][0]["file"] = path

    return edit


# ---------------------------------------------------------------------- what the checker reads
@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.route", "sub/../../outside.route", "C:/x.route"])
def test_a_path_outside_the_certificates_folder_is_refused_naming_the_field(run: Run, project: Path,
                                                                            path: str) -> None:
    (project.parent / "outside.route").write_text(SPEC_ROUTE.read_text())
    cert = certify(run, project)
    tamper(cert, _set_input_path(path), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "inputs[0].path" in out, out
    if path == "/etc/passwd":
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        assert digest not in out  # nothing of the file is disclosed


def test_a_symbolic_link_out_of_the_folder_is_refused(run: Run, project: Path) -> None:
    cert = certify(run, project)
    (project / "link.route").symlink_to("/etc/passwd")
    tamper(cert, _set_input_path("link.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "inputs[0].path" in out and "leads out" in out, out


def test_a_symbolic_link_inside_the_folder_is_read(run: Run, project: Path) -> None:
    cert = certify(run, project)
    (project / "same.route").symlink_to("devtools_api.route")
    tamper(cert, _set_input_path("same.route"), resign=True)
    code, out = verify(run, cert)
    assert "PCSC-E913" not in out, out


def test_a_fifo_or_device_is_refused_before_it_is_read(run: Run, project: Path) -> None:
    cert = certify(run, project)
    os.mkfifo(project / "pipe.route")  # reading it would block forever
    tamper(cert, _set_input_path("pipe.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "not a regular file" in out, out
    tamper(cert, _set_input_path("."), resign=True)  # the folder itself
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out, out


def test_a_file_over_the_size_limit_is_refused(run: Run, project: Path) -> None:
    from pcsc.base.files import MAX_FILE_BYTES as COMPILER_LIMIT
    from pcsc.certify.check import MAX_FILE_BYTES

    assert MAX_FILE_BYTES == COMPILER_LIMIT
    cert = certify(run, project)
    with open(project / "huge.route", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    tamper(cert, _set_input_path("huge.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "the limit is 10,000,000" in out, out


def test_an_unknown_base_is_refused_naming_the_field(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["libraries"][0].update(base="root"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "libraries[0].base" in out, out


def test_a_certificate_that_is_not_a_regular_file_is_refused(run: Run, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "cert.json")
    code, out = verify(run, tmp_path / "cert.json")
    assert code == 1 and "PCSC-E911" in out and "not a regular file" in out, out


def test_a_route_outside_the_certificates_folder_is_not_certified(run: Run, project: Path, tmp_path: Path) -> None:
    """The writer refuses what the checker would refuse: a file outside the folder."""
    (tmp_path / "elsewhere").mkdir()
    code, _, err = run("compile", str(project / "devtools_api.route"), "--policy-path", str(project / "policies"),
                       "--cert", str(tmp_path / "elsewhere" / "c.json"))
    assert code == 1 and "PCSC-E911" in err and "outside the certificate's folder" in err, err
    assert not (tmp_path / "elsewhere" / "c.json").exists()


def test_a_shipped_policy_and_library_are_read_from_the_shipped_folders(run: Run, tmp_path: Path) -> None:
    shutil.copy(SPEC_ROUTE, tmp_path / "a.route")
    cert = tmp_path / "c.json"
    code, _, err = run("compile", str(tmp_path / "a.route"), "--cert", str(cert))
    assert code == 0, err
    doc = json.loads(cert.read_text())
    assert doc["libraries"][0]["base"] == "shipped-obligations"
    assert doc["policies"][0]["files"][0]["base"] == "shipped-policies"
    assert verify(run, cert)[0] == 0


# ---------------------------------------------------------------------- the attacks of issue 18
def resign(doc: dict[str, Any]) -> None:
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(cert: Path, doc: dict[str, Any]) -> None:
    resign(doc)
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


@pytest.fixture
def refused(run: Run, project: Path) -> Path:
    """The certificate of the reference route with seam 1 spliced out: GATE refuses it."""
    spliced = project / "spliced.route"
    code, _, err = run("splice", str(project / "devtools_api.route"), "--seam", "1", "-o", str(spliced))
    assert code == 0, err
    (project / "devtools_api.route").unlink()
    cert = project / "spliced.json"
    code, _, err = run("compile", str(spliced), "--policy-path", str(project / "policies"), "--cert", str(cert))
    assert code == 3, err
    assert verify(run, cert)[0] == 0
    return cert


def test_dropping_the_uncovered_rows_and_releasing_fails(run: Run, refused: Path) -> None:
    doc = json.loads(refused.read_text())
    route = doc["routes"][0]
    assert route["decision"]["verdict"] == "suspend-and-ask"
    route["coverage"] = [r for r in route["coverage"] if r["covered"] is not False]
    score = next(s for s in route["steps"] if s["symbol"] == "score")["value"]
    route["decision"].update(verdict="released", score={"f": score["f"], "q": score["q"]})
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "PCSC-E912" in out and "coverage" in out and "missing" in out, out


def test_releasing_by_marking_a_row_immaterial_fails(run: Run, refused: Path) -> None:
    doc = json.loads(refused.read_text())
    route = doc["routes"][0]
    for r in route["coverage"]:
        if r["covered"] is False:
            r.update(material=False, covered=None, by=None, obligations=[])
    score = next(s for s in route["steps"] if s["symbol"] == "score")["value"]
    route["decision"].update(verdict="released", score=score)
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "material is recorded False, recomputed True" in out, out


def test_moving_a_rows_values_so_it_is_not_a_change_fails(run: Run, refused: Path) -> None:
    doc = json.loads(refused.read_text())
    row = next(r for r in doc["routes"][0]["coverage"] if r["covered"] is False)
    row.update(target=row["source"], material=False, covered=None, by=None, obligations=[])
    row["written"]["target"] = row["written"]["source"]
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "PCSC-E912" in out, out


@pytest.mark.parametrize("mode", ["off", "dock"])
def test_a_refused_splice_with_a_lower_mode_fails(run: Run, refused: Path, mode: str) -> None:
    doc = json.loads(refused.read_text())
    decision = doc["routes"][0]["decision"]
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    verdict, score = ("ungated", steps["score"]) if mode == "off" else ("docked", steps["docked_score"])
    score = score["value"]
    decision.update(mode=mode, verdict=verdict, score=score)
    if mode == "off":
        for r in doc["routes"][0]["coverage"]:
            r.update(covered=None, by=None, obligations=[])
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and f"decision.mode: is {mode} from the policy, but the policy's coverage is gate" in out, out
    # claiming the command line lowered it verifies only when the certificate says so, and verify-cert says it
    decision["mode_source"] = "command line"
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "decision.lowered_from: is none, but mode" in out, out
    decision["lowered_from"] = "gate"
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 0 and "lowered from the policy's gate on the command line" in out, out


def test_a_mode_lowered_on_the_command_line_certifies_and_says_so(run: Run, project: Path) -> None:
    for flags, source in ((("--coverage", "off"), "command line"), (("--set", "policy.coverage=dock"), "policy")):
        cert = certify(run, project, *flags)
        decision = json.loads(cert.read_text())["routes"][0]["decision"]
        assert decision["mode_source"] == source and decision["lowered_from"] == "gate", decision
        code, out = verify(run, cert)
        assert code == 0 and "lowered from the policy's gate on the command line" in out, out
    cert = certify(run, project)
    assert json.loads(cert.read_text())["routes"][0]["decision"]["lowered_from"] is None


LAX = """library venture version "1.0.0"

field developers    count  material 10%
field paying_teams  count  material 1
field arr           usd    material 10k usd
field soc2          bool

obligation adoption covers developers {
    require true
}
obligation monetization covers paying_teams, arr {
    require true
}
obligation compliance covers soc2 {
    require true
}
"""


def test_a_library_that_is_not_the_pinned_one_fails(run: Run, refused: Path) -> None:
    """The spliced route judged by a lax `venture.obl` beside it, the certificate made
    again around it (the library's hash, its path, the coverage decisions, the verdict):
    the policy pins other content under `venture`."""
    from pcsc.compiler.session import library_sha256

    project = refused.parent
    (project / "venture.obl").write_text(LAX)
    doc = json.loads(refused.read_text())
    doc["libraries"][0].update(base="certificate", path="venture.obl", sha256=hashlib.sha256(LAX.encode()).hexdigest(),
                               canonical_sha256=library_sha256(project / "venture.obl"))
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "library venture (libraries[0]): has sha256" in out and "but policy venture@1.0.0 pins" in out
    # the same under a policy that pins nothing: the library must be the one PCSC ships
    policy = project / "policies" / "venture" / "1.0.0.toml"
    policy.write_text(policy.read_text().replace("[libraries.venture]", "[unpinned]"))
    from pcsc.certify.check.reading import Files, canonical, policy_document

    record = doc["policies"][0]
    files = Files({"certificate": project}, [])
    digest = hashlib.sha256(canonical(policy_document(record, files, "policies[0]")).encode()).hexdigest()
    record.update(sha256=digest, file_sha256=digest)
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "libraries[0].pin: is" in out and 'admits `venture` by {"by":"shipped"' in out, out
    shipped = library_sha256(ROOT / "obligations" / "venture.obl")
    doc["libraries"][0]["pin"] = {"by": "shipped", "version": None, "sha256": shipped}
    write(refused, doc)
    code, out = verify(run, refused)
    assert code == 1 and "pins no library `venture` and allows no local library" in out, out
    assert f"ships under that name has sha256 {shipped}" in out, out


def test_a_library_of_another_name_fails(run: Run, project: Path) -> None:
    """`uses ventura` with a lax `ventura.obl` beside it: the policy neither pins nor
    ships `ventura`, nor allows a local library."""
    (project / "ventura.obl").write_text(LAX.replace("library venture", "library ventura"))
    route = project / "devtools_api.route"
    route.write_text(route.read_text().replace("uses    venture", "uses    ventura"))
    cert = project / "c.json"
    code, _, err = run("compile", str(route), "--policy-path", str(project / "policies"), "--cert", str(cert))
    if not cert.exists():  # the compiler refuses the library itself
        assert code != 0, err
        return
    code, out = verify(run, cert)
    assert code == 1 and "pins no library `ventura`" in out, out


def test_a_library_is_the_one_its_file_declares(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["libraries"][0].update(version="9.9.9"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "libraries[0]: is `venture` version '9.9.9'" in out, out


@pytest.fixture
def two_routes(run: Run, project: Path) -> Path:
    """The reference route and its refused splice in one file, certified together."""
    spliced = project / "spliced.route"
    code, _, err = run("splice", str(project / "devtools_api.route"), "--seam", "1", "-o", str(spliced))
    assert code == 0, err
    text = (project / "devtools_api.route").read_text() + "\n" + spliced.read_text().replace(
        "route devtools_api ", "route devtools_api_spliced ")
    spliced.unlink()
    (project / "devtools_api.route").write_text(text)
    cert = project / "two.json"
    code, _, err = run("compile", str(project / "devtools_api.route"), "--policy-path", str(project / "policies"),
                       "--cert", str(cert))
    assert code == 3, err
    assert verify(run, cert)[0] == 0
    return cert


def test_a_two_route_certificate_with_the_refused_route_removed_fails(run: Run, two_routes: Path) -> None:
    doc = json.loads(two_routes.read_text())
    assert [r["decision"]["verdict"] for r in doc["routes"]] == ["released", "suspend-and-ask"]
    doc["routes"].pop()
    write(two_routes, doc)
    code, out = verify(run, two_routes)
    assert code == 1 and "declares route `devtools_api_spliced`, which the certificate leaves out" in out, out


def test_a_route_entry_duplicated_fails(run: Run, two_routes: Path) -> None:
    doc = json.loads(two_routes.read_text())
    doc["routes"].append(doc["routes"][0])
    write(two_routes, doc)
    code, out = verify(run, two_routes)
    assert code == 1 and "routes[2]: repeats" in out, out


def test_a_route_renamed_to_one_the_file_does_not_declare_fails(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["routes"][0].update(route="other"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E912" in out, out


def test_freeze_certifies_every_route_of_a_file(run: Run, two_routes: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project = two_routes.parent
    monkeypatch.chdir(project)
    code, _, err = run("freeze", "devtools_api.route", "--policy-path", "policies", "--ledger", "l.db", "--cert")
    assert code == 0, err
    code, _, err = run("ledger", "show", "--ledger", "l.db", "--cert", "1", "-o", "one.json")
    assert code == 0, err
    assert [r["route"] for r in json.loads((project / "one.json").read_text())["routes"]] == [
        "devtools_api", "devtools_api_spliced"]
    assert verify(run, project / "one.json")[0] == 0


# ---------------------------------------------------------------------- a forgery of any single field
# The fields a forger may change without changing what the certificate proves, each with why.
FREE: dict[tuple[str, ...], str] = {
    ("pcsc",): "the version of PCSC that wrote it, for the reader; the checker reads the format `version`",
    ("routes", "[]", "coverage", "[]", "obligations", "[]", "requires", "[]", "error"):
        "the compiler's words for why a line could not be evaluated; whether there is one is checked",
}


def _general(doc: Any, path: tuple[Any, ...]) -> tuple[str, ...]:
    """A JSON path with list indices generalised: `[]`, or `[rule]` for a step (the
    operands differ by rule)."""
    out, node = [], doc
    for k in path:
        node = node[k]
        if isinstance(k, int):
            out.append(f"[{node['rule']}]" if isinstance(node, dict) and "rule" in node and "symbol" in node else "[]")
        else:
            out.append(k)
    return tuple(out)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, node)]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        out.extend(_paths(v, (*path, k)))
    return out


def _perturbed(node: Any) -> Any:
    from fractions import Fraction

    if isinstance(node, dict) and "f" in node and "q" in node:  # a number: its float and rational kept consistent
        x = Fraction(node["f"] * 1.01 + 1)
        return {**node, "f": float(x), "q": f"{x.numerator}/{x.denominator}"}
    if isinstance(node, bool):
        return not node
    if isinstance(node, (int, float)):
        return node * 1.01 + 1
    if isinstance(node, str):
        return node + "x"
    if node is None:
        return "x"
    return None


def forgeries(doc: dict[str, Any], donors: bool) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    """For every field of ``doc`` (every JSON path, list indices generalised), its first
    occurrence changed alone, the digest made again: the value perturbed; a list with
    its last item dropped and its first repeated; with ``donors``, the value of the
    same field elsewhere in the certificate (another row's, another step's) and a
    list reversed."""
    import copy

    first: dict[tuple[str, ...], tuple[Any, ...]] = {}
    values: dict[tuple[str, ...], list[Any]] = {}
    for path, node in _paths(doc):
        g = _general(doc, path)
        if g in (("digest",),) or (g and g[-1] in ("f", "q") and len(g) > 1):
            continue  # the digest is made again; a number's f and q change together
        first.setdefault(g, path)
        values.setdefault(g, []).append(node)
    out = []
    for g, path in first.items():
        node = doc
        for k in path:
            node = node[k]
        edits: list[tuple[str, Any]] = []
        if isinstance(node, list):
            if node:
                edits += [("drop-last", node[:-1]), ("repeat-first", [node[0], *node])]
            if donors and len(node) > 1 and node[0] != node[-1]:
                edits.append(("reverse", node[::-1]))
        elif not isinstance(node, dict) or ("f" in node and "q" in node):
            edits.append(("perturb", _perturbed(node)))
        if donors or isinstance(node, str):
            other = next((v for v in values[g] if v != node), None)
            if other is not None:
                edits.append(("donor", other))
        for kind, value in edits:
            forged = copy.deepcopy(doc)
            target = forged
            for k in path[:-1]:
                target = target[k]
            if not path:
                continue
            target[path[-1]] = copy.deepcopy(value)
            resign(forged)
            out.append((g, kind, forged))
    return out


def rule_swaps(doc: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Each step's rule (its first step) replaced by every other rule that computes
    the same arithmetic (the checker's handler of the same code), the digest made
    again: the values and operands stay right, only the claim of how changes."""
    import copy

    from pcsc.certify.check.recompute import RULES

    def code(rule: str) -> Any:
        return getattr(RULES[rule], "__code__", RULES[rule])

    out, seen = [], set()
    for r, route in enumerate(doc["routes"]):
        for i, step in enumerate(route["steps"]):
            if step["rule"] in seen or step["rule"] not in RULES:
                continue
            seen.add(step["rule"])
            for other in RULES:
                if other != step["rule"] and code(other) == code(step["rule"]):
                    forged = copy.deepcopy(doc)
                    forged["routes"][r]["steps"][i]["rule"] = other
                    resign(forged)
                    out.append((step["symbol"], step["rule"], other, forged))
    return out


def _verifies(forged: dict[str, Any], bases: dict[str, Path]) -> bool:
    from pcsc.certify.check import Mismatch
    from pcsc.certify.check import verify as check

    try:
        check(json.dumps(forged), bases)
    except Mismatch:
        return False
    return True


def _operand(g: tuple[str, ...]) -> bool:
    """A field of a step's operands (which step a rule reads, and its value)."""
    return len(g) > 4 and g[2] == "steps" and g[4] == "operands"


def _forge_all(cert: Path, donors: bool, only: Callable[[tuple[str, ...]], bool] = lambda g: True) -> None:
    from pcsc.base.resources import data_dir
    from pcsc.certify.check import Mismatch
    from pcsc.certify.check import verify as check

    doc = json.loads(cert.read_text())
    bases = {"certificate": cert.parent, "shipped-obligations": data_dir("obligations"),
             "shipped-policies": data_dir("policies")}
    check(cert.read_text(), bases)  # the certificate itself verifies
    fields = {g for g, _, _ in forgeries(doc, donors=False)}
    assert len(fields) > 150, len(fields)
    survived, tried = [], 0
    for g, kind, forged in forgeries(doc, donors):
        if not only(g):
            continue
        tried += 1
        try:
            check(json.dumps(forged), bases)
        except Mismatch:
            continue
        if g not in FREE:
            survived.append(f"{kind} {'/'.join(g)}")
    survived += [f"rule {symbol}: {rule} -> {other}" for symbol, rule, other, forged in rule_swaps(doc)
                 if only(("routes", "[]", "steps", f"[{rule}]", "operands")) and _verifies(forged, bases)]
    assert tried > 100 and not survived, survived
    listed = {g for g in FREE if g in fields}
    assert listed, "the free fields listed are fields a certificate carries"


def test_a_forgery_of_any_single_field_fails(run: Run, two_routes: Path) -> None:
    """The reference route (released) and its refused splice in one certificate."""
    _forge_all(two_routes, donors=False)


@pytest.mark.slow
def test_a_forgery_of_any_single_field_fails_on_a_graph_and_a_fold(run: Run, tmp_path: Path) -> None:
    graphs = ROOT / "tests" / "data" / "graphs" / "policies"
    shutil.copytree(graphs, tmp_path / "policies")
    shutil.copy(ROOT / "examples" / "ci_cache.route", tmp_path / "ci_cache.route")
    lock = (ROOT / "examples" / "graphs" / "lock_cert_pilot.route").read_text()
    (tmp_path / "lock.route").write_text(lock.replace('"venture@1.1.0"', '"venture-stop@1.1.0"'))
    for route in ("lock.route", "ci_cache.route"):
        cert = tmp_path / f"{route}.json"
        code, _, err = run("compile", str(tmp_path / route), "--policy-path", str(tmp_path / "policies"),
                           "--cert", str(cert))
        assert code == 0, err
        _forge_all(cert, donors=True)


def _graph_certificate(run: Run, tmp_path: Path, route: Path, policy: str) -> Path:
    """``route`` decided under ``policy`` (shipped, or of the graph tests' policies), certified in ``tmp_path``."""
    shutil.copytree(ROOT / "tests" / "data" / "graphs" / "policies", tmp_path / "policies", dirs_exist_ok=True)
    text = route.read_text()
    first = text[text.index("policy "):].split("\n", 1)[0]
    (tmp_path / route.name).write_text(text.replace(first, f'policy  "{policy}"', 1))
    cert = tmp_path / f"{route.stem}.json"
    code, _, err = run("compile", str(tmp_path / route.name), "--policy-path", str(tmp_path / "policies"),
                       "--cert", str(cert))
    assert cert.exists(), err
    return cert


ONE_BLOCK = ROOT / "tests" / "data" / "graphs" / "one_block.route"
LOCK = ROOT / "examples" / "graphs" / "lock_cert_pilot.route"
FOLDS = ["venture@1.1.0", "venture-discount@1.1.0", "venture-stop@1.1.0"]


@pytest.mark.parametrize("policy", FOLDS)
def test_a_route_that_is_one_parallel_block_verifies_under_every_fold(run: Run, tmp_path: Path, policy: str) -> None:
    """It forks at its start and joins at its end: its one spine item is the whole
    block, with a w and an x like any spine item (verify-cert refused them)."""
    cert = _graph_certificate(run, tmp_path, ONE_BLOCK, policy)
    steps = {s["symbol"] for s in json.loads(cert.read_text())["routes"][0]["steps"]}
    assert {"[].P", "[].w", "[].x", "[0].w", "[1].x"} <= steps
    code, out = verify(run, cert)
    assert code == 0, out


def _step(doc: dict[str, Any], symbol: str) -> dict[str, Any]:
    return next(s for s in doc["routes"][0]["steps"] if s["symbol"] == symbol)


@pytest.mark.parametrize(
    ("symbol", "operand", "donor", "reads"),
    [
        # same-valued steps: the planner stops at the first stage, so no stage walks
        ("first_run.D", "walking", ("certify.D", "walking"), "`first_run.walking`"),
        ("beta_batch.walking", "before", None, "the constant true"),
        ("national.stops", "R_next", ("retail.stops", "R_next"), "`R(national)`"),
        ("[1.0].x", "D_b", ("[1.1].x", "D_b"), "`[1.0].D`"),
        ("[].P", "p", "reversed", "beta_batch.p, [1].P, first_run.p, retail.p, national.p"),
        ("first_run.reach", "w", ("retail.reach", "w"), "`first_run.w`"),
        ("retailer_review.w", "w", ("host_pilot.w", "w"), "`[1.0].w`"),
    ],
)
def test_a_fold_operand_naming_another_step_fails(run: Run, tmp_path: Path, symbol: str, operand: str,
                                                  donor: tuple[str, str] | str | None, reads: str) -> None:
    """Which step a rule of the graph fold or of the option to stop reads is bound by
    name, not only by value: each forgery here keeps every value (the steps swapped
    in are equal, a product reversed is the same)."""
    cert = _graph_certificate(run, tmp_path, LOCK, "venture-stop@1.1.0")
    doc = json.loads(cert.read_text())
    ops = _step(doc, symbol)["operands"]
    ops[operand] = {"v": False} if donor is None else ops[operand][::-1] if donor == "reversed" else \
        _step(doc, donor[0])["operands"][donor[1]]
    write(cert, doc)
    code, out = verify(run, cert)
    assert code == 1 and f"operand `{operand}` is" in out and f"but the rule reads {reads}" in out, out


@pytest.mark.slow
@pytest.mark.parametrize(("route", "policy"), [(ONE_BLOCK, FOLDS[0]), (ONE_BLOCK, FOLDS[1]), (LOCK, FOLDS[0]),
                                               (ROOT / "examples" / "ci_cache.route", FOLDS[2])],
                         ids=["one-block-paper", "one-block-discount", "lock-paper", "chain-stop"])
def test_every_operand_forgery_fails_under_every_fold(run: Run, tmp_path: Path, route: Path, policy: str) -> None:
    """The operands of every rule of the graph fold and the option to stop, each
    forged alone (the whole certificate is forged on a graph and a fold above)."""
    _forge_all(_graph_certificate(run, tmp_path, route, policy), donors=True, only=_operand)
