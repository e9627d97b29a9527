"""Payoffs on routes that fork and join (docs/graphs.md, "Payoffs on a graph"): the
series-parallel fold credits a state's payoff when the state is reached (a join's once,
when every branch has arrived), its deletion identity on every seam, DOCK and PCSC-E220."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.seams.graphs import graph_seam_identities, verify_graph_seam
from pcsc.compiler.session import Session
from pcsc.lang.ir.shape import Edge, Parallel, Series
from pcsc.score.graph import graph_fold
from pcsc.score.route import docked_payoffs, score_without_stop
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "payoffs" / "school_branches.route"

F = Fraction
# s -a-> m, a fork at m: m -b-> x -c-> j beside m -e-> j, the join j, then j -f-> t (the end)
SHAPE = Series((Edge("a"), Parallel((Series((Edge("b"), Edge("c"))), Edge("e"))), Edge("f")))
NAMES = ["a", "b", "c", "e", "f"]
SOURCES = ["s", "m", "x", "m", "j"]
TARGETS = ["m", "x", "j", "j", "t"]
PS = [F(1, 2), F(2, 3), F(3, 4), F(4, 5), F(1, 3)]
CS = [F(1), F(2), F(1), F(3), F(4)]
ONES = [F(1)] * 5
PAYOFF = {"m": F(10), "x": F(5), "j": F(7), "t": F(3)}  # the join j's payoff is carried by c and e alike
VS = [PAYOFF[t] for t in TARGETS]


def _pcsc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pcsc", *args], capture_output=True, text=True, cwd=cwd, check=False)


def test_the_graph_fold_credits_payoffs_as_computed_by_hand() -> None:
    """R_j = −4 + ⅓·(3 + 120) = 37; the parallel block's C = 2 + ⅔·1 − ⅔·5 + 3 = 7/3 (x's
    payoff credited in its own branch) and P = ⅔·¾·⅘ = 2/5; R_m = −7/3 + 2/5·(7 + 37) =
    229/15 (the join's payoff once, when both branches arrive); R_s = −1 + ½·(10 + 229/15)."""
    g = graph_fold(SHAPE, NAMES, SOURCES, TARGETS, PS, CS, ONES, F(120), False, vs=VS)
    assert g.R["j"] == 37
    assert g.blocks[id(SHAPE.items[1])].C == F(7, 3)
    assert g.R["m"] == F(229, 15)
    assert g.score == F(349, 30)
    # the same by expectation: each payoff times the chance its state is reached, less each cost
    # times the chance its source is reached
    reach_x, reach_j = F(1, 2) * F(2, 3), F(1, 2) * F(2, 5)
    by_expectation = (-1 + F(1, 2) * 10 - F(1, 2) * (2 + 3) + reach_x * (5 - 1) + reach_j * (7 - 4)
                      + reach_j * F(1, 3) * (3 + 120))
    assert by_expectation == F(349, 30)
    # what each step's success brings: x's payoff and R there; into the join, the other branch's P too
    assert g.next["b"] == 5 + (-1 + F(3, 4) * F(4, 5) * 44)
    assert g.next["e"] == F(2, 3) * F(3, 4) * 44
    assert g.next["a"] == 10 + F(229, 15)


def test_the_option_to_stop_on_a_graph_with_payoffs_by_hand() -> None:
    """V = 0: the last step is worth −4 + ⅓·3 = −3, so the planner stops at j (R_j = 0); the
    payoffs before it still pay: R_m = −7/3 + 2/5·7 = 7/15, R_s = −1 + ½·(10 + 7/15)."""
    stopped = graph_fold(SHAPE, NAMES, SOURCES, TARGETS, PS, CS, ONES, F(0), True, vs=VS)
    assert (stopped.R["j"], stopped.R["m"], stopped.score) == (0, F(7, 15), F(127, 30))
    walked = graph_fold(SHAPE, NAMES, SOURCES, TARGETS, PS, CS, ONES, F(0), False, vs=VS)
    assert (walked.R["j"], walked.R["m"], walked.score) == (-3, F(-11, 15), F(109, 30))
    assert stopped.stops("f", "j") and not stopped.stops("a", "s")


def test_without_payoffs_the_graph_fold_is_unchanged() -> None:
    zero = graph_fold(SHAPE, NAMES, SOURCES, TARGETS, PS, CS, ONES, F(120), False, vs=[F(0)] * 5)
    bare = graph_fold(SHAPE, NAMES, SOURCES, TARGETS, PS, CS, ONES, F(120), False)
    assert zero.score == bare.score and zero.R == bare.R and zero.next == bare.next


# a graph with a seam on the spine (h) and one inside a branch (g):
# s -a-> m -h-> n, n -b-> x -g-> y -c-> j beside n -e-> j, j -f-> t
SEAMED = Series((Edge("a"), Edge("h"), Parallel((Series((Edge("b"), Edge("g"), Edge("c"))), Edge("e"))), Edge("f")))
S_NAMES = ["a", "h", "b", "g", "c", "e", "f"]
S_SOURCES = ["s", "m", "n", "x", "y", "n", "j"]
S_TARGETS = ["m", "n", "x", "y", "j", "j", "t"]


@pytest.mark.parametrize("abandonment", [False, True])
@pytest.mark.parametrize("discounted", [False, True])
def test_the_identity_with_payoffs_equals_the_refold_on_random_graphs(abandonment: bool, discounted: bool) -> None:
    """The formula against the refold of the spliced route, exact, on the spine seam (h)
    and the branch seam (g), over random numbers (the sign of a value decides the case)."""
    rng = random.Random(20)
    cases = set()
    for _ in range(60):
        ps = [rng.choice([0.25, 0.5, 0.75, 0.9, 1.0]) for _ in S_NAMES]
        cs = [float(rng.randint(0, 40)) for _ in S_NAMES]
        ds = [rng.choice([1.0, 0.96, 0.9, 0.8]) if discounted else 1.0 for _ in S_NAMES]
        at = {s: float(rng.choice([0, 0, 5, 20, 60])) for s in set(S_TARGETS)}
        ws = [at[t] for t in S_TARGETS]
        value = float(rng.choice([0, 50, 400]))
        ids = graph_seam_identities(SEAMED, S_NAMES, S_SOURCES, S_TARGETS, ps, cs, ds, value, [1, 3],
                                    abandonment, ws)
        for i in ids:
            assert i.identity_holds, (ps, cs, ds, ws, value, i)
            assert i.removed_payoff == i.reach * F(at[S_SOURCES[i.k]])
            if i.sign_matches is not None:
                assert i.sign_matches
            cases.add(i.case)
    assert len(cases) >= 2


@pytest.mark.parametrize("abandonment", [False, True])
def test_the_branch_identity_with_payoffs_is_proved_with_sympy(abandonment: bool) -> None:
    fold = "abandonment" if abandonment else "discounted"
    assert verify_graph_seam(SEAMED, "g", fold, paid=True)
    assert verify_graph_seam(SEAMED, "h", fold, paid=True)


def _seams(path: Path, *extra: str) -> dict[str, Any]:
    run = _pcsc("seams", "--format", "json", *extra, str(path))
    assert run.returncode == 0, run.stderr
    routes: list[dict[str, Any]] = json.loads(run.stdout)["routes"]
    return routes[0]


def test_the_identity_holds_on_every_seam_of_the_example() -> None:
    """Each seam's formula equals the exact refold, sympy proves its shape, and the pipeline
    (the spliced route's text compiled again) moves the score by the same amount."""
    route = _seams(EXAMPLE)
    seams = route["seams"]
    assert {s["transition"] for s in seams} == {"free_trial", "referrals", "pilot_reviews"}
    for s in seams:
        assert s["identity_holds"] and s["symbolically_verified"] is True, s
        assert s["delta_exact"] == s["delta_refold"]
        assert s["pipeline"]["delta"] == pytest.approx(float(Fraction(s["delta_exact"])), rel=1e-9, abs=1e-6)
        assert s["removed_payoff"] > 0  # every seam leaves a state with a payoff
    text = _pcsc("seams", str(EXAMPLE)).stdout
    assert "removed payoff" in text


def test_the_example_gains_its_score_from_its_payoffs(tmp_path: Path) -> None:
    """With its payoffs the planner starts; without them it would not (score 0)."""
    paid = json.loads(_pcsc("compile", "--format", "json", str(EXAMPLE)).stdout)["routes"][0]
    assert paid["score"] > 0
    bare = re.sub(r" +payoff [0-9.kM]+ usd", "", EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "bare.route").write_text(bare, encoding="utf-8")
    alone = json.loads(_pcsc("compile", "--format", "json", str(tmp_path / "bare.route")).stdout)["routes"][0]
    assert alone["score"] == 0


def test_dock_removes_a_payoff_whose_paths_are_not_all_covered(tmp_path: Path) -> None:
    """`referrals` left uncovered: DOCK removes the payoff of `referred` (the change into it)
    and of the join `ready` (one branch into it is uncovered); `family`, `pilots` and
    `sticky` are on covered paths and stay. The docked score is the fold of the route with
    V = 0 and exactly those payoffs, computed here from the packet's own numbers."""
    text = EXAMPLE.read_text(encoding="utf-8")
    cut = text.replace("        discharges traction\n    }\n\n    transition family_handoff",
                       "    }\n\n    transition family_handoff")
    assert cut != text
    path = tmp_path / "cut.route"
    path.write_text(cut, encoding="utf-8")
    run = _pcsc("compile", "--coverage", "dock", "--format", "json", str(path))
    packet = json.loads(run.stdout)["routes"][0]
    covered = {p["state"]: p["covered"] for p in packet["payoffs"]}
    assert covered == {"sticky": True, "family": True, "referred": False, "ready": False, "pilots": True}
    reasons = {p["state"]: p.get("removed_by_dock") for p in packet["payoffs"]}
    assert "`referrals`" in reasons["ready"]
    credited = {p["state"]: F(p["credited"]) for p in packet["payoffs"] if p["covered"]}
    session = Session(coverage_mode="dock")
    c = session.compile_route(session.load_routes(path)[0])
    assert c is not None and c.route.shape is not None
    ts = c.numbers.transitions
    assert c.coverage is not None
    uncovered = c.coverage.uncovered_transitions
    assert docked_payoffs(c.numbers, uncovered) == [float(credited.get(t.target, 0)) for t in ts]

    def fold(stop: bool, keep: dict[str, Fraction]) -> Fraction:
        return graph_fold(c.route.shape, [t.name for t in ts], [t.source for t in ts], [t.target for t in ts],
                          [F(t.p) for t in ts], [F(t.cost.c) for t in ts], [F(t.d) for t in ts], F(0), stop,
                          vs=[keep.get(t.target, F(0)) for t in ts]).score

    assert c.decision.docked and c.decision.score == pytest.approx(float(fold(True, credited)), abs=1e-9)
    # without the option to stop the removed payoffs show: the fold DOCK's second key ranks by
    every = {p["state"]: F(p["credited"]) for p in packet["payoffs"]}
    walked = score_without_stop(c.numbers, True, uncovered)
    assert walked == pytest.approx(float(fold(False, credited)), rel=1e-12)
    assert walked < float(fold(False, every))


def test_a_payoff_on_the_start_of_a_graph_route_is_refused_and_elsewhere_compiles(tmp_path: Path) -> None:
    graph = (ROOT / "examples" / "graphs" / "saas_retention_upsell.route").read_text(encoding="utf-8")
    lines = graph.splitlines()
    states = [i for i, x in enumerate(lines) if x.strip().startswith("state ") and "{" in x and "}" in x]
    start, later = states[0], states[2]
    inner = lines.copy()
    inner[later] = inner[later].replace("}", "payoff 1k usd }")
    (tmp_path / "inner.route").write_text("\n".join(inner) + "\n", encoding="utf-8")
    run = _pcsc("check", "--policy-path", str(ROOT / "policies"), "--format", "json", str(tmp_path / "inner.route"))
    codes = [d["code"] for d in json.loads(run.stdout)["diagnostics"]]
    assert "PCSC-E220" not in codes
    lines[start] = lines[start].replace("}", "payoff 1k usd }")
    (tmp_path / "g.route").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = _pcsc("check", "--format", "json", str(tmp_path / "g.route"))
    found = [(d["code"], d["line"], d["message"]) for d in json.loads(run.stdout)["diagnostics"]]
    assert run.returncode == 1
    assert any(c == "PCSC-E220" and ln == start + 1 and "is where the route starts" in m for c, ln, m in found)


def test_score_with_one_p_changed_equals_a_refold_with_payoffs() -> None:
    """The value of information refolds each p by `score_with`: with payoffs, discounts and
    the option to stop it equals folding the whole graph again."""
    rng = random.Random(3)
    for _ in range(80):
        ps = [F(rng.randint(1, 4), 4) for _ in S_NAMES]
        cs = [F(rng.randint(0, 30)) for _ in S_NAMES]
        ds = [F(rng.choice([10, 9, 8]), 10) for _ in S_NAMES]
        at = {s: F(rng.choice([0, 5, 40])) for s in set(S_TARGETS)}
        vs = [at[t] for t in S_TARGETS]
        value, stop = F(rng.choice([0, 60, 300])), rng.random() < 0.5
        g = graph_fold(SEAMED, S_NAMES, S_SOURCES, S_TARGETS, ps, cs, ds, value, stop, vs=vs)
        for i, name in enumerate(S_NAMES):
            q = F(rng.randint(0, 4), 4)
            again = graph_fold(SEAMED, S_NAMES, S_SOURCES, S_TARGETS, [*ps[:i], q, *ps[i + 1:]], cs, ds, value,
                               stop, vs=vs)
            assert g.score_with(name, q) == again.score
