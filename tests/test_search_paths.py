"""Search paths that hold: policies and libraries are named, never addressed by path;
resolution stays inside the configured roots; the obligations that judge a route
belong to its policy (pins), not to files its author puts beside it.

Each attack is run through `pcsc.cli.main` with its expected code and exit code."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
import re
from pathlib import Path

import pytest

import pcsc
from pcsc.cli import main
from pcsc.compiler.session import library_sha256
from pcsc.policy.load import PolicyStore
from pcsc.render import schemas
from tests.conftest import ROOT, SPEC_ROUTE, pin_libraries

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
    shipped = hashlib.sha256(SHIPPED_VENTURE.read_bytes()).hexdigest()  # `sha256sum`: the file is canonical
    assert packet["libraries"] == [{
        "name": "venture", "version": "1.0.0", "sha256": shipped, "canonical_sha256": shipped,
        "pin": {"by": "policy", "version": "1.0.0", "sha256": shipped}, "shipped": False,
        "file": str(tmp_path / "venture.obl"), "replaces": False,
        "found": {"in": "route folder", "file": str(tmp_path / "venture.obl"), "config": None},
    }]
    code, _, err = cli("compile", write(tmp_path / "s.route", spliced_text()))
    assert code == EXIT_REFUSED, err


def test_the_spec_copy_of_the_reference_inputs_compiles() -> None:
    spec = Path("/work/shared/spec/devtools_api.route")
    if not spec.is_file():
        pytest.skip("no spec copy on this machine")
    code, _, err = cli("check", spec)
    assert code == EXIT_OK, err


EXTRA = 'library extra version "0.1.0"\n\nfield nps  ratio\n'


def test_a_library_with_a_new_name_judges_only_when_the_policy_pins_it(tmp_path: Path) -> None:
    extra = write(tmp_path / "extra.obl", EXTRA)
    route = write(tmp_path / "r.route", reference_text().replace("uses    venture", "uses    venture, extra"))
    code, _, err = cli("compile", route)
    assert code == EXIT_ERRORS and codes_of(err) - {"PCSC-W604"} == {"PCSC-E413"}, err
    assert "policy venture@1.0.0 pins only `venture`" in err
    # the help names the pin that would admit it, with the library's canonical hash
    canonical = hashlib.sha256(EXTRA.encode("utf-8")).hexdigest()  # in `pcsc fmt`'s layout: its own bytes
    assert f'`[libraries.extra]` (its `version` and `sha256 = "{canonical}"`)' in err, err
    ref = pin_libraries(tmp_path / "roots", [extra], policy_id="venture", version="9.0.0")
    code, doc = compile_json(write(tmp_path / "p.route", reference_text(ref).replace(
        "uses    venture", "uses    venture, extra")), "--policy-path", tmp_path / "roots")
    assert code == EXIT_OK, doc
    packet = route_of(doc)
    assert [(u["name"], u["shipped"], u["file"], u["replaces"], u["pin"]) for u in packet["libraries"]] == [  # type: ignore[attr-defined]
        ("venture", True, None, False, {"by": "policy", "version": "1.0.0", "sha256": library_sha256(SHIPPED_VENTURE)}),
        ("extra", False, str(extra), False, {"by": "policy", "version": "0.1.0", "sha256": canonical})]
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
    pinned = hashlib.sha256(SHIPPED_VENTURE.read_bytes()).hexdigest()
    assert packet["libraries"] == [{
        "name": "venture", "version": "1.0.0", "sha256": hashlib.sha256(planted.read_bytes()).hexdigest(),
        "canonical_sha256": library_sha256(planted), "pin": {"by": "policy", "version": "1.0.0", "sha256": pinned},
        "shipped": False, "file": str(planted), "replaces": True,
        "found": {"in": "route folder", "file": str(planted), "config": None},
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


# ---------------------------------------------------------------------- the lax-library splice
def lax_library(name: str = "ventura", version: str = "1.0.0") -> str:
    """The shipped venture.obl under another name and version: the same fields, and
    every obligation's body `require true`, so it discharges whatever is claimed."""
    text = SHIPPED_VENTURE.read_text(encoding="utf-8").replace(
        'library venture version "1.0.0"', f'library {name} version "{version}"')
    lax, n = re.subn(r"(obligation \w+ covers [^{]*\{)[^}]*\}", r"\1\n    require true\n}", text)
    assert n == 3 and f"library {name} " in lax
    return lax


