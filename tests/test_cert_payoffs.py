"""Decision certificates of routes with payoffs along the way: the checker recomputes each
stage's v (the state's payoff, the policy's cap, the fold's unit), the fold, D, where the
planner stops and DOCK's refold with its own arithmetic, and refuses an edited number and
a compiler that caps or discounts otherwise than the policy says (a route that forks and
joins with payoffs: tests/test_cert_graph_payoffs.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from tests.conftest import ROOT

Run = Callable[..., tuple[int, str, str]]
EXAMPLE = ROOT / "examples" / "payoffs" / "school_pilots.route"

# venture@1.0.0's priors, DOCK, a cap of 100k usd a state; FOLD is put in its place
POLICY = """\
[policy]
id = "paytest"
version = "1.0.0"
extends = "venture@1.0.0"
coverage = "dock"
FOLD
[payoffs]
max_usd = 100_000
"""
FOLDS = {
    "paper": "",
    "discount": "[fold]\ndiscount = 0.08\n",
    "stop": "[fold]\ndiscount = 0.08\nabandonment = true\n",
    "units": "[fold]\ndiscount = 0.08\n[units]\nfold = \"points\"\n[units.rates]\nusd = 0.01\n",
}

# `first` changes nothing material; `second` changes `developers` without covering it
ROUTE = """\
route paid "three steps, two payoffs" {
    as_of   2012-06-01
    policy  "paytest@1.0.0"
    uses    venture

    state garage { developers 0 }
    state a      { payoff 40k usd }
    state b      { developers 5k  payoff 250k usd }
    state scale  { developers 100k }

    vision scale { tam 100M usd  capture 10%  defensibility 0.5 }

    transition first: garage -> a {
        class "devtools/first-users"
        horizon 6 months
        cost { team 60k usd }
    }
    transition second: a -> b {
        class "devtools/first-revenue"
        mechanism "m"
        kill developers < 100
        threshold developers >= 5k
        horizon 1 years
        cost { team 400k usd }
        discharges adoption
    }
    transition third: b -> scale {
        class "devtools/first-users"
        horizon 90 days
        cost { team 70k usd }
    }
}
"""


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def project(tmp_path: Path, fold: str) -> Path:
    folder = tmp_path / fold
    (folder / "policies" / "paytest").mkdir(parents=True)
    (folder / "policies" / "paytest" / "1.0.0.toml").write_text(POLICY.replace("FOLD", FOLDS[fold]),
                                                                   encoding="utf-8")
    (folder / "paid.route").write_text(ROUTE, encoding="utf-8")
    return folder


def certify(run: Run, folder: Path, route: str = "paid.route") -> Path:
    cert = folder / "cert.json"
    code, _, err = run("compile", str(folder / route), "--policy-path", str(folder / "policies"), "--cert", str(cert))
    assert code in (0, 3), err
    assert cert.is_file(), err
    return cert


def verify(run: Run, cert: Path) -> tuple[int, str]:
    code, out, err = run("verify-cert", str(cert))
    return code, out + err


def tamper(cert: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit the certificate as a forger who knows the format would, its digest made again,
    so that only the checker's rules can see the edit."""
    doc = json.loads(cert.read_text())
    edit(doc)
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


def steps(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["symbol"]: s for s in doc["routes"][0]["steps"]}


def set_number(target: dict[str, Any], value: float) -> None:
    x = Fraction(value)
    target["f"], target["q"] = value, f"{x.numerator}/{x.denominator}"


