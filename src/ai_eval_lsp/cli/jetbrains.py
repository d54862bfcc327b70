"""`schema --jetbrains`: the combined schema where a JetBrains IDE (PhpStorm) uses it without any
plugin: `.idea/ai-eval-rubric.schema.json`, mapped in `.idea/jsonSchemas.xml` to the rubric
files by the same rules the server uses (SPEC section 2) as far as a mapping can say them.

A mapping is by path only: the rubric suffixes and `rubricGlobs` become patterns, each `rubrics`
folder holding rubrics a directory, and the files that are rubrics only by their modeline are
named one by one (a modeline is in a file, not in its path: run this again after adding one).
Other mappings already in the file are kept.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from ai_eval_lsp.core.index import classify_by_name
from ai_eval_lsp.disk.reading import Refused, read_file, why_not_read
from ai_eval_lsp.project.project import Project

SCHEMA_FILE = ".idea/ai-eval-rubric.schema.json"
MAPPINGS_FILE = ".idea/jsonSchemas.xml"
MAPPING_NAME = "ai_eval rubric (ai-eval-lsp)"
RUBRIC_PATTERNS = ("*.rubric.yaml", "*.rubric.yml")
COMPONENT = "JsonSchemaMappingsProjectConfiguration"
SCHEMA_VERSION = "JSON Schema version 2020.12"
"""The combined schema's draft as IntelliJ writes it: `UserDefinedJsonSchemaConfiguration.schemaVersion`
is stored through `JsonSchemaVersion.toString()`, JsonBundle's `schema.of.version` ("JSON Schema
version {0}") of `getPresentableVersionSuffix()`, "2020.12" for `SCHEMA_2020_12`
(JetBrains/intellij-community, json/backend/src/com/jetbrains/jsonSchema/impl/JsonSchemaVersion.java
at 4406abf4; json/resources/messages/JsonBundle.properties). Its `JsonSchemaVersionConverter`
reads a missing or unknown value as `SCHEMA_4`, draft 4, which knows neither `$defs` nor
`unevaluatedProperties`."""


class CannotWrite(Exception):
    """The schema or the mapping could not be written; the message says which file and why."""


def rubric_mappings(project: Project) -> list[tuple[str, str]]:
    """(path, IntelliJ mapping kind) for every rule that makes a file a rubric in this project."""
    mappings = [(pattern, "Pattern") for pattern in (*RUBRIC_PATTERNS, *project.settings.rubric_globs)]
    folders: set[str] = set()
    files: set[str] = set()
    for found in project.walk():
        if found.role != "rubric":
            continue
        folder = found.relative.split("/")[:-1]
        settings = project.settings
        if classify_by_name(found.relative, settings.rubric_globs, settings.cases_globs) == "head":
            files.add(found.relative)
        elif "rubrics" in folder:
            folders.add("/".join(folder[: folder.index("rubrics") + 1]))
    mappings += [(folder, "Directory") for folder in sorted(folders)]
    mappings += [(file, "File") for file in sorted(files)]
    return mappings


def _option(parent: ET.Element, name: str, value: str | None = None) -> ET.Element:
    option = ET.SubElement(parent, "option", name=name)
    if value is not None:
        option.set("value", value)
    return option


def _entry(mappings: list[tuple[str, str]]) -> ET.Element:
    entry = ET.Element("entry", key=MAPPING_NAME)
    info = ET.SubElement(ET.SubElement(entry, "value"), "SchemaInfo")
    _option(info, "name", MAPPING_NAME)
    _option(info, "relativePathToSchema", SCHEMA_FILE)
    _option(info, "schemaVersion", SCHEMA_VERSION)
    items = ET.SubElement(_option(info, "patterns"), "list")
    for path, kind in mappings:
        item = ET.SubElement(items, "Item")
        _option(item, "path", path)
        _option(item, "mappingKind", kind)
    return entry


def mapping_document(existing: str | None, mappings: list[tuple[str, str]]) -> str:
    """jsonSchemas.xml with this project's rubric mapping, replacing an earlier one; raises
    ET.ParseError when `existing` is not XML."""
    root = ET.fromstring(existing) if existing else ET.Element("project", version="4")
    component = root.find(f"component[@name='{COMPONENT}']")
    if component is None:
        component = ET.SubElement(root, "component", name=COMPONENT)
    state = component.find("state")
    if state is None:
        state = ET.SubElement(component, "state")
    table = state.find("map")
    if table is None:
        table = ET.SubElement(state, "map")
    for old in table.findall(f"entry[@key='{MAPPING_NAME}']"):
        table.remove(old)
    table.append(_entry(mappings))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(project: Project, schema_text: str) -> tuple[Path, Path, int]:
    """Writes the schema and the mapping into the project's `.idea/`: their paths, and how many
    paths are mapped. A jsonSchemas.xml that is not XML is left as it is (CannotWrite)."""
    schema, mappings_file = project.root / SCHEMA_FILE, project.root / MAPPINGS_FILE
    mappings = rubric_mappings(project)
    try:
        existing = (
            read_file(mappings_file, project.root).decode("utf-8") if os.path.lexists(mappings_file) else None
        )
        document = mapping_document(existing, mappings)
        schema.parent.mkdir(exist_ok=True)
        schema.write_text(schema_text, encoding="utf-8")
        mappings_file.write_text(document, encoding="utf-8")
    except ET.ParseError as err:
        raise CannotWrite(f"{mappings_file}: is not XML ({err}); fix or remove it") from err
    except Refused as err:
        raise CannotWrite(f"{mappings_file}: {why_not_read(err)}") from err
    except (OSError, UnicodeDecodeError) as err:
        raise CannotWrite(
            f"{getattr(err, 'filename', None) or mappings_file}: cannot be written: {err}"
        ) from err
    return schema, mappings_file, len(mappings)
