"""``proctor serve``: cold start to the first answer, and read latency of the main routes.

A store holding the corpus of ``bench/ingest.py`` (copied real Claude Code sessions, 1 GB
by default) is built once through the library, as a user's would be: imported with
``ingest``, checked with the rules (``check_conversations``: the findings inbox), reviewed
once structurally (one published result: the story graph) and indexed for full text. It is
kept under ``bench/.cache/`` and copied into a fresh ``$PROCTOR_HOME`` for each run.

Then, against a real ``proctor serve`` process (uvicorn on loopback, no token):

1. **Cold start** (``--starts`` times, median and max): from starting the process to the
   first ``200`` of ``GET /api/health``, and to the first ``200`` of the first real route
   ``GET /api/conversations`` (which opens the store), with the server's CPU time up to
   that answer (robust to other work on the machine). ``proctor serve`` runs with its
   defaults (search indexing in the background included). Beside it, in the same run,
   ``python -c 'import proctor.cli.main'`` and ``python -S -c pass`` (the floor).
2. **Read routes** (``--requests`` times each in a row on a keep-alive connection, after
   two warm-up requests): p50 and p95 of the wall time, and the server's CPU time per
   request (mean; robust to other work on the machine, which stretches wall time) of ``GET /api/conversations``, ``/api/findings`` (the default page),
   ``/api/results/{structural result}/graph?limit=500``, ``/api/stories?target=all`` and
   ``/api/search`` (a few queries in turn). Every document of the cached store is embedded
   first (once, kept), and before search is timed the bench waits until
   ``GET /api/search/index`` reports the index complete (nothing stale, every document
   embedded, the background indexer idle): search is timed as a user's server answers
   once its indexer has caught up, not beside an embedder competing for the CPU (the
   indexer's work includes the common words' postings, ``search/_postings.py``, built in
   the background at the first start on a store that has none). This
   server runs with ``--no-index``; asking for the index's state starts the indexer; the
   figures say how long the bench waited and how many documents were embedded. "first
   ms" is a route's first request (its warm-up): a repeated request may be answered from
   the server's cache of finished answers (the graph and stories routes), the first one
   after a change never is.

3. **Uncached graph page and stories**: ``/api/results/{id}/graph?limit=500`` and
   ``/api/stories?target=all`` answered afresh, as every user gets them after a change:
   before each timed request the bench revises an entity of the page (``POST
   /api/graph/entity/{id}/revise``, a new description; untimed), which changes the store's
   graph version, so the app's answer cache cannot answer (the graph's ETag is checked to
   change each time). Imports are warm (one request of each route first). p50/p95 of the
   wall time and of the server's CPU time over the request alone (all its threads, from
   ``/proc/PID/task/*/schedstat``), this tree and ``--baseline-src`` each on its own
   server and copy of the store, their requests alternating.

4. **Search CPU in process** (``--search-cpu``, alone): ``proctor.search.search`` over the
   same queries on the cached store opened read-only and held in memory, as the server
   ranks (``hold_vectors``), each query's CPU time (``time.process_time``: robust to other
   work on the machine) and wall time (a search ranks its vectors on a helper thread while
   the full text ranks, where a core is idle: read wall time on a quiet machine).
5. **The helper threads** (``--search-overlap``, alone): this tree's searches with their
   helpers (as on an idle machine: the vector part, and the upper half of a large full
   text ranking) and without (everything on the calling thread), alternating in one
   process: CPU of all threads, the calling thread's CPU, and the critical path with a
   core per thread (the caller's CPU, plus where a helper's task took longer than what
   the caller did meanwhile, the difference): the wall time of an idle machine with
   cores enough, measured under load; with two cores and three threads the wall time is
   also at least half of all threads' CPU. Whether the hits' scores agree both ways. This tree and ``--baseline-src`` in their own processes, rounds
   alternating; p50/p95 per query over all rounds, and whether their hits' scores agree.

Targets (issue 18): start < 1 s on a quiet machine; p95 ≤ 50 ms per read route.

    python bench/serve.py                    # 1 GB corpus (builds the store once: minutes)
    python bench/serve.py --size-mb 100      # a quicker look
    python bench/serve.py --size-mb 20 --uncached-only --baseline-src /tmp/base/src   # (3) only
    python bench/serve.py --search-cpu --baseline-src /tmp/base/src   # (4) only
    python bench/serve.py --search-cpu --baseline-src /tmp/base/src --query "npm install error"
    python bench/serve.py --search-overlap --requests 16               # (5) only
"""

