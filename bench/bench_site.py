"""The site's own runs (SPEC 3) from a site with years of them: a real MariaDB and PostgreSQL
server (tests/databases.py) holding 100,000 `ai_eval_result` rows of 20 questions each, and a
site of big runs: 3,000 rows of 400 questions (~25 MB of `scores_json`, more than MariaDB sends at
once by default).

- first read: the site's every row read, converted and stored in an empty results database
  (goal <= 2 s; the big runs: <= 10 s), in process, as `site pull` and the server's first read do;
- a poll with nothing new: the read every `site.pollSeconds` brings once nothing came (goal <= 5 ms
  of server time), in process, wall and CPU time each;
- memory over 1,000 polls: the real server (`ai-eval-lsp serve` over stdio) polling the site
  every 10 ms with a rubric of the project open, its resident memory after its first read and
  after 1,000 polls (counted by the database server itself), and its CPU time per poll.

With `--before COMMIT`, the first read of the 100,000 rows also by that commit's code and this
checkout's, in turn, each in a fresh process (`--rounds` each): this machine's speed drifts by a
quarter within an hour, so versions are compared side by side (fc9d83b: before rows were checked).

Run: .venv/bin/python bench/bench_site.py [--rows 100000] [--polls 1000] [--big-rows 3000]
[--driver mysql pgsql] [--before fc9d83b [--rounds 6]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent / "tests")]

from databases import DatabaseServer, MariaDB, PostgreSQL  # noqa: E402
from lsp_stdio import StdioClient  # noqa: E402
from site_db import RUBRIC, ServerSite, SiteRow  # noqa: E402
from versions import builds, environment  # noqa: E402

from ai_eval_lsp.drupal.site_address import parse_url  # noqa: E402
from ai_eval_lsp.runs.site import SiteReader, pull  # noqa: E402
from ai_eval_lsp.runs.store import ResultStore  # noqa: E402

PASSWORD = "Pa55-w0rd:@/%#x"
"""As a site's password often is, with punctuation: it has two dozen forms to keep out of what is
stored (`drupal.secrets`), where a password of letters has one."""
QUESTIONS = 20
BIG_QUESTIONS = 400


def fill(site: ServerSite, rows: int, questions: int = QUESTIONS) -> None:
    """`rows` runs of three targets, both of seed 003's paths, inserted in batches."""
    batch: list[SiteRow] = []
    for number in range(rows):
        scores = {f"q{q}": float((number * 7 + q) % 6) for q in range(questions)}
        batch.append(
            SiteRow(
                f"target_{number % 3}",
                scores,
                timestamp=1_700_000_000 + 60 * number,
                run_id=number if number % 2 else None,
                duration=float(number % 97) + 0.25,
            )
        )
        if len(batch) == 2000:
            site.insert_many(batch)
            batch = []
    if batch:
        site.insert_many(batch)
    # statistics, as a live site's table has them (autovacuum, InnoDB's own sampling)
    table = f"{site.prefix}ai_eval_result"
    site.execute(f"ANALYZE TABLE {table}" if site.server.driver == "mysql" else f"ANALYZE {table}")


