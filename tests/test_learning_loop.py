"""The learning loop's fitted parts: reweighting gains and calibration maps (`pcsc policy
fit --gains --calibration`), the `[calibration]` policy section in scoring, `explain` and
the hash, and `pcsc policy compare`'s integrity checks (held-out GATE verdicts, ECE)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.compiler.session import Session
from pcsc.forecast.calibrate import pava, platt_fit
from pcsc.forecast.learn import compare, fit_policy, held_out, rescore, weight_under
from pcsc.forecast.metrics import ece
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.policy.model import Calibration, IsotonicMap, Policy, Reweighting
from pcsc.render import schemas
from pcsc.score.calibration import calibrate
from pcsc.score.evidence import exact_W
from tests.conftest import ROOT, SPEC_ROUTE, run_cli
from tests.test_forecast_loop import FAR, outcomes, write_routes

TRUTH = {"devtools/first-users": 0.30, "devtools/first-revenue": 0.20, "devtools/scale": 0.12}


class _R:
    def __init__(self, route: str, transition: str, status: str) -> None:
        self.route, self.transition, self.status = route, transition, status


def venture() -> Policy:
    return PolicyStore().load_ref("venture@1.0.0").policy


# ---------------------------------------------------------------------- gains
def _evidence_cohort(n: int, seed: int, gains: tuple[float, float], frozen: Reweighting) -> tuple[list[Any], list[_R]]:
    """Routes of three transitions, each with 0–3 supporting and 0–3 contradicting tier-3
    evidence items; outcomes drawn from p_true·W under the true gains, packets frozen
    with W under ``frozen``'s gains."""
    true_rw = attrs.evolve(frozen, corroborate_gain=gains[0], contradict_gain=gains[1])
    rng = np.random.default_rng(seed)
    packets, results = [], []
    for i in range(n):
        route, transitions, evidence = f"r{i}", [], []
        for j, (cls, p) in enumerate(TRUTH.items()):
            name = f"t{j}"
            sup = [float(rng.uniform(0.2, 1.0)) for _ in range(int(rng.integers(0, 4)))]
            con = [float(rng.uniform(0.2, 1.0)) for _ in range(int(rng.integers(0, 4)))]
            evidence += [{"name": f"s{j}{k}", "tier": 3, "weight": w, "supports": [name], "contradicts": [],
                          "admitted": True} for k, w in enumerate(sup)]
            evidence += [{"name": f"k{j}{k}", "tier": 3, "weight": w, "supports": [], "contradicts": [name],
                          "admitted": True} for k, w in enumerate(con)]
            w_true = exact_W(sup, con, true_rw) if sup or con else 1.0
            w_frozen = exact_W(sup, con, frozen) if sup or con else 1.0
            transitions.append({"name": name, "class": cls, "W": w_frozen, "c": 1.0, "p": min(p * w_frozen, 1.0)})
            results.append(_R(route, name, "positive" if rng.random() < min(p * w_true, 1.0) else "negative"))
        packets.append({"route": route, "value": 1.0, "transitions": transitions, "evidence": evidence})
    return packets, results


def test_gain_fit_recovers_known_gains_better_than_the_old_values() -> None:
    """3,000 routes (seed 0), true gains (1.2, 0.3), the policy's (0.5, 0.5): the fitted
    gains are (1.1833, 0.3493), an absolute error of 0.066 against the old values' 0.9;
    the priors fitted with them are off by 0.0051 on average, the priors fitted with the
    frozen gains by 0.0539 and the pooled estimates by 0.0536."""
    policy = venture()
    packets, results = _evidence_cohort(3000, 0, (1.2, 0.3), policy.reweighting)
    fitted = fit_policy(policy, packets, results, 20, 0.3, gains=True, gain_strength=10)
    priors_only = fit_policy(policy, packets, results, 20, 0.3)
    assert fitted.gains_old == (0.5, 0.5) and fitted.gains_new is not None
    gain_error = abs(fitted.gains_new[0] - 1.2) + abs(fitted.gains_new[1] - 0.3)
    old_error = abs(0.5 - 1.2) + abs(0.5 - 0.3)
    assert gain_error == pytest.approx(0.066, abs=2e-3) and old_error == pytest.approx(0.9)
    assert gain_error < old_error / 5
    with_gains = np.mean([abs(f.new_p - TRUTH[f.ref_class]) for f in fitted.classes])
    frozen_gains = np.mean([abs(f.new_p - TRUTH[f.ref_class]) for f in priors_only.classes])
    pooled = np.mean([abs((f.pooled_p or 0.0) - TRUTH[f.ref_class]) for f in fitted.classes])
    assert with_gains == pytest.approx(0.0051, abs=5e-4) and frozen_gains == pytest.approx(0.0539, abs=5e-4)
    assert pooled == pytest.approx(0.0536, abs=5e-4)
    assert with_gains < min(frozen_gains, pooled) / 5


