"""`move-payoff` on a route that forks and joins (docs/redteam.md): the red team and the
search move a state's payoff to a state on a path from the start into it (a join's
into one of its branches, a branch's before the fork), and the edited route is
compiled again like any other edit: the policy's cap prices the sum, and DOCK credits
the moved payoff only when every path into its new state is covered."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from pcsc.analysis.redteam import Edit, NotApplicable, apply_edit, enumerate_edits
from pcsc.compiler.session import Compiled, Session
from pcsc.lang.printer import route_to_text
from pcsc.policy.load import PolicyStore
from tests.test_cert_graph_payoffs import GRAPH, graph_project

CAP = 80_000.0  # the [payoffs] max_usd of `capped` (paytest's 100k, lowered): the join's 60k moved onto a's 40k or
# left's 30k is more than it credits
PAYOFFS = {"a": 40_000.0, "left": 30_000.0, "right": 20_000.0, "join": 60_000.0}
MOVES = ["move-payoff:left:a", "move-payoff:right:a", "move-payoff:join:a", "move-payoff:join:left",
         "move-payoff:join:right"]


def session_of(folder: Path) -> Session:
    return Session(policies=PolicyStore([folder / "policies"]))


def capped(tmp_path: Path) -> Path:
    folder = graph_project(tmp_path, "paper")
    policy = folder / "policies" / "paytest" / "1.0.0.toml"
    text = policy.read_text(encoding="utf-8")
    assert "max_usd = 100_000" in text
    policy.write_text(text.replace("max_usd = 100_000", "max_usd = 80_000"), encoding="utf-8")
    return folder


def compiled(folder: Path, session: Session | None = None) -> Compiled:
    session = session or session_of(folder)
    (honest,) = session.compile_routes(session.load_paths([str(folder / "paid.route")]))
    return honest


def closed_form(c: Compiled, payoffs: dict[str, float], V: float, cap: float = CAP) -> float:
    """The paper's fold of the graph without the option to stop, as a sum over what each
    stage reaches (docs/graphs.md): each cost paid as often as its transition's source
    is reached, each payoff credited (at most the cap) as often as its state is, V as
    often as the end is. An independent closed form, not the fold."""
    p = {t.name: t.p for t in c.numbers.transitions}
    cost = {t.name: t.cost.c for t in c.numbers.transitions}
    reach = {"garage": 1.0, "a": p["first"]}
    reach["left"], reach["right"] = reach["a"] * p["l"], reach["a"] * p["r"]
    reach["join"] = reach["a"] * p["l"] * p["lj"] * p["r"] * p["rj"]
    reach["scale"] = reach["join"] * p["last"]
    source = {"first": "garage", "l": "a", "lj": "left", "r": "a", "rj": "right", "last": "join"}
    return (-sum(reach[source[t]] * cost[t] for t in source)
            + sum(reach[s] * min(v, cap) for s, v in payoffs.items()) + reach["scale"] * V)


def moved(payoffs: dict[str, float], edit: str) -> dict[str, float]:
    _, source, target = edit.split(":")
    out = dict(payoffs)
    out[target] = out.get(target, 0.0) + out.pop(source)
    return out


def test_the_moves_of_a_graph_are_the_states_on_a_path_into_each_payoff(tmp_path: Path) -> None:
    c = compiled(graph_project(tmp_path, "paper"))
    priors = {name: prior.p for name, prior in c.policy.policy.priors.items()}
    edits = [e.key for e in enumerate_edits(c.route, priors) if e.kind == "move-payoff"]
    # `left` and `right` are not on a path into each other; the start `garage` takes none
    assert sorted(edits) == sorted(MOVES)
    for bad in (Edit("move-payoff", "left", "right"), Edit("move-payoff", "a", "garage"),
                Edit("move-payoff", "left", "join"), Edit("move-payoff", "scale", "a")):
        with pytest.raises(NotApplicable):
            apply_edit(c.route, bad)
    route = apply_edit(c.route, Edit("move-payoff", "join", "left"))
    assert route.state("join").payoff is None and route.state("left").payoff == 90_000.0
    assert route.shape == c.route.shape  # the shape is kept


def test_the_red_team_prices_a_graph_move_like_any_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    folder = capped(tmp_path)
    c = compiled(folder)
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    code = pcsc.cli.main(["redteam", "--policy-path", str(folder / "policies"), "--format", "json",
                          str(folder / "paid.route")])
    out = capsys.readouterr().out
    assert code in (0, 3), out
    (route,) = json.loads(out)["routes"]
    edits: dict[str, Any] = {e["edit"]: e for e in route["edits"] if e["kind"] == "move-payoff"}
    assert sorted(edits) == sorted(MOVES)
    honest = closed_form(c, PAYOFFS, 5e6)
    assert c.numbers.score == pytest.approx(honest, rel=1e-12)
    for key, e in edits.items():
        want = closed_form(c, moved(PAYOFFS, key), 5e6)
        assert e["ungated_score"] == pytest.approx(want, rel=1e-12), key
        assert e["gain"] == pytest.approx(want - honest, rel=1e-9, abs=1e-6), key
    # the cap prices the sum: the join's 60k beside a's 40k is 100k, credited 80k; not 100k
    assert moved(PAYOFFS, "move-payoff:join:a")["a"] > CAP
    uncapped = closed_form(c, moved(PAYOFFS, "move-payoff:join:a"), 5e6, cap=1e12)
    assert edits["move-payoff:join:a"]["ungated_score"] < uncapped - 1.0
    # DOCK: `l` is uncovered, so neither `left` nor the join is credited; moved into the covered
    # branch the join's payoff is credited at `right` (reached p_first·p_r), into `left` still not
    p = {t.name: t.p for t in c.numbers.transitions}
    assert edits["move-payoff:join:right"]["dock_gain"] == pytest.approx(p["first"] * p["r"] * 60_000, rel=1e-9)
    assert edits["move-payoff:join:left"]["dock_gain"] == pytest.approx(0.0, abs=1e-6)
    assert edits["move-payoff:join:right"]["gate"] == "suspend-and-ask"  # GATE still refuses the route


def test_the_search_proposes_graph_moves_and_prices_them(tmp_path: Path) -> None:
    """The search's proposals (its structural edits, shuffled by its seed) include every
    move of the graph, and each is evaluated as the search evaluates any revision."""
    from pcsc.analysis.search import SHIPPED, Settings, _Search

    folder = capped(tmp_path)
    session = session_of(folder)
    honest = compiled(folder, session)
    search = _Search(honest, session, "none", SHIPPED, Settings(budget=50))
    parent = search.evaluate(GRAPH, (), ())
    assert parent is not None
    proposed = {d: r for d, kind, r in search.proposals(parent, random.Random(0)) if kind == "move-payoff"}
    assert len(proposed) == len(MOVES)
    base = closed_form(honest, PAYOFFS, 5e6)
    gains = []
    for description, route in proposed.items():
        revision = search.evaluate(route_to_text(route), (description,), ("move-payoff",))
        assert revision is not None and revision.ungated > base
        gains.append(revision.ungated - base)
    assert max(gains) == pytest.approx(
        closed_form(honest, moved(PAYOFFS, "move-payoff:join:a"), 5e6) - base, rel=1e-9)
