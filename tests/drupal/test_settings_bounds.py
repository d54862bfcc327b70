"""A settings file is untrusted input (SPEC 6, "Settings files are untrusted input"): its static
reading follows `if`/`elseif`/`else` as PHP does, reads only regular files inside the project, at
most 1 MB a file and 20 files, keeps no string over 64 KB, and stops after 1 s; each limit leaves
the values unknown with the reason, and the commands go on."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from site_shapes import DDEV_INCLUDE, DEFAULT_SETTINGS_TOP, LOCAL_INCLUDE, SHAPES, Database, codebase, write

from ai_eval_lsp.disk.settings import Settings
from ai_eval_lsp.drupal.codebase import scan, site_settings
from ai_eval_lsp.drupal.phpread import Unknown, parse_php, php_text
from ai_eval_lsp.drupal.settingsphp import run_settings
from ai_eval_lsp.drupal.site_address import SiteAddress, dotenv_values, find_address
from ai_eval_lsp.project.project import Project

SETTINGS = "web/sites/default/settings.php"
GIVE_IT = "give the setting `site.database`"
MARGIN = 10.0
"""What "ends at once" means in a test: far above any of these readings, far below a hang."""


def run_of(source: str, environment: dict[str, str] | None = None) -> object:
    """`$s` after running a settings file whose body is `source`."""
    files = {Path("/srv/web/sites/default/settings.php"): f"<?php\n{source}\n".encode()}
    run = site_settings(Path("/srv/web"), "default", environment or {}, files.get, lambda path: path in files)
    return run.get("s")


@pytest.mark.parametrize(
    ("source", "environment", "expected"),
    [
        # a true first arm: the later arms never run
        (
            "$s = ''; if (TRUE) { $s .= 'if'; } elseif (TRUE) { $s .= 'elseif'; } else { $s .= 'else'; }",
            {},
            b"if",
        ),
        ("$s = ''; if (TRUE) { $s .= 'if'; } else { $s .= 'else'; }", {}, b"if"),
        ("$s = 'before'; if (1 == 1) { $t = 1; } else { $s = 'else'; }", {}, b"before"),
        # a false first arm: the first true one runs, and only it
        (
            "$s = ''; if (FALSE) { $s .= 'if'; } elseif (getenv('X') == 'y') { $s .= 'elseif'; } "
            "elseif (TRUE) { $s .= 'second'; } else { $s .= 'else'; }",
            {"X": "y"},
            b"elseif",
        ),
        (
            "$s = ''; if (FALSE) { $s .= 'if'; } elseif (getenv('X') == 'y') { $s .= 'elseif'; } else { $s .= 'else'; }",
            {},
            b"else",
        ),
        ("$s = 'kept'; if (getenv('X')) { $s = 'if'; } elseif (FALSE) { $s = 'elseif'; }", {}, b"kept"),
        # nested, both ways
        (
            "$s = ''; if (TRUE) { if (FALSE) { $s .= 'a'; } elseif (TRUE) { $s .= 'b'; } else { $s .= 'c'; } "
            "$s .= 'd'; } else { $s .= 'e'; }",
            {},
            b"bd",
        ),
        (
            "$s = ''; if (FALSE) { $s .= 'a'; } else { if (TRUE) { $s .= 'b'; } else { $s .= 'c'; } }",
            {},
            b"b",
        ),
        # the alternative syntax
        (
            "$s = ''; if (TRUE): $s .= 'if'; elseif (TRUE): $s .= 'elseif'; else: $s .= 'else'; endif;",
            {},
            b"if",
        ),
        ("$s = ''; if (FALSE): $s .= 'if'; else: $s .= 'else'; endif;", {}, b"else"),
    ],
)
def test_the_first_arm_whose_condition_holds_runs_and_no_other(
    source: str, environment: dict[str, str], expected: bytes
) -> None:
    assert run_of(source, environment) == expected


def test_after_a_condition_that_cannot_be_decided_every_arm_left_is_unknown() -> None:
    found = run_of(
        "$s = 'a'; if (function_exists('f')) { $s = 'b'; } elseif (TRUE) { $s = 'c'; } else { $s = 'd'; }"
    )
    assert isinstance(found, Unknown) and "the condition `function_exists('f')`" in found.why
    # decided arms before it still decide: an undecidable arm after a true one never runs
    assert run_of("$s = 'a'; if (TRUE) { $s = 'b'; } elseif (function_exists('f')) { $s = 'c'; }") == b"b"


def address_of(
    root: Path, environment: dict[str, str] | None = None
) -> tuple[SiteAddress | None, str | None]:
    return find_address(root, "", scan(root), True, environment or {})


def a_site(root: Path, settings: str, **files: str) -> Path:
    """A composer project with Drupal in `web/` whose settings.php is `settings`, and other files."""
    codebase(root)
    write(root, {SETTINGS: settings, **files})
    return root


def ended(started: float) -> bool:
    return time.monotonic() - started < MARGIN


def test_a_string_doubled_by_each_line_is_unknown_past_64_kb(tmp_path: Path) -> None:
    doubling = "$s = 'xxxxxxxx';\n" + "$s .= $s;\n" * 40
    a_site(
        tmp_path,
        f"<?php\n{doubling}$databases['default']['default'] = "
        "['driver' => 'mysql', 'database' => $s, 'host' => '127.0.0.1'];\n$settings['config_sync_directory'] = $s;\n",
    )
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started) and address is None and note is not None
    assert note.startswith(
        "the site's database `database` in web/sites/default/settings.php is not known: a string longer "
        "than 64 KB at web/sites/default/settings.php:16"  # 8 bytes doubled 14 times
    )
    assert note.endswith(GIVE_IT + " (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)")


def test_an_include_of_a_device_is_not_followed(tmp_path: Path) -> None:
    a_site(tmp_path, "<?php\ninclude '/dev/zero';\n$databases['default']['default']['database'] = 'd';\n")
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started) and address is None and note is not None
    assert (
        "web/sites/default/settings.php:2 includes `'/dev/zero'`: not read: it is outside the project" in note
    )


def test_a_fifo_where_drupal_looks_for_settings_local_php_is_not_waited_for(tmp_path: Path) -> None:
    shared = (
        "$databases['default']['default'] = ['driver' => 'mysql', 'database' => 'shared', 'host' => 'h'];\n"
    )
    a_site(tmp_path, DEFAULT_SETTINGS_TOP + shared + LOCAL_INCLUDE)
    os.mkfifo(tmp_path / "web/sites/default/settings.local.php")
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started)
    # what the file would have set is unknown, so the shared database is not taken for it
    assert address is None and note is not None
    assert (
        "includes `$app_root . '/' . $site_path . '/settings.local.php'`: not read: it is a named pipe "
        "(FIFO), not a regular file" in note
    )
    found = scan(tmp_path)
    assert found is not None and any(
        "settings.local.php: not read: it is a named pipe" in n for n in found.notices
    )


def test_an_include_outside_the_project_is_not_followed_and_its_secret_never_read(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "db.php").write_text(
        "<?php\n$databases['default']['default'] = "
        "['driver' => 'mysql', 'database' => 'prod', 'host' => 'db.internal', 'password' => 'OUTSIDE-SECRET'];\n"
    )
    a_site(project, "<?php\ninclude __DIR__ . '/../../../../elsewhere/db.php';\n")
    address, note = address_of(project)
    assert address is None and note is not None
    assert note == (
        "no `$databases['default']['default']` in web/sites/default/settings.php (web/sites/default/settings.php:2 "
        "includes `__DIR__ . '/../../../../elsewhere/db.php'`: not read: it is outside the project (a symbolic "
        "link or `..` leads out of it), and only files inside the project are read); "
        f"{GIVE_IT} (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )
    found = scan(project)
    assert found is not None and "OUTSIDE-SECRET" not in repr(found.to_json())


def test_a_settings_local_php_linked_from_outside_the_project_is_not_read(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / "local.php").write_text(
        "<?php\n$databases['default']['default']['password'] = 'OUTSIDE-SECRET';\n"
    )
    shared = "$databases['default']['default'] = ['driver' => 'mysql', 'database' => 'd', 'host' => 'h'];\n"
    a_site(project, DEFAULT_SETTINGS_TOP + shared + LOCAL_INCLUDE)
    (project / "web/sites/default/settings.local.php").symlink_to(elsewhere / "local.php")
    address, note = address_of(project)
    assert address is None and note is not None and "OUTSIDE-SECRET" not in note
    assert "settings.local.php'`: not read: it is outside the project" in note


def test_a_file_outside_the_project_is_taken_as_not_there_so_acquia_s_include_is_skipped(
    tmp_path: Path,
) -> None:
    """As PHP on this machine, where Acquia's `/var/www/site-php` is not: never looked at, and said."""
    acquia = """<?php
if (file_exists('/var/www/site-php')) {
  require '/var/www/site-php/shop/shop-settings.inc';
}
$databases['default']['default']['host'] = '127.0.0.1';
"""
    a_site(tmp_path, acquia)
    address, note = address_of(tmp_path)
    assert address is None and note == (
        "the site's database in web/sites/default/settings.php has no `driver`; not followed: "
        "web/sites/default/settings.php:2 asks `file_exists('/var/www/site-php')`: it is outside the project, and "
        "only the project's files are looked at, so it is taken as not there; "
        f"{GIVE_IT} (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )
    local = "<?php\n$databases['default']['default']['driver'] = 'mysql';\n$databases['default']['default']['database'] = 'local';\n"
    write(tmp_path, {SETTINGS: acquia + LOCAL_INCLUDE, "web/sites/default/settings.local.php": local})
    address, note = address_of(tmp_path)
    assert note is None and address is not None and (address.host, address.database) == ("127.0.0.1", "local")


def test_a_settings_file_over_1_mb_is_refused_by_its_size(tmp_path: Path) -> None:
    a_site(tmp_path, "<?php\n" + "$x = 'aaaaaaaa';\n" * 1_500_000)  # 24 MB
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert time.monotonic() - started < 5  # it took 31 s to read
    assert address is None and note == (
        "the site's database is not known: web/sites/default/settings.php: not read: it is 24.3 MB, over the 1 MB "
        f"limit for this kind of file; {GIVE_IT} (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )


def test_the_whole_reading_stops_after_1_s(tmp_path: Path) -> None:
    """Twenty files of 1 MB each, each including the next: parsing one takes most of a second."""
    body = "$settings['a'] = 'b' . 'c';\n" * 37_000
    chain = {
        f"web/sites/default/s{n}.php": f"<?php\n{body}include __DIR__ . '/s{n + 1}.php';\n"
        for n in range(1, 20)
    }
    a_site(tmp_path, f"<?php\n{body}include __DIR__ . '/s1.php';\n", **chain)
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started)
    assert address is None and note is not None
    assert "(reading the settings files stopped after 1 s, in web/sites/default/" in note


def test_blocks_nested_past_what_is_read_leave_everything_unknown(tmp_path: Path) -> None:
    deep = "if (TRUE) {\n" * 5_000 + "$s = 'deep';\n" + "}\n" * 5_000
    assert isinstance(run_of("$s = 'a';\n" + deep), Unknown)
    assert isinstance(run_of("$s = " + "(" * 5_000 + "'x'" + ")" * 5_000 + ";"), Unknown)


def test_an_untrusted_workspace_reads_no_settings_file_not_even_for_the_configuration_export(
    tmp_path: Path,
) -> None:
    settings = DEFAULT_SETTINGS_TOP + "$settings['config_sync_directory'] = '../config/elsewhere';\n"
    a_site(
        tmp_path,
        settings,
        **{"config/elsewhere/core.extension.yml": "module:\n  ai_eval: 0\nprofile: standard\n"},
    )
    trusted = Project.load(tmp_path).registry.codebase
    assert trusted is not None and trusted.installed_from == tmp_path / "config/elsewhere/core.extension.yml"
    os.remove(tmp_path / SETTINGS)
    os.mkfifo(tmp_path / SETTINGS)  # read, it would be said; untrusted, it is never looked at
    untrusted = Project.load(tmp_path, editor=Settings(workspace_trusted=False))
    assert untrusted.registry.codebase is not None and untrusted.registry.codebase.installed_from is None
    assert untrusted.registry.notices() == [
        "no core.extension.yml found (looked in web/config/sync, config/sync; settings.php, which may name "
        "another, is not read in a workspace the editor does not trust): every module found counts as installed; "
        "export the site's configuration (`drush config:export`) so only installed modules' kinds are offered"
    ]
    assert (
        untrusted.site is None
        and untrusted.site_note is not None
        and "not read in a workspace" in untrusted.site_note
    )


def test_a_ddev_include_of_a_fifo_is_refused_and_the_rest_read(tmp_path: Path) -> None:
    a_site(
        tmp_path,
        DEFAULT_SETTINGS_TOP + DDEV_INCLUDE,
        **{".ddev/config.yaml": "name: shop\ntype: drupal10\ndocroot: web\n"},
    )
    os.mkfifo(tmp_path / "web/sites/default/settings.ddev.php")
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started) and address is None and note is not None
    assert "settings.ddev.php'`: not read: it is a named pipe (FIFO)" in note


