"""Finding a Drupal codebase, its installed modules and their PHP executors (SPEC 4), and the cache.

Two fixture codebases: `site` (composer, `web/`, a config export, ai_eval, the seed's
my_eval_extras and modules in other styles) and `no-export` (`docroot/`, no export, no ai_eval).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_eval_lsp.disk import cache
from ai_eval_lsp.drupal import codebase
from ai_eval_lsp.drupal.codebase import Codebase, PhpExecutor, discover, scan
from ai_eval_lsp.drupal.phpread import as_schema

FIXTURES = Path(__file__).parents[1] / "fixtures" / "drupal"
SITE = FIXTURES / "site"
NO_EXPORT = FIXTURES / "no-export"
PHP = shutil.which("php")

INSTALLED = [
    "ai_eval",
    "config",
    "eval_constants",
    "eval_entity",
    "eval_mixed",
    "eval_sentences",
    "eval_similarity",
    "my_eval_extras",
    "node",
    "system",
    "user",
    "eval_legacy",
    "eval_sentences_plus",
    "minimal",
]
EXECUTOR_ORDER = [
    "eval_sentences_plus.check_executor.sentence_count",  # priority 10
    "eval_constants.check_executor.reading_level",  # priority 0, by module order (weight, name)
    "eval_entity.check_executor.entity_exists",
    "eval_sentences.check_executor.sentence_count",
    "eval_similarity.check_executor.similar_to",
    "my_eval_extras.check_executor.word_count",
    "eval_legacy.check_executor.keyword_density",  # weight 2, then order in the file
    "eval_legacy.check_executor.char_limit",
    "eval_mixed.check_executor",  # priority -5
]


@pytest.fixture(scope="module")
def site() -> Codebase:
    found = scan(SITE)
    assert found is not None
    return found


@pytest.fixture
def copy_of(tmp_path: Path) -> Callable[[Path], Path]:
    def copy(fixture: Path) -> Path:
        target = tmp_path / fixture.name
        shutil.copytree(fixture, target)
        return target

    return copy


def executor(found: Codebase, service_id: str) -> PhpExecutor:
    return next(item for item in found.executors if item.service_id == service_id)


def kinds(found: Codebase) -> list[str | None]:
    return [definition.kind for item in found.executors for definition in item.definitions]


# --- the site -----------------------------------------------------------------------------------


def test_the_root_is_composers_web_root(site: Codebase) -> None:
    assert (site.folder, site.root) == (SITE.absolute(), SITE.absolute() / "web")


def test_installed_modules_in_module_order(site: Codebase) -> None:
    assert [module.name for module in site.modules] == INSTALLED
    weights = {module.name: module.weight for module in site.modules}
    assert (weights["eval_legacy"], weights["eval_sentences_plus"], weights["minimal"], weights["node"]) == (
        2,
        5,
        1000,
        0,
    )
    extras = next(module for module in site.modules if module.name == "my_eval_extras")
    assert extras.folder == site.root / "modules/custom/my_eval_extras"
    assert extras.info_file == extras.folder / "my_eval_extras.info.yml"
    assert site.installed_from == SITE.absolute() / "config/sync/core.extension.yml"
    assert site.notices == ()


def test_core_config_module_is_found_but_no_config_or_tests_folder_is_entered(site: Codebase) -> None:
    config = next(module for module in site.modules if module.name == "config")
    assert config.folder == site.root / "core/modules/config"
    every = {module.name for module in (*site.modules, *site.uninstalled)}
    assert "node_test" not in every and "eval_constants_test" not in every
    looked_at = [path.relative_to(SITE.absolute()) for path in site.inputs]
    assert not any({"install", "vendor"} & set(path.parts) for path in looked_at)
    # a tests folder is looked into only where test modules live, for the kinds they define
    # (named in unknown-kind messages), and never in core
    tested = [path.as_posix() for path in looked_at if "tests" in path.parts]
    assert all("/tests/modules" in path and "core/" not in path for path in tested)
    # inside `src` only class files are read (and ai_eval's `src` looked for), never listed
    assert all(path.suffix == ".php" or path.name == "src" for path in looked_at if "src" in path.parts)


def test_a_module_present_but_not_installed_contributes_nothing(site: Codebase) -> None:
    assert [module.name for module in site.uninstalled] == ["eval_unused"]
    assert "unused_kind" not in kinds(site)
    assert "probe_fixture" not in kinds(site)
    assert "Drupal\\eval_unused\\" not in site.autoload


def test_executors_in_the_order_of_the_tagged_collection(site: Codebase) -> None:
    assert [item.service_id for item in site.executors] == EXECUTOR_ORDER
    assert [item.priority for item in site.executors] == [10, 0, 0, 0, 0, 0, 0, 0, -5]


def test_executor_facts(site: Codebase) -> None:
    word_count = executor(site, "my_eval_extras.check_executor.word_count")
    folder = site.root / "modules/custom/my_eval_extras"
    assert word_count.module == "my_eval_extras"
    assert word_count.class_name == "Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor"
    assert word_count.class_file == folder / "src/CheckExecutor/WordCountExecutor.php"
    assert word_count.class_line == 18
    assert (word_count.services_file, word_count.services_line) == (folder / "my_eval_extras.services.yml", 2)
    assert word_count.arguments == () and word_count.problems == ()
    (definition,) = word_count.definitions
    assert (definition.kind, definition.file, definition.line) == ("word_count", word_count.class_file, 60)
    assert definition.schema["allOf"][1]["properties"]["min"] == {"type": "integer", "minimum": 0}
    assert definition.schema["unevaluatedProperties"] is False
    assert executor(site, "eval_entity.check_executor.entity_exists").arguments == ("@entity_type.manager",)
    assert executor(site, "eval_similarity.check_executor.similar_to").arguments == (
        "@ai_eval.chrf_scorer",
        "@ai_eval.check_template_resolver",
    )
    assert executor(site, "eval_legacy.check_executor.char_limit").services_line == 7
    assert all(item.problems == () for item in site.executors)


def test_an_unreadable_definition_sits_beside_a_readable_one(site: Codebase) -> None:
    tone = executor(site, "eval_mixed.check_executor")
    readable, unreadable = tone.definitions
    assert (readable.kind, readable.line, readable.unreadable) == ("tone_ok", 47, None)
    assert readable.schema["allOf"][1]["properties"]["kind"] == {"const": "tone_ok"}
    assert (unreadable.kind, unreadable.line, unreadable.schema) == ("language_is", 62, None)
    assert unreadable.unreadable == "a method call `$this->languageSchema()` at line 62"
    assert unreadable.unreadable_at is not None
    assert (unreadable.unreadable_at.file, unreadable.unreadable_at.line) == (tone.class_file, 62)


def test_an_inherited_method_names_the_file_it_is_written_in(site: Codebase) -> None:
    reading = executor(site, "eval_constants.check_executor.reading_level")
    (definition,) = reading.definitions
    base = site.root / "modules/custom/eval_constants/src/CheckExecutor/ReadabilityExecutorBase.php"
    assert (definition.kind, definition.file, definition.line) == ("reading_level", base, 40)
    properties = definition.schema["allOf"][1]["properties"]
    assert properties["grade"]["enum"] == ["elementary", "middle", "high", "college"]
    assert properties["grade"]["default"] == "high"
    assert properties["max_words_per_sentence"]["default"] == 20
    assert definition.schema["description"] == "Readability: at most 20 words per sentence by default."


def test_two_modules_claim_a_kind_and_the_higher_priority_comes_first(site: Codebase) -> None:
    claims = [item for item in site.executors if any(d.kind == "sentence_count" for d in item.definitions)]
    assert [item.module for item in claims] == ["eval_sentences_plus", "eval_sentences"]
    first = claims[0].definitions[0].schema["allOf"][1]["properties"]
    assert "per_paragraph" in first


def test_the_sites_own_ai_eval_schema(site: Codebase) -> None:
    ai_eval = site.root / "modules/contrib/ai_eval"
    assert site.ai_eval_schema == ai_eval / "schema/rubric.schema.json"
    assert site.ai_eval_src == ai_eval / "src"
    assert "check_site_vocabulary" in json.loads(site.ai_eval_schema.read_text())["$defs"]
    assert dict(site.autoload) == {
        f"Drupal\\{name}\\": module.folder / "src" for module in site.modules for name in [module.name]
    }


@pytest.mark.skipif(PHP is None, reason="needs php-cli")
def test_every_readable_definition_equals_what_php_returns(site: Codebase) -> None:
    """The reference: PHP loads each class (constructor skipped) and prints its definitions."""
    autoload = json.dumps({prefix: str(folder) for prefix, folder in site.autoload.items()})
    classes = json.dumps([item.class_name for item in site.executors])
    code = r"""
        $roots = json_decode($argv[1], TRUE);
        spl_autoload_register(function ($class) use ($roots) {
          foreach ($roots as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
              $file = $dir . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
              if (is_file($file)) { require $file; }
            }
          }
        });
        foreach (json_decode($argv[2]) as $class) {
          $executor = (new ReflectionClass($class))->newInstanceWithoutConstructor();
          echo json_encode($executor->checkSchemaDefinitions()), "\n";
        }
    """
    assert PHP is not None
    run = subprocess.run(
        [PHP, "-n", "-r", code, "--", autoload, classes],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    printed = [json.loads(line) for line in run.stdout.splitlines()]
    compared = 0
    for item, expected in zip(site.executors, printed, strict=True):
        assert [definition.kind for definition in item.definitions] == list(expected)
        for definition in item.definitions:
            if definition.unreadable is None:
                assert definition.schema == as_schema(expected[definition.kind]), definition.kind
                compared += 1
    assert compared == 9


# --- a codebase without a configuration export --------------------------------------------------


def test_without_an_export_every_module_counts_and_the_user_is_told() -> None:
    found = scan(NO_EXPORT)
    assert found is not None
    assert found.root == NO_EXPORT.absolute() / "docroot"
    assert [module.name for module in found.modules] == ["my_eval_extras", "system"]
    assert (found.installed_from, found.uninstalled, found.ai_eval_schema, found.ai_eval_src) == (
        None,
        (),
        None,
        None,
    )
    assert found.notices == (
        "no core.extension.yml found (looked in docroot/config/sync, config/sync): every module found counts as "
        "installed; export the site's configuration (`drush config:export`) so only installed modules' kinds are "
        "offered",
    )
    assert [item.service_id for item in found.executors] == ["my_eval_extras.check_executor.word_count"]
    assert kinds(found) == ["word_count"]


# --- where the root is --------------------------------------------------------------------------


def test_the_drupal_root_setting_names_the_root(tmp_path: Path) -> None:
    for setting in ("web", str(SITE.absolute() / "web"), "./web/"):
        found = scan(SITE, setting)
        assert found is not None and found.root in (SITE.absolute() / "web", SITE.absolute() / "web/")
        assert [item.service_id for item in found.executors] == EXECUTOR_ORDER
    outer = scan(SITE.parent, SITE.name)  # the site's composer project, its web root below it
    assert outer is not None and outer.root == SITE.absolute() / "web"
    lost = scan(tmp_path, "nowhere")
    assert lost is not None and lost.modules == () and lost.executors == ()
    assert lost.notices[0] == (
        f"the setting `drupal.root` is `nowhere`, but {tmp_path / 'nowhere'} is not a folder; set it to the folder "
        "that holds `core/lib/Drupal.php` or the site's `composer.json`, relative to the project root"
    )


def test_a_drupal_root_setting_outside_the_project_is_not_followed(tmp_path: Path) -> None:
    found = scan(tmp_path, str(SITE.absolute()))
    assert found is not None and found.executors == ()
    assert found.notices[0] == (
        f"the setting `drupal.root` is `{SITE.absolute()}`, outside the project ({tmp_path}), and only files "
        "inside the project are read; the codebase is looked for in the project instead"
    )


def test_a_codebase_file_that_may_not_be_read_is_left_out_and_said(
    copy_of: Callable[[Path], Path], tmp_path: Path
) -> None:
    """A module's services file that is a FIFO, a class linked from outside the project: neither
    holds discovery nor is read; each is one notice, and the other executors are read."""
    root = copy_of(SITE)
    custom = root / "web/modules/custom"
    services = custom / "eval_legacy/eval_legacy.services.yml"
    services.unlink()
    os.mkfifo(services)
    (tmp_path / "elsewhere").mkdir()
    moved = tmp_path / "elsewhere" / "class.php"
    sentences = next((custom / "eval_sentences/src").rglob("*.php"))
    shutil.move(sentences, moved)
    sentences.symlink_to(moved)
    found = scan(root)
    assert found is not None
    notices = "\n".join(found.notices)
    legacy = "web/modules/custom/eval_legacy/eval_legacy.services.yml"
    assert f"{legacy}: not read: it is a named pipe (FIFO), not a regular file" in notices
    linked = sentences.relative_to(root).as_posix()
    assert f"{linked}: not read: it is outside the project" in notices
    assert not any(item.module == "eval_legacy" for item in found.executors)
    assert any(item.module == "eval_similarity" for item in found.executors)


def test_a_project_rooted_at_the_web_root_reads_no_export_above_it() -> None:
    """The export beside `web/` is outside a project rooted at `web/` (SPEC 6: only files inside
    the project are read): every module counts, and the notices say why."""
    found = scan(SITE / "web")
    assert found is not None and found.root == SITE.absolute() / "web"
    assert found.installed_from is None
    assert set(EXECUTOR_ORDER) < {item.service_id for item in found.executors}  # and those not enabled
    above = SITE.absolute() / "config/sync/core.extension.yml"
    assert f"{above}: not read: it is outside the project" in "\n".join(found.notices)


def test_a_folder_that_is_no_drupal_codebase(tmp_path: Path) -> None:
    assert scan(tmp_path) is None
    assert scan(Path(__file__).parents[1] / "fixtures" / "workspaces") is None
    (tmp_path / "composer.json").write_text('{"require": {"symfony/console": "^7"}}')
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules/theme.info.yml").write_text("name: T\ntype: theme\n")
    assert scan(tmp_path) is None


def test_composer_requiring_core_is_a_codebase_before_core_is_installed(tmp_path: Path) -> None:
    (tmp_path / "composer.json").write_text(
        '{"require": {"drupal/core": "^11"}, "extra": {"installer-paths": {"docroot/core": ["type:drupal-core"]}}}'
    )
    found = scan(tmp_path)
    assert found is not None and found.modules == () and found.root == tmp_path
    shutil.copytree(NO_EXPORT / "docroot/modules", tmp_path / "docroot/modules")
    found = scan(tmp_path)
    assert found is not None and found.root == tmp_path / "docroot"
    assert kinds(found) == ["word_count"]


def test_a_modules_own_repository(tmp_path: Path) -> None:
    module = tmp_path / "my_eval_extras"
    shutil.copytree(NO_EXPORT / "docroot/modules/custom/my_eval_extras", module)
    found = scan(module)
    assert found is not None and found.root == module
    assert [m.name for m in found.modules] == ["my_eval_extras"] and kinds(found) == ["word_count"]


# --- what goes wrong, with file and line ------------------------------------------------------


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_missing_class_file_names_the_service_module_class_and_file(
    copy_of: Callable[[Path], Path],
) -> None:
    root = copy_of(SITE)
    legacy = root / "web/modules/custom/eval_legacy"
    (legacy / "src/CheckExecutor/CharLimitExecutor.php").unlink()
    found = scan(root)
    assert found is not None
    broken = executor(found, "eval_legacy.check_executor.char_limit")
    assert (broken.class_file, broken.class_line, broken.definitions) == (
        legacy / "src/CheckExecutor/CharLimitExecutor.php",
        None,
        (),
    )
    assert broken.problems == (
        "web/modules/custom/eval_legacy/eval_legacy.services.yml:7: the service "
        "`eval_legacy.check_executor.char_limit` of module `eval_legacy`: the class "
        "`Drupal\\eval_legacy\\CheckExecutor\\CharLimitExecutor` has no file: "
        "web/modules/custom/eval_legacy/src/CheckExecutor/CharLimitExecutor.php does not exist; create it, or fix `class:`",
    )
    assert executor(found, "eval_legacy.check_executor.keyword_density").problems == ()


SERVICES_EXTRA = """
  my_eval_extras.borrowed:
    class: Drupal\\eval_unused\\UnusedExecutor
    tags: [{ name: ai_eval.check_executor }]
  my_eval_extras.nameless:
    tags: [ai_eval.check_executor]
  Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor:
    tags:
      - ai_eval.check_executor
  my_eval_extras.odd_priority:
    class: Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor
    tags:
      - { name: ai_eval.check_executor, priority: high }
  my_eval_extras.alias: '@my_eval_extras.check_executor.word_count'
  my_eval_extras.abstract:
    abstract: true
    class: Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor
    tags: [ai_eval.check_executor]
  my_eval_extras.other_tag:
    class: Drupal\\my_eval_extras\\Other
    tags:
      - { name: event_subscriber }
