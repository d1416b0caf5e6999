"""Time to interactive of the web UI's heaviest pages, in a real browser.

A real ``proctor serve`` (uvicorn on loopback, no token) on a real SQLite store, driven by
Playwright with Debian's Chromium (headless, as the browser tests run it):

(a) the findings inbox ``#/findings`` over a store with at least 10,000 findings;
(b) the trace ``#/conversations/<id>`` of a conversation of 2,000 messages;
(c) the story graph ``#/graph`` over the whole ``../shared/transcripts`` corpus (imported,
    checked and reviewed by the structural layer): the scope's whole graph, its timeline
    chart drawn (d3, one lane per story line, episodes by default, opened on the busiest
    stretch of time) and its lists.

Time to interactive is measured inside the page: from navigation start (the page's
``performance`` time origin) until the page's root says it is ready —
``[data-page="inbox"][data-ready="true"]`` once the first page of rows is shown and
keyboard-usable, ``[data-page="trace"][data-ready="true"]`` once the first screen of the
trace is shown, ``[data-page="graph"][data-ready="true"]`` once the timeline chart, the
entity panel and the event list are drawn. A mutation observer, added before any of the page's scripts run, notes
the moment the selector first matches ("ready") and the next animation frame after it
("shown", when that state is painted). Each is the median of ``--runs`` runs; beside it,
where the time went (the page's resource timings): "shell" until the first API request
left, "api" from then until the last API answer before "ready" arrived, "render" from
there to "ready".

- cold: a new browser context per run (empty HTTP cache, new connection, every module
  fetched and compiled again), the first visit of that context;
- warm: the same context reloading the page (modules from the HTTP cache, revalidated).

The store is built through the library, as a user's would be: generated Proctor JSONL
transcripts whose tool calls make the rules fire (tests/inbox_world.py) and one of 2,000
messages (tests/trace_world.py), ingested with ``ingest`` and checked with the rules
(``check_conversations``). Building takes minutes on two cores, so the store is kept under
``bench/.cache/`` (keyed by the generators' source and the sizes) and copied for each run
of the bench; the corpus store likewise (keyed by the transcripts and the review code).
Targets: the inbox and the trace under 1.5 s (issue 17), the story graph too (issue 20),
on a 2-core machine.

Until a page exists in this build (the selector never appears), its row says "not
ready" and why, and the bench still writes its results.

    make ui-assets && python bench/ui.py      # writes bench/results/ui.md
    python bench/ui.py --runs 3 --no-write
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the generators live in tests/ (shared with the UI tests)

RESULTS = REPO / "bench" / "results" / "ui.md"
CACHE = REPO / "bench" / ".cache"
CHROMIUM = os.environ.get("PROCTOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 860}
TARGET_MS = 1500.0
MIN_FINDINGS = 10_000
TRACE_MESSAGES = 2_000
TRACE_ID = "ui-bench-trace"
INBOX_READY = '[data-page="inbox"][data-ready="true"]'
TRACE_READY = '[data-page="trace"][data-ready="true"]'
GRAPH_READY = '[data-page="graph"][data-ready="true"]'
GENERATORS = (REPO / "tests" / "inbox_world.py", REPO / "tests" / "trace_world.py")
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))

# Noted in the page before its own scripts run (an init script is not subject to the page's
# Content Security Policy): the first moment the selector matches, and the frame after it.
PROBE = """
(selector) => {
  const note = () => {
    if (window.__uiBench || !document.querySelector(selector)) return;
    const api = performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/"));
    window.__uiBench = {
      ready: performance.now(),
      apiStart: api.length ? Math.min(...api.map((e) => e.startTime)) : null,
      apiEnd: api.length ? Math.max(...api.map((e) => e.responseEnd)) : null,
    };
    requestAnimationFrame(() => { window.__uiBench.shown = performance.now(); });
  };
  new MutationObserver(note).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-ready"],
  });
}
"""

NOTES = """\
How to read it:

- "ready" is when the page's root got `data-ready="true"` (the inbox: its first page of
  rows shown and keyboard-usable; the trace: its first screen shown; the story graph: its
  timeline chart, entity panel and event list drawn), "shown" the next
  animation frame, when that is painted. Both count from navigation start: the shell's
  HTML, its modules, the API requests and the rendering.
- cold: a new browser context each run (nothing cached, a new connection); warm: the
  same context reloading the page (static files revalidated from the HTTP cache).
- The server and the browser share the machine's two cores with whatever else runs
  (the load average is printed); the medians of several runs damp, not remove, that.
  On a busy machine read the pages against each other: they are measured in one run.
