"""docs/security.md, claim by claim: every row of its tables of what a route's author
can and cannot do is an attack run here, with the code and exit the row states, and
every statement of what PCSC reads from where has a test below."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import pcsc
from tests.conftest import ROOT
from tests.test_policy_owner import LAX, lax_policy, lax_route
from tests.test_search_paths import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_REFUSED,
    SHIPPED_VENTURE,
    cli,
    codes_of,
    lax_library,
    lax_splice,
    reference_text,
    spliced_text,
    write,
)

PAGE = ROOT / "docs" / "security.md"
Run = tuple[int, str, str]  # exit code, standard output, standard error
Attack = Callable[[Path, pytest.MonkeyPatch], Run]


def claims(table: str) -> dict[str, str]:
    """The rows of the table after `<!-- claims: TABLE -->`: first cell -> second cell."""
    text = PAGE.read_text(encoding="utf-8")
    block = text.split(f"<!-- claims: {table} -->\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.strip("|").split(" | ") for line in block.splitlines()[2:]]
    assert rows and all(len(r) == 2 for r in rows), block
    return {r[0].strip(): r[1].strip() for r in rows}


def expected(cell: str) -> tuple[set[str], int]:
    """The codes and the exit code a row's second cell states."""
    exit_code = re.search(r"exit (\d)", cell)
    assert exit_code is not None, cell
    return set(re.findall(r"PCSC-[EW]\d+", cell)), int(exit_code[1])


def gate(route: Path, *extra: str | Path) -> Run:
    return cli("gate", route, *extra)


# ---------------------------------------------------------------------- what the author cannot do
def config_policy_path_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = lax_route(tmp / "r")
    lax_policy(tmp / "r" / "p")
    write(tmp / "r" / "pcsc.toml", 'policy_path = ["p"]\n')
    mp.chdir(tmp / "r")
    return gate(route)


