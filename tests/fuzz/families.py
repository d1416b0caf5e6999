"""Hypothesis strategies over the record shapes of every adapter family.

Each family draws the files of one folder: records in the format's real shapes (fields
present or absent, text as a string or as typed blocks, tool calls with or without
results), with random text around a unique *marker* in the visible text of each record
that carries one. A good record is stored when its marker is found in what the store
holds afterwards, whatever ids the adapter gave it.

``layout`` says how a file holds its records: one per line (``lines``), one element per
line of a JSON array (``array``), or the whole file (``document``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis import strategies as st

Layout = Literal["lines", "array", "document"]


@dataclass(frozen=True, slots=True)
class Rec:
    """One top-level record of a generated file."""

    value: Any
    marker: str | None = None
    """Text that must be found in the store when the record is good."""
    mutable: bool = True
    """False for records others depend on for their meaning (a file's header)."""


@dataclass(frozen=True, slots=True)
class GenFile:
    """One generated file: its name, how it holds records, and the records."""

    name: str
    layout: Layout
    records: tuple[Rec, ...]


@dataclass(frozen=True, slots=True)
class Family:
    """An adapter family: its adapter's name and how to draw one folder's files."""

    name: str
    draw_files: Callable[[st.DrawFn, str], list[GenFile]]
    layout: Layout
    notes: str = ""


@dataclass
class Markers:
    """Hands out unique markers for one drawn folder."""

    nonce: str
    count: int = 0
    used: list[str] = field(default_factory=list)

    def next(self) -> str:
        self.count += 1
        marker = f"mk{self.nonce}x{self.count}q"
        self.used.append(marker)
        return marker


_WORDS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12
)
"""Random text around markers: any Unicode (NUL, combining marks, RTL …), no surrogates."""


def _text(draw: st.DrawFn, marker: str) -> str:
    """Visible text holding ``marker`` as its own word, with random text around it."""
    words = draw(_WORDS)
    return f"{words} {marker} {words[::-1]}"


def _maybe(draw: st.DrawFn, value: dict[str, Any], **optional: Any) -> dict[str, Any]:
    """``value`` plus each of ``optional`` present or not, as drawn (one draw for all)."""
    present = draw(st.integers(0, 2 ** len(optional) - 1))
    for bit, (key, item) in enumerate(optional.items()):
        if present >> bit & 1:
            value[key] = item
    return value


def _time(draw: st.DrawFn) -> str:
    seconds = draw(st.integers(0, 8 * 86_400))
    day, rest = divmod(seconds, 86_400)
    return f"2026-03-0{day + 1}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}.000Z"


# --- Claude Code ---------------------------------------------------------------------------


def _claude_code(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    session = f"5e55{nonce}-0000-4000-8000-000000000000"
    records: list[Rec] = []
    parent: str | None = None
    for index in range(draw(st.integers(2, 5))):
        uuid = f"{nonce}-{index:04d}-4000-8000-{index:012d}"
        marker = marks.next()
        role = draw(st.sampled_from(["user", "assistant"]))
        text = _text(draw, marker)
        if role == "user":
            content: Any = draw(st.sampled_from([text, [{"type": "text", "text": text}]]))
            message: dict[str, Any] = {"role": "user", "content": content}
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if draw(st.booleans()):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{nonce}_{index}",
                        "name": "Bash",
                        "input": {"command": draw(_WORDS)},
                    }
                )
            message = _maybe(
                draw,
                {"role": "assistant", "content": blocks, "id": f"msg_{nonce}_{index}"},
                model="claude-opus-4-1",
                usage={"input_tokens": draw(st.integers(0, 10**6)), "output_tokens": 3},
            )
        record = _maybe(
            draw,
            {
                "type": role,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": session,
                "message": message,
            },
            timestamp=_time(draw),
            cwd="/home/dev/fuzz",
            version="2.1.39",
            isSidechain=False,
            userType="external",
        )
        records.append(Rec(record, marker))
        parent = uuid
    return [GenFile(f"{session}.jsonl", "lines", tuple(records))]


# --- Codex -----------------------------------------------------------------------------------


