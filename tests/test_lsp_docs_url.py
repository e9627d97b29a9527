"""The language server's diagnostics link their code into the published docs when a
docs URL is configured (`PCSC_DOCS_URL`), driven over stdio with pytest-lsp."""

from __future__ import annotations

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

from tests.test_lsp import ENV  # noqa: E402

DOCS = "https://docs.example/pcsc"  # no trailing slash: the server adds it, as for SARIF


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "pcsc", "lsp"], server_env={**ENV, "PCSC_DOCS_URL": DOCS}
    ),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=pytest_lsp.client_capabilities("visual-studio-code"))
    )
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_diagnostic_links_its_code_into_the_published_docs(client: LanguageClient, tmp_path: Path) -> None:
    shutil.copy(ROOT / "obligations" / "venture.obl", tmp_path / "venture.obl")
    route = tmp_path / "devtools_api.route"
    text = SPEC_ROUTE.read_text(encoding="utf-8").replace("garage -> wedge", "garage -> wedgee")
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(route.as_uri(), "pcsc", 1, text))
    )
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [unknown] = [d for d in client.diagnostics[route.as_uri()] if d.code == "PCSC-E201"]
    assert unknown.code_description == lsp.CodeDescription("https://docs.example/pcsc/diagnostics/#pcsc-e201")
    assert unknown.related_information is None
