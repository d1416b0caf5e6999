"""Scale-out (issue 9, STO-2): review-job throughput with 1, 2 and 4 workers; ingest on
PostgreSQL vs SQLite.

One run reports:

1. **Review jobs** — ``--reviews`` reviews, one per project (each its own scope), are
   claimed and queued exactly as ``POST /api/reviews`` queues them on PostgreSQL, then
   executed by 1, 2 and 4 ``proctor worker --concurrency 1`` processes (a fresh database
   each time). Every review reads its sources in ``--batches`` leaf calls plus one merge
   call to the scripted model server, which answers each call after a uniformly random
   300–800 ms (a hosted model's latency). Reported: wall time from the first review
   submitted (the workers already started and registered) to the last run finished,
   reviews/s, model calls/s and the speed-up over one worker. The work is waiting on the
   model, so the speed-up should approach the worker count.
2. **Ingest** — the shared real transcripts (``../shared/transcripts``) imported into a
   fresh SQLite file and a fresh PostgreSQL database: sources/s and MB/s.

Needs a PostgreSQL server: ``--postgres URL`` or ``PROCTOR_TEST_POSTGRES_URL`` (an admin URL;
``bash scripts/test-postgres.sh`` starts the machine's cluster and prints one) and the
``workers`` extra.

    python bench/scale.py
    python bench/scale.py --reviews 16 --batches 4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
PROCTOR = str(Path(sys.executable).with_name("proctor"))
os.environ.setdefault("PROCTOR_HOME", tempfile.mkdtemp(prefix="proctor-bench-home-"))
os.environ["PROCTOR_REVIEW_SLOTS"] = "64"

MERGE_ANSWER = {
    "summary": "The team ran its checks.",
    "changeDigest": "Checks ran.",
    "storyLines": [],
    "experiences": [],
}
LEAF_ANSWER = {
    "events": [],
    "entities": [
        {
            "id": "n1",
            "kind": "decision",
            "name": "Run the checks",
            "description": "The batch ran the project's checks.",
            "sourceReferenceIds": ["s1"],
        }
    ],
    "entityChanges": [],
    "relations": [],
    "summary": "One batch of checks.",
    "changeDigest": "",
    "openItems": [],
}


def machine() -> str:
    return (
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}"
    )


class Databases:
    """Fresh PostgreSQL databases under one admin URL, dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self.admin_url = admin_url
        self.made: list[str] = []

    def fresh(self) -> str:
        name = f"proctor_bench_{uuid.uuid4().hex[:10]}"
        with self._psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return f"{self.admin_url.rpartition('/')[0]}/{name}"

    def drop_all(self) -> None:
        with self._psycopg.connect(self.admin_url, autocommit=True) as admin:
            for name in self.made:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _project_file(folder: Path, project: str, steps: int) -> None:
    conversation = f"{project}-run"
    lines: list[dict[str, Any]] = [
        {"type": "header", "format": "proctor-jsonl", "version": 1},
        {"type": "conversation", "conversation_id": conversation, "project": project},
    ]
    for step in range(steps):
        at = f"2026-01-01T10:{step // 60:02d}:{step % 60:02d}Z"
        lines += [
            {"type": "message", "conversation_id": conversation, "message_id": f"m{step}",
             "role": "assistant", "text": f"Running check {step} of {project}.", "created_at": at},
            {"type": "tool_call", "conversation_id": conversation, "call_id": f"c{step}",
             "message_id": f"m{step}", "name": "shell",
             "arguments": {"command": f"make check-{step}"}, "created_at": at},
            {"type": "tool_result", "conversation_id": conversation, "call_id": f"c{step}",
             "status": "ok", "exit_code": 0, "output": f"check {step} passed",
             "completed_at": at},
        ]  # fmt: skip
    (folder / f"{project}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def review_throughput(
    databases: Databases, model: Any, workers: int, reviews: int, batches: int
) -> dict[str, Any]:
    """Queue ``reviews`` reviews and time ``workers`` worker processes through them."""
    from proctor.ingest import ingest
    from proctor.jobs import ensure_job_schema, queue_for
    from proctor.models import set_default_connection
    from proctor.review import ReviewRequest, begin_review, open_semantic_layer
    from proctor.store import open_store
    from proctor.store._review_store import slot_owner

    url = databases.fresh()
    store = open_store(url=url)
    corpus = Path(tempfile.mkdtemp(prefix="proctor-bench-scale-"))
    batch_size = 10  # sources per leaf call; a step is two sources (message, tool call)
    for n in range(reviews):
        _project_file(corpus, f"team-{n}", steps=batch_size * batches // 2)
    ingest(store, [corpus])
    store.save_connection(model.connection("scripted"))
    set_default_connection(store, "scripted")
    env = {**os.environ, "PROCTOR_DATABASE_URL": url}
    ensure_job_schema(url)
    processes = [
        subprocess.Popen(
            [PROCTOR, "worker", "--concurrency", "1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    runs: list[str] = []
    try:
        _wait_for_workers(url, workers)  # their start-up is not part of the throughput
        calls_before = len(model.requests)
        started = time.perf_counter()
        for n in range(reviews):  # what POST /api/reviews does on PostgreSQL
            semantic, _ = open_semantic_layer(store, None)
            request = ReviewRequest(project=f"team-{n}", batch_size=batch_size)
            run = begin_review(store, request, semantic=semantic)
            queue_for(store).submit_review(run, semantic, handed_by=slot_owner())
            runs.append(run.run_id)
        while True:
            statuses = [store.review_run(r).status for r in runs]
            if "running" not in statuses:
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        queue_for(store).close()
        store.close()
    calls = len(model.requests) - calls_before
    return {
        "workers": workers,
        "seconds": elapsed,
        "reviews": len(runs),
        "statuses": sorted(set(statuses)),
        "calls": calls,
    }


def _wait_for_workers(url: str, count: int) -> None:
    import psycopg

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with psycopg.connect(url) as connection:
            row = connection.execute("SELECT count(*) FROM procrastinate_workers").fetchone()
        if row is not None and row[0] >= count:
            return
        time.sleep(0.1)
    raise SystemExit(f"{count} workers did not start within 120 s")


def ingest_rate(url: str | None, corpus: list[Path]) -> dict[str, Any]:
    """Import the corpus into a fresh store (SQLite file when ``url`` is None)."""
    from proctor.ingest import ingest
    from proctor.store import open_store

    store = open_store(url=url) if url else open_store(Path(tempfile.mkdtemp()) / "proctor.db")
    size = sum(f.stat().st_size for p in corpus for f in p.rglob("*") if f.is_file())
    started = time.perf_counter()
    report = ingest(store, corpus, jobs=1)
    elapsed = time.perf_counter() - started
    store.close()
    return {"seconds": elapsed, "sources": report.sources_added, "mb": size / 1e6}


def synthetic_corpus(projects: int, steps: int) -> Path:
    """Proctor JSONL sessions: ``projects`` files of ``steps`` × (message, call, result)."""
    folder = Path(tempfile.mkdtemp(prefix="proctor-bench-ingest-"))
    for n in range(projects):
        _project_file(folder, f"ingest-{n}", steps)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default=os.environ.get("PROCTOR_TEST_POSTGRES_URL", ""))
    parser.add_argument("--reviews", type=int, default=12, help="reviews (one per project)")
    parser.add_argument("--batches", type=int, default=3, help="leaf calls per review")
    args = parser.parse_args()
    if not args.postgres:
        sys.exit("needs PostgreSQL: --postgres URL or PROCTOR_TEST_POSTGRES_URL")
    from proctor.review.semantic import MERGE_SYSTEM
    from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply

    rng = random.Random(9)

    def answer(request: Any) -> ScriptedReply:
        merge = request.text_of("system").strip() == MERGE_SYSTEM.strip()
        body = MERGE_ANSWER if merge else LEAF_ANSWER
        return ScriptedReply(content=body, stall_s=rng.uniform(0.3, 0.8))

    print(f"machine: {machine()}")
    databases = Databases(args.postgres)
    total = time.perf_counter()
    try:
        with ScriptedModelServer(responder=answer) as model:
            print(
                f"(1) review jobs: {args.reviews} reviews × ({args.batches} leaf + 1 merge) "
                "calls, model latency 300–800 ms per call, workers with --concurrency 1"
            )
            base = 0.0
            for workers in (1, 2, 4):
                row = review_throughput(databases, model, workers, args.reviews, args.batches)
                base = base or row["seconds"]
                print(
                    f"    {row['workers']} worker(s): {row['seconds']:.1f} s, "
                    f"{row['reviews'] / row['seconds']:.2f} reviews/s, "
                    f"{row['calls'] / row['seconds']:.2f} model calls/s, "
                    f"speed-up {base / row['seconds']:.2f}×, runs {row['statuses']}",
                    flush=True,
                )
        corpora = {
            "real Claude Code, Codex and Gemini CLI sessions (../shared/transcripts)": [
                SHARED / "transcripts/claude-code",
                SHARED / "transcripts/codex",
                SHARED / "transcripts/gemini-cli",
            ],
            "synthetic Proctor JSONL, 40 sessions × 300 steps": [synthetic_corpus(40, 300)],
        }
        print("(2) ingest, one process (jobs=1), into a fresh store:")
        for label, corpus in corpora.items():
            sqlite = ingest_rate(None, corpus)
            postgres = ingest_rate(databases.fresh(), corpus)
            print(f"    {label}: {sqlite['mb']:.1f} MB, {sqlite['sources']:,} sources")
            for name, row in (("SQLite", sqlite), ("PostgreSQL", postgres)):
                print(
                    f"      {name}: {row['seconds']:.2f} s, "
                    f"{row['sources'] / row['seconds']:,.0f} sources/s, "
                    f"{row['mb'] / row['seconds']:.2f} MB/s"
                )
    finally:
        databases.drop_all()
    print(f"total bench time {time.perf_counter() - total:.0f} s")


if __name__ == "__main__":
    main()