"""


def test_service_shapes_and_their_problems(copy_of: Callable[[Path], Path]) -> None:
    root = copy_of(SITE)
    services = root / "web/modules/custom/my_eval_extras/my_eval_extras.services.yml"
    services.write_text(services.read_text() + SERVICES_EXTRA)
    found = scan(root)
    assert found is not None
    ours = [item for item in found.executors if item.module == "my_eval_extras"]
    assert [item.service_id for item in ours] == [
        "my_eval_extras.check_executor.word_count",
        "my_eval_extras.borrowed",
        "my_eval_extras.nameless",
        "Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor",
        "my_eval_extras.odd_priority",
    ]
    where = "web/modules/custom/my_eval_extras/my_eval_extras.services.yml"
    assert ours[1].problems == (
        f"{where}:7: the service `my_eval_extras.borrowed` of module `my_eval_extras`: its class "
        "`Drupal\\eval_unused\\UnusedExecutor` belongs to module `eval_unused`, which is not installed (not in "
        "core.extension.yml); install it, or fix `class:`",
    )
    assert ours[2].problems == (
        f"{where}:10: the service `my_eval_extras.nameless` of module `my_eval_extras`: it has no `class:`, and "
        "its id is not a class name; add `class:`",
    )
    assert (ours[3].class_name, ours[3].problems, [d.kind for d in ours[3].definitions]) == (
        "Drupal\\my_eval_extras\\CheckExecutor\\WordCountExecutor",
        (),
        ["word_count"],
    )
    assert ours[4].priority == 0
    assert ours[4].problems == (
        f"{where}:15: the tag `priority` of `my_eval_extras.odd_priority` is not an integer; it counts as 0",
    )


def test_a_services_file_that_does_not_parse_is_a_notice(copy_of: Callable[[Path], Path]) -> None:
    root = copy_of(SITE)
    services = root / "web/modules/custom/my_eval_extras/my_eval_extras.services.yml"
    services.write_text("services:\n  broken: [ai_eval.check_executor\n")
    found = scan(root)
    assert found is not None and "word_count" not in kinds(found)
    assert found.notices == (
        "web/modules/custom/my_eval_extras/my_eval_extras.services.yml:2: the file does not parse; its executors "
        "are not known until it does",
    )


def test_the_sync_folder_named_in_settings(copy_of: Callable[[Path], Path]) -> None:
    root = copy_of(SITE)
    (root / "config/sync").rename(root / "config/prod")
    edit(
        root / "web/sites/default/settings.php",
        "$settings['config_sync_directory'] = '../config/sync';",
        "$settings['config_sync_directory'] = $app_root . '/../config/prod';",
    )
    found = scan(root)
    assert found is not None and found.installed_from == root / "config/prod/core.extension.yml"
    assert [module.name for module in found.modules] == INSTALLED


def test_an_export_listing_modules_the_codebase_lacks(copy_of: Callable[[Path], Path]) -> None:
    root = copy_of(SITE)
    edit(root / "config/sync/core.extension.yml", "  node: 0\n", "  node: 0\n  pathauto: 0\n  token: 0\n")
    found = scan(root)
    assert found is not None and found.notices == (
        "2 modules are listed in core.extension.yml but not in the codebase (pathauto, token); "
        "`composer install` brings them, and their kinds are unknown until then",
    )


def test_a_later_origin_overrides_a_module_of_the_same_name(copy_of: Callable[[Path], Path]) -> None:
    root = copy_of(NO_EXPORT)
    override = root / "docroot/sites/default/modules/my_eval_extras"
    shutil.copytree(root / "docroot/modules/custom/my_eval_extras", override)
    found = scan(root)
    assert found is not None
    assert [module.folder for module in found.modules if module.name == "my_eval_extras"] == [override]


# --- the cache ----------------------------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every discovery that really ran (not served from the cache)."""
    ran: list[Path] = []
    real = codebase._discover

    def counting(*arguments: Any) -> Codebase | None:
        ran.append(arguments[0])
        return real(*arguments)

    monkeypatch.setattr(codebase, "_discover", counting)
    yield ran


