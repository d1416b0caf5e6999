"""Build small traces for rule tests: ``trace(user("…"), assistant("…", bash("pytest", …)))``."""

from __future__ import annotations

import functools
import itertools
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from proctor.findings import Finding
from proctor.rules import DEFAULT_POLICY, Policy, Rule, Supervisor, Trace, TraceContext, check_trace
from proctor.transcript import Message, ToolCall, ToolStatus, Usage

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
_ids = itertools.count(1)


@functools.cache
def every_character() -> str:
    """Every Unicode scalar value (no surrogates) in code point order, 1.1 million characters.

    Built at the first test that reads it, once per process: at a test module's import, as
    before, it cost each worker of ``make test`` about 0.2 CPU s of collection per module."""
    return "".join(chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF)


class CallSpec:
    """A tool call to attach to an assistant message."""

    def __init__(
        self,
        name: str,
        arguments: Any,
        result: str | None = None,
        status: ToolStatus = "ok",
        exit_code: int | None = None,
    ) -> None:
        self.name = name
        self.arguments = arguments
        self.result = result
        self.status: ToolStatus = status if result is not None or status != "ok" else "pending"
        self.exit_code = exit_code


class MessageSpec:
    """A message with the calls it issued."""

    def __init__(
        self, role: str, kind: str, text: str, calls: tuple[CallSpec, ...], usage: Usage | None
    ) -> None:
        self.role = role
        self.kind = kind
        self.text = text
        self.calls = calls
        self.usage = usage


def user(text: str) -> MessageSpec:
    """A prompt typed by a person."""
    return MessageSpec("user", "prompt", text, (), None)


def system(text: str) -> MessageSpec:
    """System instructions."""
    return MessageSpec("system", "instructions", text, (), None)


def assistant(text: str = "", *calls: CallSpec, usage: Usage | None = None) -> MessageSpec:
    """An agent reply, with the tool calls it made."""
    return MessageSpec("assistant", "reply", text, calls, usage)


def call(
    name: str,
    result: str | None = None,
    *,
    status: ToolStatus = "ok",
    exit_code: int | None = None,
    **arguments: Any,
) -> CallSpec:
    """Any tool call: ``call("Read", "file text", file_path="src/a.py")``."""
    return CallSpec(name, arguments, result, status, exit_code)


def bash(command: str, result: str | None = "", *, exit_code: int | None = 0) -> CallSpec:
    """A shell call; a non-zero exit code makes it an error."""
    status: ToolStatus = "ok" if exit_code in (0, None) else "error"
    return CallSpec("Bash", {"command": command}, result, status, exit_code)


def trace(
    *specs: MessageSpec,
    cwd: str | None = "/home/dev/project",
    project: str | None = "project",
    minutes_apart: float = 1.0,
) -> Trace:
    """A trace from message specs; ids and times are generated in order."""
    conversation_id = f"test:{next(_ids)}"
    messages: list[Message] = []
    calls: list[ToolCall] = []
    clock = T0
    for spec in specs:
        number = next(_ids)
        message = Message(
            source_id=f"{conversation_id}:m{number}",
            role=spec.role,  # type: ignore[arg-type]
            kind=spec.kind,  # type: ignore[arg-type]
            text=spec.text,
            created_at=clock,
            usage=spec.usage,
        )
        messages.append(message)
        for spec_call in spec.calls:
            clock += timedelta(seconds=5)
            calls.append(
                ToolCall(
                    source_id=f"{conversation_id}:c{next(_ids)}",
                    name=spec_call.name,
                    arguments=spec_call.arguments,
                    message_source_id=message.source_id,
                    status=spec_call.status,
                    result_text=spec_call.result,
                    exit_code=spec_call.exit_code,
                    created_at=clock,
                    completed_at=clock + timedelta(seconds=1),
                )
            )
        clock += timedelta(minutes=minutes_apart)
    context = TraceContext(conversation_id=conversation_id, project=project, cwd=cwd, started_at=T0)
    return Trace.from_parts(context, messages, calls)


def findings(t: Trace, rule: Rule, policy: Policy = DEFAULT_POLICY) -> list[Finding]:
    """Whole-trace findings of one rule."""
    return check_trace(t, policy, [rule])


def gate(t: Trace, proposed: CallSpec, rule: Rule, policy: Policy = DEFAULT_POLICY) -> Any:
    """The gate's decision on ``proposed`` after everything in ``t`` happened."""
    supervisor = Supervisor(t.context, policy, [rule])
    supervisor.observe_all(t.events)
    return supervisor.before_call(
        ToolCall(
            source_id=f"{t.context.conversation_id}:proposed",
            name=proposed.name,
            arguments=proposed.arguments,
        )
    )
