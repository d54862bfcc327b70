"""Finding a Drupal codebase in a workspace folder, its installed modules and their PHP check
executors, read from the files alone (SPEC 4, "Drupal codebases"). Nothing here runs PHP.

- The Drupal root is the folder itself or one below it (composer's web root, `web/`, `docroot/`,
  `html/`, `public/`) that holds `core/lib/Drupal.php`; or, without core, a folder whose
  `composer.json` requires Drupal core or that holds modules; or the `drupal.root` setting.
- Modules are found as Drupal's ExtensionDiscovery finds them: in `profiles/`, `modules/` and
  `themes/` of `core/`, the root, `sites/all/` and `sites/default/`, later places overriding
  earlier ones, never inside the folders Drupal skips (`src`, `tests`, `vendor`, `config`, ...).
- A multisite codebase has a `sites/<site>/settings.php` per site; one site is read: the one the
  `drupal.site` setting names, else `default`, else the only one, else the first by name (with a
  notice saying which and how to choose). Its own `sites/<site>/modules` count.
- Installed modules are those the site's `core.extension.yml` lists (in the config sync folder
  named in its `settings.php`, else `config/sync` or `../config/sync`), in its order: weight, then
  name. Without an export every module found counts, and a notice says so. Where settings files
  may not be read (a workspace the editor does not trust), only the usual places are looked in.
- Every file is read through `disk.reading`: inside the project, regular, at most 1 MB; a file
  refused is a notice naming it and why.
- A kind defined by a module present but not enabled, or by a test module (`tests/modules/*` of a
  module outside core), is dormant: `unknown-kind` as on the site, with a message naming it.
- Executors are the services tagged `ai_eval.check_executor` in the installed modules'
  `*.services.yml`, in the order of the site's tagged collection: priority (higher first), module
  order, order in the file; each class is read statically by `phpread`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ai_eval_lsp.core.yamltree import parse
from ai_eval_lsp.disk import cache, reading
from ai_eval_lsp.disk.reading import Skipped
from ai_eval_lsp.drupal.phpread import ClassReading, Location, PhpDefinition, PhpSources
from ai_eval_lsp.drupal.settingsphp import SettingsRun, run_settings

T = TypeVar("T")

EXECUTOR_TAG = "ai_eval.check_executor"
WEB_ROOTS = ("web", "docroot", "html", "public")
CORE_PACKAGES = ("drupal/core", "drupal/core-recommended")
EXTENSION_FOLDERS = ("profiles", "modules", "themes")
NAMES_SHOWN = 5
"""Module names a notice lists before "and N more": a site's export lists hundreds."""
SKIPPED_FOLDERS = frozenset(
    # RecursiveExtensionFilterCallback's list, `tests` (Drupal skips them outside test runs) and the
    # `file_scan_ignore_directories` of Drupal's default settings
    {"src", "lib", "vendor", "assets", "css", "files", "images", "js", "misc", "templates", "includes"}
    | {"fixtures", "Drupal", "tests", "node_modules", "bower_components"}
)
# Origins, as ExtensionDiscovery weighs them: an extension found at a higher origin overrides.
ORIGIN_CORE, ORIGIN_PROFILE, ORIGIN_SITES_ALL, ORIGIN_ROOT, ORIGIN_SITE = 0, 1, 2, 3, 5

_INFO_TYPE = re.compile(r"""^type:\s*(['"])?(\w+)\1?\s*(?:#.*)?$""", re.MULTILINE)
# PHP's function-name pattern, `[a-zA-Z_\x7f-\xff][a-zA-Z0-9_\x7f-\xff]*` over UTF-8 bytes, as
# negated ASCII classes (a range up to U+10FFFF costs milliseconds to compile)
_EXTENSION_NAME = re.compile(
    r"[^\x00-\x40\x5b-\x5e\x60\x7b-\x7e][^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7e]*\Z"
)
_CLASS_NAME = re.compile(r"\\?[A-Za-z_][A-Za-z0-9_]*(?:\\[A-Za-z_][A-Za-z0-9_]*)+\Z")


@dataclass(frozen=True, slots=True)
class Module:
    """A module (or the installed profile, which the site loads as one)."""

    name: str
    folder: Path
    info_file: Path
    weight: int
    """From `core.extension.yml`; 0 without an export."""


