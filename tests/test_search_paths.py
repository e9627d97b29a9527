"""Search paths that hold: policies and libraries are named, never addressed by path;
resolution stays inside the configured roots; the obligations that judge a route
belong to its policy (pins), not to files its author puts beside it.

Each attack is run through `pcsc.cli.main` with its expected code and exit code."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import pcsc
from pcsc.cli import main
from pcsc.pipeline import library_sha256
from pcsc.policy.load import PolicyStore
from tests.conftest import ROOT, SPEC_ROUTE

SHIPPED_VENTURE = ROOT / "obligations" / "venture.obl"
SHIPPED_POLICY = ROOT / "policies" / "venture" / "1.0.0.toml"
REFERENCE_SCORE = 885626.17
EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def codes_of(err: str) -> set[str]:
    return set(re.findall(r"\[(PCSC-[EW]\d+)\]", err))


def compile_json(*argv: str | Path) -> tuple[int, dict[str, object]]:
    code, out, err = cli("compile", *argv, "--format", "json")
    assert out, err
    return code, json.loads(out)


def route_of(doc: dict[str, object]) -> dict[str, object]:
    routes = doc["routes"]
    assert isinstance(routes, list) and len(routes) == 1, doc
    route = routes[0]
    assert isinstance(route, dict)
    return route


def reference_text(policy: str = "venture@1.0.0") -> str:
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    assert text.count('"venture@1.0.0"') == 1
    return text.replace('"venture@1.0.0"', f'"{policy}"')


def spliced_text(policy: str = "venture@1.0.0") -> str:
    """The reference route with seam 1 spliced out (`pcsc splice … --seam 1`), whose
    `launch` now also lists `monetization` in `discharges`: under the shipped
    obligations GATE refuses it (exit 3)."""
    code, out, err = cli("splice", SPEC_ROUTE, "--seam", "1")
    assert code == EXIT_OK, err
    out, n = re.subn(r"discharges adoption\n", "discharges adoption, monetization\n", out, count=1)
    assert n == 1
    return out.replace('"venture@1.0.0"', f'"{policy}"')


def always_discharging_venture() -> str:
    """The shipped venture.obl with every obligation emptied: each requires nothing, so
    whatever a route lists in `discharges` is discharged."""
    text = SHIPPED_VENTURE.read_text(encoding="utf-8")
    planted, n = re.subn(r"(obligation \w+ covers [^{]*\{)[^}]*\}", r"\1\n}", text)
    assert n == 3
    return planted


def planted_policy() -> str:
    """The reference policy with p = 0.99 for every class."""
    text, n = re.subn(r"(?m)^p = 0\.\d+$", "p = 0.99", SHIPPED_POLICY.read_text(encoding="utf-8"))
    assert n == 3
    return text


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- policy references
@pytest.mark.parametrize(
    "ref",
    ["../../x@1.0.0", "ABS/x@1.0.0", "x/../venture@1.0.0", "venture@../1.0.0", "venture@1..0", "Venture@1.0.0",
     "venture@.1", "venture@1.0.0/x"],
)
def test_a_policy_reference_is_a_name_never_a_path(tmp_path: Path, ref: str) -> None:
    ref = ref.replace("ABS", str(tmp_path))
    write(tmp_path / "x" / "1.0.0.toml", planted_policy().replace('id = "venture"', 'id = "x"'))
    route = write(tmp_path / "a" / "b" / "r.route", reference_text(ref))
    code, _, err = cli("compile", route)
    assert code == EXIT_ERRORS, err
    assert codes_of(err) - {"PCSC-W604"} == {"PCSC-E406"}, err
    assert "is not of the form `id@version`" in err and "never addressed by a path" in err


def test_extends_with_a_path_is_an_error_of_the_policy(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    write(tmp_path / "x" / "1.0.0.toml", planted_policy().replace('id = "venture"', 'id = "x"'))
    write(roots / "evil" / "1.0.0.toml", '[policy]\nid = "evil"\nversion = "1.0.0"\nextends = "../x@1.0.0"\n')
    route = write(tmp_path / "r.route", reference_text("evil@1.0.0"))
    code, _, err = cli("compile", route, "--policy-path", roots)
    assert code == EXIT_ERRORS
    assert "PCSC-E403" in codes_of(err), err
    assert "evil/1.0.0.toml: policy.extends: `../x@1.0.0` is not a policy reference" in err


def test_a_policy_linked_from_outside_its_root_is_refused(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    outside = write(tmp_path / "elsewhere" / "9.0.0.toml", planted_policy().replace("1.0.0", "9.0.0", 1))
    (roots / "venture").mkdir(parents=True)
    (roots / "venture" / "9.0.0.toml").symlink_to(outside)
    route = write(tmp_path / "r.route", reference_text("venture@9.0.0"))
    code, _, err = cli("compile", route, "--policy-path", roots)
    assert code == EXIT_ERRORS
    assert codes_of(err) - {"PCSC-W604"} == {"PCSC-E408"}, err
    assert "outside the policy folder" in err


def test_a_policy_folder_linked_from_outside_and_reached_through_extends_is_refused(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    write(tmp_path / "elsewhere" / "1.0.0.toml", planted_policy().replace('id = "venture"', 'id = "evil"'))
    roots.mkdir()
    (roots / "evil").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    write(roots / "child" / "1.0.0.toml", '[policy]\nid = "child"\nversion = "1.0.0"\nextends = "evil@1.0.0"\n')
    route = write(tmp_path / "r.route", reference_text("child@1.0.0"))
    code, _, err = cli("compile", route, "--policy-path", roots)
    assert code == EXIT_ERRORS
    assert "PCSC-E408" in codes_of(err), err
    assert "child/1.0.0.toml: policy.extends: in `evil@1.0.0`" in err


def test_a_policy_beside_the_route_is_never_read(tmp_path: Path) -> None:
    write(tmp_path / "policies" / "venture" / "1.0.0.toml", planted_policy())
    write(tmp_path / "venture" / "1.0.0.toml", planted_policy())
    route = write(tmp_path / "r.route", reference_text())
    code, doc = compile_json(route)
    assert code == EXIT_OK
    assert round(float(route_of(doc)["score"]), 2) == REFERENCE_SCORE  # type: ignore[arg-type]


def test_a_policy_path_may_override_a_shipped_policy_but_a_route_pin_guards(tmp_path: Path) -> None:
    """--policy-path is the operator's configuration, searched first (how maintainers
    override a policy); the packet's hash says which content judged the route, and a
    route that pins the hash refuses any other content."""
    roots = tmp_path / "roots"
    write(roots / "venture" / "1.0.0.toml", planted_policy())
    shipped = PolicyStore().load_ref("venture@1.0.0").sha256
    route = write(tmp_path / "r.route", reference_text())
    code, doc = compile_json(route, "--policy-path", roots)
    packet = route_of(doc)
    assert code == EXIT_OK and packet["policy"]["sha256"] != shipped  # type: ignore[index]
    assert float(packet["score"]) > 1.5e6  # type: ignore[arg-type]
    pinned = write(tmp_path / "pinned.route", reference_text().replace(
        '"venture@1.0.0"', f'"venture@1.0.0" sha256 "{shipped}"'))
    code, _, err = cli("compile", pinned, "--policy-path", roots)
    assert code == EXIT_ERRORS and "PCSC-E402" in codes_of(err), err
    code, doc = compile_json(pinned)
    assert code == EXIT_OK and round(float(route_of(doc)["score"]), 2) == REFERENCE_SCORE  # type: ignore[arg-type]


# ---------------------------------------------------------------------- libraries
def test_the_spliced_route_is_refused(tmp_path: Path) -> None:
    route = write(tmp_path / "s.route", spliced_text())
    code, _, err = cli("compile", route)
    assert code == EXIT_REFUSED, err


def test_a_library_beside_the_route_cannot_replace_the_shipped_obligations(tmp_path: Path) -> None:
    planted = write(tmp_path / "venture.obl", always_discharging_venture())
    route = write(tmp_path / "s.route", spliced_text())
    code, _, err = cli("compile", route)
    assert code == EXIT_ERRORS, err
    assert "PCSC-E409" in codes_of(err), err
    assert f"library `venture` in {planted} would replace obligations/venture.obl" in err
    assert "local_libraries = true" in err


def test_a_library_on_the_lib_path_cannot_replace_the_shipped_obligations(tmp_path: Path) -> None:
    libs = tmp_path / "libs"
    write(libs / "venture.obl", always_discharging_venture())
    route = write(tmp_path / "s.route", spliced_text())
    code, _, err = cli("compile", route, "--lib-path", libs)
    assert code == EXIT_ERRORS and "PCSC-E409" in codes_of(err), err
    code, _, err = cli("gate", route, "--lib-path", libs)
    assert code == EXIT_ERRORS and "PCSC-E409" in codes_of(err), err


def test_a_library_linked_from_outside_its_folder_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "venture.obl", always_discharging_venture())
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "venture.obl").symlink_to(outside)
    route = write(tmp_path / "here" / "s.route", spliced_text())
    code, _, err = cli("compile", route)
    assert code == EXIT_ERRORS and "PCSC-E408" in codes_of(err), err


@pytest.mark.parametrize("policy", ["venture@1.0.0", "venture@1.1.0"])
@pytest.mark.parametrize("where", ["beside", "lib-path", "both"])
def test_the_spliced_route_stays_refused_whatever_sits_beside_it(tmp_path: Path, policy: str, where: str) -> None:
    extra: list[str | Path] = []
    if where in ("beside", "both"):
        write(tmp_path / "venture.obl", always_discharging_venture())
    if where in ("lib-path", "both"):
        write(tmp_path / "libs" / "venture.obl", always_discharging_venture())
        extra = ["--lib-path", tmp_path / "libs"]
    route = write(tmp_path / "s.route", spliced_text(policy))
    for command in ("compile", "gate", "check"):
        code, _, err = cli(command, route, *extra)
        assert code in (EXIT_ERRORS, EXIT_REFUSED) and code != EXIT_OK, (command, err)
        assert "PCSC-E409" in codes_of(err), (command, err)


def test_an_identical_copy_of_a_pinned_library_is_not_a_replacement(tmp_path: Path) -> None:
    write(tmp_path / "venture.obl", SHIPPED_VENTURE.read_text(encoding="utf-8").replace("\n", "\r\n"))
    code, doc = compile_json(write(tmp_path / "r.route", reference_text()))
    assert code == EXIT_OK
    packet = route_of(doc)
    assert round(float(packet["score"]), 2) == REFERENCE_SCORE  # type: ignore[arg-type]
    assert packet["libraries"] == [{
        "name": "venture", "version": "1.0.0", "sha256": library_sha256(SHIPPED_VENTURE), "shipped": False,
        "file": str(tmp_path / "venture.obl"), "replaces": False,
    }]
    code, _, err = cli("compile", write(tmp_path / "s.route", spliced_text()))
    assert code == EXIT_REFUSED, err


def test_the_spec_copy_of_the_reference_inputs_compiles() -> None:
    spec = Path("/work/shared/spec/devtools_api.route")
    if not spec.is_file():
        pytest.skip("no spec copy on this machine")
    code, _, err = cli("check", spec)
    assert code == EXIT_OK, err


def test_a_library_with_a_new_name_beside_the_route_keeps_working(tmp_path: Path) -> None:
    write(tmp_path / "extra.obl", 'library extra version "0.1.0"\n\nfield nps ratio\n')
    route = write(tmp_path / "r.route", reference_text().replace(
        "uses    venture", "uses    venture, extra"))
    code, doc = compile_json(route)
    assert code == EXIT_OK
    packet = route_of(doc)
    assert [(u["name"], u["shipped"], u["file"], u["replaces"]) for u in packet["libraries"]] == [  # type: ignore[attr-defined]
        ("venture", True, None, False), ("extra", False, str(tmp_path / "extra.obl"), False)]
    assert packet["local_libraries"] is False


def test_a_library_is_named_never_addressed_by_path(tmp_path: Path) -> None:
    write(tmp_path / "x.obl", always_discharging_venture().replace("library venture", "library x"))
    route = write(tmp_path / "a" / "r.route", reference_text().replace("uses    venture", "uses    ../x"))
    code, _, err = cli("check", route)
    assert code == EXIT_ERRORS and codes_of(err) == {"PCSC-E101"}, err


def test_a_library_name_is_lowercase(tmp_path: Path) -> None:
    route = write(tmp_path / "r.route", reference_text().replace("uses    venture", "uses    Venture"))
    code, _, err = cli("check", route)
    assert code == EXIT_ERRORS and "PCSC-E206" in codes_of(err) and "did you mean `venture`?" in err, err


def test_a_policy_may_allow_local_libraries_and_the_packet_says_so(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    write(roots / "venture" / "9.0.0.toml", (
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\nlocal_libraries = true\n'))
    planted = write(tmp_path / "venture.obl", always_discharging_venture())
    route = write(tmp_path / "s.route", spliced_text("venture@9.0.0"))
    code, doc = compile_json(route, "--policy-path", roots)
    assert code == EXIT_OK, doc
    packet = route_of(doc)
    assert packet["local_libraries"] is True
    assert packet["libraries"] == [{
        "name": "venture", "version": "1.0.0", "sha256": library_sha256(planted), "shipped": False,
        "file": str(planted), "replaces": True,
    }]


def test_pins_are_inherited_and_a_child_may_re_pin(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    planted_text = always_discharging_venture()
    digest = library_sha256(write(tmp_path / "lib" / "venture.obl", planted_text))
    write(roots / "venture" / "9.0.0.toml", (
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.1.0"\n\n'
        f'[libraries.venture]\nversion = "1.0.0"\nsha256 = "{digest}"\n'))
    loaded = PolicyStore([roots]).load_ref("venture@9.0.0")
    assert set(loaded.policy.libraries) == {"venture", "startup"}
    assert loaded.policy.libraries["venture"].sha256 == digest
    # the re-pinned content is accepted beside the route ...
    write(tmp_path / "with" / "venture.obl", planted_text)
    code, _, err = cli("compile", write(tmp_path / "with" / "s.route", spliced_text("venture@9.0.0")),
                       "--policy-path", roots)
    assert code == EXIT_OK, err
    # ... and the shipped library, which no longer matches the pin, is refused
    code, _, err = cli("compile", write(tmp_path / "without" / "s.route", spliced_text("venture@9.0.0")),
                       "--policy-path", roots)
    assert code == EXIT_ERRORS and "PCSC-E410" in codes_of(err), err
    assert "but policy venture@9.0.0 pins" in err


def test_the_shipped_policies_pin_their_libraries() -> None:
    store = PolicyStore()
    base, cohort = store.load_ref("venture@1.0.0"), store.load_ref("venture@1.1.0")
    venture = library_sha256(SHIPPED_VENTURE)
    startup = library_sha256(ROOT / "obligations" / "startup.obl")
    assert {k: (p.version, p.sha256) for k, p in base.policy.libraries.items()} == {"venture": ("1.0.0", venture)}
    assert {k: (p.version, p.sha256) for k, p in cohort.policy.libraries.items()} == {
        "venture": ("1.0.0", venture), "startup": ("1.0.0", startup)}
    assert not base.policy.policy.local_libraries and not cohort.policy.policy.local_libraries


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[libraries.venture]\nversion = "1.0.0"\nsha256 = "abc"\n',
         "libraries.venture.sha256: expected 64 lowercase hexadecimal digits"),
        ('[libraries.venture]\nversion = "1.0.0"\nsha256 = "' + "a" * 64 + '"\nfile = "../x.obl"\n',
         "libraries.venture.file: unknown key"),
        ('[libraries."../x"]\nversion = "1.0.0"\nsha256 = "' + "a" * 64 + '"\n',
         'libraries."../x": a library name is lowercase'),
        ('[libraries.venture]\nversion = "../1"\nsha256 = "' + "a" * 64 + '"\n',
         "libraries.venture.version: `../1` is not a version"),
    ],
)
def test_a_malformed_pin_is_an_error_of_the_policy(tmp_path: Path, table: str, message: str) -> None:
    roots = tmp_path / "roots"
    write(roots / "venture" / "9.0.0.toml",
          '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\n\n' + table)
    code, _, err = cli("compile", write(tmp_path / "r.route", reference_text("venture@9.0.0")),
                       "--policy-path", roots)
    assert code == EXIT_ERRORS and "PCSC-E403" in codes_of(err), err
    assert message in err


# ---------------------------------------------------------------------- search paths that exist
@pytest.mark.parametrize("flag", ["--lib-path", "--policy-path"])
def test_the_cli_refuses_a_missing_search_folder(tmp_path: Path, flag: str) -> None:
    code, _, err = cli("compile", SPEC_ROUTE, flag, tmp_path / "missing")
    assert code == EXIT_USAGE and "no such folder" in err


@pytest.mark.parametrize("keyword", ["lib_path", "policy_path"])
def test_the_api_refuses_a_missing_search_folder(tmp_path: Path, keyword: str) -> None:
    missing = str(tmp_path / "missing")
    for call in (pcsc.compile, pcsc.check, pcsc.analyse_seams):
        with pytest.raises(ValueError, match=rf"{keyword}: .*missing.* is not a folder"):
            call(SPEC_ROUTE, **{keyword: [missing]})  # type: ignore[operator]
    with pytest.raises(ValueError, match="policy_path"):
        pcsc.load_policy("venture@1.0.0", policy_path=missing)
    assert pcsc.compile(SPEC_ROUTE, **{keyword: [str(tmp_path)]}).ok  # type: ignore[arg-type]
