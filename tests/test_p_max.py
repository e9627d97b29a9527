"""How a policy bounds p: `p = clip(p_prior · W, 0, p_max)` (`[reweighting] p_max`,
1 by default). Multiplicative reweighting saturates: a prior of 0.9 and one tier-3 item
of weight 1 gives W = 1.25 and p_prior · W = 1.125, clipped to p = 1 unless the policy
caps it lower. Numbers computed by hand; certificates record and check the cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcsc.analysis.explain import to_text
from pcsc.compiler.session import Compiled, Session
from pcsc.policy.load import PolicyError, PolicyStore
from tests.test_decisions import Run, certify, project, run, verify

__all__ = ["project", "run"]  # pytest fixtures

POLICY = """[policy]
id = "cap"
version = "1.0.0"
coverage = "off"

[priors."t/strong"]
p = 0.9
floor_usd = 0
source = "a test: a strong prior"

[evidence]
min_tier = 1
tier_weight = { 1 = 0.5, 2 = 0.8, 3 = 1.0 }
strict_point_in_time = false

[reweighting]
corroborate_gain = 0.5
contradict_gain = 0.5
w_min = 0.3
w_max = 1.5
decay = 0.5
{cap}
[uncertainty]
default = 0.25
"""

ROUTE = """route strong "A strong prior and one strong item" {
    as_of   2026-01-01
    policy  "cap@1.0.0"
    uses    venture
    state a { developers 0 }
    state b { developers 10 }
    vision b { tam 1M usd  capture 10%  defensibility 1 }
    transition go: a -> b {
        class "t/strong"
        cost { work 1 * 1k usd }
    }
    evidence audit {
        source   "an audited pilot"
        captured 2025-12-01
        tier     3
        weight   1.0
        supports go
        excerpt  "It worked."
    }
}
"""


def compiled(tmp_path: Path, cap: str) -> Compiled:
    root = tmp_path / "policies"
    (root / "cap").mkdir(parents=True)
    (root / "cap" / "1.0.0.toml").write_text(POLICY.replace("{cap}", cap), encoding="utf-8")
    route = tmp_path / "strong.route"
    route.write_text(ROUTE, encoding="utf-8")
    session = Session(policies=PolicyStore([root]))
    (r,) = session.load_routes(route, str(route))
    c = session.compile_route(r)
    assert c is not None and not session.diags.has_errors
    return c


def test_reweighting_saturates_at_one_without_a_cap(tmp_path: Path) -> None:
    # effective weight 1.0 × 1.0 = 1; S = 1, sat = 1 / 2; W = 1 + 0.5 × 0.5 = 1.25;
    # 0.9 × 1.25 = 1.125, clipped to 1: one item makes the step certain
    (t,) = compiled(tmp_path, "").numbers.transitions
    assert t.reweight.W == 1.25 and t.p == 1.0
    assert "p = clip(p_prior · W, 0, 1)" in to_text(compiled(tmp_path / "again", ""))


def test_p_max_caps_p(tmp_path: Path) -> None:
    c = compiled(tmp_path, "p_max = 0.95\n")
    (t,) = c.numbers.transitions
    assert t.reweight.W == 1.25 and t.p == 0.95
    # R_0 = −1,000 + 0.95 × 100,000 = 94,000
    assert c.numbers.score == 94_000
    assert "p = clip(p_prior · W, 0, p_max)" in to_text(c) and "[reweighting] p_max" in to_text(c)


def test_p_max_also_caps_a_prior_without_evidence(tmp_path: Path) -> None:
    c = compiled(tmp_path, "p_max = 0.8\n")
    assert c.numbers.transitions[0].p == 0.8  # 0.9 × 1.25 = 1.125 -> 0.8; the cap is on p, whatever made it


@pytest.mark.parametrize("bad", ["p_max = 1.5\n", "p_max = -0.1\n"])
def test_p_max_outside_0_1_is_a_policy_error(tmp_path: Path, bad: str) -> None:
    root = tmp_path / "policies"
    (root / "cap").mkdir(parents=True)
    (root / "cap" / "1.0.0.toml").write_text(POLICY.replace("{cap}", bad), encoding="utf-8")
    with pytest.raises(PolicyError, match=r"reweighting\.p_max: must be in \[0, 1\]"):
        PolicyStore([root]).load_ref("cap@1.0.0")


def test_a_certificate_records_and_checks_the_cap(run: Run, project: Path) -> None:
    policy = project / "policies" / "venture" / "1.0.0.toml"
    text = policy.read_text(encoding="utf-8")
    assert "decay = 0.5\n" in text
    policy.write_text(text.replace("decay = 0.5\n", "decay = 0.5\np_max = 0.5\n", 1), encoding="utf-8")
    cert = certify(run, project)
    code, out = verify(run, cert)
    assert code == 0, out
    steps = {s["symbol"]: s for s in json.loads(cert.read_text())["routes"][0]["steps"]}
    launch = steps["launch.p"]
    # launch: 0.45 × W = 0.45 × 1.1951 ≈ 0.538 under venture@1.0.0, capped at 0.5
    assert launch["rule"] == "p = clip(p_prior · W, 0, p_max)" and launch["value"]["q"] == "1/2"
    assert launch["operands"]["p_max"]["policy"] == ["reweighting", "p_max"]
