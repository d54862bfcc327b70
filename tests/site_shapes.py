"""Drupal projects whose settings files name a site database in the ways real ones do: each shape
writes a codebase whose `settings.php` (and what it includes) gives the database asked for, and
returns the environment it reads (`getenv()`). The static tests check what is read; the site
tests connect to real servers through them."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Database:
    driver: str
    """mysql, pgsql or sqlite"""
    name: str
    """The database's name; for sqlite, the file's path relative to the Drupal root."""
    host: str = "127.0.0.1"
    port: int = 3306
    user: str = ""
    password: str = ""
    prefix: str = ""


def php(value: str) -> str:
    """A PHP single-quoted string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def codebase(root: Path, sites: tuple[str, ...] = ("default",)) -> None:
    """A composer project with Drupal core in `web/`, an ai_eval-like module and its sites."""
    write(
        root,
        {
            "composer.json": json.dumps({"require": {"drupal/core-recommended": "^10.3"}}),
            "web/core/lib/Drupal.php": "<?php\n",
            "web/modules/contrib/ai_eval/ai_eval.info.yml": "name: AI Eval\ntype: module\ncore_version_requirement: ^10\n",
        },
    )
    for site in sites:
        (root / "web" / "sites" / site).mkdir(parents=True, exist_ok=True)


def _array(db: Database, style: str = "[]") -> str:
    opening, closing = ("array (", ")") if style == "array" else ("[", "]")
    port = f"'port' => '{db.port}'," if db.driver != "sqlite" else ""
    return f"""{opening}
      'database' => {php(db.name)},
      'username' => {php(db.user)},
      'password' => {php(db.password)},
      'prefix' => {php(db.prefix)},
      'host' => {php(db.host)},
      {port}
      'isolation_level' => 'READ COMMITTED',
      'driver' => {php(db.driver)},
      'namespace' => 'Drupal\\\\{db.driver}\\\\Driver\\\\Database\\\\{db.driver}',
      'autoload' => 'core/modules/{db.driver}/src/Driver/Database/{db.driver}/',
    {closing}"""


DEFAULT_SETTINGS_TOP = """
<?php

// @codingStandardsIgnoreFile

/**
 * Database settings: the installer appends them at the end of this file.
 */
$databases = [];

$settings['hash_salt'] = 'WdY3rBmzmbvWq3aqGjNKM3dQ4XhL5hSkH8RwBvGr';
$settings['update_free_access'] = FALSE;
$settings['container_yamls'][] = $app_root . '/' . $site_path . '/services.yml';
$settings['file_scan_ignore_directories'] = [
  'node_modules',
  'bower_components',
];
$settings['entity_update_batch_size'] = 50;
$settings['entity_update_backup'] = TRUE;
$settings['migrate_node_migrate_type_classic'] = FALSE;
"""

LOCAL_INCLUDE = """
if (file_exists($app_root . '/' . $site_path . '/settings.local.php')) {
  include $app_root . '/' . $site_path . '/settings.local.php';
}
"""


def default_install(root: Path, db: Database) -> dict[str, str]:
    """What Drupal's installer writes: `$databases['default']['default'] = array (...)` appended."""
    codebase(root)
    settings = DEFAULT_SETTINGS_TOP + f"\n$databases['default']['default'] = {_array(db, 'array')};\n"
    settings += "$settings['config_sync_directory'] = 'sites/default/files/config_Xk3/sync';\n"
    write(root, {"web/sites/default/settings.php": settings})
    return {}


def settings_local(root: Path, db: Database) -> dict[str, str]:
    """A shared settings.php with a placeholder database, and the developer's settings.local.php
    (included as default.settings.php's last lines say) overriding part of it element by element."""
    codebase(root)
    shared = Database(db.driver, "drupal", "database.internal", 3306, "drupal", "not-this-one")
    settings = (
        DEFAULT_SETTINGS_TOP + f"\n$databases['default']['default'] = {_array(shared)};\n" + LOCAL_INCLUDE
    )
    local = f"""
        <?php
        // Local development overrides.
        $settings['container_yamls'][] = DRUPAL_ROOT . '/sites/development.services.yml';
        $config['system.logging']['error_level'] = 'verbose';
        $db = &$databases['default']['default'];
        $databases['default']['default']['database'] = {php(db.name)};
        $databases['default']['default']['username'] = {php(db.user)};
        $databases['default']['default']['password'] = {php(db.password)};
        $databases['default']['default']['host'] = {php(db.host)};
        $databases['default']['default']['port'] = {db.port};
        $databases['default']['default']['prefix'] = {php(db.prefix)};
        """
    write(root, {"web/sites/default/settings.php": settings, "web/sites/default/settings.local.php": local})
    return {}