def _codex(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    session = f"0195{nonce}-0000-7000-8000-000000000000"
    meta = {
        "timestamp": "2026-03-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": session, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/srv/fuzz"},
    }
    records = [Rec(meta, mutable=False)]
    for index in range(draw(st.integers(2, 5))):
        marker = marks.next()
        role = draw(st.sampled_from(["user", "assistant"]))
        kind = "input_text" if role == "user" else "output_text"
        payload: dict[str, Any] = {
            "type": "message",
            "role": role,
            "content": [{"type": kind, "text": _text(draw, marker)}],
        }
        records.append(
            Rec({"timestamp": _time(draw), "type": "response_item", "payload": payload}, marker)
        )
        if role == "assistant" and draw(st.booleans()):
            call_id = f"call_{nonce}_{index}"
            call_marker = marks.next()
            call = {
                "type": "function_call",
                "name": "shell",
                "arguments": f'{{"command": ["echo", "{call_marker}"]}}',
                "call_id": call_id,
            }
            records.append(
                Rec(
                    {"timestamp": _time(draw), "type": "response_item", "payload": call},
                    call_marker,
                )
            )
            output = {"type": "function_call_output", "call_id": call_id, "output": draw(_WORDS)}
            records.append(
                Rec({"timestamp": _time(draw), "type": "response_item", "payload": output})
            )
    return [GenFile(f"rollout-2026-03-01T10-00-00-{session}.jsonl", "lines", tuple(records))]


# --- Gemini CLI --------------------------------------------------------------------------------


def _gemini_lines(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    head = {
        "sessionId": f"gem-{nonce}",
        "projectHash": "9d1e6f3c5b2a4e7d8c0b1a2f3e4d5c6b",
        "startTime": "2026-03-01T10:00:00.000Z",
        "lastUpdated": "2026-03-01T10:00:00.000Z",
        "kind": "main",
    }
    records = [Rec(head, mutable=False)]
    for index in range(draw(st.integers(2, 4))):
        marker = marks.next()
        kind = draw(st.sampled_from(["user", "gemini"]))
        text = _text(draw, marker)
        content: Any = [{"text": text}] if kind == "user" else text
        message = _maybe(
            draw,
            {"id": f"m{index}", "timestamp": _time(draw), "type": kind, "content": content},
            model="gemini-2.5-pro",
        )
        records.append(Rec(message, marker))
        if draw(st.booleans()):
            records.append(Rec({"$set": {"lastUpdated": _time(draw)}}))
    return [GenFile(f"session-{nonce}.jsonl", "lines", tuple(records))]


def _gemini_document(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    files = []
    for number in range(draw(st.integers(1, 2))):
        marks = Markers(f"{nonce}n{number}")
        messages = []
        for index in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(["user", "gemini"]))
            messages.append({"id": f"m{index}", "type": kind, "content": _text(draw, marks.next())})
        document = {
            "sessionId": f"gem-{nonce}-{number}",
            "projectHash": "0b7dfb12",
            "startTime": "2026-01-16T18:34:00.000Z",
            "messages": messages,
        }
        files.append(
            GenFile(f"chat-{nonce}-{number}.json", "document", (Rec(document, marks.used[0]),))
        )
    return files


def _gemini(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    return [*_gemini_lines(draw, nonce), *_gemini_document(draw, f"{nonce}d")]


# --- Proctor JSONL ----------------------------------------------------------------------------


def _proctor_jsonl(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    conversation = f"conv-{nonce}"
    records = [
        Rec({"type": "header", "format": "proctor-jsonl", "version": 1}, mutable=False),
        Rec({"type": "conversation", "conversation_id": conversation, "title": "fuzz"}),
    ]
    for index in range(draw(st.integers(2, 5))):
        marker = marks.next()
        role = draw(st.sampled_from(["user", "assistant"]))
        line = _maybe(
            draw,
            {
                "type": "message",
                "conversation_id": conversation,
                "message_id": f"m{index}",
                "role": role,
                "text": _text(draw, marker),
            },
            created_at="2026-03-01T10:00:00Z",
            model="gpt-5",
        )
        records.append(Rec(line, marker))
        if role == "assistant" and draw(st.booleans()):
            call_marker = marks.next()
            records.append(
                Rec(
                    {
                        "type": "tool_call",
                        "conversation_id": conversation,
                        "call_id": f"c{index}",
                        "name": "shell",
                        "arguments": {"command": call_marker},
                    },
                    call_marker,
                )
            )
            records.append(
                Rec(
                    {
                        "type": "tool_result",
                        "conversation_id": conversation,
                        "call_id": f"c{index}",
                        "output": draw(_WORDS),
                    }
                )
            )
    return [GenFile(f"events-{nonce}.jsonl", "lines", tuple(records))]


# --- OpenTelemetry ------------------------------------------------------------------------------


def _otel_export(draw: st.DrawFn, nonce: str, index: int, marker: str) -> dict[str, Any]:
    trace = f"{int(nonce):016x}{index:016x}"[-32:]

    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    span = {
        "traceId": trace,
        "spanId": f"{index + 1:016x}",
        "name": "chat gpt-5",
        "kind": 3,
        "startTimeUnixNano": "1749718800000000000",
        "endTimeUnixNano": "1749718801500000000",
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.system", "openai"),
            attr("gen_ai.conversation.id", f"thread-{nonce}-{index}"),
            attr("gen_ai.prompt.0.role", "user"),
            attr("gen_ai.prompt.0.content", _text(draw, marker)),
            attr("gen_ai.completion.0.role", "assistant"),
            attr("gen_ai.completion.0.content", draw(_WORDS) or "ok"),
        ],
        "status": {},
    }
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "fuzz")]},
                "scopeSpans": [{"scope": {"name": "fuzz"}, "spans": [span]}],
            }
        ]
    }


