"""The built wheel works on its own: data files inside the package, CLI outside the repo.

The wheel is built from this checkout (no build isolation: hatchling comes from the
[test] extra, so nothing is downloaded), installed with --no-deps into a fresh virtual
environment that sees this interpreter's packages for lark, attrs, numpy and the rest,
and run from a folder outside the repository. Every check that pcsc, its grammar, its
policy and its obligation library come from the venv, not the editable checkout, is
an assertion.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SPEC_ROUTE

DATA_FILES = (
    "pcsc/_data/grammar/pcsc.lark",
    "pcsc/_data/policies/venture/1.0.0.toml",
    "pcsc/_data/obligations/venture.obl",
    "pcsc/render/templates/report.html.j2",
)
SPEC_SCORE = 885_626.17


class Installed:
    def __init__(self, wheel: Path, venv: Path, work: Path) -> None:
        self.wheel = wheel
        self.venv = venv
        self.work = work
        bindir = "Scripts" if os.name == "nt" else "bin"
        exe = ".exe" if os.name == "nt" else ""
        self.python = venv / bindir / f"python{exe}"
        self.pcsc = venv / bindir / f"pcsc{exe}"

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv], capture_output=True, text=True, cwd=self.work, env=_clean_env(), timeout=120
        )


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["NO_COLOR"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _inside(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    assert not _inside(base, ROOT), f"the temporary folder {base} must lie outside the repository"

    dist = base / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        cwd=base,
        env=_clean_env(),
        timeout=300,
    )
    _check(build, "python -m build --wheel --no-isolation (hatchling and build come from the [test] extra)")
    wheels = sorted(dist.glob("pcsc-*.whl"))
    assert len(wheels) == 1, f"expected one wheel, found {wheels}"

    venv = base / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        capture_output=True,
        text=True,
        cwd=base,
        env=_clean_env(),
        timeout=120,
    )
    _check(made, "python -m venv")
    inst = Installed(wheels[0], venv, base / "work")
    # When the tests themselves run in a virtual environment, --system-site-packages
    # reaches the base interpreter, not this one: name this interpreter's site-packages
    # (where the dependencies and pip live) in a .pth file. Its own .pth files, the
    # editable install's among them, are not processed from there.
    purelib = subprocess.run(
        [str(inst.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=60,
    )
    _check(purelib, "the venv's python")
    venv_site = Path(purelib.stdout.strip())
    assert _inside(venv_site, venv)
    outer = dict.fromkeys([*site.getsitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (venv_site / "_pcsc_test_outer.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")

    pip = subprocess.run(
        [str(inst.python), "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall", str(wheels[0])],
        capture_output=True,
        text=True,
        cwd=base,
        env=_clean_env(),
        timeout=300,
    )
    _check(pip, "pip install --no-deps <wheel>")

    inst.work.mkdir()
    shutil.copy(SPEC_ROUTE, inst.work / SPEC_ROUTE.name)
    return inst


def test_wheel_carries_the_data_folders(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as zf:
        names = set(zf.namelist())
    for name in DATA_FILES:
        assert name in names, f"{name} missing from {installed.wheel.name}"
    # the package itself, and nothing from the checkout's top level outside pcsc/
    assert "pcsc/__init__.py" in names and "pcsc/base/resources.py" in names
    assert "pcsc/py.typed" in names, "the py.typed marker (PEP 561) is missing: type checkers would ignore pcsc"
    stray = sorted(n for n in names if not n.startswith(("pcsc/", "pcsc-")))
    assert stray == [], f"files outside the package in the wheel: {stray}"


def test_report_outside_the_repo(installed: Installed) -> None:
    proc = installed.run(installed.pcsc, "report", SPEC_ROUTE.name, "-o", "report.html")
    _check(proc, "pcsc report")
    page = (installed.work / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "885,626.17 USD" in page


def test_venv_imports_pcsc_from_the_wheel(installed: Installed) -> None:
    probe = (
        "import json, pcsc, pcsc.base.resources as r; "
        "print(json.dumps({'pcsc': pcsc.__file__, 'version': pcsc.__version__, "
        "**{n: str(r.data_dir(n)) for n in ('grammar', 'policies', 'obligations')}}))"
    )
    proc = installed.run(installed.python, "-c", probe)
    _check(proc, "import pcsc in the venv")
    where = json.loads(proc.stdout)
    assert _inside(where["pcsc"], installed.venv), f"pcsc imported from {where['pcsc']}, not the venv"
    assert not _inside(where["pcsc"], ROOT)
    for name in ("grammar", "policies", "obligations"):
        assert _inside(where[name], installed.venv), f"data_dir({name!r}) is {where[name]}, not in the venv"
        assert Path(where[name]).parts[-2:] == ("_data", name)
    assert (Path(where["grammar"]) / "pcsc.lark").is_file()
    assert installed.pcsc.is_file(), "the console script `pcsc` was not installed"


def test_check_outside_the_repo(installed: Installed) -> None:
    proc = installed.run(installed.pcsc, "check", SPEC_ROUTE.name)
    _check(proc, "pcsc check")
    assert "ok: 1 route checked" in proc.stderr
    proc = installed.run(installed.pcsc, "check", "--format", "json", SPEC_ROUTE.name)
    _check(proc, "pcsc check --format json")
    assert json.loads(proc.stdout)["diagnostics"] == []


def test_compile_outside_the_repo(installed: Installed) -> None:
    proc = installed.run(installed.pcsc, "compile", "--format", "json", SPEC_ROUTE.name)
    _check(proc, "pcsc compile --format json")
    packet = json.loads(proc.stdout)
    assert packet["diagnostics"] == []
    assert packet["policy"]["id"] == "venture" and packet["policy"]["version"] == "1.0.0"
    (route,) = packet["routes"]
    assert route["route"] == "devtools_api"
    assert route["score"] == pytest.approx(SPEC_SCORE, abs=0.01)


def test_shipped_library_and_policy_are_found_in_the_venv(installed: Installed) -> None:
    # the obligation library the route `uses`: the one shipped in the wheel
    proc = installed.run(installed.pcsc, "compile", "--emit", "ir", SPEC_ROUTE.name)
    _check(proc, "pcsc compile --emit ir")
    ir = json.dumps(json.loads(proc.stdout))
    assert '"library": "venture"' in ir
    files = {v for v in _walk(json.loads(proc.stdout)) if isinstance(v, str) and v.endswith("venture.obl")}
    assert files, "no span of the IR points at venture.obl"
    for f in files:
        assert _inside(f, installed.venv), f"venture.obl read from {f}, not from the venv"
    # the policy: shipped in the wheel, same identity as the checkout's
    proc = installed.run(installed.pcsc, "policy", "show", "--format", "json", "venture@1.0.0")
    _check(proc, "pcsc policy show venture@1.0.0")
    shown = json.loads(proc.stdout)
    assert _inside(shown["path"], installed.venv), f"policy read from {shown['path']}, not from the venv"
    here = subprocess.run(
        [sys.executable, "-m", "pcsc", "policy", "hash", "--format", "json", "venture@1.0.0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert shown["sha256"] == json.loads(here.stdout)["sha256"]


def _walk(value: object) -> list[object]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)]
    if isinstance(value, list):
        return [x for v in value for x in _walk(v)]
    return [value]


def test_the_wheel_is_named_as_docs_pipelines_says(installed: Installed) -> None:
    page = (ROOT / "docs" / "pipelines.md").read_text(encoding="utf-8")
    assert f"dist/{installed.wheel.name}" in page
