"""A workspace on disk: its settings, plugins, files and rubric index. Shared by the CLI and server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ai_eval_lsp.core.analysis import Analysis, Rules, analyse_cases, analyse_rubric
from ai_eval_lsp.core.problems import Problem
from ai_eval_lsp.core.validate import Engine, SchemaValidator
from ai_eval_lsp.core.workspace import Role, RubricIndex, classify, summarize
from ai_eval_lsp.core.yamltree import Parser, decode, parse
from ai_eval_lsp.plugins import Registry, discover
from ai_eval_lsp.settings import Settings

_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "venv"})
_HEAD_BYTES = 4096


@dataclass
class Project:
    root: Path
    settings: Settings
    registry: Registry
    rules: Rules
    cases_validator: SchemaValidator
    setting_problems: list[str] = field(default_factory=list)

    @classmethod
    def load(
        cls,
        root: Path,
        settings: Settings | None = None,
        parser: Parser = "fast",
        engine: Engine = "fast",
    ) -> Project:
        problems: list[str] = []
        if settings is None:
            settings, problems = Settings.from_pyproject(root)
        fragments = [root / fragment for fragment in settings.schema_fragments]
        registry = discover(fragments)
        validator = SchemaValidator.for_rubrics(registry.combined, engine)
        rules = Rules(validator, registry.dispatch, parser)
        return cls(root, settings, registry, rules, SchemaValidator.for_cases(engine), problems)

    def relative(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def role(self, path: Path, head: str | None = None) -> Role | None:
        if head is None:
            head = _head(path)
        return classify(self.relative(path), head, self.settings.rubric_globs, self.settings.cases_globs)

    def walk(self, folder: Path) -> Iterator[tuple[Path, Role]]:
        """The rubric and cases files under a folder, in a stable order; hidden folders are skipped."""
        for current, folders, files in os.walk(folder):
            folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
            for name in sorted(files):
                path = Path(current, name)
                role = self.role(path)
                if role is not None:
                    yield path, role

    def analyse(self, path: Path, data: bytes) -> Analysis:
        text, problems = decode(data)
        return analyse_rubric(self.relative(path), text, self.rules, problems)

    def inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.root.resolve())

    def index(self, analyses: dict[Path, Analysis]) -> RubricIndex:
        """Every rubric under the root: the analyses given, the other files read here.

        Composite references resolve only inside the workspace, so a file checked from outside
        the root is checked but is no rubric to resolve to.
        """
        index = RubricIndex(analysis.summary for path, analysis in analyses.items() if self.inside(path))
        for path, role in self.walk(self.root):
            if role == "rubric" and path not in analyses:
                try:
                    text, _ = decode(path.read_bytes())
                except OSError:
                    continue  # unreadable files outside the request are simply not rubrics to resolve
                index.put(summarize(self.relative(path), parse(text, self.rules.parser).root))
        return index

    def check_cases(self, data: bytes, index: RubricIndex) -> list[Problem]:
        text, problems = decode(data)
        found = problems + analyse_cases(text, self.cases_validator, index, self.rules.parser)
        return sorted(found, key=Problem.sort_key)


def _head(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
