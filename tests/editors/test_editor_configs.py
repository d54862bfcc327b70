"""The editor configurations shipped in editors/: each parses as its editor reads it, starts
`ai-eval-lsp serve` for YAML files, and names only settings the server has."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from conftest import ROOT

EDITORS = ROOT / "editors"
SETTINGS = set(
    json.loads((ROOT / "vscode-extension" / "package.json").read_text())["contributes"]["configuration"][
        "properties"
    ]
)


def flattened(settings: dict[str, Any], prefix: str = "") -> set[str]:
    """`{"aiEval": {"php": {"run": true}}}` -> {"aiEval.php.run"}; dotted keys stay as they are."""
    names: set[str] = set()
    for key, value in settings.items():
        name = f"{prefix}{key}"
        names |= flattened(value, f"{name}.") if isinstance(value, dict) else {name}
    return names


def test_helix_runs_the_server_beside_yaml_language_server() -> None:
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text())
    server = config["language-server"]["ai-eval-lsp"]
    assert [server["command"], *server["args"]] == ["ai-eval-lsp", "serve"]
    (yaml,) = [language for language in config["language"] if language["name"] == "yaml"]
    assert "ai-eval-lsp" in yaml["language-servers"] and "yaml-language-server" in yaml["language-servers"]
    assert flattened(server["config"]) <= SETTINGS


def test_sublime_texts_lsp_package_runs_the_server_for_yaml() -> None:
    client = json.loads((EDITORS / "sublime-text" / "LSP.sublime-settings").read_text())["clients"][
        "ai-eval-lsp"
    ]
    assert client["enabled"] and client["command"] == ["ai-eval-lsp", "serve"]
    assert client["selector"] == "source.yaml"
    assert flattened(client["settings"]) <= SETTINGS


def test_the_lsp4ij_template_runs_the_server_for_yaml_files() -> None:
    folder = EDITORS / "jetbrains" / "lsp4ij"
    template = json.loads((folder / "template.json").read_text())
    assert template["programArgs"]["default"] == "ai-eval-lsp serve"
    (yaml,) = [mapping for mapping in template["fileTypeMappings"] if mapping["languageId"] == "yaml"]
    assert yaml["fileType"]["name"] == "YAML" and {"*.yaml", "*.yml"} <= set(yaml["fileType"]["patterns"])
    assert flattened(json.loads((folder / "settings.json").read_text())) <= SETTINGS
    installer = json.loads((folder / "installer.json").read_text())
    assert installer["check"]["exec"]["command"]["default"] == "which ai-eval-lsp"
    assert installer["run"]["exec"]["command"] == "pipx install ai-eval-lsp"
