"""The VS Code extension is a language client: built into a `.vsix` with @vscode/vsce, and
its activate() starts the real `pcsc lsp` and completes initialize.

No VS Code binary is needed, nor could one be fetched (@vscode/test-electron downloads
VS Code from its own site, outside the package registries): the extension runs from the
unpacked `.vsix` under node, with `editors/vscode/test/vscode-shim.js` in place of the
`vscode` module and the real vscode-languageclient bundled in the package
(`editors/vscode/test/activate.js`). Node and npm are needed; the pinned packages are
installed with `npm ci` when `editors/vscode/node_modules` lacks them. Under CI
(`CI=true`, where .ci/lib.sh installs them) a missing tool fails instead of skipping.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("pygls")

EXTENSION = ROOT / "editors" / "vscode"
PACKAGE = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
LOCK = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
ROUTE = (ROOT / "examples" / "devtools_api.route").read_text(encoding="utf-8")
GOOD, BAD = "transition launch: garage -> wedge", "transition launch: garage -> wedgee"
RUNTIME = ("vscode-languageclient", "vscode-languageserver-protocol", "vscode-jsonrpc", "vscode-languageserver-types")


def _tools() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"{', '.join(missing)} not on PATH: the VS Code extension test needs node and npm"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (.ci/lib.sh installs the packages; the machine has node)")
        pytest.skip(reason)
    wanted = ("vscode-languageclient", "@vscode/vsce", "vscode-textmate")
    with open(EXTENSION / "package.json", "rb") as handle:  # one `npm ci` at a time
        fcntl.flock(handle, fcntl.LOCK_EX)
        if not all((EXTENSION / "node_modules" / p / "package.json").is_file() for p in wanted):
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, check=True,
                           capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `.vsix` built by the pinned @vscode/vsce, as the extension's README says."""
    _tools()
    out = tmp_path_factory.mktemp("vsix") / "pcsc.vsix"
    proc = subprocess.run(
        [str(EXTENSION / "node_modules" / ".bin" / "vsce"), "package", "--allow-missing-repository",
         "--skip-license", "-o", str(out)],
        cwd=EXTENSION, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def unpacked(vsix: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("installed")
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(folder)
    return folder / "extension"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workspace")
    assert GOOD in ROUTE
    (folder / "broken.route").write_text(ROUTE.replace(GOOD, BAD), encoding="utf-8")
    (folder / "clean.route").write_text(ROUTE, encoding="utf-8")
    return folder


def activate(extension: Path, workspace: Path, settings: dict[str, Any], *documents: str) -> dict[str, Any]:
    """Run activate() and deactivate() under node (test/activate.js) and return what it saw."""
    scenario = {"extension": str(extension), "settings": settings, "workspaceFolder": str(workspace),
                "documents": [{"file": str(workspace / d)} for d in documents], "timeoutMs": 90000}
    # `pcsc` on the PATH is this interpreter's (the default `pcsc.server.path`)
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run(["node", str(EXTENSION / "test" / "activate.js")], input=json.dumps(scenario),
                          capture_output=True, text=True, timeout=180, env=env, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_manifest_declares_the_client() -> None:
    assert PACKAGE["main"] == "./extension.js"
    assert PACKAGE["activationEvents"] == ["onLanguage:pcsc"]
    [language] = PACKAGE["contributes"]["languages"]
    assert (language["id"], language["extensions"]) == ("pcsc", [".route", ".obl"])
    props = PACKAGE["contributes"]["configuration"]["properties"]
    assert props["pcsc.server.path"]["default"] == "pcsc"
    assert props["pcsc.server.args"]["default"] == ["lsp"]
    # every npm package is pinned to one version, and the lock agrees with the manifest
    for section in ("dependencies", "devDependencies"):
        for name, version in PACKAGE[section].items():
            assert version[0].isdigit(), f"{name} is not pinned: {version}"
            assert LOCK["packages"][f"node_modules/{name}"]["version"] == version
            assert LOCK["packages"][""][section][name] == version


def test_vsix_holds_the_extension_and_its_runtime_only(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
        vsixmanifest = archive.read("extension.vsixmanifest").decode("utf-8")
    for name in ("extension/extension.js", "extension/package.json", "extension/syntaxes/pcsc.tmLanguage.json",
                 "extension/language-configuration.json", "extension/readme.md"):
        assert name in names, name
    for package in RUNTIME:
        assert f"extension/node_modules/{package}/package.json" in names, package
    # the test's own packages and files stay out
    for dev in (*PACKAGE["devDependencies"], "test"):
        prefix = f"extension/node_modules/{dev}/" if dev != "test" else "extension/test/"
        assert not any(n.startswith(prefix) for n in names), dev
    assert manifest["main"] == "./extension.js" and manifest["version"] == PACKAGE["version"]
    assert f'Version="{PACKAGE["version"]}"' in vsixmanifest
    assert 'Microsoft.VisualStudio.Code.Engine" Value="' + PACKAGE["engines"]["vscode"] in vsixmanifest


def test_activation_starts_pcsc_lsp_and_shows_its_diagnostics(unpacked: Path, workspace: Path) -> None:
    result = activate(unpacked, workspace, {}, "broken.route", "clean.route")
    [server] = result["spawned"]
    assert (server["command"], server["args"]) == ("pcsc", ["lsp"])
    assert result["documentSelector"] == [{"scheme": "file", "language": "pcsc"},
                                          {"scheme": "untitled", "language": "pcsc"}]
    assert result["running"], result["messages"]
    assert result["initialize"]["serverInfo"]["name"] == "pcsc"
    capabilities = set(result["initialize"]["capabilities"])
    assert {"textDocumentSync", "hoverProvider", "definitionProvider", "completionProvider",
            "documentFormattingProvider", "codeActionProvider"} <= capabilities
    # the client turned the advertised capabilities into VS Code providers
    for provider in ("Hover", "Definition", "CompletionItem", "DocumentFormattingEdit", "CodeActions"):
        assert f"languages.register{provider}Provider" in result["registered"], provider
    assert result["commands"] == ["pcsc.restartServer"]
    diagnostics = {Path(uri.removeprefix("file://")).name: d for uri, d in result["diagnostics"].items()}
    assert diagnostics["clean.route"] == []
    [e201] = [d for d in diagnostics["broken.route"] if d["code"] == "PCSC-E201"]
    line = ROUTE.replace(GOOD, BAD).split("\n").index("    " + BAD + " {")
    column = ROUTE.split("\n")[line].index("wedge")
    assert e201["range"] == [line, column, line, column + len("wedgee")]
    assert e201["severity"] == 0 and "wedgee" in e201["message"]  # 0: vscode.DiagnosticSeverity.Error
    assert result["unknown"] == [], "the shim lacks what the client used"
    # deactivate() stops the server
    assert not result["runningAfterDeactivate"] and server["exited"]


def test_the_setting_picks_the_server_command(unpacked: Path, workspace: Path) -> None:
    settings = {"pcsc.server.path": sys.executable, "pcsc.server.args": ["-m", "pcsc", "lsp"]}
    result = activate(unpacked, workspace, settings, "broken.route")
    [server] = result["spawned"]
    assert (server["command"], server["args"]) == (sys.executable, ["-m", "pcsc", "lsp"])
    assert result["running"] and result["initialize"]["serverInfo"]["name"] == "pcsc"
    [diagnostics] = result["diagnostics"].values()
    assert "PCSC-E201" in {d["code"] for d in diagnostics}


def test_a_missing_server_is_reported_not_thrown(unpacked: Path, workspace: Path) -> None:
    missing = str(workspace / "no-such-pcsc")
    result = activate(unpacked, workspace, {"pcsc.server.path": missing}, "broken.route")
    assert not result["running"] and result["initialize"] is None and result["diagnostics"] == {}
    errors = [m["text"] for m in result["messages"] if m["level"] == "error"]
    assert any(missing in text and "pcsc.server.path" in text for text in errors), result["messages"]
