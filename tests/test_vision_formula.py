"""The vision's formula and the fold's unit as policy data (`[vision]`, `[units]`).

Every expected number here is computed by hand from the numbers the route and the
policy write (docs/formulas.md), never by asking the program."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pcsc.policy.load import PolicyError, PolicyStore
from tests.conftest import ROOT, SPEC_ROUTE
from tests.test_decisions import Run, packet, run

__all__ = ["run"]  # the pytest fixture

OSS_ROUTE = ROOT / "examples" / "oss" / "schema_linter.route"
OSS_POLICY = ROOT / "policies" / "oss-impact" / "1.0.0.toml"


def w_one_item(weight: float, tier_weight: float, gain: float = 0.5) -> float:
    """W for one supporting item: S = x, sat = S / (1 + S), W = 1 + gc·sat."""
    x = weight * tier_weight
    return 1 + gain * x / (1 + x)


# ---------------------------------------------------------------------- the shipped example
def oss_by_hand(adopters: float = 10_000, hours: float = 20, years: float = 3) -> dict[str, float]:
    """examples/oss/schema_linter.route under oss-impact@1.1.0, by hand: V = adopters ×
    hours saved per adopter × years of use; costs in usd at 1 usd = 0.01 points; the
    launch's payoff of 4,000 points (written without a unit) credited with its success."""
    rate = 0.01
    V = adopters * hours * years
    p1 = 0.30 * w_one_item(1.0, 1.0)  # oss/adoption, plugin_installs
    p2 = 0.60 * w_one_item(1.0, 1.0)  # oss/stability, contributor_survey
    c1 = max(1 * 30_000 * rate, 200)  # budget in points beside the class floor (points)
    c2 = max(2 * 60_000 * rate, 500)
    R1 = -c2 + p2 * V
    return {"V": V, "p1": p1, "p2": p2, "c1": c1, "c2": c2, "R1": R1, "score": -c1 + p1 * (4_000 + R1)}


def test_the_oss_example_scores_impact_points_as_the_hand_computation(run: Run) -> None:
    hand = oss_by_hand()
    assert hand["score"] == pytest.approx(169_500)  # 168,000 without the launch's payoff, 0.375 × 4,000 more
    code, doc = packet(run, "compile", str(OSS_ROUTE))
    assert code == 0
    r = doc["routes"][0]
    assert r["unit"] == "impact_points" and r["usd_rate"] == 0.01
    assert r["value"] == pytest.approx(hand["V"], rel=1e-12)
    assert r["score"] == pytest.approx(hand["score"], rel=1e-12)
    t1, t2 = r["transitions"]
    assert (t1["p"], t2["p"]) == (pytest.approx(hand["p1"]), pytest.approx(hand["p2"]))
    assert (t1["c"], t2["c"]) == (pytest.approx(hand["c1"]), pytest.approx(hand["c2"]))
    assert t1["budget"] == pytest.approx(300) and t1["cost_bound_by"] == "budget"
    assert r["vision"] == {"value": "adopters * hours_saved_per_adopter * years_of_use",
                           "inputs": {"adopters": 10_000, "hours_saved_per_adopter": 20, "years_of_use": 3}}


def test_text_outputs_name_the_folds_unit_not_usd(run: Run) -> None:
    code, out, _ = run("compile", str(OSS_ROUTE))
    assert code == 0
    assert "169,500.00 impact_points" in out and "600,000.00 impact_points" in out
    assert "USD" not in out
    assert "1 usd = 0.01 impact_points" in out
    code, out, _ = run("explain", str(OSS_ROUTE), "--route", "schema_linter")
    assert code == 0
    assert "every amount below is in impact_points" in out
    assert "rule:   V = adopters * hours_saved_per_adopter * years_of_use" in out
    assert "inputs: adopters=10,000, hours_saved_per_adopter=20, years_of_use=3" in out
    line = next(i for i, t in enumerate(OSS_POLICY.read_text().splitlines(), 1) if t.startswith("value = "))
    assert f"[vision] value, policies/oss-impact/1.0.0.toml line {line}" in out  # inherited by 1.1.0


def test_usd_outputs_carry_no_unit_key(run: Run) -> None:
    """Under a usd fold and the venture formula the packet is what it always was."""
    _, doc = packet(run, "compile", str(SPEC_ROUTE))
    assert "unit" not in doc["routes"][0] and "vision" not in doc["routes"][0]
    _, out, _ = run("compile", str(SPEC_ROUTE))
    assert " USD" in out and "unit        " not in out


