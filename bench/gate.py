"""Gate decision latency and whole-trace rule evaluation, Proctor vs. Invariant's analyzer.

On the AgentDojo traces in ``../shared/datasets/agentdojo/`` (read with the AgentDojo
adapter and ``prepare_bundle``, as ``proctor ingest`` would), in one run:

(a) the gate in process: every trace is fed event by event to a ``GateService``; before
    each tool call is observed, ``decide`` is timed on it (p50/p99 per decision);
(b) the gate as Claude Code runs it: ``proctor gate`` as a process with a ``PreToolUse``
    payload on stdin, against real Claude Code sessions imported into a temporary store
    (the transcript file is read too); p50/p99 over a few dozen calls; deciding alone
    (``PROCTOR_GATE_DAEMON=0``: the warm gate process is measured in (e));
(c) whole-trace evaluation: ``check_trace`` with every built-in rule, per trace;
(d) Invariant's analyzer (``invariant-ai``, ``LocalPolicy``) on the same traces, converted
    to the OpenAI message list it reads, with an equivalent flow rule: a tool output that
    addresses the agent, followed by a tool call that uses a value from it. Traces it
    refuses (its default limit of 100 checking cycles) or fails on are counted.

(e) the hook two ways: the command hook's CPU (``getrusage`` of the child) against
    ``python -S -c pass`` in alternating runs, forwarding to a running ``proctor serve``
    (``python -m proctor.gate``, ``proctor gate``) and deciding alone: on an unchanged log
    (from the state the previous process kept), with nothing kept (as before the hook kept
    anything), and on a copy of the log gaining its next lines before each call (as in a
    real session); beside them a process importing the rules as the hook does and
    nothing else, the least deciding alone can cost while it imports them; through the
    warm gate process (no server: the first hook starts it), ``python -m proctor.gate``
    and ``proctor gate`` on the same payload and on a log growing as above: the hook's CPU,
    the warm process's CPU per call (``/proc/<pid>/schedstat`` before and after each call)
    and the wall time per call, the growing log's answers compared with the alone rows'
    call by call; the http hook's latency on a session log growing line by line
    (target p99 ≤ 10 ms), the bench's own garbage collector paused inside each timed
    request (its collections walk every trace this process loaded; a hook's caller carries
    none of them), and the server's CPU around each request (every thread's schedstat);
(f) the same decisions: every AgentDojo call decided in process as in (a) and by the
    server's ``LiveGate`` reading the run's prefix as a transcript file.

Every timing is ``time.perf_counter_ns`` after a warm-up pass; nothing is tuned to the
traces. (c) and (d) run in alternating rounds (``--passes``, one pass of each per round), and
the throughput ratio is the median of the rounds' ratios, so a slow moment of a shared
machine does not favour either side. Proctor's process-wide memos (tool names, normalised
outputs) are emptied before each of its passes. Targets (issue): gate p99 ≤ 2 ms in process; whole-trace p99 ≤ 1.2 ms and ≥ 10×
Invariant's rate, with no trace refused.

    pip install -e '.[bench]'
    python bench/gate.py                # writes bench/results/gate.md
    python bench/gate.py --hook-calls 60 --no-write
    python bench/gate.py --only c,d    # whole-trace rows only (never writes)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROCTOR_GATE = [str(Path(sys.executable).with_name("proctor")), "gate"]
"""``proctor gate`` as a hook runs it: the installed executable (its entry point, not ``-m``)."""
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
AGENTDOJO = SHARED / "datasets" / "agentdojo"
SESSIONS = {
    "small (13 events)": SHARED / "transcripts/claude-code/claude-code-log/real_projects/"
    "-Users-dain-workspace-claude-code-log-sample/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl",
    "large (2.7 MB log)": SHARED
    / "transcripts/claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
}
INVARIANT_RULE = r"""
raise "tool output addressed to the agent, then a call using a value from it" if:
    (out: ToolOutput) -> (call: ToolCall)
    match("(?is).*(ignore (all |any )?(previous|prior|above) instructions|<information>|important message|to you, |note to the (ai|assistant)|before you (can )?(solve|complete|continue)|do not tell the user)", out.content)
    (value: str) in call.function.arguments
    len(value) >= 6
    value in out.content
"""
LEAD_INVARIANT = (
    "lead's earlier measurement of Invariant: p50 0.84 ms, p99 12.3 ms, 491 traces/s, 5.5 % refused"
)


def percentile(samples: Sequence[int], q: float) -> float:
    """The q-quantile (0–1) of nanosecond samples, in milliseconds (nearest rank)."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[rank] / 1e6