def test_gains_without_evidence_in_the_packets_stay_near_the_old_ones() -> None:
    """Packets frozen before they carried evidence keep their frozen W: nothing moves the
    gains but the penalty, so they stay where they were."""
    policy = venture()
    packets, results = _evidence_cohort(200, 1, (1.2, 0.3), policy.reweighting)
    for p in packets:
        del p["evidence"]
    fitted = fit_policy(policy, packets, results, 20, 0.3, gains=True)
    assert fitted.gains_new == pytest.approx((0.5, 0.5), abs=1e-6)


def test_rescore_refolds_every_shipped_route_under_its_own_fold() -> None:
    """A frozen packet rescored under the policy that made it gives its score back, to the
    last bit: the policy's discount and option to stop, and a graph route's
    series-parallel fold (a chain fold of a graph's transitions would not)."""
    from pcsc.render.packet import route_packet

    kinds = set()
    for path in sorted((ROOT / "examples").rglob("*.route")):
        session = Session()
        for route in session.load_routes(path):
            compiled = session.compile_route(route)
            assert compiled is not None
            packet = route_packet(compiled)
            policy = compiled.policy.policy
            ps, score = rescore(packet, policy)
            assert ps == [t["p"] for t in packet["transitions"]]
            assert score == packet["ungated_score"], path
            kinds.add(("graph" in packet, policy.fold.discount > 0, policy.fold.abandonment))
    assert {(True, False, False), (True, True, False), (True, True, True), (False, True, True),
            (False, True, False), (False, False, False)} <= kinds


def test_rescore_recomputes_w_from_the_frozen_evidence_exactly() -> None:
    session = Session()
    compiled = session.compile_route(session.load_routes(SPEC_ROUTE)[0])
    assert compiled is not None
    from pcsc.render.packet import route_packet

    packet = route_packet(compiled)
    policy = compiled.policy.policy
    assert any(t["W"] != 1.0 for t in packet["transitions"])
    for t in packet["transitions"]:
        assert weight_under(packet, t, policy) == t["W"]  # the same W, to the last bit
    assert rescore(packet, policy)[0] == [t["p"] for t in packet["transitions"]]
    stronger = attrs.evolve(policy, reweighting=attrs.evolve(policy.reweighting, corroborate_gain=0.9))
    moved = [weight_under(packet, t, stronger) for t in packet["transitions"]]
    # a larger corroborate gain never lowers W, and raises it where supporting evidence counts
    assert all(m >= t["W"] for m, t in zip(moved, packet["transitions"], strict=True))
    assert any(m > t["W"] for m, t in zip(moved, packet["transitions"], strict=True))


# ---------------------------------------------------------------------- calibration maps
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60),
       st.lists(st.floats(-0.5, 1.5), min_size=2, max_size=30))
def test_the_isotonic_map_is_monotone(cases: list[tuple[float, bool]], probes: list[float]) -> None:
    xs, ys = pava([p for p, _ in cases], [y for _, y in cases])
    assert all(b > a for a, b in zip(xs, xs[1:], strict=False))
    assert all(b >= a for a, b in zip(ys, ys[1:], strict=False)) and all(0 <= y <= 1 for y in ys)
    cal = Calibration("isotonic", isotonic=IsotonicMap(xs, ys))
    mapped = [calibrate(p, cal) for p in sorted(probes)]
    assert all(b >= a for a, b in zip(mapped, mapped[1:], strict=False))
    assert all(0 <= m <= 1 for m in mapped)


