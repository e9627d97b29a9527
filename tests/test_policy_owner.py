"""The maintainer, not the route's author, chooses the policy that judges a route.

The attacker writes a route and any file beside it (its folder and below, a `pcsc.toml`
there included); the maintainer writes the policy folders, the configuration file above
the routes and the command line. Each attack is the refused splice of the reference
route under a policy the author brought along: `ventura@1.0.0`, a copy of venture@1.0.0
that releases whatever it judges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcsc.render import schemas
from tests.test_search_paths import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    POLICIES,
    SHIPPED_POLICY,
    cli,
    codes_of,
    lax_library,
    lax_splice,
    reference_text,
    spliced_text,
    stays_refused,
    write,
)

LAX = "ventura@1.0.0"


def lax_policy(root: Path, policy_id: str = "ventura", version: str = "1.0.0") -> Path:
    """venture@1.0.0 filed as ``policy_id@version``, with coverage off: the same prices,
    and no obligation is ever asked for."""
    text = SHIPPED_POLICY.read_text(encoding="utf-8")
    lax = text.replace('id = "venture"', f'id = "{policy_id}"').replace('version = "1.0.0"', f'version = "{version}"')
    lax = lax.replace('coverage = "gate"', 'coverage = "off"')
    assert lax.count("off") == 1 and f'id = "{policy_id}"' in lax
    return write(root / policy_id / f"{version}.toml", lax)


def lax_route(folder: Path, policy: str = LAX) -> Path:
    return write(folder / "s.route", spliced_text(policy))


def released(code: int, out: str) -> bool:
    return code == EXIT_OK and ("released" in out or "ungated" in out or '"verdict": "ungated"' in out)


# ---------------------------------------------------------------------- (a) a configuration beside the route
CONFIG_FILES = {
    "pcsc.toml": 'policy_path = ["p"]\n',
    "pyproject.toml": '[project]\nname = "x"\n\n[tool.pcsc]\npolicy_path = ["p"]\n',
}


@pytest.mark.parametrize("config", sorted(CONFIG_FILES))
@pytest.mark.parametrize("where", ["beside", "below"])
def test_a_configuration_file_beside_the_route_adds_no_policy_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, where: str
) -> None:
    """The attack: a pcsc.toml beside the route (or in a folder below it, run from
    there) adds a policy folder holding ventura@1.0.0, and the route names it. Before,
    `pcsc gate` run in that folder released the refused splice (exit 0, "ungated")."""
    folder = tmp_path / "routes" / "team"
    route = lax_route(folder)
    home = folder if where == "beside" else folder / "deeper"
    lax_policy(home / "p")
    write(home / config, CONFIG_FILES[config])
    monkeypatch.chdir(home)
    for command in ("gate", "compile", "check"):
        code, out, err = cli(command, route)
        assert code == EXIT_ERRORS and not released(code, out), (command, out, err)
        assert codes_of(err) == {"PCSC-E407"}, err
        assert f"{config}:" in err and "`policy_path`" in err and "may not add policy or library folders" in err
        assert "ventura" not in out
    code, out, _ = cli("gate", route, "--format", "json")
    assert code == EXIT_ERRORS and json.loads(out)["routes"] == []


def test_the_same_configuration_above_the_routes_folder_is_the_maintainers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A configuration file above the route's folder is the maintainer's: its folders
    count, and the packet says the policy came from there. (The maintainer pins the
    policy with `require_policy`, below.)"""
    lax_policy(tmp_path / "p")
    write(tmp_path / "pcsc.toml", 'policy_path = ["p"]\n')
    route = lax_route(tmp_path / "routes")
    for cwd in (tmp_path, tmp_path / "routes"):  # found upward from the routes' folder too
        monkeypatch.chdir(cwd)
        code, out, err = cli("gate", route, "--format", "json")
        assert code == EXIT_OK, err
        (packet,) = json.loads(out)["routes"]
        assert packet["verdict"] == "ungated"
        shown = "pcsc.toml" if cwd == tmp_path else str(tmp_path / "pcsc.toml")
        assert packet["policy_found"] == [
            {"policy": LAX, "in": "config", "file": str(Path(shown).parent / "p" / "ventura" / "1.0.0.toml")
             if cwd != tmp_path else "p/ventura/1.0.0.toml", "config": shown}]