@dataclass(frozen=True, slots=True)
class PhpExecutor:
    """A service tagged `ai_eval.check_executor` and what its class contributes."""

    service_id: str
    module: str
    """The module whose services file registers it."""
    class_name: str
    """Fully qualified, without a leading backslash."""
    class_file: Path | None
    """The PSR-4 file of the class; None when no module's namespace holds it."""
    class_line: int | None
    """1-based line of the class declaration; None when the class was not found."""
    services_file: Path
    services_line: int
    """1-based line of the service id in the services file."""
    priority: int
    """The tag's `priority` (0 when absent)."""
    arguments: tuple[Any, ...] | Mapping[str, Any]
    """The service's `arguments`, as YAML values (`'@entity_type.manager'` is a service reference):
    a list, or a map of `$name` keys (named constructor arguments)."""
    definitions: tuple[PhpDefinition, ...]
    """What `checkSchemaDefinitions()` returns, per kind; empty when the class has no such method."""
    problems: tuple[str, ...]
    """Why the class could not be read, each naming the services file and line."""


@dataclass(frozen=True, slots=True)
class DormantKind:
    """A kind a module of the codebase defines, though the site never runs it."""

    kind: str
    module: str
    where: str
    """`file:line` of the class (else of its service), as messages show it."""
    test_module: bool
    """The module is a test module (under `tests/`), which a site never enables."""


