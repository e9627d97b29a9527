"""Decision certificates of routes that fork and join and credit payoffs along the way:
the checker recomputes each series block's C with the payoffs inside it, R along the
spine with each item's exit payoff, every continuation x, and DOCK's refold over its
own tree of the route file (a join's payoff credited only when every branch into it is
covered), and refuses a tampered payoff, a tampered join and a compiler that credits a
join otherwise."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.test_cert_payoffs import FOLDS, POLICY, Run, certify, run, set_number, steps, tamper, verify

__all__ = ["run"]  # the fixture, imported

# garage -> a, then two branches a -> left -> join and a -> right -> join, then join -> scale.
# `l` changes `developers` without covering it (its obligation fails), so under DOCK the
# payoffs at `left` and at the join are not credited; `right`'s is (its branch is covered).
GRAPH = """\
route forked "a fork with payoffs in each branch and at the join" {
    as_of   2012-06-01
    policy  "paytest@1.0.0"
    uses    venture

    state garage { developers 0 }
    state a      { payoff 40k usd }
    state left   { developers 5k  payoff 30k usd }
    state right  { payoff 20k usd }
    state join   { payoff 60k usd }
    state scale  { developers 100k }

    vision scale { tam 100M usd  capture 10%  defensibility 0.5 }

    transition first: garage -> a {
        class "devtools/first-users"
        horizon 6 months
        cost { team 60k usd }
    }
    transition l: a -> left {
        class "devtools/first-revenue"
        mechanism "m"
        kill developers < 100
        threshold developers >= 5k
        horizon 1 years
        cost { team 400k usd }
        discharges adoption
    }
    transition lj: left -> join {
        class "devtools/first-users"
        horizon 2 months
        cost { team 30k usd }
    }
    transition r: a -> right {
        class "devtools/first-users"
        horizon 3 months
        cost { team 50k usd }
    }
    transition rj: right -> join {
        class "devtools/first-users"
        horizon 1 months
        cost { team 20k usd }
    }
    transition last: join -> scale {
        class "devtools/first-users"
        horizon 90 days
        cost { team 70k usd }
    }
}
"""
ORDER = ["first", "l", "lj", "r", "rj", "last"]


def graph_project(tmp_path: Path, fold: str) -> Path:
    folder = tmp_path / fold
    (folder / "policies" / "paytest").mkdir(parents=True)
    (folder / "policies" / "paytest" / "1.0.0.toml").write_text(POLICY.replace("FOLD", FOLDS[fold]),
                                                                   encoding="utf-8")
    (folder / "paid.route").write_text(GRAPH, encoding="utf-8")
    return folder


def q(s: dict[str, Any], symbol: str) -> float:
    return float(Fraction(s[symbol]["value"]["q"]))


# ---------------------------------------------------------------------- certificates that verify
@pytest.mark.parametrize("fold", sorted(FOLDS))
def test_a_graph_with_payoffs_verifies_under_every_fold(run: Run, tmp_path: Path, fold: str) -> None:
    cert = certify(run, graph_project(tmp_path, fold))
    code, text = verify(run, cert)
    assert code == 0, text
    doc = json.loads(cert.read_text())
    s = steps(doc)
    rate = 0.01 if fold == "units" else 1.0
    # both transitions into the join carry its payoff; `left`'s 30k and `a`'s 40k are under the 100k cap
    assert {k: x["value"]["f"] for k, x in s.items() if k.endswith(".v")} == {
        "first.v": 40_000 * rate, "l.v": 30_000 * rate, "lj.v": 60_000 * rate, "r.v": 20_000 * rate,
        "rj.v": 60_000 * rate}
    # the join's payoff is read once, in the top series' C, from its first branch's transition
    assert [o.get("step") for o in s["[].C"]["operands"]["v"]] == ["first.v", "lj.v"]
    # DOCK: `l` is uncovered, so neither `left` nor the join (one of whose branches it is on) is credited
    assert [f["v"] for f in s["docked_score"]["operands"]["credited"]] == [True, False, False, True, False, False]
    assert doc["routes"][0]["decision"]["verdict"] == "docked"
    assert not any(k.startswith("docked R(") for k in s)


def test_the_graph_fold_with_payoffs_by_hand(run: Run, tmp_path: Path) -> None:
    """The paper's fold by hand from the certificate's own p and c (docs/graphs.md,
    "Payoffs on a graph"): each branch credits its own state's payoff, the join's is
    credited once, after both; DOCK's refold drops the payoffs past `l` (left's, the
    join's) and V, and keeps `a`'s and `right`'s."""
    s = steps(json.loads(certify(run, graph_project(tmp_path, "paper")).read_text()))
    p = {t: q(s, f"{t}.p") for t in ORDER}
    c = {t: q(s, f"{t}.c") for t in ORDER}

    def score(v: dict[str, float], V: float) -> float:
        left = c["l"] - p["l"] * v["left"] + p["l"] * c["lj"]  # C of l; lj, net of left's payoff
        right = c["r"] - p["r"] * v["right"] + p["r"] * c["rj"]
        P, C = p["l"] * p["lj"] * p["r"] * p["rj"], left + right
        R = -c["last"] + p["last"] * V
        R = -C + P * (v["join"] + R)
        return -c["first"] + p["first"] * (v["a"] + R)

    paid = {"a": 40_000.0, "left": 30_000.0, "right": 20_000.0, "join": 60_000.0}
    assert q(s, "score") == pytest.approx(score(paid, 5e6), rel=1e-12)
    assert q(s, "docked_score") == pytest.approx(score({**paid, "left": 0.0, "join": 0.0}, 0.0), rel=1e-12)
    # and not the refold that credits the join from its covered branch
    assert q(s, "docked_score") != pytest.approx(score({**paid, "left": 0.0}, 0.0), rel=1e-9)