def test_a_file_parsed_against_the_deadline_still_gives_its_text_after_it() -> None:
    """tree-sitter reads a node's text through the parse's own callback: once the deadline has
    passed, the text is still there (an empty answer there never ended, and held the reading)."""
    source = b"<?php\n" + b"$a = 'x';\n" * 1_000
    deadline = time.monotonic() + 0.2
    parsed = parse_php(Path("settings.php"), source, deadline)
    time.sleep(max(0.0, deadline - time.monotonic()) + 0.1)
    text: list[str] = []
    reading = threading.Thread(target=lambda: text.append(php_text(parsed.root)), daemon=True)
    reading.start()
    reading.join(MARGIN)
    assert text == [source.decode()]


def test_a_dotenv_value_holding_300_kb_of_blanks_is_read_at_once(tmp_path: Path) -> None:
    """The `.env` pattern backtracked over a run of blanks: 300 KB of them held `check` for minutes."""
    blanks = " \t" * 150_000
    a_site(
        tmp_path,
        "<?php\n$databases['default']['default'] = ['driver' => 'mysql', 'database' => 'd', "
        "'host' => '127.0.0.1', 'username' => getenv('DB_USER'), 'password' => getenv('DB_PASS')];\n",
        **{".env": f'JUNK=x{blanks}y\nDB_USER=reader{blanks}\n  export DB_PASS = "p\\tw" # the password\n'},
    )
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started)
    assert note is None and address is not None
    assert (address.username, address.password) == ("reader", "p\tw")
    assert dotenv_values(f"JUNK=x{blanks}y\n")["JUNK"] == f"x{blanks}y"