def test_library_folders_from_a_configuration_beside_the_route_are_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = write(tmp_path / "s.route", spliced_text())
    (tmp_path / "libs").mkdir()
    write(tmp_path / "pcsc.toml", '# the project\n\nlib_path = ["libs"]\n')
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("check", route)
    assert code == EXIT_ERRORS and codes_of(err) == {"PCSC-E407"}, err
    assert "pcsc.toml:3: error: `lib_path`: pcsc.toml sits in the folder of the route s.route" in err


def test_a_route_read_from_standard_input_has_no_folder_to_be_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard input is not a file an author placed: the configuration of the folder
    pcsc runs in keeps its folders."""
    import io
    import sys

    (tmp_path / "libs").mkdir()
    write(tmp_path / "pcsc.toml", 'lib_path = ["libs"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(spliced_text()))
    code, _, err = cli("gate", "-")
    assert code == EXIT_REFUSED and "PCSC-E407" not in err, err


def test_a_policies_folder_beside_the_route_is_never_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lax_policy(tmp_path / "policies")
    lax_policy(tmp_path)
    route = lax_route(tmp_path)
    monkeypatch.chdir(tmp_path)
    for command in ("gate", "compile", "check"):
        code, out, err = cli(command, route)
        assert code == EXIT_ERRORS and codes_of(err) - {"PCSC-W604"} == {"PCSC-E401"}, (command, err)


# ---------------------------------------------------------------------- (b) --require-policy
def test_require_policy_refuses_a_route_naming_another_policy(tmp_path: Path) -> None:
    """Even with the lax policy on the maintainer's own policy path, a run that requires
    venture refuses the route: a located E414 on its `policy` line, exit 3."""
    roots = tmp_path / "roots"
    lax_policy(roots)
    route = lax_route(tmp_path)
    assert released(*cli("gate", route, "--policy-path", roots)[:2])  # the hole --require-policy closes
    for required in (["venture"], ["venture@1.0.0"], ["venture@1.0.0", "planner"]):
        flags = [a for r in required for a in ("--require-policy", r)]
        for command in ("gate", "compile"):
            code, out, err = cli(command, route, "--policy-path", roots, *flags)
            assert code == EXIT_REFUSED and not released(code, out), (command, out, err)
            assert codes_of(err) - {"PCSC-W604"} == {"PCSC-E414"}, err
            assert f"s.route:6:5: error: route names policy {LAX}, but this run requires " in err
            assert "(--require-policy)" in err
        code, _, err = cli("check", route, "--policy-path", roots, *flags)
        assert code == EXIT_ERRORS and "PCSC-E414" in codes_of(err), err
    code, out, _ = cli("gate", route, "--policy-path", roots, "--require-policy", "venture", "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    assert doc["routes"] == [] and [d["code"] for d in doc["diagnostics"] if d["severity"] == "error"] == [
        "PCSC-E414"]


def test_require_policy_admits_the_named_policy_and_an_id_admits_every_version(tmp_path: Path) -> None:
    reference = write(tmp_path / "r.route", reference_text())
    newer = write(tmp_path / "n.route", reference.read_text(encoding="utf-8").replace(
        '"venture@1.0.0"', '"venture@1.1.0"'))
    assert cli("gate", reference, "--require-policy", "venture@1.0.0")[0] == EXIT_OK
    assert cli("gate", newer, "--require-policy", "venture")[0] == EXIT_OK
    code, _, err = cli("gate", newer, "--require-policy", "venture@1.0.0")
    assert code == EXIT_REFUSED and "route names policy venture@1.1.0" in err
    assert cli("gate", newer, "--require-policy", "venture@1.0.0", "--require-policy", "venture@1.1.0")[0] == EXIT_OK


@pytest.mark.parametrize("bad", ["Venture", "venture@", "../venture", "venture@1.0.0/x", "", "v\u0435nture"])
def test_require_policy_takes_a_policy_name(bad: str) -> None:
    code, _, err = cli("gate", SHIPPED_POLICY, "--require-policy", bad)
    assert code == EXIT_USAGE and "--require-policy: expected a policy id or id@version" in err


def test_require_policy_holds_in_worker_processes(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    lax_policy(roots)
    lax_route(tmp_path / "a")
    lax_route(tmp_path / "b")
    for command in ("gate", "check"):
        code, _, err = cli(command, tmp_path / "a", tmp_path / "b", "--jobs", "2", "--policy-path", roots,
                           "--require-policy", "venture")
        assert code in (EXIT_REFUSED, EXIT_ERRORS) and err.count("[PCSC-E414]") == 2, (command, err)


def test_require_policy_in_the_maintainers_configuration_is_never_loosened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`require_policy` is read from every configuration file from the working folder up,
    and each holds: a file nearer the routes (the author's) only narrows it, and a flag
    adds to it."""
    roots = tmp_path / "roots"
    lax_policy(roots)
    write(tmp_path / "pcsc.toml", 'require_policy = ["venture@1.0.0"]\n')
    folder = tmp_path / "routes"
    route = lax_route(folder)
    monkeypatch.chdir(folder)
    for nearer in (None, 'require_policy = ["ventura"]\n', f'require_policy = ["{LAX}", "venture"]\n', "\n"):
        if nearer is not None:
            write(folder / "pcsc.toml", nearer)
        code, out, err = cli("gate", route, "--policy-path", roots)
        assert code == EXIT_REFUSED and not released(code, out), (nearer, err)
        assert f"`require_policy` in {tmp_path / 'pcsc.toml'}" in err, err
    code, _, err = cli("gate", route, "--policy-path", roots, "--require-policy", "ventura")  # a flag adds
    assert code == EXIT_REFUSED and "(--require-policy)" not in err and "PCSC-E414" in codes_of(err)
    (folder / "pcsc.toml").unlink()
    (tmp_path / "pcsc.toml").write_text(f'require_policy = ["{LAX}"]\n', encoding="utf-8")
    assert released(*cli("gate", route, "--policy-path", roots)[:2])  # the maintainer's own choice
    code, _, err = cli("gate", route, "--policy-path", roots, "--require-policy", "venture")
    assert code == EXIT_REFUSED and "(--require-policy)" in err