@dataclass(frozen=True, slots=True)
class Codebase:
    """What discovery found in a workspace folder; `to_json` and `from_json` carry it through the cache."""

    folder: Path
    """The workspace folder."""
    root: Path
    """The Drupal root (the folder holding `core/`, `modules/`, `sites/`)."""
    modules: tuple[Module, ...]
    """Installed modules, in module order (weight, then name)."""
    uninstalled: tuple[Module, ...]
    """Modules in the codebase that `core.extension.yml` does not list, by name."""
    installed_from: Path | None
    """The `core.extension.yml` read; None when there is none (every module found counts)."""
    executors: tuple[PhpExecutor, ...]
    """In the order of the site's tagged collection: priority, module order, order in the file."""
    autoload: Mapping[str, Path]
    """PSR-4 prefix (`Drupal\\mod\\`) -> `src` folder, for the installed modules and ai_eval."""
    ai_eval_schema: Path | None
    """ai_eval's own `schema/rubric.schema.json` when the codebase holds it."""
    ai_eval_src: Path | None
    """ai_eval's `src/` folder (its CheckOutcome and interfaces) when the codebase holds it."""
    notices: tuple[str, ...]
    """Things to tell the user once (no configuration export, unreadable services files, ...)."""
    inputs: tuple[Path, ...]
    """Every file and folder discovery looked at, found or not: a change to one means discovering again."""
    site: str = "default"
    """The site whose settings and configuration were read."""
    sites: tuple[str, ...] = ()
    """Every site of the codebase (`sites/<site>/settings.php`), by name."""
    dormant: tuple[DormantKind, ...] = ()
    """Kinds defined by modules the site does not enable (or test modules)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "root": str(self.root),
            "modules": [_module_json(module) for module in self.modules],
            "uninstalled": [_module_json(module) for module in self.uninstalled],
            "installed_from": _path_json(self.installed_from),
            "executors": [_executor_json(executor) for executor in self.executors],
            "autoload": {prefix: str(folder) for prefix, folder in self.autoload.items()},
            "ai_eval_schema": _path_json(self.ai_eval_schema),
            "ai_eval_src": _path_json(self.ai_eval_src),
            "notices": list(self.notices),
            "inputs": [str(path) for path in self.inputs],
            "site": self.site,
            "sites": list(self.sites),
            "dormant": [[d.kind, d.module, d.where, d.test_module] for d in self.dormant],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Codebase:
        return cls(
            folder=Path(data["folder"]),
            root=Path(data["root"]),
            modules=tuple(_module_from(module) for module in data["modules"]),
            uninstalled=tuple(_module_from(module) for module in data["uninstalled"]),
            installed_from=_path_from(data["installed_from"]),
            executors=tuple(_executor_from(executor) for executor in data["executors"]),
            autoload={prefix: Path(folder) for prefix, folder in data["autoload"].items()},
            ai_eval_schema=_path_from(data["ai_eval_schema"]),
            ai_eval_src=_path_from(data["ai_eval_src"]),
            notices=tuple(data["notices"]),
            inputs=tuple(Path(path) for path in data["inputs"]),
            site=data["site"],
            sites=tuple(data["sites"]),
            dormant=tuple(DormantKind(*entry) for entry in data["dormant"]),
        )


def discover(
    folder: Path,
    drupal_root: str | None = None,
    cache_dir: Path | None = None,
    site: str | None = None,
    read_settings: bool = True,
    unread: list[str] | None = None,
) -> Codebase | None:
    """The Drupal codebase of a project folder, None when it is none; from the cache in
    `cache_dir` (default `cache.default_folder("drupal")`) when nothing it was read from changed.
    `site` names the site of a multisite codebase to read (`drupal.site`); without
    `read_settings` (a workspace the editor does not trust), no settings file is read. When none
    is found, the files that were not read (a `composer.json` that is a FIFO) are added to `unread`."""
    directory = cache_dir if cache_dir is not None else cache.default_folder("drupal")
    entry = cache.key(str(folder.resolve()), drupal_root or "", site or "", str(read_settings))
    stored = cache.load(directory, entry)
    if stored is not None:
        try:
            return Codebase.from_json(stored)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # an entry of another shape: discover again and replace it
    reads = _Reads(folder.resolve())
    codebase = _discover(folder.absolute(), drupal_root, reads, site, read_settings)
    if codebase is not None:
        cache.store(directory, entry, codebase.to_json(), reads.stamps)
    elif unread is not None:  # what might have named a codebase: said, not silently none
        unread += [
            f"{_shown(path, folder.absolute())}: {skipped.why}" for path, skipped in reads.skipped.items()
        ]
    return codebase


def scan(
    folder: Path, drupal_root: str | None = None, site: str | None = None, read_settings: bool = True
) -> Codebase | None:
    """Like `discover`, without the cache."""
    return _discover(folder.absolute(), drupal_root, _Reads(folder.resolve()), site, read_settings)


# --- reading the file system -------------------------------------------------------------------


class _Reads:
    """Looks at files and folders, stamping each path when it is looked at: the cache's key.
    Files are read inside `home` only (`disk.reading`); those refused are kept in `skipped`."""

    def __init__(self, home: Path) -> None:
        self.home = home
        """The project folder's real path."""
        self.stamps: dict[str, cache.Stamp] = {}
        self.skipped: dict[Path, Skipped] = {}

    def stat(self, path: Path) -> os.stat_result | None:
        try:
            status = os.stat(path)
        except (OSError, ValueError):
            self.stamps[str(path)] = None
            return None
        self.stamps[str(path)] = (status.st_mtime_ns, status.st_size)
        return status

    def is_file(self, path: Path) -> bool:
        status = self.stat(path)
        return status is not None and stat.S_ISREG(status.st_mode)

    def is_dir(self, path: Path) -> bool:
        status = self.stat(path)
        return status is not None and stat.S_ISDIR(status.st_mode)

    def file(self, path: Path) -> bytes | None:
        """A file's bytes; None when there is none; OSError when it may not or cannot be read."""
        return self._read(path, reading.read_file)

    def json(self, path: Path) -> Any:
        """A JSON file's value; None when there is none or it is not read (`reading.read_json`)."""
        try:
            return self._read(path, reading.read_json)
        except OSError:
            return None

    def _read(self, path: Path, read: Callable[[Path, Path], T]) -> T | None:
        status = self.stat(path)
        if status is None or stat.S_ISDIR(status.st_mode):
            return None
        try:
            return read(path, self.home)
        except FileNotFoundError:
            return None
        except OSError as error:
            self.skipped[path] = Skipped.of(path, error)
            raise

    def read(self, path: Path) -> bytes | None:
        """A file's bytes; None when there is none or it is not read."""
        try:
            return self.file(path)
        except OSError:
            return None

    def exists(self, path: Path) -> bool:
        """What PHP's `file_exists()` asks, of the project's files only (`Refused` outside)."""
        found = reading.exists(path, self.home)
        self.stat(path)
        return found

    def text(self, path: Path) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", "replace")

    def listing(self, folder: Path, seen: set[tuple[int, int]]) -> list[os.DirEntry[str]]:
        """The entries of a folder, sorted by name; none for a folder already listed (a symlink loop)."""
        status = self.stat(folder)
        if status is None or not stat.S_ISDIR(status.st_mode) or (status.st_dev, status.st_ino) in seen:
            return []
        seen.add((status.st_dev, status.st_ino))
        try:
            with os.scandir(folder) as entries:
                return sorted(entries, key=lambda entry: entry.name)
        except OSError:
            return []


