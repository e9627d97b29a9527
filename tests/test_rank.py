"""`pcsc rank`: gates first, then the policy's rank key; refused routes between the
released and the ineligible; ties by route name, then file; one key per ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcsc.analysis.rank import Ranked, RankKeyConflict, choose_key, rank
from pcsc.cli import main as pcsc_main
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.exits import EXIT_USAGE
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.render.packet import route_packet
from tests.conftest import EXAMPLES, POLICY_TABLES

FLAGS = EXAMPLES / "feature_flags.route"
INELIGIBLE = EXAMPLES / "db_gui_subscription.route"
DEVTOOLS = EXAMPLES / "devtools_api.route"
CI_CACHE = EXAMPLES / "ci_cache.route"
COHORT_ROUTE = EXAMPLES / "cohort" / "landlord_portal.route"


def compile_files(*paths: Path, policy_path: list[Path] | None = None) -> list[Compiled]:
    session = Session(policies=PolicyStore(policy_path or []))
    compiled = []
    for path in paths:
        for route in session.load_routes(path, str(path)):
            c = session.compile_route(route)
            assert c is not None, [d.message for d in session.diags if d.severity == "error"]
            compiled.append(c)
    assert not session.diags.has_errors
    return compiled


def ranked_by_policy(*paths: Path, policy_path: list[Path] | None = None) -> list[Ranked]:
    compiled = compile_files(*paths, policy_path=policy_path)
    key = choose_key(compiled).key
    assert key is not None
    return rank(compiled, key)


def names(ranked: list[Ranked]) -> list[str]:
    return [r.compiled.route.name for r in ranked]


def refused_copy(folder: Path, name: str, team: int = 70) -> Path:
    """devtools_api without the `kill` of `launch`: `adoption` fails, GATE refuses the score."""
    text = DEVTOOLS.read_text(encoding="utf-8")
    assert text.count("        kill       developers < 100\n") == 1
    text = text.replace("        kill       developers < 100\n", "", 1)
    text = text.replace("route devtools_api", f"route {name}", 1).replace("team     70", f"team     {team}", 1)
    path = folder / f"{name}.route"
    path.write_text(text, encoding="utf-8")
    return path


def criteria_policy(tmp_path: Path) -> Path:
    """policies/venture/9.0.0.toml: venture@1.0.0 ranking by the criteria score T."""
    root = tmp_path / "policies"
    (root / "venture").mkdir(parents=True)
    (root / "venture" / "9.0.0.toml").write_text(
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\n\n[ranking]\nkey = "criteria"\n',
        encoding="utf-8",
    )
    return root


def repinned(src: Path, folder: Path, ref: str) -> Path:
    text = src.read_text(encoding="utf-8")
    assert '"venture@1.0.0"' in text
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / src.name
    path.write_text(text.replace('"venture@1.0.0"', f'"{ref}"'), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- gates first
def test_ineligible_route_ranks_last_although_its_score_is_the_highest() -> None:
    ranked = ranked_by_policy(FLAGS, INELIGIBLE, DEVTOOLS, CI_CACHE)
    scores = {r.compiled.route.name: r.compiled.decision.score for r in ranked}
    assert scores["subscription_switch"] == max(s for s in scores.values() if s is not None)
    assert names(ranked) == ["self_serve", "enterprise_first", "devtools_api", "ci_cache", "subscription_switch"]
    last = ranked[-1]
    assert not last.eligible and last.tier == "ineligible-released"
    assert [g.passed for g in last.compiled.numbers.gates] == [False]
    eligible = [r.key_value for r in ranked[:-1]]
    assert eligible == sorted(eligible, reverse=True)  # by the released score, highest first
    assert [r.rank for r in ranked] == [1, 2, 3, 4, 5] and {r.of for r in ranked} == {5}


def test_competing_routes_of_one_file_rank_among_themselves() -> None:
    ranked = ranked_by_policy(DEVTOOLS, FLAGS)
    assert names(ranked) == ["self_serve", "enterprise_first", "devtools_api"]
    by_name = {r.compiled.route.name: r for r in ranked}
    assert (by_name["self_serve"].rank_in_file, by_name["self_serve"].of_in_file) == (1, 2)
    assert (by_name["enterprise_first"].rank_in_file, by_name["enterprise_first"].of_in_file) == (2, 2)
    assert (by_name["devtools_api"].rank_in_file, by_name["devtools_api"].of_in_file) == (1, 1)


def test_predicted_buckets_come_from_the_packet() -> None:
    for r in ranked_by_policy(FLAGS, INELIGIBLE):
        packet = route_packet(r.compiled)
        assert r.compiled.numbers.bucket == packet["bucket"]
    buckets = {r.compiled.route.name: r.compiled.numbers.bucket for r in ranked_by_policy(FLAGS, INELIGIBLE)}
    assert buckets == {"self_serve": "pos", "enterprise_first": "pos", "subscription_switch": None}


# ---------------------------------------------------------------------- the policy's key
def test_the_default_key_is_the_score_and_a_policy_can_choose_criteria(tmp_path: Path) -> None:
    assert PolicyStore().load_ref("venture@1.0.0").policy.ranking.key == "score"
    root = criteria_policy(tmp_path)
    assert PolicyStore([root]).load_ref("venture@9.0.0").policy.ranking.key == "criteria"


def test_criteria_key_orders_by_T(tmp_path: Path) -> None:
    root = criteria_policy(tmp_path)
    routes = [repinned(p, tmp_path / "routes", "venture@9.0.0") for p in (FLAGS, DEVTOOLS, CI_CACHE, INELIGIBLE)]
    by_score = ranked_by_policy(FLAGS, DEVTOOLS, CI_CACHE, INELIGIBLE)
    by_t = ranked_by_policy(*routes, policy_path=[root])
    assert names(by_score) == ["self_serve", "enterprise_first", "devtools_api", "ci_cache", "subscription_switch"]
    # T: ci_cache 65, devtools_api 63.75, self_serve 61.25, enterprise_first 57.5; the ineligible route stays last
    assert names(by_t) == ["ci_cache", "devtools_api", "self_serve", "enterprise_first", "subscription_switch"]
    assert [r.key_value for r in by_t[:4]] == [65.0, 63.75, 61.25, 57.5]
    assert {r.key for r in by_t} == {"criteria"}


def test_a_bad_ranking_key_is_a_policy_error(tmp_path: Path) -> None:
    root = tmp_path / "policies"
    (root / "venture").mkdir(parents=True)
    path = root / "venture" / "9.1.0.toml"
    path.write_text('[policy]\nid = "venture"\nversion = "9.1.0"\nextends = "venture@1.0.0"\n\n'
                    '[ranking]\nkey = "T"\nkeys = 1\n', encoding="utf-8")
    with pytest.raises(PolicyError) as exc:
        PolicyStore([root]).load_ref("venture@9.1.0")
    assert sorted(exc.value.messages) == ["ranking.key: expected one of criteria, score", "ranking.keys: unknown key"]


# ---------------------------------------------------------------------- refused routes
def test_refused_route_ranks_below_released_and_above_ineligible(tmp_path: Path) -> None:
    refused = refused_copy(tmp_path, "refused_api")
    ranked = ranked_by_policy(INELIGIBLE, refused, CI_CACHE, DEVTOOLS)
    assert names(ranked) == ["devtools_api", "ci_cache", "refused_api", "subscription_switch"]
    r = ranked[2]
    assert r.compiled.decision.verdict == "suspend-and-ask" and r.compiled.decision.score is None
    assert r.eligible and r.tier == "refused"
    # its withheld (ungated) score is above ci_cache's released one, yet it ranks below it
    ci = ranked[1].compiled.decision.score
    assert ci is not None and r.compiled.numbers.score > ci
    assert r.key_value == r.compiled.numbers.criteria_score == 63.75 and r.ordered_by == "criteria"


def test_refused_routes_are_ordered_by_T_whatever_the_key(tmp_path: Path) -> None:
    low = refused_copy(tmp_path, "a_low", team=10)  # T = (2*10 + 60 + 55) / 4 = 33.75
    high = refused_copy(tmp_path, "z_high", team=90)  # T = (2*90 + 60 + 55) / 4 = 73.75
    ranked = ranked_by_policy(low, high)
    assert names(ranked) == ["z_high", "a_low"]
    assert [r.key_value for r in ranked] == [73.75, 33.75]
    assert [r.compiled.numbers.bucket for r in ranked] == ["pos", "neg"]


def test_docked_scores_are_released_and_ranked_by_them(tmp_path: Path) -> None:
    refused = refused_copy(tmp_path, "docked_api")
    session = Session(coverage_mode="dock")
    compiled = [session.compile_route(r) for r in session.load_routes(refused) + session.load_routes(DEVTOOLS)]
    assert all(c is not None for c in compiled)
    ranked = rank([c for c in compiled if c is not None], "score")
    assert [r.compiled.decision.verdict for r in ranked] == ["released", "docked"]
    assert ranked[1].tier == "released" and ranked[1].key_value == ranked[1].compiled.decision.score


# ---------------------------------------------------------------------- ties
def test_ties_are_broken_by_route_name_then_file(tmp_path: Path) -> None:
    text = DEVTOOLS.read_text(encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    twin_b = tmp_path / "b" / "same.route"
    twin_a = tmp_path / "a" / "same.route"
    twin_b.write_text(text, encoding="utf-8")
    twin_a.write_text(text, encoding="utf-8")
    (tmp_path / "z").mkdir()
    other = tmp_path / "z" / "other.route"  # its file sorts last, its route name first
    other.write_text(text.replace("route devtools_api", "route alpha_api", 1), encoding="utf-8")
    ranked = ranked_by_policy(twin_b, twin_a, other, CI_CACHE)
    assert [(r.compiled.route.name, r.compiled.route.file) for r in ranked] == [
        ("alpha_api", str(other)),
        ("devtools_api", str(twin_a)),
        ("devtools_api", str(twin_b)),
        ("ci_cache", str(CI_CACHE)),
    ]
    assert [r.tied for r in ranked] == [True, True, True, False]
    # the order does not depend on the order of the inputs
    assert names(ranked_by_policy(CI_CACHE, other, twin_a, twin_b)) == names(ranked)


# ---------------------------------------------------------------------- mixed policies
def test_mixed_policies_with_one_key_rank_together_with_a_warning() -> None:
    compiled = compile_files(DEVTOOLS, COHORT_ROUTE)
    choice = choose_key(compiled)
    assert choice.key == "score"
    assert len(choice.warnings) == 1
    assert "venture@1.0.0" in choice.warnings[0] and "venture@1.1.0" in choice.warnings[0]
    assert names(rank(compiled, "score")) == ["landlord_portal", "devtools_api"]


def test_mixed_policies_with_different_keys_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = criteria_policy(tmp_path)
    by_t = repinned(FLAGS, tmp_path / "routes", "venture@9.0.0")
    compiled = compile_files(by_t, DEVTOOLS, policy_path=[root])
    with pytest.raises(RankKeyConflict) as exc:
        choose_key(compiled)
    message = str(exc.value)
    assert "venture@9.0.0" in message and "`criteria`" in message
    assert "venture@1.0.0" in message and "`score`" in message and "devtools_api" in message
    args = rank_args([str(by_t), str(DEVTOOLS)], policy_path=[str(root)])
    assert run_rank(args) == EXIT_USAGE  # the CLI's exit 2
    assert "different rank keys" in capsys.readouterr().err


# ---------------------------------------------------------------------- the command
def rank_args(files: list[str], fmt: str = "text", policy_path: list[str] | None = None,
              coverage: str | None = None) -> list[str]:
    argv = ["rank", *files, "--format", fmt]
    for folder in policy_path or []:
        argv += ["--policy-path", folder]
    return argv + ([] if coverage is None else ["--coverage", coverage])


def run_rank(argv: list[str]) -> int:
    return pcsc_main(argv)


def test_rank_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = refused_copy(tmp_path, "refused_api")
    assert run_rank(rank_args([str(FLAGS), str(INELIGIBLE), str(refused)], "json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["key"] == "score" and out["policy"]["id"] == "venture" and out["warnings"] == []
    rows = out["ranking"]
    assert [(r["rank"], r["route"], r["tier"], r["eligible"]) for r in rows] == [
        (1, "self_serve", "released", True),
        (2, "enterprise_first", "released", True),
        (3, "refused_api", "refused", True),
        (4, "subscription_switch", "ineligible-released", False),
    ]
    assert rows[2]["score"] is None and rows[2]["verdict"] == "suspend-and-ask" and rows[2]["key_value"] == 63.75
    assert rows[0]["score"] == rows[0]["key_value"] and rows[0]["bucket"] == "pos"
    assert rows[3]["gates"] == [{"id": "has-admissible-evidence", "kind": "eligibility", "passed": False}]
    assert [i["path"] for i in out["inputs"]] == [str(FLAGS), str(INELIGIBLE), str(refused)]


def test_rank_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = refused_copy(tmp_path, "refused_api")
    assert run_rank(rank_args([str(DEVTOOLS), str(DEVTOOLS), str(refused), str(INELIGIBLE)])) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ranked by score, the [ranking] key of policy venture@1.0.0")
    assert lines[2].startswith("ties broken by: score without the option to stop, then T, then value of learning")
    assert lines[3].split()[:3] == ["rank", "route", "file"] and lines[3].endswith("decided by")
    table = [line.split() for line in lines[4:]]
    assert [row[:2] for row in table] == [["1=", "devtools_api"], ["2=", "devtools_api"], ["3", "refused_api"],
                                          ["4", "subscription_switch"]]
    assert "withheld" in lines[6] and "suspend-and-ask" in lines[6]
    assert table[3][3] == "no"
    # the same route twice: every key ties, so the last key decides and says that it is the last
    assert lines[5].endswith("file (every earlier key tied)")
    assert [row[-1] for row in table[1:]][1:] == ["tier", "tier"]


def test_rank_exits_1_on_input_errors_and_ranks_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.route"
    broken.write_text("route broken {\n", encoding="utf-8")
    assert run_rank(rank_args([str(broken), str(DEVTOOLS)], "json")) == 1
    out = json.loads(capsys.readouterr().out)
    assert [r["route"] for r in out["ranking"]] == ["devtools_api"]
    assert any(d["severity"] == "error" and d["file"] == str(broken) for d in out["diagnostics"])


def test_rank_of_nothing_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_rank(rank_args([str(tmp_path)])) == 1
    assert "no .route files in the folder" in capsys.readouterr().err  # PCSC-E106, before "nothing to rank"


def test_rank_applies_the_coverage_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = refused_copy(tmp_path, "refused_api")
    assert run_rank(rank_args([str(refused)], "json", coverage="dock")) == 0
    (row,) = json.loads(capsys.readouterr().out)["ranking"]
    assert row["verdict"] == "docked" and row["tier"] == "released" and row["score"] is not None


# ---------------------------------------------------------------------- ties that mean something
TIES_POLICY = """[policy]
id = "ties"
version = "1.0.0"
coverage = "off"