- shell / api / render split "ready": the shell's HTML and modules until the page's
  first API request, the API requests (the story graph: `/results`, then its graph),
  and drawing the page from their answers.
- The shell is small (app.js, api.js, dom.js, the header's search; preloaded by the
  `Link` header): it loads the module of the page the address names together with that
  module's own imports, and the other pages' modules (and markdown-it, which only the
  trace's modules load) once that page is drawn.
- (c) needs `../shared/transcripts` (or `PROCTOR_SHARED_DIR`); the page asks for the
  scope's whole graph (`cumulative=true`, the newest 500 events, `excerpts=false`: the
  sources' times without their excerpts, which only the List tab asks for), draws the d3
  chart (`vendor/d3.min.js`, loaded while the data is asked for) at the grain of episodes
  (tens of marks, sub-agents' runs folded) and the event list (episodes and the events
  no episode holds); the findings' lane follows after "ready".
"""


@dataclass(frozen=True)
class Store:
    """A built store and what the bench looks up in it."""

    database: Path
    findings: int
    conversations: int
    trace_conversation_id: str
    trace_messages: int


def _cache_key(conversations: int, calls: int) -> str:
    digest = hashlib.sha256()
    for path in GENERATORS:
        digest.update(path.read_bytes())
    digest.update(f"{conversations}:{calls}:{TRACE_MESSAGES}".encode())
    return digest.hexdigest()[:16]


def _build(folder: Path, conversations: int, calls: int) -> Store:
    from tests.inbox_world import fill_store
    from tests.trace_world import write_long_trace

    from proctor.ingest import ingest
    from proctor.store import open_store
    from proctor.supervision import check_conversations

    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "proctor.db"
    store = open_store(database)
    try:
        fill_store(store, folder / "inbox", conversations=conversations, calls=calls)
        trace_file = folder / "trace" / f"{TRACE_ID}.jsonl"
        write_long_trace(trace_file, TRACE_ID, messages=TRACE_MESSAGES)
        ingest(store, [trace_file])
        trace = next(
            row
            for row in store.list_conversations(limit=conversations + 100)
            if row.conversation.external_id == TRACE_ID
        )
        check_conversations(store, [trace.conversation_id])
        _, findings = store.findings(limit=1)
    finally:
        store.close()
    built = Store(database, findings, conversations + 1, trace.conversation_id, TRACE_MESSAGES)
    (folder / "store.json").write_text(
        json.dumps(
            {
                "findings": built.findings,
                "conversations": built.conversations,
                "trace_conversation_id": built.trace_conversation_id,
                "trace_messages": built.trace_messages,
            }
        )
    )
    return built


def cached_store(conversations: int, calls: int, *, rebuild: bool) -> tuple[Store, float | None]:
    """The store under bench/.cache (built now when missing); seconds spent building it."""
    folder = CACHE / f"ui-{_cache_key(conversations, calls)}"
    meta = folder / "store.json"
    if meta.exists() and not rebuild:
        saved = json.loads(meta.read_text())
        return Store(folder / "proctor.db", **saved), None
    shutil.rmtree(folder, ignore_errors=True)
    building = CACHE / f".building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    started = time.perf_counter()
    built = _build(building, conversations, calls)
    if built.findings < MIN_FINDINGS:
        raise SystemExit(
            f"the generated store holds {built.findings} findings, fewer than {MIN_FINDINGS}: "
            "raise --conversations or --calls"
        )
    shutil.rmtree(building / "inbox")
    shutil.rmtree(building / "trace")
    building.rename(folder)
    saved = json.loads(meta.read_text())
    return Store(folder / "proctor.db", **saved), time.perf_counter() - started


def _graph_key(transcripts: Path) -> str:
    """The corpus's files (name, size, time) and the code that reviews them."""
    digest = hashlib.sha256()
    for path in sorted(transcripts.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(
                f"{path.relative_to(transcripts)}:{stat.st_size}:{stat.st_mtime_ns}".encode()
            )
    for path in sorted((REPO / "src" / "proctor" / "review").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def graph_store(*, rebuild: bool) -> tuple[Store, dict[str, Any], float | None]:
    """The whole ../shared/transcripts corpus imported, checked and reviewed (structural),
    kept under bench/.cache; what its newest result holds; seconds spent building it."""
    transcripts = SHARED / "transcripts"
    if not transcripts.is_dir():
        raise SystemExit(f"{transcripts} is missing (set PROCTOR_SHARED_DIR)")
    folder = CACHE / f"ui-graph-{_graph_key(transcripts)}"
    meta = folder / "graph.json"
    built_in = None
    if rebuild or not meta.exists():
        from proctor.ingest import ingest
        from proctor.review import ReviewRequest, start_review
        from proctor.store import open_store
        from proctor.supervision import check_conversations

        shutil.rmtree(folder, ignore_errors=True)
        building = CACHE / f".building-graph-{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        started = time.perf_counter()
        store = open_store(building / "proctor.db")
        try:
            ingest(store, [transcripts])
            rows = store.list_conversations(include_children=True, limit=100_000)
            check_conversations(
                store,
                [r.conversation_id for r in rows if r.conversation.parent_conversation_id is None],
            )
            start_review(store, ReviewRequest(), semantic=None)
            newest = store.overview(limit=1)[0]
            totals = store.project_graph(newest.result_id, limit=1).totals
            conversations = len(rows)
        finally:
            store.close()
        (building / "graph.json").write_text(
            json.dumps(
                {
                    "conversations": conversations,
                    "events": totals.events,
                    "entities": totals.entities,
                    "story_lines": totals.story_lines,
                }
            )
        )
        building.rename(folder)
        built_in = time.perf_counter() - started
    saved = json.loads(meta.read_text())
    return Store(folder / "proctor.db", 0, saved["conversations"], "", 0), saved, built_in


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(store: Store) -> Iterator[str]:
    """``proctor serve`` on a copy of the store (the cache stays as built)."""
    home = Path(tempfile.mkdtemp(prefix="proctor-ui-bench-"))
    try:
        for suffix in ("", "-wal", "-shm"):
            source = store.database.with_name(store.database.name + suffix)
            if source.exists():
                shutil.copy2(source, home / source.name)
        port = _free_port()
        env = {
            **os.environ,
            "PROCTOR_HOME": str(home),
            "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
        }
        env.pop("PROCTOR_API_TOKEN", None)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "proctor.cli.main",
                "serve",
                "--port",
                str(port),
                "--no-heartbeat",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    assert process.stderr is not None
                    raise SystemExit(f"proctor serve exited: {process.stderr.read().decode()}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("proctor serve did not listen within 60 s") from None
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=30)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@dataclass
class Timing:
    ready_ms: float
    shown_ms: float
    shell_ms: float | None = None
    api_ms: float | None = None
    render_ms: float | None = None


class NotReady(Exception):
    """The page never said it was ready (not in this build, or it failed)."""


def _visit(page: Any, url: str, selector: str, timeout_ms: float, *, reload: bool) -> Timing:
    if reload:
        page.evaluate("() => { delete window.__uiBench; }")
        page.reload(wait_until="commit")
    else:
        page.goto(url, wait_until="commit")
    try:
        page.wait_for_function(
            "() => window.__uiBench && window.__uiBench.shown !== undefined",
            timeout=timeout_ms,
        )
    except Exception as error:
        heading = page.locator("main h1").first
        said = heading.text_content(timeout=1000) if heading.count() else None
        alert = page.locator("main [role=alert]").first
        problem = alert.text_content(timeout=1000) if alert.count() else None
        reason = f"{selector} did not appear within {timeout_ms / 1000:.0f} s"
        if said == "Not found":
            reason += " (no such page in this build: the router answered 'Not found')"
        elif problem:
            reason += f" (the page shows an error: {problem.strip()[:160]})"
        else:
            reason += " (the page does not set it yet)"
        raise NotReady(reason) from error
    probe = page.evaluate("() => window.__uiBench")
    ready = float(probe["ready"])
    if probe.get("apiStart") is None:
        return Timing(ready, float(probe["shown"]))
    start, end = float(probe["apiStart"]), float(probe["apiEnd"])
    return Timing(ready, float(probe["shown"]), start, end - start, ready - end)


def measure(
    browser: Any, base: str, path: str, selector: str, runs: int, timeout_ms: float
) -> tuple[list[Timing], list[Timing]]:
    """``runs`` cold visits (a new context each) and ``runs`` warm reloads of one context."""
    url = f"{base}/#{path}"
    cold: list[Timing] = []
    for _ in range(runs):
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(f"({PROBE})({json.dumps(selector)})")
        try:
            cold.append(_visit(context.new_page(), url, selector, timeout_ms, reload=False))
        finally:
            context.close()
    warm: list[Timing] = []
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(f"({PROBE})({json.dumps(selector)})")
    try:
        page = context.new_page()
        _visit(page, url, selector, timeout_ms, reload=False)  # fills the cache
        for _ in range(runs):
            warm.append(_visit(page, url, selector, timeout_ms, reload=True))
    finally:
        context.close()
    return cold, warm


def _row(label: str, timings: list[Timing]) -> str:
    ready = [t.ready_ms for t in timings]
    shown = [t.shown_ms for t in timings]
    median = statistics.median(shown)
    verdict = "meets" if median < TARGET_MS else "MISSES"
    parts = [
        [value for value in values if value is not None]
        for values in zip(*((t.shell_ms, t.api_ms, t.render_ms) for t in timings), strict=True)
    ]
    split = "/".join(f"{statistics.median(p):.0f}" if p else "-" for p in parts)
    return (
        f"{label:<37}{len(timings):>3}{statistics.median(ready):>11.0f}"
        f"{median:>11.0f}{min(shown):>9.0f}{max(shown):>9.0f}{split:>20}   {verdict} 1.5 s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per page, cold and warm")
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--calls", type=int, default=100, help="destructive calls each")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per visit")
    parser.add_argument("--rebuild", action="store_true", help="build the store again")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--only", help="only the pages whose label contains this, e.g. '(c)'")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium is not at {CHROMIUM} (apt-get install chromium)")
    started = time.perf_counter()
    load_at_start = os.getloadavg()[0]
    store, built_in = cached_store(args.conversations, args.calls, rebuild=args.rebuild)
    size_mb = store.database.stat().st_size / 1e6
    lines = [
        f"store: {store.findings} findings over {store.conversations} conversations; "
        f"a trace of {store.trace_messages} messages ({size_mb:.0f} MB database, "
        + (f"built in {built_in:.0f} s)" if built_in is not None else "from bench/.cache)"),
        f"{'page':<37}{'n':>3}{'ready ms':>11}{'shown ms':>11}{'min':>9}{'max':>9}"
        f"{'shell/api/render':>20}",
    ]
    pages = [
        ("(a) inbox, 10,000+ findings", "/findings", INBOX_READY),
        (
            f"(b) trace, {store.trace_messages:,} messages",
            f"/conversations/{store.trace_conversation_id}",
            TRACE_READY,
        ),
    ]
    corpus, held, graph_built_in = graph_store(rebuild=args.rebuild)
    lines.insert(
        1,
        f"corpus: ../shared/transcripts, {held['conversations']} conversations reviewed: "
        f"{held['events']} events, {held['entities']} entities, {held['story_lines']} story "
        "lines "
        + (
            f"(built in {graph_built_in:.0f} s)"
            if graph_built_in is not None
            else "(from bench/.cache)"
        ),
    )
    stores = [
        (store, pages),
        (corpus, [("(c) story graph, whole corpus", "/graph", GRAPH_READY)]),
    ]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            for served, measured in stores:
                if args.only and not any(args.only in label for label, _, _ in measured):
                    continue
                with serve(served) as base:
                    for label, path, selector in measured:
                        if args.only and args.only not in label:
                            continue
                        try:
                            cold, warm = measure(
                                browser, base, path, selector, args.runs, args.timeout * 1000
                            )
                        except NotReady as reason:
                            lines.append(f"{label:<37}not ready: {reason}")
                            print(lines[-1], flush=True)
                            continue
                        lines.append(_row(f"{label}, cold", cold))
                        print(lines[-1], flush=True)
                        lines.append(_row(f"{label}, warm", warm))
                        print(lines[-1], flush=True)
        finally:
            browser.close()
    lines.append(f"total bench time {time.perf_counter() - started:.0f} s")
    lines.append(
        f"load average at the start / end (other work on the machine): {load_at_start:.1f} / "
        f"{os.getloadavg()[0]:.1f}"
    )
    report = "\n".join(lines)
    print(report)
    if args.no_write:
        return
    command = (
        "python bench/ui.py"
        + (f" --runs {args.runs}" if args.runs != 7 else "")
        + (f" --only '{args.only}'" if args.only else "")
    )
    RESULTS.write_text(
        "# bench/ui.py results\n\n"
        f"Machine: {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}, {_chromium_version()}. "
        f"Measured {datetime.date.today().isoformat()} on {_revision()}.\n\n"
        f"```\n$ {command}\n{report}\n```\n\n{NOTES}"
    )
    print(f"wrote {RESULTS.relative_to(REPO)}")


def _revision() -> str:
    """The commit measured, and whether the working tree differed from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "an unknown revision"
    return f"commit {commit}" + (" with uncommitted changes under src/" if dirty else "")


def _chromium_version() -> str:
    try:
        found = subprocess.run(
            [CHROMIUM, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return "Chromium"
    return found.stdout.strip() or "Chromium"


if __name__ == "__main__":
    main()