# ---------------------------------------------------------------------- certificates that verify
def test_the_example_with_payoffs_certifies_and_verifies(run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "example"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    cert = folder / "cert.json"
    code, _, err = run("compile", str(folder / EXAMPLE.name), "--cert", str(cert))
    assert code == 0, err
    code, text = verify(run, cert)
    assert code == 0, text
    s = steps(json.loads(cert.read_text()))
    # the two payoffs the file writes (1.4M and 150k usd, both under planner-payoffs' 2M cap)
    assert [(k, x["value"]["f"], x["operands"]["bound_by"]["v"]) for k, x in s.items() if k.endswith(".v")] == [
        ("family_plan.v", 1_400_000.0, "route"), ("paid_pilots.v", 150_000.0, "route")]
    assert "v_{i+1}" in s["R_1"]["rule"] and "v_{i+1}" not in s["R_0"]["rule"]


@pytest.mark.parametrize("fold", sorted(FOLDS))
def test_a_route_with_payoffs_verifies_under_every_fold(run: Run, tmp_path: Path, fold: str) -> None:
    cert = certify(run, project(tmp_path, fold))
    code, text = verify(run, cert)
    assert code == 0, text
    doc = json.loads(cert.read_text())
    s = steps(doc)
    # b's 250k is capped at 100k; in points at 0.01 a usd under `units`
    rate = 0.01 if fold == "units" else 1.0
    assert s["first.v"]["value"]["f"] == 40_000 * rate and s["second.v"]["value"]["f"] == 100_000 * rate
    assert s["second.v"]["operands"]["bound_by"]["v"] == "policy cap"
    assert "third.v" not in s
    # `second` is uncovered, so DOCK credits a's payoff only (the path up to `first` is covered)
    assert [f["v"] for f in s["docked_score"]["operands"]["credited"]] == [True, False, False]
    assert doc["routes"][0]["decision"]["verdict"] == "docked"


def test_the_docked_score_credits_only_the_covered_payoff(run: Run, tmp_path: Path) -> None:
    """The paper's fold by hand from the certificate's own p and c: DOCK's refold with
    R_3 = 0 credits a's 40k and not b's (its change is uncovered)."""
    cert = certify(run, project(tmp_path, "paper"))
    s = steps(json.loads(cert.read_text()))
    p = [Fraction(s[f"{t}.p"]["value"]["q"]) for t in ("first", "second", "third")]
    c = [Fraction(s[f"{t}.c"]["value"]["q"]) for t in ("first", "second", "third")]
    f = [float(x) for x in p], [float(x) for x in c]
    R = 0.0
    for i, v in ((2, 0.0), (1, 0.0), (0, 40_000.0)):
        R = -f[1][i] + f[0][i] * (v + R)
    assert s["docked_score"]["value"]["f"] == R
    R = 5e6  # the score: V = 100M · 10% · 0.5, both payoffs (b's capped at 100k)
    for i, v in ((2, 0.0), (1, 100_000.0), (0, 40_000.0)):
        R = -f[1][i] + f[0][i] * (v + R)
    assert s["score"]["value"]["f"] == R


# ---------------------------------------------------------------------- edits the checker refuses
def _v_list(d: dict[str, Any]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = steps(d)["docked_score"]["operands"]["v"]
    return ops


EDITS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("the payoff read", lambda d: set_number(steps(d)["first.v"]["operands"]["payoff"], 45_000.0),
     "state `a` writes 40000"),
    ("v", lambda d: set_number(steps(d)["first.v"]["value"], 45_000.0), "first.v"),
    ("the cap", lambda d: set_number(steps(d)["second.v"]["operands"]["cap"], 250_000.0),
     "the policy's payoffs.max_usd is 100000"),
    ("bound_by", lambda d: steps(d)["second.v"]["operands"]["bound_by"].update(v="route"), "bound_by"),
    ("a fold value", lambda d: set_number(steps(d)["R_1"]["value"], steps(d)["R_1"]["value"]["f"] + 1), "R_1"),
    ("the payoff left out of a stage", lambda d: steps(d)["R_1"]["operands"].pop("v"), "R_1"),
    ("DOCK's credits", lambda d: [f.update(v=True) for f in steps(d)["docked_score"]["operands"]["credited"]],
     "the covered path is first"),
    ("a payoff where none is written", lambda d: set_number(_v_list(d)[2], 5_000.0), "whose target state writes none"),
    ("D", lambda d: set_number(steps(d)["second.D"]["value"], steps(d)["second.D"]["value"]["f"] + 1000), "second.D"),
]


@pytest.mark.parametrize(("what", "edit", "message"), EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_payoff_number_is_refused(run: Run, tmp_path: Path, what: str,
                                            edit: Callable[[dict[str, Any]], None], message: str) -> None:
    cert = certify(run, project(tmp_path, "stop"))
    assert verify(run, cert)[0] == 0
    tamper(cert, edit)
    code, text = verify(run, cert)
    assert code == 1 and "PCSC-E912" in text, text
    assert message in text, text


def test_the_payoff_rules_of_another_fold_are_refused(run: Run, tmp_path: Path) -> None:
    cert = certify(run, project(tmp_path, "stop"))
    tamper(cert, lambda d: steps(d)["R_1"].update(rule="R_i = −c_i + p_i · d_i · (v_{i+1} + R_{i+1})"))
    code, text = verify(run, cert)
    assert code == 1 and "the fold with the option to stop" in text, text


# ---------------------------------------------------------------------- a compiler that gets it wrong
def test_a_compiler_that_caps_payoffs_otherwise_is_caught(run: Run, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant of the score's cap (twice the policy's): the certificate it writes agrees
    with itself, and the checker, which caps by the policy document, refuses it."""
    import attrs

    import pcsc.score.route as scoring

    real = scoring.payoffs_of

    def mutant(route: Any, policy: Any) -> Any:
        doubled = attrs.evolve(policy, payoffs=attrs.evolve(policy.payoffs, max_usd=policy.payoffs.max_usd * 2))
        return real(route, doubled)

    folder = project(tmp_path, "stop")
    monkeypatch.setattr(scoring, "payoffs_of", mutant)
    cert = certify(run, folder)
    monkeypatch.setattr(scoring, "payoffs_of", real)
    assert steps(json.loads(cert.read_text()))["second.v"]["value"]["f"] == 200_000.0  # the mutant's credit
    code, text = verify(run, cert)
    assert code == 1 and "second.v" in text, text
    code, text = verify(run, certify(run, folder))  # the control: the real compiler's certificate verifies
    assert code == 0, text


def test_a_compiler_that_discounts_otherwise_is_caught(run: Run, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant discount factor (the rate 1% higher) in a route with payoffs: refused at d."""
    import pcsc.score.route as scoring

    real = scoring.discount_factor
    monkeypatch.setattr(scoring, "discount_factor", lambda rate, horizon: real(rate * 1.01, horizon))
    cert = certify(run, project(tmp_path, "stop"))
    monkeypatch.setattr(scoring, "discount_factor", real)
    code, text = verify(run, cert)
    assert code == 1 and "first.d" in text, text


# ---------------------------------------------------------------------- a graph with payoffs
def test_the_checker_reads_the_header_of_a_route_that_forks_with_payoffs() -> None:
    """The checker (which imports nothing of pcsc) recomputes payoffs on graphs as on
    chains (tests/test_cert_graph_payoffs.py): the header of a route that forks and
    joins and writes a payoff is read like a chain's, not refused."""
    from pcsc.certify.check.certificate import check_route_header
    from pcsc.certify.check.reading import Mismatch
    from pcsc.certify.check.recompute import RouteCheck
    from pcsc.certify.check.route_text import Source

    forked = ROUTE.replace("    transition third: b -> scale {", """    transition side: a -> scale {
        class "devtools/first-users"
        cost { team 1 usd }
    }
    transition third: b -> scale {""")
    for text in (forked, ROUTE):
        check = RouteCheck({"route": "paid", "file": "paid.route", "policy": "paytest@1.0.0",
                            "libraries": ["venture"]}, {}, lambda kind, name, text=text: Source(text))
        check_route_header(check, {"paytest@1.0.0": {"file_sha256": ""}})
        wrong = RouteCheck({"route": "paid", "file": "paid.route", "policy": "paytest@1.0.0",
                            "libraries": ["other"]}, {}, lambda kind, name, text=text: Source(text))
        with pytest.raises(Mismatch) as caught:  # and the header is still checked
            check_route_header(wrong, {"paytest@1.0.0": {"file_sha256": ""}})
        assert caught.value.what == "route paid: libraries"


# ---------------------------------------------------------------------- every field
@pytest.mark.parametrize("fold", ["paper", "stop"])
def test_a_forgery_of_any_single_field_of_a_payoff_certificate_fails(run: Run, tmp_path: Path, fold: str) -> None:
    """Each field of a certificate with payoffs (a capped one, one DOCK removes) changed
    alone, its digest made again, and each step's rule swapped for another of the same
    arithmetic: none verifies (tests/test_cert_binding.py's forger)."""
    from tests.test_cert_binding import _forge_all

    _forge_all(certify(run, project(tmp_path, fold)), donors=False)


@pytest.mark.slow
def test_a_forgery_by_any_donor_of_a_payoff_certificate_fails(run: Run, tmp_path: Path) -> None:
    from tests.test_cert_binding import _forge_all

    _forge_all(certify(run, project(tmp_path, "units")), donors=True)
