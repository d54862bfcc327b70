"""The exported combined schema closes the seed's editor gap: yaml-language-server, given it,
accepts a rubric that uses a plugin's kind and rejects a typo in that kind's fields."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_stdio import StdioClient

YLS = (
    Path(os.environ.get("AI_EVAL_LSP_CACHE", Path.home() / ".cache" / "ai-eval-lsp")) / "yaml-language-server"
)
SERVER = YLS / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"

GOOD = 'id: summary_shape\nversion: "1.0.0"\nchecks:\n  - id: short\n    kind: word_count\n    min: 20\n    max: 150\nscoring:\n  combine: all_pass\n'
TYPO = GOOD.replace("    min: 20", "    minn: 20")


@pytest.fixture(scope="module")
def yls(tmp_path_factory: pytest.TempPathFactory) -> StdioClient:
    # Installed by scripts/setup; a missing server is a failure, not a skip.
    assert SERVER.exists(), f"yaml-language-server is not installed at {YLS}: run scripts/setup"
    folder = tmp_path_factory.mktemp("yls")
    schema = folder / "rubric.combined.json"
    subprocess.run(
        [sys.executable, "-m", "ai_eval_lsp", "schema", "-o", str(schema)], check=True, timeout=120
    )
    settings = {
        "yaml": {
            "validate": True,
            "schemas": {schema.as_uri(): "*.rubric.yaml"},
            "schemaStore": {"enable": False},
        }
    }

    def answer(method: str, params: dict[str, object]) -> object:
        if method == "workspace/configuration":
            return [settings.get(str(item.get("section")), settings["yaml"]) for item in params["items"]]  # type: ignore[union-attr, attr-defined]
        return None

    client = StdioClient(["node", str(SERVER), "--stdio"], answer)
    client.initialize(folder, {"workspace": {"configuration": True}})
    client.notify("workspace/didChangeConfiguration", {"settings": settings})
    client.folder = folder  # type: ignore[attr-defined]
    yield client
    client.close()


def diagnostics(client: StdioClient, name: str, text: str) -> list[dict[str, object]]:
    path = client.folder / name  # type: ignore[attr-defined]
    path.write_text(text)
    message = client.open(path, text)(60)
    return message["params"]["diagnostics"]  # type: ignore[no-any-return]


def test_yaml_language_server_accepts_the_plugin_kind(yls: StdioClient) -> None:
    assert diagnostics(yls, "good.rubric.yaml", GOOD) == []


def test_yaml_language_server_rejects_a_typo_in_the_plugin_kind(yls: StdioClient) -> None:
    found = diagnostics(yls, "typo.rubric.yaml", TYPO)
    assert found, "the typo was not reported"
    assert {d["range"]["start"]["line"] for d in found} == {5}  # type: ignore[index]
    assert any("minn" in str(d["message"]) for d in found)  # "Property minn is not allowed."
