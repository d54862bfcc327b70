"""Where a Drupal site's database is (SPEC 3, "The site's own runs"): the setting `site.database`,
a URL as Drupal writes them, else the chosen site's `settings.php` read statically. Nothing here
connects; a password is kept for the connection and never written into a message."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from ai_eval_lsp.core.text import printable
from ai_eval_lsp.core.yamltree import parse
from ai_eval_lsp.disk import reading
from ai_eval_lsp.drupal.codebase import Codebase, site_settings
from ai_eval_lsp.drupal.phpread import PhpArray, PhpValue, Unknown
from ai_eval_lsp.drupal.secrets import hold

Driver = Literal["mysql", "pgsql", "sqlite"]
DRIVERS: tuple[Driver, ...] = ("mysql", "pgsql", "sqlite")
DEFAULT_PORTS = {"mysql": 3306, "pgsql": 5432}
TABLE = "ai_eval_result"
SETTING = "site.database"
GIVE_IT = f"give the setting `{SETTING}` (such as `mysql://USER:PASSWORD@127.0.0.1:3306/DATABASE`)"

PORTS = "a number from 1 to 65535"
_DDEV_HOST = "db"
"""The host name of DDEV's database container, known only inside DDEV's network."""


@dataclass(frozen=True, slots=True)
class SiteAddress:
    """A site database, as Drupal's `$databases['default']['default']` names it."""

    driver: Driver
    database: str
    """The database's name; for SQLite, the file's absolute path."""
    host: str = ""
    port: int | None = None
    username: str = ""
    password: str = field(default="", repr=False)
    prefix: str = ""
    origin: str = ""
    """Where it was found: "the setting `site.database`", or the settings file."""

    def __post_init__(self) -> None:
        hold(self.password, self.username, self.database, self.host)
        for what, name in (("user's name", self.username), ("database's name", self.database)):
            if "\0" in name:  # the server would take it for the end of the name, and answer garbage
                raise AddressError(f"{self.origin}: the {what} holds a NUL character, which no {what} can")

    @property
    def table(self) -> str:
        return f"{self.prefix}{TABLE}"

    @property
    def identity(self) -> str:
        """What the local store keys this site's rows by: the server, database and prefix, not
        the port (DDEV publishes a new one at each start) nor the user."""
        place = self.database if self.driver == "sqlite" else f"{self.host}/{self.database}"
        return f"{self.driver}://{place}" + (f"#{self.prefix}" if self.prefix else "")

    def __str__(self) -> str:
        """How messages name it: driver, host, port, database and user, never the password."""
        if self.driver == "sqlite":
            return printable(f"sqlite file {self.database}")
        return printable(
            f"{self.driver} database `{self.database}` on {self.host}:{self.port} as `{self.username}`"
        )


class AddressError(ValueError):
    """A site address that cannot be used; the message names no password."""