def test_an_explicit_venture_formula_scores_as_the_default(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "explicit", 'extends = "venture@1.0.0"\n\n[vision]\n'
                 'value = "tam * capture * defensibility"\n'
                 'fields = { tam = "usd", capture = "ratio", defensibility = "ratio" }\n')
    route = tmp_path / "r.route"
    route.write_text(SPEC_ROUTE.read_text().replace("venture@1.0.0", "explicit@1.0.0"))
    _, base = packet(run, "compile", str(SPEC_ROUTE))
    code, doc = packet(run, "compile", str(route), "--policy-path", str(tmp_path / "policies"))
    assert code == 0
    assert doc["routes"][0]["score"] == base["routes"][0]["score"]
    assert doc["routes"][0]["value"] == 10e9 * 0.10 * 0.6


# ---------------------------------------------------------------------- a policy of one's own
def write_policy(tmp_path: Path, pid: str, body: str) -> Path:
    path = tmp_path / "policies" / pid / "1.0.0.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[policy]\nid = "{pid}"\nversion = "1.0.0"\n{body}', encoding="utf-8")
    return path


PRIORS = """
[priors."oss/adoption"]
p = 0.4
floor_usd = 10
source = "test"

[evidence]
min_tier = 1
tier_weight = { 1 = 0.5, 2 = 1.0 }

[reweighting]
corroborate_gain = 0.5
contradict_gain = 0.5
w_min = 0.3
w_max = 1.5
decay = 0.5

[uncertainty]
default = 0.25
"""

USD_FIELD_POLICY = """coverage = "off"

[vision]
value = "adopters * usd_per_adopter * years_of_use"
fields = { adopters = "count", usd_per_adopter = "usd", years_of_use = "number" }

[units]
fold = "impact_points"

[units.rates]
usd = 0.001
""" + PRIORS

ROUTE = """route tiny {
    as_of   2026-01-01
    policy  "POLICY@1.0.0"
    uses    venture

    state a { developers 10 }
    state b { developers 1k }

    vision b {
        adopters         ADOPTERS
        usd_per_adopter  250 usd
        years_of_use     2
    }

    transition grow: a -> b {
        class      "oss/adoption"
        threshold  developers >= 1k
        cost {
            time  3 * 20k usd
        }
    }
}
"""


def tiny(tmp_path: Path, policy: str = "usdfield", adopters: str = "4k") -> Path:
    route = tmp_path / f"{policy}.route"
    route.write_text(ROUTE.replace("POLICY", policy).replace("ADOPTERS", adopters), encoding="utf-8")
    return route


def test_a_usd_field_is_read_at_the_policys_rate(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "usdfield", USD_FIELD_POLICY)
    # by hand: V = 4000 × (250 usd × 0.001) × 2 = 2000 points; c = max(60k usd × 0.001, 10) = 60;
    # no evidence, W = 1: score = −60 + 0.4 × 2000 = 740
    code, doc = packet(run, "compile", str(tiny(tmp_path)), "--policy-path", str(tmp_path / "policies"))
    assert code == 0, doc["diagnostics"]
    r = doc["routes"][0]
    assert r["value"] == pytest.approx(2000) and r["transitions"][0]["c"] == pytest.approx(60)
    assert r["score"] == pytest.approx(740)
    assert r["vision"]["inputs"]["usd_per_adopter"] == pytest.approx(0.25)


def test_set_moves_a_formula_field_and_the_formula(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "usdfield", USD_FIELD_POLICY)
    route, where = str(tiny(tmp_path)), str(tmp_path / "policies")
    # adopters 4k -> 10k: V = 10000 × 0.25 × 2 = 5000; score = −60 + 0.4 × 5000 = 1940
    code, doc = packet(run, "compile", route, "--policy-path", where, "--set", "vision.adopters=10k")
    assert code == 0 and doc["routes"][0]["score"] == pytest.approx(1940)
    # the formula itself, by its policy key: V = 4000 × 0.25 × 2 / 4 = 500; score = −60 + 200 = 140
    code, doc = packet(run, "compile", route, "--policy-path", where, "--set",
                       'vision.value="adopters * usd_per_adopter * years_of_use / 4"')
    assert code == 0 and doc["routes"][0]["score"] == pytest.approx(140)
    # a formula that no longer reads a value the route states: the route's vision is refused
    code, _, err = run("compile", route, "--policy-path", where, "--set", 'vision.value="adopters * usd_per_adopter"',
                       "--set", 'vision.fields={adopters = "count", usd_per_adopter = "usd"}')
    assert code == 1 and "unknown vision item `years_of_use` [PCSC-E220]" in err
    code, _, err = run("compile", route, "--policy-path", where, "--set", "vision.tam=5B")
    assert code == 1 and "PCSC-E901" in err and "no route compiled states `tam`" in err


