"""Supervisor input per supervised message versus the transcript's own size (issue 4).

Builds synthetic coding-agent conversations of 50, 200, 1,000 and 5,000 messages — user
requests, assistant replies of realistic length, and tool calls (shell commands, file
reads, test runs, searches) whose outputs range from a line to tens of kilobytes — and
imports each into a temporary store the way ``proctor ingest`` would (redaction, storage
bounds). Then, after each new assistant message, it builds the supervisor's window of the
conversation so far and runs ``supervise()`` through the production caller
(``proctor.models.open_caller``) against the scripted model server, which answers with no
decisions. Short conversations are supervised after every assistant message; long ones
after an even sample of them, the last one always included.

Reported per size, over the supervised messages (mean and max), with the transcript at
the last one for comparison:

- transcript chars: the visible content stored so far (message text, tool arguments and
  outputs) — what a supervisor without a window would have to send;
- window chars: the data lines of the window;
- input chars: system prompt plus user message, as sent;
- input tokens: estimated as input chars / 4 (the scripted server cannot count tokens);
- request bytes: the HTTP request body the server received (``Content-Length``), which
  includes the JSON schema and the wire format's overhead.

The window must keep the input bounded while the transcript grows.

    python bench/supervisor.py                  # writes bench/results/supervisor.md
    python bench/supervisor.py --sizes 50 200 --no-write
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, timedelta
from pathlib import Path

import anyio

from proctor.models import PoolLimits, open_caller
from proctor.sources import prepare_bundle
from proctor.store import StoredTranscript, open_store
from proctor.supervisor import PROMPTS, WindowLimits, build_window, supervise
from proctor.testing.scripted_model import ScriptedModelServer
from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall

REPO = Path(__file__).resolve().parents[1]
T0 = datetime.datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
VOCABULARY = (
    "the a to of and in is it that for test file function error value return config "
    "module import class rounding invoice total amount tax line fix update check run "
    "build pass fail should expected actual parser schema migration database query "
    "request response handler cache retry timeout path branch commit review change"
)
WORDS = VOCABULARY.split()
TOOLS = ("Bash", "Read", "Grep", "Edit")


@dataclass(frozen=True, slots=True)
class Sample:
    """One supervised message."""

    transcript_chars: int
    window_chars: int
    input_chars: int
    request_bytes: int


def prose(rng: random.Random, chars: int) -> str:
    """Sentence-like filler of about ``chars`` characters."""
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def tool_output(rng: random.Random, name: str) -> str:
    """Output of one call: mostly short, sometimes a large file or log."""
    size = int(min(rng.lognormvariate(6.5, 1.6), 60_000))
    if name == "Read":
        lines = [f"{n:>5}  {prose(rng, rng.randint(20, 90))}" for n in range(1, size // 60 + 2)]
        return "\n".join(lines)[:size]
    if name == "Bash" and rng.random() < 0.3:
        return f"{prose(rng, size)}\n{rng.randint(0, 3)} failed, {rng.randint(5, 200)} passed"
    return prose(rng, size)


def conversation(messages: int, seed: int = 4) -> ConversationBundle:
    """A synthetic coding session of ``messages`` messages (user and assistant alternating)."""
    rng = random.Random(seed + messages)
    conversation_id = f"bench:sup:{messages}"
    msgs: list[Message] = []
    calls: list[ToolCall] = []
    at = T0
    for i in range(messages):
        at += timedelta(seconds=30)
        user = i % 2 == 0
        text = prose(rng, rng.randint(60, 600) if user else rng.randint(150, 2_500))
        message_id = f"{conversation_id}:m{i}"
        msgs.append(
            Message(
                message_id,
                "user" if user else "assistant",
                "prompt" if user else "reply",
                text,
                created_at=at,
            )
        )
        if user:
            continue
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            at += timedelta(seconds=5)
            name = rng.choice(TOOLS)
            output = tool_output(rng, name)
            calls.append(
                ToolCall(
                    f"{conversation_id}:c{len(calls)}",
                    name,
                    {"command" if name == "Bash" else "path": prose(rng, rng.randint(10, 120))},
                    call_id=f"c{len(calls)}",
                    message_source_id=message_id,
                    status="error" if "failed" in output[-40:] else "ok",
                    result_text=output,
                    created_at=at,
                    completed_at=at,
                )
            )
    return ConversationBundle(
        conversation=Conversation(conversation_id, "bench", str(messages), title="bench session"),
        messages=tuple(msgs),
        tool_calls=tuple(calls),
    )


def prefix(transcript: StoredTranscript, messages: int) -> StoredTranscript:
    """The conversation as it stood right after its first ``messages`` messages."""
    kept = transcript.messages[:messages]
    ids = {m.source_id for m in kept}
    calls = tuple(c for c in transcript.tool_calls if c.message_source_id in ids)
    return dataclasses.replace(transcript, messages=kept, tool_calls=calls)


def visible_chars(transcript: StoredTranscript) -> int:
    """Characters of everything visible in the transcript, as stored."""
    text = sum(len(m.text) for m in transcript.messages)
    calls = sum(
        len(json.dumps(c.arguments, ensure_ascii=False)) + len(c.result_text or "")
        for c in transcript.tool_calls
    )
    return text + calls


def supervised_points(transcript: StoredTranscript, sample: int) -> list[int]:
    """Message counts after which supervision runs: every assistant message, or a sample."""
    points = [i + 1 for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    if len(points) <= sample:
        return points
    step = len(points) / sample
    chosen = {points[int(k * step)] for k in range(sample)}
    return sorted(chosen | {points[-1]})


async def measure(transcript: StoredTranscript, sample: int) -> list[Sample]:
    """Supervise after each chosen message; what was sent each time."""
    samples: list[Sample] = []
    with ScriptedModelServer(responder=lambda _request: {"decisions": []}) as server:
        caller = open_caller(server.connection(), limits=PoolLimits())
        for count in supervised_points(transcript, sample):
            so_far = prefix(transcript, count)
            window = build_window(so_far)
            outcome = await supervise(caller, window, "general")
            if outcome.status != "ok":
                raise SystemExit(f"supervision failed: {outcome.error}")
            request = server.requests[-1]
            sent = sum(len(str(m["content"])) for m in request.messages)
            samples.append(
                Sample(
                    transcript_chars=visible_chars(so_far),
                    window_chars=window.chars,
                    input_chars=sent,
                    request_bytes=int(request.headers["content-length"]),
                )
            )
    return samples


def stored_transcript(messages: int, folder: Path) -> StoredTranscript:
    """Import the synthetic conversation into a store and read it back."""
    bundle = conversation(messages)
    store = open_store(folder / f"bench-{messages}.db")
    try:
        store.write_conversation(prepare_bundle(bundle))
        return store.transcript(bundle.conversation_id)
    finally:
        store.close()


def report_rows(size: int, samples: Sequence[Sample]) -> list[str]:
    """Table rows for one conversation size."""
    last = samples[-1]

    def mean(values: Sequence[int]) -> float:
        return sum(values) / len(values)

    window = [s.window_chars for s in samples]
    sent = [s.input_chars for s in samples]
    body = [s.request_bytes for s in samples]
    return [
        f"{size:>8,} {len(samples):>6} {last.transcript_chars:>13,} {last.transcript_chars // 4:>12,} "
        f"{mean(window):>9,.0f} {max(window):>9,} {mean(sent):>9,.0f} {max(sent):>9,} "
        f"{mean(sent) / 4:>9,.0f} {max(sent) // 4:>9,} {mean(body):>9,.0f} {max(body):>9,} "
        f"{last.input_chars / last.transcript_chars:>8.1%}"
    ]


HEADER = (
    f"{'messages':>8} {'runs':>6} {'transcript ch':>13} {'transcript tk':>12} "
    f"{'window':>9} {'window':>9} {'input ch':>9} {'input ch':>9} {'input tk':>9} "
    f"{'input tk':>9} {'body B':>9} {'body B':>9} {'in/trans':>8}\n"
    f"{'':>8} {'':>6} {'(at last)':>13} {'(chars/4)':>12} {'mean':>9} {'max':>9} "
    f"{'mean':>9} {'max':>9} {'mean':>9} {'max':>9} {'mean':>9} {'max':>9} {'(last)':>8}"
)


def main(argv: Sequence[str] | None = None) -> None:
    """Run every size, print the table, write ``bench/results/supervisor.md``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1_000, 5_000])
    parser.add_argument(
        "--sample", type=int, default=100, help="supervised messages per long conversation"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    lines = [HEADER]
    largest = 0
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            transcript = stored_transcript(size, Path(tmp))
            samples = anyio.run(measure, transcript, args.sample)
            lines += report_rows(size, samples)
            largest = max([largest, *(s.input_chars for s in samples)])
    # System prompt + window budget + the two marker lines: what the window promises.
    bound = max(len(p.system) for p in PROMPTS.values()) + WindowLimits().chars + 80
    verdict = "within" if largest <= bound else "OVER"
    lines.append(
        f"largest input sent: {largest:,} chars (~{largest // 4:,} tokens), {verdict} the "
        f"bound of {bound:,} chars (longest system prompt + {WindowLimits().chars:,}-char window)"
    )
    lines.append(
        "transcript: visible chars stored up to the last supervised message; input: system "
        "prompt + user message as sent; tk = chars / 4; body: request bytes the server received"
    )
    lines.append(f"total bench time {time.perf_counter() - started:.0f} s")
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        _write(report, argv)


def _write(report: str, argv: Sequence[str] | None) -> None:
    command = " ".join(
        ["python bench/supervisor.py", *(argv if argv is not None else sys.argv[1:])]
    )
    machine = (
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}"
    )
    today = datetime.date.today().isoformat()
    text = (
        "# bench/supervisor.py results\n\n"
        f"Machine: {machine}. Measured {today}.\n\n"
        f"```\n$ {command}\n{report}\n```\n"
    )
    target = REPO / "bench" / "results" / "supervisor.md"
    target.write_text(text)
    print(f"wrote {target.relative_to(REPO)}")


if __name__ == "__main__":
    main()
