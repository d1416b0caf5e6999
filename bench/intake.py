"""Live intake latency over HTTP: one appended message, by conversation size, and under load.

A ``proctor serve`` process (uvicorn on loopback, its own SQLite store, no token) is
started on a store that already holds one conversation of each size (100, 10,000 and
50,000 messages, every fifth an assistant reply with a tool call and its result),
written beforehand with the library's own intake. Then, through
``POST /api/intake/events`` as a client sends it (``application/x-ndjson``):

(a) append latency: one new message appended to each conversation, ``--appends`` times
    after a warm-up of three, client-side wall time per request (p50/p95);
(b) a small append to conversation B (100 messages) sent while an append to conversation
    A (50,000 messages) is in flight: B's time, next to B's time alone. Two kinds of
    append to A: one message (as in (a)) and a large one of ``--large-messages`` new
    messages in one request, which keeps A in flight long enough for B to overlap it;
    both times are shown so the overlap can be checked.

Every timing is ``time.perf_counter`` around the whole request on the client. The
target (issue 16): the p50 at 50,000 messages within 3x of the p50 at 100, and B's time
while A is in flight close to B's time alone.

    python bench/intake.py                  # writes bench/results/intake.md (section "current")
    python bench/intake.py --appends 10 --no-write
    python bench/intake.py --section baseline   # record the figures before a change
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "intake.md"
SIZES = (100, 10_000, 50_000)
NDJSON = {"Content-Type": "application/x-ndjson"}
URL = "/api/intake/events"
SENTENCE = (
    "the export fails because the CSV writer closes the file before the last row is "
    "flushed run pytest again with the fixture that holds unicode names and check the "
    "encoding of every column then open a pull request describing the change"
)
WORDS = SENTENCE.split()


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0–1) of second samples, in milliseconds (nearest rank)."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[rank] * 1000


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 120)))


def conversation_events(name: str, messages: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    """``messages`` messages of conversation ``name``; every fifth a reply with a tool call."""
    yield {"type": "conversation", "conversation_id": name, "title": f"bench {name}"}
    start = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)
    for number in range(messages):
        at = (start + datetime.timedelta(seconds=number)).isoformat()
        role = "user" if number % 2 == 0 else "assistant"
        yield {
            "type": "message",
            "conversation_id": name,
            "message_id": f"m{number}",
            "role": role,
            "text": _text(rng),
            "created_at": at,
        }
        if number % 5 == 4 and role == "assistant":
            call = {"conversation_id": name, "call_id": f"c{number}"}
            yield call | {
                "type": "tool_call",
                "name": "Bash",
                "arguments": {"command": f"pytest -q tests/test_{number}.py"},
                "created_at": at,
            }
            yield call | {"type": "tool_result", "status": "ok", "output": _text(rng)}


def payload(events: Iterator[dict[str, Any]] | Sequence[dict[str, Any]]) -> bytes:
    """Events as a Proctor JSONL body."""
    return b"".join(orjson.dumps(event) + b"\n" for event in events)


class Appender:
    """Appends new messages to one conversation, numbering them after the stored ones."""

    def __init__(self, name: str, stored: int, rng: random.Random) -> None:
        self.name = name
        self.next = stored
        self.rng = rng

    def body(self, count: int = 1) -> bytes:
        """``count`` new messages in one body."""
        events = []
        for _ in range(count):
            number = self.next
            self.next += 1
            events.append(
                {
                    "type": "message",
                    "conversation_id": self.name,
                    "message_id": f"m{number}",
                    "role": "user" if number % 2 == 0 else "assistant",
                    "text": _text(self.rng),
                }
            )
        return payload(events)


def populate(home: Path, rng: random.Random) -> None:
    """One conversation of each size (``size-N``) plus ``small-b`` (100), via the library."""
    from proctor.ingest import Intake
    from proctor.store import open_store

    store = open_store(home / "proctor.db")
    try:
        intake = Intake(store)
        for name, size in [*((f"size-{s}", s) for s in SIZES), ("small-b", 100)]:
            started = time.perf_counter()
            intake.events(payload(conversation_events(name, size, rng)), project="bench")
            print(f"stored {name}: {size} messages in {time.perf_counter() - started:.1f} s")
    finally:
        store.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(home: Path) -> Iterator[str]:
    """``proctor serve`` on a free loopback port over ``home``'s store; yields its URL."""
    port = _free_port()
    env = {
        **os.environ,
        "PROCTOR_HOME": str(home),
        "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
    }
    env.pop("PROCTOR_DATABASE_URL", None)
    env.pop("PROCTOR_API_TOKEN", None)
    command = [sys.executable, "-m", "proctor.cli.main", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("proctor serve did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def post(client: httpx.Client, body: bytes) -> float:
    """Seconds one intake request took; exits on anything but 200."""
    started = time.perf_counter()
    response = client.post(URL, content=body, headers=NDJSON)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"intake answered {response.status_code}: {response.text[:500]}")
    return elapsed


def append_latency(
    url: str, appenders: dict[int, Appender], appends: int
) -> dict[int, list[float]]:
    """(a): one-message appends per size, after three warm-up requests each."""
    samples: dict[int, list[float]] = {}
    with httpx.Client(base_url=url, timeout=600) as client:
        for size, appender in appenders.items():
            for _ in range(3):
                post(client, appender.body())
            samples[size] = [post(client, appender.body()) for _ in range(appends)]
    return samples


def overlapped(
    url: str, large: Appender, small: Appender, large_count: int, rounds: int
) -> tuple[list[float], list[float]]:
    """(b): per round, A's append starts, then B's; returns (A times, B times)."""
    a_times: list[float] = []
    b_times: list[float] = []
    with (
        httpx.Client(base_url=url, timeout=600) as a_client,
        httpx.Client(base_url=url, timeout=600) as b_client,
    ):
        for _ in range(rounds):
            a_body, b_body = large.body(large_count), small.body()
            sent = threading.Event()
            result: list[float] = []

            def send_a(
                body: bytes = a_body, flag: threading.Event = sent, into: list[float] = result
            ) -> None:
                flag.set()
                into.append(post(a_client, body))

            thread = threading.Thread(target=send_a)
            thread.start()
            sent.wait()
            time.sleep(0.02)  # let A's request reach the server before B's
            b_times.append(post(b_client, b_body))
            thread.join()
            a_times.append(result[0])
    return a_times, b_times


def alone(url: str, small: Appender, rounds: int) -> list[float]:
    """B's one-message append with nothing else in flight."""
    with httpx.Client(base_url=url, timeout=600) as client:
        return [post(client, small.body()) for _ in range(rounds)]


def main(argv: Sequence[str] | None = None) -> None:
    """Populate, serve, measure, print and (unless ``--no-write``) record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--appends", type=int, default=30, help="measured appends per size")
    parser.add_argument("--rounds", type=int, default=10, help="overlap rounds per kind")
    parser.add_argument("--large-messages", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--section",
        default="current",
        help="the section of bench/results/intake.md this run replaces (e.g. baseline)",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        populate(home, rng)
        appenders = {size: Appender(f"size-{size}", size, rng) for size in SIZES}
        small = Appender("small-b", 100, rng)
        with serving(home) as url:
            latency = append_latency(url, appenders, args.appends)
            b_alone = alone(url, small, args.rounds)
            big = appenders[SIZES[-1]]
            one_a, one_b = overlapped(url, big, small, 1, args.rounds)
            many_a, many_b = overlapped(url, big, small, args.large_messages, args.rounds)
    lines.append(
        f"(a) one-message append over HTTP, {args.appends} per size after 3 warm-up requests"
    )
    lines.append(f"{'stored messages':>16} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for size, samples in latency.items():
        lines.append(
            f"{size:>16,} {percentile(samples, 0.5):9.1f} {percentile(samples, 0.95):9.1f} "
            f"{max(samples) * 1000:9.1f}"
        )
    ratio = statistics.median(latency[SIZES[-1]]) / statistics.median(latency[SIZES[0]])
    lines.append(f"ratio p50 at {SIZES[-1]:,} / p50 at {SIZES[0]:,}: {ratio:.2f}x (target ≤ 3x)")
    lines.append(
        f"(b) one-message append to B (100 messages) while an append to A "
        f"({SIZES[-1]:,}+ messages) is in flight, {args.rounds} rounds each"
    )
    lines.append(f"{'':44} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    rows = [
        ("B alone", b_alone),
        ("A: one message", one_a),
        ("B while A appends one message", one_b),
        (f"A: {args.large_messages:,} messages in one request", many_a),
        (f"B while A appends {args.large_messages:,} messages", many_b),
    ]
    for label, samples in rows:
        lines.append(
            f"{label:44} {percentile(samples, 0.5):9.1f} {percentile(samples, 0.95):9.1f} "
            f"{max(samples) * 1000:9.1f}"
        )
    lines.append(f"total bench time {time.perf_counter() - started:.0f} s")
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        _write(report, args.section, argv)


def _write(report: str, section: str, argv: Sequence[str] | None) -> None:
    """Replace ``section`` of the results file, keeping the others (e.g. the baseline)."""
    command = " ".join(["python bench/intake.py", *(argv if argv is not None else sys.argv[1:])])
    machine = (
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}"
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    today = datetime.date.today().isoformat()
    body = (
        f"Machine: {machine}. Measured {today} at commit {commit or 'unknown'}.\n\n"
        f"```\n$ {command}\n{report}\n```\n"
    )
    sections = _sections(RESULTS.read_text() if RESULTS.exists() else "")
    sections[section] = body
    order = sorted(sections, key=lambda name: (name != "current", name))
    text = "# bench/intake.py results\n\n" + "\n".join(
        f"## {name}\n\n{sections[name]}" for name in order
    )
    RESULTS.write_text(text)
    print(f"wrote {RESULTS.relative_to(REPO)} (section {section})")


def _sections(text: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    name: str | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            name = line[3:].strip()
            sections[name] = ""
        elif name is not None:
            sections[name] += line
    return {key: value.strip("\n") + "\n" for key, value in sections.items()}


if __name__ == "__main__":
    main()