DDEV_INCLUDE = """
// Automatically generated include for settings managed by ddev.
if (getenv('IS_DDEV_PROJECT') == 'true' && file_exists(__DIR__ . '/settings.ddev.php')) {
  include __DIR__ . '/settings.ddev.php';
}
"""


def ddev(root: Path, db: Database) -> dict[str, str]:
    """A DDEV project: settings.php includes DDEV's generated settings.ddev.php, which gives the
    host-side address (127.0.0.1 and the published port) to commands run on the host."""
    codebase(root)
    write(
        root,
        {
            ".ddev/config.yaml": f"name: shop\ntype: drupal10\ndocroot: web\nphp_version: '8.3'\ndatabase:\n  type: {'postgres' if db.driver == 'pgsql' else 'mariadb'}\n  version: '10.11'\n",
            "web/sites/default/settings.php": DEFAULT_SETTINGS_TOP + DDEV_INCLUDE + LOCAL_INCLUDE,
            "web/sites/default/settings.ddev.php": f"""
                <?php

                /**
                 * @file
                 * #ddev-generated: Automatically generated Drupal settings file.
                 * ddev manages this file and may delete or overwrite the file unless this
                 * comment is removed.  It is recommended that you leave this file alone.
                 */

                $host = "db";
                $port = {5432 if db.driver == "pgsql" else 3306};
                $driver = "{db.driver}";

                // If DDEV_PHP_VERSION is not set but IS_DDEV_PROJECT *is*, it means we're running (drush) on the host,
                // so use the host-side bind port on docker IP
                if (empty(getenv('DDEV_PHP_VERSION') && getenv('IS_DDEV_PROJECT') == 'true')) {{
                  $host = "{db.host}";
                  $port = {db.port};
                }}

                $databases['default']['default']['database'] = "{db.name}";
                $databases['default']['default']['username'] = "{db.user}";
                $databases['default']['default']['password'] = {php(db.password)};
                $databases['default']['default']['host'] = $host;
                $databases['default']['default']['port'] = $port;
                $databases['default']['default']['driver'] = $driver;
                $databases['default']['default']['prefix'] = {php(db.prefix)};
                $databases['default']['default']['isolation_level'] = 'READ COMMITTED';

                // Enable verbose logging for errors.
                $config['system.logging']['error_level'] = 'verbose';

                // Set $settings['config_sync_directory'] if not set in settings.php.
                if (empty($settings['config_sync_directory'])) {{
                  $settings['config_sync_directory'] = 'sites/default/files/sync';
                }}

                // Override drupal/symfony_mailer default config to use Mailpit
                $config['symfony_mailer.settings']['default_transport'] = 'sendmail';
                $config['symfony_mailer.settings']['transport']['sendmail']['plugin'] = 'smtp';

                // Enable twig debugging
                $settings['hash_salt'] = 'DiUkDRKvWzyQWgZgDKeiLTRbhVgVtOZhPwzzSVHbBWvmnRzBLnjEgTpeYbrMZljD';
                """,
        },
    )
    return {"DDEV_PHP_VERSION": "8.3"}  # set in the user's shell, and left out as on the host


def ddev_port_in_config(root: Path, db: Database) -> dict[str, str]:
    """A DDEV project whose settings file still says `db`: its database at the config's
    `host_db_port` on 127.0.0.1."""
    codebase(root)
    write(
        root,
        {
            ".ddev/config.yaml": f'name: shop\ntype: drupal10\ndocroot: web\nhost_db_port: "{db.port}"\n',
            "web/sites/default/settings.php": DEFAULT_SETTINGS_TOP + DDEV_INCLUDE,
            "web/sites/default/settings.ddev.php": f"""
                <?php
                $databases['default']['default'] = [
                  'database' => "{db.name}",
                  'username' => "{db.user}",
                  'password' => {php(db.password)},
                  'host' => "db",
                  'driver' => "{db.driver}",
                  'port' => {5432 if db.driver == "pgsql" else 3306},
                  'prefix' => {php(db.prefix)},
                ];
                """,
        },
    )
    return {}


