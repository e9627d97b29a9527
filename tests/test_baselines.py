"""Baselines graded beside the score (`pcsc.forecast.baselines`), and `policy fit`
accounting for W (`pcsc.forecast.learn.w_aware_prior`) with its hold-out split recorded."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pcsc.forecast import baselines, metrics
from pcsc.forecast.learn import fit, held_out, w_aware_prior
from pcsc.policy.load import PolicyStore
from tests.conftest import EXAMPLES, run_cli
from tests.test_forecast_loop import FAR, loop, outcomes  # noqa: F401  (loop is a fixture)


def _packet(route: str, ps: list[float], cs: list[float], value: float, t: float | None) -> dict[str, object]:
    return {"route": route, "value": value, "criteria_score": t, "flat_product": math.prod(ps),
            "transitions": [{"p": p, "c": c} for p, c in zip(ps, cs, strict=True)]}


def test_flat_baselines_from_the_packet() -> None:
    packet = _packet("r", [0.5, 0.4], [100.0, 300.0], 10_000.0, 60.0)
    assert baselines.flat_product(packet) == pytest.approx(0.2)
    assert baselines.flat_npv(packet) == pytest.approx(0.2 * 10_000 - 400)
    assert baselines.company(packet) == "r" and baselines.company({**packet, "company": "acme"}) == "acme"


def _cohort(n: int, seed: int) -> tuple[dict[str, dict[str, object]], dict[str, bool]]:
    rng = np.random.default_rng(seed)
    packets, labels = {}, {}
    for i in range(n):
        ps = [float(x) for x in rng.uniform(0.1, 0.9, 3)]
        route = f"route_{i}"
        packets[route] = _packet(route, ps, [1000.0] * 3, 1e6, float(rng.uniform(0, 100)))
        labels[route] = bool(rng.random() < math.prod(ps) * 3)
    return packets, labels


def test_logistic_predicts_out_of_fold_deterministically() -> None:
    packets, labels = _cohort(40, 1)
    a = baselines.logistic_oof(packets, labels, seed=3)
    b = baselines.logistic_oof(packets, labels, seed=3)
    assert a.fitted and a.predictions == b.predictions and a.folds == 5 and a.companies == 40
    assert all(0 < p < 1 for p in a.predictions.values())
    # Πp carries the signal: the out-of-fold regression ranks better than chance
    routes = sorted(labels)
    assert metrics.auc([a.predictions[r] for r in routes], [labels[r] for r in routes]) > 0.6


def test_logistic_folds_are_grouped_by_company() -> None:
    packets, labels = _cohort(30, 2)
    for i, route in enumerate(sorted(packets)):
        packets[route]["company"] = f"company_{i % 6}"
    result = baselines.logistic_oof(packets, labels, seed=4)
    assert result.fitted and result.companies == 6 and result.folds == 5
    # changing one company's labels moves no prediction of that company (they were predicted without it)
    flipped = {r: (not y if packets[r]["company"] == "company_0" else y) for r, y in labels.items()}
    other = baselines.logistic_oof(packets, flipped, seed=4)
    if other.fitted:
        for r in packets:
            if packets[r]["company"] == "company_0":
                assert other.predictions[r] == pytest.approx(result.predictions[r])


def test_logistic_is_not_fitted_on_too_few_cases() -> None:
    packets, _ = _cohort(6, 3)
    labels = {r: i == 0 for i, r in enumerate(sorted(packets))}
    result = baselines.logistic_oof(packets, labels, seed=1)
    assert not result.fitted and result.predictions == {} and "too few cases" in (result.why or "")
    columns, models = baselines.baseline_columns(packets, labels, seed=1)
    assert set(columns) == {"flat_product", "flat_npv", "unweighted", "evidence_compliance"}
    assert [m.to_json()["fitted"] for m in models] == [False, False]


def test_bootstrap_many_pairs_are_the_paired_bootstrap() -> None:
    packets, labels = _cohort(25, 5)
    routes = sorted(labels)
    ys = [int(labels[r]) for r in routes]
    a = [float(packets[r]["criteria_score"]) for r in routes]  # type: ignore[arg-type]
    b = [baselines.flat_product(packets[r]) for r in routes]
    _, pairs = metrics.bootstrap_many([a, b], ys, B=300, seed=9)
    one = metrics.paired_delta_auc(a, b, ys, B=300, seed=9)
    assert (pairs[0].estimate, pairs[0].ci) == (one.estimate, one.ci)


def test_evaluate_prints_the_baselines_beside_the_score(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(loop), "--as-of", FAR.isoformat())
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(loop), "--as-of", FAR.isoformat(),
                             "--bootstrap", "300", "--seed", "7", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [s["name"] for s in doc["scorers"]][2:] == ["flat_product", "flat_npv", "unweighted", "evidence_compliance"]
    assert [(d["a"], d["b"]) for d in doc["paired"]] == [
        ("score", "criteria_score"), ("score", "flat_product"), ("score", "flat_npv"), ("score", "unweighted"),
        ("score", "evidence_compliance")]
    assert all(d["B"] == 300 and d["seed"] == 7 for d in doc["paired"])
    logistic = next(b for b in doc["baselines"] if b["name"] == "logistic")
    assert logistic["fitted"] is False and "too few cases" in logistic["why"]
    assert all("flat_product" in c and "flat_npv" in c for c in doc["cases"])
    code, out, _ = run_cli(capsys, "evaluate", "--ledger", str(loop), "--as-of", FAR.isoformat(), "--bootstrap", "300")
    assert code == 0
    assert "paired ΔAUC score − flat_product" in out and "baseline logistic: not fitted" in out


# ---------------------------------------------------------------------- fit accounts for W
class _R:
    def __init__(self, route: str, transition: str, status: str) -> None:
        self.route, self.transition, self.status = route, transition, status


def test_w_aware_fit_recovers_known_priors_better_than_pooling() -> None:
    """Outcomes drawn from known priors with W ≠ 1 per case (seed 20260710): the W-aware
    estimate's mean absolute error over the 3 classes is 0.0050 (0.3039, 0.2058, 0.1254 for
    true 0.30, 0.20, 0.12), the pooled estimate's 0.1130 (0.4544, 0.3166, 0.1881): pooling
    estimates p·mean(W), about 1.5·p."""
    policy = PolicyStore().load_ref("venture@1.0.0").policy
    truth = {"devtools/first-users": 0.30, "devtools/first-revenue": 0.20, "devtools/scale": 0.12}
    rng = np.random.default_rng(20260710)
    packets, results = [], []
    for i in range(1500):
        route = f"r{i}"
        transitions = []
        for j, (cls, p) in enumerate(truth.items()):
            W = float(rng.uniform(0.6, 2.4))  # the evidence mostly raises p: mean W = 1.5
            transitions.append({"name": f"t{j}", "class": cls, "W": W, "c": 1.0, "p": min(p * W, 1.0)})
            results.append(_R(route, f"t{j}", "positive" if rng.random() < min(p * W, 1.0) else "negative"))
        packets.append({"route": route, "value": 1.0, "transitions": transitions})
    fits = {f.ref_class: f for f in fit(policy, packets, results, strength=20, holdout=0.3)}
    w_error = float(np.mean([abs(fits[c].new_p - p) for c, p in truth.items()]))
    pooled_error = float(np.mean([abs((fits[c].pooled_p or 0.0) - p) for c, p in truth.items()]))
    assert w_error == pytest.approx(0.0050, abs=5e-4)
    assert pooled_error == pytest.approx(0.1130, abs=5e-4)
    assert w_error < pooled_error / 5
    assert all(fits[c].n == sum(not held_out(f"r{i}", 0.3) for i in range(1500)) for c in truth)


def test_with_every_w_one_the_fit_is_the_beta_binomial_update() -> None:
    assert w_aware_prior([1.0] * 10, [True] * 3 + [False] * 7, 0.45, 20) == pytest.approx((20 * 0.45 + 3) / 30,
                                                                                           abs=1e-6)
    assert w_aware_prior([2.0] * 4, [False] * 4, 0.5, 2) < 0.5  # W = 2 and p ≥ 0.5 would make failure impossible


def test_fit_records_the_holdout_and_compare_uses_it(
    loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(loop), "--as-of", FAR.isoformat())
    target = tmp_path / "policies" / "venture" / "1.0.1.toml"
    code, _, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.1", "--ledger",
                           str(loop), "--as-of", FAR.isoformat(), "--holdout", "0.75", "-o", str(target))
    assert code == 0, err
    assert tomllib.loads(target.read_text(encoding="utf-8"))["fit"] == {"holdout": 0.75, "strength": 20.0}
    code, out, _ = run_cli(capsys, "policy", "check", str(target))
    assert code == 0, out
    args = ("policy", "compare", "venture@1.0.0", "venture@1.0.1", "--policy-path", str(tmp_path / "policies"),
            "--ledger", str(loop), "--as-of", FAR.isoformat(), "--format", "json")
    code, out, err = run_cli(capsys, *args)
    doc = json.loads(out)
    assert code == (0 if doc["promote"] else 3), err  # 3: NEW not promoted
    assert doc["holdout"] == 0.75
    code, out, err = run_cli(capsys, *args, "--holdout", "1")
    doc = json.loads(out)
    assert code == (0 if doc["promote"] else 3), err
    assert doc["holdout"] == 1.0 and doc["routes"] == 2


def test_a_binding_picked_only_by_the_tie_rule_is_not_counted_against_the_selector() -> None:
    """Under the option to stop a route the planner would not start has every U·D at 0:
    its binding transition is the tie rule's first step, not a finding, so it neither
    differs from the value-of-information selector nor names a failed milestone."""
    from pcsc.forecast.baselines import binding_vs_voi

    def packet(binding: dict[str, object], selected: str | None) -> dict[str, object]:
        return {"transitions": [{"name": "a"}, {"name": "b"}], "binding": binding, "voi": {"selected": selected}}

    packets = {
        "tie": packet({"transition": "a", "by_tie": "planner-does-not-start"}, "b"),
        "real": packet({"transition": "b"}, "a"),
    }
    found = binding_vs_voi(packets, [("tie", "a"), ("real", "b")])
    assert found["binding_by_tie"] == 1
    assert found["differ"] == 1  # only `real`
    assert found["failed_routes"] == 2 and found["binding_named_failure"] == 1  # `real` names b; `tie` does not count
    assert [r["binding_by_tie"] for r in found["rows"]] == [False, True]


# ---------------------------------------------------------------------- ablations, contract, boosted (issue 22)
def _full_packet(**over: object) -> dict[str, object]:
    packet: dict[str, object] = {
        "route": "r", "value": 1000.0, "score": 1.0, "verdict": "released", "criteria_score": 50.0,
        "flat_product": 0.3 * 0.5,
        "transitions": [
            {"name": "a", "p": 0.3, "p_prior": 0.2, "c": 10.0,
             "deltas": [{"field": "users", "material": True, "covered": True}]},
            {"name": "b", "p": 0.5, "p_prior": 0.6, "c": 20.0,
             "deltas": [{"field": "arr", "material": True, "covered": False}]},
        ],
        "evidence": [{"name": "e1", "admitted": True, "supports": ["a", "b"]},
                     {"name": "e2", "admitted": False, "supports": ["b"]}],
    }
    packet.update(over)
    return packet


def test_the_reweighting_ablation_folds_the_priors() -> None:
    # R_2 = V; R_1 = -20 + 0.6·1000 = 580; R_0 = -10 + 0.2·580 = 106
    assert baselines.unweighted(_full_packet()) == pytest.approx(106.0)
    assert baselines.unweighted(_full_packet(verdict="docked")) == pytest.approx(-10 + 0.2 * -20)
    assert baselines.unweighted(_full_packet(score=None)) is None, "a withheld score has no ablation either"
    assert baselines.unweighted(_full_packet(graph={})) is None
    assert baselines.unweighted(_full_packet(calibration={"method": "platt"})) is None
    # the packet's own fold: discounts d and the option to stop
    discounted = _full_packet(fold={"d": [0.5, 0.5], "abandonment": False})
    assert baselines.unweighted(discounted) == pytest.approx(-10 + 0.2 * 0.5 * (-20 + 0.6 * 0.5 * 1000))
    stopping = _full_packet(value=10.0, fold={"abandonment": True})
    assert baselines.unweighted(stopping) == 0.0  # R_1 = max(0, -20 + 6) = 0, R_0 = max(0, -10) = 0


def test_the_unweighted_score_of_a_compiled_route_is_its_fold_with_w_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compile", str(EXAMPLES / "cohort" / "api_monitoring.route"), "--format", "json")
    assert code == 0
    (packet,) = json.loads(out)["routes"]
    assert any(t["W"] != 1 for t in packet["transitions"])
    R = packet["value"]
    for t in reversed(packet["transitions"]):
        R = -t["c"] + t["p_prior"] * R
    assert baselines.unweighted(packet) == pytest.approx(R, rel=1e-12)
    assert baselines.unweighted(packet) != pytest.approx(packet["score"])


def test_the_contract_baseline_counts_transitions_keeping_the_evidence_contract() -> None:
    # a: admitted support, covered; b: admitted support but an uncovered material change
    assert baselines.evidence_compliance(_full_packet()) == 0.5
    only_unadmitted = _full_packet(evidence=[{"name": "e2", "admitted": False, "supports": ["a", "b"]}])
    assert baselines.evidence_compliance(only_unadmitted) == 0.0


def test_boosted_stumps_fit_a_threshold_and_predict_out_of_fold() -> None:
    x = np.array([[float(i)] for i in range(20)])
    y = (x[:, 0] >= 12).astype(float)
    f0, stumps = baselines.fit_stumps(x, y)
    # the first split is the one that separates the classes, its leaves one Newton step of rate GBM_RATE
    j, threshold, left, right = stumps[0]
    assert (j, threshold) == (0, 11.5)
    p = 8 / 20
    assert f0 == pytest.approx(math.log(p / (1 - p)))
    assert left == pytest.approx(baselines.GBM_RATE * (0 - p) / (p * (1 - p)))
    assert right == pytest.approx(baselines.GBM_RATE * (1 - p) / (p * (1 - p)))
    fitted = baselines.predict_stumps((f0, stumps), x)
    assert metrics.auc(fitted, y) == 1.0
    packets, labels = _cohort(40, 1)
    a = baselines.boosted_oof(packets, labels, seed=3)
    assert a.fitted and a.predictions == baselines.boosted_oof(packets, labels, seed=3).predictions
    assert a.to_json()["name"] == "boosted" and a.to_json()["rounds"] == baselines.GBM_ROUNDS


def test_boosted_folds_are_grouped_by_company() -> None:
    packets, labels = _cohort(30, 2)
    for i, route in enumerate(sorted(packets)):
        packets[route]["company"] = f"company_{i % 6}"
    result = baselines.boosted_oof(packets, labels, seed=4)
    flipped = {r: (not y if packets[r]["company"] == "company_0" else y) for r, y in labels.items()}
    other = baselines.boosted_oof(packets, flipped, seed=4)
    assert result.fitted and other.fitted
    for r in packets:
        if packets[r]["company"] == "company_0":
            assert other.predictions[r] == pytest.approx(result.predictions[r])


def test_the_docs_state_the_boosted_settings() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "forecast.md").read_text(encoding="utf-8")
    assert (f"{baselines.GBM_ROUNDS} rounds of shrinkage {baselines.GBM_RATE}, each a one-split tree (at least "
            f"{baselines.GBM_MIN_LEAF} routes on\n    each side)") in text


def _kg_packet() -> dict[str, object]:
    # R_1 = -200 + 0.4·1000 = 200, R_0 = -100 + 0.5·200 = 0: the route sits at break-even
    return {"route": "r", "value": 1000.0, "verdict": "released", "score": 0.0,
            "binding": {"transition": "a"},
            "transitions": [{"name": "a", "p": 0.5, "c": 100.0}, {"name": "b", "p": 0.4, "c": 200.0}],
            "voi": {"selected": None, "transitions": [{"values": [0.4, 0.6]}, {"values": [0.3, 0.5]}]}}


def test_the_knowledge_gradient_is_the_expected_gain_of_one_trial() -> None:
    selected, gains = baselines.knowledge_gradient(_kg_packet()) or (None, [])
    # a: variance 0.01, so α + β = 0.25/0.01 − 1 = 24; one trial moves p to 13/25 or 12/25
    r0_a = [-100 + q * 200 for q in (13 / 25, 12 / 25)]
    assert gains[0] == pytest.approx(0.5 * max(0, r0_a[0]) + 0.5 * max(0, r0_a[1]))
    # b: α + β = 0.24/0.01 − 1 = 23; p moves to (9.2 + 1)/24 or 9.2/24
    r0_b = [-100 + 0.5 * (-200 + q * 1000) for q in (10.2 / 24, 9.2 / 24)]
    assert gains[1] == pytest.approx(0.4 * max(0, r0_b[0]) + 0.6 * max(0, r0_b[1]))
    assert selected == "b" and gains[1] > gains[0] > 0
    far = _kg_packet()
    far["value"] = 10_000.0  # far above break-even: no single trial changes the decision
    # above break-even R_0 is affine in p and a trial's expected mean is p: the expected gain is 0
    far_selected, far_gains = baselines.knowledge_gradient(far) or ("?", [])
    assert far_selected is None and far_gains == pytest.approx([0.0, 0.0], abs=1e-9)
    assert baselines.knowledge_gradient({**_kg_packet(), "voi": None}) is None


def test_binding_counts_the_knowledge_gradient_on_first_failures() -> None:
    packets = {"r": _kg_packet(), "s": {**_kg_packet(), "route": "s", "value": 10_000.0}}
    out = baselines.binding_vs_voi(packets, [("r", "b"), ("s", "a")])
    assert [row["kg"] for row in out["rows"]] == ["b", None]
    assert (out["failed_routes"], out["kg_named_failure"], out["binding_named_failure"], out["kg_none"]) == (2, 1, 1, 1)
    assert out["rates"]["kg_named_failure"]["k"] == 1


def test_the_shipped_pilot_grades_every_baseline_beside_the_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped cohort, frozen retrospectively and resolved with its pilot outcomes:
    each baseline is graded on the 23 labelled routes, paired with the score on the same
    resamples, and the ablations are what the frozen packets give when refolded here."""
    from pcsc.cli import main
    from pcsc.forecast.ledger import Ledger

    ledger = tmp_path / "pilot.sqlite"
    cohort = EXAMPLES / "cohort"
    assert main(["freeze", "--retrospective", str(cohort), "--ledger", str(ledger), "-q"]) == 0
    assert main(["resolve", str(cohort / "outcomes_pilot.toml"), "--ledger", str(ledger), "--as-of", "2019-01-01",
                 "-q"]) == 0
    capsys.readouterr()
    code, out, err = run_cli(capsys, "evaluate", "--ledger", str(ledger), "--as-of", "2019-01-01", "--bootstrap",
                             "300", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    wanted = ["flat_npv", "unweighted", "evidence_compliance", "boosted"]
    paired = {d["b"]: d for d in doc["paired"]}
    for name in wanted:
        assert paired[name]["n"] == 23 and paired[name]["B"] == 300
    with Ledger.open(ledger, create=False) as opened:
        packets = {e.route: e.document()["packet"] for e in opened.entries()}
    for case in doc["cases"]:
        packet = packets[case["route"]]
        R = packet["value"]
        for t in reversed(packet["transitions"]):
            R = -t["c"] + t["p_prior"] * R
        assert case["unweighted"] == pytest.approx(R, rel=1e-12)
        R_one = math.prod(t["p"] for t in packet["transitions"]) * packet["value"] - sum(
            t["c"] for t in packet["transitions"])
        assert case["flat_npv"] == pytest.approx(R_one, rel=1e-9)
        assert 0 <= case["evidence_compliance"] <= 1
    boosted = next(b for b in doc["baselines"] if b["name"] == "boosted")
    assert boosted["fitted"] and boosted["folds"] == 5