def parse_url(url: str, root: Path, origin: str = f"the setting `{SETTING}`") -> SiteAddress:
    """A database URL as Drupal writes them (`SIMPLETEST_DB`, `drush sql:connect`):
    `mysql://USER:PASSWORD@HOST[:PORT]/DATABASE#PREFIX`, `pgsql://...`, `sqlite://localhost/PATH`
    (relative to `root`; `sqlite://localhost//abs/path` absolute); percent-encoding decoded. The
    user information ends at the last `@` (an `@` in an SQLite path is written `%40`), so a
    password may hold `@`, `/`, `#` or `:` as they are. AddressError says what is wrong, never quoting the value (SPEC 6: it is untrusted
    input, and it holds the password)."""
    text = url.strip()
    scheme = _SCHEME.match(text)
    rest = text[scheme.end() :] if scheme else text
    driver = next((known for known in DRIVERS if scheme and scheme[1].lower() == known), None)
    if scheme is None or driver is None:
        _hold_userinfo(rest.rpartition("@")[0])
        raise AddressError(f"{origin} {_wrong_driver(scheme[1] if scheme else None)}")
    if driver == "sqlite":
        # Drupal ignores a user and password in an SQLite URL; they end at the last `@` here too
        userinfo, _, location = rest.rpartition("@")
        _hold_userinfo(userinfo)
        location, _, fragment = location.partition("#")
        path = _decoded(location.partition("/")[2], "the SQLite file's path", origin)
        if not path.strip("/"):
            raise AddressError(f"{origin} names no SQLite file: write sqlite://localhost/PATH")
        # `sqlite://localhost/a.sqlite` is relative, `sqlite://localhost//srv/a.sqlite` absolute
        prefix = _decoded(fragment, "the table prefix", origin)
        return SiteAddress(driver, str(root / path), prefix=prefix, origin=origin)
    userinfo, _, location = rest.rpartition("@")
    user, password = _hold_userinfo(userinfo)
    location, _, fragment = location.partition("#")
    location = location.partition("?")[0]  # Drupal's `?module=` of a contributed driver
    place, _, database = location.partition("/")
    host, port = _host_and_port(place, origin)
    if not host or not database:
        raise AddressError(
            f"{origin} must name a host and a database: {driver}://USER:PASSWORD@HOST/DATABASE"
        )
    return SiteAddress(
        driver,
        _decoded(database, "the database's name", origin),
        host,
        port or DEFAULT_PORTS[driver],
        _decoded(user, "the user's name", origin),
        _decoded(password, "the password", origin),
        _decoded(fragment, "the table prefix", origin),
        origin,
    )


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,19})://")
_OTHER_NAMES = {"postgres": "pgsql", "postgresql": "pgsql", "mariadb": "mysql", "sqlite3": "sqlite"}
_HOST = re.compile(r"[^\s\x00-\x1f\x7f/?#@\[\]:]+|\[[0-9A-Fa-f:.]+(?:%[^\s\]]+)?\]")
"""A host name (internationalised ones included), an IPv4 address or an [IPv6] one."""


def _wrong_driver(scheme: str | None) -> str:
    if scheme is None:
        return "names no driver; it must start with mysql://, pgsql:// or sqlite:// (the drivers Drupal core supports)"
    instead = _OTHER_NAMES.get(scheme.lower())
    hint = f"; write {instead}:// as Drupal does" if instead else ""
    return (
        f"names `{scheme}`; it must start with mysql://, pgsql:// or sqlite:// "
        f"(the drivers Drupal core supports){hint}"
    )


def _hold_userinfo(userinfo: str) -> tuple[str, str]:
    """The user and password as written; the password held as a secret, as written and
    decoded, before anything can go wrong."""
    user, _, password = userinfo.partition(":")
    hold(password, user)
    hold(unquote(password, errors="replace"), unquote(user, errors="replace"))
    return user, password


def _host_and_port(place: str, origin: str) -> tuple[str, int | None]:
    if place.startswith("[") and "]" not in place:
        raise AddressError(f"{origin}: the host's IPv6 address has no closing `]` (write it as [::1])")
    if place.startswith("["):
        host, _, after = place.partition("]")
        host += "]"
        if after and not after.startswith(":"):
            raise AddressError(f"{origin}: after the host's `]` comes `:PORT` or `/DATABASE`, nothing else")
        port = after[1:]
    else:
        host, _, port = place.partition(":")
        if ":" in port:
            raise AddressError(f"{origin}: an IPv6 address is written in brackets, such as [::1]")
    if host and not _HOST.fullmatch(host):
        raise AddressError(f"{origin}: the host holds a space, a control character or one of []@")
    if port and not _is_port(port):
        raise AddressError(f"{origin}: the port is not {PORTS}")
    return host.strip("[]") if host.startswith("[") else host, int(port) if port else None


