"""Coverage (docs/coverage.md): the obligation discharger and the GATE / DOCK / off verdicts.

The spec route is released with every material delta covered; its seam-1 splice is
refused (and docked, and ungated) with the exact numbers computed here by hand; the
built-ins `measured`, `floor`, `evidence` and `grounded` are checked one at a time on
small routes against a probe library whose obligations each hold one `require` line;
materiality edge cases; and coverage does not depend on the order of declarations.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.analysis.seams.splice import splice, splice_text
from pcsc.compiler.session import Compiled, Session
from pcsc.coverage import Coverage, DeltaCoverage
from pcsc.policy.load import PolicyStore
from pcsc.render.packet import compile_packet
from tests.conftest import EXAMPLES, ROOT, SPEC_ROUTE, pin_libraries, run_cli

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

STORE = PolicyStore()  # one store for the module: each policy is read once
COHORT = EXAMPLES / "cohort"


# ---------------------------------------------------------------------- helpers
def compile_text(text: str, route_dir: Path, shown: str = "probe.route") -> Compiled:
    """Compile one route from text; any error diagnostic fails the test."""
    session = Session(policies=store_for(route_dir))
    routes = session.routes_from_text(text, shown, route_dir)
    compiled = [session.compile_route(r) for r in routes]
    errors = [f"{d.code} {d.span.file}:{d.span.line}: {d.message}" for d in session.diags.items
              if d.severity == "error"]
    assert not errors, "\n".join(errors) + "\n\n" + text
    assert len(compiled) == 1 and compiled[0] is not None
    return compiled[0]


def store_for(route_dir: Path) -> PolicyStore:
    """The policies for routes in ``route_dir``: those of its `policies/` folder (the
    probe's policy, which pins the probe library), then the shipped ones."""
    if route_dir not in _STORES:
        _STORES[route_dir] = PolicyStore([route_dir / "policies"]) if (route_dir / "policies").is_dir() else STORE
    return _STORES[route_dir]


_STORES: dict[Path, PolicyStore] = {}


def row(c: Compiled, transition: str, field: str) -> DeltaCoverage:
    assert c.coverage is not None
    (found,) = [d for d in c.coverage.for_transition(transition) if d.delta.field == field]
    return found


def coverage_set(cov: Coverage) -> set[tuple[str, str, bool | None, str | None]]:
    return {(d.transition, d.delta.field, d.covered, d.by) for _, ds in cov.transitions for d in ds}


def spec_hand() -> dict[str, float]:
    """The spliced spec route (seam 1: `monetize` deleted, `launch` now garage -> bridge),
    by hand from docs/formulas.md and the spec's inputs."""

    def sat(ws: list[float]) -> float:
        s = sum(w * 0.5**i for i, w in enumerate(sorted(ws, reverse=True)))
        return s / (1 + s)

    p_launch = 0.45 * (1 + 0.5 * sat([0.8 * 0.8]))  # hn_launch: weight 0.8, tier 2 (0.8)
    p_expand = 0.10 * (1 + 0.5 * sat([0.5 * 0.8]))  # carrier_talks: weight 0.5, tier 2
    # launch now claims paying_teams 0 -> 200 and arr 0 -> 1.2M: delta-indexed floors
    floor_paying = 1e5 + (200 - 100) / (1000 - 100) * (6e5 - 1e5)
    floor_arr = 4e5 + (1.2e6 - 1e6) / (1e7 - 1e6) * (3e6 - 4e5)
    c_launch = max(2 * 45_000 + 6 * 1_500, 50_000, floor_paying + floor_arr)
    c_expand = 60_000_000.0  # the budget beats both floors, as on the honest route
    V = 10e9 * 0.10 * 0.6
    return {
        "c_launch": c_launch,
        "docked": -c_launch + p_launch * (-c_expand + p_expand * 0.0),
        "ungated": -c_launch + p_launch * (-c_expand + p_expand * V),
    }


@pytest.fixture
def spliced_file(tmp_path: Path) -> Path:
    """The spec route's seam-1 splice, written by `pcsc splice` (a real process)."""
    route = tmp_path / "devtools_api.route"
    shutil.copy(SPEC_ROUTE, route)
    out = tmp_path / "spliced.route"
    done = subprocess.run(
        [sys.executable, "-m", "pcsc", "splice", str(route), "--seam", "1", "-o", str(out)],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # -o writes the file, not standard output
    return out


# ---------------------------------------------------------------------- the spec route
SPEC_BY = {
    ("launch", "developers"): "adoption",
    ("monetize", "developers"): "adoption",
    ("monetize", "paying_teams"): "monetization",
    ("monetize", "arr"): "monetization",
    ("expand", "developers"): "adoption",
    ("expand", "paying_teams"): "monetization",
    ("expand", "arr"): "monetization",
}


def test_spec_route_is_released_with_every_material_delta_covered(tmp_path: Path) -> None:
    route = tmp_path / "devtools_api.route"
    shutil.copy(SPEC_ROUTE, route)
    c = compile_text(route.read_text(encoding="utf-8"), tmp_path)
    assert c.decision.verdict == "released" and c.decision.mode == "gate" and c.decision.mode_source == "policy"
    assert c.decision.score == c.numbers.score
    assert c.coverage is not None and c.coverage.complete
    material = {
        (d.transition, d.delta.field): d.by for _, ds in c.coverage.transitions for d in ds if d.delta.material
    }
    assert material == SPEC_BY
    # launch leaves paying_teams and arr at 0: not material, so not asked about
    assert row(c, "launch", "arr").covered is None and row(c, "launch", "paying_teams").covered is None


def test_spec_route_packet_and_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    route = tmp_path / "devtools_api.route"
    shutil.copy(SPEC_ROUTE, route)
    code, out, _ = run_cli(capsys, "compile", "--format", "json", str(route))
    assert code == 0
    (packet,) = json.loads(out)["routes"]
    assert packet["verdict"] == "released" and packet["score"] == packet["ungated_score"]
    assert packet["coverage"] == {"mode": "gate", "mode_source": "policy", "policy_mode": "gate"}
    assert packet["uncovered"] == []
    got = {
        (t["name"], d["field"]): d["by"] for t in packet["transitions"] for d in t["deltas"] if d["material"]
    }
    assert got == SPEC_BY
    assert all(d["covered"] is True for t in packet["transitions"] for d in t["deltas"] if d["material"])
    assert all(d["covered"] is None for t in packet["transitions"] for d in t["deltas"] if not d["material"])
    code, out, _ = run_cli(capsys, "gate", str(route))
    assert code == 0 and "released" in out and "uncovered" not in out


def check_spliced_uncovered(uncovered: list[dict[str, Any]]) -> None:
    assert [(u["transition"], u["field"]) for u in uncovered] == [
        ("launch", "developers"), ("launch", "paying_teams"), ("launch", "arr"),
    ]
    by_field = {u["field"]: u for u in uncovered}
    (adoption,) = by_field["developers"]["tried"]
    assert adoption["obligation"] == "adoption" and adoption["claimed"] is True
    (failed,) = adoption["failed"]  # mechanism, kill and the tier-2 evidence still hold
    assert failed["require"] == "require measured(delta)"
    assert failed["line"] == 12 and failed["file"].replace("\\", "/").endswith("obligations/venture.obl")
    for field in ("paying_teams", "arr"):
        (monetization,) = by_field[field]["tried"]
        assert monetization["obligation"] == "monetization" and monetization["claimed"] is False
        assert [(f["require"], f["line"]) for f in monetization["failed"]] == [
            ("require measured(delta)", 20), ("require budget >= floor(delta)", 21),
        ]


def test_spliced_spec_route_is_suspended(spliced_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = spliced_file.read_text(encoding="utf-8")
    assert "transition monetize" not in text and "state wedge" not in text
    assert re.search(r"transition launch: garage -> bridge", text)

    code, out, _ = run_cli(capsys, "compile", "--format", "json", str(spliced_file))
    assert code == 3
    (packet,) = json.loads(out)["routes"]
    assert packet["verdict"] == "suspend-and-ask" and packet["score"] is None
    assert packet["ungated_score"] == pytest.approx(spec_hand()["ungated"], rel=1e-12)
    check_spliced_uncovered(packet["uncovered"])
    launch = packet["transitions"][0]
    assert {d["field"]: d["covered"] for d in launch["deltas"]} == {
        "developers": False, "paying_teams": False, "arr": False,
    }

    code, out, _ = run_cli(capsys, "gate", "--format", "json", str(spliced_file))
    assert code == 3
    (gate,) = json.loads(out)["routes"]
    assert gate["verdict"] == "suspend-and-ask"
    check_spliced_uncovered(gate["uncovered"])

    code, out, _ = run_cli(capsys, "gate", str(spliced_file))
    assert code == 3
    assert "suspend-and-ask" in out
    assert re.search(r"obligations[/\\]venture\.obl:12: require measured\(delta\)", out)


def test_spliced_spec_route_in_process(tmp_path: Path) -> None:
    honest = compile_text(SPEC_ROUTE.read_text(encoding="utf-8"), EXAMPLES, str(SPEC_ROUTE))
    session = Session(policies=STORE)
    c = session.compile_route(splice(honest.route, 1))
    assert c is not None and not session.diags.has_errors
    assert c.decision.verdict == "suspend-and-ask" and c.decision.score is None
    assert c.coverage is not None
    assert [(u.transition, u.delta.field) for u in c.coverage.uncovered] == [
        ("launch", "developers"), ("launch", "paying_teams"), ("launch", "arr"),
    ]
    (attempt,) = c.coverage.uncovered[0].tried
    assert attempt.obligation == "adoption" and attempt.claimed
    assert [(f.require, f.span.line) for f in attempt.failed] == [("require measured(delta)", 12)]
    # the text `pcsc splice` prints compiles to the same verdict and numbers
    again = compile_text(splice_text(honest.route, 1), EXAMPLES, "spliced.route")
    assert again.decision.verdict == "suspend-and-ask"
    assert again.numbers.score == c.numbers.score
    assert coverage_set(again.coverage) == coverage_set(c.coverage)  # type: ignore[arg-type]


def packet_under(spliced_file: Path, mode: str) -> dict[str, Any]:
    """The compile packet of the spliced route with the coverage mode set as
    `--coverage MODE` sets it: on the Session, as a command-line override."""
    session = Session(policies=STORE, coverage_mode=mode)  # type: ignore[arg-type]
    (route,) = session.load_routes(spliced_file)
    compiled = session.compile_route(route)
    assert compiled is not None and not session.diags.has_errors
    (packet,) = compile_packet([compiled], session.diags.sorted())["routes"]
    return packet  # type: ignore[no-any-return]


def test_dock_mode_releases_the_fold_with_no_value(spliced_file: Path) -> None:
    hand = spec_hand()
    packet = packet_under(spliced_file, "dock")
    assert packet["verdict"] == "docked"
    assert packet["coverage"] == {"mode": "dock", "mode_source": "command line", "policy_mode": "gate"}
    assert packet["score"] == pytest.approx(hand["docked"], rel=1e-12)
    assert packet["score"] < 0 < packet["ungated_score"]
    assert packet["ungated_score"] == pytest.approx(hand["ungated"], rel=1e-12)
    assert packet["transitions"][0]["c"] == pytest.approx(hand["c_launch"], rel=1e-12)
    assert packet["transitions"][0]["cost_bound_by"] == "floor_delta"
    assert [(u["transition"], u["field"]) for u in packet["uncovered"]] == [
        ("launch", "developers"), ("launch", "paying_teams"), ("launch", "arr"),
    ]


def test_coverage_off_is_ungated(spliced_file: Path) -> None:
    packet = packet_under(spliced_file, "off")
    assert packet["verdict"] == "ungated"
    assert packet["coverage"] == {"mode": "off", "mode_source": "command line", "policy_mode": "gate"}
    assert packet["score"] == packet["ungated_score"]
    assert packet["score"] == pytest.approx(spec_hand()["ungated"], rel=1e-12)
    assert packet["uncovered"] == []  # nothing is checked
    assert all(d["covered"] is None for t in packet["transitions"] for d in t["deltas"])


def test_gate_mode_from_the_command_line_on_a_covered_route() -> None:
    session = Session(policies=STORE, coverage_mode="dock")
    (route,) = session.load_routes(SPEC_ROUTE)
    c = session.compile_route(route)
    assert c is not None
    assert c.decision.verdict == "released" and c.decision.score == c.numbers.score
    assert (c.decision.mode, c.decision.mode_source) == ("dock", "command line")


def test_cli_coverage_dock(spliced_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compile", "--coverage", "dock", "--format", "json", str(spliced_file))
    (packet,) = json.loads(out)["routes"]
    assert packet["coverage"] == {"mode": "dock", "mode_source": "command line", "policy_mode": "gate"}
    assert packet["verdict"] == "docked" and code == 0  # a docked score is released
    assert packet["score"] == pytest.approx(spec_hand()["docked"], rel=1e-12)
    code, out, _ = run_cli(capsys, "gate", "--coverage", "dock", str(spliced_file))
    assert code == 0 and "docked  (coverage dock, from the command line: lowered from the policy's gate)" in out


def test_cli_coverage_off(spliced_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compile", "--coverage", "off", "--format", "json", str(spliced_file))
    (packet,) = json.loads(out)["routes"]
    assert packet["coverage"] == {"mode": "off", "mode_source": "command line", "policy_mode": "gate"}
    assert packet["verdict"] == "ungated" and code == 0
    assert packet["score"] == pytest.approx(spec_hand()["ungated"], rel=1e-12)


# ---------------------------------------------------------------------- small routes
PROBE_OBL = """\
library probe version "1.0.0"

field developers    count   material 10%
field paying_teams  count   material 1
field arr           usd     material 10k usd
field rate          number  material 7%
field soc2          bool

# one `require` line each, so a verdict is that built-in's verdict
obligation m covers developers, paying_teams, arr, rate, soc2 {
    require measured(delta)
}
obligation f covers paying_teams, arr {
    require budget >= floor(delta)
}
obligation f_arr covers arr {
    require budget >= floor(delta)
}
obligation f_zero covers developers {
    require floor(delta) == 0
}
obligation ev covers developers {
    require evidence(tier >= 2) >= 1
}
obligation g covers soc2 {
    require grounded(asset)
}
obligation rise covers arr {
    require delta.arr >= 100k usd
}
"""


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("probe")
    (d / "probe.obl").write_text(PROBE_OBL, encoding="utf-8")
    pin_libraries(d / "policies", [d / "probe.obl"])  # probe@1.0.0: a route uses only what its policy pins
    return d


def evidence(name: str = "e", *, tier: int = 2, supports: str | None = "t", contradicts: str | None = None,
             captured: str = "2012-05-01", excerpt: str = "a note", unverified: bool = False) -> str:
    lines = [f"    evidence {name} {{", f"        captured {captured}", f"        tier {tier}", "        weight 0.5",
             f'        excerpt "{excerpt}"']
    if supports:
        lines.append(f"        supports {supports}")
    if contradicts:
        lines.append(f"        contradicts {contradicts}")
    if unverified:
        lines.append("        unverified")
    return "\n".join([*lines, "    }"])


DEFAULT_EVIDENCE = (evidence("base", tier=1, excerpt="base"),)


def one_step(source: str, target: str, *, threshold: str | None = None, discharges: str = "m",
             budget: str = "1 * 1k usd", asset: str | None = None, uses: str = "probe",
             evidence: tuple[str, ...] = DEFAULT_EVIDENCE, policy: str = "probe@1.0.0") -> str:
    """A route of one transition `t: a -> b` (its vision state is b)."""
    body = [
        "route probe {",
        "    as_of 2012-06-01",
        f'    policy "{policy}"',
        f"    uses {uses}",
        f"    state a {{ {source} }}",
        f"    state b {{ {target} }}",
        "    vision b {",
        "        tam 1B usd",
        "        capture 10%",
        "        defensibility 0.5",
        "    }",
        "    transition t: a -> b {",
        '        class "devtools/first-users"',
        '        mechanism "a mechanism"',
    ]
    if asset is not None:
        body.append(f'        asset "{asset}"')
    if threshold is not None:
        body.append(f"        threshold {threshold}")
    body += ["        kill developers < 1" if "developers" in source else "", f"        cost {{ item {budget} }}",
             f"        discharges {discharges}", "    }", *evidence, "}"]
    return "\n".join(line for line in body if line) + "\n"


# measured(delta): (source, target, threshold, covered)
MEASURED = [
    # a rise needs a `>=` (or `>`) bound at or above the target
    ("developers 0", "developers 500", "developers >= 500", True),
    ("developers 0", "developers 500", "developers >= 600", True),
    ("developers 0", "developers 500", "developers > 500", True),
    ("developers 0", "developers 500", "developers >= 499", False),
    ("developers 0", "developers 500", "developers <= 500", False),
    ("developers 0", "developers 500", "developers >= 250 * 2", True),
    ("developers 0", "developers 500", "developers >= 0.5k", True),
    # `==` only at the target itself
    ("developers 0", "developers 500", "developers == 500", True),
    ("developers 0", "developers 500", "developers == 600", False),
    # reversed comparisons are read the right way round
    ("developers 0", "developers 500", "500 <= developers", True),
    ("developers 0", "developers 500", "600 <= developers", True),
    ("developers 0", "developers 500", "400 <= developers", False),
    ("developers 0", "developers 500", "500 >= developers", False),
    # a fall needs a `<=` (or `<`) bound at or below the target
    ("developers 5k", "developers 1k", "developers <= 1k", True),
    ("developers 5k", "developers 1k", "developers <= 900", True),
    ("developers 5k", "developers 1k", "developers <= 1.1k", False),
    ("developers 5k", "developers 1k", "developers >= 1k", False),
    ("developers 5k", "developers 1k", "developers == 1k", True),
    ("developers 5k", "developers 1k", "1k >= developers", True),
    # only top-level conjuncts constrain the outcome: bounds inside `or` do not count
    ("developers 0", "developers 500", "developers >= 0 and developers >= 500", True),
    ("developers 0", "developers 500", "developers >= 500 or developers == 0", False),
    ("developers 0", "developers 500", "(developers >= 500 or developers == 0) and developers >= 0", False),
    ("developers 0", "developers 500", "not (developers < 500)", False),
    # a missing field, or no threshold at all, bounds nothing
    ("developers 0  arr 0 usd", "developers 500  arr 0 usd", "arr >= 0 usd", False),
    ("developers 0", "developers 500", None, False),
    # every material delta of the obligation must be bounded
    ("developers 0  arr 0 usd", "developers 500  arr 1M usd", "developers >= 500 and arr >= 1M usd", True),
    ("developers 0  arr 0 usd", "developers 500  arr 1M usd", "developers >= 500 and arr >= 0.9M usd", False),
    ("developers 0  arr 0 usd", "developers 500  arr 1M usd", "developers >= 500", False),
    # ... but a change too small to be material needs no bound
    ("developers 0  arr 0 usd", "developers 500  arr 9k usd", "developers >= 500", True),
    # a bool is bounded by `==` on its target
    ("soc2 false", "soc2 true", "soc2 == true", True),
    ("soc2 false", "soc2 true", "soc2 == false", False),
    ("soc2 false", "soc2 true", "true == soc2", True),
]


@pytest.mark.parametrize(("source", "target", "threshold", "covered"), MEASURED)
def test_measured_delta(probe_dir: Path, source: str, target: str, threshold: str | None, covered: bool) -> None:
    c = compile_text(one_step(source, target, threshold=threshold), probe_dir)
    field = target.split()[0]
    r = row(c, "t", field)
    assert r.covered is covered
    if covered:
        assert r.by == "m" and c.decision.verdict == "released"
    else:
        (attempt,) = [a for a in r.tried if a.obligation == "m"]
        assert attempt.claimed
        assert [f.require for f in attempt.failed] == ["require measured(delta)"]
        assert c.decision.verdict == "suspend-and-ask"


# floor(delta): paying_teams 0 -> 200 is priced 155,555.56 and arr 0 -> 1.2M 457,777.78
FLOOR_PAYING = 1e5 + 100 / 900 * 5e5
FLOOR_ARR = 4e5 + 0.2e6 / 9e6 * 2.6e6


@pytest.mark.parametrize(
    ("target", "discharges", "budget", "covered"),
    [
        # f covers paying_teams and arr: floor(delta) prices both
        ("paying_teams 200  arr 1.2M usd", "f", FLOOR_PAYING + FLOOR_ARR + 1, True),
        ("paying_teams 200  arr 1.2M usd", "f", FLOOR_PAYING + FLOOR_ARR - 1, False),
        # f_arr covers arr only: its `delta` is arr's alone
        ("paying_teams 200  arr 1.2M usd", "f_arr", FLOOR_ARR + 1, True),
        ("paying_teams 200  arr 1.2M usd", "f_arr", FLOOR_ARR - 1, False),
        # a change below materiality is not priced (arr 0 -> 9k usd is not material)
        ("paying_teams 200  arr 9k usd", "f", FLOOR_PAYING + 1, True),
        ("paying_teams 200  arr 9k usd", "f", FLOOR_PAYING - 1, False),
    ],
)
def test_budget_pays_floor_delta(probe_dir: Path, target: str, discharges: str, budget: float, covered: bool) -> None:
    text = one_step("paying_teams 0  arr 0 usd", target, discharges=discharges, budget=f"1 * {budget:.2f} usd")
    c = compile_text(text, probe_dir)
    r = row(c, "t", "arr")
    if "9k" in target:
        assert r.covered is None  # not material
        r = row(c, "t", "paying_teams")
    assert r.covered is covered
    if not covered:
        (attempt,) = [a for a in r.tried if a.obligation == discharges]
        (failed,) = attempt.failed
        assert failed.require == "require budget >= floor(delta)"
        assert "is false" in failed.reason


def test_floor_delta_without_a_floor_table_is_zero(probe_dir: Path) -> None:
    c = compile_text(one_step("developers 0", "developers 500", discharges="f_zero"), probe_dir)
    assert row(c, "t", "developers").by == "f_zero"


def test_budget_is_the_authored_sum_not_the_floored_cost(probe_dir: Path) -> None:
    # the class floor (50k) lifts c above the budget, but `budget` is still 20k
    text = one_step("paying_teams 0", "paying_teams 20", discharges="f", budget="2 * 10k usd")
    c = compile_text(text, probe_dir)
    assert c.numbers.transitions[0].cost.c == 50_000
    price = 2e4 + 10 / 90 * 8e4  # paying_teams 0 -> 20: between (10, 20k) and (100, 100k)
    assert price > 2e4
    assert row(c, "t", "paying_teams").covered is False
    c = compile_text(one_step("paying_teams 0", "paying_teams 20", discharges="f", budget="2 * 15k usd"), probe_dir)
    assert price <= 3e4 and row(c, "t", "paying_teams").covered is True


# evidence(tier >= 2) >= 1
@pytest.mark.parametrize(
    ("items", "covered"),
    [
        ((evidence(tier=2),), True),
        ((evidence(tier=3),), True),
        ((evidence(tier=1),), False),
        ((evidence(tier=2, supports=None, contradicts="t"),), False),  # contradicting never counts
        ((evidence(tier=2, captured="2012-06-02"),), False),  # inadmissible: after as_of
        ((evidence(tier=2, captured="2012-06-01"),), True),  # on as_of is admissible
        ((evidence(tier=2, unverified=True),), False),
        ((evidence("x", tier=1), evidence("y", tier=2, unverified=True),
          evidence("z", tier=3, supports=None, contradicts="t")), False),
        ((evidence("x", tier=1), evidence("y", tier=2, excerpt="another note")), True),
        ((evidence("x", tier=1), evidence("y", tier=2)), False),  # the same excerpt counts once, the first
    ],
)
def test_evidence_count(probe_dir: Path, items: tuple[str, ...], covered: bool) -> None:
    c = compile_text(one_step("developers 0", "developers 500", discharges="ev", evidence=items), probe_dir)
    r = row(c, "t", "developers")
    assert r.covered is covered
    if not covered:
        (attempt,) = [a for a in r.tried if a.obligation == "ev"]
        assert [f.require for f in attempt.failed] == ["require evidence(tier >= 2) >= 1"]


# grounded(asset)
ASSET = "SOC 2 Type I report"


@pytest.mark.parametrize(
    ("asset", "items", "covered"),
    [
        (ASSET, (evidence(excerpt="Our auditor issued the SOC 2 Type I report in May."),), True),
        (ASSET, (evidence(excerpt="the  soc 2\\ttype i\\nREPORT is done"),), True),  # case and whitespace
        (ASSET, (evidence(tier=1, excerpt=f"{ASSET} attached"),), True),  # any admissible tier
        (ASSET, (evidence(excerpt="SOC 2 Type II report"),), False),
        (ASSET, (evidence(excerpt="an audit is planned"),), False),
        (ASSET, (evidence(supports=None, contradicts="t", excerpt=f"no {ASSET} yet"),), False),
        (ASSET, (evidence(captured="2012-07-01", excerpt=f"{ASSET} attached"),), False),
        (ASSET, (evidence(unverified=True, excerpt=f"{ASSET} attached"),), False),
        (None, (evidence(excerpt=f"{ASSET} attached"),), False),  # no asset, nothing to ground
    ],
)
def test_grounded_asset(probe_dir: Path, asset: str | None, items: tuple[str, ...], covered: bool) -> None:
    text = one_step("soc2 false", "soc2 true", discharges="g", asset=asset, evidence=items)
    c = compile_text(text, probe_dir)
    r = row(c, "t", "soc2")
    assert r.covered is covered
    if not covered:
        (attempt,) = [a for a in r.tried if a.obligation == "g"]
        assert [f.require for f in attempt.failed] == ["require grounded(asset)"]


@pytest.mark.parametrize(
    ("source", "target", "covered"),
    [("20k", "150k", True), ("20k", "120k", True), ("20k", "110k", False), ("200k", "50k", False)],
)
def test_delta_fields_are_signed_changes(probe_dir: Path, source: str, target: str, covered: bool) -> None:
    # `require delta.arr >= 100k usd`: the signed change of arr, a field of the `delta` record
    c = compile_text(one_step(f"arr {source} usd", f"arr {target} usd", discharges="rise"), probe_dir)
    r = row(c, "t", "arr")
    assert r.covered is covered
    if not covered:
        (attempt,) = [a for a in r.tried if a.obligation == "rise"]
        (failed,) = attempt.failed
        assert failed.require == "require delta.arr >= 100k usd" and "is false" in failed.reason


# the shipped library: a bool change covered by `compliance`
def test_bool_field_covered_by_compliance(tmp_path: Path) -> None:
    asset = "SOC 2 Type I report"
    quote = evidence(excerpt="The auditor delivered our soc 2 type I report.")
    text = one_step("developers 10  soc2 false", "developers 10  soc2 true", discharges="compliance",
                    asset=asset, uses="venture", policy="venture@1.0.0", evidence=(quote,))
    c = compile_text(text, tmp_path)
    assert row(c, "t", "soc2").covered is True and row(c, "t", "soc2").by == "compliance"
    assert row(c, "t", "developers").covered is None  # unchanged
    assert c.decision.verdict == "released"

    # without a quoting excerpt: grounded(asset) fails, line 26 of venture.obl
    text = one_step("developers 10  soc2 false", "developers 10  soc2 true", discharges="compliance",
                    asset=asset, uses="venture", policy="venture@1.0.0")
    c = compile_text(text, tmp_path)
    r = row(c, "t", "soc2")
    assert r.covered is False and c.decision.verdict == "suspend-and-ask"
    (attempt,) = r.tried
    assert attempt.obligation == "compliance" and attempt.claimed
    assert [(f.require, f.span.line) for f in attempt.failed] == [("require grounded(asset)", 26)]

    # without an asset both lines fail
    text = one_step("developers 10  soc2 false", "developers 10  soc2 true", discharges="compliance",
                    uses="venture", policy="venture@1.0.0", evidence=(quote,))
    (attempt,) = row(compile_text(text, tmp_path), "t", "soc2").tried
    assert [f.require for f in attempt.failed] == ["require asset", "require grounded(asset)"]

    # an obligation that would hold but is not listed in `discharges` does not cover
    text = one_step("developers 10  soc2 false", "developers 10  soc2 true", discharges="adoption",
                    asset=asset, uses="venture", policy="venture@1.0.0", evidence=(quote,))
    r = row(compile_text(text, tmp_path), "t", "soc2")
    assert r.covered is False
    (attempt,) = r.tried
    assert attempt.obligation == "compliance" and not attempt.claimed and attempt.holds


# ---------------------------------------------------------------------- materiality
@pytest.mark.parametrize(
    ("source", "target", "material"),
    [
        ("developers 0", "developers 1", True),  # relative from 0: any change
        ("developers 100", "developers 110", True),  # exactly 10%
        ("developers 100", "developers 109", False),
        ("developers 100", "developers 90", True),  # a fall of exactly 10%
        ("developers 100", "developers 91", False),
        ("developers 1000", "developers 1099", False),
        ("developers 500", "developers 500", False),  # no change is never material
        ("rate 100", "rate 107", True),  # 7%: decided in the decimals as written
        ("rate 100", "rate 106.99", False),
        ("rate 0", "rate 0.001", True),
        ("paying_teams 5", "paying_teams 6", True),  # absolute, exactly 1
        ("paying_teams 0", "paying_teams 1", True),
        ("paying_teams 0", "paying_teams 0", False),
        ("arr 0 usd", "arr 10k usd", True),  # absolute, exactly 10k
        ("arr 0 usd", "arr 9_999 usd", False),  # an absolute threshold holds from 0 as well
        ("arr 1.2M usd", "arr 1.21M usd", True),
        ("arr 1.2M usd", "arr 1_209_999 usd", False),
        ("arr 50k usd", "arr 40k usd", True),
        ("soc2 false", "soc2 true", True),  # any change of a bool
        ("soc2 true", "soc2 false", True),
        ("soc2 true", "soc2 true", False),
    ],
)
def test_materiality(probe_dir: Path, source: str, target: str, material: bool) -> None:
    c = compile_text(one_step(source, target, threshold=None), probe_dir)
    r = row(c, "t", source.split()[0])
    assert r.delta.material is material
    assert (r.covered is None) is (not material)  # only material deltas are asked to be covered


# ---------------------------------------------------------------------- declaration order
_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def _depth_change(line: str) -> int:
    code = _STRINGS.sub('""', line).split("#", 1)[0]
    return code.count("{") - code.count("}")


def split_route(text: str) -> tuple[str, str, list[str]]:
    """(text up to and including the `route … {` line, that line, the top-level
    declarations of its body, each with the comment lines above it)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("route "))
    end = max(i for i, line in enumerate(lines) if line.strip() == "}")
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for line in lines[start + 1 : end]:
        if depth == 0 and not current and not line.strip():
            continue
        current.append(line)
        if depth == 0 and line.strip().startswith("#"):
            continue  # a comment: it goes with the next declaration
        depth += _depth_change(line)
        if depth == 0:
            items.append("\n".join(current))
            current = []
    assert depth == 0 and not current, "unbalanced route body"
    return "\n".join(lines[: start + 1]), lines[start], items


def join_route(head: str, items: list[str]) -> str:
    return head + "\n" + "\n\n".join(items) + "\n}\n"


def coverage_signature(c: Compiled) -> tuple[str, frozenset[Any], float]:
    assert c.coverage is not None
    rows = frozenset(
        (d.transition, d.delta.field, d.covered, d.by,
         tuple((a.obligation, a.claimed, tuple(f.require for f in a.failed)) for a in d.tried))
        for _, ds in c.coverage.transitions for d in ds
    )
    return c.decision.verdict, rows, c.numbers.score


def _reorder_cases() -> Iterator[tuple[str, str]]:
    spec = SPEC_ROUTE.read_text(encoding="utf-8")
    yield "spec", spec
    honest = compile_text(spec, EXAMPLES, str(SPEC_ROUTE))
    yield "spec spliced at 1", splice_text(honest.route, 1)
    for name in ("remittance_app", "smart_door_lock", "api_monitoring"):
        yield name, (COHORT / f"{name}.route").read_text(encoding="utf-8")


REORDER = dict(_reorder_cases())
BASELINES: dict[str, tuple[str, frozenset[Any], float]] = {}


def test_split_route_keeps_every_line() -> None:
    for name, text in REORDER.items():
        head, _, items = split_route(text)
        assert len(items) >= 9, name
        again = join_route(head, items)
        strip = [line for line in text.splitlines() if line.strip()]
        assert [line for line in again.splitlines() if line.strip()] == strip, name
        c = compile_text(again, COHORT if name in ("remittance_app", "smart_door_lock", "api_monitoring") else EXAMPLES)
        assert coverage_signature(c)[0] in ("released", "suspend-and-ask")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(REORDER)), st.randoms(use_true_random=False))
def test_coverage_is_invariant_under_declaration_order(name: str, rnd: Any) -> None:
    route_dir = EXAMPLES if name.startswith("spec") else COHORT
    head, _, items = split_route(REORDER[name])
    if name not in BASELINES:
        BASELINES[name] = coverage_signature(compile_text(REORDER[name], route_dir))
    shuffled = list(items)
    rnd.shuffle(shuffled)
    c = compile_text(join_route(head, shuffled), route_dir)
    assert coverage_signature(c) == BASELINES[name]
    expected_verdict = "suspend-and-ask" if "spliced" in name else "released"
    assert c.decision.verdict == expected_verdict


def test_the_help_of_an_uncovered_change_names_every_obligation_tried(probe_dir: Path) -> None:
    """Past one that would hold (and is not claimed), the help goes on to the others."""
    from pcsc.coverage.diagnose import uncovered_help

    c = compile_text(one_step("developers 0", "developers 500"), probe_dir)
    assert c.coverage is not None
    (u,) = c.coverage.uncovered
    parts = uncovered_help(u).split("; ")
    assert [p.split(")")[0] for p in parts] == [
        "obligation `m` (claimed", "obligation `f_zero` (not in `discharges`", "obligation `ev` (not in `discharges`"]
    assert parts[1] == "obligation `f_zero` (not in `discharges`) would hold: add it to `discharges`"
    assert "fails" in parts[0] and "fails" in parts[2]