@pytest.mark.parametrize(("value", "message"), [
    ('["Venture"]', "'Venture' is not a policy id or id@version"),
    ("[]", "`require_policy` lists no policy"),
    ("[1]", "`require_policy` must be a list of policies"),
])
def test_a_malformed_require_policy_is_an_error_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    write(tmp_path / "pcsc.toml", f"require_policy = {value}\n")
    route = write(tmp_path / "r" / "s.route", spliced_text())
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("gate", route)
    assert code == EXIT_ERRORS and "PCSC-E407" in codes_of(err) and message in err, err


def test_a_configuration_nearer_the_routes_never_drops_a_raised_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`coverage` too is read from every file up: the most demanding one wins."""
    roots = tmp_path / "roots"
    lax_policy(roots)
    write(tmp_path / "pcsc.toml", 'coverage = "gate"\n')
    folder = tmp_path / "routes"
    route = lax_route(folder)
    monkeypatch.chdir(folder)
    for nearer in (None, 'coverage = "off"\n', 'coverage = "dock"\n', "format = \"text\"\n"):
        if nearer is not None:
            write(folder / "pcsc.toml", nearer)
        code, out, _ = cli("gate", route, "--policy-path", roots)
        assert code == EXIT_REFUSED, (nearer, out)
        assert "suspend-and-ask  (coverage gate, from the configuration file)" in out
        code, out, _ = cli("config")
        assert f"coverage        gate    # from {tmp_path / 'pcsc.toml'}" in out, out


# ---------------------------------------------------------------------- (c) where each file was found
def test_the_packet_says_where_each_policy_and_library_was_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For each policy of the chain and each library: shipped, a folder of the command
    line, a configuration file's folder (and which file), or the route's own folder."""
    cli_roots, cfg_roots = tmp_path / "cli-roots", tmp_path / "cfg-roots"
    write(cfg_roots / "child" / "1.0.0.toml",
          '[policy]\nid = "child"\nversion = "1.0.0"\nextends = "mid@1.0.0"\nlocal_libraries = true\n'
          '[libraries.venture]\n')
    write(cli_roots / "mid" / "1.0.0.toml", '[policy]\nid = "mid"\nversion = "1.0.0"\nextends = "venture@1.0.0"\n')
    write(tmp_path / "pcsc.toml", 'policy_path = ["cfg-roots"]\nlib_path = ["libs"]\n')
    route = write(tmp_path / "routes" / "r.route", reference_text("child@1.0.0"))
    library = write(tmp_path / "libs" / "venture.obl", SHIPPED_POLICY.parent.parent.parent.joinpath(
        "obligations", "venture.obl").read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    for command in ("compile", "gate"):
        code, out, err = cli(command, route, "--policy-path", cli_roots, "--format", "json")
        assert code == EXIT_OK, err
        doc = json.loads(out)
        schemas.validate(doc)
        (packet,) = doc["routes"]
        assert packet["policy_found"] == [
            {"policy": "child@1.0.0", "in": "config", "file": "cfg-roots/child/1.0.0.toml", "config": "pcsc.toml"},
            {"policy": "mid@1.0.0", "in": "command line", "file": "cli-roots/mid/1.0.0.toml", "config": None},
            {"policy": "venture@1.0.0", "in": "shipped", "file": None, "config": None},
        ]
        if command == "compile":
            (use,) = packet["libraries"]
            assert use["found"] == {"in": "config", "file": "libs/venture.obl", "config": "pcsc.toml"}
    code, out, _ = cli("compile", route, "--policy-path", cli_roots, "--lib-path", library.parent, "--format", "json")
    (use,) = json.loads(out)["routes"][0]["libraries"]
    assert use["found"] == {"in": "command line", "file": "libs/venture.obl", "config": None}
    library.unlink()
    code, out, _ = cli("compile", route, "--policy-path", cli_roots, "--format", "json")
    (use,) = json.loads(out)["routes"][0]["libraries"]
    assert use["found"] == {"in": "shipped", "file": None, "config": None} and use["shipped"] is True


# ---------------------------------------------------------------------- the lax-library splice, more variants
@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("used", [
    "\U0001d42fenture",  # MATHEMATICAL BOLD SMALL V: NFKC folds it to `v`
    "\u24e5enture",  # CIRCLED LATIN SMALL LETTER V
    "\u1d5benture",  # MODIFIER LETTER SMALL V
    "ven\u200dture",  # a zero-width joiner: invisible
    "ven\u00adture",  # a soft hyphen: invisible
    "v\u0435ntur\u0435",  # two Cyrillic е
    "\u0475enture",  # CYRILLIC SMALL LETTER IZHITSA, a look-alike v
])
def test_a_look_alike_name_is_not_a_name(tmp_path: Path, policy: str, used: str) -> None:
    """Names are ASCII: a name NFKC would fold to `venture`, or that looks like it, does
    not lex, whatever file of that name sits beside the route."""
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / f"{used}.obl", lax_library())
    assert stays_refused(lax_splice(tmp_path, used), *extra) == {"PCSC-E102"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_in_a_subfolder_of_the_routes_folder_is_never_searched(tmp_path: Path, policy: str) -> None:
    extra = POLICIES[policy](tmp_path)
    for sub in ("obligations", "lib", "venture"):
        write(tmp_path / sub / "ventura.obl", lax_library())
        write(tmp_path / sub / "venture.obl", lax_library("venture"))
    assert stays_refused(lax_splice(tmp_path), *extra) == {"PCSC-E206"}  # not found: never read
    code, out, err = cli("gate", write(tmp_path / "v.route", spliced_text()), *extra)  # the shipped venture judges
    assert code == EXIT_REFUSED and "suspend-and-ask" in out, err
    # only a folder the maintainer names is searched, and it admits no other name or content
    for sub in ("obligations", "lib", "venture"):
        assert stays_refused(lax_splice(tmp_path), "--lib-path", tmp_path / sub, *extra) == {"PCSC-E413"}
        assert stays_refused(tmp_path / "v.route", "--lib-path", tmp_path / sub, *extra) == {"PCSC-E409"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_used_beside_the_pinned_one_stays_refused(tmp_path: Path, policy: str) -> None:
    """`uses venture, ventura`: the pinned library, and a lax one that claims to cover
    the same changes. The policy never named `ventura`."""
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / "ventura.obl", lax_library())
    text = spliced_text()
    route = write(tmp_path / "s.route", text.replace("uses    venture\n", "uses    venture, ventura\n"))
    assert "venture, ventura" in route.read_text(encoding="utf-8")
    assert "PCSC-E413" in stays_refused(route, *extra)


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_file_of_the_pinned_name_that_declares_another_library_stays_refused(tmp_path: Path, policy: str) -> None:
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / "venture.obl", lax_library("ventura"))  # venture.obl, declaring `library ventura`
    assert stays_refused(write(tmp_path / "s.route", spliced_text()), *extra) & {"PCSC-E404", "PCSC-E409"}