# --- the codebase -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Extension:
    name: str
    type: str
    folder: Path
    info_file: Path
    origin: int


def _discover(
    folder: Path, drupal_root: str | None, reads: _Reads, wanted_site: str | None, read_settings: bool
) -> Codebase | None:
    notices: list[str] = []
    # `drupal.root` names the codebase: its Drupal root, or its composer project with the web
    # root below it, found as in a project folder
    base = Path(os.path.normpath(folder / drupal_root)) if drupal_root else folder
    if drupal_root and not reading.inside(base, reads.home):
        notices.append(
            f"the setting `drupal.root` is `{drupal_root}`, outside the project ({folder}), and only files "
            "inside the project are read; the codebase is looked for in the project instead"
        )
        base = folder
    elif drupal_root and not reads.is_dir(base):
        notices.append(
            f"the setting `drupal.root` is `{drupal_root}`, but {base} is not a folder; set it to the "
            "folder that holds `core/lib/Drupal.php` or the site's `composer.json`, relative to the project root"
        )
    composer = _composer(base, reads)
    composer_roots = _composer_roots(base, composer)
    candidates = dict.fromkeys([*composer_roots, base, *(base / name for name in WEB_ROOTS)])
    marked = next((path for path in candidates if reads.is_file(path / "core/lib/Drupal.php")), None)
    named_drupal = bool(drupal_root) or marked is not None or _requires_core(composer)
    root = marked or next((path for path in composer_roots if reads.is_dir(path)), base)
    sites = _sites(root, reads)
    site = _site(sites, wanted_site, notices)
    extensions = _extensions(root, site, reads)
    if not named_drupal and not any(extension.type == "module" for extension in extensions.values()):
        return None

    export = _core_extension(folder, root, site, reads, notices, read_settings)
    modules, uninstalled = _installed(extensions, export, notices)
    ai_eval = extensions.get("ai_eval")
    autoload = {f"Drupal\\{module.name}\\": module.folder / "src" for module in modules}
    if ai_eval is not None:
        autoload.setdefault("Drupal\\ai_eval\\", ai_eval.folder / "src")

    def display(path: Path) -> str:
        return _shown(path, folder)

    sources = PhpSources(autoload, reads.file, display)
    elsewhere = {f"Drupal\\{module.name}\\": module.name for module in uninstalled}
    executors = _executors(modules, sources, elsewhere, reads, notices, display)
    tests = _test_modules([*modules, *uninstalled], root, reads)
    dormant = _dormant(uninstalled, tests, reads, display)
    notices += [f"{display(skipped.path)}: {skipped.why}" for skipped in reads.skipped.values()]
    return Codebase(
        folder=folder,
        root=root,
        modules=modules,
        uninstalled=uninstalled,
        installed_from=export[0] if export else None,
        executors=executors,
        autoload=autoload,
        ai_eval_schema=_existing(ai_eval.folder / "schema/rubric.schema.json", reads) if ai_eval else None,
        ai_eval_src=(ai_eval.folder / "src") if ai_eval and reads.is_dir(ai_eval.folder / "src") else None,
        notices=tuple(notices),
        inputs=tuple(Path(path) for path in reads.stamps),
        site=site,
        sites=tuple(sites),
        dormant=dormant,
    )


def _existing(path: Path, reads: _Reads) -> Path | None:
    return path if reads.is_file(path) else None


def _composer(folder: Path, reads: _Reads) -> Mapping[str, Any]:
    document = reads.json(folder / "composer.json")
    return document if isinstance(document, dict) else {}


def _requires_core(composer: Mapping[str, Any]) -> bool:
    required = composer.get("require")
    return isinstance(required, dict) and any(package in required for package in CORE_PACKAGES)