def test_isotonic_fits_the_blocks_rates() -> None:
    xs, ys = pava([0.1, 0.2, 0.2, 0.3, 0.9], [False, True, False, False, True])
    # 0.1 → 0; {0.2, 0.2, 0.3} pooled (rates 1/2 then 0 violate order) → 1/3; 0.9 → 1
    assert (xs, ys) == ([0.1, 0.2, 0.3, 0.9], [0.0, 1 / 3, 1 / 3, 1.0])


def test_isotonic_map_reduces_training_ece_of_a_miscalibrated_cohort() -> None:
    """Outcomes are drawn at rate p²/0.45 of the frozen p = 0.45·W, a curve no prior can
    fix: after the priors are refitted, the training transitions' ECE is 0.0991; the
    isotonic map fitted on them brings it to 0 (PAV's blocks are calibrated on the data
    they pool)."""
    policy = venture()
    rng = np.random.default_rng(5)
    packets, results = [], []
    for i in range(600):
        W = float(rng.uniform(0.3, 1.5))  # no evidence in the packets: W as frozen
        p = min(0.45 * W, 1.0)
        packets.append({"route": f"r{i}", "value": 1.0,
                        "transitions": [{"name": "t", "class": "devtools/first-users", "W": W, "c": 1.0, "p": p}]})
        results.append(_R(f"r{i}", "t", "positive" if rng.random() < min(p * p / 0.45, 1.0) else "negative"))
    fitted = fit_policy(policy, packets, results, 20, 0.3, calibration="isotonic")
    cal = fitted.calibration
    assert cal is not None and cal.n == sum(not held_out(f"r{i}", 0.3) for i in range(600))
    assert cal.ece_before is not None and cal.ece_after is not None
    assert cal.ece_before == pytest.approx(0.0991, abs=5e-4) and cal.ece_after < 1e-12
    assert all(b >= a for a, b in zip(cal.y, cal.y[1:], strict=False)) and len(cal.x) > 2
    # the ECE the fit reports is the metric's, on the map the policy applies
    train = [(pk, r) for pk, r in zip(packets, results, strict=True) if not held_out(r.route, 0.3)]
    evolved = attrs.evolve(policy, priors={**policy.priors, "devtools/first-users": attrs.evolve(
        policy.priors["devtools/first-users"], p=round(fitted.classes[1].new_p, 6))}, calibration=cal.as_policy())
    ps = [rescore(pk, evolved)[0][0] for pk, _ in train]
    assert ece(ps, [r.status == "positive" for _, r in train]).value < 1e-12


def test_platt_recovers_known_coefficients() -> None:
    rng = np.random.default_rng(11)
    p = rng.uniform(0.02, 0.98, 20000)
    z = np.log(p / (1 - p))
    y = rng.random(20000) < 1 / (1 + np.exp(-(-0.5 + 1.8 * z)))
    a, b = platt_fit(list(p), list(y))
    assert a == pytest.approx(-0.5, abs=0.06) and b == pytest.approx(1.8, abs=0.06)
    assert platt_fit([0.2, 0.8], [False, True])[1] > 1  # separable: finite, steeper than the identity


# ---------------------------------------------------------------------- the [calibration] section
ISOTONIC = """
[calibration]
method = "isotonic"
source = "test"

[calibration.isotonic]
x = [0.0, 0.5, 1.0]
y = [0.0, 0.2, 0.9]
"""


def _policy_files(tmp: Path, version: str, extra: str) -> Path:
    folder = tmp / "policies" / "venture"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{version}.toml"
    path.write_text(f'[policy]\nid = "venture"\nversion = "{version}"\nextends = "venture@1.0.0"\n{extra}',
                    encoding="utf-8")
    return path


