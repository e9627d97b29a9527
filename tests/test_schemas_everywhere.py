"""Every JSON document every command can print validates against its schema: each
command of the registry, on each kind of shipped example (the chain routes of
examples/, the cohort, the domains, the graph routes, the tutorial's folder as
docs/tutorial.md leaves it, and the routecast score table), in every format that prints
JSON (`json`, a `jsonl` row, SARIF), and its error documents too.

The commands come from the registry (`pcsc.cli.registry.COMMANDS`): a new command
fails `test_every_command_has_a_plan` until this file says how to run it on an
example and how to make it fail. The forecast commands run on a ledger frozen from
each kind; the chain, domain and graph examples ship no outcomes, so the fixture
writes one label per route for them (alternating `+` and `-`).

Time: the commands run in-process, sharing the IR cache; the costly ones (sensitivity,
stability, red-team search) run on one route of each kind, and the bootstrap draws are
few. The tutorial's own steps run in order with `--format json` (test_the_tutorial_steps).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from jsonschema import Draft4Validator

from pcsc.cli import main
from pcsc.cli.main import command_parser
from pcsc.cli.registry import COMMANDS, Command
from pcsc.render import schemas
from tests import docrun
from tests.conftest import EXAMPLES, ROOT
from tests.test_sarif import sarif_schema

TUTORIAL = ROOT / "docs" / "tutorial.md"
POLICIES = ROOT / "policies"
SCORES = EXAMPLES / "routecast_table_a1.csv"
LATER = dt.timedelta(days=365 * 6)  # synthesised labels: this long after a route's as_of


@attrs.frozen
class Kind:
    """One kind of shipped example, copied into a folder of its own."""

    name: str
    folder: Path  # holds the routes (and nothing else that ends in .route)
    one: Path  # the file of the route the one-route commands (and the costly ones) run on
    route: str  # that route
    outcomes: Path
    as_of: str  # the resolution date: after every outcome
    ledger: Path  # frozen and resolved
    cert: Path  # compile --cert of `one`
    seam: str  # the first seam of `one`
    refs: tuple[str, ...]  # the policies the routes name
    retrospective: bool
    work: Path  # a scratch folder

    @property
    def single(self) -> list[str]:
        """`one` and its route, for the commands that take one route."""
        return [str(self.one), "--route", self.route]


def run(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _cwd(cwd):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _cwd(folder: Path | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    with contextlib.chdir(folder):
        yield


def _policy_refs(routes: list[Path]) -> tuple[str, ...]:
    import re

    found = {m for r in routes for m in re.findall(r'^\s*policy\s+"([^"]+)"', r.read_text(encoding="utf-8"), re.M)}
    return tuple(sorted(found))


def _labels(routes: list[Path]) -> tuple[str, str]:
    """One label per route, after its as_of, alternating positive and negative; the
    resolution date after all of them."""
    from pcsc.compiler.session import Session

    session = Session()
    rows: list[str] = []
    last = dt.date.min
    for i, path in enumerate(routes):
        for route in session.load_routes(path, str(path)):
            when = route.as_of + LATER
            last = max(last, when)
            rows.append(f'[[label]]\nroute = "{route.name}"\ndate = {when.isoformat()}\n'
                        f'outcome = "{"+" if i % 2 == 0 else "-"}"\n')
    return "\n".join(rows), (last + dt.timedelta(days=1)).isoformat()


def _prepare(name: str, base: Path, sources: list[Path], one: str, outcomes: Path | None, as_of: str | None,
             *, retrospective: bool) -> Kind:
    folder = base / "routes"
    folder.mkdir(parents=True)
    for source in sources:
        shutil.copy(source, folder / source.name)
    routes = sorted(folder.glob("*.route"))
    target = base / "outcomes.toml"
    if outcomes is None:
        text, as_of = _labels(routes)
        target.write_text(text, encoding="utf-8")
    else:
        shutil.copy(outcomes, target)
    assert as_of is not None
    ledger, cert, work = base / "ledger.sqlite", base / "certs.json", base / "work"
    work.mkdir()
    freeze = ["freeze", str(folder), "--ledger", str(ledger), "-q", *(["--retrospective"] if retrospective else [])]
    code, _, err = run(freeze)
    assert code in (0, 3), err
    code, _, err = run(["resolve", str(target), "--ledger", str(ledger), "--as-of", as_of, "-q"])
    assert code == 0, err
    code, _, err = run(["compile", str(folder / one), "--cert", str(cert), "-q"])
    assert cert.is_file(), err
    code, out, err = run(["seams", str(folder / one), "--format", "json"])
    first = json.loads(out)["routes"][-1]
    seam = str(first["seams"][0]["k"])
    return Kind(name, folder, folder / one, first["route"], target, as_of, ledger, cert, seam, _policy_refs(routes),
                retrospective, work)


def _tutorial(base: Path) -> Kind:
    shown = base / "shown"
    commands = docrun.workspace(TUTORIAL, shown)
    resolved = next(c for c in commands if c.line.startswith("pcsc resolve"))
    as_of = resolved.line.split("--as-of")[1].split()[0]
    return _prepare("tutorial", base / "kind", sorted((shown / "routes").glob("*.route")), "invoices.route",
                    shown / "outcomes.toml", as_of, retrospective=False)


KINDS: dict[str, Callable[[Path], Kind]] = {
    "chain": lambda b: _prepare("chain", b, sorted(EXAMPLES.glob("*.route")), "devtools_api.route", None, None,
                                retrospective=True),
    "cohort": lambda b: _prepare("cohort", b, sorted((EXAMPLES / "cohort").glob("*.route")), "clinic_waitlist.route",
                                 EXAMPLES / "cohort" / "outcomes_pilot.toml", "2019-01-01", retrospective=True),
    "domains": lambda b: _prepare("domains", b, sorted((EXAMPLES / "domains").glob("*.route")),
                                  "single_cell_chip.route", None, None, retrospective=True),
    "graphs": lambda b: _prepare("graphs", b, sorted((EXAMPLES / "graphs").glob("*.route")),
                                 "oss_sponsors_freeze.route", None, None, retrospective=True),
    "tutorial": _tutorial,
}


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Kind]:
    return {name: make(tmp_path_factory.mktemp(name)) for name, make in KINDS.items()}


# ---------------------------------------------------------------------- how to run each command
Plan = Callable[[Kind], list[list[str]]]


def _ledger(k: Kind, *more: str) -> list[list[str]]:
    return [["--ledger", str(k.ledger), *more]]


def _tests(k: Kind) -> list[list[str]]:
    """The shipped policy tests of the policy versions the routes name (a variant of
    `planner` is tested with planner's)."""
    files = {POLICIES / ref.split("@")[0].split("-")[0] / "tests" / f"{ref.split('@')[1]}.pcsctest.toml"
             for ref in k.refs}
    found = sorted(str(f) for f in files if f.is_file())
    assert found, f"no shipped policy tests for {k.refs}"
    return [found]


def _prereg(k: Kind) -> list[list[str]]:
    """A plan over the kind's forecasts, in a ledger of them without outcomes (`prereg`
    refuses a cohort whose outcomes are recorded already)."""
    from pcsc.forecast.ledger import ForecastRecord, Ledger, create_and_append

    target = k.work / "plan.sqlite"
    target.unlink(missing_ok=True)
    with Ledger.open(k.ledger, create=False) as ledger:
        entries = ledger.entries()
    create_and_append(target, [ForecastRecord(e.route, e.file, e.policy, e.document()) for e in entries],
                      inputs=entries[0].inputs)
    plan = k.work / "plan.toml"
    plan.write_text('[plan]\nname = "p"\n\n[[prediction]]\nid = "P1"\nclaim = "auc(score) >= 0.5"\n',
                    encoding="utf-8")
    return [[str(plan), "--ledger", str(target)]]


PLANS: dict[str, Plan] = {
    "check": lambda k: [[str(k.folder)]],
    "compile": lambda k: [[str(k.folder)], ["--emit", "ir", str(k.folder)]],
    "gate": lambda k: [[str(k.folder)], [str(k.folder), "--suggest"]],
    "seams": lambda k: [[str(k.folder), "--experiment"], [str(k.one), "--symbolic"]],
    "splice": lambda k: [[*k.single, "--seam", k.seam]],
    "diff": lambda k: [[str(k.one), str(k.one), "--route", k.route]],
    "verify-cert": lambda k: [[str(k.cert)]],
    "explain": lambda k: [k.single],
    "sensitivity": lambda k: [k.single],
    "blind": lambda k: [[str(k.folder), "-o", str(k.work / "blinded-{fmt}"), "--map", str(k.work / "map-{fmt}.json")]],
    "rank": lambda k: [[str(k.folder)]],
    "freeze": lambda k: [[str(k.folder), "--ledger", str(k.work / "fresh-{fmt}.sqlite"),
                          *(["--retrospective"] if k.retrospective else [])]],
    "resolve": lambda k: [[str(k.outcomes), "--ledger", str(k.ledger), "--as-of", k.as_of, "--dry-run"]],
    "evaluate": lambda k: _ledger(k, "--as-of", k.as_of, "--bootstrap", "50"),
    "prereg": _prereg,
    "ledger verify": lambda k: _ledger(k),
    "ledger show": lambda k: _ledger(k),
    "ledger export": lambda k: _ledger(k, "--as-of", k.as_of),
    "ledger head": lambda k: _ledger(k),
    "ledger checkpoint": lambda k: _ledger(k, "--key", str(k.work / "signer.pem"), "-o", str(k.work / "cp-{fmt}.json")),
    "ledger keygen": lambda k: [["-o", str(k.work / "keygen-{fmt}")]],
    "stability": lambda k: [[str(k.one), "--draws", "3"]],
    "redteam": lambda k: [[*k.single, "--max-edits", "3"], [*k.single, "--search", "--budget", "3"]],
    "fmt": lambda k: [["--check", str(k.folder)]],
    "init": lambda k: [[str(k.work / "project-{fmt}")]],
    "test": _tests,
    "policy show": lambda k: [[ref] for ref in k.refs],
    "policy hash": lambda k: [[ref] for ref in k.refs],
    "policy check": lambda k: [list(k.refs)],
    "policy diff": lambda k: [[k.refs[0], k.refs[-1], str(k.folder)]],
    "policy fit": lambda k: [["--policy", k.refs[0], "--version", "9.9.9", "--ledger", str(k.ledger),
                              "--as-of", k.as_of]],
    "policy compare": lambda k: [[k.refs[0], k.refs[-1], "--ledger", str(k.ledger), "--as-of", k.as_of]],
    "config": lambda k: [["--lib-path", str(k.folder)]],
    "rule": lambda k: [["PCSC-W604"], ["E501"]],
    "cache info": lambda k: [[]],
    "cache clear": lambda k: [[]],
}
#: Commands that print no JSON in any format (a picture, an HTML page, a server).
NO_JSON = {"graph", "report", "lsp"}


def _options(command: Command) -> dict[str, Any]:
    return {o: a for a in command_parser(command)._actions for o in a.option_strings}


def json_formats(command: Command) -> list[str]:
    action = _options(command).get("--format")
    return [f for f in (action.choices or []) if f in ("json", "jsonl", "sarif")] if action is not None else []


def test_every_command_has_a_plan() -> None:
    printing = {c.name for c in COMMANDS if json_formats(c)}
    assert printing.isdisjoint(NO_JSON), "these print JSON now: give them a plan"
    assert printing | NO_JSON == {c.name for c in COMMANDS}, "a command neither printing JSON nor in NO_JSON"
    assert set(PLANS) == printing, f"say how to run these: {sorted(printing ^ set(PLANS))}"


# ---------------------------------------------------------------------- validation
def validate(text: str, fmt: str, kind: str | None) -> None:
    """``text`` as ``fmt`` prints it, validated against its schema."""
    if fmt == "sarif":
        log = json.loads(text)
        errors = sorted(Draft4Validator(sarif_schema()).iter_errors(log), key=lambda e: list(e.absolute_path))
        assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
        return
    if fmt == "jsonl":
        row = {"$ref": f"{schemas.URN_PREFIX}ledger-export.v1#/properties/rows/items"}
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(row, registry=schemas.registry())
        for line in text.splitlines():
            errors = list(validator.iter_errors(json.loads(line)))
            assert not errors, [e.message for e in errors[:5]]
        return
    doc = json.loads(text)
    if kind is not None:
        assert doc["schema"]["kind"] == kind
    schemas.validate(doc)
    if doc.get("ok") is False:
        schemas.validate({**doc, "schema": {"kind": "error", "version": 1}})


def _kind_of(command: Command, argv: list[str]) -> str:
    if command.name == "compile" and "ir" in argv:
        return "ir"
    if command.name == "redteam" and "--search" in argv:
        return "redteam-search"
    return command.name.replace(" ", "-")


def _cases() -> list[tuple[str, str]]:
    return [(c.name, kind) for c in COMMANDS if c.name in PLANS for kind in KINDS]


@pytest.mark.parametrize(("name", "kind"), _cases(), ids=lambda v: v.replace(" ", "-"))
def test_every_command_on_every_kind_of_example(name: str, kind: str, kinds: dict[str, Kind]) -> None:
    command = next(c for c in COMMANDS if c.name == name)
    k = kinds[kind]
    if name == "ledger checkpoint" and not (k.work / "signer.pem").exists():
        assert run(["ledger", "keygen", "-o", str(k.work / "signer"), "-q"])[0] == 0
    for argv in PLANS[name](k):
        for fmt in json_formats(command):
            given = [a.replace("{fmt}", fmt) for a in argv]
            code, out, err = run([*command.words, *given, "--format", fmt])
            assert code != 70 and out, f"pcsc {name} {' '.join(argv)} --format {fmt}: exit {code}\n{err}"
            validate(out, fmt, _kind_of(command, argv) if fmt == "json" else None)


# ---------------------------------------------------------------------- error documents
def _broken(k: Kind) -> str:
    path = k.work / "broken.route"
    path.write_text(k.one.read_text(encoding="utf-8") + "\n@@@\n", encoding="utf-8")
    return str(path)


def _tampered(k: Kind) -> str:
    path = k.work / "tampered.json"
    path.write_text(k.cert.read_text(encoding="utf-8").replace('"score"', '"scor"', 1), encoding="utf-8")
    return str(path)


def _not_a_ledger(k: Kind) -> str:
    path = k.work / "not-a-ledger.sqlite"
    path.write_text("not a ledger", encoding="utf-8")
    return str(path)


def _bad_outcomes(k: Kind) -> str:
    path = k.work / "bad-outcomes.toml"
    path.write_text('[[label]]\nroute = "x"\ndate = "soon"\noutcome = "maybe"\n', encoding="utf-8")
    return str(path)


def _taken(k: Kind) -> str:
    """A folder that already holds a project (init refuses to overwrite it)."""
    path = k.work / "taken"
    if not path.exists():
        assert run(["init", str(path), "-q"])[0] == 0
    return str(path)


def _missing(k: Kind, name: str = "missing.route") -> str:
    return str(k.work / name)


def _on_routes(*more: str) -> Plan:
    return lambda k: [[_broken(k), *more], [_missing(k), *more]]


def _on_ledger(*more: str) -> Plan:
    return lambda k: [["--ledger", _not_a_ledger(k), *more], ["--ledger", _missing(k, "none.sqlite"), *more]]


NOPE = "nope@1.0.0"
FAILING: dict[str, Plan] = {
    "check": _on_routes(),
    "compile": _on_routes(),
    "gate": _on_routes(),
    "seams": _on_routes(),
    "splice": _on_routes("--seam", "1"),
    "diff": lambda k: [[_broken(k), str(k.one), "--route", k.route], [str(k.one), _missing(k), "--route", k.route]],
    "verify-cert": lambda k: [[_tampered(k)], [_missing(k, "missing.json")]],
    "explain": _on_routes(),
    "sensitivity": _on_routes(),
    "blind": lambda k: [[_missing(k), "-o", "{work}/blinded-bad-{fmt}", "--map", "{work}/map-bad-{fmt}.json"]],
    "rank": _on_routes(),
    "freeze": _on_routes("--ledger", "{work}/bad-{fmt}.sqlite"),
    "resolve": lambda k: [[_missing(k, "missing.toml"), "--ledger", str(k.ledger)],
                          [_bad_outcomes(k), "--ledger", str(k.ledger), "--as-of", k.as_of, "--dry-run"]],
    "evaluate": lambda k: [*_on_ledger("--as-of", k.as_of)(k),
                           ["--scores", _missing(k, "missing.csv"), "--id", "id", "--outcome", "outcome"]],
    "prereg": lambda k: [[_missing(k, "missing.toml"), "--ledger", str(k.ledger)]],
    "ledger verify": _on_ledger(),
    "ledger show": _on_ledger(),
    "ledger export": _on_ledger(),
    "ledger head": _on_ledger(),
    "ledger checkpoint": lambda k: [["--ledger", str(k.ledger), "--key", _missing(k, "missing.pem"),
                                     "-o", "{work}/cp-bad-{fmt}.json"]],
    "ledger keygen": lambda k: [["-o", _missing(k, "no-folder/key")]],
    "stability": _on_routes(),
    "redteam": _on_routes(),
    "fmt": _on_routes("--check"),
    "init": lambda k: [[_taken(k)]],
    "test": lambda k: [[_missing(k, "missing-tests")]],
    "policy show": lambda k: [[NOPE]],
    "policy hash": lambda k: [[NOPE]],
    "policy check": lambda k: [[*k.refs, NOPE]],
    "policy diff": lambda k: [[k.refs[0], NOPE, str(k.folder)]],
    "policy fit": lambda k: [["--policy", NOPE, "--version", "9.9.9", "--ledger", str(k.ledger), "--as-of", k.as_of],
                             ["--policy", k.refs[0], "--version", "9.9.9", "--ledger", _missing(k, "none.sqlite")]],
    "policy compare": lambda k: [[k.refs[0], NOPE, "--ledger", str(k.ledger), "--as-of", k.as_of]],
    "config": lambda k: [["--policy-path", str(k.folder)]],  # fails only under a broken pcsc.toml (below)
    "rule": lambda k: [["PCSC-W604"]],  # likewise: an unknown code is a usage error, exit 2
    # no argument makes them fail; a cache folder others can write to does, and its
    # document is validated in tests/test_ircache_bound.py
    "cache info": lambda k: [],
    "cache clear": lambda k: [],
}


def test_every_command_has_a_way_to_fail() -> None:
    assert set(FAILING) == set(PLANS)


def _failures(command: Command, plans: list[list[str]], k: Kind, cwd: Path | None = None) -> None:
    for argv in plans:
        for fmt in json_formats(command):
            given = [a.replace("{fmt}", fmt).replace("{work}", str(k.work)) for a in argv]
            code, out, err = run([*command.words, *given, "--format", fmt], cwd)
            shown = f"pcsc {command.name} {' '.join(given)} --format {fmt}: exit {code}\n{err}"
            if fmt == "jsonl":  # rows or nothing: the diagnostic goes to standard error
                assert code not in (0, 70) and not out and "error" in err, shown
                continue
            assert code not in (0, 70) and out, shown
            validate(out, fmt, _kind_of(command, given) if fmt == "json" else None)
            if fmt == "json":
                doc = json.loads(out)
                assert doc.get("ok") is False or doc["diagnostics"], shown


def _failure_cases() -> list[tuple[str, str]]:
    """Each command once, on the kinds in turn: an error document depends on the
    command and on what is wrong, hardly on the example."""
    names = [c.name for c in COMMANDS if c.name in PLANS]
    return [(name, list(KINDS)[i % len(KINDS)]) for i, name in enumerate(names)]


@pytest.mark.parametrize(("name", "kind"), _failure_cases(), ids=lambda v: v.replace(" ", "-"))
def test_every_command_fails_in_a_document_of_its_kind(name: str, kind: str, kinds: dict[str, Kind]) -> None:
    command = next(c for c in COMMANDS if c.name == name)
    if name not in ("config", "rule"):
        _failures(command, FAILING[name](kinds[kind]), kinds[kind])


@pytest.mark.parametrize("name", sorted(PLANS), ids=lambda v: v.replace(" ", "-"))
def test_a_broken_configuration_is_a_document_of_every_kind(name: str, kinds: dict[str, Kind],
                                                            tmp_path: Path) -> None:
    """pcsc.toml is read before any command runs: under a broken one, each command
    still prints its own kind of document, saying why (PCSC-E407)."""
    (tmp_path / "pcsc.toml").write_text("ledger = 3\n", encoding="utf-8")
    command = next(c for c in COMMANDS if c.name == name)
    k = kinds["chain"]
    _failures(command, PLANS[name](k)[:1], k, cwd=tmp_path)
    code, out, _ = run([*command.words, *PLANS[name](k)[0], "--format", "json"], tmp_path)
    assert "PCSC-E407" in out


# ---------------------------------------------------------------------- the tutorial
def test_the_tutorial_steps_print_valid_documents(tmp_path: Path) -> None:
    """docs/tutorial.md's commands, in order, each also with --format json."""
    import shlex

    for step in docrun.steps(TUTORIAL.read_text(encoding="utf-8")):
        docrun.write_step(tmp_path, step)
        if step.command is None:
            continue
        argv = shlex.split(step.command.line)[1:]
        command = next(c for c in COMMANDS if tuple(argv[: len(c.words)]) == c.words)
        for fmt in json_formats(command):
            code, out, err = run([*argv, "--format", fmt], tmp_path)
            assert code == step.command.exit_code and out, f"{step.command.line} --format {fmt}: exit {code}\n{err}"
            validate(out, fmt, _kind_of(command, argv) if fmt == "json" else None)
