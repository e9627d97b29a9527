"""Golden files per pass: the lowered IR (`compile --emit ir`) and the ranking packet
(`compile --format json`) of every example, compared byte for byte.

Each example is compiled from the repo root with its relative path
(`examples/<name>.route`), exactly as `pcsc compile` would be run there, and its
stdout is compared with `tests/data/golden/<name>.ir.json` and
`tests/data/golden/<name>.packet.json`.

When a change to the compiler is meant to change these outputs, regenerate them with

    python3 tests/regen_golden.py

then read the diff (`git diff tests/data/golden`) line by line before committing: a
golden file is a claim that every number in it is right.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli
from tests.regen_golden import CODE_SHA256, GOLDEN, KINDS, examples, golden_path, normalised, raw, render

EXAMPLES = examples()
CASES = [(example, kind) for example in EXAMPLES for kind in KINDS]


def test_every_example_has_golden_files_and_no_golden_is_stale() -> None:
    assert len(EXAMPLES) >= 5
    expected = {golden_path(e, k).name for e, k in CASES}
    present = {p.name for p in GOLDEN.glob("*.json")}
    assert present == expected, "run `python3 tests/regen_golden.py`"


@pytest.mark.parametrize(("example", "kind"), CASES, ids=[f"{e}:{k}" for e, k in CASES])
def test_output_matches_golden(example: str, kind: str) -> None:
    expected = golden_path(example, kind).read_bytes()
    actual = render(example, kind).encode("utf-8")
    if actual != expected:
        # A readable failure first (which key moved), then the byte-for-byte verdict.
        assert json.loads(actual) == json.loads(expected), f"{example} {kind}: run `python3 tests/regen_golden.py`"
    assert actual == expected, f"{example} {kind}: same JSON, different bytes (key order, floats or indentation)"


def test_golden_packets_are_well_formed() -> None:
    """The parts of the §10 contract the golden packets pin: one route entry per route
    block, every route bound to venture@1.0.0, and paths relative to the repo root."""
    for example in EXAMPLES:
        packet = json.loads(golden_path(example, "packet").read_text(encoding="utf-8"))
        ir = json.loads(golden_path(example, "ir").read_text(encoding="utf-8"))
        assert [r["route"] for r in packet["routes"]] == [r["name"] for r in ir["routes"]]
        digest = hashlib.sha256((ROOT / example).read_bytes()).hexdigest()
        assert packet["inputs"] == [{"path": example, "sha256": digest}]
        assert packet["policy"]["id"] == "venture" and packet["policy"]["version"] == "1.0.0"
        for route in packet["routes"]:
            assert route["file"] == example
            assert len(route["transitions"]) >= 1


def _package_hash() -> str:
    """The canonical hash of pcsc's code, recomputed here from the files on disk (not by
    `pcsc.base.codehash`): each .py and .lark file under pcsc/, by relative path, as
    path NUL length NUL bytes, CRLF read as LF."""
    package = Path(pcsc_file()).parent
    chunks = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".lark")):
                path = Path(folder, name)
                chunks.append((path.relative_to(package).as_posix(), path.read_bytes().replace(b"\r\n", b"\n")))
    digest = hashlib.sha256()
    for relative, data in sorted(chunks):
        digest.update(b"%s\0%d\0%s" % (relative.encode(), len(data), data))
    return digest.hexdigest()


def pcsc_file() -> str:
    import pcsc

    return str(pcsc.__file__)


def test_every_packet_names_the_code_that_computed_it() -> None:
    """The golden packets hold a placeholder for the code hash (it changes with any edit);
    the real output carries the hash of the package's code, as recomputed here, and a
    changed file changes it."""
    from pcsc._version import __version__

    want = _package_hash()
    for example in EXAMPLES:
        doc = json.loads(raw(example, "packet"))
        assert {json.dumps(r["scorer"]) for r in doc["routes"]} == {
            json.dumps({"code_sha256": want, "pcsc": __version__})}
        golden = json.loads(golden_path(example, "packet").read_text(encoding="utf-8"))
        assert {r["scorer"]["code_sha256"] for r in golden["routes"]} == {CODE_SHA256}


def test_the_code_hash_covers_every_file_and_its_bytes(tmp_path: Path) -> None:
    from pcsc.base.codehash import code_sha256

    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "g.lark").write_text("start: x\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not code\n", encoding="utf-8")
    first = code_sha256(tmp_path)
    (tmp_path / "notes.txt").write_text("still not code\n", encoding="utf-8")
    assert code_sha256(tmp_path) == first
    (tmp_path / "g.lark").write_text("start: y\n", encoding="utf-8")
    second = code_sha256(tmp_path)
    assert second != first
    (tmp_path / "a.py").write_bytes(b"x = 1\r\n")  # a checkout that converts line ends
    assert code_sha256(tmp_path) == second
    (tmp_path / "a.py").rename(tmp_path / "b.py")  # the same bytes under another name
    assert code_sha256(tmp_path) not in (first, second)


def _steps(route: dict[str, Any]) -> dict[str, Any]:
    """A certificate route's step values by symbol: a number's float, else the value."""
    return {s["symbol"]: s["value"]["f"] if "f" in s["value"] else s["value"]["v"] for s in route["steps"]}


@pytest.mark.parametrize("example", EXAMPLES)
def test_golden_packet_numbers_are_the_independent_checkers(example: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The golden packet's numbers are not only what the compiler wrote last time: each
    one is the value the certificate checker (pcsc/certify/check/, which imports nothing
    of pcsc and recomputes every step from the route text and the policy file in exact
    rationals) accepts for that step. The certificate is written beside a copy of the
    example; `verify-cert` must pass, then every golden number must be its step's."""
    route_file = tmp_path / Path(example).name
    shutil.copy(ROOT / example, route_file)
    cert = tmp_path / "cert.json"
    code, _, err = run_cli(capsys, "compile", str(route_file), "--cert", str(cert))
    assert code == 0, err
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 0 and out.startswith("verified"), out + err
    checked = {r["route"]: r for r in json.loads(cert.read_text(encoding="utf-8"))["routes"]}
    packet = json.loads(golden_path(example, "packet").read_text(encoding="utf-8"))
    assert sorted(checked) == sorted(r["route"] for r in packet["routes"])
    for route in packet["routes"]:
        cert_route = checked[route["route"]]
        steps = _steps(cert_route)
        names = [t["name"] for t in route["transitions"]]
        n = len(names)
        decision = cert_route["decision"]
        assert (route["verdict"], route["score"]) == (decision["verdict"], (decision["score"] or {}).get("f"))
        assert route["ungated_score"] == steps["score"] == steps["R_0"]
        assert route["value"] == steps["V"] == steps[f"R_{n}"]
        assert route["flat_product"] == steps["flat_product"]
        assert (route["criteria_score"], route["bucket"], route["eligible"]) == (
            steps.get("T"), steps.get("bucket"), steps["eligible"])
        assert route["binding"]["transition"] == names[steps["binding"]]
        assert [e["name"] for e in route["evidence"] if e["admitted"]] == cert_route["admissible_evidence"]
        for i, t in enumerate(route["transitions"]):
            k = t["name"]
            for key in ("p_prior", "W", "p", "budget", "floor_class", "floor_delta", "c", "U", "D"):
                assert t[key] == steps[f"{k}.{key}"], (route["route"], k, key)
            assert t["R_next"] == steps[f"R_{i + 1}"], (route["route"], k)


def _run(args: list[str], hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pcsc", "compile", *EXAMPLES, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_two_processes_produce_identical_bytes(kind: str) -> None:
    """Determinism: two separate processes compiling every example at once (with
    different string-hash seeds, so any dependence on set iteration order shows) print
    the same bytes; and each route comes out as it does compiled alone (the golden
    files), so nothing one file leaves in the session changes another's numbers."""
    first = _run(list(KINDS[kind]), "1")
    second = _run(list(KINDS[kind]), "2")
    assert first == second
    routes = json.loads(normalised(first.decode("utf-8")))["routes"]
    golden = [r for e in EXAMPLES for r in json.loads(golden_path(e, kind).read_text(encoding="utf-8"))["routes"]]
    assert routes == golden and len(routes) >= 6