def _composer_roots(folder: Path, composer: Mapping[str, Any]) -> list[Path]:
    """Web roots composer names: the scaffold's `web-root`, and the parent of core's install path."""
    extra = composer.get("extra")
    if not isinstance(extra, dict):
        return []
    roots = []
    scaffold = extra.get("drupal-scaffold")
    locations = scaffold.get("locations") if isinstance(scaffold, dict) else None
    web_root = locations.get("web-root") if isinstance(locations, dict) else None
    if isinstance(web_root, str):
        roots.append(Path(os.path.normpath(folder / web_root)))
    paths = extra.get("installer-paths")
    for path, types in paths.items() if isinstance(paths, dict) else ():
        if isinstance(types, list) and "type:drupal-core" in types and isinstance(path, str):
            roots.append(Path(os.path.normpath(folder / path)).parent)
    return roots


def _sites(root: Path, reads: _Reads) -> list[str]:
    """The sites of a codebase: the folders of `sites/` holding a `settings.php`, by name."""
    entries = reads.listing(root / "sites", set())
    return [entry.name for entry in entries if reads.is_file(Path(entry.path) / "settings.php")]


def _site(sites: list[str], wanted: str | None, notices: list[str]) -> str:
    """The site read: `drupal.site`, else `default`, else the only one, else the first by name."""
    if wanted and wanted in sites:
        return wanted
    if wanted:
        known = ", ".join(f"`{site}`" for site in sites) or "none"
        notices.append(
            f"the setting `drupal.site` is `{wanted}`, but there is no sites/{wanted}/settings.php "
            f"(the sites are {known}); set it to one of them"
        )
    if "default" in sites or not sites:
        return "default"
    if len(sites) > 1 and not wanted:
        others = ", ".join(f"`{site}`" for site in sites[1:])
        notices.append(
            f"this codebase has {len(sites)} sites and no `default`; `{sites[0]}` is read (also "
            f"{others}); set `drupal.site` to choose"
        )
    return sites[0]


def _extensions(root: Path, site: str, reads: _Reads) -> dict[str, _Extension]:
    """Every extension by name; of two with one name, the one from the later origin wins."""
    found: list[_Extension] = []
    seen: set[tuple[int, int]] = set()
    bases = [(root / "core", ORIGIN_CORE), (root / "sites/all", ORIGIN_SITES_ALL), (root, ORIGIN_ROOT)]
    bases.append((root / "sites" / site, ORIGIN_SITE))
    for base, origin in bases:
        for kind in EXTENSION_FOLDERS:
            found += _walk(base / kind, ORIGIN_PROFILE if kind == "profiles" else origin, reads, seen)
    if not reads.is_file(root / "core/lib/Drupal.php"):  # a module's own repository: the root is one
        found += _info_files(root, reads.listing(root, set()), ORIGIN_ROOT, reads)
    found.sort(key=lambda extension: extension.origin)
    return {extension.name: extension for extension in found}


def _walk(start: Path, origin: int, reads: _Reads, seen: set[tuple[int, int]]) -> list[_Extension]:
    found = []
    pending = [start]
    while pending:
        folder = pending.pop()
        entries = reads.listing(folder, seen)
        found += _info_files(folder, entries, origin, reads)
        pending += reversed([Path(entry.path) for entry in entries if _descends(folder, entry)])
    return found


def _descends(folder: Path, entry: os.DirEntry[str]) -> bool:
    """Whether extension discovery looks inside: never in hidden or skipped folders, nor in a
    `config` folder other than core's config module (`modules/config`)."""
    name = entry.name
    if name.startswith(".") or name in SKIPPED_FOLDERS or (name == "config" and folder.name != "modules"):
        return False
    try:
        return entry.is_dir()
    except OSError:
        return False


def _info_files(
    folder: Path, entries: Iterable[os.DirEntry[str]], origin: int, reads: _Reads
) -> list[_Extension]:
    found = []
    for entry in entries:
        name = entry.name.removesuffix(".info.yml")
        if name == entry.name or not _EXTENSION_NAME.match(name):
            continue
        path = Path(entry.path)
        text = reads.text(path)
        kind = _INFO_TYPE.search(text) if text else None
        if kind and kind[2] in ("module", "profile"):  # themes hold no services
            found.append(_Extension(name, kind[2], folder, path, origin))
    return found


