"""The option to stop (`[fold] abandonment = true`) with the value only at the vision and
costs at least 0 is all-or-nothing (docs/folds.md, "The option to stop"): either no
stage is worth less than nothing and every number is the fold without the option, or
the planner does not start, R_0 = 0 and every D is 0, so the binding transition is only
the tie rule's pick. The output says so, and the value-of-information selector is what
names a step worth learning."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings

from pcsc.score.fold import chain_fold
from pcsc.score.graph import edges_of, graph_fold
from tests.conftest import ROOT
from tests.test_folds import Chain, chains
from tests.test_graph_routes import LOCK, compile_file, graphs

FOLDS = ROOT / "tests" / "data" / "folds"
LEARN_EARLY = FOLDS / "learn_early.route"
BIOCHAR = ROOT / "examples" / "domains" / "biochar_kilns.route"
ORGANOID = ROOT / "examples" / "domains" / "organoid_screens.route"


def _exact(xs: list[float]) -> list[Fraction]:
    return [Fraction(x) for x in xs]


@settings(max_examples=300, deadline=None)
@given(chains())
def test_on_a_chain_the_option_to_stop_is_all_or_nothing(chain: Chain) -> None:
    ps, cs, ds, v = (_exact(chain[0]), _exact(chain[1]), _exact(chain[2]), Fraction(chain[3]))
    stop = chain_fold(ps, cs, v, ds, stop=True)
    plain = chain_fold(ps, cs, v, ds)
    stops = [i for i in range(len(ps)) if -cs[i] + ps[i] * ds[i] * stop[i + 1] < 0]
    if not stops:
        assert stop == plain  # the planner never stops: the fold without the option
        return
    k = max(stops)
    # from the last stop back to the start every value is 0: the planner does not start,
    # and D_i = reach_i·max(R_{i+1}, 0) is 0 before k and 0 by definition from the first stop
    assert all(stop[i] == 0 for i in range(k + 1))
    assert stop[k + 1:] == plain[k + 1:]
    assert plain[0] <= 0  # the option only turns a score below zero into 0


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_on_a_graph_the_option_to_stop_is_all_or_nothing(g: Any) -> None:
    shape, names, src, tgt, ps, cs, ds, v = g
    args = (shape, names, src, tgt, _exact(ps), _exact(cs), _exact(ds), Fraction(v))
    stop, plain = graph_fold(*args, True), graph_fold(*args, False)
    if stop.stops_at is None:
        assert stop.spine_R == plain.spine_R and stop.next == plain.next and stop.reach == plain.reach
        return
    assert stop.score == 0 and plain.score <= 0
    # the planner stops at the first spine item that is worth less than nothing: every
    # spine value up to there is 0, and every transition the planner would walk has
    # nothing at stake (D = reach·max(0, continuation) = 0)
    assert all(r == 0 for r in stop.spine_R[: stop.stops_at + 1])
    for e in edges_of(shape):
        if stop.walking(e):
            assert stop.reach[e] * max(Fraction(0), stop.next[e]) == 0


def _compile(path: str, *extra: str) -> tuple[str, dict[str, Any]]:
    run = [sys.executable, "-m", "pcsc", "compile", *extra, path]
    text = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    packet = subprocess.run([*run[:4], "--format", "json", *run[4:]], capture_output=True, text=True, cwd=ROOT,
                            check=True).stdout
    return text, json.loads(packet)["routes"][0]


def test_when_the_planner_would_not_start_the_binding_is_only_the_tie_rules_pick() -> None:
    text, packet = _compile(str(BIOCHAR.relative_to(ROOT)))
    assert packet["ungated_score"] == 0 and all(t["D"] == 0 for t in packet["transitions"])
    assert packet["binding"]["transition"] == packet["transitions"][0]["name"] == "demo_kiln"
    assert packet["binding"]["by_tie"] == "planner-does-not-start"
    lines = text.splitlines()
    binding = lines[next(i for i, line in enumerate(lines) if line.startswith("  binding ")) + 1]
    assert "the planner would not start" in binding and "only the tie rule's pick" in binding
    assert "learn first" in binding
    # the same route without the option to stop: the last step binds, for a real reason
    text, packet = _compile(str(BIOCHAR.relative_to(ROOT)), "--set", "fold.abandonment=false")
    assert packet["binding"]["transition"] == "full_plant" and "by_tie" not in packet["binding"]
    assert "tie rule" not in text


def test_a_graph_route_that_would_not_start_says_so_too() -> None:
    c = compile_file(LOCK, "venture-stop@1.1.0")
    assert c.numbers.score == 0 and c.numbers.binding_by_tie == "planner-does-not-start"
    assert compile_file(LOCK).numbers.binding_by_tie is None


def test_a_route_the_planner_runs_has_no_tie_note() -> None:
    text, packet = _compile(str(ORGANOID.relative_to(ROOT)))
    assert packet["fold"]["abandonment"] and packet["ungated_score"] > 0
    assert "by_tie" not in packet["binding"] and "tie rule" not in text


def test_under_the_option_to_stop_voi_names_an_earlier_cheaper_step_where_u_d_names_the_last() -> None:
    text, r = _compile(str(LEARN_EARLY.relative_to(ROOT)), "--policy-path", str(FOLDS / "policies"))
    assert r["fold"]["abandonment"] is True and r["ungated_score"] > 0 and r["fold"]["stops"] == []
    ts = r["transitions"]
    names = [t["name"] for t in ts]
    p, c, nxt = [t["p"] for t in ts], [t["c"] for t in ts], [t["R_next"] for t in ts]
    V = r["value"]
    # U·D names the last step …
    ud = [t["U"] * t["D"] for t in ts]
    assert r["binding"]["transition"] == names[-1] == "expand" and max(ud) == ud[-1] > 0
    # … the selector names `monetize`, by hand: R_0(q) with p_i = q, refolded
    def r0(i: int, q: float) -> float:
        ps = p[:i] + [q] + p[i + 1:]
        value = V
        for k in range(len(ps) - 1, -1, -1):
            value = max(0.0, -c[k] + ps[k] * value)
        return value

    now = r0(0, p[0])
    assert now == r["ungated_score"] and nxt[1] == (V * p[2] - c[2])
    rows = {row["name"]: row for row in r["voi"]["transitions"]}
    for i, name in enumerate(names):
        qs = rows[name]["values"]
        evi = sum(r0(i, q) for q in qs) / len(qs) - now
        assert abs(rows[name]["evi"] - evi) <= 1e-6 * max(1.0, abs(evi))
        assert rows[name]["voi"] == pytest.approx(rows[name]["evi"] - rows[name]["learning_cost"], rel=1e-12)
    assert rows["monetize"]["evi"] > 0  # its low estimate makes the route not worth starting
    assert min(rows["monetize"]["values"]) < (c[0] / p[0] + c[1]) / nxt[1]  # the break-even p of monetize
    assert r["voi"]["selected"] == "monetize" and not r["voi"]["agrees"]
    i, b = names.index("monetize"), names.index("expand")
    assert i < b and c[i] < c[b] and rows["monetize"]["learning_cost"] < rows["expand"]["learning_cost"]
    assert "learn first monetize" in text and "binding says expand" in text
