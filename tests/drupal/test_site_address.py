"""Where the site's database is: the `site.database` URL, else the chosen site's settings.php and
what it includes, read statically (SPEC 3, "The site's own runs")."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from site_shapes import SHAPES, SITE_OF_SHAPE, Database, codebase, php, write

from ai_eval_lsp.drupal.codebase import scan, site_settings
from ai_eval_lsp.drupal.site_address import AddressError, SiteAddress, find_address, parse_url
from ai_eval_lsp.project.project import Project

AWKWARD = "p@ss:w/o%rd#1'\"\\"
"""A password with every character a URL or a PHP string must escape."""


def address_of(
    root: Path, environment: dict[str, str], site: str | None = None
) -> tuple[SiteAddress | None, str | None]:
    return find_address(root, "", scan(root, site=site), True, environment)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("driver", ["mysql", "pgsql"])
def test_every_shape_of_settings_file_gives_the_site_database(
    tmp_path: Path, shape: str, driver: str
) -> None:
    db = Database(driver, "shop_db", "127.0.0.1", 33061, "reader", AWKWARD, "drupal_")
    environment = SHAPES[shape](tmp_path, db)
    address, note = address_of(tmp_path, environment, SITE_OF_SHAPE.get(shape))
    assert note is None
    assert address is not None
    assert (
        address.driver,
        address.host,
        address.port,
        address.database,
        address.username,
        address.prefix,
    ) == (
        driver,
        "127.0.0.1",
        33061,
        "shop_db",
        "reader",
        "drupal_",
    )
    assert address.password == AWKWARD
    assert AWKWARD not in repr(address) and AWKWARD not in str(address)


def test_the_installer_s_sqlite_database_is_relative_to_the_drupal_root(tmp_path: Path) -> None:
    SHAPES["default install"](tmp_path, Database("sqlite", "sites/default/files/.ht.sqlite"))
    address, note = address_of(tmp_path, {})
    assert note is None and address is not None
    assert address.database == str(tmp_path / "web/sites/default/files/.ht.sqlite")
    assert str(address) == f"sqlite file {tmp_path / 'web/sites/default/files/.ht.sqlite'}"


def test_the_environment_wins_over_the_env_file_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    db = Database("mysql", "shop_db", "127.0.0.1", 3306, "reader", "secret")
    environment = SHAPES["docker compose"](tmp_path, db)
    address, _ = address_of(tmp_path, {**environment, "DRUPAL_DB_NAME": "from_the_shell"})
    assert address is not None and (address.database, address.port) == ("from_the_shell", 3306)
    without_host = {key: value for key, value in environment.items() if key != "DRUPAL_DB_HOST"}
    address, _ = address_of(tmp_path, without_host)
    assert address is not None and address.host == "db"  # the .env file's


def test_a_ddev_project_without_a_fixed_port_says_how_to_fix_one(tmp_path: Path) -> None:
    SHAPES["DDEV, port in its config"](tmp_path, Database("mysql", "db", user="db", password="db"))
    config = tmp_path / ".ddev/config.yaml"
    config.write_text("name: shop\ntype: drupal10\ndocroot: web\n")
    address, note = address_of(tmp_path, {})
    assert address is None
    assert note is not None and "set `host_db_port` in .ddev/config.yaml" in note and "site.database" in note


def test_a_ddev_settings_file_is_not_read_outside_a_ddev_project(tmp_path: Path) -> None:
    SHAPES["DDEV"](tmp_path, Database("mysql", "db", user="db", password="db"))
    (tmp_path / ".ddev/config.yaml").unlink()
    address, note = address_of(tmp_path, {})
    assert address is None
    assert note == (
        "no `$databases['default']['default']` in web/sites/default/settings.php; give the setting "
        "`site.database` (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )


def test_a_value_set_under_a_condition_that_cannot_be_decided_is_named_with_its_line(tmp_path: Path) -> None:
    codebase(tmp_path)
    write(
        tmp_path,
        {
            "web/sites/default/settings.php": """
                <?php
                $databases['default']['default'] = ['driver' => 'mysql', 'database' => 'shop', 'host' => 'localhost'];
                if (isset($_SERVER['PLATFORM_RELATIONSHIPS']) && function_exists('x')) {
                  $databases['default']['default']['host'] = 'database.internal';
                }
                """
        },
    )
    address, note = address_of(tmp_path, {"PLATFORM_RELATIONSHIPS": "e30="})
    assert address is None
    assert note is not None and note.startswith(
        "the site's database `host` in web/sites/default/settings.php is not known: set under the condition "
        "`isset($_SERVER['PLATFORM_RELATIONSHIPS']) && function_exists('x')` at web/sites/default/settings.php:3"
    )
    address, note = address_of(tmp_path, {})  # the condition is decided: not set, so false
    assert note is None and address is not None and address.host == "localhost"


def test_a_codebase_without_a_database_names_the_setting_to_give(tmp_path: Path) -> None:
    codebase(tmp_path)
    address, note = address_of(tmp_path, {})
    assert address is None
    assert note == (
        "the site's database is not known: web/sites/default/settings.php does not exist; give the setting "
        "`site.database` (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )


def test_an_untrusted_workspace_reads_no_settings_file_but_the_user_s_own_setting(tmp_path: Path) -> None:
    SHAPES["default install"](tmp_path, Database("mysql", "shop", user="u", password="p"))
    found = scan(tmp_path)
    address, note = find_address(tmp_path, "", found, False, {})
    assert (
        address is None and note is not None and "not read in a workspace the editor does not trust" in note
    )
    address, note = find_address(tmp_path, "pgsql://me:pw@10.1.2.3/other", found, False, {})
    assert (
        note is None
        and address is not None
        and (address.driver, address.host, address.port)
        == (
            "pgsql",
            "10.1.2.3",
            5432,
        )
    )


def test_a_project_that_is_no_drupal_codebase_has_no_site_and_no_note(tmp_path: Path) -> None:
    assert find_address(tmp_path, "", None, True, {}) == (None, None)


def test_a_project_s_own_files_cannot_name_the_database_in_an_untrusted_workspace(tmp_path: Path) -> None:
    (tmp_path / "ai-eval.toml").write_text('site.database = "mysql://u:p@evil.example/db"\n')
    trusted = Project.load(tmp_path)
    assert trusted.site is not None and trusted.site.host == "evil.example"
    from ai_eval_lsp.disk.settings import Settings

    untrusted = Project.load(tmp_path, editor=Settings(workspace_trusted=False))
    assert untrusted.site is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "mysql://reader:p%40ss%3Aw%2Fo%25rd%231@db.example.org:3307/shop%20db#drupal_",
            ("mysql", "db.example.org", 3307, "shop db", "reader", "p@ss:w/o%rd#1", "drupal_"),
        ),
        ("pgsql://reader:pw@127.0.0.1/shop", ("pgsql", "127.0.0.1", 5432, "shop", "reader", "pw", "")),
        ("mysql://root@localhost/drupal", ("mysql", "localhost", 3306, "drupal", "root", "", "")),
        (
            "sqlite://localhost/sites/default/files/.ht.sqlite",
            ("sqlite", "", None, "/srv/project/sites/default/files/.ht.sqlite", "", "", ""),
        ),
        (
            "sqlite://localhost//var/lib/drupal.sqlite#d7_",
            ("sqlite", "", None, "/var/lib/drupal.sqlite", "", "", "d7_"),
        ),
    ],
)
def test_a_database_url_is_read_as_drupal_writes_them(url: str, expected: tuple[object, ...]) -> None:
    address = parse_url(url, Path("/srv/project"))
    assert (
        address.driver,
        address.host,
        address.port,
        address.database,
        address.username,
        address.password,
        address.prefix,
    ) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "oracle://u:secret@h/db",
            "the setting `site.database` names `oracle`; it must start with mysql://, pgsql:// or sqlite:// "
            "(the drivers Drupal core supports)",
        ),
        (
            "mysql://u:secret@h:99999/db",
            "the setting `site.database`: the port is not a number from 1 to 65535",
        ),
        (
            "mysql://u:secret@h",
            "the setting `site.database` must name a host and a database: mysql://USER:PASSWORD@HOST/DATABASE",
        ),
        (
            "sqlite://localhost/",
            "the setting `site.database` names no SQLite file: write sqlite://localhost/PATH",
        ),
        (
            "mysql://u:secret@[::1/d",  # urlsplit: `ValueError: Invalid IPv6 URL`
            "the setting `site.database`: the host's IPv6 address has no closing `]` (write it as [::1])",
        ),
        (
            "mysql://u:secret@::1/d",
            "the setting `site.database`: an IPv6 address is written in brackets, such as [::1]",
        ),
        (
            "mysql://u:secret@my host/d",
            "the setting `site.database`: the host holds a space, a control character or one of []@",
        ),
        (
            "postgresql://u:secret@h/db",
            "the setting `site.database` names `postgresql`; it must start with mysql://, pgsql:// or "
            "sqlite:// (the drivers Drupal core supports); write pgsql:// as Drupal does",
        ),
        (
            "u:secret@h/db",
            "the setting `site.database` names no driver; it must start with mysql://, pgsql:// or sqlite:// "
            "(the drivers Drupal core supports)",
        ),
        (
            "mysql://u:secret%ff@h/db",
            "the setting `site.database`: the password is percent-encoded, but not as UTF-8 text",
        ),
        (
            "mysql://u:secret@h:\uff13\uff13\uff10\uff16/db",  # fullwidth 3306: `int()` would read it
            "the setting `site.database`: the port is not a number from 1 to 65535",
        ),
        (
            "mysql://u:secret@h:" + "9" * 5000 + "/db",  # `int()` refused past 4,300 digits
            "the setting `site.database`: the port is not a number from 1 to 65535",
        ),
        (  # MariaDB took the NUL for the name's end and read on into the password: "Bad handshake"
            "mysql://reader%00:secret@h/db",
            "the setting `site.database`: the user's name holds a NUL character, which no user's name can",
        ),
        (
            "pgsql://u:secret@h/d%00b",
            "the setting `site.database`: the database's name holds a NUL character, which no database's name can",
        ),
    ],
)
def test_a_wrong_url_says_what_is_wrong_and_never_the_password(url: str, message: str) -> None:
    with pytest.raises(AddressError) as refused:
        parse_url(url, Path("/srv"))
    assert str(refused.value) == message
    assert "secret" not in str(refused.value)


@pytest.mark.parametrize(
    "password",
    [
        "Kx7\uff03Secret",  # a fullwidth #: urlsplit raised `ValueError: netloc 'drupal:Kx7...`
        "p@ss/w#rd?:[x]",
        "pässwort€😀",
    ],
)
def test_a_password_may_hold_the_url_s_delimiters_and_any_unicode_as_written(password: str) -> None:
    address = parse_url(f"mysql://drupal:{password}@127.0.0.1:3306/drupal#pre_", Path("/srv"))
    assert (
        address.username,
        address.password,
        address.host,
        address.port,
        address.database,
        address.prefix,
    ) == (
        "drupal",
        password,
        "127.0.0.1",
        3306,
        "drupal",
        "pre_",
    )


def test_a_password_in_an_sqlite_url_is_ignored_as_drupal_ignores_it_and_never_shown() -> None:
    # found by the property below: the password's `/` once put half of it in the file's path
    address = parse_url("sqlite://:111111/1@localhost/site%40home.sqlite", Path("/srv"))
    assert str(address) == "sqlite file /srv/site@home.sqlite"
    assert "111111" not in repr(address)


@settings(max_examples=examples(300), deadline=None)
@given(
    scheme=st.sampled_from(["mysql://", "pgsql://", "sqlite://", "postgres://", "", "mysql:/"]),
    user=st.text(max_size=8),
    password=st.text(min_size=8, max_size=24),
    place=st.text(st.sampled_from(list("[]:@/#?% h1.")), max_size=12),
    encode=st.booleans(),
)
def test_any_url_gives_an_address_or_one_message_that_never_holds_it(
    scheme: str, user: str, password: str, place: str, encode: bool
) -> None:
    written = quote(password, safe="") if encode else password
    assume(password not in place and password not in user)  # the user and place are shown
    url = f"{scheme}{quote(user, safe='')}:{written}@{place}"
    try:
        address = parse_url(url, Path("/srv"))
    except AddressError as refused:
        message = str(refused)
        assert message.startswith("the setting `site.database`") and "\n" not in message
        assert password not in message and written not in message
    else:
        assert password not in str(address) and password not in repr(address)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("$settings['config_sync_directory'] = '../config/sync';", b"../config/sync"),
        ('$settings["config_sync_directory"] = "../config/\\x73ync";', b"../config/sync"),
        ("$settings['config_sync_directory'] = $app_root . '/../config/sync';", b"/srv/web/../config/sync"),
        (
            "$settings['config_sync_directory'] = __DIR__ . '/files/sync';",
            b"/srv/web/sites/default/files/sync",
        ),
        (
            "$settings['config_sync_directory'] = $site_path . '/files/config_' . 'abc' . '/sync';",
            b"sites/default/files/config_abc/sync",
        ),
        ("$settings['config_sync_directory'] = 'a';\n$settings['config_sync_directory'] = 'b';", b"b"),
        (
            "# $settings['config_sync_directory'] = '/elsewhere';\n$settings['config_sync_directory'] = 'c';",
            b"c",
        ),
        ("$settings['config_sync_directory'] = getenv('SYNC') ?: 'fallback';", b"fallback"),
        ("if (TRUE) { $settings['config_sync_directory'] = 'conditional'; }", b"conditional"),
        ("if (FALSE) { $x = 1; } else { $settings['config_sync_directory'] = 'else'; }", b"else"),
        ("$settings['config_sync_directory'] = 'v' . (int) '0000000000000000000000042';", b"v42"),
        ("$settings['hash_salt'] = 'x';", None),
        ("return;\n$settings['config_sync_directory'] = 'after a return';", None),
    ],
)
def test_a_settings_file_is_run_statically(source: str, expected: bytes | None) -> None:
    files = {Path("/srv/web/sites/default/settings.php"): f"<?php\n{source}\n".encode()}
    run = site_settings(Path("/srv/web"), "default", {}, files.get, lambda path: path in files)
    found = run.get("settings", "config_sync_directory")
    assert found == expected


def test_what_a_settings_file_sets_under_an_unknown_condition_or_in_a_loop_is_unknown_with_why() -> None:
    source = """<?php
