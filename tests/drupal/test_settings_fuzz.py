"""Whatever a settings file holds, its reading ends within its budget with an address or a note
saying why there is none, never an exception, and never reads a file outside the project
(SPEC 6, "Settings files are untrusted input"): generated PHP-like files, and the shapes real
hosting platforms write."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from site_shapes import DEFAULT_SETTINGS_TOP, LOCAL_INCLUDE, Database, codebase, ddev, php, write

from ai_eval_lsp.drupal.codebase import scan
from ai_eval_lsp.drupal.settingsphp import BUDGET_SECONDS
from ai_eval_lsp.drupal.site_address import SiteAddress, find_address

SECRET = "OUTSIDE-SECRET-7f3a"
"""In a file beside the project that settings files try to include: never read."""
ENDS_WITHIN = BUDGET_SECONDS + 5
"""The budget, and a generous margin for a loaded machine (a hang would be far past it)."""
SITE = Path("web/sites/default")

# --- generated settings files -----------------------------------------------------------------

TARGETS = [
    "$s",
    "$t",
    "$db",
    "$databases",
    "$databases['default']['default']",
    "$databases['default']['default']['driver']",
    "$databases['default']['default']['database']",
    "$databases['default']['default']['host']",
    "$databases['default']['default']['port']",
    "$databases['default']['default']['password']",
    "$settings['config_sync_directory']",
    "$databases['default']['default'][]",
]
ATOMS = [
    "'x'",
    "'mysql'",
    "'pgsql'",
    "'sqlite'",
    "'127.0.0.1'",
    "'db'",
    "''",
    "'0'",
    "3306",
    "-1",
    "1.5",
    "TRUE",
    "FALSE",
    "NULL",
    "[]",
    "['driver' => 'mysql', 'database' => 'd', 'host' => 'h', 'port' => 3306]",
    "array('driver' => 'pgsql', 'database' => 'p', 'host' => '::1')",
    "$s",
    "$t",
    "$undefined",
    "$app_root",
    "$site_path",
    "__DIR__",
    "__FILE__",
    "DRUPAL_ROOT",
    "PHP_SAPI",
    "getenv('DB_HOST')",
    "getenv('NOT_SET')",
    "$_ENV['DB_NAME']",
    "$_SERVER['PRESSFLOW_SETTINGS']",
    "json_decode(getenv('LANDO_INFO'), TRUE)",
    "base64_decode(getenv('PLATFORM_RELATIONSHIPS'))",
    "$databases['default']['default']['host']",
    "$settings",
    '"x\\n\\x41\\u{1F600}"',
    "<<<EOT\nheredoc\nEOT",
]
CONDITIONS = [
    "TRUE",
    "FALSE",
    "getenv('DB_HOST')",
    "getenv('IS_DDEV_PROJECT') == 'true'",
    "file_exists(__DIR__ . '/inc1.php')",
    "file_exists(__DIR__ . '/pipe.php')",
    "file_exists('/var/www/site-php')",
    "is_readable($app_root . '/' . $site_path . '/settings.local.php')",
    "isset($s)",
    "empty($t)",
    "$s === 'x'",
    "$s != $t",
    "function_exists('drush_main')",
    "PHP_SAPI === 'cli'",
]
INCLUDED = [
    "__DIR__ . '/inc1.php'",
    "__DIR__ . '/inc2.php'",
    "__DIR__ . '/settings.php'",
    "$app_root . '/' . $site_path . '/settings.local.php'",
    "__DIR__ . '/pipe.php'",
    "__DIR__ . '/leak.php'",
    "'/dev/zero'",
    "__DIR__ . '/../../../../elsewhere/db.php'",
    "'/var/www/site-php/shop/shop-settings.inc'",
    "DRUPAL_ROOT . '/../vendor/acquia/blt/settings/blt.settings.php'",
    "$s",
]


def _if_statement(parts: tuple[str, list[str], list[tuple[str, list[str]]], list[str] | None]) -> list[str]:
    condition, body, alternatives, last = parts
    text = f"if ({condition}) {{\n" + "\n".join(body) + "\n}"
    for other, block in alternatives:
        text += f" elseif ({other}) {{\n" + "\n".join(block) + "\n}"
    if last is not None:
        text += " else {\n" + "\n".join(last) + "\n}"
    return [text]


expressions = st.recursive(
    st.sampled_from(ATOMS) | st.text(max_size=12).map(php),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: f"{p[0]} . {p[1]}"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} ?: {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"{p[0]} ?? {p[1]}"),
        st.tuples(st.sampled_from(CONDITIONS), inner, inner).map(lambda p: f"({p[0]} ? {p[1]} : {p[2]})"),
        st.tuples(inner, inner).map(lambda p: f"[{p[0]} => {p[1]}]"),
        st.tuples(st.sampled_from(["(string)", "(int)", "(bool)", "(array)", "!", "-"]), inner).map(
            lambda p: f"{p[0]}{p[1]}"
        ),
        inner.map(lambda e: f"({e})"),
    ),
    max_leaves=6,
)
conditions = st.recursive(
    st.sampled_from(CONDITIONS),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: f"{p[0]} && {p[1]}"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} || {p[1]})"),
        inner.map(lambda c: f"!({c})"),
        st.tuples(expressions, expressions).map(lambda p: f"{p[0]} == {p[1]}"),
    ),
    max_leaves=4,
)
simple_statements = st.one_of(
    st.tuples(st.sampled_from(TARGETS), expressions).map(lambda p: f"{p[0]} = {p[1]};"),
    st.tuples(st.sampled_from(TARGETS), expressions).map(lambda p: f"{p[0]} .= {p[1]};"),
    st.integers(1, 45).map(lambda n: "$s = 'xxxxxxxx';\n" + "$s .= $s;\n" * n),
    st.tuples(
        st.sampled_from(["include", "include_once", "require", "require_once"]), st.sampled_from(INCLUDED)
    ).map(lambda p: f"{p[0]} {p[1]};"),
    st.sampled_from(
        [
            "return;",
            "$db = &$databases['default']['default'];",
            "unset($s);",
            "putenv('DB_HOST=evil');",
            "$$s = 1;",
            "if ($x = getenv('DB_HOST')) { $t = $x; }",
            "foreach ($databases as $key => $value) { $s = $value; }",
            "while (TRUE) { $s .= $s; }",
            "switch ($s) { case 'x': $t = 1; break; default: $t = 2; }",
            "function f() { return 1; }",
            "$s = <<<'EOT'\nnowdoc\nEOT;",
            "} } ) ( {",
            "<?php ?> <html> <?php",
            "$s = 'unterminated;",
        ]
    ),
    st.text(max_size=30),
)
statements = st.recursive(
    simple_statements.map(lambda s: [s]),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda lists: [s for each in lists for s in each]),
        st.tuples(
            conditions, inner, st.lists(st.tuples(conditions, inner), max_size=2), st.none() | inner
        ).map(_if_statement),
    ),
    max_leaves=12,
)


def program(lines: list[str]) -> str:
    return "<?php\n" + "\n".join(lines) + "\n"


# --- the readings --------------------------------------------------------------------------------


def reading_ends_within_the_budget(
    root: Path, environment: dict[str, str]
) -> tuple[SiteAddress | None, str | None]:
    """The project's site address read as `check`, `run` and `site pull` read it: ended within
    the budget, an address or a note saying which setting to give, no exception, no secret."""
    started = time.monotonic()
    found = scan(root)
    address, note = find_address(root, "", found, True, environment)
    elapsed = time.monotonic() - started
    assert elapsed < 2 * ENDS_WITHIN  # two readings: the codebase's and the address's
    assert found is not None
    assert (address is None) != (note is None)
    if note is not None:
        assert "site.database" in note
    shown = repr(found.to_json()) + str(note) + repr(address)
    assert SECRET not in shown and (address is None or SECRET not in address.password)
    return address, note


def hostile_neighbours(root: Path) -> None:
    """What generated settings files try to reach: a FIFO, a link out of the project, and a file
    beside the project holding a secret."""
    outside = root.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    (outside / "db.php").write_text(
        f"<?php\n$databases['default']['default'] = ['driver' => 'mysql', 'database' => 'prod', "
        f"'host' => 'db.internal', 'password' => '{SECRET}'];\n"
    )
    os.mkfifo(root / SITE / "pipe.php")
    (root / SITE / "leak.php").symlink_to(outside / "db.php")


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(settings_php=statements, first=statements, second=statements, local=statements)
def test_any_settings_files_end_within_the_budget_with_an_address_or_a_note(
    settings_php: list[str], first: list[str], second: list[str], local: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        codebase(root)
        write(
            root,
            {
                str(SITE / "settings.php"): program(settings_php),
                str(SITE / "inc1.php"): program(first),
                str(SITE / "inc2.php"): program(second),
                str(SITE / "settings.local.php"): program(local),
            },
        )
        hostile_neighbours(root)
        reading_ends_within_the_budget(root, {"DB_HOST": "127.0.0.1", "LANDO_INFO": "{}"})


# --- the shapes hosting platforms write ----------------------------------------------------------


def lando(root: Path) -> dict[str, str]:
    """Lando's Drupal recipes: credentials from the JSON in `LANDO_INFO`."""
    write(
        root,
        {
            str(SITE / "settings.php"): DEFAULT_SETTINGS_TOP
            + """
if (getenv('LANDO_INFO')) {
  $lando_info = json_decode(getenv('LANDO_INFO'), TRUE);
  $databases['default']['default'] = [
    'driver' => 'mysql',
    'database' => $lando_info['database']['creds']['database'],
    'username' => $lando_info['database']['creds']['user'],
    'password' => $lando_info['database']['creds']['password'],
    'host' => $lando_info['database']['internal_connection']['host'],
    'port' => $lando_info['database']['internal_connection']['port'],
  ];
}
"""
        },
    )
    return {"LANDO_INFO": '{"database": {"creds": {"database": "drupal10"}}}'}