def _is_port(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 5 and 1 <= int(text) <= 65535


def _decoded(text: str, what: str, origin: str) -> str:
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise AddressError(f"{origin}: {what} is percent-encoded, but not as UTF-8 text") from None


def find_address(
    root: Path,
    setting: str,
    codebase: Codebase | None,
    read_settings_files: bool,
    environment: Mapping[str, str],
) -> tuple[SiteAddress | None, str | None]:
    """The project's site database and, when there is none to use, a note saying why and which
    setting to give. `setting` is `site.database`; without it the site's `settings.php` is read,
    where `read_settings_files` allows (a trusted workspace). A project that is no Drupal
    codebase and names no database has no site: no note."""
    if setting:
        try:
            return parse_url(setting, root), None
        except AddressError as err:
            return None, str(err)
    if codebase is None:
        return None, None
    if not read_settings_files:
        return None, (
            "the site's settings.php is not read in a workspace the editor does not trust, so the site's "
            f"runs are not shown; trust the workspace, or {GIVE_IT} in your user settings"
        )
    return _from_settings(root, codebase, environment)


def _from_settings(
    root: Path, codebase: Codebase, environment: Mapping[str, str]
) -> tuple[SiteAddress | None, str | None]:
    started = time.monotonic()  # the settings' budget counts the `.env` file's reading too
    ddev = _ddev_config(root, codebase.root)
    home = root.resolve()  # what every file read must be inside of
    unread: list[str] = []
    environment = {**_dotenv(root / ".env", home, unread), **environment}
    if ddev is not None:  # read as DDEV's own commands read them on the host
        environment = {**environment, "IS_DDEV_PROJECT": "true"}
        environment.pop("DDEV_PHP_VERSION", None)

    def read(path: Path) -> bytes | None:
        try:
            return reading.read_file(path, home)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(path: Path) -> bool:
        return reading.exists(path, home)

    def shown(path: Path) -> str:
        return os.path.relpath(path, root) if path.is_relative_to(root) else str(path)

    settings_file = codebase.root / "sites" / codebase.site / "settings.php"
    run = site_settings(codebase.root, codebase.site, environment, read, exists, shown, started)
    where = shown(settings_file)
    if not run.files:
        why = run.not_followed[0] if run.not_followed else f"{where} does not exist"
        return None, f"the site's database is not known: {why}; {GIVE_IT}"

    def note(what: str) -> str:
        """Why there is no address, with what was not read or followed on the way."""
        others = [each for each in [*unread, *run.not_followed] if each not in what]
        return what + (f"; not followed: {'; '.join(others)}" if others else "") + f"; {GIVE_IT}"

    found = run.get("databases", "default", "default")
    read_from = ", ".join(shown(path) for path in dict.fromkeys(run.files))  # each once, however included
    if not isinstance(found, PhpArray):
        why = f" ({found.why})" if isinstance(found, Unknown) else ""
        return None, note(f"no `$databases['default']['default']` in {read_from}{why}")
    try:
        address = _address(found, codebase.root, where)
        if ddev is not None and address.host == _DDEV_HOST:
            address = _ddev_published(address, ddev, home)
    except AddressError as err:
        return None, note(str(err))
    return address, None


def _address(found: PhpArray, drupal_root: Path, where: str) -> SiteAddress:
    """`$databases['default']['default']` as an address; AddressError naming what is missing."""

    def field_of(name: str, default: str = "", required: bool = False) -> str:
        value = found.items.get(name.encode())
        if isinstance(value, Unknown):
            raise AddressError(f"the site's database `{name}` in {where} is not known: {value.why}")
        if value is None or value is False:
            if required:
                raise AddressError(f"the site's database in {where} has no `{name}`")
            return default
        if isinstance(value, PhpArray):
            if name == "prefix":  # Drupal 7's per-table prefixes: the default one
                return field_of_array(value, "default")
            raise AddressError(f"the site's database `{name}` in {where} is an array, not a string")
        return _string(value)

    def field_of_array(array: PhpArray, key: str) -> str:
        value = array.items.get(key.encode())
        return "" if value is None or isinstance(value, PhpArray | Unknown) else _string(value)

    driver = field_of("driver", required=True)
    if driver not in DRIVERS:
        raise AddressError(
            f"the site's database in {where} uses the driver `{printable(driver)}`; ai-eval-lsp reads mysql, pgsql "
            "and sqlite"
        )
    database = field_of("database", required=True)
    prefix = field_of("prefix")
    if driver == "sqlite":  # relative to the Drupal root, where Drupal runs
        return SiteAddress("sqlite", str(drupal_root / database), prefix=prefix, origin=where)
    port_text = field_of("port")
    if port_text and not _is_port(port_text):
        raise AddressError(f"the site's database port in {where} is `{printable(port_text)}`, not {PORTS}")
    return SiteAddress(
        driver,
        database,
        field_of("host", "localhost"),
        int(port_text) if port_text else DEFAULT_PORTS[driver],
        field_of("username"),
        field_of("password"),
        prefix,
        where,
    )


def _string(value: PhpValue) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, bool):
        return "1" if value else ""
    return str(value)