def unpinned_policy(roots: Path) -> Path:
    """venture@1.0.0 without its `[libraries]` table, as the reference inputs state it, in
    ``roots`` (which `--policy-path` then searches before the shipped policies)."""
    text = SHIPPED_POLICY.read_text(encoding="utf-8")
    table = re.search(r"(?ms)^\[libraries\.venture\]\n.*?\n\n", text)
    assert table is not None
    write(roots / "venture" / "1.0.0.toml", text.replace(table[0], ""))
    return roots


def lax_splice(tmp_path: Path, name: str = "ventura") -> Path:
    """The spliced reference route (refused by GATE) that `uses NAME` instead of venture."""
    text = spliced_text()
    assert text.count("uses    venture\n") == 1
    return write(tmp_path / "s.route", text.replace("uses    venture\n", f"uses    {name}\n"))


def stays_refused(route: Path, *extra: str | Path) -> set[str]:
    """Every command that could release the route refuses it; the codes it gives."""
    found: set[str] = set()
    for command in ("compile", "gate", "check"):
        code, out, err = cli(command, route, *extra)
        assert code in (EXIT_ERRORS, EXIT_REFUSED), (command, out, err)
        assert "released" not in out and "ungated" not in out, (command, out)
        found |= codes_of(err)
    return found - {"PCSC-W604"}


POLICIES = {"pinned": lambda tmp: [], "unpinned": lambda tmp: ["--policy-path", unpinned_policy(tmp / "roots")]}