def test_a_lax_library_through_a_configuration_beside_the_route_stays_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "libs" / "ventura.obl", lax_library())
    write(tmp_path / "libs" / "venture.obl", lax_library("venture"))
    lax, pinned = lax_splice(tmp_path), write(tmp_path / "v.route", spliced_text())
    write(tmp_path / "pcsc.toml", 'lib_path = ["libs"]\n')
    monkeypatch.chdir(tmp_path)
    assert stays_refused(lax) == {"PCSC-E407"}
    assert stays_refused(pinned) == {"PCSC-E407"}


@pytest.mark.parametrize("ref", ["v\u0435nture@1.0.0", "Venture@1.0.0", "\uff56enture@1.0.0", "venture@1.0.0\u200d"])
def test_a_look_alike_policy_name_is_not_a_policy_reference(tmp_path: Path, ref: str) -> None:
    """The lax policy filed under a look-alike id in the maintainer's own policy folder:
    the route's reference is not well formed, so nothing is looked up."""
    roots = tmp_path / "roots"
    lax_policy(roots, ref.split("@")[0])
    route = lax_route(tmp_path / "r", ref)
    for command in ("gate", "compile", "check"):
        code, out, err = cli(command, route, "--policy-path", roots)
        assert code == EXIT_ERRORS and not released(code, out), (command, err)
        assert codes_of(err) - {"PCSC-W604"} == {"PCSC-E406"}, err