def load_traces() -> list[Any]:
    """Every AgentDojo trace, prepared and ordered as the rules see it."""
    from proctor.rules import Trace
    from proctor.sources import prepare_bundle, read_paths
    from proctor.transcript import ConversationBundle

    files = sorted(AGENTDOJO.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no AgentDojo traces under {AGENTDOJO}; set PROCTOR_SHARED_DIR")
    return [
        Trace.from_bundle(prepare_bundle(item).bundle)
        for item in read_paths(files, format_name="agentdojo")
        if isinstance(item, ConversationBundle)
    ]


def gate_in_process(traces: Sequence[Any], warmup: int) -> tuple[list[int], int]:
    """(a): decide on every call before observing it. Returns samples and denials."""
    from proctor.gate import GateRequest, GateService, decide
    from proctor.rules import DEFAULT_POLICY

    def run(batch: Sequence[Any], samples: list[int] | None) -> int:
        service = GateService(policy=DEFAULT_POLICY)
        denied = 0
        for trace in batch:
            conversation_id = trace.context.conversation_id
            service.observe(conversation_id, (), context=trace.context)
            for event in trace.events:
                if event.kind == "call" and event.call is not None:
                    request = GateRequest(
                        conversation_id=conversation_id,
                        tool_name=event.call.name,
                        tool_input=event.call.arguments,
                        call_source_id=event.call.source_id,
                    )
                    started = time.perf_counter_ns()
                    decision = decide(request, service=service)
                    elapsed = time.perf_counter_ns() - started
                    if samples is not None:
                        samples.append(elapsed)
                    denied += decision.decision == "deny"
                service.observe(conversation_id, (event,))
        return denied

    run(traces[:warmup], None)
    samples: list[int] = []
    return samples, run(traces, samples)


def whole_traces(traces: Sequence[Any], passes: int, warmup: int) -> tuple[list[int], int, int]:
    """(c): ``check_trace`` per trace. Returns samples, failures and traces with findings."""
    from proctor.rules import DEFAULT_POLICY, check_trace

    for trace in traces[:warmup]:
        check_trace(trace, DEFAULT_POLICY)
    samples: list[int] = []
    failed = flagged = 0
    for number in range(passes):
        clear_caches()  # a later pass must not ride on what the earlier one memoised
        for trace in traces:
            started = time.perf_counter_ns()
            try:
                found = check_trace(trace, DEFAULT_POLICY)
            except Exception:
                failed += 1
                continue
            samples.append(time.perf_counter_ns() - started)
            if number == 0:
                flagged += any(f.rule == "injection_then_action" for f in found)
    return samples, failed, flagged


def clear_caches() -> None:
    """Empty Proctor's process-wide memos (``functools.lru_cache``): tool names, titles,
    normalised outputs. Within a pass, traces that repeat a text still share them."""
    import functools

    for name, module in list(sys.modules.items()):
        if name.startswith("proctor.") and module is not None:
            for value in vars(module).values():
                if isinstance(value, functools._lru_cache_wrapper):
                    value.cache_clear()


def openai_messages(trace: Any) -> list[dict[str, Any]]:
    """A trace as the OpenAI chat message list Invariant reads (call ids made unique)."""
    messages: list[dict[str, Any]] = []
    ids: dict[str, str] = {}
    for event in trace.events:
        if event.kind == "message" and event.message is not None:
            messages.append({"role": event.message.role, "content": event.message.text or ""})
        elif event.kind == "call" and event.call is not None:
            call_id = ids.setdefault(event.call.source_id, f"call_{len(ids)}")
            arguments = event.call.arguments if isinstance(event.call.arguments, dict) else {}
            tool_call = {
                "id": call_id,
                "type": "function",
                "function": {"name": event.call.name, "arguments": arguments},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(tool_call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [tool_call]})
        elif event.kind == "result" and event.call is not None:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": ids[event.call.source_id],
                    "content": event.call.result_text or "",
                }
            )
    return messages


def invariant(traces: Sequence[Any], warmup: int) -> tuple[list[int], int, int, int, str]:
    """(d): Invariant's analyzer per trace. Returns samples, refused, errors, flagged, version."""
    from importlib.metadata import version

    from invariant.analyzer import LocalPolicy

    # Invariant's evaluation tasks log every refused check; keep the table readable.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    policy = LocalPolicy.from_string(INVARIANT_RULE)
    inputs = [openai_messages(trace) for trace in traces]
    for messages in inputs[:warmup]:
        with contextlib.suppress(Exception):  # counted in the measured pass
            policy.analyze(messages)
    samples: list[int] = []
    refused = errors = flagged = 0
    for messages in inputs:
        started = time.perf_counter_ns()
        try:
            result = policy.analyze(messages)
        except RuntimeError as exc:
            samples.append(time.perf_counter_ns() - started)
            refused += "Maximum checking cycles exceeded" in str(exc)
            errors += "Maximum checking cycles exceeded" not in str(exc)
            continue
        except Exception:
            samples.append(time.perf_counter_ns() - started)
            errors += 1
            continue
        samples.append(time.perf_counter_ns() - started)
        flagged += bool(result.errors)
    return samples, refused, errors, flagged, version("invariant-ai")