def docker_compose(root: Path, db: Database) -> dict[str, str]:
    """A docker compose project (the City of Helsinki's shape): every value from `getenv()`, with
    `?:` defaults; the project's `.env` holds some, the environment others (and wins)."""
    codebase(root)
    write(
        root,
        {
            "docker-compose.yml": "services:\n  app:\n    env_file: .env\n  db:\n    image: mariadb:10.11\n",
            ".env": f"""
                COMPOSE_PROJECT_NAME=helfi-shop
                DRUPAL_HOSTNAME=helfi-shop.docker.so
                DRUPAL_DB_NAME={db.name}
                DRUPAL_DB_USER="{db.user}"
                # the host: overridden by the environment below
                DRUPAL_DB_HOST=db
                export DRUPAL_DB_PREFIX='{db.prefix}'
                """,
            "web/sites/default/settings.php": f"""
                <?php

                if (PHP_SAPI === 'cli') {{
                  ini_set('memory_limit', '512M');
                }}

                if ($simpletest_db = getenv('SIMPLETEST_DB')) {{
                  $parts = parse_url($simpletest_db);
                  putenv(sprintf('DRUPAL_DB_NAME=%s', substr($parts['path'], 1)));
                  putenv(sprintf('DRUPAL_DB_USER=%s', $parts['user']));
                  putenv(sprintf('DRUPAL_DB_PASS=%s', $parts['pass']));
                  putenv(sprintf('DRUPAL_DB_HOST=%s', $parts['host']));
                }}

                $databases['default']['default'] = [
                  'database' => getenv('DRUPAL_DB_NAME'),
                  'username' => getenv('DRUPAL_DB_USER'),
                  'password' => getenv('DRUPAL_DB_PASS'),
                  'prefix' => getenv('DRUPAL_DB_PREFIX') ?: '',
                  'host' => getenv('DRUPAL_DB_HOST') ?: 'db',
                  'port' => getenv('DRUPAL_DB_PORT') ?: {5432 if db.driver == "pgsql" else 3306},
                  'namespace' => 'Drupal\\{db.driver}\\Driver\\Database\\{db.driver}',
                  'driver' => getenv('DRUPAL_DB_DRIVER') ?: 'mysql',
                  'charset' => 'utf8mb4',
                  'collation' => 'utf8mb4_swedish_ci',
                ];

                $settings['hash_salt'] = getenv('DRUPAL_HASH_SALT') ?: '000';
                $settings['config_sync_directory'] = '../conf/cmi';
                $settings['file_public_path'] = getenv('DRUPAL_FILES_PUBLIC') ?: 'sites/default/files';

                if ($env = getenv('APP_ENV')) {{
                  if (file_exists(__DIR__ . '/' . $env . '.settings.php')) {{
                    include __DIR__ . '/' . $env . '.settings.php';
                  }}
                }}
                """,
        },
    )
    environment = {
        "DRUPAL_DB_PASS": db.password,
        "DRUPAL_DB_HOST": db.host,
        "DRUPAL_DB_DRIVER": db.driver,
        "APP_ENV": "development",
    }
    if db.port != (5432 if db.driver == "pgsql" else 3306):
        environment["DRUPAL_DB_PORT"] = str(db.port)
    return environment


def multisite(root: Path, db: Database) -> dict[str, str]:
    """A multisite codebase: `beta` (chosen with `drupal.site`) has the database asked for; the
    default site and `alpha` have others."""
    codebase(root, ("default", "alpha", "beta"))
    other = Database(db.driver, "other_site", "10.0.0.9", db.port, "other", "other")
    for site, named in (("default", other), ("alpha", other), ("beta", db)):
        settings = DEFAULT_SETTINGS_TOP + f"\n$databases['default']['default'] = {_array(named)};\n"
        write(root, {f"web/sites/{site}/settings.php": settings})
    write(
        root,
        {
            "web/sites/sites.php": "<?php\n$sites['alpha.example.com'] = 'alpha';\n$sites['beta.example.com'] = 'beta';\n"
        },
    )
    return {}


SHAPES: dict[str, Callable[[Path, Database], dict[str, str]]] = {
    "default install": default_install,
    "settings.local.php": settings_local,
    "DDEV": ddev,
    "DDEV, port in its config": ddev_port_in_config,
    "docker compose": docker_compose,
    "multisite": multisite,
}
"""Each shape, and the `drupal.site` it needs (multisite: `beta`)."""

SITE_OF_SHAPE = {"multisite": "beta"}
