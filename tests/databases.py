"""Real database servers for the tests: Debian's MariaDB and PostgreSQL (scripts/setup installs
them), each in a temporary folder, listening on 127.0.0.1 alone, with password logins. The
session fixtures `mariadb` and `postgres` (tests/conftest.py registers this module) start one of
each when a test first asks for it and stop it when the session ends, whatever the tests did."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import quote

import pg8000.dbapi
import pymysql
import pytest

HOST = "127.0.0.1"
READY_SECONDS = 60
STOP_SECONDS = 60

STARTED: list[DatabaseServer] = []
"""Every server this session started, for the summary's start-up times."""


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now (another process may take it before the
    server does: start() then tries another)."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


class ServerFailed(RuntimeError):
    """A server, or the command creating its data, ended or never became ready; the message ends
    with what it logged."""


class DatabaseServer(ABC):
    """A server process over a data folder that outlives it: after stop(), start() brings it back
    on the same port with its databases and users. The helper's own admin connections are left
    out of connections()."""

    driver: str
    """The scheme of its Drupal URL (`mysql`, `pgsql`)."""
    name: str
    stop_signal: signal.Signals
    """The signal that shuts the server down cleanly."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.home = folder
        """The folder the server's user owns: its data, and its readiness socket."""
        self.host = HOST
        self.port = free_port()
        self.admin_password = secrets.token_urlsafe(16)
        self.log = folder / "server.log"
        """What the server and the commands creating its data print, across restarts."""
        self.start_seconds: list[float] = []
        """How long each start took until the server was ready; the first includes creating its data."""
        self._process: subprocess.Popen[bytes] | None = None
        self._initialized = False

    @property
    def pid(self) -> int | None:
        """The server's process while it runs."""
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    def url(self, user: str, password: str, database: str, prefix: str = "") -> str:
        """The server's address as Drupal writes it, `DRIVER://USER:PASSWORD@HOST:PORT/DATABASE`
        and `#PREFIX` when there is one; user, password and database percent-encoded."""
        address = (
            f"{self.driver}://{quote(user, safe='')}:{quote(password, safe='')}"
            f"@{self.host}:{self.port}/{quote(database, safe='')}"
        )
        return f"{address}#{prefix}" if prefix else address

    @abstractmethod
    def create_database(self, name: str) -> None: ...

    @abstractmethod
    def drop_database(self, name: str) -> None:
        """Drops a database if it exists (cutting off any client still in it)."""

    @abstractmethod
    def create_user(self, name: str, password: str, database: str, read_only: bool = True) -> None:
        """A user who logs in from 127.0.0.1 with `password` and may only read `database` (read_only:
        SELECT on its tables, those the admin creates later included), or do anything in it."""

    @abstractmethod
    def connect(self, user: str, password: str, database: str) -> Any:
        """A DB-API connection as `user`, autocommitting: a client like any other, which counts in
        connections()."""

    def execute(self, database: str, sql: str, params: Sequence[Any] = ()) -> None:
        """Runs a statement in `database` as the admin; `%s` marks each parameter (with none, `%` is
        itself)."""
        self.query(database, sql, params)

    @abstractmethod
    def query(self, database: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows a statement gives in `database`, run as the admin ([] for one that gives none)."""

    @abstractmethod
    def connections(self) -> int:
        """How many times clients other than this helper have connected or tried to (refused logins
        included) since the server first started, as the server itself counts them."""

    # What each server does its own way to create its data, start and stop.

    @abstractmethod
    def _initialize(self) -> None:
        """Creates the data folder, with the admin and its password (once, before the first start)."""

    @abstractmethod
    def _command(self) -> list[str]: ...

    @abstractmethod
    def _close_admin(self) -> None:
        """Closes the helper's connections before the server stops."""

    def _run_as(self) -> dict[str, Any]:
        """subprocess's arguments that run a command as the server's user (none: this process's)."""
        return {}

    # Starting and stopping, the same for both.

    def start(self) -> None:
        """Starts the server, the first time creating its data and, if the port found free was
        taken meanwhile, on another one; returns once the server accepts connections."""
        assert self.pid is None, f"{self.name} is already running"
        began = time.monotonic()
        if not self._initialized:
            self._initialize()
            self._initialized = True
        for attempt in range(3):
            try:
                self._launch()
                break
            except ServerFailed as failure:
                # A restart keeps its port: a test restarts a server to find it where it was.
                if attempt == 2 or self.start_seconds or "Address already in use" not in str(failure):
                    raise
                self.port = free_port()
        self.start_seconds.append(time.monotonic() - began)
        if self not in STARTED:
            STARTED.append(self)

    def _launch(self) -> None:
        """Starts the process and waits until it says it is ready (sd_notify's READY=1, which both
        servers send once they accept connections: no polling, no connection of ours) or ends."""
        notify_path = self.home / "notify"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify, self.log.open("ab") as log:
            notify_path.unlink(missing_ok=True)
            notify.bind(str(notify_path))
            os.chmod(notify_path, 0o777)  # for the server's user (postgres, as root)
            notify.settimeout(0.05)
            logged = log.tell()
            self._process = self._spawn(log, NOTIFY_SOCKET=str(notify_path))
            deadline = time.monotonic() + READY_SECONDS
            try:
                while True:
                    if self._process.poll() is not None:
                        raise ServerFailed(
                            f"{self.name} ended ({self._process.returncode}) {self._logged(logged)}"
                        )
                    if time.monotonic() > deadline:
                        raise ServerFailed(
                            f"{self.name} was not ready in {READY_SECONDS} s {self._logged(logged)}"
                        )
                    try:
                        if "READY=1" in notify.recv(4096).decode(errors="replace").splitlines():
                            return
                    except TimeoutError:
                        pass
            except BaseException:
                self._kill()
                raise
            finally:
                # The server's later notices (STOPPING=1) then fail at once, rather than queue up.
                notify_path.unlink(missing_ok=True)

    def _spawn(self, log: IO[bytes], **environment: str) -> subprocess.Popen[bytes]:
        """Starts the server as its user, its output in `log`, in a session of its own (Ctrl-C
        reaches pytest alone, which then stops the server in order)."""
        # The kernel stops the server if pytest dies without cleaning up (SIGKILL, a CI timeout).
        # It does when the thread that started the server ends: the main thread lives as long as
        # the process, any other might not, so a server another thread starts goes without.
        guard = ["setpriv", f"--pdeathsig={self.stop_signal.name}", "--"]
        if threading.current_thread() is not threading.main_thread():
            guard = []
        return subprocess.Popen(
            [*guard, *self._command()],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**self._environment(), **environment},
            cwd=self.home,
            start_new_session=True,
            **self._run_as(),
        )

    def _run(self, command: list[str]) -> None:
        """Runs a command that creates the data, as the server's user, its output in the log."""
        with self.log.open("ab") as log:
            logged = log.tell()
            ran = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                cwd=self.home,
                check=False,
                **self._run_as(),
            )
        if ran.returncode != 0:
            raise ServerFailed(f"{Path(command[0]).name} failed ({ran.returncode}) {self._logged(logged)}")

    def _environment(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC"}

    def _logged(self, offset: int) -> str:
        """What the log holds from `offset` on (its last lines)."""
        with self.log.open("rb") as log:
            log.seek(offset)
            return f"({self.log}):\n{log.read()[-4000:].decode(errors='replace')}"

    def stop(self) -> None:
        """Shuts the server down cleanly (killing it if it has not ended within a minute)."""
        if self._process is None:
            return
        self._close_admin()
        self._process.send_signal(self.stop_signal)
        try:
            self._process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._kill()
        self._process = None

    def _kill(self) -> None:
        assert self._process is not None
        self._process.kill()
        self._process.wait()

    def close(self) -> None:
        """Stops the server for good, and removes its home if that is not in `folder`."""
        try:
            self.stop()
        finally:
            if self.home != self.folder:
                shutil.rmtree(self.home)


class MariaDB(DatabaseServer):
    """Debian's MariaDB; the admin is root@127.0.0.1."""

    driver = "mysql"
    name = "MariaDB"
    stop_signal = signal.SIGTERM

    # Tuned for tests: nothing waits for the disk, InnoDB's buffers are small, its I/O its own (a
    # container may forbid io_uring), no host name is ever looked up, and utf8mb4 as for Drupal.
    SETTINGS = (
        "--skip-name-resolve",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
        "--innodb-buffer-pool-size=32M",
        "--innodb-log-file-size=16M",
        "--innodb-flush-log-at-trx-commit=0",
        "--innodb-doublewrite=0",
        "--innodb-use-native-aio=0",
    )

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.data = self.home / "data"
        self._admin: pymysql.connections.Connection[Any] | None = None
        self._own_connections = 0
        """The helper's connections since the server last started."""
        self._earlier_connections = 0
        """Other clients' connections before the server last started (its counter starts again)."""
        self._startup_threads = 0
        """What the server counts as connections before it is ready: its own start-up work."""

    def _user_option(self) -> list[str]:
        # mariadbd runs as root only when told to; as anyone else, as that user.
        return ["--user=root"] if os.geteuid() == 0 else []

    def _initialize(self) -> None:
        # mariadb-install-db's own root is root@localhost through the unix socket, and it makes no
        # anonymous user: root@127.0.0.1 with a password is the one account that logs in over TCP.
        # The bootstrap runs without the grant tables loaded (CREATE USER is refused), so the
        # account is written as mariadb-install-db writes its own.
        admin_sql = self.folder / "admin.sql"
        admin_sql.write_text(
            "INSERT INTO mysql.global_priv (Host, User, Priv) VALUES"
            f" ('{HOST}', 'root', JSON_OBJECT('access', 18446744073709551615,"
            f" 'plugin', 'mysql_native_password', 'authentication_string', PASSWORD('{self.admin_password}')));\n"
        )
        try:
            self._run(
                [
                    "mariadb-install-db",
                    "--no-defaults",
                    f"--datadir={self.data}",
                    "--skip-test-db",
                    f"--extra-file={admin_sql}",
                    *self._user_option(),
                    *self.SETTINGS,
                ]
            )
        finally:
            admin_sql.unlink()

    def _command(self) -> list[str]:
        return [
            "/usr/sbin/mariadbd",
            "--no-defaults",
            f"--datadir={self.data}",
            f"--bind-address={HOST}",
            f"--port={self.port}",
            # It always has a unix socket as well: in its folder, not the system's.
            f"--socket={self.folder / 'mariadb.sock'}",
            f"--pid-file={self.folder / 'mariadb.pid'}",
            f"--tmpdir={self.folder}",
            # Each refused login is a connection error from 127.0.0.1: after max_connect_errors
            # (100) of them, MariaDB would refuse the host altogether.
            "--max-connect-errors=1000000000",
            *self._user_option(),
            *self.SETTINGS,
        ]

    def start(self) -> None:
        super().start()
        if len(self.start_seconds) == 1:
            # No other client knows the port yet. The start-up work counted is the same at every
            # start of the same server.
            self._startup_threads = self._counted_connections() - self._own_connections

    def _connection(self) -> pymysql.connections.Connection[Any]:
        if self._admin is None or not self._admin.open:
            self._admin = pymysql.connect(
                host=HOST,
                port=self.port,
                user="root",
                password=self.admin_password,
                autocommit=True,
                connect_timeout=10,
            )
            self._own_connections += 1
        return self._admin

    def _close_admin(self) -> None:
        if self.pid is not None:
            self._earlier_connections = self.connections()
        if self._admin is not None and self._admin.open:
            self._admin.close()
        self._admin = None
        self._own_connections = 0

    def _admin_query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._connection().cursor() as cursor:
            cursor.execute(sql, tuple(params) or None)  # None: `%` is itself
            return list(cursor.fetchall())

    def create_database(self, name: str) -> None:
        self._admin_query(f"CREATE DATABASE {mysql_identifier(name)}")

    def drop_database(self, name: str) -> None:
        self._admin_query(f"DROP DATABASE IF EXISTS {mysql_identifier(name)}")

    def create_user(self, name: str, password: str, database: str, read_only: bool = True) -> None:
        self._admin_query("CREATE USER %s@'%%' IDENTIFIED BY %s", (name, password))
        privileges = "SELECT" if read_only else "ALL PRIVILEGES"
        self._admin_query(f"GRANT {privileges} ON {mysql_identifier(database)}.* TO %s@'%%'", (name,))

    def connect(self, user: str, password: str, database: str) -> pymysql.connections.Connection[Any]:
        return pymysql.connect(
            host=HOST, port=self.port, user=user, password=password, database=database, autocommit=True
        )

    def query(self, database: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._connection().select_db(database)
        return self._admin_query(sql, params)

    def connections(self) -> int:
        if self.pid is None:
            return self._earlier_connections
        counted = self._counted_connections() - self._startup_threads - self._own_connections
        return self._earlier_connections + counted

    def _counted_connections(self) -> int:
        # Every connection attempt, refused ones too (a thread id each, as are its own start-up
        # threads).
        ((_, counted),) = self._admin_query("SHOW GLOBAL STATUS LIKE 'Connections'")
        return int(counted)


def mysql_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class PostgreSQL(DatabaseServer):
    """Debian's PostgreSQL (its newest version there); the admin is `postgres`.

    PostgreSQL refuses to run as root. As root, it runs as the `postgres` system user, with its
    data in a folder of that user's in the system's temporary folder (pytest's are root's alone),
    which close() removes; its log is in `folder` all the same."""

    driver = "pgsql"
    name = "PostgreSQL"
    stop_signal = signal.SIGINT  # a fast shutdown: clients are cut off, the data is written

    # With log_connections, the line a backend writes as it accepts a connection, before the
    # login; the prefix is log_line_prefix's default ('%m [%p] ').
    CONNECTION_RECEIVED = re.compile(
        rb"^\S+ \S+ \S+ \[\d+\] LOG:  connection received: host=\S+ port=\d+$", re.M
    )

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        versions = sorted(
            Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda path: int(path.parts[-3])
        )
        assert versions, "PostgreSQL is missing: run scripts/setup (Debian's postgresql)"
        self.bin = versions[-1].parent
        import pwd  # Unix's: this module is imported on Windows too, where the reading tests run

        self._user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        if self._user is not None:
            self.home = Path(tempfile.mkdtemp(prefix="ai-eval-lsp-postgres-"))
            os.chown(self.home, self._user.pw_uid, self._user.pw_gid)
        self.data = self.home / "data"
        self._admin: dict[str, pg8000.dbapi.Connection] = {}
        self._own_connections = 0
        """The helper's connections since the server first started (the log counts all of them)."""

    def _run_as(self) -> dict[str, Any]:
        if self._user is None:
            return {}
        return {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}

    def _initialize(self) -> None:
        password_file = self.home / "password"
        password_file.write_text(self.admin_password + "\n")
        if self._user is not None:
            os.chown(password_file, self._user.pw_uid, self._user.pw_gid)
        try:
            self._run(
                [
                    str(self.bin / "initdb"),
                    f"--pgdata={self.data}",
                    "--username=postgres",
                    f"--pwfile={password_file}",
                    "--auth=scram-sha-256",
                    "--encoding=UTF8",
                    "--no-locale",
                    "--no-sync",
                    "--no-instructions",
                ]
            )
        finally:
            password_file.unlink()

    def _command(self) -> list[str]:
        settings = {
            "listen_addresses": HOST,
            "port": str(self.port),
            "unix_socket_directories": "",  # none at all
            "log_connections": "on",
            # Tuned for tests: nothing waits for the disk.
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }
        return [
            str(self.bin / "postgres"),
            "-D",
            str(self.data),
            *(f"-c{key}={value}" for key, value in settings.items()),
        ]

    def _connection(self, database: str) -> pg8000.dbapi.Connection:
        if database not in self._admin:
            connection = pg8000.dbapi.connect(
                user="postgres",
                password=self.admin_password,
                host=HOST,
                port=self.port,
                database=database,
                timeout=10,
            )
            self._own_connections += 1
            connection.autocommit = True
            self._admin[database] = connection
        return self._admin[database]

    def _close_admin(self) -> None:
        for connection in self._admin.values():
            with suppress(pg8000.dbapi.InterfaceError, OSError):  # the server may have ended already
                connection.close()
        self._admin.clear()

    def create_database(self, name: str) -> None:
        self.execute("postgres", f"CREATE DATABASE {postgres_identifier(name)}")

    def drop_database(self, name: str) -> None:
        connection = self._admin.pop(name, None)
        if connection is not None:
            connection.close()
        self.execute("postgres", f"DROP DATABASE IF EXISTS {postgres_identifier(name)} WITH (FORCE)")

    def create_user(self, name: str, password: str, database: str, read_only: bool = True) -> None:
        role = postgres_identifier(name)
        self.execute("postgres", f"CREATE ROLE {role} LOGIN PASSWORD {postgres_literal(password)}")
        if read_only:
            grants = [
                f"GRANT USAGE ON SCHEMA public TO {role}",
                f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {role}",
            ]
        else:
            grants = [
                f"GRANT ALL ON DATABASE {postgres_identifier(database)} TO {role}",
                f"GRANT ALL ON SCHEMA public TO {role}",
                f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}",
                f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role}",
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO {role}",
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO {role}",
            ]
        for grant in grants:
            self.execute(database, grant)

    def connect(self, user: str, password: str, database: str) -> pg8000.dbapi.Connection:
        connection = pg8000.dbapi.connect(
            user=user, password=password, host=HOST, port=self.port, database=database, timeout=10
        )
        connection.autocommit = True
        return connection

    def query(self, database: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self._connection(database).cursor()
        try:
            cursor.execute(sql, tuple(params))  # with none, `%` is itself
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        finally:
            cursor.close()

    def connections(self) -> int:
        # A client's attempt has ended, refused or not, after its line was written.
        received = len(self.CONNECTION_RECEIVED.findall(self.log.read_bytes()))
        return received - self._own_connections


def postgres_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def postgres_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


Server = TypeVar("Server", bound=DatabaseServer)


def serving(server: Server) -> Iterator[Server]:
    """Starts `server`, yields it, and stops it for good whatever happened meanwhile."""
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDB]:
    """The session's MariaDB server."""
    yield from serving(MariaDB(tmp_path_factory.mktemp("mariadb")))


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgreSQL]:
    """The session's PostgreSQL server."""
    yield from serving(PostgreSQL(tmp_path_factory.mktemp("postgres")))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How long each database server took to start, in every run that started one."""
    for server in STARTED:
        times = ", then ".join(f"{seconds:.2f} s" for seconds in server.start_seconds)
        terminalreporter.write_line(f"{server.name} on {server.host}:{server.port} started in {times}")