def test_sensitivity_finds_where_a_formula_field_flips_the_sign(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "usdfield", USD_FIELD_POLICY)
    code, doc = packet(run, "sensitivity", str(tiny(tmp_path)), "--policy-path", str(tmp_path / "policies"))
    assert code == 0
    [m] = [m for m in doc["sensitivity"]["margins"] if m["key"] == "vision.adopters" and m["decision"] == "sign"]
    # score = −60 + 0.4 × adopters × 0.25 × 2 = 0 at adopters = 60 / 0.2 = 300
    assert m["flips"] and m["at"] == pytest.approx(300, rel=1e-6)
    assert m["about"] == "the vision's adopters (V = adopters * usd_per_adopter * years_of_use)"


def test_extends_replaces_the_vision_table_whole(tmp_path: Path) -> None:
    write_policy(tmp_path, "usdfield", USD_FIELD_POLICY)
    write_policy(tmp_path, "child", 'extends = "usdfield@1.0.0"\n\n[vision]\nvalue = "adopters * years_of_use"\n'
                 'fields = { adopters = "count", years_of_use = "number" }\n')
    loaded = PolicyStore([tmp_path / "policies"]).load_ref("child@1.0.0")
    assert loaded.policy.vision.fields == {"adopters": "count", "years_of_use": "number"}
    assert loaded.policy.units.fold == "impact_points"  # other tables still merge key by key


# ---------------------------------------------------------------------- located errors
def line_of(path: Path, pattern: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if re.match(pattern, t))


@pytest.mark.parametrize(("value", "fields", "problem"), [
    ('"adopters * usd_per_adoptr"', '{ adopters = "count", usd_per_adopter = "usd" }',
     "unknown field `usd_per_adoptr` (column 12 of the formula)"),
    ('"adopters / 0"', '{ adopters = "count" }', "division by zero (column 12 of the formula)"),
    ('"adopters > 1"', '{ adopters = "count" }', "`>` is a comparison"),
    ('"sqrt(adopters)"', '{ adopters = "count" }', "unknown function `sqrt`"),
    ('"adopters * 2 usd"', '{ adopters = "count" }', "takes no unit"),
])
def test_a_formula_that_cannot_compute_is_located_at_its_line(
        run: Run, tmp_path: Path, value: str, fields: str, problem: str) -> None:
    path = write_policy(tmp_path, "bad", f"\n[vision]\nvalue = {value}\nfields = {fields}\n" + PRIORS)
    with pytest.raises(PolicyError) as exc:
        PolicyStore([tmp_path / "policies"]).load_ref("bad@1.0.0")
    assert any(problem in m for m in exc.value.messages), exc.value.messages
    code, _, err = run("check", str(tiny(tmp_path, "bad")), "--policy-path", str(tmp_path / "policies"))
    assert code == 1
    assert f"bad/1.0.0.toml:{line_of(path, 'value =')}: error: vision.value: " in err and "PCSC-E415" in err
    assert problem in err


def test_a_field_of_no_known_kind_and_an_unread_field_are_located(run: Run, tmp_path: Path) -> None:
    path = write_policy(tmp_path, "bad", '\n[vision]\nvalue = "adopters"\n'
                        'fields = { adopters = "people", years = "number" }\n' + PRIORS)
    code, _, err = run("policy", "check", str(path))
    assert code == 1
    at = f"1.0.0.toml:{line_of(path, 'fields =')}: error: "
    assert at + "vision.fields.adopters: `people` is not a kind of number" in err
    assert at + "vision.fields.years: declared but the formula `adopters` does not read it" in err


def test_a_route_writing_a_vision_the_policy_does_not_declare_is_located(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "usdfield", USD_FIELD_POLICY)
    route = tiny(tmp_path)
    text = route.read_text().replace("adopters         4k", "adoptrs 4k").replace("years_of_use     2",
                                                                                   "years_of_use 2 usd")
    route.write_text(text)
    code, _, err = run("check", str(route), "--policy-path", str(tmp_path / "policies"))
    assert code == 1
    assert f"usdfield.route:{line_of(route, '.*adoptrs')}:9: error: unknown vision item `adoptrs` [PCSC-E220]" in err
    assert "did you mean `adopters`?" in err
    assert "vision `years_of_use` is of type number; it takes no unit `usd` [PCSC-E301]" in err