from __future__ import annotations

import argparse
import compileall
import http.client
import json
import math
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
CACHE = REPO / "bench" / ".cache"
PROCTOR = Path(sys.executable).parent / "proctor"
SEARCHES = ["failing test", "database migration", "read the config file", "git commit"]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


# -- the store -----------------------------------------------------------------------------


def _build(folder: Path, size_mb: int) -> dict[str, Any]:
    """Import the corpus, check it with the rules, review it once, index its full text."""
    from ingest import build_corpus  # bench/ingest.py
    from proctor.ingest import ingest
    from proctor.review import ReviewRequest, start_review
    from proctor.search import index_full_text
    from proctor.store import open_store
    from proctor.supervision import check_conversations

    corpus = REPO / "bench" / ".corpus" / f"{size_mb}mb"
    build_corpus(corpus, size_mb)
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(folder / "proctor.db")
    took: dict[str, float] = {}
    try:
        start = time.perf_counter()
        ingest(store, [corpus])
        took["ingest_s"] = time.perf_counter() - start
        start = time.perf_counter()
        ids = [row.conversation.conversation_id for row in store.list_conversations(limit=10**6)]
        check_conversations(store, ids)
        took["check_s"] = time.perf_counter() - start
        start = time.perf_counter()
        run = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
        took["review_s"] = time.perf_counter() - start
        start = time.perf_counter()
        index_full_text(store)
        took["full_text_s"] = time.perf_counter() - start
        counts = store.counts()
        _, findings = store.findings(limit=1)
        result_id = store.overview(None, limit=1)[0].result_id
    finally:
        store.close()
    return {
        "size_mb": size_mb,
        "conversations": len(ids),
        "messages": counts.messages,
        "tool_calls": counts.tool_calls,
        "findings": findings,
        "review_status": run.status,
        "sources_reviewed": run.sources_total,
        "result_id": result_id,
        **{k: round(v, 1) for k, v in took.items()},
    }


