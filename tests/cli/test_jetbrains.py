"""`schema --jetbrains`: the combined schema in the project's `.idea/`, and a jsonSchemas.xml that
maps every kind of rubric path to it, in the shape JetBrains IDEs read, keeping other mappings."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT

from ai_eval_lsp.cli import main

OTHER_MAPPING = """<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="JsonSchemaMappingsProjectConfiguration">
    <state>
      <map>
        <entry key="composer">
          <value><SchemaInfo><option name="name" value="composer" /></SchemaInfo></value>
        </entry>
      </map>
    </state>
  </component>
</project>
"""


# A mapping as IntelliJ itself saves one (XmlSerializer over UserDefinedJsonSchemaConfiguration's
# fields, in their order; an Item's `path` and `mappingKind`): JetBrains/intellij-community,
# json/backend/src/com/jetbrains/jsonSchema/UserDefinedJsonSchemaConfiguration.java.
INTELLIJ_MAPPING = """<entry key="x"><value><SchemaInfo>
  <option name="name" value="x" />
  <option name="relativePathToSchema" value="x.json" />
  <option name="schemaVersion" value="JSON Schema version 7" />
  <option name="patterns"><list><Item>
    <option name="path" value="*.x.yaml" />
    <option name="mappingKind" value="Pattern" />
  </Item></list></option>
</SchemaInfo></value></entry>"""

# How IntelliJ's JsonSchemaVersionConverter reads `schemaVersion`: "JSON Schema version " and each
# version's presentable suffix, compared without white space, apostrophes, commas or points (so
# the "202,012" an older IDE wrote reads as 2020.12 too); anything else is draft 4.
INTELLIJ_VERSIONS = {"4": "4", "6": "6", "7": "7", "2019.09": "2019-09", "2020.12": "2020-12"}


def intellij_reads(value: str) -> str:
    def bare(text: str) -> str:
        return re.sub(r"[\s\u00a0\u202f\u2019',.]", "", text)

    found = [
        draft
        for suffix, draft in INTELLIJ_VERSIONS.items()
        if bare(f"JSON Schema version {suffix}") == bare(value)
    ]
    return found[0] if found else "4"


def shape(element: ET.Element) -> list[tuple[str, str | None]]:
    """Each element's tag and, for an `option`, its name, in document order."""
    return [(e.tag, e.get("name") if e.tag == "option" else None) for e in element.iter()]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example Drupal site with a rubric glob, a rubric known only by its modeline, and an
    IDE mapping of its own."""
    root = tmp_path / "site"
    shutil.copytree(ROOT / "examples" / "drupal-site", root, ignore=shutil.ignore_patterns(".ai_eval"))
    (root / "ai-eval.toml").write_text('rubricGlobs = ["qa/*.yaml"]\n')
    (root / "notes").mkdir()
    (root / "notes" / "draft.yaml").write_text(
        "# yaml-language-server: $schema=https://example.invalid/rubric.schema.json\nid: draft\n"
    )
    (root / ".idea").mkdir()
    (root / ".idea" / "jsonSchemas.xml").write_text(OTHER_MAPPING)
    monkeypatch.chdir(root)
    return root


def entries(site: Path) -> dict[str, ET.Element]:
    document = ET.parse(site / ".idea" / "jsonSchemas.xml").getroot()
    assert document.tag == "project" and document.get("version") == "4"
    table = document.find("component[@name='JsonSchemaMappingsProjectConfiguration']/state/map")
    assert table is not None
    found = {entry.get("key", ""): entry for entry in table.findall("entry")}
    assert len(found) == len(table.findall("entry"))  # one entry per name
    return found


def option(element: ET.Element, name: str) -> ET.Element:
    found = element.find(f"option[@name='{name}']")
    assert found is not None, name
    return found


def test_the_rubric_paths_are_mapped_to_the_combined_schema(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", "--jetbrains"]) == 0
    assert main(["schema", "--jetbrains"]) == 0  # again: the mapping is replaced, not added twice
    assert "wrote .idea/ai-eval-rubric.schema.json, and .idea/jsonSchemas.xml mapping 6 rubric paths" in (
        capsys.readouterr().out
    )
    mapped = entries(site)
    assert set(mapped) == {"composer", "ai_eval rubric (ai-eval-lsp)"}
    ours = mapped["ai_eval rubric (ai-eval-lsp)"]
    # the elements and options IntelliJ writes, in its order (ours has more Items)
    assert dict.fromkeys(shape(ours)) == dict.fromkeys(shape(ET.fromstring(INTELLIJ_MAPPING)))
    info = ours.find("value/SchemaInfo")
    assert info is not None
    assert option(info, "name").get("value") == "ai_eval rubric (ai-eval-lsp)"
    schema = json.loads((site / str(option(info, "relativePathToSchema").get("value"))).read_text())
    assert "check_word_count" in schema["$defs"]  # the Drupal module's kind too
    # IntelliJ reads the schema as the draft it declares (a missing version would be draft 4)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert intellij_reads(str(option(info, "schemaVersion").get("value"))) == "2020-12"
    items = [
        (option(item, "path").get("value"), option(item, "mappingKind").get("value"))
        for item in option(info, "patterns").findall("list/Item")
    ]
    assert items == [
        ("*.rubric.yaml", "Pattern"),
        ("*.rubric.yml", "Pattern"),
        ("qa/*.yaml", "Pattern"),
        ("broken/rubrics", "Directory"),
        ("web/modules/custom/support_assistant/rubrics", "Directory"),
        ("notes/draft.yaml", "File"),
    ]


def test_a_mapping_file_that_is_not_xml_is_left_alone(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mappings = site / ".idea" / "jsonSchemas.xml"
    mappings.write_text("<project")
    assert main(["schema", "--jetbrains"]) == 2
    assert f"error: {mappings}: is not XML" in capsys.readouterr().err
    assert mappings.read_text() == "<project"


def test_the_schema_goes_either_to_a_file_or_to_the_ide(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["schema", "-o", "x.json", "--jetbrains"])
    assert exit_.value.code == 2
    assert "not allowed with argument -o/--output" in capsys.readouterr().err
