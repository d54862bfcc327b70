"""End-to-end: the real server over stdio, driven by pytest-lsp with real editors' capabilities
and the server's default settings (the 150 ms debounce included)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from e2e.helpers import start

WORKSPACE_TEMPLATE = Path(__file__).parent / "workspace"
EDITORS = ["visual_studio_code", "neovim"]
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "ai_eval_lsp", "serve"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the e2e workspace for each module: runs write results into it."""
    root = tmp_path_factory.mktemp("ws") / "workspace"
    shutil.copytree(WORKSPACE_TEMPLATE, root)
    return root


@pytest_lsp.fixture(params=EDITORS, config=SERVER, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    yield await start(lsp_client, request.param, [workspace])
    await lsp_client.shutdown_session()
