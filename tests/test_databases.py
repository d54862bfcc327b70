"""The database servers the tests start (tests/databases.py): real MariaDB and PostgreSQL on
127.0.0.1 alone, with a site's users, Drupal's URLs, the server's own count of the connections made
to it, and a stop and start that keep everything."""

from __future__ import annotations

import secrets
import shutil
import socket
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pg8000.dbapi
import pymysql
import pytest
from databases import DatabaseServer, MariaDB, PostgreSQL
from processes import alive, ends_alone, orphan

CLIENT_ERRORS = (pymysql.err.Error, pg8000.dbapi.Error)


@pytest.fixture(params=["mariadb", "postgres"])
def server(request: pytest.FixtureRequest) -> DatabaseServer:
    """Each of the session's servers in turn."""
    found: DatabaseServer = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def site(server: DatabaseServer) -> Iterator[str]:
    """A site's database of the server's, with one result row; dropped afterwards."""
    name = f"site_{secrets.token_hex(4)}"
    server.create_database(name)
    server.execute(name, "CREATE TABLE ai_eval_result (id INTEGER PRIMARY KEY, target_id VARCHAR(64))")
    server.execute(name, "INSERT INTO ai_eval_result VALUES (%s, %s)", (1, "support_bot"))
    yield name
    server.drop_database(name)


def user(server: DatabaseServer, site: str, read_only: bool = True) -> tuple[str, str]:
    """A new user of the site's database, and their password."""
    name, password = f"user_{secrets.token_hex(4)}", secrets.token_urlsafe(12)
    server.create_user(name, password, site, read_only=read_only)
    return name, password


def rows(connection: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor = connection.cursor()
    cursor.execute(sql)
    return [tuple(row) for row in cursor.fetchall()]


def test_a_read_only_user_reads_the_site_but_cannot_change_it(server: DatabaseServer, site: str) -> None:
    reader, password = user(server, site)
    server.execute(site, "CREATE TABLE later (id INTEGER)")  # created after the grant, read all the same
    with closing(server.connect(reader, password, site)) as connection:
        assert rows(connection, "SELECT id, target_id FROM ai_eval_result") == [(1, "support_bot")]
        assert rows(connection, "SELECT id FROM later") == []
        for change in (
            "INSERT INTO ai_eval_result VALUES (2, 'support_bot')",
            "UPDATE ai_eval_result SET target_id = 'other'",
            "DELETE FROM ai_eval_result",
            "CREATE TABLE mine (id INTEGER)",
        ):
            with pytest.raises(CLIENT_ERRORS, match="denied"):
                connection.cursor().execute(change)
    assert server.query(site, "SELECT id, target_id FROM ai_eval_result") == [(1, "support_bot")]


def test_a_writer_changes_the_site(server: DatabaseServer, site: str) -> None:
    writer, password = user(server, site, read_only=False)
    with closing(server.connect(writer, password, site)) as connection:
        connection.cursor().execute("INSERT INTO ai_eval_result VALUES (2, 'other_bot')")
    assert server.query(site, "SELECT id FROM ai_eval_result ORDER BY id") == [(1,), (2,)]


def test_the_url_carries_a_user_and_password_of_any_characters(server: DatabaseServer, site: str) -> None:
    name, password = f"site@reader:{secrets.token_hex(2)}", "p@ss:w/rd%41#1 x"
    server.create_user(name, password, site)
    url = server.url(name, password, site, prefix="drupal_")
    assert url.count("@") == url.count("#") == 1
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname, parts.port) == (server.driver, "127.0.0.1", server.port)
    assert parts.fragment == "drupal_"
    assert parts.username is not None and parts.password is not None
    given = unquote(parts.username), unquote(parts.password), unquote(parts.path.removeprefix("/"))
    assert given == (name, password, site)
    with closing(server.connect(*given)) as connection:
        assert rows(connection, "SELECT target_id FROM ai_eval_result") == [("support_bot",)]
    assert "#" not in server.url(name, password, site)


def test_connections_counts_every_attempt_of_other_clients(server: DatabaseServer, site: str) -> None:
    before = server.connections()
    reader, password = user(server, site)
    server.query(site, "SELECT 1")
    assert server.connections() == before, "the helper's own connections were counted"
    with pytest.raises(CLIENT_ERRORS):
        server.connect(reader, "wrong password", site)
    assert server.connections() == before + 1
    with pytest.raises(CLIENT_ERRORS):
        server.connect("nobody", password, site)
    assert server.connections() == before + 2
    server.connect(reader, password, site).close()
    assert server.connections() == before + 3


def listening(pid: int) -> tuple[set[tuple[str, int]], set[str]]:
    """The TCP addresses and the unix socket paths a process listens on, as the kernel has them."""
    sockets = set()
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = descriptor.readlink().name
        except FileNotFoundError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            sockets.add(target.removeprefix("socket:[").removesuffix("]"))
    addresses = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            address, port = fields[1].split(":")
            if fields[3] == "0A" and fields[9] in sockets:  # 0A: LISTEN
                # The kernel writes each 32-bit word of the address in its own (little-endian) order.
                packed = b"".join(bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8))
                addresses.add((socket.inet_ntop(family, packed), int(port, 16)))
    paths = set()
    for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[3], 16) & 0x10000 and fields[6] in sockets and len(fields) > 7:  # __SO_ACCEPTCON
            paths.add(fields[7])
    return addresses, paths


def test_the_server_listens_on_127_0_0_1_alone(server: DatabaseServer) -> None:
    assert server.pid is not None
    addresses, paths = listening(server.pid)
    assert addresses == {("127.0.0.1", server.port)}
    assert all(Path(path).is_relative_to(server.folder) for path in paths), paths


def test_a_stopped_server_refuses_clients_and_comes_back_with_its_data(
    server: DatabaseServer, site: str
) -> None:
    reader, password = user(server, site)
    before, port, pid = server.connections(), server.port, server.pid
    server.stop()
    try:
        assert not alive(pid)
        with pytest.raises(CLIENT_ERRORS):
            server.connect(reader, password, site)
        assert server.connections() == before
    finally:
        server.start()
    assert server.port == port
    with closing(server.connect(reader, password, site)) as connection:
        assert rows(connection, "SELECT id, target_id FROM ai_eval_result") == [(1, "support_bot")]
    assert server.connections() == before + 1, "the refused attempt never reached the server; the next did"


START_AND_WAIT = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from databases import {kind}
server = {kind}(Path({folder!r}))
Path({folder!r}, "home").write_text(str(server.home))
server.start()
Path(os.environ["AI_EVAL_TEST_PID_FILE"]).write_text(str(server.pid))
time.sleep(300)
"""


@pytest.mark.parametrize("kind", [MariaDB, PostgreSQL], ids=["mariadb", "postgres"])
def test_a_server_stops_when_the_process_that_started_it_is_killed(
    kind: type[DatabaseServer], tmp_path: Path
) -> None:
    script = START_AND_WAIT.format(tests=str(Path(__file__).parent), kind=kind.__name__, folder=str(tmp_path))
    try:
        pid = orphan(script, tmp_path / "pid")
        assert ends_alone(pid, 60)
    finally:
        home = Path((tmp_path / "home").read_text())
        if not home.is_relative_to(tmp_path):
            shutil.rmtree(home)