def config_policy_path_below(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = lax_route(tmp / "r")
    lax_policy(tmp / "r" / "deeper" / "p")
    write(tmp / "r" / "deeper" / "pcsc.toml", 'policy_path = ["p"]\n')
    mp.chdir(tmp / "r" / "deeper")
    return gate(route)


def config_lib_path_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = lax_splice(tmp / "r")
    write(tmp / "r" / "libs" / "ventura.obl", lax_library())
    write(tmp / "r" / "pcsc.toml", 'lib_path = ["libs"]\n')
    mp.chdir(tmp / "r")
    return gate(route)


def config_coverage_off_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = write(tmp / "r" / "s.route", spliced_text())
    write(tmp / "r" / "pcsc.toml", 'coverage = "off"\n')
    mp.chdir(tmp / "r")
    return gate(route)


def run_settings_beside_from_above(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = write(tmp / "r" / "s.route", spliced_text())
    write(tmp / "r" / "pcsc.toml", 'format = "json"\nledger = "mine.sqlite"\n')
    mp.chdir(tmp)
    run = gate(route)
    assert "suspend-and-ask" in run[1] and not run[1].startswith("{"), run  # text, not the author's JSON
    code, out, _ = cli("config", route)
    assert code == EXIT_OK and "ledger          .pcsc/ledger.sqlite    # from default" in out, out
    return run


def ignore_an_error_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = write(tmp / "r" / "s.route", spliced_text())
    write(tmp / "r" / "pcsc.toml", 'ignore = ["E501"]\n')
    return gate(route)


def ignore_comment_on_the_refused_line(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    text = spliced_text().replace("transition launch: garage -> bridge {",
                                  "transition launch: garage -> bridge {  # pcsc: ignore[E501]", 1)
    assert "# pcsc: ignore[E501]" in text
    return gate(write(tmp / "s.route", text))


def config_coverage_off_under_a_raise(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    lax_policy(tmp / "roots")  # the maintainer's own policy, whose mode is off
    write(tmp / "pcsc.toml", 'coverage = "gate"\n')
    route = lax_route(tmp / "routes")
    write(tmp / "routes" / "pcsc.toml", 'coverage = "off"\n')
    mp.chdir(tmp / "routes")
    return gate(route, "--policy-path", tmp / "roots")


def config_require_policy_under_the_maintainers(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    lax_policy(tmp / "roots")
    write(tmp / "pcsc.toml", 'require_policy = ["venture"]\n')
    route = lax_route(tmp / "routes")
    write(tmp / "routes" / "pcsc.toml", f'require_policy = ["{LAX}"]\n')
    mp.chdir(tmp / "routes")
    return gate(route, "--policy-path", tmp / "roots")


def policies_folder_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = lax_route(tmp / "r")
    lax_policy(tmp / "r" / "policies")
    mp.chdir(tmp / "r")
    return gate(route)


def policy_by_path_or_look_alike(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    lax_policy(tmp / "p")
    lax_policy(tmp / "roots", "v\u0435nture")
    by_path = gate(lax_route(tmp / "a", "../p/ventura@1.0.0"))
    look_alike = gate(lax_route(tmp / "b", "v\u0435nture@1.0.0"), "--policy-path", tmp / "roots")
    assert by_path[0] == look_alike[0] and codes_of(by_path[2]) == codes_of(look_alike[2]), (by_path, look_alike)
    return look_alike


def lax_policy_under_require_policy(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    lax_policy(tmp / "roots")
    run = gate(lax_route(tmp), "--policy-path", tmp / "roots", "--require-policy", "venture@1.0.0")
    assert f"s.route:6:5: error: route names policy {LAX}" in run[2], run  # the `policy` line
    return run


def library_of_another_name(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    write(tmp / "ventura.obl", lax_library())
    run = gate(lax_splice(tmp))
    assert "s.route:7:13: error: library `ventura`" in run[2], run  # the `uses` line
    return run


def look_alike_library_name(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    runs = []
    for name in ("v\u0435nture", "\uff56enture"):
        write(tmp / name / f"{name}.obl", lax_library())
        runs.append(gate(lax_splice(tmp / name, name)))
    assert runs[0][0] == runs[1][0] and codes_of(runs[0][2]) == codes_of(runs[1][2]), runs
    return runs[0]


def library_name_in_capitals(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    write(tmp / "Venture.obl", lax_library())
    return gate(lax_splice(tmp, "Venture"))


def lax_copy_of_the_pinned_library(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    write(tmp / "venture.obl", lax_library("venture"))
    return gate(write(tmp / "s.route", spliced_text()))


def library_linked_from_outside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    outside = write(tmp / "elsewhere" / "venture.obl", lax_library("venture"))
    (tmp / "r").mkdir()
    (tmp / "r" / "venture.obl").symlink_to(outside)
    return gate(write(tmp / "r" / "s.route", spliced_text()))


def lax_library_in_a_subfolder(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    write(tmp / "obligations" / "venture.obl", lax_library("venture"))
    run = gate(write(tmp / "s.route", spliced_text()))
    assert "suspend-and-ask  (coverage gate, from the policy)" in run[1], run
    return run


AUTHOR: dict[str, Attack] = {
    "writes a `pcsc.toml` beside the route whose `policy_path` holds a lenient policy, and names it":
        config_policy_path_beside,
    "writes the same file in a folder below the route's, and pcsc runs there": config_policy_path_below,
    "writes a `pcsc.toml` beside the route whose `lib_path` holds a lenient library": config_lib_path_beside,
    'writes `coverage = "off"` in a `pcsc.toml` beside the route': config_coverage_off_beside,
    "writes `format` and `ledger` in a `pcsc.toml` beside the route, and pcsc runs above it":
        run_settings_beside_from_above,
    'writes `ignore = ["E501"]` in a `pcsc.toml` beside the route': ignore_an_error_beside,
    "writes `# pcsc: ignore[E501]` on the refused transition's line": ignore_comment_on_the_refused_line,
    'writes `coverage = "off"` beside the route, under a maintainer\'s file that raises the mode':
        config_coverage_off_under_a_raise,
    "writes `require_policy` beside the route, under a maintainer's file that requires venture":
        config_require_policy_under_the_maintainers,
    "puts a lenient policy in a `policies/` folder beside the route, and names it": policies_folder_beside,
    "names a policy by a path, or by a look-alike id (`v\u0435nture` with a Cyrillic \u0435)":
        policy_by_path_or_look_alike,
    "names a lenient policy the maintainer's policy folder holds, under `--require-policy venture@1.0.0`":
        lax_policy_under_require_policy,
    "writes a lenient library under another name (`uses ventura`)": library_of_another_name,
    "writes a look-alike name (`uses v\u0435nture`, a fullwidth `\uff56enture`)": look_alike_library_name,
    "writes the name in capitals (`uses Venture`)": library_name_in_capitals,
    "writes a lenient copy of the pinned library beside the route": lax_copy_of_the_pinned_library,
    "links the library from outside the route's folder": library_linked_from_outside,
    "puts a lenient library in a subfolder of the route's folder": lax_library_in_a_subfolder,
}


# ---------------------------------------------------------------------- what the author can still do
def another_policy_on_the_path(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    run = cli("compile", write(tmp / "r.route", reference_text("venture@1.1.0")), "--format", "json")
    assert json.loads(run[1])["routes"][0]["policy"]["version"] == "1.1.0", run
    return run


def output_settings_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = write(tmp / "r" / "s.route", spliced_text())
    write(tmp / "r" / "pcsc.toml", 'format = "json"\nledger = "mine.sqlite"\n')
    mp.chdir(tmp / "r")
    run = gate(route)
    assert json.loads(run[1])["routes"][0]["verdict"] == "suspend-and-ask", run
    code, out, _ = cli("config", "--format", "text")
    assert code == EXIT_OK and f"{tmp / 'r' / 'mine.sqlite'}    # from {tmp / 'r' / 'pcsc.toml'}" in out, out
    return run


def tightening_settings_beside(tmp: Path, mp: pytest.MonkeyPatch) -> Run:
    route = write(tmp / "r" / "r.route", reference_text())
    write(tmp / "r" / "pcsc.toml", 'coverage = "gate"\nrequire_policy = ["planner"]\n')
    mp.chdir(tmp / "r")
    return gate(route)


CAN: dict[str, Attack] = {
    "names any policy on the policy path, when nothing requires one": another_policy_on_the_path,
    "writes a `pcsc.toml` with `format`, `ledger` or `docs_url` beside the route, and pcsc runs there":
        output_settings_beside,
    "writes a `pcsc.toml` that raises the mode, or narrows `require_policy`, beside the route":
        tightening_settings_beside,
}


@pytest.mark.parametrize(("table", "attacks"), [("author", AUTHOR), ("can", CAN)])
def test_every_row_of_the_page_has_its_attack(table: str, attacks: dict[str, Attack]) -> None:
    assert set(claims(table)) == set(attacks)


@pytest.mark.parametrize("row", sorted(AUTHOR.items()) + sorted(CAN.items()), ids=lambda r: r[1].__name__)
def test_each_row_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: tuple[str, Attack]) -> None:
    said, attack = row
    cell = {**claims("author"), **claims("can")}[said]
    codes, exit_code = expected(cell)
    code, out, err = attack(tmp_path, monkeypatch)
    assert code == exit_code, (cell, out, err)
    assert codes_of(err) - {"PCSC-W604"} == codes, (cell, err)
    if exit_code != EXIT_OK:
        assert "released" not in out and "ungated" not in out, out


# ---------------------------------------------------------------------- what PCSC reads, and from where
def test_the_python_api_reads_no_configuration_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lax_policy(tmp_path / "p")
    write(tmp_path / "pcsc.toml", 'policy_path = ["p"]\ncoverage = "off"\n')
    monkeypatch.chdir(tmp_path)
    result = pcsc.compile(lax_route(tmp_path / "r"))
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["PCSC-E401"]
    result = pcsc.compile(write(tmp_path / "s.route", spliced_text()))
    assert result.routes[0].verdict == "suspend-and-ask" and result.routes[0].coverage_mode_source == "policy"


def test_policy_folders_of_the_command_line_come_before_the_configurations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lax_policy(tmp_path / "cli")
    lax_policy(tmp_path / "cfg")
    write(tmp_path / "pcsc.toml", 'policy_path = ["cfg"]\n')
    route = lax_route(tmp_path / "routes")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli("gate", route, "--format", "json")
    assert json.loads(out)["routes"][0]["policy_found"][0]["in"] == "config"
    code, out, _ = cli("gate", route, "--policy-path", tmp_path / "cli", "--format", "json")
    assert json.loads(out)["routes"][0]["policy_found"][0]["in"] == "command line"


def test_libraries_are_searched_beside_the_route_then_the_command_line_then_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a policy that names venture without pinning it (`local_libraries = true`),
    the first venture.obl found judges: the packet says which folder it came from."""
    write(tmp_path / "roots" / "loose" / "1.0.0.toml", '[policy]\nid = "loose"\nversion = "1.0.0"\n'
          'extends = "venture@1.0.0"\nlocal_libraries = true\n\n[libraries.venture]\n')
    write(tmp_path / "pcsc.toml", 'lib_path = ["cfg"]\n')
    route = write(tmp_path / "routes" / "r.route", reference_text("loose@1.0.0"))
    copies = [tmp_path / "routes", tmp_path / "cli", tmp_path / "cfg"]
    for folder in copies:
        write(folder / "venture.obl", SHIPPED_VENTURE.read_text(encoding="utf-8") + f"# {folder.name}\n")
    monkeypatch.chdir(tmp_path)
    seen = []
    for folder in [*copies, None]:
        code, out, err = cli("compile", route, "--policy-path", tmp_path / "roots", "--lib-path", tmp_path / "cli",
                             "--format", "json")
        assert code == EXIT_OK, err
        seen.append(json.loads(out)["routes"][0]["libraries"][0]["found"]["in"])
        if folder is not None:
            (folder / "venture.obl").unlink()
    assert seen == ["route folder", "command line", "config", "shipped"]


def test_the_api_records_its_own_folders(tmp_path: Path) -> None:
    lax_policy(tmp_path / "roots")
    doc = pcsc.compile(lax_route(tmp_path), policy_path=tmp_path / "roots").to_json()
    assert doc["routes"][0]["policy_found"][0] == {
        "policy": LAX, "in": "api argument", "file": str(tmp_path / "roots" / "ventura" / "1.0.0.toml"),
        "config": None}


def test_a_nearer_configuration_hides_the_maintainers_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lax_policy(tmp_path / "p")
    write(tmp_path / "pcsc.toml", 'policy_path = ["p"]\n')
    route = lax_route(tmp_path / "routes")
    write(tmp_path / "routes" / "pcsc.toml", 'format = "text"\n')
    monkeypatch.chdir(tmp_path / "routes")
    code, out, err = cli("gate", route)
    assert code == EXIT_ERRORS and codes_of(err) - {"PCSC-W604"} == {"PCSC-E401"} and not out, err


def test_the_pages_ci_command_releases_only_what_the_required_policy_releases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = re.search(r"```sh\n# CI, from the repository's root\n(pcsc .*)\n```", PAGE.read_text(encoding="utf-8"))
    assert block is not None
    argv = shlex.split(block[1].split(">")[0])[1:]
    write(tmp_path / "routes" / "honest" / "r.route", reference_text())
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(*argv)
    assert code == EXIT_OK and json.loads(out)["routes"][0]["verdict"] == "released", err
    lax_policy(tmp_path / "policies")
    write(tmp_path / "pcsc.toml", 'policy_path = ["policies"]\n')  # the maintainer's folder holds ventura
    lax_route(tmp_path / "routes" / "author")
    code, out, err = cli(*argv)
    doc = json.loads(out)
    assert code == EXIT_REFUSED, err
    assert [d["code"] for d in doc["diagnostics"] if d["severity"] == "error"] == ["PCSC-E414"]
    assert [r["file"] for r in doc["routes"]] == ["routes/honest/r.route"]  # the honest route alone compiled
