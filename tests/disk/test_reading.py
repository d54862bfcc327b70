"""The one reader of a repository's files (SPEC 6, "A repository's files are untrusted input"):
regular files inside the project, up to a size; anything else refused at once, saying why."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from ai_eval_lsp.disk.reading import FILE_LIMIT, YAML_LIMIT, Refused, Skipped, exists, read_file, read_head


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "shared").mkdir(parents=True)
    (tmp_path / "outside.txt").write_text("GITHUB_TOKEN: ghp_outside\n")
    return root


def refusal(path: Path, home: Path, limit: int = FILE_LIMIT) -> str:
    started = time.monotonic()
    with pytest.raises(Refused) as refused:
        read_file(path, home, limit)
    assert time.monotonic() - started < 5  # at once: never waits for a writer, never reads a device
    return Skipped.of(path, refused.value).why


def test_a_regular_file_and_a_link_within_the_project_are_read(project: Path) -> None:
    (project / "shared" / "tone.yml").write_text("id: tone\n")
    (project / "tone.yaml").symlink_to("shared/tone.yml")
    assert read_file(project / "tone.yaml", project) == b"id: tone\n"
    assert read_head(project / "tone.yaml", project, 3) == b"id:"


def test_a_fifo_a_device_and_a_socket_are_refused_without_waiting(project: Path) -> None:
    os.mkfifo(project / "pipe.yaml")
    assert refusal(project / "pipe.yaml", project) == (
        "not read: it is a named pipe (FIFO), not a regular file, and only regular files are read"
    )
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(project / "socket.yaml"))
        assert refusal(project / "socket.yaml", project).startswith(
            "not read: it is a socket, not a regular file"
        )
    # a device is refused as a regular file's stand-in, whether inside the project or linked
    assert refusal(Path("/dev/zero"), Path("/dev")).startswith("not read: it is a device, not a regular file")


def test_a_link_or_dots_leading_out_of_the_project_are_refused(project: Path, tmp_path: Path) -> None:
    (project / "leak.yaml").symlink_to(tmp_path / "outside.txt")
    (project / "zero.yaml").symlink_to("/dev/zero")
    outside = (
        "not read: it is outside the project (a symbolic link or `..` leads out of it), and only files inside "
        "the project are read"
    )
    (project / "gone.yaml").symlink_to(
        tmp_path / "nothing-there"
    )  # said alike: no answer tells what is there
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inner.yaml").write_text("id: x\n")
    (project / "linked").symlink_to(tmp_path / "folder")
    leading_out = ("leak.yaml", "zero.yaml", "gone.yaml", "linked/inner.yaml", "shared/../../outside.txt")
    for path in (project / name for name in leading_out):
        assert refusal(path, project) == outside
        with pytest.raises(Refused):
            read_head(path, project, 10)


def test_a_file_over_its_limit_is_refused_by_its_size_before_it_is_read(project: Path) -> None:
    big = project / "huge.cases.yaml"
    with big.open("wb") as file:
        file.truncate(YAML_LIMIT + 1024 * 1024)  # sparse: 51 MB on paper, nothing written
    assert refusal(big, project, YAML_LIMIT) == (
        "not read: it is 51 MB, over the 50 MB limit for rubric and cases files"
    )
    settings = project / "settings.php"
    settings.write_bytes(b"<?php\n" + b"$x = 1;\n" * 200_000)
    assert refusal(settings, project) == "not read: it is 1.5 MB, over the 1 MB limit for this kind of file"
    exactly = project / "exactly.json"
    exactly.write_bytes(b" " * FILE_LIMIT)
    assert len(read_file(exactly, project)) == FILE_LIMIT


def test_what_cannot_be_read_says_why_and_a_missing_file_is_not_a_refusal(project: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        read_file(project / "gone.yaml", project)
    assert Skipped.of(project / "gone.yaml", missing.value).why == "cannot be read: No such file or directory"


def test_what_php_s_file_exists_asks_never_looks_outside_the_project(project: Path, tmp_path: Path) -> None:
    (project / "leak.php").symlink_to(tmp_path / "outside.txt")
    assert exists(project / "shared", project) and not exists(project / "nothing.php", project)
    assert exists(project / "leak.php", project)  # the link is the project's, though never read
    with pytest.raises(Refused) as refused:
        exists(tmp_path / "outside.txt", project)
    assert refused.value.reason == "it is outside the project, and only the project's files are looked at"