def test_the_shipped_graph_with_payoffs_certifies(run: Run, tmp_path: Path) -> None:
    from tests.conftest import ROOT

    route = ROOT / "examples" / "payoffs" / "school_branches.route"
    (tmp_path / route.name).write_text(route.read_text(encoding="utf-8"), encoding="utf-8")
    cert = tmp_path / "cert.json"
    code, _, err = run("compile", str(tmp_path / route.name), "--cert", str(cert), "-q")
    assert code == 0, err
    code, text = verify(run, cert)
    assert code == 0 and "1 route(s)" in text, text
    s = steps(json.loads(cert.read_text()))
    # the join `ready` is reached by family_handoff and pilot_handoff: both carry its 2M
    assert s["family_handoff.v"]["value"]["f"] == s["pilot_handoff.v"]["value"]["f"] == 2_000_000.0


# ---------------------------------------------------------------------- tampered payoffs and joins
def _v(d: dict[str, Any], symbol: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = steps(d)[symbol]["operands"]["v"]
    return ops


def _read_other_branch(d: dict[str, Any]) -> None:
    _v(d, "[].C")[1]["step"] = "rj.v"  # the same value, from the join's other branch


def _credit_join(d: dict[str, Any]) -> None:
    for i in (2, 4):  # lj and rj: the transitions into the join
        steps(d)["docked_score"]["operands"]["credited"][i]["v"] = True


def _drop_join(d: dict[str, Any]) -> None:
    _v(d, "[].C")[1] = {"f": 0.0, "q": "0/1"}


EDITS = [
    ("a branch's payoff", lambda d: set_number(steps(d)["r.v"]["value"], 25_000.0), "r.v"),
    ("the payoff read", lambda d: set_number(steps(d)["r.v"]["operands"]["payoff"], 25_000.0),
     "state `right` writes 20000"),
    ("the join's payoff", lambda d: set_number(steps(d)["lj.v"]["value"], 70_000.0), "lj.v"),
    ("the join's payoff read", lambda d: set_number(steps(d)["rj.v"]["operands"]["payoff"], 70_000.0),
     "state `join` writes 60000"),
    ("a series block's C", lambda d: set_number(steps(d)["[].C"]["value"], steps(d)["[].C"]["value"]["f"] + 1),
     "[].C"),
    ("the join read from its other branch", _read_other_branch, "operand `v`"),
    ("the join's payoff left out", _drop_join, "[].C"),
    ("the join credited from one covered branch", _credit_join, "whose every path is covered"),
    ("a payoff where none is written", lambda d: set_number(_v(d, "docked_score")[5], 5_000.0),
     "whose target state writes none"),
    ("a branch's continuation", lambda d: set_number(steps(d)["r.x"]["value"], steps(d)["r.x"]["value"]["f"] + 1),
     "r.x"),
    ("the payoff left out of the spine", lambda d: steps(d)["R(garage)"]["operands"].pop("v"), "R(garage)"),
]


@pytest.mark.parametrize(("what", "edit", "message"), EDITS, ids=[e[0] for e in EDITS])
def test_a_tampered_payoff_or_join_is_refused(run: Run, tmp_path: Path, what: str, edit: Any, message: str) -> None:
    cert = certify(run, graph_project(tmp_path, "stop"))
    assert verify(run, cert)[0] == 0
    tamper(cert, edit)
    code, text = verify(run, cert)
    assert code == 1 and "PCSC-E912" in text, text
    assert message in text, text


def test_a_compiler_that_credits_a_join_from_one_branch_is_caught(run: Run, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant of DOCK's credits that does not merge the branches at a join (each
    transition into it judged by its own branch): the join's payoff is credited through
    the covered branch. The certificate it writes has the mutant's docked score, and the
    checker, which refolds by its own tree, refuses it."""
    import pcsc.score.route as scoring

    real = scoring.uncovered_before

    def mutant(transitions: Any, uncovered: Any) -> Any:
        into: dict[str, tuple[str, ...]] = {}
        out = []
        for t in transitions:
            mine = into.get(t.source, ()) + ((t.name,) if t.name in uncovered else ())
            into[t.target] = mine
            out.append(mine)
        return out

    folder = graph_project(tmp_path, "discount")  # no option to stop: the docked score is not clipped to 0
    real_docked = steps(json.loads(certify(run, folder).read_text()))["docked_score"]["value"]["f"]
    monkeypatch.setattr(scoring, "uncovered_before", mutant)
    cert = certify(run, folder)
    monkeypatch.setattr(scoring, "uncovered_before", real)
    assert steps(json.loads(cert.read_text()))["docked_score"]["value"]["f"] > real_docked  # the join's 60k
    code, text = verify(run, cert)
    assert code == 1 and "docked_score" in text, text
    code, text = verify(run, certify(run, folder))  # the control
    assert code == 0, text


def test_a_forgery_of_any_single_field_of_a_graph_payoff_certificate_fails(run: Run, tmp_path: Path) -> None:
    """Each field changed alone (its digest made again), and each step's rule swapped for
    another of the same arithmetic: none verifies (tests/test_cert_binding.py's forger)."""
    from tests.test_cert_binding import _forge_all

    _forge_all(certify(run, graph_project(tmp_path, "stop")), donors=False)