def _otel(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    lines = []
    for index in range(draw(st.integers(2, 4))):
        marker = marks.next()
        lines.append(Rec(_otel_export(draw, nonce, index, marker), marker))
    return [GenFile(f"export-{nonce}.jsonl", "lines", tuple(lines))]


# --- Exchange logs (OpenAI Chat, OpenAI Responses, Anthropic) ------------------------------------


def _openai_chat(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(2, 4))):
        marker = marks.next()
        if draw(st.booleans()):
            value: dict[str, Any] = {
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": f"fuzz {nonce} {index}"},
                    {"role": "user", "content": _text(draw, marker)},
                ],
            }
        else:
            value = {
                "id": f"chatcmpl-{nonce}-{index}",
                "object": "chat.completion",
                "model": "gpt-4o-mini",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": _text(draw, marker)},
                        "finish_reason": "stop",
                    }
                ],
            }
            if draw(st.booleans()):
                value["usage"] = {"prompt_tokens": draw(st.integers(0, 99)), "completion_tokens": 2}
        records.append(Rec(value, marker))
    return [GenFile(f"chat-{nonce}.jsonl", "lines", tuple(records))]


def _openai_responses(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(2, 4))):
        marker = marks.next()
        if draw(st.booleans()):
            value: dict[str, Any] = {
                "model": "gpt-5",
                "input": [
                    {"role": "developer", "content": f"fuzz {nonce} {index}"},
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": _text(draw, marker)}],
                    },
                ],
            }
        else:
            value = {
                "id": f"resp_{nonce}_{index}",
                "object": "response",
                "model": "gpt-5",
                "output": [
                    {
                        "type": "message",
                        "id": f"msg_{nonce}_{index}",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": _text(draw, marker)}],
                    }
                ],
            }
        records.append(Rec(value, marker))
    return [GenFile(f"responses-{nonce}.jsonl", "lines", tuple(records))]