def cached_store(size_mb: int, *, rebuild: bool) -> tuple[Path, dict[str, Any]]:
    """The store under bench/.cache (built now when missing) and what it holds."""
    folder = CACHE / f"serve-{size_mb}mb"
    meta = folder / "store.json"
    if meta.exists() and not rebuild:
        return folder / "proctor.db", json.loads(meta.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    building = CACHE / f".building-serve-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    built = _build(building, size_mb)
    (building / "store.json").write_text(json.dumps(built))
    building.rename(folder)
    return folder / "proctor.db", built


def embed_cached(database: Path) -> None:
    """Embed every document of the cached store once (``python -m proctor.search``, kept
    for later runs; it also migrates the store, so no timed start does), so the search route is timed on a complete index, as a user's is once
    the background indexer has caught up, not beside an embedder competing for the CPU."""
    env = {**os.environ, "PROCTOR_INDEX_SQLITE": str(database)}
    print("embedding the cached store's documents (once; kept for later runs) …", flush=True)
    subprocess.run([sys.executable, "-m", "proctor.search"], env=env, check=True)


# -- the server ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(port: int, path: str, timeout: float = 30.0) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@contextmanager
def serving(
    home: Path, *extra: str, src: Path | None = None
) -> Iterator[tuple[int, dict[str, float], int]]:
    """A ``proctor serve`` on ``home`` (Proctor from ``src`` when given); yields its port and
    the seconds from process start to the first 200 of /api/health ("health") and of
    /api/conversations ("first_route"), and its process id."""
    port = _free_port()
    env = {**os.environ, "PROCTOR_HOME": str(home)}
    env.pop("PROCTOR_DATABASE_URL", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(PROCTOR), "serve", "--port", str(port), *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    times: dict[str, float] = {}
    try:
        while "health" not in times:
            if process.poll() is not None:
                raise SystemExit(f"proctor serve exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                if _get(port, "/api/health", timeout=5) == 200:
                    times["health"] = time.perf_counter() - started
            except OSError:
                time.sleep(0.002)
        status = _get(port, "/api/conversations")
        if status != 200:
            raise SystemExit(f"GET /api/conversations answered {status}")
        times["first_route"] = time.perf_counter() - started
        times["cpu"] = _cpu_seconds(process.pid)
        yield port, times, process.pid
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _home_with(database: Path, folder: Path) -> Path:
    home = folder / "home"
    home.mkdir()
    shutil.copyfile(database, home / "proctor.db")
    return home


def _process_seconds(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cold_starts(
    database: Path, starts: int, baseline: Path | None, src: Path | None = None
) -> dict[str, Any]:
    """Start ``proctor serve`` ``starts`` times on a copy of the store (alternating with the
    Proctor of ``baseline``, a source folder, when given; "this tree" is ``src`` when given,
    else the installed one)."""
    variants: dict[str, Path | None] = {"this tree": src}
    if baseline is not None:
        variants["baseline"] = baseline
    health: dict[str, list[float]] = {name: [] for name in variants}
    first: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="proctor-bench-serve-") as tmp:
        home = _home_with(database, Path(tmp))
        for _ in range(starts):
            for name, src in variants.items():
                with serving(home, src=src) as (_port, times, _pid):
                    health[name].append(times["health"])
                    first[name].append(times["first_route"])
                    cpu[name].append(times["cpu"])
    return {
        "variants": {
            name: {
                "health_median": statistics.median(health[name]),
                "health_max": max(health[name]),
                "first_route_median": statistics.median(first[name]),
                "first_route_max": max(first[name]),
                "cpu_median": statistics.median(cpu[name]),
            }
            for name in variants
        },
        "import_cli": _process_seconds(
            [sys.executable, "-c", "import proctor.cli.main"], max(3, starts)
        ),
        "python_floor": _process_seconds([sys.executable, "-S", "-c", "pass"], max(3, starts)),
    }


def _timed(connection: http.client.HTTPConnection, path: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    took = time.perf_counter() - start
    if response.status != 200:
        raise SystemExit(f"GET {path} answered {response.status}: {body[:300]!r}")
    return took, body


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def index_caught_up(
    connection: http.client.HTTPConnection, timeout: float = 900.0
) -> tuple[float, dict[str, Any]]:
    """Wait until the server's search index is complete (``GET /api/search/index``: not
    stale, every document embedded, its background indexer idle; asking starts it), so
    search is timed as a user's server answers once its indexer has caught up, not beside
    it. The seconds waited and the last report."""
    start = time.perf_counter()
    while True:
        _, body = _timed(connection, "/api/search/index")
        report = json.loads(body)
        index, indexer = report["index"], report["indexer"] or {}
        done = not index["stale"] and index["embedded"] in (None, index["documents"])
        if done and indexer.get("phase") in (None, "idle"):
            return time.perf_counter() - start, report
        if time.perf_counter() - start > timeout:
            raise SystemExit(f"the search index did not catch up in {timeout:.0f} s: {report}")
        time.sleep(0.5)


def read_routes(
    database: Path, result_id: str, requests: int, src: Path | None = None
) -> dict[str, Any]:
    """For each read route, ``requests`` requests in a row on one keep-alive connection: the
    p50 / p95 of their wall time, and the server process's CPU time per request (mean over
    the block: other work on the machine stretches wall time, hardly CPU time). Search
    comes last: it starts the background indexer (with nothing left to embed). The Proctor
    of ``src`` when given."""
    routes: dict[str, list[str]] = {
        "GET /api/conversations": ["/api/conversations"],
        "GET /api/findings": ["/api/findings"],
        "GET /api/results/{id}/graph?limit=500": [f"/api/results/{result_id}/graph?limit=500"],
        "GET /api/stories?target=all": ["/api/stories?target=all"],
        "GET /api/search?q=…": [f"/api/search?q={q.replace(' ', '+')}" for q in SEARCHES],
    }
    figures: dict[str, dict[str, float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="proctor-bench-serve-") as tmp,
        serving(_home_with(database, Path(tmp)), "--no-index", "--no-heartbeat", src=src) as (
            port,
            _,
            pid,
        ),
    ):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        waited = 0.0
        for name, paths in routes.items():
            if name.startswith("GET /api/search"):
                waited, _ = index_caught_up(connection)
            first = [_timed(connection, path)[0] for path in paths[:2]]  # warm-up
            times: list[float] = []
            cpu = _cpu_seconds(pid)
            for round_ in range(requests):
                took, body = _timed(connection, paths[round_ % len(paths)])
                times.append(took)
            cpu = (_cpu_seconds(pid) - cpu) / requests
            figures[name] = {
                "p50": _p(times, 0.5),
                "p95": _p(times, 0.95),
                "cpu": cpu,
                "bytes": len(body),
                "first": first[0],
            }
        _, index = _timed(connection, "/api/search/index")
        connection.close()
    return {"routes": figures, "index": json.loads(index)["index"], "index_wait": waited}


def _thread_cpu(pid: int) -> dict[str, int]:
    """CPU time of each thread of a process so far, in nanoseconds (the scheduler's own
    account, ``/proc/PID/task/*/schedstat``: precise, where ``stat`` counts 10 ms ticks)."""
    used: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            used[task.name] = int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended meanwhile
            continue
    return used


def _cpu_between(before: dict[str, int], after: dict[str, int]) -> float:
    """Seconds of CPU the process's threads used between two ``_thread_cpu`` readings (a
    thread that ended meanwhile counts as it was last read)."""
    return (
        sum(after.get(tid, ns) - ns for tid, ns in before.items()) / 1e9
        + sum(ns for tid, ns in after.items() if tid not in before) / 1e9
    )


def _post(connection: http.client.HTTPConnection, path: str, document: dict[str, Any]) -> None:
    """POST ``document``; once again on a new connection when the server closed the idle
    one (uvicorn closes a keep-alive connection idle 5 s: the other variant's turn can
    take that long on a loaded machine)."""
    body = json.dumps(document).encode()
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
    except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
        connection.close()
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
    answer = response.read()
    if response.status != 200:
        raise SystemExit(f"POST {path} answered {response.status}: {answer[:300]!r}")


UNCACHED = {
    "GET /api/results/{id}/graph?limit=500": "/api/results/{result_id}/graph?limit=500",
    "GET /api/stories?target=all": "/api/stories?target=all",
}


def uncached_routes(
    database: Path, result_id: str, requests: int, variants: dict[str, Path | None]
) -> dict[str, dict[str, dict[str, float]]]:
    """The graph page and stories answered afresh, as after every change a user makes:
    before each timed request the bench revises an entity of the page (``POST
    /api/graph/entity/{id}/revise`` with a new description: a person's edit, which changes
    the store's graph version, so the app's answer cache cannot answer), untimed. One
    server per variant (``src``: None is the installed Proctor), each on its own copy of
    the store, the variants' requests alternating, after a warm-up request of each route
    (imports). Per route and variant: p50/p95 of the wall time and of the server's CPU
    time (all its threads) over the request alone, and the answer's size. The graph's
    ETag is checked to change every time (a kept answer would repeat it)."""
    figures: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="proctor-bench-uncached-") as tmp, ExitStack() as stack:
        servers: dict[str, tuple[http.client.HTTPConnection, int, str]] = {}
        for number, (name, src) in enumerate(variants.items()):
            folder = Path(tmp) / str(number)
            folder.mkdir()
            port, _, pid = stack.enter_context(
                serving(_home_with(database, folder), "--no-index", "--no-heartbeat", src=src)
            )
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            stack.callback(connection.close)
            _, page = _timed(
                connection,
                UNCACHED["GET /api/results/{id}/graph?limit=500"].format(result_id=result_id),
            )
            _timed(connection, UNCACHED["GET /api/stories?target=all"])
            entity_id = json.loads(page)["entities"][0]["entity_id"]
            servers[name] = (connection, pid, entity_id)
        wall: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        size: dict[tuple[str, str], int] = {}
        etags: dict[str, set[str]] = {name: set() for name in variants}
        for round_ in range(requests):
            for name, (connection, pid, entity_id) in servers.items():
                for route, path in UNCACHED.items():
                    _post(
                        connection,
                        f"/api/graph/entity/{entity_id}/revise",
                        {"description": f"bench edit {round_} of {route}"},
                    )
                    before = _thread_cpu(pid)
                    start = time.perf_counter()
                    connection.request("GET", path.format(result_id=result_id))
                    response = connection.getresponse()
                    body = response.read()
                    took = time.perf_counter() - start
                    used = _cpu_between(before, _thread_cpu(pid))
                    if response.status != 200:
                        raise SystemExit(f"GET {path} answered {response.status}: {body[:300]!r}")
                    if route.startswith("GET /api/results"):
                        etags[name].add(response.getheader("ETag") or "")
                    wall.setdefault((route, name), []).append(took)
                    cpu.setdefault((route, name), []).append(used)
                    size[(route, name)] = len(body)
        for name, seen in etags.items():
            if len(seen) != requests:
                raise SystemExit(f"{name}: a graph answer repeated ({len(seen)} ETags)")
        for (route, name), times in wall.items():
            used = cpu[(route, name)]
            figures.setdefault(route, {})[name] = {
                "p50": _p(times, 0.5),
                "p95": _p(times, 0.95),
                "cpu_p50": _p(used, 0.5),
                "cpu_p95": _p(used, 0.95),
                "cpu_mean": statistics.fmean(used),
                "bytes": size[(route, name)],
            }
    return figures


_SEARCH_CPU = """
import json, sys, time
from proctor.search import hold_vectors, search
from proctor.store import open_store

store = open_store(sys.argv[1], read_only=True)
hold_vectors(store)
queries, rounds = json.loads(sys.argv[2]), int(sys.argv[3])
for query in queries:  # the held copy read, the query vectors made
    search(store, query)
times = {query: [] for query in queries}
walls = {query: [] for query in queries}
scores = {}
for _ in range(rounds):
    for query in queries:
        start, began = time.process_time(), time.perf_counter()
        result = search(store, query)
        times[query].append(time.process_time() - start)
        walls[query].append(time.perf_counter() - began)
        scores[query] = [round(hit.score, 5) for hit in result.hits]
print(json.dumps({"times": times, "walls": walls, "scores": scores}))
"""


_SEARCH_OVERLAP = """
import json, sys, time
from proctor.search import _query, hold_vectors, search
from proctor.store import open_store

store = open_store(sys.argv[1], read_only=True)
hold_vectors(store)
queries, rounds = json.loads(sys.argv[2]), int(sys.argv[3])
pool, tasks = _query._helper_pool, []


class Timed:
    # The helper pool, each task's CPU (on its helper) and the caller's CPU from handing it
    # over to asking for its result recorded.
    def __init__(self, helpers):
        self.helpers = helpers

    def submit(self, fn, *args):
        box = {"handed": time.thread_time()}

        def run(*inner):
            began = time.thread_time()
            try:
                return fn(*inner)
            finally:
                box["helper"] = time.thread_time() - began

        future = self.helpers.submit(run, *args)
        result = future.result

        def asked(timeout=None):
            box["beside"] = time.thread_time() - box["handed"]
            return result(timeout)

        future.result = asked
        tasks.append(box)
        return future


_query._helper_pool = lambda: Timed(pool())
for query in queries:
    search(store, query)
found = {"helpers": {q: [] for q in queries}, "inline": {q: [] for q in queries}}
scores = {}
for number in range(rounds):
    for query in queries:
        for mode in ("helpers", "inline") if number % 2 == 0 else ("inline", "helpers"):
            _query._spare_core = (lambda: True) if mode == "helpers" else (lambda: False)
            tasks.clear()
            main, cpu = time.thread_time(), time.process_time()
            result = search(store, query)
            every, main = time.process_time() - cpu, time.thread_time() - main
            # A core per thread: the caller's CPU, and where a helper's task took longer
            # than what the caller did meanwhile, the difference (the caller waits).
            path = main + sum(
                max(0.0, box["helper"] - box["beside"])
                for box in tasks
                if "helper" in box and "beside" in box
            )
            found[mode][query].append([every, path, main])
            scores.setdefault(mode, {})[query] = [round(hit.score, 6) for hit in result.hits]
found["same"] = scores["helpers"] == scores["inline"]
print(json.dumps(found))
"""


def search_overlap(database: Path, rounds: int) -> dict[str, Any]:
    """(5): this tree's searches with their helpers and without, alternating in one
    process: per search, CPU of all threads, the critical path with a core per thread,
    and the calling thread's CPU; and whether the scores agree."""
    ran = subprocess.run(
        [sys.executable, "-c", _SEARCH_OVERLAP, str(database), json.dumps(SEARCHES), str(rounds)],
        env=os.environ | {"PYTHONPATH": str(REPO / "src")},
        check=True,
        capture_output=True,
        text=True,
    )
    found: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
    return found


def _print_search_overlap(found: dict[str, Any]) -> None:
    print(
        f"    {'query':<24}{'helpers':>8}{'CPU p50':>9}{'CPU p95':>9}{'path p50':>9}"
        f"{'path p95':>9}{'caller p50':>11}"
    )
    every: dict[str, list[list[float]]] = {}
    modes = ("helpers", "inline")
    for query in SEARCHES:
        for mode in modes:
            runs = found[mode][query]
            every.setdefault(mode, []).extend(runs)
            cpu, path, main = ([r[n] for r in runs] for n in range(3))
            print(
                f"    {query:<24}{'yes' if mode == 'helpers' else 'no':>8}"
                f"{_p(cpu, 0.5) * 1000:>9.1f}{_p(cpu, 0.95) * 1000:>9.1f}"
                f"{_p(path, 0.5) * 1000:>9.1f}{_p(path, 0.95) * 1000:>9.1f}"
                f"{_p(main, 0.5) * 1000:>11.1f}"
            )
    for mode in modes:
        cpu, path, main = ([r[n] for r in every[mode]] for n in range(3))
        print(
            f"    {'every query':<24}{'yes' if mode == 'helpers' else 'no':>8}"
            f"{_p(cpu, 0.5) * 1000:>9.1f}{_p(cpu, 0.95) * 1000:>9.1f}"
            f"{_p(path, 0.5) * 1000:>9.1f}{_p(path, 0.95) * 1000:>9.1f}"
            f"{_p(main, 0.5) * 1000:>11.1f}"
        )
    print(f"    the hits' scores {'agree' if found['same'] else 'DIFFER'} (helpers and not)")


def search_cpu(
    database: Path, rounds: int, repeats: int, variants: dict[str, Path | None]
) -> dict[str, dict[str, Any]]:
    """(4): each variant's CPU time per search in process, ``rounds`` rounds alternating,
    each a fresh process running every query of ``SEARCHES`` ``repeats`` times."""
    found: dict[str, dict[str, Any]] = {
        name: {"times": {q: [] for q in SEARCHES}, "walls": {q: [] for q in SEARCHES}, "scores": {}}
        for name in variants
    }
    for _ in range(rounds):
        for name, src in variants.items():
            env = os.environ | {"PYTHONPATH": str(src or REPO / "src")}
            command = [sys.executable, "-c", _SEARCH_CPU, str(database), json.dumps(SEARCHES)]
            ran = subprocess.run(
                [*command, str(repeats)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            answer = json.loads(ran.stdout.strip().splitlines()[-1])
            for query, took in answer["times"].items():
                found[name]["times"][query] += took
                found[name]["walls"][query] += answer["walls"][query]
            found[name]["scores"] = answer["scores"]
    return found


def _print_search_cpu(found: dict[str, dict[str, Any]]) -> None:
    """CPU and wall time per query (wall: a search may use a second core for a part of
    its work, and is stretched by other work on the machine; read it on a quiet one)."""
    print(
        f"    {'query':<24}{'tree':>11}{'CPU p50':>9}{'CPU p95':>9}{'wall p50':>9}{'wall p95':>9}"
    )
    every: dict[str, list[float]] = {}
    every_wall: dict[str, list[float]] = {}
    for query in SEARCHES:
        for name, figures in found.items():
            took, wall = figures["times"][query], figures["walls"][query]
            every.setdefault(name, []).extend(took)
            every_wall.setdefault(name, []).extend(wall)
            print(
                f"    {query:<24}{name:>11}{_p(took, 0.5) * 1000:>9.1f}{_p(took, 0.95) * 1000:>9.1f}"
                f"{_p(wall, 0.5) * 1000:>9.1f}{_p(wall, 0.95) * 1000:>9.1f}"
            )
    for name, took in every.items():
        wall = every_wall[name]
        print(
            f"    {'every query':<24}{name:>11}{_p(took, 0.5) * 1000:>9.1f}{_p(took, 0.95) * 1000:>9.1f}"
            f"{_p(wall, 0.5) * 1000:>9.1f}{_p(wall, 0.95) * 1000:>9.1f}"
        )
    if "baseline" in every:
        ours, base = every["this tree"], every["baseline"]
        ours_wall, base_wall = every_wall["this tree"], every_wall["baseline"]
        print(
            f"    {'':<24}{'ratio':>11}{_p(ours, 0.5) / _p(base, 0.5):>8.2f}x"
            f"{_p(ours, 0.95) / _p(base, 0.95):>8.2f}x"
            f"{_p(ours_wall, 0.5) / _p(base_wall, 0.5):>8.2f}x"
            f"{_p(ours_wall, 0.95) / _p(base_wall, 0.95):>8.2f}x"
        )
        same = found["this tree"]["scores"] == found["baseline"]["scores"]
        print(f"    the hits' scores {'agree' if same else 'DIFFER'} (this tree and baseline)")


def main() -> None:
    """Build (or reuse) the store, time the starts and the read routes, print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rebuild", action="store_true", help="Build the store again.")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        help="Also start the Proctor in this source folder (e.g. `git archive REV src`), "
        "alternating with this tree's, for a ratio in the same run.",
    )
    parser.add_argument(
        "--src",
        type=Path,
        help="Start the Proctor in this source folder as 'this tree' (a snapshot of the "
        "working tree, so edits during a long run do not mix into it).",
    )
    parser.add_argument("--skip-routes", action="store_true", help="Time the starts only.")
    parser.add_argument(
        "--skip-starts", action="store_true", help="Time the read routes only (no cold starts)."
    )
    parser.add_argument(
        "--uncached-only",
        action="store_true",
        help="Time only (3): the graph page and stories answered afresh after an edit.",
    )
    parser.add_argument(
        "--search-cpu",
        action="store_true",
        help="Time only (4): search's CPU per query in process, rounds alternating.",
    )
    parser.add_argument(
        "--search-overlap",
        action="store_true",
        help="Time only (5): this tree's searches with their vector part on the helper "
        "thread and without, CPU and critical path (the wall time of an idle machine).",
    )
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of (4) per variant.")
    parser.add_argument(
        "--query",
        action="append",
        help="A search to time instead of the four built in (repeat for more): questions "
        "the bench's own were not chosen on.",
    )
    args = parser.parse_args()
    if args.query:
        SEARCHES[:] = args.query
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}; load average {os.getloadavg()[0]:.2f}"
    )
    start = time.perf_counter()
    database, built = cached_store(args.size_mb, rebuild=args.rebuild)
    if time.perf_counter() - start > 1:
        print(f"built the store in {time.perf_counter() - start:.0f} s: {json.dumps(built)}")
    if args.search_overlap:  # read-only: the cached store as it is
        print(
            f"(5) search in process, this tree, with helper threads and without, "
            f"{args.requests} rounds alternating; load average {os.getloadavg()[0]:.2f}"
        )
        _print_search_overlap(search_overlap(database, args.requests))
        print(f"    load average at the end {os.getloadavg()[0]:.2f}")
        return
    if args.search_cpu:  # read-only: the cached store as it is
        trees: dict[str, Path | None] = {"this tree": args.src}
        if args.baseline_src is not None:
            trees["baseline"] = args.baseline_src
        print(
            f"(4) search CPU in process, {args.rounds} rounds of {args.requests // 4} times "
            f"each query per variant, alternating; load average {os.getloadavg()[0]:.2f}"
        )
        _print_search_cpu(search_cpu(database, args.rounds, max(1, args.requests // 4), trees))
        print(f"    load average at the end {os.getloadavg()[0]:.2f}")
        return
    embed_cached(database)  # also brings the cached store to this tree's schema
    print(
        f"store: {built['size_mb']} MB corpus, {built['conversations']:,} conversations, "
        f"{built['messages']:,} messages, {built['tool_calls']:,} tool calls, "
        f"{built['findings']:,} findings, one structural review published "
        f"({built['sources_reviewed']:,} sources, result {built['result_id'][:8]}); "
        f"database {database.stat().st_size / 1e6:.0f} MB"
    )
    # Every tree byte-compiled first: where PYTHONDONTWRITEBYTECODE is set, a folder without
    # bytecode compiles every module it imports on each start, and the ratio measures that.
    for src in (Path(__file__).resolve().parents[1] / "src", args.baseline_src, args.src):
        if src is not None:
            compileall.compile_dir(src, quiet=1)
    if not (args.skip_starts or args.uncached_only):
        started = cold_starts(database, args.starts, args.baseline_src, args.src)
        print(f"(1) cold start, {args.starts} starts each (target < 1 s on a quiet machine):")
        for name, figures in started["variants"].items():
            print(
                f"    {name:<10} first 200 of /api/health median {figures['health_median']:.2f} s "
                f"(max {figures['health_max']:.2f}); of /api/conversations median "
                f"{figures['first_route_median']:.2f} s (max {figures['first_route_max']:.2f}); "
                f"CPU to that answer {figures['cpu_median']:.2f} s"
            )
        if "baseline" in started["variants"]:
            ours, base = started["variants"]["this tree"], started["variants"]["baseline"]
            print(
                f"    this tree / baseline: health {ours['health_median'] / base['health_median']:.2f}x, "
                f"first route {ours['first_route_median'] / base['first_route_median']:.2f}x, "
                f"CPU {ours['cpu_median'] / base['cpu_median']:.2f}x"
            )
        print(
            f"    same run: python -c 'import proctor.cli.main' {started['import_cli'] * 1000:.0f} ms; "
            f"python -S -c pass {started['python_floor'] * 1000:.0f} ms; "
            f"load average {os.getloadavg()[0]:.2f}"
        )
    if args.skip_routes:
        return
    if not args.uncached_only:
        measured = read_routes(database, built["result_id"], args.requests, args.src)
        print(f"(2) read routes, {args.requests} requests each (target p95 ≤ 50 ms):")
        print(
            f"    {'route':<42}{'p50 ms':>9}{'p95 ms':>9}{'CPU ms':>9}{'bytes':>12}{'first ms':>10}"
        )
        for name, figures in measured["routes"].items():
            print(
                f"    {name:<42}{figures['p50'] * 1000:>9.1f}{figures['p95'] * 1000:>9.1f}"
                f"{figures['cpu'] * 1000:>9.1f}{figures['bytes']:>12,}{figures['first'] * 1000:>10.1f}"
            )
        index = measured["index"]
        print(
            f"    search index at the end: {index.get('documents', 0):,} documents, "
            f"{index.get('embedded', 0):,} embedded (search timed after waiting "
            f"{measured['index_wait']:.1f} s for it to be complete); "
            f"load average {os.getloadavg()[0]:.2f}"
        )
    variants: dict[str, Path | None] = {"this tree": args.src}
    if args.baseline_src is not None:
        variants["baseline"] = args.baseline_src
    print(
        f"(3) graph page and stories answered afresh (uncached: an entity revised before each, "
        f"untimed), {args.requests} requests each, variants alternating; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    fresh = uncached_routes(database, built["result_id"], args.requests, variants)
    print(
        f"    {'route':<42}{'tree':>11}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'CPU p50':>9}{'CPU p95':>9}{'CPU mean':>9}{'bytes':>12}"
    )
    for route, by_variant in fresh.items():
        for name, figures in by_variant.items():
            print(
                f"    {route:<42}{name:>11}{figures['p50'] * 1000:>9.1f}"
                f"{figures['p95'] * 1000:>9.1f}{figures['cpu_p50'] * 1000:>9.1f}"
                f"{figures['cpu_p95'] * 1000:>9.1f}{figures['cpu_mean'] * 1000:>9.1f}"
                f"{figures['bytes']:>12,}"
            )
        if "baseline" in by_variant:
            ours, base = by_variant["this tree"], by_variant["baseline"]
            print(
                f"    {'':<42}{'ratio':>11}{ours['p50'] / base['p50']:>8.2f}x"
                f"{ours['p95'] / base['p95']:>8.2f}x{ours['cpu_p50'] / base['cpu_p50']:>8.2f}x"
                f"{ours['cpu_p95'] / base['cpu_p95']:>8.2f}x{ours['cpu_mean'] / base['cpu_mean']:>8.2f}x"
            )
    print(f"    load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