def platform_sh(root: Path) -> dict[str, str]:
    """Platform.sh's settings.platformsh.php: base64 JSON in `PLATFORM_RELATIONSHIPS`, in a loop."""
    write(
        root,
        {
            str(SITE / "settings.php"): DEFAULT_SETTINGS_TOP
            + """
if (getenv('PLATFORM_APPLICATION') && file_exists(__DIR__ . '/settings.platformsh.php')) {
  include __DIR__ . '/settings.platformsh.php';
}
""",
            str(SITE / "settings.platformsh.php"): """<?php
if (isset($_ENV['PLATFORM_RELATIONSHIPS'])) {
  $relationships = json_decode(base64_decode($_ENV['PLATFORM_RELATIONSHIPS']), TRUE);
  if (!empty($relationships['database'])) {
    foreach ($relationships['database'] as $endpoint) {
      $databases['default']['default'] = [
        'driver' => $endpoint['scheme'],
        'database' => $endpoint['path'],
        'username' => $endpoint['username'],
        'password' => $endpoint['password'],
        'host' => $endpoint['host'],
        'port' => $endpoint['port'],
      ];
    }
  }
}
""",
        },
    )
    return {"PLATFORM_APPLICATION": "e30=", "PLATFORM_RELATIONSHIPS": "eyJkYXRhYmFzZSI6IFtdfQ=="}


