"""Distributed jobs (STO-2, issue 9): ≥ 3 ``proctor worker`` processes on one PostgreSQL.

Reviews and supervision analyses across several scopes are submitted through a real
``proctor serve`` over HTTP while workers are killed with SIGKILL in the middle of review
jobs and replaced. At the end every review ran to completion exactly once (one
procrastinate job, one result), no graph event or finding is duplicated, and the
analyses of one target never overlapped.

Needs a PostgreSQL server: ``PROCTOR_TEST_POSTGRES_URL`` (an admin URL; ``bash
scripts/test-postgres.sh`` starts the machine's cluster and prints one).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from proctor._util.clock import utcnow
from proctor.models import set_default_connection
from proctor.store import open_store
from proctor.supervision import SessionSettings, enable_supervision, resolve_target
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply
from tests.loopback import free_port, serving

psycopg = pytest.importorskip("psycopg")
pytest.importorskip(
    "procrastinate", reason="needs the workers extra: pip install 'proctor[workers]'"
)

ADMIN_URL = os.environ.get("PROCTOR_TEST_POSTGRES_URL", "").strip()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(
        not ADMIN_URL,
        reason="no PostgreSQL: set PROCTOR_TEST_POSTGRES_URL "
        "(`bash scripts/test-postgres.sh` starts the local cluster and prints one)",
    ),
]

PROCTOR = str(Path(sys.executable).with_name("proctor"))
PROJECTS = [f"team-{n}" for n in range(5)]
ROUNDS = 3
"""Reviews per project; each round adds new steps first, so each review has work."""
STEPS = 30
"""Steps (message + shell call + result) a round adds to a project."""
WORKERS = 3
DEADLINE_S = 240.0
"""How long the whole test may take before work counts as stuck: generous, since a 2-core
machine shared with other suites and browsers took over 75 s for one project's reviews."""
NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture
def database_url() -> Iterator[str]:
    """A fresh PostgreSQL database, dropped afterwards."""
    name = f"proctor_jobs_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = ADMIN_URL.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _steps(project: str, round_no: int) -> bytes:
    """One round of agent work: a message, a shell command and its result per step."""
    lines: list[dict[str, Any]] = []
    conversation = f"{project}-run"
    for step in range(STEPS):
        key = f"r{round_no}s{step}"
        at = f"2026-01-0{round_no + 1}T10:{step // 60:02d}:{step % 60:02d}Z"
        lines += [
            {
                "type": "message",
                "conversation_id": conversation,
                "message_id": f"m-{key}",
                "role": "assistant",
                "text": f"Running check {key} for {project}.",
                "created_at": at,
            },
            {
                "type": "tool_call",
                "conversation_id": conversation,
                "call_id": f"c-{key}",
                "message_id": f"m-{key}",
                "name": "shell",
                "arguments": {"command": f"make check-{key}"},
                "created_at": at,
            },
            {
                "type": "tool_result",
                "conversation_id": conversation,
                "call_id": f"c-{key}",
                "status": "ok" if step % 7 else "error",
                "exit_code": 0 if step % 7 else 1,
                "output": f"check {key} done",
                "completed_at": at,
            },
        ]
    lines.append(
        {
            "type": "message",
            "conversation_id": conversation,
            "message_id": f"m-r{round_no}-done",
            "role": "assistant",
            "text": f"Round {round_no} of {project} is done.",  # ends the turn: after_reply
            "created_at": f"2026-01-0{round_no + 1}T11:00:00Z",
        }
    )
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