$settings['a'] = 'kept';
if (function_exists('x')) { $settings['a'] = 'maybe'; } else { $settings['b'] = 'else'; }
foreach ([1, 2] as $i) { $settings['c'] = $i; }
$settings['d'] = getenv('HOME') . '/x';
"""
    files = {Path("/s/sites/default/settings.php"): source.encode()}
    run = site_settings(Path("/s"), "default", {}, files.get, lambda path: path in files)
    a, b, c, d = (run.get("settings", key) for key in "abcd")
    for value in (a, b):
        assert type(value).__name__ == "Unknown"
        assert (
            "set under the condition `function_exists('x')` at /s/sites/default/settings.php:3" in value.why
        )  # type: ignore[union-attr]
    assert type(c).__name__ == "Unknown" and "set in a loop at /s/sites/default/settings.php:4" in c.why  # type: ignore[union-attr]
    assert d == b"/x"  # getenv of a name not set is false, whose string is empty


def test_an_include_that_loops_ends(tmp_path: Path) -> None:
    settings = tmp_path / "sites/default/settings.php"
    write(
        tmp_path,
        {
            "sites/default/settings.php": f"<?php\n$settings['n'] = ($settings['n'] ?? 0) . 'x';\ninclude {php(str(settings))};\n"
        },
    )
    run = site_settings(
        tmp_path, "default", {}, lambda path: path.read_bytes() if path.is_file() else None, Path.exists
    )
    assert len(run.files) == 20
    assert run.not_followed and "more than 20 files included" in run.not_followed[0]


@pytest.mark.parametrize("port", ["0", "99999"])
def test_a_port_in_settings_php_is_a_number_from_1_to_65535_as_in_a_url(tmp_path: Path, port: str) -> None:
    codebase(tmp_path)
    write(
        tmp_path,
        {
            "web/sites/default/settings.php": "<?php\n$databases['default']['default'] = ['driver' => 'mysql', "
            f"'database' => 'd', 'host' => 'h', 'port' => {port}];\n"
        },
    )
    address, note = address_of(tmp_path, {})
    assert address is None
    assert note == (
        f"the site's database port in web/sites/default/settings.php is `{port}`, not a number from 1 to "
        "65535; give the setting `site.database` (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"
    )


def test_a_name_holding_control_characters_is_shown_escaped() -> None:
    address = parse_url("mysql://u%1b%5B31m:secret@h/d%07b%0a", Path("/srv"))
    assert (address.username, address.database) == ("u\x1b[31m", "d\x07b\n")
    assert str(address) == "mysql database `d\\x07b\\n` on h:3306 as `u\\x1b[31m`"
