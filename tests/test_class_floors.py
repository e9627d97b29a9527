"""Delta floors keyed by class as well as by field: `[floors.by_class."<class>".<field>]`
replaces `[floors.delta.<field>]` for the transitions of that class; other classes, and
fields the class does not list, keep the field's table. Numbers computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcsc.analysis.explain import to_text
from pcsc.compiler.session import Compiled, Session
from pcsc.policy.load import PolicyError, PolicyStore
from tests.conftest import POLICY_TABLES

POLICY = """[policy]
id = "floors"
version = "1.0.0"
coverage = "off"

[priors."t/plain"]
p = 0.5
floor_usd = 0
source = "a test"

[priors."t/curated"]
p = 0.5
floor_usd = 0
source = "a test: curated items cost five times as much to add"

[priors."t/other"]
p = 0.5
floor_usd = 0
source = "a test: a class with a table for another field only"

[floors.delta.developers]
points = [[1000, 10000]]           # 10 usd a developer, extended past 1000 along the segment

[floors.by_class."t/curated".developers]
points = [[1000, 50000]]           # 50 usd a developer, for `t/curated` only

[floors.by_class."t/other".arr]
points = [[1000, 1]]

""" + POLICY_TABLES

ROUTE = """route items "Three kinds of item" {
    as_of   2026-01-01
    policy  "floors@1.0.0"
    uses    venture
    state a { developers 0 }
    state b { developers 2000 }
    state c { developers 2500 }
    state d { developers 3000 }
    vision d { tam 1M usd  capture 10%  defensibility 1 }
    transition plain: a -> b {
        class "t/plain"
        cost { work 1 * 1k usd }
    }
    transition curated: b -> c {
        class "t/curated"
        cost { work 1 * 1k usd }
    }
    transition other: c -> d {
        class "t/other"
        cost { work 1 * 1k usd }
    }
}
"""


def write(tmp_path: Path, policy: str = POLICY) -> tuple[Path, Path]:
    root = tmp_path / "policies"
    (root / "floors").mkdir(parents=True)
    (root / "floors" / "1.0.0.toml").write_text(policy, encoding="utf-8")
    route = tmp_path / "items.route"
    route.write_text(ROUTE, encoding="utf-8")
    return root, route


def compiled(tmp_path: Path) -> Compiled:
    root, route = write(tmp_path)
    session = Session(policies=PolicyStore([root]))
    (r,) = session.load_routes(route, str(route))
    c = session.compile_route(r)
    assert c is not None and not session.diags.has_errors
    return c


def test_the_class_table_wins_over_the_field_table_for_its_class_only(tmp_path: Path) -> None:
    c = compiled(tmp_path)
    costs = {t.name: t.cost for t in c.numbers.transitions}
    # plain:   |Δ| = 2000 on the field table: 2000 × 10 = 20,000
    # curated: |Δ| = 500 on its class table:  500 × 50 = 25,000 (the field table would say 5,000)
    # other:   |Δ| = 500, its class lists only arr: the field table, 500 × 10 = 5,000
    assert [(n, costs[n].floor_delta, costs[n].c, costs[n].bound_by) for n in ("plain", "curated", "other")] == [
        ("plain", 20_000, 20_000, "floor_delta"),
        ("curated", 25_000, 25_000, "floor_delta"),
        ("other", 5_000, 5_000, "floor_delta"),
    ]


def test_explain_names_the_table_it_used(tmp_path: Path) -> None:
    c = compiled(tmp_path)
    text = to_text(c)
    assert 'policy floors@1.0.0 [floors.by_class."t/curated".developers]' in text
    assert "policy floors@1.0.0 [floors.delta]" in text


def test_a_class_table_for_a_class_the_priors_lack_is_a_policy_error(tmp_path: Path) -> None:
    root, _ = write(tmp_path, POLICY.replace('[floors.by_class."t/other".arr]', '[floors.by_class."t/missing".arr]'))
    with pytest.raises(PolicyError, match=r'floors\.by_class\."t/missing": not a reference class of \[priors\]'):
        PolicyStore([root]).load_ref("floors@1.0.0")


def test_a_class_table_is_checked_like_a_field_table(tmp_path: Path) -> None:
    root, _ = write(tmp_path, POLICY.replace("points = [[1000, 50000]]", "points = [[1000, 50000], [500, 60000]]"))
    with pytest.raises(PolicyError, match=r'floors\.by_class\."t/curated"\.developers\.points: \|delta\| breakpoints'):
        PolicyStore([root]).load_ref("floors@1.0.0")