def timed(work: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, what `work` returned)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def rss_mb(pid: int | None = None) -> float:
    pages = int(Path(f"/proc/{pid or 'self'}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def selects(server: DatabaseServer, site: ServerSite) -> int:
    """How many SELECTs of the site's table the database server has run: polls, as it counts them."""
    if server.driver == "mysql":
        return int(server.query(site.name, "SHOW GLOBAL STATUS LIKE 'Com_select'")[0][1])
    found = server.query(
        site.name,
        "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = %s",
        [f"{site.prefix}ai_eval_result"],
    )
    return int(found[0][0])


def first_reads(site: ServerSite, folder: Path) -> list[tuple[float, float, int]]:
    """Three first reads into an empty results database each: wall and CPU seconds, rows stored."""
    address = parse_url(site.url, folder)
    firsts = []
    for attempt in range(3):
        store = ResultStore(folder / f"{site.name}-first-{attempt}.sqlite")
        reader = SiteReader(address)
        wall, cpu, pulled = timed(lambda store=store, reader=reader: pull(store, reader))
        reader.close()
        assert not pulled.skipped, pulled.skipped
        firsts.append((wall, cpu, len(pulled.stored)))
    return firsts


def in_process(site: ServerSite, polls: int, folder: Path) -> dict[str, Any]:
    address = parse_url(site.url, folder)
    firsts = first_reads(site, folder)
    reader = SiteReader(address)
    store = ResultStore(folder / f"{site.name}-first-0.sqlite")
    cursor = pull(store, reader).last_id  # connected, and nothing new after this
    walls, cpus = [], []
    before = rss_mb()
    for _ in range(polls):
        wall, cpu, pulled = timed(lambda: pull(store, reader, cursor))
        assert not pulled.rows
        walls.append(wall)
        cpus.append(cpu)
    after = rss_mb()
    reader.close()
    return {"first": firsts, "walls": walls, "cpus": cpus, "rss": (before, after)}


def through_the_server(server: DatabaseServer, site: ServerSite, polls: int, folder: Path) -> dict[str, Any]:
    project = folder / "project"
    project.mkdir()
    (project / "ai-eval.toml").write_text(f'site.database = "{site.url}"\nsite.pollSeconds = 0.01\n')
    (project / "refund.rubric.yaml").write_text(RUBRIC)
    client = StdioClient(
        [sys.executable, "-m", "ai_eval_lsp", "serve"], lambda method, params: [{}], timing=True
    )
    try:
        began = time.perf_counter()
        client.initialize(project, {"experimental": {"aiEval": {"runComplete": True}}})
        client.wait(
            lambda m: (
                m.get("method") == "window/logMessage" and "site runs read from" in m["params"]["message"]
            ),
            120,
        )
        first = time.perf_counter() - began
        pid = client.process.pid
        client.open(project / "refund.rubric.yaml", RUBRIC)
        time.sleep(1.0)  # the polls begin, and settle
        start_rss, start_cpu, start_selects = rss_mb(pid), cpu_seconds(pid), selects(server, site)
        samples = [start_rss]
        while selects(server, site) - start_selects < polls:
            time.sleep(0.5)
            samples.append(rss_mb(pid))
        done_selects = selects(server, site) - start_selects
        cpu = cpu_seconds(pid) - start_cpu
        return {"first": first, "rss": samples, "cpu_per_poll": cpu / done_selects, "polls": done_selects}
    finally:
        client.close()


def print_firsts(firsts: list[tuple[float, float, int]], goal: float) -> None:
    for wall, cpu, read in firsts:
        print(
            f"  first read, in process: {wall:.2f} s wall, {cpu:.2f} s CPU, {read:,} rows stored (goal <= {goal:g} s)"
        )


def report(driver: str, rows: int, measured: dict[str, Any], served: dict[str, Any]) -> None:
    print(f"\n{driver}: {rows:,} rows of {QUESTIONS} questions")
    print_firsts(measured["first"], 2)
    walls, cpus = sorted(measured["walls"]), sorted(measured["cpus"])
    p95 = int(len(walls) * 0.95)
    print(
        f"  a poll with nothing new, in process, {len(walls)} polls: wall median {1000 * statistics.median(walls):.2f} ms, "
        f"p95 {1000 * walls[p95]:.2f} ms; CPU median {1000 * statistics.median(cpus):.2f} ms, p95 {1000 * cpus[p95]:.2f} ms "
        f"(goal <= 5 ms); RSS {measured['rss'][0]:.1f} -> {measured['rss'][1]:.1f} MB"
    )
    rss = served["rss"]
    print(
        f"  the server: first read done {served['first']:.2f} s after initialize; over {served['polls']:,} polls "
        f"(every 10 ms) its RSS {rss[0]:.1f} -> {rss[-1]:.1f} MB (max {max(rss):.1f}), CPU {1000 * served['cpu_per_poll']:.2f} ms a poll"
    )


def read_once(url: str) -> None:
    """One first read of the site at `url` into an empty results database, by the code this
    process runs: its wall and CPU seconds and the rows stored, as JSON (for `side_by_side`)."""
    with tempfile.TemporaryDirectory(prefix="bench-site-read-") as scratch:
        store, reader = (
            ResultStore(Path(scratch) / "results.sqlite"),
            SiteReader(parse_url(url, Path(scratch))),
        )
        wall, cpu, pulled = timed(lambda: pull(store, reader))
        reader.close()
    print(json.dumps([wall, cpu, len(pulled.stored)]))


def side_by_side(site: ServerSite, rows: int, before: str, rounds: int, scratch: Path) -> None:
    """The first read by `before`'s code and by this checkout's, in turn, each in a fresh process."""
    sources = builds(before, scratch / "builds")
    walls: dict[str, list[float]] = {label: [] for label in sources}
    for _ in range(rounds):
        for label, source in sources.items():
            done = subprocess.run(
                [sys.executable, __file__, "--read-once", site.url],
                env=environment(source, scratch / f"cache-{label}"),
                check=True,
                capture_output=True,
                text=True,
            )
            wall, _cpu, stored = json.loads(done.stdout.splitlines()[-1])
            assert stored == rows, (label, stored)
            walls[label].append(wall)
    for label, found in walls.items():
        print(
            f"  first read side by side, {label}: median {statistics.median(found):.2f} s "
            f"({min(found):.2f}-{max(found):.2f}, {rounds} reads, each in a fresh process)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--polls", type=int, default=1000)
    parser.add_argument("--big-rows", type=int, default=3000, help="rows of the site of big runs")
    parser.add_argument("--driver", nargs="+", choices=("mysql", "pgsql"), default=["mysql", "pgsql"])
    parser.add_argument("--before", help="also read the site by this commit's code, side by side")
    parser.add_argument("--rounds", type=int, default=6, help="reads by each version with --before")
    parser.add_argument("--read-once", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read_once:
        read_once(args.read_once)
        return
    print(f"load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-site-") as scratch:
        for driver in args.driver:
            folder = Path(scratch) / driver
            folder.mkdir()
            server: DatabaseServer = (MariaDB if driver == "mysql" else PostgreSQL)(folder / "server")
            (folder / "server").mkdir()
            server.start()
            try:
                site = ServerSite(server, "bench_site", PASSWORD)
                began = time.perf_counter()
                fill(site, args.rows)
                print(f"{driver}: {args.rows:,} rows inserted in {time.perf_counter() - began:.1f} s")
                measured = in_process(site, args.polls, folder)
                served = through_the_server(server, site, args.polls, folder)
                report(driver, args.rows, measured, served)
                if args.before:
                    side_by_side(site, args.rows, args.before, args.rounds, folder)
                big = ServerSite(server, "bench_big", PASSWORD)
                began = time.perf_counter()
                fill(big, args.big_rows, BIG_QUESTIONS)
                print(
                    f"\n{driver}: {args.big_rows:,} rows of {BIG_QUESTIONS} questions inserted in "
                    f"{time.perf_counter() - began:.1f} s"
                )
                print_firsts(first_reads(big, folder), 10)
            finally:
                server.close()
    print(json.dumps({"load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