def test_what_was_read_for_the_settings_before_them_counts_in_their_budget() -> None:
    """A `.env` file read first leaves the settings files what is left of the 1 s."""
    path = Path("/srv/web/sites/default/settings.php")
    run = run_settings(
        path, {}, {}, {}, {path: b"<?php\n$s = 'x';\n"}.get, lambda _: False, started=time.monotonic() - 2
    )
    assert run.stopped is not None and run.stopped.why.startswith(
        "reading the settings files stopped after 1 s"
    )


def test_a_ddev_config_that_is_a_fifo_is_said_where_its_port_is_needed(tmp_path: Path) -> None:
    SHAPES["DDEV, port in its config"](tmp_path, Database("mysql", "db", user="db", password="db"))
    config = tmp_path / ".ddev/config.yaml"
    config.unlink()
    os.mkfifo(config)
    started = time.monotonic()
    address, note = address_of(tmp_path)
    assert ended(started) and address is None and note is not None
    assert note.startswith(
        "the site's database is DDEV's `db` container, and .ddev/config.yaml, which would give its port, is "
        "not read: it is a named pipe (FIFO), not a regular file"
    )


def test_a_settings_file_that_includes_itself_is_named_once(tmp_path: Path) -> None:
    a_site(tmp_path, "<?php\ninclude __FILE__;\n")
    address, note = address_of(tmp_path)
    assert address is None and note is not None
    assert note.startswith(
        f"no `$databases['default']['default']` in {SETTINGS} ({SETTINGS}:2 includes `__FILE__`: more than "
        "20 files included); "
    )
