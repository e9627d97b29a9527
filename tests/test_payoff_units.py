"""A payoff written in the fold's own unit (`payoff 300`, no unit) beside one in usd
(`payoff 40k usd`, converted at the policy's `[units.rates] usd`): what each is credited,
the diagnostics of a payoff in a unit the policy neither folds in nor rates, the seams'
exact check, the certificate and `explain` (docs/language.md, "Payoffs")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.serialize import converter
from pcsc.lang.syntax import parser as syntax_parser
from pcsc.policy import PolicyStore
from tests.test_cert_payoffs import Run, run, verify  # noqa: F401  (the `run` fixture)

# venture@1.0.0's priors, the fold kept in points (1 usd = 0.01 point), a cap of 100k usd
# a state, i.e. 1,000 points
POLICY = """\
[policy]
id = "pointtest"
version = "1.0.0"
extends = "venture@1.0.0"
coverage = "dock"

[units]
fold = "points"

[units.rates]
usd = 0.01

[payoffs]
max_usd = 100_000
"""

# a: 300 points as written; b: 40k usd, i.e. 400 points
ROUTE = """\
route pts "three steps, a payoff in points and one in usd" {
    as_of   2012-06-01
    policy  "pointtest@1.0.0"
    uses    venture

    state garage { developers 0 }
    state a      { payoff 300 }
    state b      { developers 5k  payoff 40k usd }
    state scale  { developers 100k }

    vision scale { tam 10M usd  capture 10%  defensibility 0.5 }

    transition first: garage -> a {
        class "devtools/first-users"
        cost { team 60k usd }
    }
    transition second: a -> b {
        class "devtools/first-revenue"
        mechanism "m"
        threshold developers >= 5k
        cost { team 400k usd }
        discharges adoption
    }
    transition third: b -> scale {
        class "devtools/first-users"
        cost { team 70k usd }
    }
}
"""


def _session(tmp_path: Path, policy: str = POLICY) -> Session:
    folder = tmp_path / "policies"
    (folder / "pointtest").mkdir(parents=True, exist_ok=True)
    (folder / "pointtest" / "1.0.0.toml").write_text(policy, encoding="utf-8")
    return Session(policies=PolicyStore([folder], {folder: ("test", None)}))  # type: ignore[arg-type, dict-item]


def _compile(tmp_path: Path, text: str = ROUTE, policy: str = POLICY) -> tuple[Compiled | None, Session]:
    session = _session(tmp_path, policy)
    path = tmp_path / "pts.route"
    path.write_text(text, encoding="utf-8")
    routes = session.load_routes(path)
    return (session.compile_route(routes[0]) if routes else None), session


def test_both_parsers_give_the_same_nodes_and_ir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")  # each driver parses and lowers afresh
    seen = []
    for kind in ("lark", "fast"):
        monkeypatch.setenv("PCSC_PARSER", kind)
        assert syntax_parser.parser_kind() == kind
        syntax_parser._PARSED.clear()
        diags = Diagnostics()
        node = syntax_parser.parse_source(ROUTE, "pts.route", diags)
        c, _ = _compile(tmp_path)
        assert c is not None
        ir = json.dumps(converter().unstructure(c.route), sort_keys=True)
        seen.append((repr(node), repr(diags.items), ir))
    assert seen[0] == seen[1]
    states = {s["name"]: s for s in json.loads(seen[0][2])["states"]}
    assert states["a"]["payoff"] == 300.0 and states["a"]["payoff_in_fold"] is not None
    assert "payoff_in_fold" not in states["b"]  # a payoff in usd serializes as it always did


def test_a_points_payoff_is_at_face_value_and_a_usd_one_at_the_rate(tmp_path: Path) -> None:
    c, _ = _compile(tmp_path)
    assert c is not None
    n = c.numbers
    assert [t.payoff and (t.payoff.written, t.payoff.unit, t.payoff.credited, t.payoff.bound_by)
            for t in n.transitions] == [(300.0, "points", 300.0, "route"), (40_000.0, "usd", 400.0, "route"), None]
    assert n.payoffs == [300.0, 400.0, 0.0]
    # the fold by hand from its inputs: R_i = −c_i + p_i·d_i·(v_{i+1} + R_{i+1})
    R = n.value
    for t, v in reversed(list(zip(n.transitions, (300.0, 400.0, 0.0), strict=True))):
        R = -t.cost.c + t.p * t.d * (v + R)
    assert n.score == pytest.approx(R, rel=1e-12)


def test_the_cap_bounds_both_in_the_folds_unit(tmp_path: Path) -> None:
    text = ROUTE.replace("payoff 300 }", "payoff 5000 }").replace("payoff 40k usd", "payoff 250k usd")
    c, _ = _compile(tmp_path, text)
    assert c is not None
    # the cap 100k usd is 1,000 points: 5,000 points and 250k usd (2,500 points) are each credited 1,000
    assert [(t.payoff.credited, t.payoff.bound_by) for t in c.numbers.transitions if t.payoff] == [
        (1000.0, "policy cap"), (1000.0, "policy cap")]


def _diagnostics(tmp_path: Path, text: str, policy: str = POLICY) -> list[dict[str, object]]:
    c, session = _compile(tmp_path, text, policy)
    return [{"code": d.code, "message": d.message, "line": d.span.line, "column": d.span.column}
            for d in session.diags.items if d.severity == "error"]


@pytest.mark.parametrize(("old", "new", "policy", "code", "message", "line", "column"), [
    # a unit no fold is kept in
    ("payoff 300 }", "payoff 3 days }", POLICY, "PCSC-E301", "the payoff of state `a` is in `days`", 7, 27),
    # no unit under a fold kept in usd: the unit must be written
    ("payoff 300 }", "payoff 300 }", POLICY.replace('fold = "points"', 'fold = "usd"').replace(
        "[units.rates]\nusd = 0.01\n", ""), "PCSC-E301", "the payoff of state `a` is in usd", 7, 27),
])
def test_a_payoff_in_a_unit_the_policy_does_not_know_is_located(tmp_path: Path, old: str, new: str, policy: str,
                                                                 code: str, message: str, line: int,
                                                                 column: int) -> None:
    found = [d for d in _diagnostics(tmp_path, ROUTE.replace(old, new), policy) if d["code"] == code]
    assert found, code
    assert message in str(found[0]["message"])
    assert (found[0]["line"], found[0]["column"]) == (line, column)


def test_the_seams_exact_check_holds_with_a_points_payoff(tmp_path: Path) -> None:
    from pcsc.analysis.seams.analysis import analyse

    c, session = _compile(tmp_path)
    assert c is not None
    (seam,) = analyse(c, session).seams
    i = seam.identity
    assert i.identity_holds and seam.symbolically_verified
    # deleting `second` deletes the 300 points of state a, the state it leaves
    first = c.numbers.transitions[0]
    assert float(i.removed_payoff) == pytest.approx(first.p * first.d * 300.0, rel=1e-12)


def test_the_certificate_verifies_and_its_rule_is_checked(run: Run, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "p"
    (folder / "policies" / "pointtest").mkdir(parents=True)
    (folder / "policies" / "pointtest" / "1.0.0.toml").write_text(POLICY, encoding="utf-8")
    (folder / "pts.route").write_text(ROUTE, encoding="utf-8")
    cert = folder / "cert.json"
    code, _, err = run("compile", str(folder / "pts.route"), "--policy-path", str(folder / "policies"),
                       "--cert", str(cert))
    assert code in (0, 3) and cert.is_file(), err
    doc = json.loads(cert.read_text())
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    v = [s for k, s in steps.items() if k.endswith(".v")]
    assert sorted(s["rule"].split(":")[0] for s in v) == [
        "v = min(payoff, payoffs.max_usd × rate)", "v = min(payoff, payoffs.max_usd) × rate"]
    assert verify(run, cert)[0] == 0
    # the same certificate against the route with a's payoff now in usd: the checker's own
    # reading of the route file sees the unit, and the rule no longer fits
    (folder / "pts.route").write_text(ROUTE.replace("payoff 300 }", "payoff 300 usd }"), encoding="utf-8")
    code, out = verify(run, cert)
    assert code != 0, out


def test_explain_names_the_unit_of_a_points_payoff(run: Run, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "e"
    (folder / "policies" / "pointtest").mkdir(parents=True)
    (folder / "policies" / "pointtest" / "1.0.0.toml").write_text(POLICY, encoding="utf-8")
    (folder / "pts.route").write_text(ROUTE, encoding="utf-8")
    code, out, err = run("explain", str(folder / "pts.route"), "--policy-path", str(folder / "policies"))
    assert code in (0, 3), err
    assert "payoffs.max_usd × rate" in out and "points" in out


def test_a_usd_payoff_needs_the_rate_and_a_points_one_does_not(tmp_path: Path) -> None:
    from pcsc.score.units import usd_amounts

    c, session = _compile(tmp_path)
    assert c is not None
    # what PCSC-E416 refuses under a fold in points without a usd rate: b's payoff (in usd), not a's
    amounts = [(what, span.line, span.column) for what, span in usd_amounts(c.route, c.policy.policy)]
    assert ("the payoff of state `b`", 8, 35) in amounts
    assert not any("state `a`" in what for what, _, _ in amounts)
    found = [d for d in _diagnostics(tmp_path / "x", ROUTE, POLICY.replace("[units.rates]\nusd = 0.01\n", ""))
             if d["code"] == "PCSC-E416"]
    assert found and "keeps its fold in points and gives no rate for usd" in str(found[0]["message"])


def test_the_learning_loop_credits_a_packets_points_payoff_at_face_value(run: Run, tmp_path: Path) -> None:  # noqa: F811
    from pcsc.forecast.learn import packet_payoffs

    c, _ = _compile(tmp_path)
    assert c is not None
    code, out, err = run("compile", str(tmp_path / "pts.route"), "--policy-path", str(tmp_path / "policies"),
                         "--format", "json")
    assert code in (0, 3), err
    (packet,) = json.loads(out)["routes"]
    assert [row.get("unit") for row in packet["payoffs"]] == ["points", None]  # absent for a payoff in usd
    # refolded from the packet (the learning loop's way): 300 points as written, 40k usd at 0.01
    assert packet_payoffs(packet, c.policy.policy) == [300.0, 400.0, 0.0]