def test_a_calibrated_policy_scores_explains_and_hashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _policy_files(tmp_path, "1.0.6", ISOTONIC)
    _policy_files(tmp_path, "1.0.7", "")
    store = PolicyStore([tmp_path / "policies"])
    calibrated, plain = store.load_ref("venture@1.0.6"), store.load_ref("venture@1.0.7")
    assert calibrated.sha256 != plain.sha256 and "calibration" in calibrated.resolved
    route = tmp_path / "a.route"
    route.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("venture@1.0.0", "venture@1.0.6"),
                     encoding="utf-8")
    code, out, err = run_cli(capsys, "compile", str(route), "--policy-path", str(tmp_path / "policies"),
                             "--format", "json")
    assert code == 0, err
    packet = json.loads(out)["routes"][0]
    assert packet["calibration"] == {"method": "isotonic"}
    for t in packet["transitions"]:
        raw = min(max(t["p_prior"] * t["W"], 0.0), 1.0)
        assert t["p_raw"] == raw
        # linear between (0, 0), (0.5, 0.2), (1, 0.9)
        expected = 0.4 * raw if raw <= 0.5 else 0.2 + 1.4 * (raw - 0.5)
        assert t["p"] == pytest.approx(expected, abs=1e-12) and t["p"] < raw
    schemas.validate(json.loads(out))
    code, out, _ = run_cli(capsys, "explain", str(route), "--policy-path", str(tmp_path / "policies"))
    assert code == 0
    assert "p = isotonic(p_raw): linear between the policy's 3 breakpoints" in out and "launch.p_raw" in out
    code, out, _ = run_cli(capsys, "explain", str(route), "--policy-path", str(tmp_path / "policies"),
                           "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    steps = {s["symbol"]: s for s in doc["explain"]["steps"]}
    assert steps["launch.p"]["rule"].startswith("p = isotonic(p_raw)")
    assert steps["launch.p"]["inputs"]["p_raw"] == steps["launch.p_raw"]["value"]
    assert steps["launch.p_raw"]["rule"] == "p_raw = clip(p_prior · W, 0, 1)"
    # without the section nothing changes: the plain child scores as its parent
    plain_route = tmp_path / "b.route"
    plain_route.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("venture@1.0.0", "venture@1.0.7"),
                           encoding="utf-8")
    code, out, _ = run_cli(capsys, "compile", str(plain_route), "--policy-path", str(tmp_path / "policies"),
                           "--format", "json")
    plain_packet = json.loads(out)["routes"][0]
    assert "calibration" not in plain_packet and all("p_raw" not in t for t in plain_packet["transitions"])
    code, out, _ = run_cli(capsys, "compile", str(SPEC_ROUTE), "--format", "json")
    assert [t["p"] for t in json.loads(out)["routes"][0]["transitions"]] == [
        t["p"] for t in plain_packet["transitions"]]


PLATT = '[calibration]\nmethod = "platt"\n[calibration.platt]\na = -0.3\nb = 1.4\n'


@pytest.mark.parametrize("section", [ISOTONIC, PLATT])
def test_a_calibrated_score_is_certified_and_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     section: str) -> None:
    _policy_files(tmp_path, "1.0.6", section)
    route = tmp_path / "a.route"
    route.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("venture@1.0.0", "venture@1.0.6"),
                     encoding="utf-8")
    cert = tmp_path / "a.cert"
    code, _, err = run_cli(capsys, "compile", str(route), "--policy-path", str(tmp_path / "policies"),
                           "--cert", str(cert))
    assert code == 0, err
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 0, out + err
    doc = json.loads(cert.read_text(encoding="utf-8"))
    steps = {s["symbol"]: s for s in doc["routes"][0]["steps"]}
    assert steps["launch.p_raw"]["rule"] == "p = clip(p_prior · W, 0, 1)"
    assert steps["launch.p"]["operands"]["p_raw"]["step"] == "launch.p_raw"
    # a calibrated p off by 1% is caught and named by the independent checker
    value = steps["launch.p"]["value"]
    value["f"] = value["f"] * 1.01
    from fractions import Fraction

    x = Fraction(value["f"])
    value["q"] = f"{x.numerator}/{x.denominator}"
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 1 and "launch.p (p = " in out + err