def _ddev_config(root: Path, drupal_root: Path) -> Path | None:
    """The `.ddev/config.yaml` of a DDEV project holding the codebase, between its Drupal root
    and the project root."""
    for folder in [drupal_root, *drupal_root.parents]:
        config = folder / ".ddev" / "config.yaml"
        if os.path.lexists(config):  # one not read (a FIFO) is said when its port is needed
            return config
        if folder == root or not folder.is_relative_to(root):
            break
    return None


def _ddev_published(address: SiteAddress, config: Path, home: Path) -> SiteAddress:
    """DDEV's `db` host seen from the host: 127.0.0.1 at the config's `host_db_port`."""
    try:
        document = parse(reading.read_file(config, home).decode("utf-8", "replace")).root
    except OSError as error:
        raise AddressError(
            f"the site's database is DDEV's `db` container, and .ddev/config.yaml, which would give its "
            f"port, is {reading.why_not_read(error)}"
        ) from None
    values = document.value if document is not None and isinstance(document.value, dict) else {}
    port = str(values.get("host_db_port", "")).strip()
    if not _is_port(port):
        raise AddressError(
            "the site's database is DDEV's `db` container, whose port on this machine changes at every "
            "`ddev start`; set `host_db_port` in .ddev/config.yaml (then `ddev restart`)"
        )
    return SiteAddress(
        address.driver,
        address.database,
        "127.0.0.1",
        int(port),
        address.username,
        address.password,
        address.prefix,
        address.origin,
    )


# A `.env` line is read in three steps, each a pattern no run of blanks can make backtrack (one
# pattern for the whole line took minutes over a value holding 300,000 spaces).
_DOTENV_NAME = re.compile(r"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*")
_DOTENV_QUOTED = re.compile(r""""((?:[^"\\]|\\.)*)"|'([^']*)'""")
"""A quoted value, which may span lines."""
_DOTENV_REST = re.compile(r"[ \t\r]*(?:#[^\n]*)?(?:\n|$)")
"""What may follow a quoted value on its line: blanks and a comment."""


def _dotenv(path: Path, home: Path, unread: list[str]) -> dict[str, str]:
    """A `.env` file's variables, as docker compose reads them: `NAME=value`, quoted or not,
    `export` allowed, `#` comments; no interpolation. None from a file that is not read (why is
    added to `unread`)."""
    try:
        text = reading.read_file(path, home).decode("utf-8", "replace")
    except FileNotFoundError:
        return {}
    except OSError as error:
        unread.append(f"{path.name}: {reading.why_not_read(error)}")
        return {}
    return dotenv_values(text)


def dotenv_values(text: str) -> dict[str, str]:
    """The variables a `.env` text sets, in time linear in its length."""
    found = {}
    position = 0
    while position < len(text):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        name = _DOTENV_NAME.match(text, position, end)
        if name is None:
            position = end + 1
            continue
        quoted = _DOTENV_QUOTED.match(text, name.end())
        rest = _DOTENV_REST.match(text, quoted.end()) if quoted else None
        if quoted is not None and rest is not None:
            double, single = quoted.groups()
            found[name[1]] = single if double is None else _DOTENV_ESCAPE.sub(_unescaped, double)
            position = rest.end()
            continue
        found[name[1]] = text[name.end() : end].partition("#")[0].strip()
        position = end + 1
    return found


_DOTENV_ESCAPE = re.compile(r"\\(.)")


def _unescaped(escape: re.Match[str]) -> str:
    return {"n": "\n", "t": "\t"}.get(escape[1], escape[1])