def _core_extension(
    folder: Path, root: Path, site: str, reads: _Reads, notices: list[str], read_settings: bool
) -> tuple[Path, Mapping[str, int]] | None:
    """The `core.extension.yml` of the site's config sync folder (named in its settings.php,
    when settings files may be read) and its `module:` map."""
    places = []
    named = (
        site_settings(root, site, {}, reads.file, reads.exists).get("settings", "config_sync_directory")
        if read_settings
        else None
    )
    if isinstance(named, bytes):
        places.append(root / os.fsdecode(named))
    places += [root / "config/sync", root.parent / "config/sync", folder / "config/sync"]
    places = list(dict.fromkeys(Path(os.path.normpath(place)) for place in places))
    for place in places:
        path = place / "core.extension.yml"
        text = reads.text(path)
        if text is None:
            continue
        document = parse(text).root
        listed = (
            document.value.get("module")
            if document is not None and isinstance(document.value, dict)
            else None
        )
        if not isinstance(listed, dict):
            notices.append(
                f"{_shown(path, folder)}: no `module:` map of module names to weights; every module found counts "
                "as installed; export the configuration again (`drush config:export`)"
            )
            return None
        weights = {
            name: weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
            for name, weight in listed.items()
        }
        return path, weights
    looked = ", ".join(_shown(place, folder) for place in places)
    unread = (
        ""
        if read_settings
        else "; settings.php, which may name another, is not read in a workspace the editor does not trust"
    )
    notices.append(
        f"no core.extension.yml found (looked in {looked}{unread}): every module found counts as installed; "
        "export the site's configuration (`drush config:export`) so only installed modules' kinds are offered"
    )
    return None


def site_settings(
    root: Path,
    site: str,
    environment: Mapping[str, str],
    read: Callable[[Path], bytes | None],
    exists: Callable[[Path], bool],
    display: Callable[[Path], str] = str,
    started: float | None = None,
) -> SettingsRun:
    """The site's `settings.php` run statically, as Drupal runs it: from the Drupal root, with
    `$app_root`, `$site_path`, `DRUPAL_ROOT` and the environment given (the configuration's
    place is read with none: a cached discovery must not depend on it); within the budget that
    began at `started` (`run_settings`)."""
    known = {"app_root": os.fsencode(root), "site_path": f"sites/{site}".encode()}
    return run_settings(
        root / "sites" / site / "settings.php",
        known,
        {"DRUPAL_ROOT": os.fsencode(root)},
        environment,
        read,
        exists,
        display,
        started=started,
    )


def _shown(path: Path, folder: Path) -> str:
    """A path in messages: relative to the workspace folder when inside it."""
    return os.path.relpath(path, folder) if path.is_relative_to(folder) else str(path)


def _installed(
    extensions: Mapping[str, _Extension], export: tuple[Path, Mapping[str, int]] | None, notices: list[str]
) -> tuple[tuple[Module, ...], tuple[Module, ...]]:
    """(installed modules in module order, modules present but not installed)."""
    modules = {name: ext for name, ext in extensions.items() if ext.type == "module"}
    if export is None:
        return tuple(_module(ext, 0) for _, ext in sorted(modules.items())), ()
    path, weights = export
    # the installed profile is in the `module:` map and its services register like a module's
    installed = [_module(extensions[name], weight) for name, weight in weights.items() if name in extensions]
    installed.sort(key=lambda module: (module.weight, module.name))
    absent = sorted(name for name in weights if name not in extensions)
    if absent:
        shown = ", ".join(absent[:NAMES_SHOWN]) + (
            f" and {len(absent) - NAMES_SHOWN} more" if len(absent) > NAMES_SHOWN else ""
        )
        modules_word = "module is" if len(absent) == 1 else "modules are"
        notices.append(
            f"{len(absent)} {modules_word} listed in {path.name} but not in the codebase ({shown}); "
            "`composer install` brings them, and their kinds are unknown until then"
        )
    uninstalled = tuple(_module(ext, 0) for name, ext in sorted(modules.items()) if name not in weights)
    return tuple(installed), uninstalled


def _module(extension: _Extension, weight: int) -> Module:
    return Module(extension.name, extension.folder, extension.info_file, weight)