[priors."t/half"]
p = 0.5
floor_usd = 0
source = "a test: every p is 0.5 (no evidence, so W = 1)"

[criteria]
team = 1.0

[fold]
abandonment = true

""" + POLICY_TABLES


def one_step(name: str, cost_k: int, team: int, estimates: str = "") -> str:
    """One transition with p = 0.5 to a vision worth 1M × 10% × 1 = 100,000."""
    return f"""route {name} {{
    as_of   2026-01-01
    policy  "ties@1.0.0"
    uses    venture
    state a {{ developers 0 }}
    state b {{ developers 10 }}
    vision b {{ tam 1M usd  capture 10%  defensibility 1 }}
    transition go: a -> b {{
        class "t/half"
        cost {{ work 1 * {cost_k}k usd }}
        {estimates}
    }}
    criteria {{ team {team} }}
}}
"""


def test_ties_at_zero_are_decided_by_the_sequence_not_the_name(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # By hand (V = 100,000, p = 0.5, R_0 = max(0, −c + 0.5·V) under the option to stop):
    #   yankee  c = 40k: R_0 = 10,000                                     -> first, by the score
    #   zeta    c = 60k: R_0 = 0, without the stop −60k + 50k = −10,000  -> by the score
    #   charlie c = 80k: R_0 = 0, without −30,000, T 80                  -> by the score without the stop
    #   delta   c = 80k: −30,000, T 50, estimates 0.1 0.9: learning p gives 0.1 or 0.9, worth
    #           max(0, −80k + 10k) = 0 or max(0, −80k + 90k) = 10,000; EVI = 5,000 -> by T
    #   bravo   c = 80k: −30,000, T 50, default U 0.25: 0.375 or 0.625, both worth 0; EVI = 0
    #                                                                      -> by the value of learning
    #   echo    the same numbers as bravo                                  -> by name, and says so
    # By name alone (the order before) it would be bravo, charlie, delta, echo, yankee, zeta.
    root = tmp_path / "policies" / "ties"
    root.mkdir(parents=True)
    (root / "1.0.0.toml").write_text(TIES_POLICY, encoding="utf-8")
    routes = tmp_path / "ties.route"
    routes.write_text("".join([
        one_step("bravo", 80, 50), one_step("charlie", 80, 80), one_step("delta", 80, 50, "estimates 0.1 0.9"),
        one_step("echo", 80, 50), one_step("yankee", 40, 50), one_step("zeta", 60, 50),
    ]), encoding="utf-8")
    ranked = ranked_by_policy(routes, policy_path=[tmp_path / "policies"])
    assert names(ranked) == ["yankee", "zeta", "charlie", "delta", "bravo", "echo"]
    assert [r.decided_by for r in ranked] == [None, "score", "score_without_stop", "criteria", "first_test_voi",
                                              "name"]
    by_name = {r.compiled.route.name: dict(r.sequence) for r in ranked}
    assert by_name["yankee"]["score"] == 10_000
    assert by_name["zeta"]["score"] == 0 and by_name["zeta"]["score_without_stop"] == -10_000
    assert by_name["charlie"]["score_without_stop"] == -30_000 and by_name["charlie"]["criteria"] == 80
    assert by_name["delta"]["first_test_voi"] == pytest.approx(5_000, abs=1e-6)
    assert by_name["bravo"]["first_test_voi"] == 0 == by_name["echo"]["first_test_voi"]
    assert [r.tied for r in ranked] == [False, True, True, True, True, True]  # the key (the score) ties at 0

    assert run_rank(rank_args([str(routes)], policy_path=[str(tmp_path / "policies")])) == 0
    lines = capsys.readouterr().out.splitlines()
    decided = [line.split("  ")[-1].strip() for line in lines[4:]]
    assert decided == ["—", "score", "score without the option to stop", "T", "value of learning the first test",
                       "name (every earlier key tied)"]
    assert run_rank(rank_args([str(routes)], "json", [str(tmp_path / "policies")])) == 0
    rows = json.loads(capsys.readouterr().out)["ranking"]
    assert [r["decided_by"] for r in rows] == [None, "score", "score_without_stop", "criteria", "first_test_voi",
                                               "name"]
    assert [s["key"] for s in rows[0]["sequence"]] == ["score", "score_without_stop", "criteria", "first_test_voi"]


def test_the_report_and_the_frozen_rank_say_what_decided_each_tie(tmp_path: Path) -> None:
    import html

    root = tmp_path / "policies" / "ties"
    root.mkdir(parents=True)
    (root / "1.0.0.toml").write_text(TIES_POLICY, encoding="utf-8")
    routes = tmp_path / "ties.route"
    routes.write_text(one_step("bravo", 80, 50) + one_step("zeta", 60, 50) + one_step("echo", 80, 50),
                      encoding="utf-8")
    out = tmp_path / "r.html"
    assert pcsc_main(["report", "-q", str(routes), "--policy-path", str(tmp_path / "policies"), "-o", str(out)]) == 0
    page = html.unescape(out.read_text(encoding="utf-8"))
    ranking = page[page.index('id="ranking"'):page.index("</section>", page.index('id="ranking"'))]
    assert "Ties are broken by score without the option to stop, then T" in ranking
    # zeta (−10,000 played through) above bravo (−30,000), bravo above echo by name only
    assert ranking.index("zeta") < ranking.index("bravo") < ranking.index("echo")
    # the score without the option to stop has no column: decided by gives both routes' values
    assert "score without the option to stop: -30,000.00 (above: -10,000.00)</td>" in ranking
    assert "name (every earlier key tied)</td>" in ranking
    ranked = ranked_by_policy(routes, policy_path=[tmp_path / "policies"])
    assert [r.info()["decided_by"] for r in ranked] == [None, "score_without_stop", "name"]  # as freeze stores it


def test_without_the_option_to_stop_the_second_key_never_decides(tmp_path: Path) -> None:
    root = tmp_path / "policies" / "ties"
    root.mkdir(parents=True)
    (root / "1.0.0.toml").write_text(TIES_POLICY.replace("abandonment = true", "abandonment = false"),
                                     encoding="utf-8")
    routes = tmp_path / "ties.route"
    routes.write_text(one_step("bravo", 80, 50) + one_step("zeta", 60, 50), encoding="utf-8")
    ranked = ranked_by_policy(routes, policy_path=[tmp_path / "policies"])
    # −60k + 50k = −10,000 above −80k + 50k = −30,000: the score itself decides
    assert names(ranked) == ["zeta", "bravo"] and [r.decided_by for r in ranked] == [None, "score"]
    assert [dict(r.sequence)["score_without_stop"] for r in ranked] == [-10_000, -30_000]
