"""The cost-aware value-of-information selector beside the binding transition (pcsc.score.voi)."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main
from pcsc.score.voi import SPREAD_DEFAULT, SPREAD_ESTIMATES, spread_values, value_of_information
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "devtools_api.route"


def two_steps(learning: tuple[float | None, float | None]) -> Any:
    """V = 1000; p = (0.5, 0.4); c = (100, 100); estimates (0.1, 0.9) and (0.0, 0.8).

    By hand: R_2 = 1000, R_1 = −100 + 0.4·1000 = 300, R_0 = −100 + 0.5·300 = 50.
    Step 0: q ∈ {0.1, 0.9}: R_0 = −70 → 0 (abandoned) and 170; EVI_0 = 85 − 50 = 35.
    Step 1: q ∈ {0.0, 0.8}: R_0 = −100 + 0.5·(−100) = −150 → 0 and −100 + 0.5·700 = 250;
    EVI_1 = 125 − 50 = 75.
    U·D: U_0·D_0 = 0.8·300 = 240 < U_1·D_1 = 0.8·(0.5·1000) = 400, so the binding
    transition is step 1."""
    return value_of_information(
        ["first", "last"], [0.5, 0.4], [100.0, 100.0], [1.0, 1.0], 1000.0, False,
        [(0.1, 0.9), (0.0, 0.8)], 0.25, list(learning),
    )


def test_hand_computed_evi_of_a_small_route() -> None:
    v = two_steps((None, None))
    assert v.now == pytest.approx(50.0, rel=1e-12)
    assert [r.evi for r in v.rows] == [pytest.approx(35.0, rel=1e-12), pytest.approx(75.0, rel=1e-12)]
    assert [r.values for r in v.rows] == [(pytest.approx(0.1), pytest.approx(0.9)), (0.0, pytest.approx(0.8))]
    assert all(not r.cost_stated and r.learning_cost == 0.0 for r in v.rows)
    assert v.selected == 1  # free to learn: the larger EVI wins


def test_voi_prefers_a_cheaper_earlier_step_where_u_d_picks_the_last() -> None:
    v = two_steps((5.0, 60.0))
    assert [r.voi for r in v.rows] == [pytest.approx(30.0, rel=1e-12), pytest.approx(15.0, rel=1e-12)]
    assert v.selected == 0  # U·D picks step 1 (240 < 400, see `two_steps`)


def test_none_is_worth_learning_when_learning_costs_exceed_evi() -> None:
    v = two_steps((40.0, 100.0))
    assert v.selected is None
    assert [r.voi for r in v.rows] == [pytest.approx(-5.0, rel=1e-9), pytest.approx(-25.0, rel=1e-12)]


def test_ties_go_to_the_earliest() -> None:
    v = value_of_information(["a", "b"], [0.5, 0.5], [0.0, 0.0], [1.0, 1.0], 100.0, False,
                             [(0.4, 0.6), (0.4, 0.6)], 0.25, [None, None])
    assert v.selected is None  # R_0 = 25 > 0 whatever is learnt: EVI = 0
    v = value_of_information(["a", "b"], [0.5, 0.5], [30.0, 0.0], [1.0, 1.0], 100.0, False,
                             [(0.0, 1.0), (0.0, 1.0)], 0.25, [None, None])
    # R_0(q_a) = −30 + 50·q_a and R_0(q_b) = −30 + 50·q_b: the same numbers, so the same EVI
    assert v.rows[0].evi == v.rows[1].evi > 0
    assert v.selected == 0


def test_the_spread_keeps_its_mean_and_stays_in_the_unit_interval() -> None:
    values, rule, s = spread_values(0.95, [0.5, 0.9], 0.25)  # ±0.2 around 0.95 would leave [0, 1]
    assert rule == SPREAD_ESTIMATES
    mean = (Fraction(0.5) + Fraction(0.9)) / 2
    assert s == (1 - Fraction(0.95)) / (Fraction(0.9) - mean)
    assert max(values) == 1 and sum(values) / 2 == Fraction(0.95)
    values, rule, s = spread_values(0.3, [0.6], 0.2)  # one estimate: the policy's default U
    assert rule == SPREAD_DEFAULT and s == 1
    assert [float(q) for q in values] == [pytest.approx(0.2), pytest.approx(0.4)]


@pytest.mark.parametrize("abandonment", [False, True])
def test_evi_is_never_negative(abandonment: bool) -> None:
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 5)
        ps = [rng.random() for _ in range(n)]
        cs = [rng.uniform(0, 500) for _ in range(n)]
        ds = [rng.uniform(0.5, 1.0) for _ in range(n)]
        est = [tuple(rng.random() for _ in range(rng.randint(0, 3))) for _ in range(n)]
        v = value_of_information([f"t{i}" for i in range(n)], ps, cs, ds, rng.uniform(0, 5000), abandonment, est,
                                 0.25, [None] * n)
        assert all(r.evi >= 0.0 for r in v.rows)


def packet(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    assert main(["compile", str(path), "--format", "json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)["routes"][0]
    return doc


def test_the_packet_matches_the_closed_form_of_the_papers_fold(capsys: pytest.CaptureFixture[str]) -> None:
    """Under the paper's fold R_0 is affine in p_i: R_0(q) = R_0 + reach_i·R_{i+1}·(q − p_i)."""
    doc = packet(capsys, EXAMPLE)
    ts = {t["name"]: t for t in doc["transitions"]}
    r0 = doc["ungated_score"]
    reach = 1.0
    for t, row in zip(doc["transitions"], doc["voi"]["transitions"], strict=True):
        slope = reach * t["R_next"]
        expect = sum(max(0.0, r0 + slope * (q - t["p"])) for q in row["values"]) / len(row["values"]) - max(0.0, r0)
        assert row["evi"] == pytest.approx(expect, rel=1e-9, abs=1e-6)
        reach *= t["p"]
    assert doc["voi"]["transitions"][2]["evi"] > 0  # expand's spread straddles break-even
    assert doc["voi"]["transitions"][0]["evi"] == 0  # launch's does not
    assert doc["voi"]["selected"] == doc["binding"]["transition"] == "expand"
    assert doc["voi"]["agrees"] is True
    assert ts["expand"]["learning_cost"] is None and doc["voi"]["transitions"][2]["learning_cost_stated"] is False