# --- executors ----------------------------------------------------------------------------------


def _executors(
    modules: Iterable[Module],
    sources: PhpSources,
    elsewhere: Mapping[str, str],
    reads: _Reads,
    notices: list[str],
    display: Callable[[Path], str],
) -> tuple[PhpExecutor, ...]:
    found = []
    for module in modules:
        path = module.folder / f"{module.name}.services.yml"
        text = reads.text(path)
        if text is None or EXECUTOR_TAG not in text:  # most services files: settled without parsing
            continue
        for service in _tagged_services(module, path, text, notices, display):
            found.append(_executor(service, sources, elsewhere))
    found.sort(key=lambda executor: -executor.priority)  # stable: module order, then file order
    return tuple(found)


@dataclass(frozen=True, slots=True)
class _Service:
    """A service tagged `ai_eval.check_executor`, as its services file declares it."""

    module: Module
    id: str
    definition: Mapping[str, Any]
    tag: Mapping[str, Any]
    file: Path
    line: int
    where: str
    """`file:line` as messages show it."""


def _tagged_services(
    module: Module, path: Path, text: str, notices: list[str], display: Callable[[Path], str]
) -> Iterator[_Service]:
    parsed = parse(text)
    if parsed.root is None:
        line = parsed.problems[0].span.start.line + 1 if parsed.problems else 1
        notices.append(
            f"{display(path)}:{line}: the file does not parse; its executors are not known until it does"
        )
        return
    services = parsed.root.get("services")
    for service_id, entry in (services.value.entries or {}).items() if services else ():
        definition = entry.value.value
        if (
            service_id == "_defaults"
            or not isinstance(definition, dict)
            or definition.get("abstract") is True
        ):
            continue
        tag = next((tag for tag in _tags(definition.get("tags")) if tag.get("name") == EXECUTOR_TAG), None)
        if tag is not None:
            line = entry.key.line + 1
            yield _Service(module, service_id, definition, tag, path, line, f"{display(path)}:{line}")


def _tags(tags: Any) -> list[Mapping[str, Any]]:
    """A service's tags as maps; `- name` is short for `- {name: name}`."""
    if not isinstance(tags, list):
        return []
    return [{"name": tag} if isinstance(tag, str) else tag for tag in tags if isinstance(tag, str | dict)]


def _executor(service: _Service, sources: PhpSources, elsewhere: Mapping[str, str]) -> PhpExecutor:
    problems = []
    priority = service.tag.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        problems.append(
            f"{service.where}: the tag `priority` of `{service.id}` is not an integer; it counts as 0"
        )
        priority = 0
    arguments = service.definition.get("arguments")
    values = (
        dict(arguments)
        if isinstance(arguments, dict)
        else tuple(arguments)
        if isinstance(arguments, list)
        else ()
    )
    declared = service.definition.get("class")
    class_name = (
        declared if isinstance(declared, str) else service.id if _CLASS_NAME.match(service.id) else ""
    )
    class_name = class_name.lstrip("\\")
    reading = _read_class(class_name, sources, elsewhere)
    intro = f"{service.where}: the service `{service.id}` of module `{service.module.name}`"
    problems += [f"{intro}: {problem}" for problem in reading.problems]
    return PhpExecutor(
        service_id=service.id,
        module=service.module.name,
        class_name=class_name,
        class_file=reading.file,
        class_line=reading.line,
        services_file=service.file,
        services_line=service.line,
        priority=priority,
        arguments=values,
        definitions=reading.definitions,
        problems=tuple(problems),
    )


def _read_class(class_name: str, sources: PhpSources, elsewhere: Mapping[str, str]) -> ClassReading:
    """The class's reading; a missing `class:` and a class of a module not installed are problems."""
    if not class_name:
        return ClassReading(
            None, None, (), ("it has no `class:`, and its id is not a class name; add `class:`",)
        )
    owner = next((name for prefix, name in elsewhere.items() if class_name.startswith(prefix)), None)
    if owner is not None and sources.locate(class_name) is None:
        problem = (
            f"its class `{class_name}` belongs to module `{owner}`, which is not installed (not in "
            "core.extension.yml); install it, or fix `class:`"
        )
        return ClassReading(None, None, (), (problem,))
    return sources.read_class(class_name)