def test_usd_without_a_rate_is_a_located_error(run: Run, tmp_path: Path) -> None:
    write_policy(tmp_path, "norate", USD_FIELD_POLICY.replace("[units.rates]\nusd = 0.001\n", ""))
    route = tiny(tmp_path, "norate")
    code, _, err = run("check", str(route), "--policy-path", str(tmp_path / "policies"))
    assert code == 1
    line = line_of(route, r"\s*usd_per_adopter")
    assert f"norate.route:{line}:26: error: vision `usd_per_adopter` is written in usd, but policy `norate@1.0.0` " \
           "keeps its fold in impact_points and gives no rate for usd [PCSC-E416]" in err
    assert "1 more amount(s) of this route are in usd" in err


def test_a_rate_for_a_unit_no_route_writes_is_refused(run: Run, tmp_path: Path) -> None:
    path = write_policy(tmp_path, "eur", USD_FIELD_POLICY.replace("usd = 0.001", "usd = 0.001\neur = 2"))
    with pytest.raises(PolicyError, match="units.rates.eur: a route writes amounts only in usd"):
        PolicyStore([tmp_path / "policies"]).load_ref("eur@1.0.0")
    code, _, err = run("policy", "check", str(path))
    assert code == 1
    assert f"1.0.0.toml:{line_of(path, 'eur = ')}: error: units.rates.eur: a route writes amounts only in usd" in err


@pytest.mark.parametrize(("formula", "adopters", "problem"), [
    ("adopters * usd_per_adopter / (years_of_use - 2)", "4k", "division by zero"),
    ("adopters * adopters * usd_per_adopter * years_of_use", "1e200", "overflows"),
])
def test_a_value_that_is_not_finite_is_located_at_the_vision(
        run: Run, tmp_path: Path, formula: str, adopters: str, problem: str) -> None:
    policy = write_policy(tmp_path, "usdfield", USD_FIELD_POLICY.replace(
        '"adopters * usd_per_adopter * years_of_use"', f'"{formula}"'))
    route = tiny(tmp_path, adopters=adopters)
    code, _, err = run("compile", str(route), "--policy-path", str(tmp_path / "policies"))
    assert code == 1
    assert f"usdfield.route:{line_of(route, '.*vision b')}:5: error: the vision's value cannot be computed: " in err
    assert problem in err and "PCSC-E415" in err and f"usdfield@1.0.0 line {line_of(policy, 'value =')}" in err


