"""Value along the way: a state's `payoff`, credited when the transition into it succeeds
(docs/formulas.md, "Payoffs along the way"): R_i = −c_i + p_i·d_i·(v_{i+1} + R_{i+1}),
its deletion identity, DOCK and the diagnostics of a bad payoff."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams.folds import fold_seam_identities
from pcsc.analysis.seams.payoffs import payoff_seam_identities, prove_payoff_shape
from pcsc.compiler.session import Compiled, Session
from pcsc.policy import PolicyStore
from pcsc.score.fold import chain_fold
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "payoffs" / "school_pilots.route"

# the paper's fold (venture@1.0.0's), DOCK, and a cap of 100k usd a state
POLICY = """\
[policy]
id = "paytest"
version = "1.0.0"
extends = "venture@1.0.0"
coverage = "dock"

[payoffs]
max_usd = 100_000
"""

# e_0 changes nothing material (covered), e_1 and e_2 change `developers` uncovered
ROUTE = """\
route paid "three steps, two payoffs" {
    as_of   2012-06-01
    policy  "paytest@1.0.0"
    uses    venture

    state garage { developers 0 }
    state a      { payoff 40k usd }
    state b      { developers 5k  payoff 250k usd }
    state scale  { developers 100k }

    vision scale { tam 10M usd  capture 10%  defensibility 0.5 }

    transition first: garage -> a {
        class "devtools/first-users"
        cost { team 60k usd }
    }
    transition second: a -> b {
        class "devtools/first-revenue"
        mechanism "m"
        kill developers < 100
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


def _session(tmp_path: Path, coverage: str | None = None) -> Session:
    folder = tmp_path / "policies"
    (folder / "paytest").mkdir(parents=True, exist_ok=True)
    (folder / "paytest" / "1.0.0.toml").write_text(POLICY, encoding="utf-8")
    return Session(policies=PolicyStore([folder], {folder: ("test", None)}), coverage_mode=coverage)  # type: ignore[arg-type]


def _compiled(tmp_path: Path, text: str = ROUTE, coverage: str | None = None) -> tuple[Compiled | None, Session]:
    session = _session(tmp_path, coverage)
    path = tmp_path / "paid.route"
    path.write_text(text, encoding="utf-8")
    routes = session.load_routes(path)
    return (session.compile_route(routes[0]) if routes else None), session


def test_the_fold_credits_each_payoff_as_computed_by_hand(tmp_path: Path) -> None:
    c, _ = _compiled(tmp_path)
    assert c is not None
    n = c.numbers
    # by hand: p = the priors (no evidence), c = the budgets (above the class floors),
    # v = 40k and min(250k, 100k) = 100k, V = 10M × 10% × 0.5 = 500k
    #   R_3 = 500,000
    #   R_2 = −70,000 + 0.45 × (0 + 500,000)           = 155,000
    #   R_1 = −400,000 + 0.30 × (100,000 + 155,000)    = −323,500
    #   R_0 = −60,000 + 0.45 × (40,000 − 323,500)      = −187,575
    assert n.R == pytest.approx((-187_575.0, -323_500.0, 155_000.0, 500_000.0), rel=1e-12)
    assert [t.payoff and (t.payoff.written, t.payoff.credited, t.payoff.bound_by) for t in n.transitions] == [
        (40_000.0, 40_000.0, "route"), (250_000.0, 100_000.0, "policy cap"), None]
    # DOCK: `first` is covered (nothing material changes), so a's payoff stays; b's is
    # past the uncovered `second`, and V is removed:
    #   R_3 = 0, R_2 = −70,000, R_1 = −400,000 + 0.30 × (0 − 70,000) = −421,000
    #   R_0 = −60,000 + 0.45 × (40,000 − 421,000) = −231,450
    assert c.decision.verdict == "docked"
    assert c.decision.score == pytest.approx(-231_450.0, rel=1e-12)
    # D_i = reach_i · max(v_{i+1} + R_{i+1}, 0): D_2 = 0.45 × 0.30 × 500,000
    assert n.transitions[2].D == pytest.approx(67_500.0, rel=1e-12)


def test_the_score_without_the_option_to_stop_credits_payoffs(tmp_path: Path) -> None:
    """`rank`'s second key folds the payoffs too, and under DOCK keeps those on a covered
    path: the policy has no option to stop, so it is the score, by hand above."""
    from pcsc.score.route import score_without_stop

    c, _ = _compiled(tmp_path)
    assert c is not None and c.coverage is not None
    assert score_without_stop(c.numbers, False) == pytest.approx(-187_575.0, rel=1e-12)
    uncovered = {u.transition for u in c.coverage.uncovered}
    assert uncovered == {"second", "third"}
    assert score_without_stop(c.numbers, True, uncovered) == pytest.approx(-231_450.0, rel=1e-12)


def test_the_seam_with_payoffs_is_the_hand_computed_delta(tmp_path: Path) -> None:
    from pcsc.analysis.seams.analysis import analyse

    c, session = _compiled(tmp_path)
    assert c is not None
    (seam,) = analyse(c, session).seams
    i = seam.identity
    # deleting `second` drops state a and its 40k: `first` then reaches b (100k)
    #   spliced R_0 = −60,000 + 0.45 × (100,000 + 155,000) = 54,750; Δ = 54,750 + 187,575
    #   formula: 0.45 × [400,000 − 40,000 + 0.70 × (100,000 + 155,000)] = 242,325
    assert float(i.delta_refold) == pytest.approx(242_325.0, rel=1e-12)
    assert i.identity_holds and seam.symbolically_verified
    assert float(i.removed_payoff) == pytest.approx(0.45 * 40_000, rel=1e-12)
    assert float(i.removed_cost) == pytest.approx(0.45 * 400_000, rel=1e-12)
    assert float(i.retained_value) == pytest.approx(0.45 * 0.70 * 255_000, rel=1e-12)
    # the spliced route, compiled as text, keeps b's payoff and has a's no more
    assert seam.pipeline is not None and seam.pipeline.delta == pytest.approx(242_325.0, rel=1e-9)


prob = st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1)
amount = st.sampled_from([0.0, 10.0, 1e6]) | st.floats(0, 1e7)
factor = st.sampled_from([1.0, 0.5]) | st.floats(0.01, 1)


@st.composite
def paid_chains(draw: st.DrawFn) -> tuple[list[float], list[float], list[float], list[float], float]:
    n = draw(st.integers(3, 7))
    return (draw(st.lists(prob, min_size=n, max_size=n)), draw(st.lists(amount, min_size=n, max_size=n)),
            draw(st.lists(factor, min_size=n, max_size=n)), draw(st.lists(amount, min_size=n, max_size=n)),
            draw(amount))


@settings(max_examples=300, deadline=None)
@given(paid_chains(), st.booleans())
def test_identity_with_payoffs_equals_the_refold_in_fractions(chain: Any, stop: bool) -> None:
    ps, cs, ds, ws, v = chain
    n = len(ps)
    ids = payoff_seam_identities(ps, cs, ds, ws, v, range(1, n - 1), stop)
    for i in ids:
        k = i.k
        # an independent refold: the spliced chain drops (p_k, d_k, c_k) and the payoff
        # of state k (ws[k − 1]); e_{k−1} then earns ws[k]
        F = [Fraction(x) for x in ps], [Fraction(x) for x in cs], [Fraction(x) for x in ds], [Fraction(x) for x in ws]
        P, C, D, W = F
        Q = [p * d for p, d in zip(P, D, strict=True)]
        before = _fold(Q, C, W, Fraction(v), stop)
        after = _fold(Q[:k] + Q[k + 1:], C[:k] + C[k + 1:], W[:k - 1] + W[k:], Fraction(v), stop)
        assert i.delta_refold == after - before
        assert i.identity_holds
        assert i.sign_matches in (True, None)


def _fold(Q: list[Fraction], C: list[Fraction], W: list[Fraction], V: Fraction, stop: bool) -> Fraction:
    """R_0 written out here, apart from the program's fold."""
    R = V
    for q, c, w in reversed(list(zip(Q, C, W, strict=True))):
        R = -c + q * (w + R)
        if stop and R < 0:
            R = Fraction(0)
    return R


@settings(max_examples=150, deadline=None)
@given(paid_chains(), st.booleans())
def test_without_payoffs_the_identity_is_the_folds_own(chain: Any, stop: bool) -> None:
    ps, cs, ds, _, v = chain
    zero = [0.0] * len(ps)
    ks = range(1, len(ps) - 1)
    with_payoffs = payoff_seam_identities(ps, cs, ds, zero, v, ks, stop)
    plain = fold_seam_identities(ps, cs, ds, v, ks, stop)
    assert [i.delta_formula for i in with_payoffs] == [i.delta_formula for i in plain]
    assert [i.threshold for i in with_payoffs] == [i.threshold for i in plain]
    assert chain_fold(ps, cs, v, ds, vs=zero, stop=stop) == chain_fold(ps, cs, v, ds, stop=stop)


@pytest.mark.parametrize("stop", [False, True])
def test_the_identity_with_payoffs_is_proved_per_shape(stop: bool) -> None:
    for n in range(3, 7):
        for k in range(1, n - 1):
            assert prove_payoff_shape(n, k, stop)


def test_a_wrong_formula_fails_the_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the proof fails when the removed payoff is left out."""
    from pcsc.analysis.seams import payoffs

    real = payoffs._formula

    def without_payoff(Q: Any, C: Any, W: Any, k: int, after: Any, case: str, stops: Any) -> Any:
        return real(Q, C, [0 * w for w in W[:k - 1]] + [0 * W[k - 1]] + list(W[k:]), k, after, case, stops)

    monkeypatch.setattr(payoffs, "_formula", without_payoff)
    payoffs.prove_payoff_shape.cache_clear()
    try:
        assert not payoffs.prove_payoff_shape(4, 2, False)
    finally:
        payoffs.prove_payoff_shape.cache_clear()


def _pcsc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pcsc", *args], capture_output=True, text=True, cwd=cwd)


def test_dock_removes_an_uncovered_payoff_and_says_why(tmp_path: Path) -> None:
    _session(tmp_path)
    (tmp_path / "paid.route").write_text(ROUTE, encoding="utf-8")
    run = _pcsc("compile", "--policy-path", str(tmp_path / "policies"), "--format", "json", "paid.route",
                cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (packet,) = json.loads(run.stdout)["routes"]
    assert packet["verdict"] == "docked"
    assert packet["payoffs"] == [
        {"state": "a", "transition": "first", "written": 40000.0, "credited": 40000.0, "bound_by": "route",
         "covered": True, "removed_by_dock": None},
        {"state": "b", "transition": "second", "written": 250000.0, "credited": 100000.0,
         "bound_by": "policy cap", "covered": False,
         "removed_by_dock": "the change into `b` (`second`) is not covered"},
    ]
    text = _pcsc("compile", "--policy-path", str(tmp_path / "policies"), "paid.route", cwd=tmp_path).stdout
    assert "b 100,000.00 USD on `second` (written 250,000.00 usd; the policy's cap); DOCK removes it: the change " \
           "into `b` (`second`) is not covered" in text


BAD = [
    ("state a      { payoff 40k usd }", "state a      { payoff -40k usd }", "PCSC-E307",
     "the payoff of state `a` is negative", 7, 27),
    ("state a      { payoff 40k usd }", "state a      { payoff 40k }", "PCSC-E301",
     "the payoff of state `a` is in usd", 7, 27),
    ("state a      { payoff 40k usd }", 'state a      { payoff "lots" }', "PCSC-E301",
     "the payoff of state `a` must be an amount in usd", 7, 27),
    ("state garage { developers 0 }", "state garage { developers 0  payoff 1 usd }", "PCSC-E220",
     "state `garage` is where the route starts", 6, 34),
    ('policy  "paytest@1.0.0"', 'policy  "venture@1.0.0"', "PCSC-E419",
     "state `a` writes a payoff, but policy venture@1.0.0 admits none", 7, 20),
]


@pytest.mark.parametrize(("old", "new", "code", "message", "line", "column"), BAD)
def test_a_bad_payoff_is_a_located_diagnostic(tmp_path: Path, old: str, new: str, code: str, message: str,
                                              line: int, column: int) -> None:
    _session(tmp_path)
    assert old in ROUTE
    (tmp_path / "paid.route").write_text(ROUTE.replace(old, new), encoding="utf-8")
    run = _pcsc("check", "--policy-path", str(tmp_path / "policies"), "--format", "json", "paid.route",
                cwd=tmp_path)
    assert run.returncode == 1
    found = [d for d in json.loads(run.stdout)["diagnostics"] if d["code"] == code]
    assert found, run.stdout
    assert message in found[0]["message"]
    assert (found[0]["line"], found[0]["column"]) == (line, column)


def test_the_example_gains_its_score_from_its_payoffs() -> None:
    """The shipped example: without its payoffs the planner would not start."""
    with_payoffs = json.loads(_pcsc("compile", "--format", "json", str(EXAMPLE)).stdout)["routes"][0]
    text = EXAMPLE.read_text(encoding="utf-8")
    bare = re.sub(r" +payoff [0-9.kM]+ usd", "", text)
    assert bare != text
    alone = Path(EXAMPLE.parent / "_bare.route")
    try:
        alone.write_text(bare, encoding="utf-8")
        without = json.loads(_pcsc("compile", "--format", "json", str(alone)).stdout)["routes"][0]
    finally:
        alone.unlink()
    assert with_payoffs["score"] > 0 and without["score"] == 0
    assert "payoffs" in with_payoffs and "payoffs" not in without
    seams = json.loads(_pcsc("seams", "--format", "json", str(EXAMPLE)).stdout)
    rows = seams["routes"][0]["seams"]
    assert rows and all(r["identity_holds"] and r["symbolically_verified"] for r in rows)
    assert any(r["removed_payoff"] > 0 for r in rows)


def test_the_splice_keeps_the_payoffs_of_the_states_it_keeps() -> None:
    """Seam 2 deletes `paid_pilots`, which leaves `family`: that state goes, with its
    1.4M; `pilots`, where `family_plan` now leads, keeps its 150k."""
    text = _pcsc("splice", str(EXAMPLE), "--route", "school_pilots", "--seam", "2").stdout
    states = {line.split()[1]: line for line in text.splitlines() if line.strip().startswith("state ")}
    assert list(states) == ["today", "sticky", "pilots", "schools"]
    assert "payoff 150_000 usd" in states["pilots"] and "payoff" not in states["schools"]
    assert "1_400_000" not in text


# certificates of routes with payoffs: tests/test_cert_payoffs.py


def test_the_red_team_moves_a_payoff_earlier_and_prices_it_like_any_edit(tmp_path: Path) -> None:
    _session(tmp_path)
    (tmp_path / "paid.route").write_text(ROUTE, encoding="utf-8")
    run = _pcsc("redteam", "--policy-path", str(tmp_path / "policies"), "--format", "json", "paid.route",
                cwd=tmp_path)
    assert run.returncode in (0, 3), run.stderr
    (route,) = json.loads(run.stdout)["routes"]
    moved = {e["edit"]: e for e in route["edits"] if e["kind"] == "move-payoff"}
    assert list(moved) == ["move-payoff:b:a"]  # the start state takes none
    # b's 250k joins a's 40k: 290k written, and the cap credits 100k of it (by hand):
    #   R_2 = 155,000, R_1 = −400,000 + 0.30 × (0 + 155,000) = −353,500
    #   R_0 = −60,000 + 0.45 × (100,000 − 353,500) = −174,075, a gain of 13,500
    edit = moved["move-payoff:b:a"]
    assert edit["ungated_score"] == pytest.approx(-174_075.0, rel=1e-12)
    assert edit["gain"] == pytest.approx(13_500.0, rel=1e-9)


def test_seams_symbolic_prints_the_payoff_algebra() -> None:
    run = _pcsc("seams", "--symbolic", str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    assert "payoffs and the option to stop" in run.stdout
    assert run.stdout.count("derived − formula expands to 0") >= 4  # two seams, two cases each
    assert "identity verified in every case: True" in run.stdout


@settings(max_examples=300, deadline=None)
@given(paid_chains())
def test_the_fold_is_the_sum_over_what_each_stage_reaches(chain: Any) -> None:
    """Without the option to stop, R_0 = −Σ reach_i·c_i + Σ reach_{i+1}·v_{i+1} + reach_n·V
    with reach_i = Π_{j<i} p_j·d_j: each cost is paid and each payoff credited as often as
    its stage is reached (an independent closed form, in Fractions)."""
    ps, cs, ds, ws, v = chain
    P, C, D, W = ([Fraction(x) for x in xs] for xs in (ps, cs, ds, ws))
    reach, total = Fraction(1), Fraction(0)
    for p, c, d, w in zip(P, C, D, W, strict=True):
        total -= reach * c
        reach *= p * d
        total += reach * w
    total += reach * Fraction(v)
    assert chain_fold(P, C, Fraction(v), D, vs=W)[0] == total


def test_dock_removes_a_payoff_past_an_uncovered_change_even_when_its_own_is_covered(tmp_path: Path) -> None:
    """`third` changes nothing material (it is covered), but `second` before it is not:
    the payoff at scale goes with the vision's value, as the reason says."""
    text = ROUTE.replace("state scale  { developers 100k }", "state scale  { developers 5k  payoff 30k usd }")
    c, _ = _compiled(tmp_path, text)
    assert c is not None and c.decision.verdict == "docked"
    from pcsc.coverage import payoff_credits

    credits = {p.state: p for p in payoff_credits(c.numbers, c.coverage)}
    assert credits["a"].covered and not credits["b"].covered and not credits["scale"].covered
    assert credits["scale"].reason == "a change before it on the path is not covered: `second`"
    # by hand, docked: v = (40k, 0, 0), V = 0:
    #   R_2 = −70,000, R_1 = −400,000 + 0.30 × (0 − 70,000) = −421,000, R_0 = −231,450
    assert c.decision.score == pytest.approx(-231_450.0, rel=1e-12)


@pytest.mark.parametrize("command", ["compile", "seams"])
def test_the_json_with_payoffs_validates_against_its_schema(command: str) -> None:
    from tests.test_schemas_everywhere import validate

    run = _pcsc(command, "--format", "json", str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    validate(run.stdout, "json", command)
    doc = json.loads(run.stdout)
    route = doc["routes"][0]
    assert ("payoffs" in route) if command == "compile" else ("removed_payoff" in route["seams"][0])


def test_the_picture_shows_each_payoff_on_its_state() -> None:
    run = _pcsc("graph", "--format", "mermaid", str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    family = next(line for line in run.stdout.splitlines() if '["family<br/>' in line)
    assert family.endswith("payoff 1.4M\"]")
    assert "payoff" not in next(line for line in run.stdout.splitlines() if '["sticky<br/>' in line)