class Workers:
    """``proctor worker`` processes: start, kill with SIGKILL, replace."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.live: dict[int, subprocess.Popen[bytes]] = {}
        self.killed = 0

    def start(self) -> None:
        with (self.logs / f"worker-{len(self.live) + self.killed}.log").open("wb") as log:
            process = subprocess.Popen(
                [PROCTOR, "worker", "--concurrency", "2"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.live[process.pid] = process

    def kill(self, pid: int) -> bool:
        process = self.live.pop(pid, None)
        if process is None:
            return False
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        self.killed += 1
        return True

    def stop_all(self) -> None:
        for process in self.live.values():
            process.terminate()
        for process in self.live.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.live.clear()


def _pid_of_worker_executing_a_review(url: str, workers: Workers) -> int | None:
    """The pid of one of our workers that holds a review slot (mid-run), if any."""
    owners = _rows(url, "SELECT owner FROM review_slot WHERE run_id IS NOT NULL")
    pids = [int(owner.rpartition(":")[2]) for (owner,) in owners if owner]
    busy = [pid for pid in pids if pid in workers.live]
    return random.choice(busy) if busy else None


def _prepare(url: str, model_url_server: ScriptedModelServer) -> None:
    """A model connection for the analyses, the app on, every project's conversation supervised."""
    store = open_store(url=url)
    try:
        store.save_connection(model_url_server.connection("scripted"))
        set_default_connection(store, "scripted")
        store.set_setting("app.enabled", True)
    finally:
        store.close()


def _supervise_all(url: str) -> None:
    store = open_store(url=url)
    try:
        for project in PROJECTS:
            target = resolve_target(store, f"pj:{project}-run")
            enable_supervision(store, target, SessionSettings(throttle_seconds=0), now=utcnow())
    finally:
        store.close()


def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return [tuple(row) for row in connection.execute(query).fetchall()]