# ---------------------------------------------------------------------- certificates
def resign(cert: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit a certificate as a forger who knows the format would, its digest made again."""
    import hashlib

    doc = json.loads(cert.read_text())
    edit(doc)
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["digest"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


def v_step(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in doc["routes"][0]["steps"] if s["symbol"] == "V")
    return found


@pytest.fixture
def oss_cert(run: Run, tmp_path: Path) -> Path:
    route = tmp_path / "schema_linter.route"
    route.write_text(OSS_ROUTE.read_text())
    cert = tmp_path / "out.json"
    code, _, err = run("compile", str(route), "--cert", str(cert))
    assert code == 0, err
    return cert


def test_a_policy_formula_and_unit_certify(run: Run, oss_cert: Path) -> None:
    code, out, err = run("verify-cert", str(oss_cert))
    assert code == 0, out + err
    doc = json.loads(oss_cert.read_text())
    v = v_step(doc)
    assert v["operands"]["formula"]["v"] == "adopters * hours_saved_per_adopter * years_of_use"
    assert v["value"]["f"] == 10_000 * 20 * 3


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: v_step(d)["operands"]["formula"].update(v="adopters * hours_saved_per_adopter"),
     "the formula is not the policy's [vision] value"),
    (lambda d: v_step(d).update(value={"f": 700_000.0, "q": "700000"}), "V"),
    (lambda d: next(s for s in d["routes"][0]["steps"] if s["symbol"] == "launch.budget")["operands"]["rate"]
     .update(f=0.02, q="1/50"), "launch.budget"),
])
def test_a_forged_formula_value_or_rate_does_not_verify(
        run: Run, oss_cert: Path, edit: Callable[[dict[str, Any]], None], message: str) -> None:
    resign(oss_cert, edit)
    code, out, err = run("verify-cert", str(oss_cert))
    assert code == 1 and message in out + err, out + err


# ---------------------------------------------------------------------- seams
THIRD_STAGE = '''    transition spread: stable -> popular {
        actor      "the maintainers"
        mechanism  "a hosted rules catalogue"
        class      "oss/stability"
        threshold  users >= 30k
        kill       users < 5k
        horizon    12 months
        cost {
            maintainers  2 * 60k usd
        }
        discharges adoption
    }

    evidence spread_survey {
        source    "a survey of the project's users"
        captured  2026-02-25
        tier      2
        weight    1.0
        supports  spread
        excerpt   "Most would use a hosted catalogue."
    }

'''


def test_a_seam_under_a_policy_formula_holds_its_identity(run: Run, tmp_path: Path) -> None:
    stable = "    state stable       { users 10k  maintainers 3    stable true }"
    assert stable in OSS_ROUTE.read_text()
    text = OSS_ROUTE.read_text().replace(stable, stable + "\n    state popular      { users 30k }")
    text = text.replace("vision stable {", "vision popular {").replace("    evidence plugin_installs {",
                                                                     THIRD_STAGE + "    evidence plugin_installs {")
    route = tmp_path / "three.route"
    route.write_text(text)
    code, doc = packet(run, "seams", str(route))
    assert code == 0
    [seam] = doc["routes"][0]["seams"]
    # by hand: Δ_1 = p_0 · (c_1 − v_1 + (1 − p_1) · R_2), R_2 = −c_2 + p_2 · V; every p = prior × 1.25;
    # v_1 = 4,000 points, the payoff of `adopted`, the state the deleted step leaves
    p0, p1, p2 = 0.30 * 1.25, 0.60 * 1.25, 0.60 * 1.25
    c1, c2, V = 1200.0, 1200.0, 10_000 * 20 * 3
    R2 = -c2 + p2 * V
    assert seam["delta"] == pytest.approx(p0 * (c1 - 4_000 + (1 - p1) * R2))
    assert seam["removed_payoff"] == pytest.approx(p0 * 4_000)
    assert seam["identity_holds"] and seam["delta_exact"] == seam["delta_refold"]
    assert doc["routes"][0]["unit"] == "impact_points"
    code, out, _ = run("splice", str(route), "--route", "schema_linter", "--seam", "1")
    assert code == 0 and "adopters                 10_000" in out  # the spliced route keeps the policy's fields


def test_a_require_line_reads_usd_under_a_fold_in_another_unit(run: Run, tmp_path: Path) -> None:
    """The venture formula under a fold kept in thousands of usd: `budget >= floor(delta)`
    compares the usd the route writes with the floor read back in usd, and certifies."""
    write_policy(tmp_path, "kusd", 'extends = "venture@1.0.0"\n\n[units]\nfold = "kusd"\n\n'
                 "[units.rates]\nusd = 0.001\n")
    route = tmp_path / "d.route"
    route.write_text(SPEC_ROUTE.read_text().replace("venture@1.0.0", "kusd@1.0.0"))
    cert = tmp_path / "out.json"
    code, _, err = run("compile", str(route), "--policy-path", str(tmp_path / "policies"), "--cert", str(cert))
    assert code == 3, err  # venture's floors, now read in kusd, ask 1000 times more: GATE refuses
    code, doc = packet(run, "compile", str(route), "--policy-path", str(tmp_path / "policies"))
    r = doc["routes"][0]
    assert r["value"] == pytest.approx(10e9 * 0.10 * 0.6 * 0.001) and r["unit"] == "kusd"
    # monetize writes 4 × 150k + 1 × 120k = 720k usd: 720 kusd in the fold
    assert r["transitions"][1]["budget"] == pytest.approx(720)
    code, out, err = run("verify-cert", str(cert))
    assert code == 0, out + err

    doc = json.loads(cert.read_text())
    reads = [req["operands"]["budget"] for row in doc["routes"][0]["coverage"] for o in row["obligations"]
             for req in o["requires"] if "budget" in req["operands"]]
    assert reads and all(b["usd_of"].endswith(".budget") and b["f"] in (720_000, 90_000 + 9_000, 60e6)
                         for b in reads), reads

    def forge(d: dict[str, Any]) -> None:
        for row in d["routes"][0]["coverage"]:
            for o in row["obligations"]:
                for req in o["requires"]:
                    if "budget" in req["operands"]:
                        req["operands"]["budget"].update(f=720.0, q="720")  # the kusd, not the usd written

    resign(cert, forge)
    code, out, err = run("verify-cert", str(cert))
    assert code == 1, out + err