# ---------------------------------------------------------------------- where the coverage mode came from
@pytest.mark.parametrize(("coverage", "source"), [(None, "policy"), ("off", "api argument"),
                                                   ("dock", "api argument"), ("gate", "api argument")])
def test_the_api_says_its_argument_set_the_mode(tmp_path: Path, coverage: str | None, source: str) -> None:
    import pcsc

    route = write(tmp_path / "s.route", spliced_text())
    result = pcsc.compile(route, coverage=coverage)  # type: ignore[arg-type]
    (packet,) = result.routes
    assert (packet.coverage_mode, packet.coverage_mode_source) == (coverage or "gate", source)
    doc = result.to_json()
    schemas.validate(doc)
    assert doc["routes"][0]["coverage"] == {"mode": coverage or "gate", "mode_source": source, "policy_mode": "gate"}


def test_a_policy_test_case_says_it_set_the_mode(tmp_path: Path) -> None:
    route = write(tmp_path / "s.route", spliced_text())
    write(tmp_path / "r.route", reference_text())
    tests = write(tmp_path / "t.pcsctest.toml", f'[defaults]\nroute = "{route.name}"\n\n'
                  '[[case]]\nname = "as the policy says"\nexpect.verdict = "suspend-and-ask"\n\n'
                  '[[case]]\nname = "lowered"\ncoverage = "off"\nexpect.verdict = "ungated"\n\n'
                  '[[case]]\nname = "lowered, spliced"\nroute = "r.route"\nsplice = 1\ncoverage = "dock"\n'
                  'expect.verdict = "docked"\n')
    code, out, err = cli("test", tests, "--format", "json")
    assert code == EXIT_OK, out + err
    doc = json.loads(out)
    schemas.validate(doc)
    observed = [c["observed"]["coverage"] for c in doc["files"][0]["cases"]]
    assert observed == [
        {"mode": "gate", "mode_source": "policy", "policy_mode": "gate"},
        {"mode": "off", "mode_source": "test case", "policy_mode": "gate"},
        {"mode": "dock", "mode_source": "test case", "policy_mode": "gate"},
    ]


