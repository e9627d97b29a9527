"""The lock of the test environment (constraints.txt) agrees with pyproject.toml, covers
every package the test extra pulls in, and is what the README's set-up commands install
with; `.ci/run` runs the README's test command as the README writes it.

How the lock is made and refreshed: docs/development.md.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import lockfile
from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

#: The platforms the lock is made for (docs/development.md): CPython 3.11 and newer on
#: Linux, macOS and Windows.
PLATFORMS = {
    "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64"},
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "platform_machine": "AMD64"},
}
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]


def _environment(platform: str, python: str) -> dict[str, str]:
    env = {key: str(value) for key, value in default_environment().items()}
    env.update(PLATFORMS[platform], python_version=python, python_full_version=f"{python}.0",
               implementation_name="cpython", platform_python_implementation="CPython", extra="")
    return env


def _requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]


def _sh_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", text, re.S)


def test_the_lock_is_exact_pins() -> None:
    pins = lockfile.pins()
    assert len(pins) >= 50 and all(str(p.version) in p.line for p in pins)
    with pytest.raises(ValueError, match="not an exact pin"):
        lockfile.pins("pytest>=8\n")
    with pytest.raises(ValueError, match="not an exact pin"):
        lockfile.pins("dask[distributed]==2024.1.0\n")  # pip refuses extras in a constraints file


#: Requirements whose extras name packages of their own, and those packages.
EXTRAS = {"lark[interegular]": "interegular", "dask[distributed]": "distributed", "psycopg[binary]": "psycopg-binary"}


def unmet(requirements: list[Requirement], env: dict[str, str]) -> list[str]:
    """What the lock fails to give ``requirements`` on ``env``: a requirement (or a
    package its extras name) without a pin, or pinned outside its range."""
    locked = lockfile.pinned_here(env)
    wrong = []
    for req in requirements:
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canonicalize_name(req.name)
        if name not in locked:
            wrong.append(f"{req} is not in constraints.txt")
        elif not req.specifier.contains(locked[name], prereleases=True):
            wrong.append(f"{req}: constraints.txt pins {locked[name]}")
        for extra in sorted(req.extras):
            package = EXTRAS.get(f"{name}[{extra}]", f"the package of {name}[{extra}]")
            if canonicalize_name(package) not in locked:
                wrong.append(f"{req}: {package} is not in constraints.txt")
    return wrong


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_every_requirement_is_pinned_within_its_range(platform: str, python: str) -> None:
    """Each runtime and test requirement of pyproject.toml, where its marker applies, has
    exactly one pin for the platform, inside the requirement's range."""
    requirements = _requirements()
    assert set(EXTRAS) == {f"{canonicalize_name(r.name)}[{e}]" for r in requirements for e in r.extras}
    assert unmet(requirements, _environment(platform, python)) == [], "refresh the lock (docs/development.md)"


def test_a_stale_lock_is_caught() -> None:
    """The check above can fail: a requirement the lock lacks, or pins outside its range."""
    pinned = lockfile.pinned_here(_environment("linux", "3.11"))[canonicalize_name("pytest")]
    stale = [Requirement(f"pytest>{pinned}"), Requirement("no-such-package>=1"),
             Requirement("pytest; python_version < '3'"), Requirement("pytest[new-extra]")]
    assert unmet(stale, _environment("linux", "3.11")) == [
        f"pytest>{pinned}: constraints.txt pins {pinned}", "no-such-package>=1 is not in constraints.txt",
        "pytest[new-extra]: the package of pytest[new-extra] is not in constraints.txt"]


def test_the_lock_covers_every_package_the_test_extra_installs() -> None:
    """Walked from this environment's metadata: everything `pcsc[test]` pulls in,
    transitively, is pinned for this interpreter and platform."""
    locked = lockfile.pinned_here()
    reached = {canonicalize_name(d.metadata["Name"]) for d in lockfile.installed_closure()}
    assert {"pytest", "pytest-asyncio", "pytest-xdist", "numpy", "sympy", "lark"} <= reached
    assert reached - set(locked) == set(), "refresh the lock (docs/development.md)"


def _pip_install(command: str) -> list[str]:
    words = shlex.split(command.split("&&")[0])
    assert words[:4] == ["python3", "-m", "pip", "install"], command
    return words[4:]


def test_the_readme_set_up_commands_install_with_the_lock() -> None:
    first, second = _sh_blocks((ROOT / "README.md").read_text(encoding="utf-8"))[:2]
    for command in (first, second):
        words = _pip_install(command)
        assert "-c" in words, f"`{command}` does not install with the lock"
        assert (ROOT / words[words.index("-c") + 1]).resolve() == lockfile.LOCK
    assert second.endswith("&& python3 -m pytest -q"), second


def _readme_block(folder: Path, n: int) -> str:
    proc = subprocess.run(["bash", "-c", f'. "{ROOT}/.ci/lib.sh" && readme_block {n}'], cwd=folder,
                          capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout.removesuffix("\n")


def test_ci_runs_the_readme_test_command_as_written() -> None:
    blocks = _sh_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert _readme_block(ROOT, 1) == blocks[0]
    assert _readme_block(ROOT, 2) == blocks[1]
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "test_command=$(readme_block 2)" in run and 'eval "$test_command"' in run


def test_the_extraction_skips_other_blocks(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "# t\n```\nnot sh\n```\n```sh\nfirst\n```\ntext\n```python\nprint()\n```\n```sh\nsecond a\nsecond b\n```\n",
        encoding="utf-8")
    assert _readme_block(tmp_path, 1) == "first"
    assert _readme_block(tmp_path, 2) == "second a\nsecond b"
    assert _readme_block(tmp_path, 3) == ""