def later(path: Path) -> None:
    """Touch a path: a later mtime, as an editor's save gives it."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10_000_000_000))


def test_a_warm_start_returns_what_the_cold_one_found(
    copy_of: Callable[[Path], Path], tmp_path: Path, counted: list[Path]
) -> None:
    root = copy_of(SITE)
    cold = discover(root, cache_dir=tmp_path / "cache")
    warm = discover(root, cache_dir=tmp_path / "cache")
    assert len(counted) == 1
    assert warm == cold and warm is not None
    assert warm.to_json() == scan(root).to_json()  # type: ignore[union-attr]
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [
        f"{cache.key(str(root.resolve()), '', '', 'True')}.json"
    ]


@pytest.mark.parametrize(
    "change",
    [
        "touch services.yml",
        "add a module folder",
        "edit a class file",
        "edit a parent class",
        "edit core.extension.yml",
    ],
)
def test_a_change_to_an_input_means_discovering_again(
    copy_of: Callable[[Path], Path], tmp_path: Path, counted: list[Path], change: str
) -> None:
    root = copy_of(SITE)
    custom = root / "web/modules/custom"
    first = discover(root, cache_dir=tmp_path / "cache")
    assert first is not None
    if change == "touch services.yml":
        later(custom / "eval_legacy/eval_legacy.services.yml")
    elif change == "add a module folder":
        (custom / "eval_new").mkdir()
        (custom / "eval_new/eval_new.info.yml").write_text("name: New\ntype: module\n")
    elif change == "edit a class file":
        edit(
            custom / "my_eval_extras/src/CheckExecutor/WordCountExecutor.php",
            "'word_count' => [",
            "'words' => [",
        )
    elif change == "edit a parent class":
        base = custom / "eval_constants/src/CheckExecutor/ReadabilityExecutorBase.php"
        edit(base, "MAX_WORDS_PER_SENTENCE = 20", "MAX_WORDS_PER_SENTENCE = 25")
    else:
        edit(root / "config/sync/core.extension.yml", "  eval_mixed: 0\n", "")
    second = discover(root, cache_dir=tmp_path / "cache")
    assert len(counted) == 2 and second is not None
    third = discover(root, cache_dir=tmp_path / "cache")
    assert len(counted) == 2 and third == second
    if change == "add a module folder":
        assert [module.name for module in second.uninstalled] == ["eval_new", "eval_unused"]
    elif change == "edit a class file":
        assert "words" in kinds(second) and "word_count" not in kinds(second)
    elif change == "edit a parent class":
        reading = executor(second, "eval_constants.check_executor.reading_level").definitions[0].schema
        assert reading["allOf"][1]["properties"]["max_words_per_sentence"]["default"] == 25
    elif change == "edit core.extension.yml":
        assert "tone_ok" in kinds(first) and "tone_ok" not in kinds(second)


def test_an_export_created_later_is_noticed(
    copy_of: Callable[[Path], Path], tmp_path: Path, counted: list[Path]
) -> None:
    root = copy_of(NO_EXPORT)
    assert discover(root, cache_dir=tmp_path / "cache").installed_from is None  # type: ignore[union-attr]
    (root / "config/sync").mkdir(parents=True)
    (root / "config/sync/core.extension.yml").write_text("module:\n  system: 0\n")
    found = discover(root, cache_dir=tmp_path / "cache")
    assert found is not None and found.installed_from == root / "config/sync/core.extension.yml"
    assert [module.name for module in found.modules] == ["system"] and found.executors == ()


@pytest.mark.parametrize("damage", ["not json", "truncated", "other format", "other version", "other shape"])
def test_a_damaged_or_foreign_cache_entry_is_ignored(
    copy_of: Callable[[Path], Path], tmp_path: Path, counted: list[Path], damage: str
) -> None:
    root = copy_of(NO_EXPORT)
    expected = discover(root, cache_dir=tmp_path / "cache")
    (entry,) = (tmp_path / "cache").iterdir()
    stored = json.loads(entry.read_text())
    if damage == "not json":
        entry.write_bytes(b"\x00\xffgarbage")
    elif damage == "truncated":
        entry.write_text(entry.read_text()[:100])
    elif damage == "other format":
        entry.write_text(json.dumps({**stored, "format": cache.FORMAT + 1}))
    elif damage == "other version":
        entry.write_text(json.dumps({**stored, "version": "0.0.0-other"}))
    else:
        entry.write_text(json.dumps({**stored, "payload": {"folder": 1}}))
    assert discover(root, cache_dir=tmp_path / "cache") == expected
    assert len(counted) == 2
    assert discover(root, cache_dir=tmp_path / "cache") == expected
    assert len(counted) == 2  # the entry was written again
    assert [path.name for path in (tmp_path / "cache").iterdir()] == [entry.name]  # no temporary file left


def test_the_default_cache_folder_follows_xdg(
    copy_of: Callable[[Path], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_folder("drupal") == tmp_path / "xdg/ai-eval-lsp/drupal"
    root = copy_of(NO_EXPORT)
    discover(root)
    assert len(list((tmp_path / "xdg/ai-eval-lsp/drupal").iterdir())) == 1
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.default_folder("drupal") == tmp_path / "home/.cache/ai-eval-lsp/drupal"


def test_an_unwritable_cache_folder_only_costs_time(copy_of: Callable[[Path], Path], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    root = copy_of(NO_EXPORT)
    assert discover(root, cache_dir=blocker / "cache") == scan(root)