@pytest.mark.parametrize("command", ["gate", "compile"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_lowered_mode_says_so_in_the_verdict_line(tmp_path: Path, command: str, jobs: str) -> None:
    write(tmp_path / "a" / "s.route", spliced_text())
    write(tmp_path / "b" / "s.route", spliced_text())
    code, out, err = cli(command, tmp_path / "a", tmp_path / "b", "--coverage", "off", "--jobs", jobs)
    assert code == EXIT_OK, err
    assert out.count("ungated  (coverage off, from the command line: lowered from the policy's gate)") == 2, out
    code, out, err = cli(command, tmp_path / "a", "--coverage", "gate", "--jobs", jobs)
    assert code == EXIT_REFUSED and "suspend-and-ask  (coverage gate, from the command line)" in out, out


@pytest.mark.parametrize("command", ["rank", "explain", "seams", "sensitivity", "freeze", "report"])
def test_the_configurations_require_policy_holds_for_every_command_that_reads_routes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`--require-policy` belongs to gate, compile and check; the project's
    `require_policy` holds wherever a route is compiled (a ranking, a report, …)."""
    lax_policy(tmp_path / "roots")
    route = write(tmp_path / "routes" / "r.route", reference_text(LAX))
    write(tmp_path / "pcsc.toml", 'require_policy = ["venture@1.0.0"]\n')
    monkeypatch.chdir(tmp_path)
    extra = {"report": ["-o", tmp_path / "r.html"], "freeze": ["--ledger", tmp_path / "l.sqlite"]}.get(command, [])
    code, out, err = cli(command, route, "--policy-path", tmp_path / "roots", *extra)
    assert code in (EXIT_ERRORS, EXIT_REFUSED) and "PCSC-E414" in codes_of(err), (code, out, err)
    (tmp_path / "pcsc.toml").unlink()
    assert cli(command, route, "--policy-path", tmp_path / "roots", *extra)[0] == EXIT_OK


def test_a_refusal_and_a_release_share_the_ir_cache_without_leaking(tmp_path: Path) -> None:
    """Lowered under a refused policy (its libraries resolved as under none), a route
    cached then is checked again under its policy's pins when it is read without the
    requirement."""
    write(tmp_path / "ventura.obl", lax_library())
    route = lax_splice(tmp_path)
    for _ in range(2):
        code, _, err = cli("gate", route, "--require-policy", "planner")
        assert code == EXIT_REFUSED and codes_of(err) - {"PCSC-W604"} == {"PCSC-E414"}, err
        code, _, err = cli("gate", route)
        assert code == EXIT_ERRORS and codes_of(err) - {"PCSC-W604"} == {"PCSC-E413"}, err
