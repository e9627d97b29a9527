"""`pcsc policy diff`: key-by-key changes of resolved policies, and which routes move."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from pcsc.analysis.policy_diff import diff_documents, same
from tests.conftest import ROOT
from tests.test_spec_numbers import hand_computation

Run = Callable[..., tuple[int, str, str]]
TOP_LEVEL = ["examples/ci_cache.route", "examples/db_gui_subscription.route", "examples/devtools_api.route",
             "examples/feature_flags.route", "examples/log_search.route"]
# the routes of TOP_LEVEL with a transition of class "devtools/first-users", and the others
USING_FIRST_USERS = {"ci_cache", "devtools_api", "self_serve", "log_search"}
NOT_USING = {"subscription_switch", "enterprise_first"}


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """`pcsc …` in process, through `pcsc.cli.main`, from the repository root."""
    monkeypatch.chdir(ROOT)

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def json_diff(run: Run, *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("policy", "diff", *argv, "--format", "json")
    return code, json.loads(out)


@pytest.fixture
def raised_prior(tmp_path: Path) -> Path:
    """venture@1.0.0 with one prior raised: devtools/first-users 0.45 -> 0.50."""
    path = tmp_path / "venture" / "9.0.0.toml"
    path.parent.mkdir()
    path.write_text(
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\n\n'
        '[priors."devtools/first-users"]\np = 0.50\n',
        encoding="utf-8",
    )
    return path


# ---------------------------------------------------------------------- keys
def test_1_1_0_only_adds_reference_classes_floors_and_a_library_pin(run: Run) -> None:
    code, body = json_diff(run, "venture@1.0.0", "venture@1.1.0")
    assert code == 0
    old = tomllib.loads((ROOT / "policies/venture/1.0.0.toml").read_text(encoding="utf-8"))
    new = tomllib.loads((ROOT / "policies/venture/1.1.0.toml").read_text(encoding="utf-8"))
    added_classes = [c for c in new["priors"] if c not in old["priors"]]
    assert len(added_classes) >= 20
    kinds = {c["kind"] for c in body["changes"]}
    assert kinds == {"added"}  # nothing changed, nothing removed
    paths = [c["path"] for c in body["changes"]]
    assert paths[: len(added_classes)] == [f'priors."{c}"' for c in added_classes]
    assert paths[len(added_classes):] == [
        "floors.delta.revenue", "floors.delta.gmv", "floors.delta.units", "libraries.startup"]
    enterprise = body["changes"][0]
    assert enterprise["old"] is None and enterprise["new"]["p"] == 0.30
    assert body["summary"] == {"added": len(paths), "removed": 0, "changed": 0, "routes": 0, "move": 0,
                               "unchanged": 0, "fail": 0}
    assert body["old"]["policy"] == "venture@1.0.0" and body["new"]["extends"] == "venture@1.0.0"
    assert not body["identical"]


def test_changed_removed_and_gates_by_id() -> None:
    old = {"policy": {"id": "v", "version": "1", "coverage": "gate"}, "priors": {"a/b": {"p": 0.4, "floor_usd": 5}},
           "criteria": {"team": 2.0, "market": 1.0},
           "gates": [{"id": "g1", "kind": "eligibility", "rule": "x"}, {"id": "g2", "kind": "risk", "rule": "y"}]}
    new = {"policy": {"id": "v", "version": "2", "coverage": "dock", "extends": "v@1"},
           "priors": {"a/b": {"p": 0.5, "floor_usd": 5.0}}, "criteria": {"team": 2},
           "gates": [{"id": "g2", "kind": "risk", "rule": "z"}, {"id": "g3", "kind": "risk", "rule": "w"}]}
    changes = [(c.kind, c.path, c.old, c.new) for c in diff_documents(old, new)]
    assert changes == [
        ("changed", "policy.coverage", "gate", "dock"),
        ("changed", 'priors."a/b".p', 0.4, 0.5),  # floor_usd 5 and 5.0 are the same floor
        ("removed", "criteria.market", 1.0, None),
        ("removed", 'gates[id="g1"]', {"id": "g1", "kind": "eligibility", "rule": "x"}, None),
        ("changed", 'gates[id="g2"].rule', "y", "z"),
        ("added", 'gates[id="g3"]', None, {"id": "g3", "kind": "risk", "rule": "w"}),
    ]
    assert same(50_000, 5e4) and not same(True, 1) and not same([1, 2], [1, 2, 3])


def test_identical_policies_change_nothing(run: Run) -> None:
    code, body = json_diff(run, "venture@1.0.0", "policies/venture/1.0.0.toml", "examples/devtools_api.route")
    assert code == 0
    assert body["identical"] and body["changes"] == []
    assert [r["status"] for r in body["routes"]] == ["unchanged"]
    code, out, _ = run("policy", "diff", "venture@1.0.0", "venture@1.0.0", "examples/devtools_api.route")
    assert code == 0
    assert "identical (same sha256); 0 added, 0 removed, 0 changed" in out
    assert "1 route, 0 move" in out


# ---------------------------------------------------------------------- routes
def test_one_prior_moves_exactly_the_routes_of_its_class(run: Run, raised_prior: Path) -> None:
    code, body = json_diff(run, "venture@1.0.0", str(raised_prior), *TOP_LEVEL)
    assert code == 0
    assert [(c["kind"], c["path"], c["old"], c["new"]) for c in body["changes"]] == [
        ("changed", 'priors."devtools/first-users".p', 0.45, 0.5)
    ]
    routes = {r["route"]: r for r in body["routes"]}
    assert {n for n, r in routes.items() if r["moves"]} == USING_FIRST_USERS
    assert {n for n, r in routes.items() if r["status"] == "unchanged"} == NOT_USING
    for name in USING_FIRST_USERS:
        moved = [t for t in routes[name]["transitions"] if t["moved"]]
        assert moved and all(t["c"]["old"] == t["c"]["new"] for t in moved)  # a prior moves p, never c
    assert body["summary"]["routes"] == 6 and body["summary"]["move"] == 4 and body["summary"]["unchanged"] == 2

    # devtools_api by hand (docs/formulas.md): only p_launch moves, by 0.05·W_launch, so R_0 moves by that times R_1
    def sat(ws: list[float]) -> float:
        s = sum(w * 0.5**i for i, w in enumerate(sorted(ws, reverse=True)))
        return s / (1 + s)

    W_launch = 1 + 0.5 * sat([0.8 * 0.8])  # hn_launch: weight 0.8 × tier-2 weight 0.8
    R = hand_computation()["R"]
    assert isinstance(R, list)
    spec = routes["devtools_api"]
    assert spec["old"]["score"] == pytest.approx(R[0], rel=1e-12)
    assert spec["new"]["score"] - spec["old"]["score"] == pytest.approx((0.50 - 0.45) * W_launch * R[1], rel=1e-9)
    assert spec["new"]["score"] - spec["old"]["score"] == pytest.approx(109_402.91, abs=0.01)
    launch, monetize, expand = spec["transitions"]
    assert launch["moved"] and not monetize["moved"] and not expand["moved"]
    assert launch["p"]["new"] == pytest.approx(0.50 * W_launch, rel=1e-12)
    assert spec["moved"] == ["score", "ungated_score"]
    assert spec["old"]["verdict"] == spec["new"]["verdict"] == "released"


def test_text_report_of_the_moving_routes(run: Run, raised_prior: Path) -> None:
    code, out, _ = run("policy", "diff", "venture@1.0.0", str(raised_prior), *TOP_LEVEL)
    assert code == 0
    assert "changed  priors.\"devtools/first-users\".p  0.45 → 0.5" in out
    assert "6 routes, 4 move" in out
    status = dict(re.findall(r"^  (\w+)\s+examples/\S+\s.*?\s(moves|unchanged)$", out, re.M))
    assert status == {**{n: "moves" for n in USING_FIRST_USERS}, **{n: "unchanged" for n in NOT_USING}}
    assert re.search(r"^  devtools_api .* 885,626\.17\s+995,029\.08\s+\+109,402\.91\s+released\s+yes\s+moves$",
                     out, re.M)
    assert re.search(r"^    launch\s+0\.5378\s+0\.5976\s+99,000\.00\s+99,000\.00$", out, re.M)
    # the ref form finds the same policy through --policy-path
    _, body = json_diff(run, "venture@1.0.0", "venture@9.0.0", "--policy-path", str(raised_prior.parent.parent))
    assert body["changes"][0]["path"] == 'priors."devtools/first-users".p'


def test_a_route_a_policy_cannot_compile_is_reported(run: Run) -> None:
    code, body = json_diff(run, "venture@1.1.0", "venture@1.0.0", "examples/cohort/api_monitoring.route",
                           "examples/cohort/browser_testing_grid.route")
    assert code == 0
    monitoring, grid = body["routes"]
    assert monitoring["status"] == "unchanged"
    assert grid["status"] == "fails under new" and grid["new"] is None and grid["old"]["verdict"]
    assert grid["errors"]["new"] == ['unknown reference class "devtools/enterprise" in policy venture@1.0.0']
    assert body["summary"]["fail"] == 1 and body["summary"]["move"] == 1 and grid["moves"]
    _, body = json_diff(run, "venture@1.0.0", "venture@1.0.0", "examples/cohort/browser_testing_grid.route")
    (grid,) = body["routes"]
    assert grid["status"] == "fails under both" and not grid["moves"]
    assert body["summary"]["move"] == 0 and body["summary"]["unchanged"] == 0 and body["summary"]["fail"] == 1


# ---------------------------------------------------------------------- errors
def test_unknown_or_broken_policies_exit_1(run: Run, tmp_path: Path) -> None:
    code, out, err = run("policy", "diff", "venture@1.0.0", "venture@9.9.9")
    assert code == 1 and out == ""
    assert "no policy `venture@9.9.9`" in err and "[PCSC-E403]" in err
    code, out, _ = run("policy", "diff", "nope@1.0.0", "venture@1.0.0", "--format", "json")
    assert code == 1 and json.loads(out)["ok"] is False
    broken = tmp_path / "venture" / "2.0.0.toml"
    broken.parent.mkdir()
    broken.write_text('[policy]\nid = "venture"\nversion = "2.0.0"\nextends = "venture@1.0.0"\n'
                      "[reweighting]\ndecay = \"half\"\n", encoding="utf-8")
    code, _, err = run("policy", "diff", "venture@1.0.0", str(broken))
    assert code == 1 and "reweighting.decay: expected a number" in err


def test_route_input_errors_exit_1(run: Run, tmp_path: Path) -> None:
    code, out, err = run("policy", "diff", "venture@1.0.0", "venture@1.1.0", str(tmp_path / "missing.route"))
    assert code == 1 and "PCSC-E105" in err
    assert "0 routes, 0 move" in out


# ---------------------------------------------------------------------- -o
def test_o_writes_the_report_and_prints_nothing(run: Run, tmp_path: Path) -> None:
    argv = ("policy", "diff", "venture@1.0.0", "venture@1.1.0", "examples/devtools_api.route")
    _, text, _ = run(*argv)
    target = tmp_path / "diff.txt"
    code, out, _ = run(*argv, "-o", str(target))
    assert (code, out) == (0, "") and target.read_text(encoding="utf-8") == text
    _, shown, _ = run(*argv, "--format", "json")
    code, out, _ = run(*argv, "--format", "json", "--output", str(target))
    assert (code, out) == (0, "") and target.read_text(encoding="utf-8") == shown
    doc = json.loads(shown)
    assert doc["schema"] == {"kind": "policy-diff", "version": 1} and doc["diagnostics"] == []
    assert [i["path"] for i in doc["inputs"]] == ["examples/devtools_api.route"]
