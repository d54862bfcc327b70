"""End-to-end: the real server over stdio, driven by pytest-lsp with real editors' capabilities."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

WORKSPACE_TEMPLATE = Path(__file__).parent / "workspace"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the e2e workspace for each module: runs write results into it."""
    root = tmp_path_factory.mktemp("ws") / "workspace"
    shutil.copytree(WORKSPACE_TEMPLATE, root)
    return root


@pytest_lsp.fixture(
    params=["visual_studio_code", "neovim"],
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "ai_eval_lsp", "serve"],
        server_env={"AI_EVAL_LSP_DEBOUNCE_MS": "0"},
    ),
    scope="module",
)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    lsp_client.set_configuration({"runTimeoutSeconds": 5}, section="aiEval")
    registrations: list[types.Registration] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        # pytest-lsp's client has no handler for this; real editors accept the registration.
        registrations.extend(params.registrations)

    lsp_client.registrations = registrations  # type: ignore[attr-defined]
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
            root_uri=workspace.as_uri(),
        )
    )
    lsp_client.workspace_root = workspace  # type: ignore[attr-defined]
    lsp_client.position_encoding = result.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()
