"""Every `--format json` document validates against the JSON Schema of its kind.

The schemas ship in the package (`pcsc/render/schemas/<kind>.v<major>.json`). Here: the
schema files themselves, and the commands with the options that change a document's
shape (`--set`, `--symbolic`, `--search`, a forecast loop with resolved milestones);
tests/test_schemas_everywhere.py runs every command of the registry on every kind of
shipped example, and makes each fail.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError

from pcsc.cli import main
from pcsc.cli.registry import GROUPS
from pcsc.render import schemas
from pcsc.render.envelope import SCHEMA_VERSIONS, envelope
from tests.conftest import EXAMPLES, ROOT, SPEC_ROUTE
from tests.test_forecast_loop import FAR, outcomes, write_routes

SCHEMA_DIR = ROOT / "pcsc" / "render" / "schemas"


# ---------------------------------------------------------------------- the files
def test_every_kind_has_a_schema_and_every_schema_a_kind() -> None:
    kinds = {f"{kind}.v{version}.json" for kind, version in SCHEMA_VERSIONS.items()}
    assert set(schemas.names()) == kinds | {schemas.COMMON}
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == schemas.names()
    assert schemas.kinds() == dict(sorted(SCHEMA_VERSIONS.items()))


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMA_DIR.glob("*.json")))
def test_every_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = schemas.load_file(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == schemas.URN_PREFIX + name.removesuffix(".json")
    assert schema.get("title") and schema.get("description")
    # every $ref is absolute (a URN the registry holds) and resolves
    resolver = schemas.registry().resolver()
    for ref in _refs(schema):
        assert ref.startswith(schemas.URN_PREFIX), ref
        resolver.lookup(ref)


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@pytest.mark.parametrize("kind", sorted(SCHEMA_VERSIONS))
def test_a_kind_checks_its_own_name_and_the_envelope(kind: str) -> None:
    schema = schemas.load(kind)
    assert schema["properties"]["schema"]["properties"]["kind"] == {"const": kind}
    validator = Draft202012Validator(schema, registry=schemas.registry())
    other = "check" if kind != "check" else "gate"
    doc = envelope(other, {})
    assert not validator.is_valid(doc), "a document of another kind is refused"
    assert not validator.is_valid({"schema": {"kind": kind, "version": SCHEMA_VERSIONS[kind]}}), "no envelope"


def test_the_schemas_are_strict_where_pipelines_rely_on_a_key() -> None:
    good = _run("gate", str(SPEC_ROUTE), "--format", "json")
    schemas.validate(good)
    bad = copy.deepcopy(good)
    bad["routes"][0]["verdict"] = "maybe"
    with pytest.raises(ValidationError):
        schemas.validate(bad)
    bad = copy.deepcopy(good)
    del bad["routes"][0]["uncovered"]
    with pytest.raises(ValidationError):
        schemas.validate(bad)
    bad = copy.deepcopy(good)
    bad["inputs"] = [{"path": "x", "sha256": "nope"}]
    with pytest.raises(ValidationError):
        schemas.validate(bad)
    # ... and open to keys added later
    added = copy.deepcopy(good)
    added["new_key"] = 1
    added["routes"][0]["new_key"] = {"any": "thing"}
    schemas.validate(added)


def test_validate_picks_the_schema_the_document_names() -> None:
    with pytest.raises(schemas.SchemaError, match="names no schema"):
        schemas.validate({"pcsc": "0"})
    with pytest.raises(schemas.SchemaError, match="no schema nope.v1.json"):
        schemas.validate({"schema": {"kind": "nope", "version": 1}})
    with pytest.raises(schemas.SchemaError, match="no schema check.v9.json"):
        schemas.validate({"schema": {"kind": "check", "version": 9}})
    with pytest.raises(schemas.SchemaError, match="no document kind"):
        schemas.load("nope")


def test_validate_says_when_jsonschema_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(schemas.SchemaError, match="pip install jsonschema"):
        schemas.validate(envelope("check", {"diagnostics": []}))


# ---------------------------------------------------------------------- the commands
def _run(*argv: str) -> dict[str, Any]:
    """Run one command in-process; its standard output parsed, in the envelope."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(list(argv))
    assert out.getvalue(), f"{argv}: no output; stderr: {err.getvalue()}"
    doc: dict[str, Any] = json.loads(out.getvalue())
    assert {"pcsc", "schema", "inputs"} <= set(doc), f"{argv}: no envelope"
    return doc


