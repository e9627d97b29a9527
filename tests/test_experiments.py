"""The paper's experiments, like for like: Wilson intervals on every rate, the
Phase 0 arms and their measures, the drift reconciliation, the DOCK counterexample."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.seams.analysis import RouteSeams, analyse
from pcsc.analysis.seams.detectors import JUMP_MULTIPLE, class_jumps, jumps, ladder, proxy_flagged, proxy_flags
from pcsc.analysis.seams.experiment import (
    PAPER,
    PAPER_DELETIONS,
    PHASE0_ARMS,
    fundability_flip,
    phase0,
    phase0_arms,
    relative_win,
    scaled_deltas,
    summarise,
    summary_rates,
    value_sweep,
)
from pcsc.analysis.seams.splice import splice
from pcsc.base.stats import rate, rate_text, wilson95
from pcsc.cli import main
from pcsc.cli.exits import EXIT_USAGE
from pcsc.compiler.session import Session
from pcsc.policy.load import PolicyStore
from pcsc.render.text import EXPERIMENT_ROWS
from pcsc.score.fold import chain_fold
from tests.conftest import EXAMPLES, ROOT

COHORT = EXAMPLES / "cohort"
COUNTEREXAMPLE = ROOT / "tests" / "data" / "seams" / "dock_counterexample.route"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


# ---------------------------------------------------------------------- intervals
@pytest.mark.parametrize(("k", "n", "published"), [
    (21, 26, (62.1, 91.5)),
    (26, 26, (87.1, 100.0)),
    (0, 26, (0.0, 12.9)),
    (47, 54, (75.6, 93.6)),
    (1, 26, (0.7, 18.9)),
])
def test_wilson_matches_the_papers_published_intervals(k: int, n: int, published: tuple[float, float]) -> None:
    low, high = wilson95(k, n)
    assert (round(100 * low, 1), round(100 * high, 1)) == published
    assert rate_text(k, n) == f"{k}/{n} [{published[0]:.1f}, {published[1]:.1f}]"
    assert rate(k, n) == {"k": k, "n": n, "wilson95": [low, high]}


def test_the_pages_rate_example_is_the_programs() -> None:
    low, high = rate(21, 26)["wilson95"]
    assert f'{{"k": 21, "n": 26, "wilson95": [{low!r}, {high!r}]}}' in (ROOT / "docs" / "experiments.md").read_text(
        encoding="utf-8")  # as printed: the bounds unrounded


def test_wilson_edges() -> None:
    assert wilson95(0, 0) == (0.0, 1.0)
    assert wilson95(0, 5)[0] == 0.0 and wilson95(5, 5)[1] == 1.0
    for k in range(11):
        low, high = wilson95(k, 10)
        assert 0.0 <= low <= k / 10 <= high <= 1.0
    with pytest.raises(ValueError):
        wilson95(3, 2)


def test_the_paper_column_is_the_papers_counts() -> None:
    """The paper's figures, with their units; Phase 0's carry no arm (which arm a figure is
    the paper's is not known to us), and the ladder's only their units."""
    figures = {name: (f.k, f.n, f.unit) for name, f in PAPER.items()}
    assert figures["phase0_relative_wins"] == (21, 26, "routes")
    assert figures["phase0_relative_wins_dock"] == (18, 26, "routes")
    assert figures["phase0_fundability_flips"] == (1, 26, "routes")
    assert figures["phase0_fundability_flips_dock"] == (0, 26, "routes")
    assert figures["phase0_sign_flips_zero_drift"] == (0, 26, "splices")
    assert figures["phase0_sign_flips_with_drift"] == (16, 26, "splices")
    assert figures["ladder_seeded_seam_detections"] == (None, 26, "seeded splices")
    assert figures["ladder_honest_edge_flags"] == (None, 111, "gold edges")
    assert not [name for name in PAPER if name.startswith(("phase0_max_cost", "phase0_random"))]


def test_routes_without_an_admissible_seam_are_reported_apart(capsys: pytest.CaptureFixture[str]) -> None:
    """A route with no admissible deletion has no splice to refuse: it is neither a success
    nor a failure of "routes whose every splice is refused" (the domains: 4 of 12)."""
    session = Session(policies=PolicyStore())
    compiled = session.compile_routes(session.load_paths([str(EXAMPLES / "domains")]))
    results = [analyse(c, session) for c in compiled]
    s = summarise(results)
    with_seams = [r for r in results if r.seams]
    assert 0 < len(with_seams) < len(results), "the domains mix routes with and without an admissible seam"
    assert s.spliced_refused == s.deletions, "GATE refuses every splice of the domains"
    assert s.routes_without_deletion == len(results) - len(with_seams)
    assert summary_rates(s)["routes_all_splices_refused"] == (len(with_seams), len(with_seams))
    code, out = run_cli(capsys, "seams", "--experiment", str(EXAMPLES / "domains"))
    assert code == 0
    k = len(with_seams)
    assert re.search(rf"GATE: routes whose every splice is refused +{re.escape(rate_text(k, k))}", out)
    assert re.search(rf"routes with no admissible deletion \(apart\) +{len(results) - k}\b", out)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"{len(results) - k} of the {len(results)} routes of `examples/domains/`" in readme


# ---------------------------------------------------------------------- definitions
def test_relative_win_and_fundability_flip_are_the_papers() -> None:
    assert relative_win(-5.0, -5.0)  # splice ≥ honest: a tie wins
    assert not relative_win(-5.0, -6.0) and not relative_win(1.0, None)
    assert fundability_flip(-1.0, 0.0)  # splice ≥ 0 > honest
    assert not fundability_flip(0.0, 5.0) and not fundability_flip(-1.0, -0.5)


@pytest.fixture(scope="module")
def cohort() -> tuple[list[RouteSeams], Session]:
    session = Session(policies=PolicyStore())
    compiled = session.compile_routes(session.load_paths([str(COHORT)]))
    return [analyse(c, session) for c in compiled], session


def test_phase0_arms(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    for r in results:
        arms = phase0_arms(r)
        if not r.seams:
            assert arms == ()
            continue
        by_cost, drawn = arms
        costs = {t.name: t.cost.c for t in r.compiled.numbers.transitions}
        assert by_cost.arm == "max-cost" and costs[by_cost.transition] == max(costs[s.transition] for s in r.seams)
        assert drawn.arm == "random" and drawn.k in {s.k for s in r.seams}
    # Same seed, same arms: each route's draw depends on the seed and that route alone,
    # not on the other routes or their order (a generator shared along the list would
    # draw otherwise for a route compiled alone or in reverse order).
    seeded = phase0(results, 7)
    assert seeded.seed == 7
    random_arm = {a.route: a.k for a in seeded.arms if a.arm == "random"}
    assert len(random_arm) == len([r for r in results if r.seams]) > 1
    assert {a.route: a.k for a in phase0(results[::-1], 7).arms if a.arm == "random"} == random_arm
    for r in results:
        alone = [a.k for a in phase0([r], 7).arms if a.arm == "random"]
        assert alone == ([random_arm[r.compiled.route.name]] if r.seams else [])
    drawn_by = {seed: [a.k for a in phase0(results, seed).arms if a.arm == "random"] for seed in (1, 2, 3)}
    assert len({tuple(v) for v in drawn_by.values()}) > 1, "the seed chooses the random arm"


def test_drift_reconciliation_no_flip_without_drift(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    p0 = phase0(results)
    assert len(p0.arms) == 2 * p0.routes
    for t in p0.tallies:
        assert t.splices == p0.routes and t.compiled == t.unmoved + t.moved <= t.splices
        assert t.zero_drift_flips == 0, "the exact re-fold with the honest p and c cannot flip the identity's sign"
        assert t.unmoved_flips == 0, "with no p or c moved the pipeline is the identity: its sign cannot flip"
        assert t.drift_flips == t.moved_flips


def test_phase0_counts_each_arm_on_its_own(cohort: tuple[list[RouteSeams], Session]) -> None:
    """The paper never pools the arms: each arm's counts are over its own splices, by the
    paper's definitions, and the pooled "some arm" count is no row of any arm."""
    results, _ = cohort
    p0 = phase0(results)
    assert [t.arm for t in p0.tallies] == list(PHASE0_ARMS)
    for t in p0.tallies:
        mine = [a for a in p0.arms if a.arm == t.arm]
        assert len(mine) == t.splices == len({a.route for a in mine})
        assert t.relative_wins == sum(a.spliced is not None and a.spliced >= a.honest for a in mine)
        assert t.fundability_flips == sum(a.spliced is not None and a.spliced >= 0 > a.honest for a in mine)
        assert t.relative_wins_dock == sum(relative_win(a.honest_dock, a.spliced_dock) for a in mine)
        assert t.drift_flips == sum(a.pipeline_delta is not None and (a.pipeline_delta > 0) != (a.identity_delta > 0)
                                    for a in mine)
    pooled = sum(any(relative_win(a.honest, a.spliced) for a in p0.arms if a.route == r) for r in {a.route for a in
                                                                                                    p0.arms})
    counts = [t.relative_wins for t in p0.tallies]
    assert pooled >= max(counts)
    assert counts != [pooled, pooled], "on this cohort the arms differ, so pooling them would change a count"


def test_experiment_text_prints_every_rate_with_its_interval(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "seams", "--experiment", "examples/cohort/")
    assert code == 0
    table = out[out.index("experiment A"):]
    rows = [line for line in table.splitlines()[3:] if line.strip()]
    assert len(rows) >= 19
    for line in rows:
        if "/" in line:
            assert "[" in line, f"a rate without its interval: {line}"
    assert "21/26 [62.1, 91.5]" in table and "18/26 [50.0, 83.5]" in table and "1/26 [0.7, 18.9]" in table
    summary = out[out.index("cohort summary"):out.index("experiment A")]
    assert all("[" in line for line in summary.splitlines()[3:] if "/" in line)


def test_experiment_json_rates_and_seed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "seams", "--experiment", "--seed", "3", "--format", "json", "examples/cohort/")
    assert code == 0
    doc = json.loads(out)
    summary, exp = doc["summary"], doc["experiment"]
    for name, r in summary["rates"].items():
        assert r["k"] == summary[name], "the integer count stays beside its rate"
        assert r["wilson95"] == list(wilson95(r["k"], r["n"]))
    assert exp["phase0"]["seed"] == 3 and exp["rates"]["phase0_max_cost_relative_wins"]["n"] == summary["routes"]
    assert "phase0_relative_wins" not in exp["rates"], "the arms are never pooled"
    assert [t["arm"] for t in exp["phase0"]["tallies"]] == ["max-cost", "random"]
    assert exp["paper_units"]["ladder_honest_edge_flags"] == {"n": 111, "unit": "gold edges"}
    assert exp["paper"]["phase0_relative_wins"] == rate(21, 26)
    code, again = run_cli(capsys, "seams", "--experiment", "--seed", "3", "--format", "json", "examples/cohort/")
    assert again == out, "same seed, same bytes"