@pytest.mark.parametrize(("extra", "message"), [
    ('[calibration]\nmethod = "isotonic"\n', "calibration.isotonic: required when"),
    ('[calibration]\nmethod = "platt"\n', "calibration.platt: required when"),
    ('[calibration]\nmethod = "beta"\n', "calibration.method: expected one of isotonic, platt"),
    ('[calibration]\nmethod = "isotonic"\n[calibration.isotonic]\nx = [0.2, 0.1]\ny = [0.1, 0.2]\n',
     "calibration.isotonic.x: must be in [0, 1] and strictly increasing"),
    ('[calibration]\nmethod = "isotonic"\n[calibration.isotonic]\nx = [0.1, 0.2]\ny = [0.3, 0.2]\n',
     "calibration.isotonic.y: must be in [0, 1] and non-decreasing"),
    ('[calibration]\nmethod = "isotonic"\n[calibration.isotonic]\nx = [0.1]\ny = [0.3, 0.2]\n',
     "calibration.isotonic: x and y must hold the same number"),
    ('[calibration]\nmethod = "platt"\n[calibration.platt]\na = 0.1\nb = -1.0\n', "calibration.platt.b: must be at"),
])
def test_a_bad_calibration_section_is_refused(tmp_path: Path, extra: str, message: str) -> None:
    path = _policy_files(tmp_path, "1.0.8", extra)
    with pytest.raises(PolicyError) as caught:
        PolicyStore([tmp_path / "policies"]).load_path(path)
    assert any(message in m for m in caught.value.messages), caught.value.messages


# ---------------------------------------------------------------------- compare's integrity checks
LABELS = {f"r{i}": (i < 2 if i < 10 else i < 16) for i in range(20)}  # each route labelled as its one milestone


def _two_class_cohort() -> tuple[list[dict[str, Any]], list[_R]]:
    """20 held-out routes (holdout 1): class A (first-users) 2 of 10 positive, class B
    (first-revenue) 6 of 10 positive, every W = 1; `LABELS` are their route labels."""
    packets, results = [], []
    for i in range(20):
        cls, positive = ("devtools/first-users", i < 2) if i < 10 else ("devtools/first-revenue", i < 16)
        packets.append({"route": f"r{i}", "value": 1.0,
                        "transitions": [{"name": "t", "class": cls, "W": 1.0, "c": 0.0, "p": 0.4}]})
        results.append(_R(f"r{i}", "t", "positive" if positive else "negative"))
    return packets, results


def _with_priors(policy: Policy, a: float, b: float) -> Policy:
    priors = dict(policy.priors)
    priors["devtools/first-users"] = attrs.evolve(priors["devtools/first-users"], p=a)
    priors["devtools/first-revenue"] = attrs.evolve(priors["devtools/first-revenue"], p=b)
    return attrs.evolve(policy, priors=priors)


def test_compare_refuses_a_worse_ece_even_with_a_better_brier() -> None:
    """OLD says 0.4 for both classes (ECE 0: one bin, 8 of 20 positive); NEW says 0.15 and
    0.75: Brier 0.2125 < 0.24, but ECE 0.1 > 0."""
    packets, results = _two_class_cohort()
    old, new = _with_priors(venture(), 0.4, 0.4), _with_priors(venture(), 0.15, 0.75)
    result = compare(old, new, packets, results, LABELS, 1.0, {})
    assert result.brier_new == pytest.approx(0.2125) and result.brier_old == pytest.approx(0.24)
    assert result.ece_new == pytest.approx(0.1) and result.ece_old == pytest.approx(0.0, abs=1e-12)
    assert result.promote is False
    assert result.regressions == ("held-out ECE worsens (0.1000 vs 0.0000)",)