def _test_modules(modules: Iterable[Module], root: Path, reads: _Reads) -> list[Module]:
    """The test modules of the site's own and contrib modules (`tests/modules/<name>/`, where
    Drupal keeps them); core's hundreds define no executor and are not looked at."""
    core = root / "core"
    found = []
    for module in modules:
        if module.folder.is_relative_to(core):
            continue
        for entry in reads.listing(module.folder / "tests" / "modules", set()):
            info = Path(entry.path) / f"{entry.name}.info.yml"
            text = reads.text(info) if _EXTENSION_NAME.match(entry.name) else None
            kind = _INFO_TYPE.search(text) if text else None
            if kind and kind[2] == "module":
                found.append(Module(entry.name, Path(entry.path), info, 0))
    return found


def _dormant(
    uninstalled: Iterable[Module], tests: Iterable[Module], reads: _Reads, display: Callable[[Path], str]
) -> tuple[DormantKind, ...]:
    """The kinds the executors of modules the site does not run define, read as an enabled
    module's are; the first module to define a kind names it."""
    kinds: dict[str, DormantKind] = {}
    for test_module, modules in ((False, list(uninstalled)), (True, list(tests))):
        autoload = {f"Drupal\\{module.name}\\": module.folder / "src" for module in modules}
        sources = PhpSources(autoload, reads.file, display)
        for executor in _executors(modules, sources, {}, reads, [], display):
            file, line = (
                (executor.class_file, executor.class_line)
                if executor.class_file is not None and executor.class_line is not None
                else (executor.services_file, executor.services_line)
            )
            for definition in executor.definitions:
                if definition.kind:
                    where = f"{display(file)}:{line}"
                    kinds.setdefault(
                        definition.kind, DormantKind(definition.kind, executor.module, where, test_module)
                    )
    return tuple(kinds.values())


# --- JSON for the cache -------------------------------------------------------------------------


def _path_json(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _path_from(value: str | None) -> Path | None:
    return None if value is None else Path(value)


def _module_json(module: Module) -> dict[str, Any]:
    return {
        "name": module.name,
        "folder": str(module.folder),
        "info_file": str(module.info_file),
        "weight": module.weight,
    }


def _module_from(data: Mapping[str, Any]) -> Module:
    return Module(data["name"], Path(data["folder"]), Path(data["info_file"]), data["weight"])


def _executor_json(executor: PhpExecutor) -> dict[str, Any]:
    return {
        "service_id": executor.service_id,
        "module": executor.module,
        "class_name": executor.class_name,
        "class_file": _path_json(executor.class_file),
        "class_line": executor.class_line,
        "services_file": str(executor.services_file),
        "services_line": executor.services_line,
        "priority": executor.priority,
        "arguments": executor.arguments
        if isinstance(executor.arguments, Mapping)
        else list(executor.arguments),
        "definitions": [
            {
                "kind": definition.kind,
                "file": str(definition.file),
                "line": definition.line,
                "schema": definition.schema,
                "unreadable": definition.unreadable,
                "unreadable_at": None
                if definition.unreadable_at is None
                else [str(definition.unreadable_at.file), definition.unreadable_at.line],
            }
            for definition in executor.definitions
        ],
        "problems": list(executor.problems),
    }


def _executor_from(data: Mapping[str, Any]) -> PhpExecutor:
    return PhpExecutor(
        service_id=data["service_id"],
        module=data["module"],
        class_name=data["class_name"],
        class_file=_path_from(data["class_file"]),
        class_line=data["class_line"],
        services_file=Path(data["services_file"]),
        services_line=data["services_line"],
        priority=data["priority"],
        arguments=data["arguments"] if isinstance(data["arguments"], dict) else tuple(data["arguments"]),
        definitions=tuple(
            PhpDefinition(
                kind=definition["kind"],
                file=Path(definition["file"]),
                line=definition["line"],
                schema=definition["schema"],
                unreadable=definition["unreadable"],
                unreadable_at=None
                if definition["unreadable_at"] is None
                else Location(Path(definition["unreadable_at"][0]), definition["unreadable_at"][1]),
            )
            for definition in data["definitions"]
        ),
        problems=tuple(data["problems"]),
    )