def test_a_costly_lesson_makes_the_selector_say_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text()
    assert "        estimates  0.15 0.3\n" in text
    route = tmp_path / "devtools_api.route"
    route.write_text(text.replace("        estimates  0.15 0.3\n", "        learning_cost  50M usd\n"
                                  "        estimates  0.15 0.3\n"))
    for lib in (ROOT / "examples").glob("*.obl"):
        (tmp_path / lib.name).write_text(lib.read_text())
    doc = packet(capsys, route)
    assert doc["binding"]["transition"] == "expand"
    assert doc["voi"]["selected"] is None and doc["voi"]["agrees"] is False
    assert main(["compile", str(route)]) == 0
    out = capsys.readouterr().out
    assert "learn first none worth learning" in out and "binding says expand" in out
    assert main(["explain", str(route), "--format", "json"]) == 0
    steps = {s["symbol"]: s for s in json.loads(capsys.readouterr().out)["explain"]["steps"]}
    assert steps["learn first"]["value"] == "none worth learning"
    assert steps["expand.VOI"]["value"] == pytest.approx(steps["expand.EVI"]["value"] - 50e6)


def test_evaluate_counts_where_u_d_and_voi_disagree() -> None:
    from pcsc.base.stats import wilson95
    from pcsc.forecast.baselines import binding_vs_voi
    from pcsc.forecast.views import binding_lines

    def pk(binding: str, voi: str | None, with_voi: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {"transitions": [{"name": n} for n in ("a", "b", "c")],
                               "binding": {"transition": binding}}
        if with_voi:
            doc["voi"] = {"selected": voi}
        return doc

    packets = {"r1": pk("c", "c"), "r2": pk("c", "a"), "r3": pk("c", None), "r4": pk("c", None, with_voi=False)}
    negatives = [("r2", "b"), ("r2", "a"), ("r3", "c"), ("r1", "x")]
    out = binding_vs_voi(packets, negatives)
    assert (out["routes"], out["without_voi"], out["agree"], out["differ"], out["voi_none"]) == (4, 1, 1, 1, 1)
    rows = {r["route"]: r for r in out["rows"]}
    assert rows["r2"]["first_failed"] == "a"  # the earliest in chain order, not the first listed
    assert rows["r1"]["first_failed"] is None  # an unknown transition is ignored
    assert (out["failed_routes"], out["binding_named_failure"], out["voi_named_failure"]) == (2, 1, 1)
    assert out["rates"]["binding_named_failure"] == {"k": 1, "n": 2, "wilson95": list(wilson95(1, 2))}
    assert out["rates"]["voi_named_failure"]["k"] == 1 and out["rates"]["voi_named_failure"]["n"] == 2
    assert "by U·D 1/2 [9.5, 90.5], by VOI 1/2 [9.5, 90.5]" in "\n".join(binding_lines(out))


def test_each_route_is_counted_once_and_listed_as_counted() -> None:
    """A tie pick (every U·D is 0) where the selector also finds nothing, or names the same
    transition, counts as a tie only: agree + differ + VOI none + tie = the routes with the
    selector, and the text lists the others once each, under the count that holds them."""
    from pcsc.forecast.baselines import binding_vs_voi
    from pcsc.forecast.views import binding_lines

    def pk(binding: str, voi: str | None, tie: bool = False) -> dict[str, Any]:
        doc: dict[str, Any] = {"transitions": [{"name": n} for n in ("a", "b")], "binding": {"transition": binding},
                               "voi": {"selected": voi}}
        if tie:
            doc["binding"]["by_tie"] = "planner-does-not-start"
        return doc

    packets = {"agree": pk("a", "a"), "differ": pk("a", "b"), "none": pk("a", None), "tie_none": pk("a", None, True),
               "tie_same": pk("a", "a", True)}
    out = binding_vs_voi(packets, [])
    assert (out["agree"], out["differ"], out["voi_none"], out["binding_by_tie"]) == (1, 1, 1, 2)
    assert {r["route"]: r["relation"] for r in out["rows"]} == {
        "agree": "agree", "differ": "differ", "none": "voi-none", "tie_none": "tie", "tie_same": "tie"}
    text = "\n".join(binding_lines(out))
    assert "agree 1, differ 1, VOI finds none worth learning 1, U·D only the tie rule's pick (every U·D is 0) 2" in text
    assert "the 4 routes where they do not agree:" in text
    listed = text.split("where they do not agree:\n", 1)[1].splitlines()[1:]
    assert sorted(line.split()[0] for line in listed) == ["differ", "none", "tie_none", "tie_same"]
    assert sum("U·D only the tie rule's pick" in line for line in listed) == 2


def test_evaluate_reports_the_selector_on_a_retrospective_pilot(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    cohort = ROOT / "examples" / "cohort"
    ledger = str(tmp_path / "ledger.sqlite")
    assert main(["freeze", "--retrospective", str(cohort), "--ledger", ledger, "-q"]) == 0
    assert main(["resolve", str(cohort / "outcomes_pilot.toml"), "--ledger", ledger, "--as-of", "2019-01-01",
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--ledger", ledger, "--as-of", "2019-01-01", "--format", "json"]) == 0
    b = json.loads(capsys.readouterr().out)["binding"]
    assert b["routes"] == 30 and b["without_voi"] == 0
    assert b["agree"] + b["differ"] + b["voi_none"] + b["binding_by_tie"] == 30
    assert b["voi_none"] > 0  # most honest routes' decisions do not turn on any one p
    for r in b["rows"]:
        assert r["agrees"] == (r["voi"] == r["binding"])
    assert main(["evaluate", "--ledger", ledger, "--as-of", "2019-01-01"]) == 0
    out = capsys.readouterr().out
    assert "U·D beside the value-of-information and knowledge-gradient selectors (30 routes)" in out
    # the text lists as many routes as it counts where the two do not agree (it said
    # "differ 0", then listed 23 routes "where they disagree")
    assert (f"agree {b['agree']}, differ {b['differ']}, VOI finds none worth learning {b['voi_none']}, "
            f"KG finds no trial worth observing {b['kg_none']}\n") in out
    assert b["kg_none"] == sum(r["kg"] is None for r in b["rows"]) > 0
    assert b["kg_named_failure"] == sum(r["kg"] is not None and r["kg"] == r["first_failed"] for r in b["rows"])
    not_agreeing = 30 - b["agree"]
    assert f"the {not_agreeing} routes where they do not agree:" in out
    block = out.split("where they do not agree:\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert len(block) == not_agreeing
    assert sum(line.endswith("VOI finds none worth learning") for line in block) == b["voi_none"]
    assert sum(line.endswith(" differ") for line in block) == b["differ"]


def brute_evi(i: int, ps: list[float], cs: list[float], value: float, qs: list[Fraction]) -> Fraction:
    """EVI_i by refolding the paper's fold in exact rationals, straight from the definition."""
    def r0(p_i: Fraction) -> Fraction:
        r = Fraction(value)
        for j in range(len(ps) - 1, -1, -1):
            r = -Fraction(cs[j]) + (p_i if j == i else Fraction(ps[j])) * r
        return r
    zero = Fraction(0)
    return sum((max(zero, r0(q)) for q in qs), zero) / len(qs) - max(zero, r0(Fraction(ps[i])))


def test_the_float_shortcut_gives_the_exact_evi() -> None:
    rng = random.Random(11)
    checked_straddles = 0
    for _ in range(300):
        n = rng.randint(1, 4)
        ps = [rng.uniform(0.05, 0.95) for _ in range(n)]
        cs = [rng.uniform(0, 300) for _ in range(n)]
        value = rng.uniform(0, 3000)
        est = [tuple(rng.random() for _ in range(rng.randint(0, 3))) for _ in range(n)]
        v = value_of_information([f"t{i}" for i in range(n)], ps, cs, [1.0] * n, value, False, est, 0.25,
                                 [None] * n)
        for i, row in enumerate(v.rows):
            qs, _, _ = spread_values(ps[i], est[i], 0.25)
            exact = brute_evi(i, ps, cs, value, qs)
            assert row.evi == float(exact)
            checked_straddles += exact > 0
    assert checked_straddles > 20  # both paths were exercised


def brute_evi_policy(i: int, ps: list[float], cs: list[float], ds: list[float], value: float, abandonment: bool,
                     qs: list[Fraction]) -> Fraction:
    """EVI_i under a `[fold]` policy (discount factors ``ds``, the option to stop), refolded in
    exact rationals straight from R_j = −c_j + p_j·d_j·R_{j+1} (max(0, ·) with abandonment)."""
    zero = Fraction(0)

    def r0(p_i: Fraction) -> Fraction:
        r = Fraction(value)
        for j in range(len(ps) - 1, -1, -1):
            r = -Fraction(cs[j]) + (p_i if j == i else Fraction(ps[j])) * Fraction(ds[j]) * r
            if abandonment:
                r = max(zero, r)
        return r

    return sum((max(zero, r0(q)) for q in qs), zero) / len(qs) - max(zero, r0(Fraction(ps[i])))


def _near_break_even(rng: random.Random, ps: list[float], cs: list[float], ds: list[float], value: float) -> None:
    """Set one stage's cost so that its −c + p·d·R_next is 0 or within a hair of it."""
    i = rng.randrange(len(ps))
    r = value
    for j in range(len(ps) - 1, i, -1):
        r = max(0.0, -cs[j] + ps[j] * ds[j] * r)
    cs[i] = ps[i] * ds[i] * r * rng.choice([1.0, 1 + 1e-12, 1 - 1e-12, 0.97, 1.03])


@pytest.mark.parametrize("abandonment", [False, True])
def test_the_float_checks_give_the_exact_evi_under_a_fold_policy(abandonment: bool) -> None:
    """With discounts, and with the option to stop (where R_0 is a chain of max(0, ·) and the
    float check follows every stage), each row's EVI is the exact refold's, including stages
    set at or a hair from break-even."""
    rng = random.Random(23)
    straddles = 0
    for _ in range(400):
        n = rng.randint(1, 5)
        ps = [rng.choice([rng.uniform(0.05, 0.95), 0.0, 1.0]) for _ in range(n)]
        cs = [rng.uniform(0, 300) for _ in range(n)]
        ds = [rng.uniform(0.6, 1.0) for _ in range(n)]
        value = rng.uniform(0, 3000)
        if rng.random() < 0.5:
            _near_break_even(rng, ps, cs, ds, value)
        est = [tuple(rng.random() for _ in range(rng.randint(0, 3))) for _ in range(n)]
        v = value_of_information([f"t{i}" for i in range(n)], ps, cs, ds, value, abandonment, est, 0.25,
                                 [None] * n)
        for i, row in enumerate(v.rows):
            qs, _, _ = spread_values(ps[i], est[i], 0.25)
            exact = brute_evi_policy(i, ps, cs, ds, value, abandonment, qs)
            assert row.evi == float(exact)
            assert row.values == tuple(float(q) for q in qs)
            straddles += exact > 0
    assert straddles > 20  # both paths were exercised


def test_the_spread_on_integers_is_the_rational_formula() -> None:
    """s and the values equal the definition computed in `Fraction`s: q_k = p + s·(e_k − ē)
    (or p ± U/2), s the largest factor ≤ 1 keeping every value in [0, 1]."""
    rng = random.Random(5)
    for _ in range(2000):
        p = rng.choice([rng.random(), 0.0, 1.0, 0.5, 1e-9])
        est = [rng.choice([rng.random(), round(rng.random(), 2), 0.0, 1.0]) for _ in range(rng.randint(0, 4))]
        u = rng.choice([0.25, 0.1, 0.3, 2.0])
        fp = Fraction(p)
        if len(est) >= 2:
            mean = sum(map(Fraction, est), Fraction(0)) / len(est)
            devs = [Fraction(e) - mean for e in est]
        else:
            devs = [-Fraction(u) / 2, Fraction(u) / 2]
        bounds = [(1 - fp) / d for d in devs if d > 0] + [fp / -d for d in devs if d < 0]
        s_expect = max(Fraction(0), min([Fraction(1), *bounds]))
        values, _, s = spread_values(p, est, u)
        assert s == s_expect
        assert values == [fp + s_expect * d for d in devs]
        assert all(0 <= q <= 1 for q in values) and sum(values) / len(values) == fp


def _random_shape(rng: random.Random, names: list[str], depth: int = 0) -> Any:
    """A random series-parallel shape whose edges are appended to ``names``."""
    from pcsc.lang.ir.shape import Edge, Parallel, Series

    kind = rng.random() if depth < 3 else 0.0
    if kind < 0.4:
        names.append(f"t{len(names)}")
        return Edge(names[-1])
    if kind < 0.7:
        return Series(tuple(_random_shape(rng, names, depth + 1) for _ in range(rng.randint(2, 3))))
    return Parallel(tuple(_random_shape(rng, names, depth + 1) for _ in range(rng.randint(2, 3))))


def _exact_refold(shape: Any, names: list[str], sources: list[str], targets: list[str], ps: list[float],
                  cs: list[float], ds: list[float], value: float, abandonment: bool) -> Any:
    """refold(i, q): the graph's score in exact rationals with p_i set to q (i None: as given)."""
    from pcsc.score.graph import graph_fold

    fps, fcs, fds = [Fraction(p) for p in ps], [Fraction(c) for c in cs], [Fraction(d) for d in ds]

    def refold(i: int | None, q: Fraction) -> Fraction:
        qs = list(fps)
        if i is not None:
            qs[i] = q
        return graph_fold(shape, names, sources, targets, qs, fcs, fds, Fraction(value), abandonment).score

    return refold


@pytest.mark.parametrize("abandonment", [False, True])
def test_the_graph_float_check_gives_the_exact_evi(abandonment: bool) -> None:
    """On random series-parallel shapes, with discounts: the selector with the float check
    (`graph_flat`) gives every row of the selector that refolds every value exactly."""
    from pcsc.lang.ir.shape import Edge, Series
    from pcsc.score.graph import graph_fold
    from pcsc.score.voi import graph_flat, value_of_information_refolded

    rng = random.Random(31)
    straddles = 0
    for _ in range(150):
        names: list[str] = []
        shape = _random_shape(rng, names)
        if not isinstance(shape, Series):
            names.append(f"t{len(names)}")
            shape = Series((shape, Edge(names[-1])))
        n = len(names)
        # states: only the fold's entry/exit bookkeeping reads them; one per transition end
        sources, targets = [f"a_{x}" for x in names], [f"b_{x}" for x in names]
        ps = [rng.uniform(0.05, 0.95) for _ in range(n)]
        cs = [rng.uniform(0, 200) for _ in range(n)]
        ds = [rng.choice([1.0, rng.uniform(0.7, 1.0)]) for _ in range(n)]
        value = rng.uniform(0, 4000)
        g = graph_fold(shape, names, sources, targets, ps, cs, ds, value, abandonment)
        if rng.random() < 0.5:  # scale V so that the score sits near break-even
            unit = graph_fold(shape, names, sources, targets, ps, cs, ds, 1.0, False)
            zero = graph_fold(shape, names, sources, targets, ps, cs, ds, 0.0, False)
            if unit.score != zero.score:
                value = -zero.score / (unit.score - zero.score) * rng.choice([1.0, 1 + 1e-12, 1.05, 0.95])
                g = graph_fold(shape, names, sources, targets, ps, cs, ds, value, abandonment)
        est = [tuple(rng.random() for _ in range(rng.randint(0, 3))) for _ in range(n)]
        refold = _exact_refold(shape, names, sources, targets, ps, cs, ds, value, abandonment)
        args = (names, ps, est, 0.25, [None] * n, refold)
        fast = value_of_information_refolded(*args, graph_flat(g, names, ps, cs, ds, value))
        exact = value_of_information_refolded(*args)
        assert fast == exact
        straddles += sum(r.evi > 0 for r in exact.rows)
    assert straddles > 20


@pytest.mark.parametrize("abandonment", [False, True])
def test_a_graph_score_with_one_p_changed_is_the_whole_refold(abandonment: bool) -> None:
    """`GraphFold.score_with(e, q)` (the spine item holding e is affine in p_e, the spine
    before it refolded) equals, in exact rationals, folding the whole graph again with
    p_e = q: for every edge of random series-parallel shapes, with discounts."""
    from pcsc.lang.ir.shape import Edge, Series
    from pcsc.score.graph import graph_fold

    rng = random.Random(41)
    stopped = 0
    for _ in range(120):
        names: list[str] = []
        shape = _random_shape(rng, names)
        if not isinstance(shape, Series):
            names.append(f"t{len(names)}")
            shape = Series((shape, Edge(names[-1])))
        n = len(names)
        sources, targets = [f"a_{x}" for x in names], [f"b_{x}" for x in names]
        ps = [Fraction(rng.uniform(0.05, 0.95)) for _ in range(n)]
        cs = [Fraction(rng.uniform(0, 200)) for _ in range(n)]
        ds = [Fraction(rng.choice([1.0, rng.uniform(0.7, 1.0)])) for _ in range(n)]
        value = Fraction(rng.uniform(0, 4000))
        g = graph_fold(shape, names, sources, targets, ps, cs, ds, value, abandonment)
        for i, name in enumerate(names):
            for q in (Fraction(0), Fraction(1), Fraction(rng.random())):
                qs = list(ps)
                qs[i] = q
                whole = graph_fold(shape, names, sources, targets, qs, cs, ds, value, abandonment).score
                assert g.score_with(name, q) == whole
                stopped += abandonment and whole == 0
    assert stopped > 10 or not abandonment  # the option to stop was exercised