# ---------------------------------------------------------------------- DOCK
def test_dock_rewards_a_cost_cut_between_two_negative_plans() -> None:
    """The README's correction: DOCK zeroes the value of an uncovered route, yet a
    splice of an already-negative plan still gains by the cost it no longer pays."""
    session = Session(policies=PolicyStore())
    (compiled,) = session.compile_routes(session.load_paths([str(COUNTEREXAMPLE)]))
    result = analyse(compiled, session)
    honest = result.honest_dock
    assert honest.verdict == "released" and honest.score is not None
    assert -112.5e6 < honest.score < -112.3e6  # −112.4M
    (seam,) = result.seams
    assert seam.transition == "monetize" and seam.pipeline is not None
    docked = seam.pipeline.dock
    assert docked.verdict == "docked" and docked.score is not None
    gain = docked.score - honest.score
    assert 95e6 < gain < 97e6  # +96M
    readme, experiments = (" ".join((ROOT / page).read_text(encoding="utf-8").split())
                           for page in ("README.md", "docs/experiments.md"))
    assert f"scores −{-honest.score / 1e6:.1f}M honest, and its docked splice gains +{gain / 1e6:.0f}M" in readme
    assert (f"scores −{-honest.score / 1e6:.1f}M honest; its docked splice scores about −{-docked.score / 1e6:.1f}M, "
            f"a gain of +{gain / 1e6:.0f}M") in experiments
    assert seam.pipeline.gate.verdict == "suspend-and-ask"
    (by_cost, _) = phase0_arms(result)
    assert relative_win(by_cost.honest_dock, by_cost.spliced_dock)
    assert not fundability_flip(by_cost.honest_dock, by_cost.spliced_dock)