def test_killed_workers_leave_every_review_and_analysis_done_exactly_once(
    database_url: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    port = free_port()
    env = {
        **os.environ,
        "PROCTOR_DATABASE_URL": database_url,
        "PROCTOR_HOME": str(tmp_path / "home"),
        "PROCTOR_WORKER_STALL_SECONDS": "3",
        "PROCTOR_REVIEW_SLOTS": "16",
    }
    workers = Workers(env, tmp_path)
    reply = ScriptedReply(content={"decisions": []}, stall_s=0.05)
    with ScriptedModelServer(responder=lambda _request: reply) as model:
        _prepare(database_url, model)
        with (
            serving([PROCTOR, "serve", "--no-heartbeat", "--port", str(port)], env, port),
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as api,
        ):
            for project in PROJECTS:  # the conversations exist before they are supervised
                api.post(
                    "/api/intake/events", content=_steps(project, 0), headers=NDJSON,
                    params={"project": project},
                ).raise_for_status()  # fmt: skip
            _supervise_all(database_url)
            for _ in range(WORKERS):
                workers.start()
            try:
                runs = _submit_and_kill(api, database_url, workers, started)
                _wait_for_queue(database_url, runs, api, started)
            finally:
                workers.stop_all()
        analyses_requested = sum(1 for r in model.requests)

    assert workers.killed >= 2, "the test must kill workers in the middle of review jobs"
    # Every review completed, once: one succeeded job, one result, per run.
    assert len(runs) == len(PROJECTS) * ROUNDS
    statuses = dict(_rows(database_url, "SELECT run_id, status FROM review_runs"))
    assert {statuses[r] for r in runs} == {"completed"}, statuses
    assert set(statuses) == set(runs), "no review run was started twice"
    results = _rows(database_url, "SELECT run_id, count(*) FROM results GROUP BY run_id")
    assert sorted(r for r, _ in results) == sorted(runs)
    assert {count for _, count in results} == {1}
    jobs = _rows(
        database_url,
        "SELECT args->>'run_id', status, attempts FROM procrastinate_jobs "
        "WHERE task_name = 'proctor.review'",
    )
    assert sorted(run for run, _, _ in jobs) == sorted(runs), "one job per run"
    assert {status for _, status, _ in jobs} == {"succeeded"}
    assert any(attempts > 1 for _, _, attempts in jobs), "a killed job was retried"
    # Nothing duplicated: graph events, checkpoints, findings.
    duplicated_events = _rows(
        database_url,
        "SELECT conversation_id, kind, title, occurred_at FROM graph_events "
        "GROUP BY conversation_id, kind, title, occurred_at HAVING count(*) > 1",
    )
    assert duplicated_events == []
    assert _rows(database_url, "SELECT count(*) FROM graph_events")[0][0] > 0
    assert _rows(database_url, "SELECT count(*) - count(DISTINCT key) FROM findings") == [(0,)]
    checkpoints = _rows(
        database_url,
        "SELECT count(*), count(DISTINCT (source_type, source_id)) FROM review_checkpoints "
        "WHERE stage = 'structural'",
    )[0]
    sources = _rows(database_url, "SELECT count(*) FROM sources")[0][0]
    assert checkpoints[0] == checkpoints[1] == sources, "every source read once, at last"
    # Analyses: every analysis job succeeded; runs of one target never overlapped.
    analysis_jobs = _rows(
        database_url,
        "SELECT status FROM procrastinate_jobs WHERE task_name = 'proctor.supervise'",
    )
    assert analysis_jobs
    assert {status for (status,) in analysis_jobs} == {"succeeded"}
    supervision = _rows(
        database_url,
        "SELECT target_id, started_at, finished_at, status FROM supervision_runs "
        "ORDER BY target_id, started_at",
    )
    assert analyses_requested >= len(PROJECTS), supervision
    for before, after in itertools.pairwise(supervision):
        if before[0] == after[0] and before[2] is not None:
            assert before[2] <= after[1], f"two analyses of {before[0]} overlapped"
    assert time.monotonic() - started < 90


def _submit_and_kill(api: httpx.Client, url: str, workers: Workers, started: float) -> list[str]:
    """Each project: ROUNDS × (new steps, a review); kill busy workers along the way."""
    runs: list[str] = []
    last: dict[str, str] = {}
    rounds = dict.fromkeys(PROJECTS, 0)
    kills_wanted = 3
    while any(n < ROUNDS for n in rounds.values()) or workers.killed < kills_wanted:
        assert time.monotonic() - started < DEADLINE_S, _stuck(url, rounds, last)
        for project in PROJECTS:
            if rounds[project] >= ROUNDS:
                continue
            if project in last:
                run = api.get(f"/api/reviews/{last[project]}").json()
                interrupted = (run.get("error") or "").startswith("interrupted")  # resumed
                assert run["status"] not in ("cancelled", "paused"), run
                assert run["status"] != "failed" or interrupted, run
                if run["status"] != "completed":
                    continue  # its scope is still busy: wait, as a person would
            if rounds[project] > 0:
                api.post(
                    "/api/intake/events", content=_steps(project, rounds[project]),
                    headers=NDJSON, params={"project": project},
                ).raise_for_status()  # fmt: skip
            answer = api.post(
                "/api/reviews", json={"project": project, "use_model": False, "batch_size": 5}
            )
            if answer.status_code == 409:
                continue
            assert answer.status_code == 202, answer.text
            last[project] = answer.json()["run_id"]
            runs.append(last[project])
            rounds[project] += 1
        if workers.killed < kills_wanted:
            pid = _pid_of_worker_executing_a_review(url, workers)
            if pid is not None and workers.kill(pid):
                workers.start()
        time.sleep(0.05)
    return runs


def _stuck(url: str, rounds: dict[str, int], last: dict[str, str]) -> str:
    """What the reviews still waited for: each project's last run and its job."""
    waiting = {
        project: _rows(
            url,
            "SELECT r.status, r.error, j.status, j.attempts FROM review_runs r "
            "LEFT JOIN procrastinate_jobs j ON j.args->>'run_id' = r.run_id "
            f"WHERE r.run_id = '{run_id}'",
        )
        for project, run_id in last.items()
    }
    return f"reviews stuck: rounds {rounds}; last run and job per project {waiting}"


def _wait_for_queue(url: str, runs: list[str], api: httpx.Client, started: float) -> None:
    """Until every run finished and no job is waiting or running."""
    while time.monotonic() - started < DEADLINE_S:
        open_jobs = _rows(
            url,
            "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing') "
            "AND task_name IN ('proctor.review', 'proctor.supervise')",
        )[0][0]
        statuses = {api.get(f"/api/reviews/{run}").json()["status"] for run in runs}
        if open_jobs == 0 and statuses <= {"completed", "no_change", "failed", "cancelled"}:
            return
        time.sleep(0.2)
