"""The language server reads only documents the client opened and files inside the
client's workspace folders: a hover, definition, completion or formatting request that
names any other file (`/etc/passwd`, a route beside the workspace, a link out of it)
gets nothing, and the file is not read (a named pipe outside the workspace would block
a read forever; the request still answers at once). Driven over stdio (pytest-lsp)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, SPEC_ROUTE

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

TEXT = SPEC_ROUTE.read_text(encoding="utf-8")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A workspace with a route in it; beside it, outside, the same route, a named pipe
    and a link to the outside route from inside the workspace."""
    workspace = tmp_path_factory.mktemp("workspace")
    outside = tmp_path_factory.mktemp("outside")
    for folder in (workspace, outside):
        shutil.copy(ROOT / "obligations" / "venture.obl", folder / "venture.obl")
        (folder / "devtools_api.route").write_text(TEXT, encoding="utf-8")
    pipe = outside / "pipe.route"
    os.mkfifo(pipe)
    (workspace / "link.route").symlink_to(outside / "devtools_api.route")
    return {"workspace": workspace, "inside": workspace / "devtools_api.route",
            "outside": outside / "devtools_api.route", "pipe": pipe, "link": workspace / "link.route"}


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "pcsc", "lsp"], server_env=ENV),
)
async def client(lsp_client: LanguageClient, places: dict[str, Path]) -> AsyncIterator[None]:
    root = places["workspace"]
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="workspace")],
        )
    )
    yield
    await lsp_client.shutdown_session()


def at_transition(path: Path) -> tuple[lsp.TextDocumentIdentifier, lsp.Position]:
    """The position of the transition name `launch` in the reference route at ``path``."""
    index = TEXT.index("launch: garage") + 2
    line = TEXT.count("\n", 0, index)
    return lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(line, index - (TEXT.rfind("\n", 0, index) + 1))


async def hover(client: LanguageClient, path: Path) -> lsp.Hover | None:
    document, position = at_transition(path)
    return await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(document, position)), 30)


@in_module_loop
async def test_a_file_inside_the_workspace_is_read_unopened(client: LanguageClient, places: dict[str, Path]) -> None:
    found = await hover(client, places["inside"])
    assert found is not None and "p_prior 0.45" in str(found.contents)


@in_module_loop
@pytest.mark.parametrize("name", ["outside", "link", "pipe"])
async def test_a_file_outside_the_workspace_gets_nothing(
    client: LanguageClient, places: dict[str, Path], name: str
) -> None:
    path = places[name]
    assert await hover(client, path) is None
    document, position = at_transition(path)
    found = await asyncio.wait_for(client.text_document_definition_async(lsp.DefinitionParams(document, position)), 30)
    assert found is None
    completion = await asyncio.wait_for(
        client.text_document_completion_async(lsp.CompletionParams(document, position)), 30
    )
    assert completion is not None and not completion.items
    edits = await asyncio.wait_for(
        client.text_document_formatting_async(lsp.DocumentFormattingParams(document, lsp.FormattingOptions(4, True))),
        30,
    )
    assert not edits


@in_module_loop
async def test_a_system_file_gets_nothing(client: LanguageClient) -> None:
    document = lsp.TextDocumentIdentifier("file:///etc/passwd")
    for request in (
        client.text_document_hover_async(lsp.HoverParams(document, lsp.Position(0, 1))),
        client.text_document_definition_async(lsp.DefinitionParams(document, lsp.Position(0, 1))),
    ):
        assert await asyncio.wait_for(request, 30) is None


@in_module_loop
async def test_an_opened_document_outside_the_workspace_is_served(
    client: LanguageClient, places: dict[str, Path]
) -> None:
    """What the client opens, it may ask about, wherever the file is."""
    path = places["outside"]
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(path.as_uri(), "pcsc", 1, TEXT)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    found = await hover(client, path)
    assert found is not None and "p_prior 0.45" in str(found.contents)
