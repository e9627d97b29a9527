"""Decision certificates under a gold registry: the checker reads the registry file the
policy pins (`coverage.registry_file`, its bytes against `coverage.registry_sha256`),
derives the route's departures from it again (PCSC-E503 under `required`, PCSC-W504
under `report`) and counts them into the verdict only under `required`."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from tests.conftest import ROOT

Run = Callable[..., tuple[int, str, str]]
PRODUCT = ROOT / "examples" / "product"
POLICY = ROOT / "policies" / "product"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The honest route, the merged one (which skips registry state `sticky`) and a copy of
    product@1.0.0 with its registry file beside them."""
    out = tmp_path / "project"
    shutil.copytree(POLICY, out / "policies" / "product", ignore=shutil.ignore_patterns("tests"))
    shutil.copy(PRODUCT / "language_app.route", out / "honest.route")
    shutil.copy(PRODUCT / "refused" / "language_app_merged.route.txt", out / "merged.route")
    return out


def certify(run: Run, folder: Path, route: str) -> Path:
    cert = folder / f"{route}.json"
    code, _, err = run("compile", str(folder / route), "--policy-path", str(folder / "policies"), "--cert", str(cert))
    assert code in (0, 3), err
    return cert


def verify(run: Run, cert: Path) -> tuple[int, str]:
    code, out, err = run("verify-cert", str(cert))
    return code, out + err


def tamper(cert: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit as a forger who knows the format would: the digest made again."""
    doc = json.loads(cert.read_text())
    edit(doc)
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


def refusals(cert: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(cert.read_text())["routes"][0]["refusals"]
    return found


def test_the_honest_and_the_merged_route_verify(run: Run, folder: Path) -> None:
    honest = certify(run, folder, "honest.route")
    assert verify(run, honest)[0] == 0 and refusals(honest)["registry"] == []
    merged = certify(run, folder, "merged.route")
    code, text = verify(run, merged)
    assert code == 0, text
    # the merged file has no state `sticky`, registry state 2 of 4 (policies/product/registries)
    assert refusals(merged)["registry"] == [{"kind": "skip", "state": "sticky", "field": None}]
    assert json.loads(merged.read_text())["routes"][0]["decision"]["verdict"] == "suspend-and-ask"


@pytest.mark.parametrize("edit", ["drop", "add"])
def test_an_edited_registry_finding_is_refused(run: Run, folder: Path, edit: str) -> None:
    cert = certify(run, folder, "merged.route" if edit == "drop" else "honest.route")
    finding = {"kind": "skip", "state": "sticky", "field": None}
    tamper(cert, lambda d: d["routes"][0]["refusals"].update(registry=[] if edit == "drop" else [finding]))
    code, text = verify(run, cert)
    assert code == 1 and "refusals.registry" in text, text
    assert ("derived again 1" if edit == "drop" else "derived again 0") in text, text


def test_a_registry_file_edited_after_the_certificate_is_refused(run: Run, folder: Path) -> None:
    cert = certify(run, folder, "honest.route")
    registry = folder / "policies" / "product" / "registries" / "language_app.toml"
    registry.write_text(registry.read_text().replace("retention = 0.28", "retention = 0.3"))
    code, text = verify(run, cert)
    assert code == 1 and "coverage.registry_file `registries/language_app.toml`" in text, text
    assert "but the policy pins" in text


def _reported(folder: Path, restated: bool) -> None:
    """The policy copy under `report`; the honest route with `sticky`'s retention restated."""
    policy = folder / "policies" / "product" / "1.0.0.toml"
    policy.write_text(policy.read_text().replace('registry = "required"', 'registry = "report"'))
    if restated:
        route = folder / "honest.route"
        text = route.read_text()
        assert "state sticky  { users 470k  retention 0.28 }" in text
        route.write_text(text.replace("state sticky  { users 470k  retention 0.28 }",
                                      "state sticky  { users 470k  retention 0.29 }")
                         .replace("retention >= 0.28", "retention >= 0.29"))


def test_under_report_a_restated_field_is_derived_and_does_not_refuse(run: Run, folder: Path) -> None:
    _reported(folder, restated=True)
    cert = certify(run, folder, "honest.route")
    code, text = verify(run, cert)
    assert code == 0, text
    # `sticky` writes retention 0.29, the registry says 0.28; `report` counts it (PCSC-W504) and releases
    assert refusals(cert)["registry"] == [{"kind": "restate", "state": "sticky", "field": "retention"}]
    assert json.loads(cert.read_text())["routes"][0]["decision"]["verdict"] == "released"
    tamper(cert, lambda d: d["routes"][0]["refusals"].update(registry=[]))
    code, text = verify(run, cert)
    assert code == 1 and "refusals.registry" in text, text


def test_the_checkers_findings_are_the_compilers(run: Run, folder: Path) -> None:
    """The checker's own derivation against the compiler's, on routes that skip a state,
    restate a field and are absent from the registry."""
    from pcsc.certify.check.recompute import RouteCheck, registry_findings
    from pcsc.certify.check.route_text import Source
    from pcsc.compiler.session import Session
    from pcsc.coverage.registry import registry_findings as compiler_findings
    from pcsc.policy.load import PolicyStore

    _reported(folder, restated=True)
    text = (folder / "honest.route").read_text()
    renamed = text.replace("route language_app ", "route other_app ")
    for name, route_text in (("language_app", text), ("other_app", renamed),
                             ("language_app", (folder / "merged.route").read_text())):
        path = folder / "r.route"
        path.write_text(route_text)
        session = Session(policies=PolicyStore([folder / "policies"]))
        (route,) = session.load_routes(path)
        compiled = session.compile_route(route)
        assert compiled is not None
        want = [[f.kind, f.state, f.field] for f in compiler_findings(route, compiled.policy.policy)]
        cert = certify(run, folder, "r.route")
        doc = json.loads(cert.read_text())
        check = RouteCheck(doc["routes"][0], {}, lambda kind, n, text=route_text: Source(
            text if kind == "input" else (ROOT / "obligations" / f"{n}.obl").read_text()))
        check.registry = _registry(folder)["registry"]
        assert registry_findings(check) == want, name
        assert want  # each of the three departs from the registry


def _registry(folder: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads((folder / "policies" / "product" / "registries" / "language_app.toml").read_text())