def pantheon(root: Path) -> dict[str, str]:
    """Pantheon's settings.pantheon.php: `PRESSFLOW_SETTINGS` JSON merged in a loop."""
    write(
        root,
        {
            str(SITE / "settings.php"): DEFAULT_SETTINGS_TOP
            + """
include __DIR__ . "/settings.pantheon.php";
$local_settings = __DIR__ . "/settings.local.php";
if (file_exists($local_settings)) {
  include $local_settings;
}
""",
            str(SITE / "settings.pantheon.php"): """<?php
$pressflow_settings = isset($_SERVER['PRESSFLOW_SETTINGS']) ? json_decode($_SERVER['PRESSFLOW_SETTINGS'], TRUE) : [];
foreach ($pressflow_settings as $key => $value) {
  if ($key == 'conf') {
    foreach ($value as $conf_key => $conf_value) {
      $conf[$conf_key] = $conf_value;
    }
  }
  elseif ($key == 'databases') {
    if (!isset($databases) || !is_array($databases)) {
      $databases = array();
    }
    $databases = array_replace_recursive($databases, $value);
  }
  else {
    $$key = $value;
  }
}
unset($pressflow_settings);
""",
        },
    )
    return {"PRESSFLOW_SETTINGS": '{"databases": {}}'}


def docker4drupal(root: Path) -> dict[str, str]:
    """Wodby's docker4drupal: every value from `getenv()`, the `.env` beside docker-compose.yml
    holding them, and an include of the image's own file, outside the project."""
    write(
        root,
        {
            ".env": "PROJECT_NAME=my_drupal10_project\nDB_NAME=drupal\nDB_USER=drupal\nDB_PASSWORD=drupal\n"
            "DB_ROOT_PASSWORD=password\nDB_HOST=mariadb\nDB_PORT=3306\nDB_DRIVER=mysql\n",
            str(SITE / "settings.php"): DEFAULT_SETTINGS_TOP
            + """
$databases['default']['default'] = array (
  'database' => getenv('DB_NAME'),
  'username' => getenv('DB_USER'),
  'password' => getenv('DB_PASSWORD'),
  'prefix' => '',
  'host' => getenv('DB_HOST'),
  'port' => getenv('DB_PORT'),
  'namespace' => 'Drupal\\\\Core\\\\Database\\\\Driver\\\\mysql',
  'driver' => getenv('DB_DRIVER'),
);
if (isset($_SERVER['WODBY_APP_NAME']) || getenv('WODBY_APP_NAME')) {
  include '/var/www/conf/wodby.settings.php';
}
""",
        },
    )
    return {"WODBY_APP_NAME": "my_drupal10_project"}