def hook_processes(calls: int) -> dict[str, list[int]]:
    """(b): ``proctor gate`` processes against imported real sessions, per session size."""
    results: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="proctor-gate-bench-") as scratch:
        root = Path(scratch)
        # Deciding alone, as before the warm gate process ((e) measures that one).
        env = {**os.environ, "PROCTOR_HOME": str(root / "home"), "PROCTOR_GATE_DAEMON": "0"}
        project = root / "project"
        project.mkdir()
        for label, source in SESSIONS.items():
            if not source.exists():
                continue
            session_id = _first_session_id(source)
            transcript = root / "logs" / label.split()[0] / f"{session_id}.jsonl"
            transcript.parent.mkdir(parents=True)
            transcript.write_bytes(source.read_bytes())
            subprocess.run(
                [sys.executable, "-m", "proctor.cli.main", "ingest", str(transcript)],
                env=env,
                check=True,
                capture_output=True,
            )
            payload = {
                "session_id": session_id,
                "transcript_path": str(transcript),
                "cwd": str(project),
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git status --short", "description": "Show changes"},
                "tool_use_id": "toolu_01BenchGateCall",
            }
            data = json.dumps(payload).encode()
            samples: list[int] = []
            for number in range(calls + 2):  # two warm-up calls (page cache, .pyc files)
                started = time.perf_counter_ns()
                done = subprocess.run(
                    [sys.executable, "-m", "proctor.cli.main", "gate"],
                    input=data,
                    env=env,
                    capture_output=True,
                    check=False,
                )
                elapsed = time.perf_counter_ns() - started
                if done.returncode != 0:
                    raise SystemExit(f"proctor gate failed: {done.stderr.decode().strip()}")
                if number >= 2:
                    samples.append(elapsed)
            results[f"proctor gate process, {label} session"] = samples
        floor: list[int] = []
        for _ in range(calls // 2):
            started = time.perf_counter_ns()
            subprocess.run([sys.executable, "-c", "import proctor.cli.main"], check=True)
            floor.append(time.perf_counter_ns() - started)
        results["python -c 'import proctor.cli.main' (startup floor)"] = floor
    return results


def _serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """``proctor serve`` on ``port`` in ``env``'s home; returns once it listens."""
    import socket

    server = subprocess.Popen(
        [sys.executable, "-m", "proctor.cli.main", "serve", "--port", str(port), "--no-index"],
        env={**env, "PROCTOR_SERVE_INDEX": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("proctor serve did not start")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _child_cpu_ns(command: list[str], data: bytes, env: dict[str, str]) -> tuple[int, bytes]:
    """CPU time (user + system) of one child process, and what it printed."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, input=data, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode().strip()}")
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(spent * 1e9), done.stdout


def hook_modes(runs: int, http_calls: int) -> tuple[dict[str, list[int]], list[str]]:
    """(e): the command hook's CPU against ``python -S -c pass``, alternating; the http hook.

    One store with the large real session imported, one ``proctor serve`` on it. Per round,
    one process of each kind in turn: the floor, ``python -m proctor.gate`` and ``proctor
    gate`` forwarding to the server, ``proctor gate`` deciding alone (server stopped for
    those rounds). Then the http hook: the session's log grows line by line and every
    ``tool_use`` is asked about with ``POST /api/gate/claude-code``, timed end to end by
    the client (the server read the history whole once, for the forwarding hooks). The
    answers of the three ways are compared on the same payload.
    """

    kept_path: Callable[[Path, str, str], Path] | None
    try:
        from proctor.gate._kept import kept_path
    except ImportError:  # code from before the hook kept session states (a before/after pair)
        kept_path = None

    samples: dict[str, list[int]] = {}
    notes: list[str] = []
    source = SESSIONS["large (2.7 MB log)"]
    with tempfile.TemporaryDirectory(prefix="proctor-gate-bench-") as scratch:
        root = Path(scratch)
        # The rows deciding alone ask no warm gate process and start none: its rows are apart.
        env = {**os.environ, "PROCTOR_HOME": str(root / "home"), "PROCTOR_GATE_DAEMON": "0"}
        warm_env = {
            key: value for key, value in env.items() if key != "PROCTOR_GATE_DAEMON"
        }  # fmt: skip
        project = root / "project"
        project.mkdir()
        session_id = _first_session_id(source)
        lines = source.read_bytes().splitlines(keepends=True)
        transcript = root / "logs" / f"{session_id}.jsonl"
        transcript.parent.mkdir(parents=True)
        half = len(lines) // 2
        transcript.write_bytes(b"".join(lines[:half]))
        subprocess.run(
            [sys.executable, "-m", "proctor.cli.main", "ingest", str(transcript)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        payload = json.dumps(
            {
                "session_id": session_id,
                "transcript_path": str(transcript),
                "cwd": str(project),
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git status --short"},
                "tool_use_id": "toolu_01BenchGateCall",
            }
        ).encode()
        floor = [sys.executable, "-S", "-c", "pass"]
        # What deciding alone cannot go below while it imports the rules: the import alone,
        # as the hook makes it (kept patterns, no plugin search for pydantic).
        rules_import = [
            sys.executable,
            "-c",
            "from proctor.gate._lean import deciding_alone\n"
            "with deciding_alone():\n    import proctor.rules",
        ]
        lean = [sys.executable, "-m", "proctor.gate"]
        cli = PROCTOR_GATE
        answers: dict[str, bytes] = {}
        # As before the hook kept compiled patterns: none kept, pydantic's plugin search made.
        cold_env = {**env, "PYDANTIC_DISABLE_PLUGINS": ""}
        cache = root / "home" / "cache" / "gate"
        alone_rows: dict[str, list[int]] = {}
        grown: dict[str, list[bytes]] = {}
        # As an agent's session goes on: a copy of the log gains its next lines before each
        # call, which asks about the tool_use they end with (the hook reads what was added).
        growing = root / "growing" / transcript.name
        growing.parent.mkdir()
        growing.write_bytes(b"".join(lines[:half]))
        later = iter(lines[half:])
        growing_state = (
            None
            if kept_path is None
            else kept_path(cache, f"cc:session:{session_id}", str(growing))
        )
        for number in range(runs + 1):
            for label, command in (
                ("floor", floor), ("alone", cli), ("alone lean", lean), ("alone cold", cli),
                ("alone growing", lean), ("rules import", rules_import),
            ):  # fmt: skip
                data = payload
                if label == "alone cold":  # nothing kept: no patterns, no session state
                    for kept in cache.glob("**/*"):
                        if kept.is_file() and kept != growing_state:
                            kept.unlink()
                if label == "alone growing":
                    data = _grow(growing, later, payload)
                spent, printed = _child_cpu_ns(
                    command, data, cold_env if label == "alone cold" else env
                )
                if number:
                    target = samples if label == "floor" else alone_rows
                    target.setdefault(label, []).append(spent)
                if label not in ("alone growing", "rules import"):
                    answers[label] = printed
                if label == "alone growing":
                    grown.setdefault("alone", []).append(printed)
        warm_rows, warm_notes = _warm_rounds(
            runs, warm_env, payload, b"".join(lines[:half]), lines[half:], root, grown, answers
        )
        samples["floor"] += warm_rows.pop("warm floor")
        alone_rows.update(warm_rows)
        notes += warm_notes
        port = _free_port()
        server = _serve(env, port)
        try:
            _child_cpu_ns(lean, payload, env)  # the server's first read of the session
            for number in range(runs + 1):
                for label, command in (("floor", floor), ("lean", lean), ("cli", cli)):
                    spent, printed = _child_cpu_ns(command, payload, env)
                    if number:
                        samples.setdefault(label, []).append(spent)
                    answers[label] = printed
            ways = ("lean", "cli", "alone", "alone lean", "alone cold", "warm lean", "warm cli")
            same = len({answers.get(way) for way in ways}) == 1
            notes.append(
                f"(e) the hook answers on the bench payload (forwarded two ways, alone three "
                f"ways, through the warm gate process two ways) are the same bytes: {same}"
            )
            # The http hook on a growing session: every later tool_use of the log.
            url = "/api/gate/claude-code"
            http: list[int] = []
            first: list[int] = []
            health: list[int] = []
            gate_cpu: list[int] = []  # the server's CPU around each timed hook request
            health_cpus: list[int] = []
            decided: dict[str, int] = {}
            server_cpu = _process_cpu_ns(server.pid)
            # One kept-alive connection of the standard library's client, as a hook's caller
            # keeps one: httpx's own CPU per request (about 0.7-0.9 ms more than this client's,
            # in the bench process) was timed as the server's latency.
            with _Connection(port) as client:
                for line in lines[half:]:
                    with transcript.open("ab") as handle:
                        handle.write(line)
                    for block in _tool_uses(line):
                        body = json.loads(payload)
                        body.update(tool_name=block["name"], tool_input=block.get("input") or {},
                                    tool_use_id=block["id"])  # fmt: skip
                        # The bench's own collections (its heap holds every AgentDojo
                        # trace) run between the timed calls, not inside them.
                        spent = _threads_cpu_ns(server.pid)
                        gc.disable()
                        started = time.perf_counter_ns()
                        answer = client.post(url, body)
                        elapsed = time.perf_counter_ns() - started
                        gc.enable()
                        (gate_cpu if first else []).append(_threads_cpu_ns(server.pid) - spent)
                        kind = (
                            json.loads(answer)
                            .get("hookSpecificOutput", {})
                            .get("permissionDecision", "allow")
                        )
                        decided[kind] = decided.get(kind, 0) + 1
                        (http if first else first).append(elapsed)
                        spent = _threads_cpu_ns(server.pid)
                        gc.disable()
                        started = time.perf_counter_ns()  # the same server's lightest route
                        client.get("/api/health")
                        health.append(time.perf_counter_ns() - started)
                        gc.enable()
                        health_cpus.append(_threads_cpu_ns(server.pid) - spent)
                        if len(http) >= http_calls:
                            break
                    if len(http) >= http_calls:
                        break
                both = _process_cpu_ns(server.pid) - server_cpu
                # The same number of health requests alone: the rest is the gate's share.
                server_cpu = _process_cpu_ns(server.pid)
                for _ in range(len(health)):
                    client.get("/api/health")
                health_cpu = _process_cpu_ns(server.pid) - server_cpu
            asked = len(http) + len(first)
            per_health = health_cpu / len(health) / 1e6
            per_gate = (both - health_cpu) / asked / 1e6
            notes.append(
                f"(e) server CPU per request: http hook {per_gate:.2f} ms, GET /api/health "
                f"{per_health:.2f} ms ({per_gate / per_health:.1f}×; over {asked} of each, "
                f"from /proc, 10 ms ticks)"
            )
            notes.append(
                f"(e) server CPU around each request (every thread, ns): http hook median "
                f"{percentile(gate_cpu, 0.5):.2f} ms, mean {statistics.mean(gate_cpu) / 1e6:.2f} "
                f"ms; GET /api/health median {percentile(health_cpus, 0.5):.2f} ms"
            )
            p99 = percentile(http, 0.99) / percentile(health, 0.99)  # as in the table
            notes.append(f"(e) http hook p99 / GET /api/health p99: {p99:.2f}")
            samples["http"] = http
            samples["http first"] = first
            samples["health"] = health
            samples["in process"] = _live_in_process(lines, half, payload, root)
            notes.append(f"(e) http hook decisions on the growing session: {decided}")
        finally:
            server.terminate()
            server.wait(timeout=30)
        samples.update(alone_rows)
    return samples, notes


class _Connection:
    """One kept-alive HTTP/1.1 connection to the server on ``port`` (the timed client)."""

    def __init__(self, port: int) -> None:
        import http.client

        self._connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._connection.close()

    def post(self, path: str, body: dict[str, Any]) -> bytes:
        """POST ``body`` as JSON; the answer's bytes (an error status raises)."""
        data = json.dumps(body).encode()
        return self._ask("POST", path, data, {"Content-Type": "application/json"})

    def get(self, path: str) -> bytes:
        """GET ``path``; the answer's bytes (an error status raises)."""
        return self._ask("GET", path, None, {})

    def _ask(self, method: str, path: str, data: bytes | None, headers: dict[str, str]) -> bytes:
        self._connection.request(method, path, body=data, headers=headers)
        answer = self._connection.getresponse()
        read = answer.read()
        if answer.status != 200:
            raise SystemExit(f"{method} {path}: {answer.status} {read[:200]!r}")
        return read


def _warm_rounds(
    runs: int,
    env: dict[str, str],
    payload: bytes,
    start: bytes,
    later_lines: list[bytes],
    root: Path,
    grown: dict[str, list[bytes]],
    answers: dict[str, bytes],
) -> tuple[dict[str, list[int]], list[str]]:
    """(e) through the warm gate process: hook CPU, the warm process's CPU, wall per call.

    No server runs. The first hook decides alone and starts the warm process; once it
    listens, rounds alternate the floor, ``python -m proctor.gate`` and ``proctor gate``
    on the bench payload, and ``python -m proctor.gate`` on a copy of the log gaining its
    next lines (the same calls as the alone rows' growing log, answers compared call by
    call). The warm process's CPU comes from ``/proc/<pid>/schedstat`` (nanoseconds; 10 ms
    ticks of ``/proc/<pid>/stat`` where it is missing), read before and after each call.
    """
    lean = [sys.executable, "-m", "proctor.gate"]
    cli = PROCTOR_GATE
    floor = [sys.executable, "-S", "-c", "pass"]
    rows: dict[str, list[int]] = {}
    notes: list[str] = []
    _child_cpu_ns(lean, payload, env)  # decides alone, starts the warm process
    base = subprocess.run(
        [sys.executable, "-c", "from proctor.gate import _warm; print(_warm.base_path())"],
        env=env, capture_output=True, check=True, text=True,
    ).stdout.strip()  # fmt: skip
    pid = _listening(base)
    if not pid:
        raise SystemExit("the warm gate process did not start")
    growing = root / "growing-warm" / Path(json.loads(payload)["transcript_path"]).name
    growing.parent.mkdir()
    growing.write_bytes(start)  # as the alone rows' copy began
    later = iter(later_lines)
    served = 0
    try:
        for number in range(runs + 1):
            for label, command in (
                ("floor", floor), ("warm lean", lean), ("warm cli", cli), ("warm growing", lean)
            ):  # fmt: skip
                data = _grow(growing, later, payload) if label == "warm growing" else payload
                before = _process_cpu_ns(pid, precise=True)
                started = time.perf_counter_ns()
                spent, printed = _child_cpu_ns(command, data, env)
                wall = time.perf_counter_ns() - started
                daemon = _process_cpu_ns(pid, precise=True) - before
                if label == "warm growing":
                    grown.setdefault("warm", []).append(printed)
                elif label != "floor":
                    answers[label] = printed
                if not number:
                    continue
                rows.setdefault("warm floor" if label == "floor" else label, []).append(spent)
                if label == "floor":
                    rows.setdefault("floor wall", []).append(wall)
                else:
                    served += 1
                    rows.setdefault(f"{label} daemon", []).append(daemon)
                    rows.setdefault(f"{label} wall", []).append(wall)
        still = _listening(base, wait_s=0) == pid
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, 15)
    alone_grown, warm_grown = grown.get("alone", []), grown.get("warm", [])
    notes.append(
        f"(e) warm gate process: one process (pid {pid}) served all {served} timed calls: "
        f"{still}; the growing log's {len(warm_grown)} calls answered as alone call by call: "
        f"{alone_grown == warm_grown}"
    )
    return rows, notes


def _listening(base: str, wait_s: float = 60) -> int:
    """The process listening on ``<base>.sock`` (its credentials), waiting up to ``wait_s``."""
    import socket

    deadline = time.monotonic() + wait_s
    while True:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(base + ".sock")
                credentials = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
                return int.from_bytes(credentials[:4], sys.byteorder)
            except OSError:
                if time.monotonic() >= deadline:
                    return 0
        time.sleep(0.05)


def _grow(log: Path, later: Iterator[bytes], payload: bytes) -> bytes:
    """Append ``later``'s lines to ``log`` up to one with a tool_use; the hook payload for it."""
    for line in later:
        with log.open("ab") as handle:
            handle.write(line)
        for block in _tool_uses(line):
            body = json.loads(payload)
            body.update(transcript_path=str(log), tool_name=block["name"],
                        tool_input=block.get("input") or {}, tool_use_id=block["id"])  # fmt: skip
            return json.dumps(body).encode()
    raise SystemExit("the session has too few tool calls for --hook-runs")


def _threads_cpu_ns(pid: int) -> int:
    """CPU time every thread of a running process has used, in nanoseconds: the sum of
    ``/proc/<pid>/task/<tid>/schedstat`` (10 ms ticks of ``/proc/<pid>/stat`` where missing)."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int((task / "schedstat").read_text().split()[0])
    except OSError:
        return _process_cpu_ns(pid)
    return total or _process_cpu_ns(pid)


def _process_cpu_ns(pid: int, *, precise: bool = False) -> int:
    """CPU time (user + system, every thread) a running process has used, from /proc.

    ``precise``: the scheduler's nanoseconds of a single-threaded process
    (``/proc/<pid>/schedstat``) where the kernel keeps them.
    """
    if precise:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def agentdojo_live(scratch: Path) -> tuple[int, int, int]:
    """(f): every AgentDojo call decided by ``GateService`` in process, as in (a), and by
    ``LiveGate`` — the server's path — reading that run's prefix as a transcript file.

    The prefix is the run's messages up to the assistant message carrying the call, its
    tool calls cut after this one. Returns calls, decisions that differ, and histories of
    a different length (where a run made parallel calls, (a) has seen the earlier calls'
    results, which a live log holds only after the assistant message).
    """
    from proctor.gate import GateRequest, GateService, LiveGate
    from proctor.rules import DEFAULT_POLICY, Trace
    from proctor.sources import prepare_bundle, read_paths
    from proctor.transcript import ConversationBundle

    live = LiveGate(policy=DEFAULT_POLICY)
    calls = differ = histories = 0
    for source in sorted(AGENTDOJO.glob("*.jsonl")):
        header, *runs = source.read_text().splitlines()
        for run in runs:
            record = json.loads(run)
            whole = scratch / "run.jsonl"
            whole.write_text(f"{header}\n{run}\n")
            bundles = [
                item
                for item in read_paths([whole], format_name="agentdojo")
                if isinstance(item, ConversationBundle)
            ]
            if not bundles:
                continue
            trace = Trace.from_bundle(prepare_bundle(bundles[0]).bundle)
            conversation_id = trace.context.conversation_id
            service = GateService(policy=DEFAULT_POLICY)
            service.observe(conversation_id, (), context=trace.context)
            messages = record["messages"]
            spots = [
                (number, position)
                for number, message in enumerate(messages)
                for position, _ in enumerate(message.get("tool_calls") or ())
            ]
            seen_calls = 0
            for event in trace.events:
                if event.kind == "call" and event.call is not None:
                    request = GateRequest(
                        conversation_id=conversation_id,
                        tool_name=event.call.name,
                        tool_input=event.call.arguments,
                        call_source_id=event.call.source_id,
                    )
                    expected = service.decide(request)
                    number, position = spots[seen_calls]
                    prefix = [dict(m) for m in messages[: number + 1]]
                    prefix[-1]["tool_calls"] = prefix[-1]["tool_calls"][: position + 1]
                    log = scratch / f"prefix-{calls}.jsonl"
                    log.write_text(f"{header}\n{json.dumps({**record, 'messages': prefix})}\n")
                    asked = request.model_copy(
                        update={
                            "conversation_id": f"prefix-{calls}",
                            "transcript_path": str(log),
                            "transcript_format": "agentdojo",
                        }
                    )
                    got = live.decide(asked, None)
                    log.unlink()
                    differ += (got.decision, got.rule) != (expected.decision, expected.rule)
                    histories += live.service.events_seen(f"prefix-{calls}") != service.events_seen(
                        conversation_id
                    )
                    calls += 1
                    seen_calls += 1
                service.observe(conversation_id, (event,))
    return calls, differ, histories


def _live_in_process(lines: list[bytes], half: int, payload: bytes, root: Path) -> list[int]:
    """The server's decision alone: ``LiveGate`` on the same growing log, in this process."""
    from proctor.gate import LiveGate, gate_request, parse_hook_input

    body = json.loads(payload)
    log = root / "in-process" / Path(body["transcript_path"]).name
    log.parent.mkdir()
    log.write_bytes(b"".join(lines[:half]))
    body["transcript_path"] = str(log)
    live = LiveGate()
    live.decide(gate_request(parse_hook_input(json.dumps(body).encode())), None)
    samples: list[int] = []
    for line in lines[half:]:
        with log.open("ab") as handle:
            handle.write(line)
        for block in _tool_uses(line):
            body.update(tool_name=block["name"], tool_input=block.get("input") or {},
                        tool_use_id=block["id"])  # fmt: skip
            request = gate_request(parse_hook_input(json.dumps(body).encode()))
            started = time.perf_counter_ns()
            quick = live.try_decide(request)
            if quick is None:
                live.decide(request, None)
            samples.append(time.perf_counter_ns() - started)
    return samples


def _tool_uses(line: bytes) -> list[dict[str, Any]]:
    try:
        record = json.loads(line)
    except ValueError:
        return []
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return [
        block
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "tool_use" and "id" in block
    ]


def _first_session_id(path: Path) -> str:
    with path.open() as handle:
        for line in handle:
            session = json.loads(line).get("sessionId")
            if session:
                return str(session)
    return path.stem


def main(argv: Sequence[str] | None = None) -> None:
    """Run (a)–(d), print the table, write ``bench/results/gate.md``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--passes", type=int, default=5, help="rounds of (c) and (d), one pass each, alternating"
    )
    parser.add_argument("--hook-calls", type=int, default=40, help="hook processes per session")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--hook-runs", type=int, default=30, help="(e) processes of each kind")
    parser.add_argument("--http-calls", type=int, default=200, help="(e) http hook requests")
    parser.add_argument(
        "--only",
        default="a,b,c,d,e,f",
        help="rows to measure, e.g. 'c,d' while iterating (implies --no-write unless all)",
    )
    args = parser.parse_args(argv)
    only = {row.strip() for row in args.only.split(",") if row.strip()}
    if not only <= {"a", "b", "c", "d", "e", "f"} or not only:
        parser.error("--only takes a comma-separated subset of a,b,c,d,e,f")
    if only != {"a", "b", "c", "d", "e", "f"}:
        args.no_write = True  # a partial table never replaces the recorded results

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    traces = load_traces()
    warmup = min(200, len(traces))
    calls = sum(1 for t in traces for e in t.events if e.kind == "call")
    lines = [f"traces: {len(traces)} AgentDojo runs, {calls} tool calls, from {AGENTDOJO}"]

    rows: list[tuple[str, list[int], float | None, str]] = []
    notes: list[str] = []
    if "a" in only:
        gate_samples, denied = gate_in_process(traces, warmup)
        rows.append(("(a) gate decision, in process (per call)", gate_samples, None, "p99 ≤ 2 ms"))
        notes.append(f"(a) calls denied: {denied}")
    if "b" in only:
        hooks = hook_processes(args.hook_calls)
        rows += [(f"(b) {label}", samples, None, "") for label, samples in hooks.items()]
    if "e" in only:
        modes, mode_notes = hook_modes(args.hook_runs, args.http_calls)
        floor = statistics.median(modes["floor"])
        for key, label, target in (
            ("floor", "python -S -c pass, CPU", ""),
            ("lean", "python -m proctor.gate forwarding to proctor serve, CPU", "≤ 8× floor"),
            ("cli", "proctor gate forwarding to proctor serve, CPU", "≤ 8× floor"),
            ("alone", "proctor gate deciding alone (no server), CPU", "≤ 8× floor"),
            ("alone lean", "python -m proctor.gate deciding alone, CPU", "≤ 8× floor"),
            ("alone cold", "proctor gate alone, nothing kept (as before), CPU", ""),
            (
                "alone growing",
                "python -m proctor.gate alone, log growing between calls, CPU",
                "≤ 8× floor",
            ),
            ("rules import", "import proctor.rules as the hook does, no decision, CPU", ""),
            ("warm lean", "python -m proctor.gate via the warm gate process, CPU", "≤ 8× floor"),
            ("warm lean daemon", "  the warm process's CPU per call of it", ""),
            ("warm lean wall", "  wall per call of it", ""),
            ("warm cli", "proctor gate via the warm gate process, CPU", "≤ 8× floor"),
            ("warm cli daemon", "  the warm process's CPU per call of it", ""),
            ("warm cli wall", "  wall per call of it", ""),
            (
                "warm growing",
                "python -m proctor.gate via the warm process, log growing, CPU",
                "≤ 8× floor",
            ),
            ("warm growing daemon", "  the warm process's CPU per call of it", ""),
            ("warm growing wall", "  wall per call of it", ""),
            ("floor wall", "python -S -c pass, wall, in the same rounds", ""),
            ("http first", "http hook, first timed request", ""),
            ("http", "http hook on a growing 2.7 MB session, per call", "p99 ≤ 10 ms"),
            ("health", "GET /api/health, same server, alternating (baseline)", ""),
            ("in process", "LiveGate.decide on the same growth, in process", ""),
        ):
            rows.append((f"(e) {label}", modes[key], None, target))
            if key in (
                "lean", "cli", "alone", "alone lean", "alone cold", "alone growing", "rules import",
                "warm lean", "warm cli", "warm growing",
            ):  # fmt: skip
                ratio = statistics.median(modes[key]) / floor
                notes.append(f"(e) {label}: median {ratio:.1f}× the floor's CPU")
            if key in ("warm lean", "warm cli", "warm growing"):
                both = [
                    hook + daemon
                    for hook, daemon in zip(modes[key], modes[f"{key} daemon"], strict=True)
                ]
                notes.append(
                    f"(e) {key}: hook and warm process together median "
                    f"{statistics.median(both) / floor:.1f}× the floor's CPU"
                )
        notes += mode_notes
    if "f" in only:
        with tempfile.TemporaryDirectory(prefix="proctor-gate-bench-") as scratch:
            asked, differ, histories = agentdojo_live(Path(scratch))
        notes.append(
            f"(f) AgentDojo, in-process GateService vs LiveGate (the server's path) on each "
            f"run's prefix: {asked - differ} of {asked} calls decided the same "
            f"({histories} histories of another length, mostly calls after the first of a parallel batch: see agentdojo_live)"
        )
    whole_rate = inv_rate = None
    ratios: list[float] = []
    whole: list[int] = []
    inv: list[int] = []
    failed = proctor_flagged = 0
    # (c) and (d) alternate, one pass each per round, so a slow moment of the machine
    # weighs on both alike; the ratio reported is the median of the rounds' ratios.
    for number in range(args.passes):
        if "c" in only:
            samples, round_failed, round_flagged = whole_traces(
                traces, 1, warmup if number == 0 else 0
            )
            whole += samples
            failed += round_failed
            proctor_flagged = proctor_flagged or round_flagged
        if "d" in only:
            round_inv, refused, inv_errors, round_inv_flagged, inv_version = invariant(
                traces, warmup if number == 0 else 0
            )
            inv += round_inv
            inv_flagged = round_inv_flagged
        if "c" in only and "d" in only:
            ratios.append((len(samples) / sum(samples)) / (len(round_inv) / sum(round_inv)))
    if "c" in only:
        whole_rate = len(whole) / (sum(whole) / 1e9)
        rows.append(("(c) whole trace, every built-in rule", whole, whole_rate, "p99 ≤ 1.2 ms"))
        notes.append(f"(c) traces failed: {failed} of {len(traces) * args.passes}")
    if "d" in only:
        inv_rate = len(inv) / (sum(inv) / 1e9)
        rows.append((f"(d) Invariant {inv_version} LocalPolicy, flow rule", inv, inv_rate, ""))
    lines.append(f"{'run':62} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'traces/s':>9}  target")
    for label, samples, rate, target in rows:
        shown_rate = f"{rate:9,.0f}" if rate is not None else f"{'':9}"
        line = (
            f"{label:62} {len(samples):6} {percentile(samples, 0.5):9.3f} "
            f"{percentile(samples, 0.99):9.3f} {shown_rate}  {target}"
        )
        lines.append(line.rstrip())
    if notes:
        lines.append("; ".join(notes))
    if "d" in only:
        lines.append(
            f"(d) refused at Invariant's default limit: {refused} of {len(traces)} "
            f"({100 * refused / len(traces):.1f} %); other errors: {inv_errors}"
        )
    if whole_rate is not None and inv_rate is not None:
        ordered = sorted(ratios)
        lines += [
            f"ratio whole-trace traces/s, Proctor / Invariant: {statistics.median(ratios):.1f}x "
            f"(median of {len(ratios)} alternating rounds, {ordered[0]:.1f}x–{ordered[-1]:.1f}x; "
            "target ≥ 10x)",
            f"ratio whole-trace p99, Invariant / Proctor: "
            f"{percentile(inv, 0.99) / percentile(whole, 0.99):.1f}x",
            f"traces flagged: Proctor injection_then_action {proctor_flagged}, "
            f"Invariant rule {inv_flagged}",
        ]
    lines += [
        LEAD_INVARIANT,
        f"total bench time {time.perf_counter() - started:.0f} s; load average (1 min) "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    ]
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        _write(report, argv, load_before)


def _write(report: str, argv: Sequence[str] | None, load_before: float) -> None:
    command = " ".join(["python bench/gate.py", *(argv if argv is not None else sys.argv[1:])])
    if os.environ.get("PYTHONPATH"):
        command = f"PYTHONPATH={os.environ['PYTHONPATH']} {command}"
    machine = (
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}"
    )
    today = datetime.date.today().isoformat()
    text = (
        "# bench/gate.py results\n\n"
        f"Machine: {machine}, shared with other work. Measured {today}.\n\n"
        f"```\n$ {command}\n{report}\n```\n\n"
        "The Invariant rule used for (d):\n\n"
        f"```\n{INVARIANT_RULE.strip()}\n```\n"
    )
    target = REPO / "bench" / "results" / "gate.md"
    target.write_text(text)
    print(f"wrote {target.relative_to(REPO)}")


if __name__ == "__main__":
    main()