def _kind_of(argv: tuple[str, ...]) -> str:
    if argv[0] in GROUPS:
        return f"{argv[0]}-{argv[1]}"
    if argv[0] == "compile" and "ir" in argv:
        return "ir"
    if argv[0] == "redteam" and "--search" in argv:
        return "redteam-search"
    return argv[0]


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A ledger with two frozen routes and their outcomes, and a refitted policy."""
    tmp = tmp_path_factory.mktemp("loop")
    ledger = str(tmp / "ledger.sqlite")
    routes = write_routes(tmp)
    assert main(["freeze", *routes, "--ledger", ledger]) == 0
    path = outcomes(tmp)
    assert main(["resolve", path, "--ledger", ledger, "--as-of", FAR.isoformat()]) == 0
    policies = tmp / "policies"
    (policies / "venture").mkdir(parents=True)
    fit = str(policies / "venture" / "1.9.0.toml")
    assert main(["policy", "fit", "--policy", "venture@1.0.0", "--version", "1.9.0", "-o", fit,
                 "--ledger", ledger, "--as-of", FAR.isoformat()]) == 0
    return {"ledger": ledger, "routes": routes[0], "outcomes": path, "policies": str(policies), "tmp": str(tmp)}


SPEC = str(SPEC_ROUTE)
COMMANDS: list[tuple[str, ...]] = [  # options beside the plain runs of tests/test_schemas_everywhere.py
    ("seams", SPEC, "--symbolic", "--experiment"),
    ("redteam", SPEC, "--max-edits", "20"),
    ("stability", SPEC, str(EXAMPLES / "ci_cache.route"), "--draws", "5"),
    ("redteam", SPEC, "--search", "--conditions", "--budget", "6"),
    ("seams", SPEC, "--experiment", "--search", "--budget", "4"),
    ("policy", "diff", "venture@1.0.0", "venture@1.0.0", SPEC, "--set", 'priors."devtools/scale".p=0.2'),
    ("compile", SPEC, "--set", "vision.tam=20B"),
    ("seams", SPEC, "--set", "fold.abandonment=true"),
    ("seams", SPEC, "--experiment", "--set", "fold.discount=0.08"),
    ("gate", SPEC, "--suggest", "--set", "floors.delta.arr.points=[[1, 1e9]]"),
    ("explain", SPEC, "--set", "fold.discount=0.08"),
    ("redteam", SPEC, "--max-edits", "5", "--set", "vision.tam=20B"),
    ("splice", SPEC, "--seam", "1", "--set", "vision.tam=20B"),
    ("splice", SPEC, "--seam", "1"),
    # graph routes (docs/graphs.md): the IR's `shape`, a graph route's explanation and seam
    ("compile", "--emit", "ir", str(EXAMPLES / "graphs" / "lock_cert_pilot.route")),
    ("explain", str(EXAMPLES / "graphs" / "lock_cert_pilot.route")),
    ("splice", str(EXAMPLES / "graphs" / "lock_cert_pilot.route"), "--seam", "4"),
]
LOOP_COMMANDS: list[tuple[str, ...]] = [
    ("freeze", "{routes}", "--ledger", "{tmp}/fresh.sqlite"),
    ("resolve", "{outcomes}", "--ledger", "{ledger}", "--as-of", FAR.isoformat(), "--dry-run"),
    ("evaluate", "--ledger", "{ledger}", "--as-of", FAR.isoformat(), "--bootstrap", "200"),
    ("evaluate", "--scores", str(EXAMPLES / "routecast_table_a1.csv"), "--id", "blind_id", "--outcome",
     "outcome_bucket", "--positive", "S+,+", "--negative", "-", "--bootstrap", "200"),
    ("ledger", "verify", "--ledger", "{ledger}"),
    ("ledger", "show", "--ledger", "{ledger}"),
    ("ledger", "show", "--ledger", "{ledger}", "--route", "devtools_api"),
    ("ledger", "head", "--ledger", "{ledger}"),
    ("ledger", "export", "--ledger", "{ledger}", "--as-of", FAR.isoformat()),
    ("blind", "{routes}", "-o", "{tmp}/blinded", "--map", "{tmp}/blind-map.json"),
    ("evaluate", "--scores", str(EXAMPLES / "routecast_table_a1.csv"), "--id", "blind_id", "--outcome",
     "outcome_bucket", "--positive", "S+,+", "--negative", "-", "--bootstrap", "200", "--strata", "recognition_risk"),
    ("evaluate", "--scores", str(EXAMPLES / "routecast_table_a1.csv"), "--id", "blind_id", "--outcome",
     "outcome_bucket", "--positive", "S+,+", "--negative", "-", "--bootstrap", "200", "--covariate", "recognition_risk",
     "--incumbent", "blind_llm_mean"),
    ("init", "{tmp}/project"),
    ("ledger", "keygen", "-o", "{tmp}/signer"),
    ("ledger", "checkpoint", "--ledger", "{ledger}", "--key", "{tmp}/signer.pem", "-o", "{tmp}/checkpoint.json"),
    ("policy", "fit", "--policy", "venture@1.0.0", "--version", "1.9.1", "--ledger", "{ledger}",
     "--as-of", FAR.isoformat()),
    ("policy", "compare", "venture@1.0.0", "venture@1.9.0", "--policy-path", "{policies}", "--ledger", "{ledger}",
     "--as-of", FAR.isoformat()),
    ("policy", "fit", "--policy", "venture@1.0.0", "--version", "1.9.2", "--ledger", "{ledger}",
     "--as-of", FAR.isoformat(), "--holdout", "0", "--gains", "--calibration", "isotonic"),
    ("policy", "compare", "venture@1.0.0", "venture@1.9.0", "--policy-path", "{policies}", "--ledger", "{ledger}",
     "--as-of", FAR.isoformat(), "--holdout", "1", "--routes", "{tmp}"),
]


def _check(argv: tuple[str, ...], kind: str) -> None:
    doc = _run(*argv, "--format", "json")
    assert doc["schema"] == {"kind": kind, "version": SCHEMA_VERSIONS[kind]}
    schemas.validate(doc)


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_command_output_validates(argv: tuple[str, ...]) -> None:
    _check(argv, _kind_of(argv))


@pytest.mark.parametrize("argv", LOOP_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_forecast_loop_output_validates(argv: tuple[str, ...], loop: dict[str, str]) -> None:
    _check(tuple(a.format(**loop) for a in argv), _kind_of(argv))


def test_refused_route_validates(tmp_path: Path) -> None:
    from pcsc.analysis.seams.splice import splice_text
    from pcsc.compiler.session import Session

    [route] = Session().load_routes(SPEC_ROUTE, SPEC)
    path = tmp_path / "spliced.route"
    path.write_text(splice_text(route, 1), encoding="utf-8")
    for argv in (("gate", str(path)), ("compile", str(path)), ("explain", str(path))):
        _check(argv, argv[0])


def test_input_errors_validate(tmp_path: Path) -> None:
    broken = tmp_path / "broken.route"
    broken.write_text(SPEC_ROUTE.read_text(encoding="utf-8").replace("launch: garage", "launch: garag"),
                      encoding="utf-8")
    for argv in (("check", str(broken)), ("compile", str(broken)), ("gate", str(broken))):
        doc = _run(*argv, "--format", "json")
        assert doc["diagnostics"]
        schemas.validate(doc)


@pytest.mark.parametrize(
    "argv",
    [
        ("policy", "show", "nope@1.0.0"),
        ("policy", "hash", "nope@1.0.0"),
        ("policy", "check", "venture@1.0.0", "nope@1.0.0"),
        ("compile", SPEC, "--policy-path", "{tmp}/broken"),
        ("ledger", "verify", "--ledger", "{tmp}/missing.sqlite"),
        ("ledger", "show", "--ledger", "{tmp}/missing.sqlite"),
        ("evaluate", "--ledger", "{tmp}/missing.sqlite"),
        ("resolve", "{tmp}/missing.toml", "--ledger", "{tmp}/missing.sqlite"),
    ],
    ids=" ".join,
)
def test_failures_validate(argv: tuple[str, ...], tmp_path: Path) -> None:
    """A command that cannot do its work prints `ok: false` and why, in its own kind."""
    broken = tmp_path / "broken" / "venture"
    broken.mkdir(parents=True)
    (broken / "1.0.0.toml").write_text("this is not toml [", encoding="utf-8")
    doc = _run(*(a.format(tmp=tmp_path) for a in argv), "--format", "json")
    schemas.validate(doc)
    if doc.get("ok") is False:
        schemas.validate({**doc, "schema": {"kind": "error", "version": SCHEMA_VERSIONS["error"]}})


def test_library_documents_validate() -> None:
    """The library API's `to_json()` writes the same documents as the command line."""
    import pcsc

    for doc in (
        pcsc.compile(SPEC_ROUTE).to_json(),
        pcsc.check(SPEC_ROUTE).to_json(),
        pcsc.analyse_seams(SPEC_ROUTE).to_json(),
    ):
        schemas.validate(doc)


def test_the_resolve_schema_names_the_buckets_and_labels_outcomes_take() -> None:
    from pcsc.forecast.outcomes import BUCKETS, OUTCOMES

    item = schemas.load("resolve")["properties"]["routes"]["items"]["properties"]
    assert item["bucket"]["enum"] == [*BUCKETS, None]
    assert item["label"]["enum"] == list(OUTCOMES)
