"""Every registered code is emitted by a test of the default run, so no code is dead and
none is registered without an input that shows it.

The corpus is the bad-input cases of tests/test_diagnostics.py (`CASES`: the reference
route with one mutation each, whose codes `test_bad_input_case` asserts) and the golden
files of tests/data/diagnostics/ (`test_golden_diagnostics` compares the whole output).
A code no route text can give (a ledger, a certificate, a command's output, a limit too
large for a case) is in `ELSEWHERE`, with the test that emits and asserts it; the last
few, which no other test names, are emitted by the tests at the end of this module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pcsc.diagnostics.codes import CODES
from tests.conftest import ROOT, run_cli
from tests.test_diagnostics import CASES, GOLDEN

THIS = "tests/test_codes_emitted.py"

# code -> the test that emits it and names it (most often in an assertion on its output)
ELSEWHERE = {
    "PCSC-E105": "tests/test_api.py::test_a_missing_path_is_a_diagnostic_not_an_exception",  # an unreadable path
    "PCSC-E106": "tests/test_api.py::test_a_folder_without_routes",  # a folder
    "PCSC-E108": "tests/test_experiments.py::test_artifacts_that_cannot_be_written_are_a_diagnostic",  # an output
    "PCSC-E109": "tests/test_messages.py::test_unknown_horizon_unit_lists_the_valid_units",
    "PCSC-E110": "tests/test_robustness.py::test_nul_is_an_error",
    "PCSC-E111": "tests/test_robustness.py::test_deep_expressions_are_refused",  # thousands of operators
    "PCSC-E112": "tests/test_no_exit70.py::test_a_file_over_the_limit_is_refused_before_reading",  # megabytes
    "PCSC-E113": "tests/test_ircache_bound.py::test_clear_refuses_a_folder_others_can_write",  # `pcsc cache clear`
    "PCSC-E115": "tests/test_extras.py::test_a_missing_extra_in_json",  # an extra not installed
    "PCSC-E126": "tests/test_floods.py::test_a_line_over_the_limit_is_refused_before_it_is_lexed",
    "PCSC-E217": "tests/test_library_checks.py::test_unknown_names_in_require_lines_are_errors",  # a library
    "PCSC-E219": "tests/test_diagnostics.py::test_route_without_transitions",
    "PCSC-E222": "tests/test_robustness.py::test_transitions_limit",  # thousands of transitions
    "PCSC-E223": "tests/test_robustness.py::test_routes_per_file_limit",  # thousands of routes
    "PCSC-E224": "tests/test_graph_routes.py::test_branches_that_set_a_field_differently_need_the_join_to_say",
    "PCSC-E308": "tests/test_diagnostics.py::test_unknown_library_with_errors_is_reported_in_both_files",
    "PCSC-E311": "tests/test_no_exit70.py::test_a_seam_threshold_beyond_the_floats_is_e311",
    "PCSC-E312": "tests/test_robustness.py::test_threshold_types_are_checked",
    "PCSC-E313": "tests/test_units.py::test_a_bound_in_another_unit_is_refused_where_it_is_written",  # a library
    "PCSC-E314": "tests/test_kill_by.py::test_a_kill_armed_outside_its_window_is_a_located_error",
    "PCSC-E404": "tests/test_library_checks.py::test_a_typo_in_a_library_fails_check_of_a_route_that_uses_it",
    "PCSC-E405": "tests/test_check_refuses.py::test_check_reports_what_compile_refuses",  # a policy's gate rule
    "PCSC-E407": "tests/test_cli.py::test_bad_configuration_is_an_error",  # pcsc.toml
    "PCSC-W609": "tests/test_suppress.py::test_a_comment_naming_an_error_leaves_it_reported",  # a comment
    "PCSC-E408": "tests/test_confinement.py::test_a_link_out_of_a_route_folder_is_refused_and_never_read",
    "PCSC-E409": (
        "tests/test_policy_owner.py::test_a_file_of_the_pinned_name_that_declares_another_library_stays_refused"
    ),
    "PCSC-E410": "tests/test_search_paths.py::test_policy_check_refuses_a_pin_of_another_version_or_of_nothing",
    "PCSC-E413": "tests/test_policy_owner.py::test_a_lax_library_in_a_subfolder_of_the_routes_folder_is_never_searched",
    "PCSC-E414": "tests/test_policy_owner.py::test_require_policy_holds_in_worker_processes",  # --require-policy
    "PCSC-E419": "tests/test_payoffs.py::test_a_bad_payoff_is_a_located_diagnostic",  # a policy without [payoffs]
    "PCSC-E415": "tests/test_vision_formula.py::test_a_value_that_is_not_finite_is_located_at_the_vision",  # a policy
    "PCSC-E416": "tests/test_vision_formula.py::test_usd_without_a_rate_is_a_located_error",  # a policy's units
    "PCSC-E502": "tests/test_admission.py::test_check_reports_it_at_the_class_line_in_text_json_and_sarif",
    "PCSC-E503": "tests/test_admission.py::test_check_reports_registry_findings_by_mode",
    "PCSC-W502": "tests/test_admission.py::test_under_dock_check_warns_instead",
    "PCSC-W503": "tests/test_admission.py::test_under_dock_check_warns_instead",
    "PCSC-W504": "tests/test_admission.py::test_check_reports_registry_findings_by_mode",
    "PCSC-E701": "tests/test_resolve.py::test_command_refuses_bad_outcomes_and_packets",  # an outcomes file
    "PCSC-E702": "tests/test_resolve.py::test_command_refuses_fields_the_route_does_not_have",
    "PCSC-E711": "tests/test_forecast_loop.py::test_ledger_errors_are_diagnostics",  # the ledger
    "PCSC-E712": "tests/test_ledger.py::test_verify_names_the_first_edited_row",
    "PCSC-E713": f"{THIS}::test_resolve_with_an_empty_ledger",
    "PCSC-E714": "tests/test_ledger.py::test_show_refuses_a_row_edited_into_nonsense",
    "PCSC-E715": "tests/test_routecast.py::test_a_freeze_records_its_mode_and_a_retrospective_one_needs_a_past_as_of",
    "PCSC-E716": "tests/test_ledger_hardening.py::test_verify_head_catches_a_rewritten_chain",
    "PCSC-E717": "tests/test_ledger_hardening.py::test_a_tampered_checkpoint_or_a_wrong_key_is_refused",
    "PCSC-E718": "tests/test_ledger_tamper.py::test_a_swallowing_trigger_never_gets_a_forecast_reported_as_frozen",
    "PCSC-E719": "tests/test_ledger_tamper.py::test_a_row_stored_otherwise_than_written_is_refused",
    "PCSC-E721": "tests/test_resolve.py::test_command_refuses_bad_outcomes_and_packets",  # frozen packets
    "PCSC-E731": "tests/test_metrics.py::test_bad_tables_exit_1_with_a_message",  # a score table
    "PCSC-E761": "tests/test_prereg.py::test_forecasts_of_different_scorer_code_are_not_pooled",
    "PCSC-E762": "tests/test_prereg.py::test_a_claim_error_is_located_in_the_plan_file",  # a plan file
    "PCSC-E763": "tests/test_prereg.py::test_a_plan_frozen_after_an_outcome_is_refused",
    "PCSC-E764": "tests/test_prereg.py::test_blind_resolution_refuses_what_it_cannot_use",  # a blind map
    "PCSC-W761": "tests/test_prereg.py::test_forecasts_of_different_scorer_code_are_not_pooled",
    "PCSC-W762": "tests/test_prereg.py::test_a_plan_frozen_before_its_outcomes_is_graded",
    "PCSC-E732": "tests/test_routecast.py::test_the_export_is_a_score_table_evaluate_grades_with_its_checksum",
    "PCSC-E741": "tests/test_routecast.py::test_a_retrospective_forecast_is_not_graded_on_outcomes_recorded_before_it",
    "PCSC-E742": "tests/test_forecast_loop.py::test_nothing_to_grade_and_the_envelope",
    "PCSC-E743": f"{THIS}::test_a_plot_that_cannot_be_written",
    "PCSC-E744": f"{THIS}::test_compare_with_a_class_the_old_policy_lacks",
    "PCSC-E745": "tests/test_routecast.py::test_the_two_modes_never_pool",
    "PCSC-E746": "tests/test_doc_claims.py::test_fit_with_nothing_resolved_refuses_and_writes_nothing",
    "PCSC-E751": f"{THIS}::test_rank_of_a_file_that_compiles_no_route",
    "PCSC-E801": "tests/test_policy_tests.py::test_a_malformed_test_file_is_a_diagnostic",  # `pcsc test`
    "PCSC-E802": "tests/test_policy_tests.py::test_several_routes_need_route_name",
    "PCSC-E803": "tests/test_policy_tests.py::test_a_folder_without_test_files_is_an_error",
    "PCSC-E811": "tests/test_init.py::test_init_twice_refuses_and_names_the_files",  # `pcsc init`
    "PCSC-E812": f"{THIS}::test_init_where_a_file_stands_in_the_way",
    "PCSC-E901": "tests/test_decisions.py::test_an_unknown_override_key_is_a_path_addressed_error",  # --set
    "PCSC-E911": "tests/test_cert_binding.py::test_a_certificate_that_is_not_a_regular_file_is_refused",
    "PCSC-E912": "tests/test_cert_binding.py::test_dropping_the_uncovered_rows_and_releasing_fails",
    "PCSC-E913": "tests/test_cert_binding.py::test_a_file_over_the_size_limit_is_refused",
    "PCSC-W501": "tests/test_diagnostics.py::test_check_reports_each_uncovered_change_by_the_coverage_mode",  # dock
    "PCSC-W606": "tests/test_robustness.py::test_bidi_control_is_a_warning_naming_it",
    "PCSC-W607": "tests/test_routecast.py::test_a_duplicated_evidence_item_counts_once_and_warns",
    "PCSC-W608": "tests/test_routecast.py::test_explain_shows_excluded_evidence_with_its_reason",
    "PCSC-W610": "tests/test_units.py::test_a_ratio_over_one_in_a_route_warns_at_the_value",
    "PCSC-W620": "tests/test_clean_output.py::test_a_diagnostic_escapes_its_file_name_message_and_snippet",
    "PCSC-W701": f"{THIS}::test_compare_with_a_class_the_old_policy_lacks",  # an outcome of no frozen route
    "PCSC-W702": "tests/test_routecast.py::test_blinding_masks_the_cues_and_keeps_the_numbers",  # --leakage, blind
    "PCSC-W731": "tests/test_covariates.py::test_one_command_reproduces_the_recognition_numbers",  # --covariate
    "PCSC-W751": "tests/test_forecast_loop.py::test_evaluate_warns_when_it_pools_forecasts_of_several_policies",
}


def corpus_codes() -> set[str]:
    found = {code for case in CASES for code in (case.codes or (case.code,))}
    for route in GOLDEN:
        found |= set(re.findall(r"\[(PCSC-[EW]\d{3})\]", route.with_suffix(".expected.txt").read_text("utf-8")))
    return found


def test_every_registered_code_is_emitted_by_the_corpus_or_a_named_test() -> None:
    corpus = corpus_codes()
    assert sorted(corpus - set(CODES)) == [], "the corpus names codes that are not registered"
    assert sorted(set(CODES) - corpus - set(ELSEWHERE)) == [], "registered, emitted by no test: dead, or untested"
    assert sorted(set(ELSEWHERE) & corpus) == [], "the corpus emits these already"
    assert sorted(set(ELSEWHERE) - set(CODES)) == []


def function_source(nodeid: str) -> str | None:
    """The source of the module-level test function ``nodeid`` names, decorators included."""
    path, _, name = nodeid.partition("::")
    text = (ROOT / path).read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(text.splitlines()[first - 1 : node.end_lineno])
    return None


@pytest.mark.parametrize("code", sorted(ELSEWHERE))
def test_the_named_test_exists_and_names_its_code(code: str) -> None:
    nodeid = ELSEWHERE[code]
    source = function_source(nodeid)
    assert source is not None, f"{nodeid} is not a test function"
    # the function, or the cases its module parametrizes it with, names the code
    module = (ROOT / nodeid.partition("::")[0]).read_text(encoding="utf-8")
    assert code.removeprefix("PCSC-") in source or (
        "parametrize" in source and code.removeprefix("PCSC-") in module
    ), f"{nodeid} never names {code}"
    # and it is of the default run: not deselected as slow, nor as the fuzzer's long run
    marks = ("mark.slow", "mark.fuzz100k")
    assert not any(m in source for m in marks), f"{nodeid} is not run by default"
    assert not any(f"pytestmark = pytest.{m}" in module for m in marks), f"{nodeid} is not run by default"


# ---------------------------------------------------------------------- codes no other test names
def test_resolve_with_an_empty_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pcsc.forecast.stores import open_ledger

    ledger = tmp_path / "empty.sqlite"
    with open_ledger(ledger, create=True):
        pass
    outcomes = ROOT / "examples/cohort/outcomes_pilot.toml"
    code, _, err = run_cli(capsys, "resolve", str(outcomes), "--ledger", str(ledger))
    assert code == 1
    assert err == f"{ledger}: error: no frozen forecast to resolve (run `pcsc freeze` first) [PCSC-E713]\n"


def test_rank_of_a_file_that_compiles_no_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.route"
    broken.write_text('route broken "x" {\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "rank", str(broken))
    assert code == 1
    assert f"{broken}: error: nothing to rank: no routes in {broken} [PCSC-E751]\n" in err
    assert "[PCSC-E103]" in err  # the reason it compiled nothing, too


def test_init_where_a_file_stands_in_the_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "routes").write_text("", encoding="utf-8")  # a file where the folder of routes goes
    code, _, err = run_cli(capsys, "init", str(project))
    target = project / "routes" / "example.route"
    assert code == 1
    assert err.startswith(f"{target}: error: cannot write {target}: ") and err.endswith("[PCSC-E812]\n")


def test_a_plot_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "plot.png"
    plot.mkdir()  # a folder of the plot's name
    code, _, err = run_cli(
        capsys, "evaluate", "--scores", str(ROOT / "examples/routecast_table_a1.csv"), "--id", "blind_id",
        "--outcome", "outcome_bucket", "--positive", "S+,+", "--negative", "-", "--plot", str(plot),
    )
    assert code == 1
    assert err.startswith(f"{plot}: error: cannot write the plot: ") and err.endswith("[PCSC-E743]\n")


def test_compare_with_a_class_the_old_policy_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A route of venture@1.1.0 uses a class 1.0.0 does not have: comparing the two on its
    resolved outcome is refused. Resolving the pilot's outcomes for this one route warns of
    every other route's outcome, which no frozen packet has."""
    ledger = tmp_path / "one.sqlite"
    route = ROOT / "examples/cohort/contractor_payroll.route"
    code, _, err = run_cli(capsys, "freeze", str(route), "--retrospective", "--ledger", str(ledger))
    assert code == 0, err
    outcomes = ROOT / "examples/cohort/outcomes_pilot.toml"
    code, _, err = run_cli(capsys, "resolve", str(outcomes), "--ledger", str(ledger), "--as-of", "2019-01-01")
    assert code == 0
    assert (
        f"{outcomes}: warning: observation[0].route: no packet has route `adaptive_sat_prep`; ignored [PCSC-W701]\n"
        in err
    )
    # the class is in 1.1.0 and not in 1.0.0: the one that lacks it is named, whichever side it is on
    for old, new in (("venture@1.0.0", "venture@1.1.0"), ("venture@1.1.0", "venture@1.0.0")):
        code, _, err = run_cli(capsys, "policy", "compare", old, new, "--ledger", str(ledger),
                               "--as-of", "2019-01-01", "--holdout", "1")
        assert code == 1
        assert err == (
            f'{ledger}: error: reference class "fintech/first-users" of a frozen forecast is not in policy '
            "venture@1.0.0 [PCSC-E744]\n"
            "  help: a forecast is re-scored under both policies: compare policies that have a prior for every "
            "class it uses\n"
        )


def test_rank_of_routes_under_two_policies_warns(capsys: pytest.CaptureFixture[str]) -> None:
    old, new = ROOT / "examples/ci_cache.route", ROOT / "examples/cohort/adaptive_sat_prep.route"
    code, _, err = run_cli(capsys, "rank", str(new), str(old))
    assert code == 0
    assert re.fullmatch(
        rf"{re.escape(str(new))}: warning: routes ranked together use 2 policies: "
        r"venture@1\.0\.0 \(sha256 [0-9a-f]{12}\), "
        r"venture@1\.1\.0 \(sha256 [0-9a-f]{12}\); their numbers come from different rules\. All rank by `score`, "
        r"so they are ranked together \[PCSC-W751\]\n",
        err,
    ), err