def _anthropic(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(2, 4))):
        marker = marks.next()
        if draw(st.booleans()):
            value: dict[str, Any] = {
                "model": "claude-opus-4-1",
                "system": f"fuzz {nonce} {index}",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": _text(draw, marker)}],
            }
        else:
            value = {
                "id": f"msg_{nonce}_{index}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-1",
                "content": [{"type": "text", "text": _text(draw, marker)}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": draw(st.integers(0, 99)), "output_tokens": 3},
            }
        records.append(Rec(value, marker))
    return [GenFile(f"anthropic-{nonce}.jsonl", "lines", tuple(records))]


# --- Benchmarks ---------------------------------------------------------------------------------


def _agentdojo(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    header = {"metadata": {"benchmark": "agent-dojo", "name": f"fuzz-{nonce}"}}
    records = [Rec(header, mutable=False)]
    for index in range(draw(st.integers(1, 4))):
        marker = marks.next()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a banking agent."},
            {"role": "user", "content": _text(draw, marker)},
        ]
        if draw(st.booleans()):
            messages.append(
                {
                    "role": "assistant",
                    "content": draw(_WORDS),
                    "tool_calls": [
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": {"path": "a.txt"}},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "content": draw(_WORDS), "tool_call_id": None})
        run = {
            "index": index,
            "messages": messages,
            "metadata": {
                "suite_name": "banking",
                "user_task_id": f"user_task_{index}",
                "name": f"user_task_{index}[none]",
                "success": draw(st.booleans()),
                "security": True,
            },
        }
        records.append(Rec(run, marker))
    return [GenFile(f"agentdojo-{nonce}.jsonl", "lines", tuple(records))]


def _r_judge(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(2, 3))):
        marker = marks.next()
        action = draw(
            st.sampled_from(
                [
                    'TerminalExecute: {"command": "ls"}',
                    "GmailReadEmail{'email_id': 'e1'}",
                    "Final Answer: done",
                    "SendMoney{'to': 0x8f3a9b2c4d5e6f708192a3b4c5d6e7f8, 'amount': 1e999}",
                ]
            )
        )
        record = {
            "id": int(nonce) * 100 + index,
            "scenario": "fuzz",
            "profile": "You are a CodeAgent.",
            "contents": [
                [
                    {"role": "user", "content": _text(draw, marker)},
                    {"role": "agent", "thought": draw(_WORDS), "action": action},
                    {"role": "environment", "content": draw(_WORDS)},
                ]
            ],
            "label": draw(st.integers(0, 1)),
        }
        records.append(Rec(record, marker))
    return [GenFile(f"rjudge-{nonce}.json", "array", tuple(records))]


def _who_and_when(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    files = []
    for number in range(draw(st.integers(1, 2))):
        marks = Markers(f"{nonce}n{number}")
        history = [{"content": _text(draw, marks.next()), "role": "human"}]
        for _ in range(draw(st.integers(0, 3))):
            history.append(
                {"content": draw(_WORDS) or "step", "role": "assistant", "name": "Orchestrator"}
            )
        document = {
            "is_correct": False,
            "question": f"question {nonce} {number}",
            "question_ID": f"{nonce}-{number}",
            "history": history,
            "mistake_agent": "Orchestrator",
            "mistake_step": "0",
        }
        files.append(GenFile(f"{nonce}{number}.json", "document", (Rec(document, marks.used[0]),)))
    return files


def _agentrx(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(2, 3))):
        marker = marks.next()
        traj = [
            {"role": "system", "content": "# Retail agent policy"},
            {"role": "user", "content": _text(draw, marker)},
            {"role": "assistant", "content": draw(_WORDS) or "ok"},
        ]
        records.append(
            Rec(
                {
                    "task_id": int(nonce) * 100 + index,
                    "reward": 1.0,
                    "info": {},
                    "traj": traj,
                    "trial": 0,
                },
                marker,
            )
        )
    return [GenFile(f"tau-{nonce}.json", "array", tuple(records))]


def _locomo(draw: st.DrawFn, nonce: str) -> list[GenFile]:
    marks = Markers(nonce)
    records = []
    for index in range(draw(st.integers(1, 2))):
        marker = marks.next()
        conversation = {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": _text(draw, marker)},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": draw(_WORDS) or "hi"},
            ],
        }
        records.append(
            Rec({"sample_id": f"s-{nonce}-{index}", "conversation": conversation, "qa": []}, marker)
        )
    return [GenFile(f"locomo-{nonce}.json", "array", tuple(records))]


FAMILIES: tuple[Family, ...] = (
    Family("claude_code", _claude_code, "lines"),
    Family("codex", _codex, "lines"),
    Family("gemini_cli", _gemini, "lines"),
    Family("proctor_jsonl", _proctor_jsonl, "lines"),
    Family("otel", _otel, "lines"),
    Family("openai_chat", _openai_chat, "lines"),
    Family("openai_responses", _openai_responses, "lines"),
    Family("anthropic", _anthropic, "lines"),
    Family("agentdojo", _agentdojo, "lines"),
    Family("r_judge", _r_judge, "array"),
    Family("who_and_when", _who_and_when, "document"),
    Family("agentrx", _agentrx, "array"),
    Family("locomo", _locomo, "array"),
)
"""Every adapter family, by the adapter that reads it."""
