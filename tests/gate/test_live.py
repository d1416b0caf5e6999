"""The server's live gate: history advanced by what each log gained, same answers as reading it whole.

The reference is what the server did before: on every request read the whole history
(``load_history``: store plus transcript file) and feed a ``GateService`` what it had not
seen. ``LiveGate`` must feed the same events in the same order and decide the same, while
reading only the lines the log gained. Real Claude Code sessions from ``../shared`` are
replayed line by line, one request per ``tool_use`` (and, for parallel calls, one request
per call of a batch of assistant lines written before any hook ran).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from proctor.gate import GateRequest, GateService, LiveGate, load_history
from proctor.rules import DEFAULT_POLICY, GateDecision
from tests.conftest import TRANSCRIPTS_DIR

SESSIONS = [
    "claude-code/claude-code-log/real_projects/-experiments-worktrees/"
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "claude-code/claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/"
    "71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl",
    # A sub-agent's own log: its fragments are planned as an agent file.
    "claude-code/claude-code-log/real_projects/-experiments-worktrees/"
    "ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a36efb2a1231c41e2.jsonl",
]


def _calls(line: bytes, session: str) -> Iterator[GateRequest]:
    try:
        record = json.loads(line)
    except ValueError:
        return
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use" and "id" in block:
            yield GateRequest(
                conversation_id=f"cc:session:{record.get('sessionId') or session}",
                tool_name=block["name"],
                tool_input=block.get("input"),
                call_id=block["id"],
                call_source_id=f"cc:tool:{block['id']}",
                transcript_path=session,
                transcript_format="claude_code",
            )


def _replay(source: Path, target: Path, *, batched: bool) -> tuple[int, LiveGate]:
    """Grow ``target`` like ``source``; at each call compare the live gate to a whole read."""
    lines = source.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"")
    whole, live = GateService(policy=DEFAULT_POLICY), LiveGate(policy=DEFAULT_POLICY)
    asked = 0
    waiting: list[bytes] = []
    for number, line in enumerate(lines):
        with target.open("ab") as handle:
            handle.write(line)
        waiting.append(line)
        following = lines[number + 1] if number + 1 < len(lines) else b""
        if batched and b'"assistant"' in line and b'"assistant"' in following:
            continue  # parallel calls: every line of the turn is written before the hooks run
        for written in waiting:
            for request in _calls(written, str(target)):
                history = load_history(request, None)
                whole.observe(request.conversation_id, history.events, context=history.context)
                expected = whole.decide(request)
                got = live.try_decide(request)  # as the server asks: quick first
                got = got if got is not None else live.decide(request, None)
                assert _answer(got) == _answer(expected), (source.name, number)
                conversation = request.conversation_id
                assert _fed(live.service, conversation) == _fed(whole, conversation), number
                asked += 1
        waiting = []
    return asked, live


def _answer(decision: GateDecision) -> tuple[str, str | None, str]:
    return decision.decision, decision.rule, decision.reason


def _fed(service: GateService, conversation_id: str) -> list[tuple[str, str]]:
    held = service._conversations[conversation_id]
    return [(event.kind, event.source_id) for event in held.events]


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("batched", [False, True], ids=["one-call-per-turn", "parallel-calls"])
@pytest.mark.parametrize("session", SESSIONS, ids=lambda s: Path(s).stem[:8])
def test_a_growing_session_is_answered_as_if_its_history_were_read_whole_each_time(
    tmp_path: Path, session: str, batched: bool
) -> None:
    source = TRANSCRIPTS_DIR / session
    asked, live = _replay(source, tmp_path / source.name, batched=batched)
    assert asked >= 2
    assert live.counters.full_reads == 1


@pytest.mark.shared
def test_a_request_reads_only_what_the_log_gained_since_the_last_one(tmp_path: Path) -> None:
    lines = (TRANSCRIPTS_DIR / SESSIONS[0]).read_bytes().splitlines(keepends=True)
    log = tmp_path / Path(SESSIONS[0]).name
    log.write_bytes(b"".join(lines[:-40]))
    live = LiveGate(policy=DEFAULT_POLICY)
    request = _bash(log, "first")
    live.decide(request, None)
    for line in lines[-40:]:
        with log.open("ab") as handle:
            handle.write(line)
        live.decide(_bash(log, "again"), None)
    assert live.counters.full_reads == 1
    # Each line is read once, plus the earlier line a result completes: far from the size
    # the history would cost read whole on each of the 40 requests.
    assert live.counters.bytes_parsed <= 3 * len(b"".join(lines[-40:]))
    assert live.service.events_seen(request.conversation_id) == len(
        load_history(_bash(log, "again"), None).events
    )


def _bash(log: Path, name: str) -> GateRequest:
    return GateRequest(
        conversation_id="cc:session:growing",
        tool_name="Bash",
        tool_input={"command": "git status"},
        call_id=f"toolu_{name}",
        transcript_path=str(log),
        transcript_format="claude_code",
    )


@pytest.mark.shared
@pytest.mark.parametrize("change", ["replaced", "cut-shorter", "rewritten-same-size"])
def test_a_log_replaced_or_rewound_is_read_again_from_the_start(
    tmp_path: Path, change: str
) -> None:
    lines = (TRANSCRIPTS_DIR / SESSIONS[0]).read_bytes().splitlines(keepends=True)
    log = tmp_path / Path(SESSIONS[0]).name
    log.write_bytes(b"".join(lines))
    live = LiveGate(policy=DEFAULT_POLICY)
    live.decide(_bash(log, "first"), None)
    kept = b"".join(lines[: len(lines) // 2])
    if change == "replaced":
        other = tmp_path / "other.jsonl"
        other.write_bytes(kept)
        os.replace(other, log)  # a new file (inode) at the same path
    elif change == "cut-shorter":
        log.write_bytes(kept)
    else:
        data = log.read_bytes()
        first = data.index(b"\n") + 1
        log.write_bytes(data[:first].replace(b"e", b"E") + data[first:])
        os.utime(log, ns=(1, 1))  # another modification time, same size
    live.decide(_bash(log, "after"), None)
    assert live.counters.full_reads == 2
    expected = load_history(_bash(log, "after"), None).events
    assert _fed(live.service, "cc:session:growing") == [(e.kind, e.source_id) for e in expected]


def test_the_least_recently_used_session_is_dropped_and_read_again_when_asked(
    tmp_path: Path,
) -> None:
    live = LiveGate(policy=DEFAULT_POLICY, max_sessions=1)
    first = GateRequest(conversation_id="cc:session:a", tool_name="Read", tool_input={})
    second = GateRequest(conversation_id="cc:session:b", tool_name="Read", tool_input={})
    live.decide(first, None)
    live.decide(second, None)
    assert len(live) == 1
    assert "cc:session:a" not in live.service
    live.decide(first, None)
    assert "cc:session:a" in live.service
    assert live.counters.full_reads == 3


@pytest.mark.shared
def test_requests_from_many_threads_get_the_answers_of_one_thread(tmp_path: Path) -> None:
    source = TRANSCRIPTS_DIR / SESSIONS[0]
    logs = []
    for number in range(4):
        log = tmp_path / str(number) / source.name
        log.parent.mkdir()
        log.write_bytes(source.read_bytes())
        logs.append(log)
    requests = [
        _bash(log, str(n)).model_copy(update={"conversation_id": f"cc:session:{n}"})
        for n, log in enumerate(logs)
    ]
    alone = LiveGate(policy=DEFAULT_POLICY)
    expected = [_answer(alone.decide(r, None)) for r in requests]
    shared = LiveGate(policy=DEFAULT_POLICY)
    answers: dict[int, list[tuple[str, str | None, str]]] = {}

    def ask(n: int) -> None:
        answers[n] = [_answer(shared.decide(requests[n % 4], None)) for _ in range(3)]

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answers[n] == [expected[n % 4]] * 3 for n in range(8))
    assert shared.counters.full_reads == 4


@pytest.mark.shared
def test_the_quick_path_answers_only_a_held_session_whose_log_grew_a_little(
    tmp_path: Path,
) -> None:
    lines = (TRANSCRIPTS_DIR / SESSIONS[0]).read_bytes().splitlines(keepends=True)
    log = tmp_path / Path(SESSIONS[0]).name
    log.write_bytes(b"".join(lines[:-3]))
    live, whole = LiveGate(policy=DEFAULT_POLICY), LiveGate(policy=DEFAULT_POLICY)
    assert live.try_decide(_bash(log, "a")) is None  # not held yet: read whole elsewhere
    live.decide(_bash(log, "a"), None)
    with log.open("ab") as handle:
        handle.write(lines[-3])
    quick = live.try_decide(_bash(log, "b"))
    assert quick is not None
    assert _answer(quick) == _answer(whole.decide(_bash(log, "b"), None))
    assert live.counters.full_reads == 1
    with log.open("ab") as handle:
        handle.write(lines[-2])
    assert live.try_decide(_bash(log, "c"), max_growth=len(lines[-2]) - 1) is None
    log.write_bytes(b"".join(lines[:10]))  # cut shorter: only a whole read will do
    assert live.try_decide(_bash(log, "d")) is None
    assert live.counters.full_reads == 1


def _turn(number: int, parent: str) -> tuple[bytes, bytes, GateRequest]:
    """One agent turn of a synthetic Claude Code session: a Bash call, then its result."""
    call = f"toolu_{number:04d}"
    stamp = f"2026-01-01T{number // 3600:02d}:{number // 60 % 60:02d}:{number % 60:02d}"
    envelope = {"sessionId": "growing", "isSidechain": False}
    asked = {
        **envelope,
        "type": "assistant",
        "uuid": f"a-{number}",
        "parentUuid": parent,
        "timestamp": f"{stamp}.000Z",
        "message": {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "Bash",
                    "input": {"command": f"ls src/part{number}"},
                }
            ],
        },
    }
    answered = {
        **envelope,
        "type": "user",
        "uuid": f"u-{number}",
        "parentUuid": f"a-{number}",
        "timestamp": f"{stamp}.500Z",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call, "content": f"module{number}.py"}
            ],
        },
    }
    request = GateRequest(
        conversation_id="cc:session:growing",
        tool_name="Bash",
        tool_input={"command": f"ls src/part{number}"},
        call_id=call,
        call_source_id=f"cc:tool:{call}",
        transcript_format="claude_code",
    )
    return (json.dumps(asked) + "\n").encode(), (json.dumps(answered) + "\n").encode(), request


def _work_per_request(folder: Path, history: int, asked: int = 8) -> tuple[float, float]:
    """Python calls and transcript bytes per quick decision, after ``history`` turns."""
    log = folder / "growing.jsonl"
    start = {
        "sessionId": "growing",
        "isSidechain": False,
        "type": "user",
        "uuid": "u-start",
        "parentUuid": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "List the parts."},
    }
    written = [(json.dumps(start) + "\n").encode()]
    parent = "u-start"
    for number in range(history):
        call, result, _ = _turn(number, parent)
        written += [call, result]
        parent = f"u-{number}"
    call, result, request = _turn(history, parent)
    log.write_bytes(b"".join(written) + call)
    live = LiveGate(policy=DEFAULT_POLICY)
    live.decide(request.model_copy(update={"transcript_path": str(log)}), None)
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    parsed = live.counters.bytes_parsed
    for number in range(history + 1, history + 1 + asked):
        call, next_result, request = _turn(number, f"u-{number - 1}")
        with log.open("ab") as handle:
            handle.write(result + call)  # the last call's result, then the next call
        result = next_result
        asking = request.model_copy(update={"transcript_path": str(log)})
        sys.setprofile(count)
        try:
            decided = live.try_decide(asking)
        finally:
            sys.setprofile(None)
        assert decided is not None  # the quick path: no whole read
    assert live.counters.full_reads == 1
    return calls / asked, (live.counters.bytes_parsed - parsed) / asked


def test_a_decision_costs_what_the_log_gained_not_what_the_session_holds(tmp_path: Path) -> None:
    # The same growth after 10 and after 400 turns: the live path (reading the new lines,
    # feeding their events, the rules' decision) must not do more for the longer session.
    # Counted, not timed: every Python and C function call of `try_decide`.
    (tmp_path / "short").mkdir()
    (tmp_path / "long").mkdir()
    short_calls, short_bytes = _work_per_request(tmp_path / "short", 10)
    long_calls, long_bytes = _work_per_request(tmp_path / "long", 400)
    assert long_bytes <= short_bytes * 1.05
    assert long_calls <= short_calls * 1.1, (short_calls, long_calls)


def test_a_new_live_gate_removes_the_scratch_folders_of_stopped_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proctor.gate import _live

    monkeypatch.setattr(_live, "_memory_folder", lambda: str(tmp_path))
    stopped = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)  # fmt: skip
    left_behind = tmp_path / f"proctor-gate-{stopped.stdout.strip()}-x1y2"
    (left_behind / "3").mkdir(parents=True)  # a killed server's folder, a fragment inside
    running = tmp_path / f"proctor-gate-{os.getppid()}-a1b2"  # a live process's: kept
    running.mkdir()
    unrelated = tmp_path / "proctor-gate-kept"
    unrelated.mkdir()

    live = LiveGate()
    try:
        own = [p for p in tmp_path.iterdir() if p.name.startswith(f"proctor-gate-{os.getpid()}-")]
        assert not left_behind.exists()
        assert running.is_dir() and unrelated.is_dir()
        assert len(own) == 1 and own[0].is_dir()
    finally:
        live.close()
    assert not own[0].exists()