def acquia(root: Path) -> dict[str, str]:
    """Acquia Cloud: the database from a file outside the docroot, `/var/www/site-php/...`, and BLT's."""
    write(
        root,
        {
            str(SITE / "settings.php"): DEFAULT_SETTINGS_TOP
            + """
require DRUPAL_ROOT . "/../vendor/acquia/blt/settings/blt.settings.php";
if (file_exists('/var/www/site-php')) {
  require '/var/www/site-php/' . $_ENV['AH_SITE_GROUP'] . '/' . $_ENV['AH_SITE_GROUP'] . '-settings.inc';
}
"""
            + LOCAL_INCLUDE,
        },
    )
    return {"AH_SITE_GROUP": "shop"}


def ddev_shape(root: Path) -> dict[str, str]:
    """DDEV's generated settings.ddev.php, read as DDEV's commands read it on the host."""
    return ddev(root, Database("mysql", "db", "127.0.0.1", 32770, "db", "db"))


CORPUS: dict[str, tuple[Callable[[Path], dict[str, str]], str | None]] = {
    # each shape, and what its note says (None: an address is found)
    "DDEV": (ddev_shape, None),
    "Lando": (lando, "a call to `json_decode()`"),
    "Platform.sh": (platform_sh, "set under the condition"),
    "Pantheon": (pantheon, "no `$databases['default']['default']`"),
    "docker4drupal": (
        docker4drupal,
        "includes `'/var/www/conf/wodby.settings.php'`: not read: it is outside the project",
    ),
    "Acquia": (acquia, "asks `file_exists('/var/www/site-php')`: it is outside the project"),
}


@pytest.mark.parametrize("shape", CORPUS)
def test_every_platform_s_shape_ends_within_the_budget_with_an_address_or_a_note(
    tmp_path: Path, shape: str
) -> None:
    make, said = CORPUS[shape]
    root = tmp_path / "project"
    codebase(root)
    hostile_neighbours(root)
    address, note = reading_ends_within_the_budget(root, make(root))
    if said is None:
        assert address is not None and (address.host, address.port) == ("127.0.0.1", 32770)
    else:
        assert note is not None and said in note


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(sorted(CORPUS)), added=statements, where=st.sampled_from(["start", "end"]))
def test_a_platform_s_shape_with_anything_added_still_ends_with_an_address_or_a_note(
    shape: str, added: list[str], where: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        codebase(root)
        hostile_neighbours(root)
        environment = CORPUS[shape][0](root)
        path = root / SITE / "settings.php"
        text = path.read_text()
        extra = "\n".join(added)
        text = text.replace("<?php", "<?php\n" + extra, 1) if where == "start" else text + "\n" + extra + "\n"
        path.write_text(text)
        reading_ends_within_the_budget(root, environment)