def test_the_unpinned_reference_policy_admits_the_shipped_library(tmp_path: Path) -> None:
    """A policy that pins nothing (as the reference inputs' does) keeps compiling the
    reference route: the library PCSC ships under the name judges, by its content."""
    code, doc = compile_json(SPEC_ROUTE, "--policy-path", unpinned_policy(tmp_path / "roots"))
    assert code == EXIT_OK
    packet = route_of(doc)
    assert round(float(packet["score"]), 2) == REFERENCE_SCORE  # type: ignore[arg-type]
    shipped = hashlib.sha256(SHIPPED_VENTURE.read_bytes()).hexdigest()
    assert [(u["name"], u["shipped"], u["pin"]) for u in packet["libraries"]] == [  # type: ignore[attr-defined]
        ("venture", True, {"by": "shipped", "version": None, "sha256": shipped})]


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_the_lax_library_splice_is_released_by_no_other_name(tmp_path: Path, policy: str) -> None:
    """The attack: the refused splice, `uses ventura`, and a ventura.obl beside it whose
    obligations are `require true`. The policy never named `ventura`: E413 at `uses`."""
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / "ventura.obl", lax_library())
    route = lax_splice(tmp_path)
    assert stays_refused(route, *extra) == {"PCSC-E413"}
    code, _, err = cli("gate", route, *extra)
    assert re.search(r"s\.route:7:13: error: library `ventura` \(.*ventura\.obl\) is not one the route's policy names",
                     err), err
    assert "did you mean `venture`?" in err


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize(
    ("used", "file", "expected"),
    [
        ("Venture", "Venture.obl", {"PCSC-E206"}),  # another case is not a library name at all
        ("VENTURE", "VENTURE.obl", {"PCSC-E206"}),
        ("venture_", "venture_.obl", {"PCSC-E413"}),
        ("venture2", "venture2.obl", {"PCSC-E413"}),
        ("v\u0435nture", "v\u0435nture.obl", {"PCSC-E102"}),  # a Cyrillic е: not a name the grammar reads
        ("ventur\u0435", "ventur\u0435.obl", {"PCSC-E102"}),
        ("\uff56enture", "\uff56enture.obl", {"PCSC-E102"}),  # a fullwidth v
    ],
)
def test_a_name_that_looks_like_the_pinned_one_stays_refused(
    tmp_path: Path, policy: str, used: str, file: str, expected: set[str]
) -> None:
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / file, lax_library(used if used.isascii() and used.islower() else "ventura"))
    assert stays_refused(lax_splice(tmp_path, used), *extra) == expected


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_on_the_lib_path_stays_refused(tmp_path: Path, policy: str) -> None:
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / "libs" / "ventura.obl", lax_library())
    assert stays_refused(lax_splice(tmp_path / "r"), "--lib-path", tmp_path / "libs", *extra) == {"PCSC-E413"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_configured_in_pcsc_toml_stays_refused(
    tmp_path: Path, policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = POLICIES[policy](tmp_path)
    write(tmp_path / "libs" / "ventura.obl", lax_library())
    write(tmp_path / "pcsc.toml", 'lib_path = ["libs"]\n')
    route = lax_splice(tmp_path / "r")
    monkeypatch.chdir(tmp_path)
    assert stays_refused(route, *extra) == {"PCSC-E413"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_inside_a_policy_root_the_policy_does_not_name_stays_refused(
    tmp_path: Path, policy: str
) -> None:
    """A library filed in the policy folders: libraries are not read from there, and a
    policy root given as a library folder too admits no name its policy does not pin."""
    extra = POLICIES[policy](tmp_path)
    roots = tmp_path / "roots"
    write(roots / "ventura.obl", lax_library())
    write(roots / "venture" / "ventura.obl", lax_library())
    write(roots / "ventura" / "1.0.0.toml", '[policy]\nid = "ventura"\nversion = "1.0.0"\nextends = "venture@1.0.0"\n')
    route = lax_splice(tmp_path / "r")
    assert stays_refused(route, "--policy-path", roots, *extra[2:]) == {"PCSC-E206"}  # not found: never read
    assert stays_refused(route, "--policy-path", roots, "--lib-path", roots, *extra[2:]) == {"PCSC-E413"}
    assert stays_refused(route, "--policy-path", roots, "--lib-path", roots / "venture", *extra[2:]) == {"PCSC-E413"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_lax_library_behind_a_symbolic_link_stays_refused(tmp_path: Path, policy: str) -> None:
    extra = POLICIES[policy](tmp_path)
    here = tmp_path / "r"
    lax = write(here / "lax.txt", lax_library())
    (here / "ventura.obl").symlink_to(lax)  # inside the folder: still a name the policy never named
    assert stays_refused(lax_splice(here), *extra) == {"PCSC-E413"}
    (here / "venture.obl").symlink_to(write(here / "lax2.txt", lax_library("venture")))  # the pinned name
    assert stays_refused(write(here / "v.route", spliced_text()), *extra) == {"PCSC-E409"}
    outside = write(tmp_path / "elsewhere" / "ventura.obl", lax_library())
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "ventura.obl").symlink_to(outside)
    assert stays_refused(lax_splice(tmp_path / "o"), *extra) == {"PCSC-E408"}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("version", ["1.0.0", "2.0.0", "0.9.0"])
@pytest.mark.parametrize("where", ["beside", "lib-path"])
def test_a_lax_library_of_the_pinned_name_and_another_version_stays_refused(
    tmp_path: Path, policy: str, version: str, where: str
) -> None:
    extra: list[str | Path] = list(POLICIES[policy](tmp_path))
    folder = tmp_path / "r" if where == "beside" else tmp_path / "libs"
    write(folder / "venture.obl", lax_library("venture", version))
    if where == "lib-path":
        extra += ["--lib-path", folder]
    assert stays_refused(write(tmp_path / "r" / "s.route", spliced_text()), *extra) == {"PCSC-E409"}


def test_a_lax_library_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from pcsc.base.files import MAX_FILE_BYTES

    big = write(tmp_path / "r" / "ventura.obl", lax_library())
    with big.open("a", encoding="utf-8") as f:
        f.write("#" * MAX_FILE_BYTES)
    assert stays_refused(lax_splice(tmp_path / "r")) == {"PCSC-E413"}
    big.rename(tmp_path / "r" / "venture.obl")  # the pinned name: too large to be the pinned content
    assert stays_refused(write(tmp_path / "r" / "v.route", spliced_text())) == {"PCSC-E112"}


def test_a_lax_library_named_by_a_local_libraries_policy_is_the_policys_choice(tmp_path: Path) -> None:
    """`local_libraries = true` admits no new name: only a name the policy lists under
    `[libraries]` (here without its content) may then come from beside the route."""
    roots = tmp_path / "roots"
    write(tmp_path / "r" / "ventura.obl", lax_library())
    route = lax_splice(tmp_path / "r")
    write(roots / "venture" / "9.0.0.toml",
          '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\nlocal_libraries = true\n')
    route.write_text(route.read_text(encoding="utf-8").replace('"venture@1.0.0"', '"venture@9.0.0"'), "utf-8")
    assert stays_refused(route, "--policy-path", roots) == {"PCSC-E413"}
    with (roots / "venture" / "9.0.0.toml").open("a", encoding="utf-8") as f:
        f.write("\n[libraries.ventura]\n")
    code, doc = compile_json(route, "--policy-path", roots)
    schemas.validate(doc)
    assert code == EXIT_OK and route_of(doc)["local_libraries"] is True, doc  # the policy's own, recorded choice
    assert [u["pin"] for u in route_of(doc)["libraries"]] == [  # type: ignore[attr-defined]
        {"by": "policy", "version": None, "sha256": None}]


def test_a_pin_without_its_content_needs_local_libraries(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    write(roots / "venture" / "9.0.0.toml",
          '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\n\n[libraries.ventura]\n')
    code, _, err = cli("policy", "check", "venture@9.0.0", "--policy-path", roots)
    assert code == EXIT_ERRORS and "PCSC-E403" in codes_of(err), err
    assert "libraries.ventura.sha256: required key missing (only a policy with `local_libraries = true`" in err


# ---------------------------------------------------------------------- the config-file splice
CONFIGS = {
    "pcsc.toml": 'coverage = "{mode}"\n',
    "pcsc.toml, [tool.pcsc]": '[tool.pcsc]\ncoverage = "{mode}"\n',
    "pyproject.toml": '[project]\nname = "x"\n\n[tool.pcsc]\ncoverage = "{mode}"\n',
}


@pytest.mark.parametrize("mode", ["off", "dock"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_a_configuration_file_never_lowers_the_policys_coverage_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, config: str, depth: int
) -> None:
    """The attack: the refused splice, and a configuration file asking for coverage off
    (or dock) beside it (depth 0) or in any folder above it. The policy's gate holds, the
    verdict line and the JSON say it came from the policy."""
    folder = tmp_path / "a" / "b" / "c"
    route = write(folder / "s.route", spliced_text())
    write([folder, *folder.parents][depth] / config.split(",")[0], CONFIGS[config].format(mode=mode))
    monkeypatch.chdir(folder)
    code, out, err = cli("gate", "s.route")
    assert code == EXIT_REFUSED, out + err
    assert "devtools_api: suspend-and-ask  (coverage gate, from the policy)  [s.route]" in out
    code, out, err = cli("gate", "s.route", "--format", "json")
    assert code == EXIT_REFUSED
    (packet,) = json.loads(out)["routes"]
    assert packet["coverage"] == {"mode": "gate", "mode_source": "policy", "policy_mode": "gate"}
    code, _, err = cli("check", "s.route")
    assert code == EXIT_ERRORS and "PCSC-E501" in codes_of(err), err
    assert cli("compile", route)[0] == EXIT_REFUSED


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("edit", ["coverage", "priors"])
def test_a_configuration_file_cannot_replace_the_shipped_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int, edit: str
) -> None:
    """The same attack through `policy_path`: a copy of venture@1.0.0 that gates nothing
    (or prices every class at p = 0.99), in a folder a pcsc.toml at or above the route
    names. A configuration file may add policies, never replace a shipped one."""
    folder = tmp_path / "a" / "b" / "c"
    write(folder / "s.route", spliced_text())
    text = SHIPPED_POLICY.read_text(encoding="utf-8")
    replaced = text.replace('coverage = "gate"', 'coverage = "off"') if edit == "coverage" else planted_policy()
    assert replaced != text
    config = [folder, *folder.parents][depth] / "pcsc.toml"
    write(config.parent / "p" / "venture" / "1.0.0.toml", replaced)
    write(config, 'policy_path = ["p"]\n')
    monkeypatch.chdir(folder)
    for command in ("gate", "compile", "check"):
        code, out, err = cli(command, "s.route")
        assert code == EXIT_ERRORS and not out, (command, out, err)
        assert f"{config}: error: policy_path: " in err and "would replace the shipped policy venture@1.0.0" in err
        assert "[PCSC-E407]" in err
    # a copy with the same document replaces nothing (but a file beside the route adds no
    # folder at all); the command line may replace it
    write(config.parent / "p" / "venture" / "1.0.0.toml", text.replace("\n\n", "\n\n\n"))
    code, _, err = cli("gate", "s.route")
    assert code == (EXIT_ERRORS if depth == 0 else EXIT_REFUSED), err
    assert ("sits in the folder of the route s.route" in err) == (depth == 0), err
    write(config, "")
    code, out, _ = cli("gate", "s.route", "--policy-path", config.parent / "p", "--format", "json")
    assert code == EXIT_REFUSED and json.loads(out)["routes"][0]["policy"]["id"] == "venture"


@pytest.mark.parametrize("mode", ["off", "dock"])
def test_only_the_command_line_lowers_the_mode_and_the_verdict_line_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    write(tmp_path / "pcsc.toml", 'coverage = "gate"\n')
    write(tmp_path / "s.route", spliced_text())
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("gate", "s.route", "--coverage", mode)
    assert code == EXIT_OK, err
    verdict = "ungated" if mode == "off" else "docked"
    line = f"devtools_api: {verdict}  (coverage {mode}, from the command line: lowered from the policy's gate)"
    line += "  [s.route]"
    assert line in out
    if mode == "off":  # the line docs/coverage.md shows
        assert f"\n{line}\n" in (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    code, out, _ = cli("gate", "s.route", "--coverage", mode, "--format", "json")
    (packet,) = json.loads(out)["routes"]
    assert packet["coverage"] == {"mode": mode, "mode_source": "command line", "policy_mode": "gate"}


def test_a_configuration_file_may_raise_the_policys_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = tmp_path / "roots"
    write(roots / "venture" / "9.0.0.toml",
          '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\ncoverage = "off"\n')
    write(tmp_path / "s.route", spliced_text("venture@9.0.0"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli("gate", "s.route", "--policy-path", roots)
    assert code == EXIT_OK and "ungated  (coverage off, from the policy)" in out
    for raised, verdict, exit_code in (("dock", "docked", EXIT_OK), ("gate", "suspend-and-ask", EXIT_REFUSED)):
        write(tmp_path / "pcsc.toml", f'coverage = "{raised}"\n')
        code, out, _ = cli("gate", "s.route", "--policy-path", roots)
        assert code == exit_code and f"{verdict}  (coverage {raised}, from the configuration file)" in out, out
        code, out, _ = cli("gate", "s.route", "--policy-path", roots, "--format", "json")
        (packet,) = json.loads(out)["routes"]
        assert packet["coverage"] == {"mode": raised, "mode_source": "config", "policy_mode": "off"}
    code, out, _ = cli("gate", "s.route", "--policy-path", roots, "--coverage", "off")
    assert code == EXIT_OK and "ungated  (coverage off, from the command line)" in out  # the policy's own mode


# ---------------------------------------------------------------------- pins over the canonical text
SHIPPED_LIBRARIES = sorted((ROOT / "obligations").glob("*.obl"))


def relayout(text: str, rng: random.Random) -> str:
    """``text`` with its layout changed at random and nothing else: indentation, the
    spaces between tokens and before a comment, trailing spaces, blank lines between
    code lines, CRLF. (Comment texts, and blank lines next to comments, are content:
    `pcsc fmt` keeps them.)"""
    lines = []
    for line in text.split("\n"):
        code, hash_, comment = line.partition("#")
        if code.strip():
            words = code.split()
            code = rng.choice(["", " ", "\t", "      "]) + "".join(
                w + rng.choice([" ", "  ", "\t", " \t "]) for w in words[:-1]) + words[-1]
            if hash_:
                code += rng.choice([" ", "   ", "\t"])
            elif rng.random() < 0.3:
                code += rng.choice([" ", "\t", "  "])
        lines.append(code + hash_ + comment)
    out = [lines[0]]
    for before, after in zip(lines, lines[1:], strict=False):
        if before.strip() and after.strip() and not before.lstrip().startswith("#") \
                and not after.lstrip().startswith("#") and rng.random() < 0.2:
            out.append("")  # a blank line between two code lines: fmt drops it
        out.append(after)
    joined = "\n".join(out)
    return joined.replace("\n", "\r\n") if rng.random() < 0.5 else joined


@pytest.mark.parametrize("library", SHIPPED_LIBRARIES, ids=lambda p: p.name)
def test_layout_never_changes_a_pin(tmp_path: Path, library: Path) -> None:
    text = library.read_text(encoding="utf-8")
    pin = hashlib.sha256(library.read_bytes()).hexdigest()  # shipped files are canonical: `sha256sum`
    rng = random.Random(library.name)
    for i in range(40):
        moved = write(tmp_path / f"{i}" / library.name, "")
        moved.write_bytes(relayout(text, rng).encode("utf-8"))
        assert moved.read_bytes() != library.read_bytes()
        assert library_sha256(moved) == pin, moved.read_text(encoding="utf-8")


def test_the_shipped_pins_are_the_files_own_bytes() -> None:
    """The pins did not move when they came to be taken over the canonical text: every
    shipped library is in `pcsc fmt`'s layout, so its pin is `sha256sum` of the file."""
    oss, research, startup, venture = (hashlib.sha256((ROOT / "obligations" / n).read_bytes()).hexdigest()
                                       for n in ("oss.obl", "research.obl", "startup.obl", "venture.obl"))
    assert venture == "b7450f4a349738648a7a4eeb390997db1cd1fe16caa249ed5664d53eda98b2a9"
    assert startup == "20d43a0c0b46f5896679572ee7b2efd632e45c8a1763be6e82577a155cfc38d2"
    assert research == "1ad0871e1f2645a6e65edcba4cd44ec585a3eb57647bf9adc649800ced17e4a5"
    assert oss == "2154e3b377293617b0d4334a640a08511df944f405080e7dacff3095736c9bf5"
    assert [library_sha256(p) for p in SHIPPED_LIBRARIES] == [oss, research, startup, venture]
    assert f'sha256 = "{venture}"' in SHIPPED_POLICY.read_text(encoding="utf-8")
    assert f'sha256 = "{research}"' in (ROOT / "policies" / "research-lab" / "1.0.0.toml").read_text(encoding="utf-8")
    assert f'sha256 = "{oss}"' in (ROOT / "policies" / "oss-impact" / "1.1.0.toml").read_text(encoding="utf-8")


def project(tmp_path: Path) -> tuple[Path, Path, str]:
    """A project library `mine` (venture.obl renamed, in the canonical layout), pinned by
    a policy by `sha256sum` of the file, and the reference route using it."""
    library = write(tmp_path / "libs" / "mine.obl", SHIPPED_VENTURE.read_text(encoding="utf-8").replace(
        'library venture version "1.0.0"', 'library mine version "1.0.0"'))
    pin = hashlib.sha256(library.read_bytes()).hexdigest()
    write(tmp_path / "roots" / "mine" / "1.0.0.toml", (
        '[policy]\nid = "mine"\nversion = "1.0.0"\nextends = "venture@1.0.0"\n\n'
        f'[libraries.mine]\nversion = "1.0.0"\nsha256 = "{pin}"\n'))
    route = write(tmp_path / "r.route", reference_text("mine@1.0.0").replace("uses    venture", "uses    mine"))
    return library, route, pin


def test_pcsc_fmt_on_a_pinned_library_changes_nothing_the_policy_sees(tmp_path: Path) -> None:
    """The defect: a pinned library re-laid out (by hand, or reformatted by `pcsc fmt`)
    made every route fail with E409, as the pin hashed its bytes."""
    library, route, pin = project(tmp_path)
    flags = ("--lib-path", tmp_path / "libs", "--policy-path", tmp_path / "roots")
    code, _, err = cli("compile", route, *flags)
    assert code == EXIT_OK, err
    library.write_bytes(relayout(library.read_text(encoding="utf-8"), random.Random(7)).encode("utf-8"))
    code, doc = compile_json(route, *flags)
    assert code == EXIT_OK, doc
    (use,) = route_of(doc)["libraries"]  # type: ignore[misc]
    assert use["canonical_sha256"] == pin and use["sha256"] != pin and use["replaces"] is False
    code, out, err = cli("fmt", library)
    assert code == EXIT_OK and f"formatted {library}" in out, out + err
    assert hashlib.sha256(library.read_bytes()).hexdigest() == pin  # back to the pinned bytes
    assert cli("compile", route, *flags)[0] == EXIT_OK
    code, _, err = cli("policy", "check", "mine@1.0.0", *flags)
    assert code == EXIT_OK, err


def test_the_certificate_records_each_librarys_hashes_and_the_pin_it_matched(tmp_path: Path) -> None:
    library, route, pin = project(tmp_path)
    library.write_bytes(relayout(library.read_text(encoding="utf-8"), random.Random(3)).encode("utf-8"))
    cert = tmp_path / "c.json"
    flags = ("--lib-path", tmp_path / "libs", "--policy-path", tmp_path / "roots")
    code, _, err = cli("compile", route, "--cert", cert, *flags)
    assert code == EXIT_OK, err
    (entry,) = json.loads(cert.read_text(encoding="utf-8"))["libraries"]
    text = library.read_bytes().replace(b"\r\n", b"\n")
    assert entry["sha256"] == hashlib.sha256(text).hexdigest() != pin  # the file as it is, for the checker
    assert entry["canonical_sha256"] == pin
    assert entry["pin"] == {"by": "policy", "version": "1.0.0", "sha256": pin}
    code, out, err = cli("verify-cert", cert)
    assert code == EXIT_OK, out + err


def test_e409_says_how_to_re_pin_and_prints_the_new_hash(tmp_path: Path) -> None:
    """Comments count (`pcsc fmt` keeps them): a changed comment is changed content."""
    library, route, pin = project(tmp_path)
    text = library.read_text(encoding="utf-8")
    library.write_text(text.replace("# any change of a bool is material", "# reviewed again"), encoding="utf-8")
    new = hashlib.sha256(library.read_bytes()).hexdigest()  # still in the canonical layout
    assert new != pin
    flags = ("--lib-path", tmp_path / "libs", "--policy-path", tmp_path / "roots")
    code, _, err = cli("compile", route, *flags)
    assert code == EXIT_ERRORS and codes_of(err) - {"PCSC-W604"} == {"PCSC-E409"}, err
    assert (f'if the policy should judge with this content, pin it: `[libraries.mine]` with `sha256 = "{new}"` '
            f"in {tmp_path / 'roots' / 'mine' / '1.0.0.toml'}") in err, err
    code, _, err = cli("policy", "check", "mine@1.0.0", *flags)
    assert code == EXIT_ERRORS and codes_of(err) == {"PCSC-E410"}, err
    assert f'set `sha256 = "{new}"` under [libraries.mine]' in err
    # re-pinned as the help says, every route compiles again
    policy = tmp_path / "roots" / "mine" / "1.0.0.toml"
    policy.write_text(policy.read_text(encoding="utf-8").replace(pin, new), encoding="utf-8")
    assert cli("compile", route, *flags)[0] == EXIT_OK
    assert cli("policy", "check", "mine@1.0.0", *flags)[0] == EXIT_OK


@pytest.mark.parametrize(
    ("pin", "expected", "message"),
    [
        ("0" * 64, "PCSC-E410", "pins library `venture` with sha256 " + "0" * 64),
        ("b7450f4a349738648a7a4eeb390997db1cd1fe16caa249ed5664d53eda98b2a9", None, ""),
    ],
)
def test_policy_check_verifies_each_pin_against_the_library_it_resolves(
    tmp_path: Path, pin: str, expected: str | None, message: str
) -> None:
    roots = tmp_path / "roots"
    policy = write(roots / "venture" / "9.0.0.toml", (
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.1.0"\n\n'
        f'[libraries.venture]\nversion = "1.0.0"\nsha256 = "{pin}"\n'))
    code, out, err = cli("policy", "check", "venture@9.0.0", "--policy-path", roots)
    if expected is None:
        assert code == EXIT_OK and "pins match: startup (obligations/startup.obl), venture (obligations/venture.obl)" \
            in out, err
        return
    assert code == EXIT_ERRORS and codes_of(err) == {expected}, err
    assert f"{policy}:8: error: policy venture@9.0.0 {message}" in err  # at the pin's line
    assert 'set `sha256 = "b7450f4a349738648a7a4eeb390997db1cd1fe16caa249ed5664d53eda98b2a9"`' in err
    code, out, _ = cli("policy", "check", "venture@9.0.0", "--policy-path", roots, "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    assert doc["ok"] is False
    assert [(p["name"], p["ok"]) for p in doc["checked"][0]["libraries"]] == [("startup", True), ("venture", False)]


def test_policy_check_refuses_a_pin_of_another_version_or_of_nothing(tmp_path: Path) -> None:
    roots = tmp_path / "roots"
    venture = hashlib.sha256(SHIPPED_VENTURE.read_bytes()).hexdigest()
    write(roots / "venture" / "9.0.0.toml", (
        '[policy]\nid = "venture"\nversion = "9.0.0"\nextends = "venture@1.0.0"\n\n'
        f'[libraries.venture]\nversion = "2.0.0"\nsha256 = "{venture}"\n\n'
        f'[libraries.nowhere]\nversion = "1.0.0"\nsha256 = "{"1" * 64}"\n'))
    code, _, err = cli("policy", "check", "venture@9.0.0", "--policy-path", roots)
    assert code == EXIT_ERRORS and codes_of(err) == {"PCSC-E206", "PCSC-E410"}, err
    assert "pins library `venture` at version 2.0.0, but obligations/venture.obl declares version 1.0.0" in err
    assert "pins library `nowhere`, but no nowhere.obl is on the library path or shipped" in err
    # a pin inherited from the policy it extends is located in that policy's file
    write(roots / "child" / "1.0.0.toml", '[policy]\nid = "child"\nversion = "1.0.0"\nextends = "venture@9.0.0"\n')
    code, _, err = cli("policy", "check", "child@1.0.0", "--policy-path", roots)
    assert code == EXIT_ERRORS and f"{roots / 'venture' / '9.0.0.toml'}:8: error: policy child@1.0.0 pins" in err


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