def test_compare_promotes_a_genuinely_better_policy_and_refuses_a_gate_flip() -> None:
    packets, results = _two_class_cohort()
    old, new = _with_priors(venture(), 0.4, 0.4), _with_priors(venture(), 0.2, 0.6)
    same = {p["route"]: ("released", "released") for p in packets}
    better = compare(old, new, packets, results, LABELS, 1.0, same, min_cases=20)
    assert better.promote is True and better.regressions == () and better.gate_checked == 20
    assert (better.cases, better.labelled, better.auc_old) == (20, 20, 0.5)
    assert better.brier_new == pytest.approx(0.2) and better.ece_new == pytest.approx(0.0, abs=1e-12)
    flipped = compare(old, new, packets, results, LABELS, 1.0, {**same, "r3": ("released", "suspend-and-ask")})
    assert flipped.promote is False and [(f.route, f.old, f.new) for f in flipped.verdict_changes] == [
        ("r3", "released", "suspend-and-ask")]
    assert flipped.regressions == ("GATE verdict of held-out route `r3` changes (released -> suspend-and-ask)",)
    unchecked = compare(old, new, packets, results, LABELS, 1.0, same, [("r4", "no route file")])
    assert unchecked.promote is False and "`r4` not checked: no route file" in unchecked.reason


def test_compare_never_promotes_on_an_undefined_auc_or_too_few_cases() -> None:
    """The same better policy: without route labels its AUC is undefined ("— -> —"),
    which is not a pass; with labels of one class only, neither; below the minimum of
    held-out cases, neither."""
    packets, results = _two_class_cohort()
    old, new = _with_priors(venture(), 0.4, 0.4), _with_priors(venture(), 0.2, 0.6)
    same = {p["route"]: ("released", "released") for p in packets}
    unlabelled = compare(old, new, packets, results, {}, 1.0, same)
    assert unlabelled.brier_new is not None and unlabelled.brier_new < unlabelled.brier_old
    assert (unlabelled.promote, unlabelled.auc_old, unlabelled.auc_new) == (False, None, None)
    assert unlabelled.regressions == ("held-out route AUC undefined (0 labelled held-out routes, 0 positive): "
                                      "an undefined metric is not a pass",)
    one_class = compare(old, new, packets, results, {r: False for r in LABELS}, 1.0, same)
    assert one_class.promote is False and "20 labelled held-out routes, 0 positive" in one_class.reason
    few = compare(old, new, packets, results, LABELS, 1.0, same, min_cases=21)
    assert few.promote is False
    assert few.regressions == ("20 held-out cases (routes with a resolved outcome), fewer than the 21 required",)


def test_a_cutoff_splits_in_time_and_counts_both_sides() -> None:
    """Routes r0..r9 frozen in January, r10..r19 in March: with a cutoff of 1 March the
    later ten are graded and the earlier ten are the training side, whatever their names."""
    from pcsc.forecast.learn import cutoff_split, held_out_routes

    packets, results = _two_class_cohort()
    frozen = {f"r{i}": ("2026-01-15T10:00:00Z" if i < 10 else "2026-03-01T00:00:00Z") for i in range(20)}
    split = cutoff_split(frozen, dt.date(2026, 3, 1))
    assert held_out_routes(packets, 0.0, split) == [f"r{i}" for i in range(10, 20)]
    old, new = _with_priors(venture(), 0.4, 0.4), _with_priors(venture(), 0.4, 0.6)
    result = compare(old, new, packets, results, LABELS, 0.0, split=split, min_cases=10)
    assert (result.routes, result.cases, result.training_cases, result.labelled) == (10, 10, 10, 10)
    # the later ten are all of class B (6 of 10 positive): every score is the same, so the AUC is 0.5 on both
    assert result.auc_old == result.auc_new == 0.5
    assert cutoff_split(frozen, dt.date(2027, 1, 1))("unknown route") is True  # never fitted on


