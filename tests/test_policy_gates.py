"""Gate rules are compiled once, when the policy is loaded; scoring only evaluates them."""

from __future__ import annotations

import ast
import inspect

import pcsc.score.route
from pcsc.lang.ir import expr as ex
from pcsc.policy.load import PolicyStore


def test_a_loaded_policy_carries_its_compiled_gate_rules() -> None:
    policy = PolicyStore().load_ref("venture@1.0.0").policy
    assert policy.gates
    for gate in policy.gates:
        assert isinstance(gate.expr, ex.Compare | ex.Logic | ex.Call | ex.Not | ex.Name), gate


def test_scoring_does_not_import_the_policy_loader() -> None:
    tree = ast.parse(inspect.getsource(pcsc.score.route))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "pcsc.policy.load" not in imported
