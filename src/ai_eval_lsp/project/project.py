"""A project on disk: its root, settings, plugins and rules, and the summaries of its files.
Shared by the CLI (one per root) and the language server (one per workspace folder)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ai_eval_lsp.core.analysis import Analysis, Rules, analyse, summary_of
from ai_eval_lsp.core.index import ProjectIndex, Role, Summary, classify
from ai_eval_lsp.core.validate import Engine, SchemaValidator
from ai_eval_lsp.core.yamltree import Parser, decode
from ai_eval_lsp.disk import reading
from ai_eval_lsp.disk.files import FoundFile, head_of, relative_to, walk
from ai_eval_lsp.disk.reading import Skipped
from ai_eval_lsp.disk.roots import too_wide
from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.disk.userconfig import UserConfig, read_user_config
from ai_eval_lsp.drupal import codebase as drupal
from ai_eval_lsp.drupal.codebase import Codebase
from ai_eval_lsp.drupal.site_address import AddressError, SiteAddress, find_address, parse_url
from ai_eval_lsp.project.registry import Registry, discover

if TYPE_CHECKING:
    from ai_eval_lsp.hosts.php import PhpWorker


@dataclass(frozen=True, slots=True)
class Project:
    root: Path
    settings: Settings
    registry: Registry
    rules: Rules
    setting_problems: tuple[str, ...] = ()
    rubrics_folder: bool = False
    """The root counts as a `rubrics` folder (a root no marker made, named `rubrics`)."""
    alone: bool = False
    """The root holds every file below it: nested projects are not looked for (`--root`)."""
    site: SiteAddress | None = None
    """The Drupal site's database, whose runs are read (SPEC 3, "The site's own runs")."""
    site_note: str | None = None
    """Why there is no site database to read, where the project has a site."""

    @classmethod
    def load(
        cls,
        root: Path,
        settings: Settings | None = None,
        parser: Parser = "fast",
        engine: Engine = "fast",
        strict_settings: bool = False,
        rubrics_folder: bool = False,
        alone: bool = False,
        editor: Settings | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> Project:
        """The project of a root, with the settings given or those of its own files (with
        `strict_settings`, a settings file that cannot be read raises SettingsFileError); with
        `editor`, the editor's settings that differ from the defaults win over the files'.
        `environment` (default: this process's) is what the site's settings.php `getenv()`s, and
        where the user's own settings file is (`XDG_CONFIG_HOME`)."""
        environment = os.environ if environment is None else environment
        problems: list[str] = []
        if settings is None:
            settings, problems = Settings.for_root(root, strict=strict_settings)
            if editor is not None:
                settings = settings.overlaid(editor)
        user = read_user_config(environment)
        problems += user.problems
        fragments = [root / fragment for fragment in settings.schema_fragments]
        codebase = drupal.discover(
            root,
            settings.drupal_root or None,
            site=settings.drupal_site or None,
            read_settings=settings.workspace_trusted,
            unread=problems,
        )
        registry = discover(fragments, codebase=codebase, php_run=settings.php_run, home=root.resolve())
        validator = SchemaValidator.for_rubrics(registry.combined, engine)
        rules = Rules(validator, registry.dispatch, parser, SchemaValidator.for_cases(engine))
        given_in_editor = editor is not None and bool(editor.site_database)
        site, site_note = _site(root, settings, codebase, user, given_in_editor, environment)
        return cls(
            root.resolve(), settings, registry, rules, tuple(problems), rubrics_folder, alone, site, site_note
        )

    def php_worker(self) -> PhpWorker | None:
        """A PHP worker for one run, when the Drupal codebase has executors to run; the caller
        closes it (it starts PHP only at its first call)."""
        from ai_eval_lsp.hosts.php import PhpWorker  # only runs start PHP

        codebase = self.registry.codebase
        if codebase is None or not self.registry.php or not self.settings.php_run:
            return None
        autoload = codebase.folder / "vendor" / "autoload.php"
        return PhpWorker(
            codebase.folder,
            codebase.autoload,
            command=self.settings.php_command,
            timeout=self.settings.run_timeout_seconds,
            services=self.registry.services,
            composer_autoload=autoload if autoload.is_file() else None,
        )

    @property
    def results_database(self) -> Path:
        """Where runs store their rows unless told otherwise (`resultsDatabase`)."""
        return self.root / self.settings.results_database

    def relative(self, path: Path) -> str:
        return relative_to(self.root, path)

    def inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.root)

    def home_of(self, path: Path) -> Path:
        """The folder a file is read inside of (`disk.reading`): the root, or, for a file outside
        it (named on the command line), its own folder. A file written below the root (through
        a link to it, as `/tmp` is on macOS) is read inside the root, wherever a link below leads."""
        absolute = Path(os.path.abspath(path))
        if reading.within(absolute, self.root):
            return self.root  # as the walk names its files: no link to resolve
        folder = os.path.realpath(absolute.parent)
        if reading.within(folder, self.root) or any(
            os.path.realpath(above) == os.fspath(self.root) for above in absolute.parents
        ):
            return self.root
        return Path(folder)

    def read(self, path: Path) -> bytes:
        """A rubric or cases file's bytes, read as a repository's files are (`disk.reading`):
        OSError, `Refused` among them, when it is not."""
        return reading.read_file(path, self.home_of(path), reading.YAML_LIMIT)

    def role(self, path: Path, head: str | None = None) -> Role | None:
        if head is None:
            head = head_of(path, self.home_of(path))
        settings = self.settings
        return classify(
            self.relative(path), head, settings.rubric_globs, settings.cases_globs, self.rubrics_folder
        )

    def walk(
        self,
        below: Path | None = None,
        skip: Iterable[Path] = (),
        recursive: bool = True,
        nested: list[Path] | None = None,
    ) -> Iterator[FoundFile]:
        """The rubric and cases files under the root (or a folder below it), name first; the
        folders in `skip` and the projects nested in this one are left out, the latter added to
        `nested` when it is given."""
        settings = self.settings
        return walk(
            self.root,
            settings.rubric_globs,
            settings.cases_globs,
            below,
            skip,
            recursive,
            rubrics_root=self.rubrics_folder,
            nested=None if self.alone else ([] if nested is None else nested),
        )

    def analyse(self, path: Path, data: bytes, role: Role = "rubric") -> Analysis:
        text, problems = decode(data)
        return analyse(role, self.relative(path), text, self.rules, problems)

    def summarize(self, found: FoundFile, text: str) -> Summary:
        """What other files need to know of one file, from its text."""
        return summary_of(found.role, found.relative, text, self.rules)

    def summaries(
        self, found: Iterable[FoundFile], skipped: list[Skipped] | None = None
    ) -> Iterator[Summary]:
        """The summary of each file found, read from disk; a file that is not read is left out
        (it is not there to resolve to), and added to `skipped` when it is given."""
        for each in found:
            try:
                text, _ = decode(self.read(each.path))
            except OSError as error:
                if skipped is not None:
                    skipped.append(Skipped.of(each.path, error))
                continue
            yield self.summarize(each, text)

    def index(
        self,
        analyses: Mapping[Path, Analysis],
        roles: Iterable[Role] = ("rubric",),
        skipped: list[Skipped] | None = None,
    ) -> ProjectIndex:
        """The files under the root of the roles asked for: the analyses given, others read here
        (those not read added to `skipped` when it is given).
        A root of `/` or the home folder holds too much to walk: only its own files count.

        Composite references resolve only inside the workspace, so a file checked from outside
        the root is checked but is no rubric to resolve to.
        """
        wanted = set(roles)
        given = [a.summary for path, a in analyses.items() if a.role in wanted and self.inside(path)]
        paths = {summary.path for summary in given}
        found = self.walk(recursive=not too_wide(self.root))
        others = (f for f in found if f.role in wanted and f.relative not in paths)
        return ProjectIndex.of([*given, *self.summaries(others, skipped)])


def _site(
    root: Path,
    settings: Settings,
    codebase: Codebase | None,
    user: UserConfig,
    given_in_editor: bool,
    environment: Mapping[str, str],
) -> tuple[SiteAddress | None, str | None]:
    """The site's database and why there is none: the editor's own `site.database`, else the
    user's settings file's (in any workspace: it is the user's, not the repository's), else the
    project's `site.database`, else its settings.php (`find_address`, which leaves out what a
    workspace the editor does not trust may not give)."""
    if user.site_database and not given_in_editor:
        try:
            return parse_url(user.site_database, root, user.origin), None
        except AddressError as err:
            return None, str(err)
    return find_address(root, settings.site_database, codebase, settings.workspace_trusted, environment)