@pytest.fixture
def resolved_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    ledger = tmp_path / "ledger.sqlite"
    assert run_cli(capsys, "freeze", *write_routes(tmp_path), "--ledger", str(ledger))[0] == 0
    assert run_cli(capsys, "resolve", outcomes(tmp_path), "--ledger", str(ledger), "--as-of", FAR.isoformat())[0] == 0
    target = tmp_path / "policies" / "venture" / "1.0.1.toml"
    code, _, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.1", "--ledger",
                           str(ledger), "--as-of", FAR.isoformat(), "--holdout", "0", "-o", str(target))
    assert code == 0, err
    return ledger


def _compare(capsys: pytest.CaptureFixture[str], tmp: Path, ledger: Path, new: str, *extra: str) -> tuple[int, Any]:
    code, out, _ = run_cli(capsys, "policy", "compare", "venture@1.0.0", new, "--policy-path", str(tmp / "policies"),
                           "--ledger", str(ledger), "--as-of", FAR.isoformat(), "--format", "json",
                           *extra, *(() if {"--cutoff", "--holdout"} & set(extra) else ("--holdout", "1")),
                           *(() if "--min-cases" in extra else ("--min-cases", "2")))
    return code, json.loads(out)


def test_compare_states_both_sides_and_refuses_below_the_minimum_or_on_a_split_in_time(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two held-out routes, both labelled: promoted with --min-cases 2, refused under the
    default of 10; a cutoff after every freeze holds out nothing, one long before holds
    out every route."""
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1", "--holdout", "1", "--min-cases", "10")
    assert code == 3 and doc["cases"] == {"held_out": 2, "training": 0, "labelled": 2, "minimum": 10}
    assert doc["regressions"] == ["2 held-out cases (routes with a resolved outcome), fewer than the 10 required"]
    tomorrow = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat()
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1", "--cutoff", tomorrow)
    assert code == 3 and (doc["routes"], doc["cutoff"], doc["holdout"]) == (0, tomorrow, None)
    assert doc["cases"]["training"] == 2 and doc["auc_new"] is None
    assert any("AUC undefined" in r for r in doc["regressions"])
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1", "--cutoff", "2000-01-01")
    assert (code, doc["routes"], doc["promote"]) == (0, 2, True)
    code, out, _ = run_cli(capsys, "policy", "compare", "venture@1.0.0", "venture@1.0.1", "--policy-path",
                           str(tmp_path / "policies"), "--ledger", str(resolved_loop), "--as-of", FAR.isoformat(),
                           "--cutoff", "2000-01-01")
    assert code == 3 and "split  frozen before 2000-01-01 (fit) / on or after it (graded): 0 training and 2 " \
        "held-out cases (routes with a resolved outcome), at least 10 required" in out
    code, _, err = run_cli(capsys, "policy", "compare", "venture@1.0.0", "venture@1.0.1", "--ledger",
                           str(resolved_loop), "--cutoff", "2000-01-01", "--holdout", "1")
    assert code == 2 and "give one" in err


def test_compare_recompiles_held_out_routes_and_refuses_a_gate_flip(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1")
    assert (code, doc["promote"], doc["gate"]) == (0, True, {"checked": 2, "changed": [], "unchecked": []})
    # the same priors, but delta floors that the routes' budgets no longer pay: GATE withholds them
    folder = tmp_path / "policies" / "venture"
    folder.joinpath("1.0.2.toml").write_text(
        '[policy]\nid = "venture"\nversion = "1.0.2"\nextends = "venture@1.0.1"\n\n'
        "[floors.delta.paying_teams]\npoints = [[10, 2e7], [100, 1e8]]\n", encoding="utf-8")
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.2")
    assert code == 3 and doc["promote"] is False
    assert doc["gate"]["changed"] == [{"route": r, "old": "released", "new": "suspend-and-ask"}
                                      for r in ("devtools_api", "rival_api")]
    assert doc["regressions"] == [f"GATE verdict of held-out route `{r}` changes (released -> suspend-and-ask)"
                                  for r in ("devtools_api", "rival_api")]
    code, out, _ = run_cli(capsys, "policy", "compare", "venture@1.0.0", "venture@1.0.2", "--policy-path",
                           str(tmp_path / "policies"), "--ledger", str(resolved_loop), "--as-of", FAR.isoformat(),
                           "--holdout", "1", "--min-cases", "2")
    assert code == 3 and "keep venture@1.0.0: not promoted" in out
    assert "devtools_api: released -> suspend-and-ask" in out


def test_compare_finds_moved_route_files_with_routes_and_refuses_without(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("a.route", "b.route"):
        shutil.move(tmp_path / name, moved / name)
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1")
    assert code == 3 and doc["gate"]["checked"] == 0 and len(doc["gate"]["unchecked"]) == 2
    assert "give it with --routes" in doc["gate"]["unchecked"][0]["why"]
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1", "--routes", str(moved))
    assert code == 0 and doc["promote"] is True and doc["gate"]["checked"] == 2
    # an edited file is not the frozen text
    (moved / "a.route").write_text((moved / "a.route").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, doc = _compare(capsys, tmp_path, resolved_loop, "venture@1.0.1", "--routes", str(moved))
    assert code == 3 and [u["route"] for u in doc["gate"]["unchecked"]] == ["devtools_api"]


def test_fit_with_gains_and_calibration_writes_a_policy_that_loads(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "policies" / "venture" / "1.0.3.toml"
    code, out, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.3", "--ledger",
                             str(resolved_loop), "--as-of", FAR.isoformat(), "--holdout", "0", "--gains",
                             "--calibration", "platt", "-o", str(target), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["gains"]["old"] == {"corroborate_gain": 0.5, "contradict_gain": 0.5}
    assert doc["calibration"]["method"] == "platt" and doc["calibration"]["transitions"] == 3
    loaded = PolicyStore([tmp_path / "policies"]).load_ref("venture@1.0.3").policy
    assert loaded.calibration is not None and loaded.calibration.platt is not None
    assert loaded.fit is not None and (loaded.fit.gain_strength, loaded.fit.calibration) == (10.0, "platt")
    assert (loaded.reweighting.corroborate_gain, loaded.reweighting.contradict_gain) == (
        doc["gains"]["new"]["corroborate_gain"], doc["gains"]["new"]["contradict_gain"])
    code, out, _ = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.4", "--ledger",
                           str(resolved_loop), "--as-of", FAR.isoformat(), "--strength", "0")
    assert code == 2


def test_fit_refuses_its_own_version_and_compare_a_missing_routes_path(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refit written as the version it extends would extend itself and could not load;
    a --routes path that does not exist is an error, not a silent "not checked"."""
    target = tmp_path / "policies" / "venture" / "1.0.0.toml"
    code, _, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.0", "--ledger",
                           str(resolved_loop), "--as-of", FAR.isoformat(), "-o", str(target))
    assert code == 2 and "--version 1.0.0" in err and "needs a new version" in err
    assert not target.exists()
    code, _, err = run_cli(capsys, "policy", "compare", "venture@1.0.0", "venture@1.0.1", "--policy-path",
                           str(tmp_path / "policies"), "--ledger", str(resolved_loop), "--as-of", FAR.isoformat(),
                           "--routes", str(tmp_path / "no-such-folder"))
    assert code == 2 and "no-such-folder: no such file or folder" in err


def test_fit_with_a_cutoff_fits_only_on_forecasts_frozen_before_it(
    resolved_loop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every route here was frozen today: a cutoff tomorrow fits on all of them (as
    --holdout 0 does), one in 2000 on none (nothing to fit, PCSC-E746)."""
    tomorrow = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat()
    args = ("policy", "fit", "--policy", "venture@1.0.0", "--version", "1.0.9", "--ledger", str(resolved_loop),
            "--as-of", FAR.isoformat(), "--format", "json")
    code, out, err = run_cli(capsys, *args, "--cutoff", tomorrow)
    assert code == 0, err
    _, every, _ = run_cli(capsys, *args, "--holdout", "0")
    assert json.loads(out)["classes"] == json.loads(every)["classes"]
    code, out, _ = run_cli(capsys, *args, "--cutoff", "2000-01-01")
    assert code == 1 and "PCSC-E746" in out