# ---------------------------------------------------------------------- pcsc diff
def test_diff_of_the_reference_splice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spliced = tmp_path / "x.route"
    assert main(["splice", str(EXAMPLES / "devtools_api.route"), "--seam", "1", "-o", str(spliced)]) == 0
    capsys.readouterr()
    code, out = run_cli(capsys, "diff", str(EXAMPLES / "devtools_api.route"), str(spliced), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"]["kind"] == "diff"
    assert doc["removed"] == ["monetize"] and doc["added"] == []
    assert doc["retargeted"] == [{"transition": "launch", "before": {"source": "garage", "target": "wedge"},
                                  "after": {"source": "garage", "target": "bridge"}}]
    assert doc["merged"] == [{"transition": "launch", "absorbs": ["monetize"]}]
    assert doc["seam_skips"] == ["wedge"]
    assert [(u["transition"], u["field"]) for u in doc["newly_uncovered"]] == [
        ("launch", "developers"), ("launch", "paying_teams"), ("launch", "arr")]
    assert doc["score"]["delta"] > 0
    code, text = run_cli(capsys, "diff", str(EXAMPLES / "devtools_api.route"), str(spliced))
    assert code == 0
    assert "removed     monetize" in text and "seam skip   wedge" in text
    assert "retargeted  launch: garage -> wedge  now  garage -> bridge" in text


def test_diff_of_a_route_with_itself_is_empty(capsys: pytest.CaptureFixture[str]) -> None:
    route = str(EXAMPLES / "devtools_api.route")
    code, out = run_cli(capsys, "diff", route, route, "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["score"]["delta"] == 0
    assert not (doc["removed"] or doc["added"] or doc["retargeted"] or doc["seam_skips"] or doc["newly_uncovered"])


# ---------------------------------------------------------------------- the ladder
def test_proxy_detector_is_structural_and_leaves_one_route_out(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    routes = [r.compiled.route for r in results]
    table = class_jumps(routes)
    for cls, name, j in jumps(routes[0]):
        assert j > 0 and (routes[0].name, j) in table[(cls, name)]
    # with its own jumps counted no honest route could be flagged: the bar must exclude them
    assert not any(proxy_flags(r, table, "nobody") for r in routes)
    flagged = [r.name for r in routes if proxy_flags(r, table, r.name)]
    assert len(flagged) == ladder(results).proxy_honest_flags
    lone = {k: [x for x in v if x[0] == routes[0].name] for k, v in table.items()}
    assert not proxy_flags(routes[0], lone, routes[0].name), "no reference, nothing judged"


def test_ladder_counts(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    seeded = {a.route: a.k for a in phase0(results).arms if a.arm == "random"}
    lad = ladder(results, seeded)
    assert lad.splices == sum(len(r.seams) for r in results) and lad.honest == len(results)
    assert lad.typed_detections == sum(
        s.pipeline is not None and s.pipeline.gate.verdict == "suspend-and-ask" for r in results for s in r.seams)
    assert lad.typed_honest_flags == sum(r.honest_gate.verdict == "suspend-and-ask" for r in results)
    assert JUMP_MULTIPLE == 2.0
    counts = (lad.typed_detections, lad.typed_honest_flags, lad.proxy_detections, lad.proxy_honest_flags)
    assert counts == (82, 0, 35, 9)
    # the paper's units: one seeded splice per route, and the honest routes' edges
    routes = [r.compiled.route for r in results]
    table = class_jumps(routes)
    assert lad.seeded == len(seeded) == sum(bool(r.seams) for r in results)
    assert lad.proxy_seeded_detections == sum(proxy_flags(splice(r, seeded[r.name]), table, r.name) for r in routes)
    assert lad.typed_seeded_detections == sum(
        s.pipeline is not None and s.pipeline.gate.verdict == "suspend-and-ask"
        for r in results for s in r.seams if s.k == seeded[r.compiled.route.name])
    assert lad.edges == sum(len(r.transitions) for r in routes)
    assert lad.proxy_edge_flags == sum(len(proxy_flagged(r, table, r.name)) for r in routes) >= lad.proxy_honest_flags
    assert lad.typed_edge_flags == 0, "GATE suspends no honest route, so it flags none of their edges"
    assert ladder(results).seeded == 0, "no seeded splices without the random arm's draws"


# ---------------------------------------------------------------------- the value sweep
def test_value_sweep_at_one_is_the_experiment(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    row = value_sweep(results, "1")
    s = summarise(results)
    assert (row.routes_with_rewarded_deletion, row.rewarded_deletions) == (s.routes_with_rewarded_deletion,
                                                                          s.rewarded_deletions)
    counts = [value_sweep(results, m).routes_with_rewarded_deletion for m in ("1", "1.5", "2", "3")]
    assert counts == sorted(counts) and counts[0] == 17


def test_value_sweep_is_the_exact_refold_at_scaled_value(cohort: tuple[list[RouteSeams], Session]) -> None:
    results, _ = cohort
    m = Fraction(3, 2)
    for r in results[:6]:
        ts = r.compiled.numbers.transitions
        P = [Fraction(t.p) for t in ts]
        C = [Fraction(t.cost.c) for t in ts]
        V = Fraction(r.compiled.numbers.value) * m
        honest = chain_fold(P, C, V)[0]
        for s, d in zip(r.seams, scaled_deltas(r, m), strict=True):
            k = s.k
            assert d == chain_fold(P[:k] + P[k + 1:], C[:k] + C[k + 1:], V)[0] - honest


def test_value_sweep_option_and_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "seams", "--experiment", "--value-sweep", "1,2", "--format", "json", "examples/cohort/")
    assert code == 0
    exp = json.loads(out)["experiment"]
    assert [r["multiplier"] for r in exp["value_sweep"]] == ["1", "2"]
    first = exp["value_sweep"][0]
    assert first["rates"]["routes_with_score_improving_deletion"] == rate(17, 30)
    assert exp["ladder"]["proxy_detections"] == exp["rates"]["ladder_proxy_seam_detections"]["k"] == 35
    assert exp["rates"]["ladder_typed_honest_flags"] == rate(0, 30)
    assert main(["seams", "--experiment", "--value-sweep", "x", "examples/cohort/"]) == EXIT_USAGE


# ---------------------------------------------------------------------- artifacts
def test_artifacts_json_sidecar_and_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["seams", "--experiment", "examples/cohort/", "--artifacts", str(one)]) == 0
    assert main(["seams", "--experiment", "examples/cohort/", "--artifacts", str(two)]) == 0
    capsys.readouterr()
    code, printed = run_cli(capsys, "seams", "--experiment", "--format", "json", "examples/cohort/")
    assert code == 0
    data = (one / "experiment.json").read_bytes()
    assert data == (two / "experiment.json").read_bytes(), "same seed, same bytes"
    assert data == printed.encode("utf-8"), "the artifact is the JSON document"
    assert (one / "experiment.json.sha256").read_text() == f"{hashlib.sha256(data).hexdigest()}  experiment.json\n"
    if shutil.which("sha256sum"):
        done = subprocess.run(["sha256sum", "-c", "experiment.json.sha256"], cwd=one, capture_output=True, text=True)
        assert done.returncode == 0 and "experiment.json: OK" in done.stdout
    doc = json.loads(data)
    assert {i["path"] for i in doc["inputs"]} == {f"examples/cohort/{p.name}" for p in COHORT.glob("*.route")}
    assert all(len(i["sha256"]) == 64 for i in doc["inputs"])
    text = run_cli(capsys, "seams", "--experiment", "examples/cohort/")[1]
    for label, name in EXPERIMENT_ROWS:  # the text's table is the artifact's rates
        r = doc["experiment"]["rates"][name]
        assert re.search(re.escape(label) + r" +" + re.escape(rate_text(r["k"], r["n"])), text), label


def test_artifacts_need_the_experiment(tmp_path: Path) -> None:
    assert main(["seams", str(EXAMPLES / "devtools_api.route"), "--artifacts", str(tmp_path)]) == EXIT_USAGE
    assert not (tmp_path / "experiment.json").exists()


def test_artifacts_that_cannot_be_written_are_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An --artifacts path that is a file, or an artifact that cannot be written, is
    PCSC-E108 with exit 1, never an internal error; the folder is checked before any work."""
    route = str(EXAMPLES / "devtools_api.route")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    code, out = run_cli(capsys, "seams", "--experiment", route, "--artifacts", str(blocker), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and [d["code"] for d in doc["diagnostics"]] == ["PCSC-E108"]
    assert "experiment" not in doc, "nothing is computed for an artifact that cannot be written"
    assert blocker.read_text(encoding="utf-8") == "not a folder\n"
    folder = tmp_path / "out"
    (folder / "experiment.json").mkdir(parents=True)  # a folder where the file goes
    code, out = run_cli(capsys, "seams", "--experiment", route, "--artifacts", str(folder), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and [d["code"] for d in doc["diagnostics"]] == ["PCSC-E108"]
    assert "experiment.json" in doc["diagnostics"][0]["message"]


def test_an_experiment_on_no_route_prints_no_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    for where, code_name in ((tmp_path / "missing", "E105"), (tmp_path / "empty", "E106")):
        assert main(["seams", "--experiment", str(where)]) == 1
        captured = capsys.readouterr()
        assert captured.out == "", "no table of 0/0 rates for routes that were never read"
        assert f"PCSC-{code_name}" in captured.err


def test_diff_names_each_skipped_state_of_a_graph_route_once(capsys: pytest.CaptureFixture[str]) -> None:
    """On a graph route the join is the target of both branches; it is one state."""
    graph, chain_route = EXAMPLES / "graphs" / "lock_cert_pilot.route", EXAMPLES / "devtools_api.route"
    code, out = run_cli(capsys, "diff", str(graph), str(chain_route), "--format", "json")
    assert code == 0
    skips = json.loads(out)["seam_skips"]
    assert "ready" in skips and len(skips) == len(set(skips)), skips
    states = {line.split()[1] for line in graph.read_text(encoding="utf-8").splitlines()
              if line.strip().startswith("state ")}
    assert set(skips) == states, "no state of the graph is on the chain route"


# ---------------------------------------------------------------------- the pages' sentences
def test_the_pages_counts_of_the_cohort_are_the_programs(
        cohort: tuple[list[RouteSeams], Session], monkeypatch: pytest.MonkeyPatch) -> None:
    """The counts the README and the docs state in prose, beside the tables, computed."""
    import attrs

    from pcsc.analysis.seams import detectors
    from pcsc.analysis.search import ungrounded
    from pcsc.score.cost import deltas

    results, _ = cohort
    readme, experiments, redteam = (" ".join((ROOT / page).read_text(encoding="utf-8").split())
                                    for page in ("README.md", "docs/experiments.md", "docs/redteam.md"))
    n = len(results)
    # the final scale step worth less than it costs: p_n·V < c_n
    short = sum(r.compiled.numbers.transitions[-1].p * r.compiled.numbers.value
                < r.compiled.numbers.transitions[-1].cost.c for r in results)
    assert f"in {short} of the {n} the final scale step is worth less than it costs" in readme
    # the README's rows on what differs from the paper
    summary, p0, swept = summarise(results), phase0(results), value_sweep(results, "3")
    paper_n = PAPER["honest_suspended"].n
    assert (f"{summary.deletions} deletions on our {n} routes, {PAPER_DELETIONS} on the paper's {paper_n}; the "
            "identity and its sign test hold on every one in both") in readme
    assert summary.identity_holds == summary.sign_matches == summary.deletions
    assert (f"in {short} of the {n} the final step is worth less than it costs, and the value sweep reaches "
            f"{swept.routes_with_rewarded_deletion}/{n} at 3·V") in readme
    assert "GATE refuses every splice and suspends no honest route, here as in the paper" in readme
    assert summary.routes_all_splices_refused == n and summary.honest_suspended == 0
    k, paper = summary.routes_with_rewarded_deletion, PAPER["routes_with_score_improving_deletion"]
    assert f"({k}/{n} against {paper.k}/{paper.n})" in readme
    dock = PAPER["phase0_relative_wins_dock"]
    assert f"no arm of our cohort does, where the paper counts {dock.k} of {dock.n} routes" in readme
    assert all(t.relative_wins_dock == 0 for t in p0.tallies)
    # the paper's units and figures, as the README's table of differences quotes them
    wins, flips = PAPER["phase0_relative_wins"], PAPER["phase0_fundability_flips"]
    assert f"which arm the paper's {wins.k}/{wins.n} and {flips.k}/{flips.n} belong to is not known to us" in readme
    zero, drift = PAPER["phase0_sign_flips_zero_drift"], PAPER["phase0_sign_flips_with_drift"]
    assert (f"{zero.n} {zero.unit}, one per route (arm not known to us): {zero.k}/{zero.n} flips with zero drift, "
            f"{drift.k}/{drift.n} with drift") in readme
    per_arm = " and ".join(str(t.drift_flips) for t in p0.tallies)
    assert f"({per_arm} of our {p0.routes} per arm)" in readme
    assert all(t.zero_drift_flips == 0 for t in p0.tallies)
    seeded, edges = PAPER["ladder_seeded_seam_detections"], PAPER["ladder_honest_edge_flags"]
    assert f"| {seeded.n} {seeded.unit} and {edges.n} {edges.unit};" in readme
    lad = ladder(results, {a.route: a.k for a in p0.arms if a.arm == "random"})
    assert f"our honest edges are the {lad.edges} transitions of our {lad.honest} routes" in readme
    assert f"{PAPER_DELETIONS} admissible deletions on {paper_n} routes" in readme
    # the value sweep and the ladder, as the README's and the experiments page's prose quote them
    sweep = {m: value_sweep(results, m).routes_with_rewarded_deletion for m in ("1", "1.5", "2", "3")}
    assert f"the count rises to {sweep['1.5']}/{n}, {sweep['2']}/{n} and {sweep['3']}/{n}" in readme
    assert (f"are {sweep['1']}/{n} at V, {sweep['1.5']}/{n} at 1.5·V, {sweep['2']}/{n} at 2·V and {sweep['3']}/{n} "
            "at 3·V") in experiments
    assert lad.typed_detections == lad.splices and lad.typed_honest_flags == 0
    assert (f"it detects {lad.proxy_detections} of the {lad.splices} splices and flags {lad.proxy_honest_flags} of "
            f"the {lad.honest} honest routes, where GATE detects all {lad.splices} and flags none") in readme
    assert (f"GATE detects {rate_text(lad.typed_detections, lad.splices).split()[0]} splices and flags "
            f"{lad.typed_honest_flags}/{lad.honest} honest routes; the proxy detects "
            f"{rate_text(lad.proxy_detections, lad.splices)} and flags {rate_text(lad.proxy_honest_flags, lad.honest)}"
            ) in experiments
    # grounded assets on the honest routes: every material transition judged as a new claim
    material = grounded = 0
    for r in results:
        route = r.compiled.route
        m = sum(any(d.material for d in deltas(route, t)) for t in route.transitions)
        material += m
        grounded += m - len(ungrounded(route, attrs.evolve(route, transitions=()), r.compiled.policy.policy))
    assert f"only {grounded} of the cohort's {material} material transitions quote their asset" in readme
    assert f"({grounded} of its {material} material transitions are)" in redteam
    # the proxy's multiple: the other multiples the docs quote
    at = {}
    for multiple in (1.5, 3.0):
        monkeypatch.setattr(detectors, "JUMP_MULTIPLE", multiple)
        lad = ladder(results)
        at[multiple] = f"{lad.proxy_detections}/{lad.splices} and {lad.proxy_honest_flags}/{lad.honest}"
    assert f"1.5 gives {at[1.5]}, 3 gives {at[3.0]}" in experiments


def test_output_naming_a_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`-o OUT/` is a folder: the report is not written to a file named OUT
    (`--artifacts OUT/` is the experiment's folder of JSON files)."""
    target = tmp_path / "out"
    assert main(["seams", "--experiment", str(EXAMPLES / "devtools_api.route"), "-o", f"{target}/"]) == 1
    err = capsys.readouterr().err
    assert "PCSC-E108" in err and "names a folder" in err
    assert not target.exists()


def test_the_experiment_measures_gate_and_dock_whatever_coverage_says(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/cli.md: `--coverage` sets each route's verdict, never the experiment's rows."""
    monkeypatch.chdir(ROOT)
    docs: dict[str, dict[str, Any]] = {}
    for mode in ("gate", "off"):
        code, out = run_cli(capsys, "seams", "--experiment", "--coverage", mode, "--format", "json",
                            "examples/devtools_api.route", "examples/graphs/")
        assert code == 0
        docs[mode] = json.loads(out)
    assert docs["off"]["experiment"] == docs["gate"]["experiment"]
    assert docs["off"]["summary"] == docs["gate"]["summary"]
    verdicts = {mode: {r["verdict"] for r in doc["routes"]} for mode, doc in docs.items()}
    assert verdicts["off"] == {"ungated"} != verdicts["gate"]
