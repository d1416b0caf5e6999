"""Transcripts in several real formats with planted secrets and hidden reasoning.

Every planted value is unique, so a test can search the database file's bytes for it.
"""

from __future__ import annotations

import json
from pathlib import Path

OPENAI_KEY = "sk-proj-Hq3Zt8Lw2Nx6Rb9Vc4Kp7Md1Fs5Gj0Ya2Ue8Io3Pq6Wr9Tz"
ANTHROPIC_KEY = (
    "sk-ant-api03-Mf7Qa2Zk9Lx4Rw8Nc3Vb6Tj1Hs5Gd0Yp2Ue7Io4Pq9Wr3Tz6Xk1Lm8Nb5Vc2Qa7Zs4Df9Gh0Jk"
)
AWS_SECRET = "Zr8kQm2LxN7vB4cP9tW1yH6sJ3dF5gA0eU8iO2qR"
GITHUB_TOKEN = "ghp_7Hk2Lm9Qx4Rt8Vb1Nc6Zw3Yp5Js0Df2Ga7Ue4"
DB_PASSWORD = "Pl4ntedDbP4ss"
SECRETS = [OPENAI_KEY, ANTHROPIC_KEY, AWS_SECRET, GITHUB_TOKEN, DB_PASSWORD]

REASONING = [
    "PLANTED-THINKING-claude-the-user-seems-tired",
    "PLANTED-SIGNATURE-claude-EqQBCkYIBxgCKkBz",
    "PLANTED-REDACTED-THINKING-data-blob",
    "PLANTED-REASONING-SUMMARY-codex",
    "PLANTED-ENCRYPTED-CONTENT-codex-gAAAAAB",
    "PLANTED-AGENT-REASONING-EVENT-codex",
    "PLANTED-REASONING-CONTENT-openai",
    "PLANTED-THINKING-anthropic-list",
    "PLANTED-THOUGHT-gemini",
    "PLANTED-INLINE-THINK-TAG",
]

_ENV = f"OPENAI_API_KEY={OPENAI_KEY}\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\nDATABASE_URL=postgres://app:{DB_PASSWORD}@db:5432/app\n"


def _claude_line(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/projects/planted",
        "sessionId": "5d1f0c6e-2b4a-4c8e-9f3d-7a6b5c4d3e2f",
        "version": "2.1.39",
        "gitBranch": "main",
    }
    base.update(fields)
    return base


def write_claude_code(folder: Path) -> Path:
    """A Claude Code 2.1 session: a prompt with a key, thinking, a tool reading .env."""
    session = "5d1f0c6e-2b4a-4c8e-9f3d-7a6b5c4d3e2f"
    lines = [
        _claude_line(
            parentUuid=None,
            type="user",
            uuid="00000000-0000-4000-8000-000000000001",
            timestamp="2026-11-20T09:00:00.000Z",
            message={"role": "user", "content": f"Deploy with my key {ANTHROPIC_KEY} please"},
        ),
        _claude_line(
            parentUuid="00000000-0000-4000-8000-000000000001",
            type="assistant",
            uuid="00000000-0000-4000-8000-000000000002",
            timestamp="2026-11-20T09:00:02.000Z",
            requestId="req_011CPlanted0001",
            message={
                "id": "msg_01PlantedA",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {"type": "thinking", "thinking": REASONING[0], "signature": REASONING[1]}
                ],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        ),
        _claude_line(
            parentUuid="00000000-0000-4000-8000-000000000002",
            type="assistant",
            uuid="00000000-0000-4000-8000-000000000003",
            timestamp="2026-11-20T09:00:02.500Z",
            requestId="req_011CPlanted0001",
            message={
                "id": "msg_01PlantedA",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "redacted_thinking", "data": REASONING[2]}],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 9},
            },
        ),
        _claude_line(
            parentUuid="00000000-0000-4000-8000-000000000003",
            type="assistant",
            uuid="00000000-0000-4000-8000-000000000004",
            timestamp="2026-11-20T09:00:03.000Z",
            requestId="req_011CPlanted0001",
            message={
                "id": "msg_01PlantedA",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01PlantedRead",
                        "name": "Bash",
                        "input": {"command": "cat .env"},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 20},
            },
        ),
        _claude_line(
            parentUuid="00000000-0000-4000-8000-000000000004",
            type="user",
            uuid="00000000-0000-4000-8000-000000000005",
            timestamp="2026-11-20T09:00:04.000Z",
            sourceToolAssistantUUID="00000000-0000-4000-8000-000000000004",
            toolUseResult={"stdout": _ENV, "stderr": "", "interrupted": False, "isImage": False},
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01PlantedRead",
                        "content": _ENV,
                        "is_error": False,
                    }
                ],
            },
        ),
        _claude_line(
            parentUuid="00000000-0000-4000-8000-000000000005",
            type="assistant",
            uuid="00000000-0000-4000-8000-000000000006",
            timestamp="2026-11-20T09:00:05.000Z",
            requestId="req_011CPlanted0002",
            message={
                "id": "msg_01PlantedB",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {
                        "type": "text",
                        "text": f"<thinking>{REASONING[9]}</thinking>Found GITHUB_TOKEN={GITHUB_TOKEN} too.",
                    }
                ],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 30, "output_tokens": 12},
            },
        ),
    ]
    path = folder / "-home-dev-projects-planted" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_codex(folder: Path) -> Path:
    """A Codex rollout with reasoning items, a reasoning event and a secret in tool output."""
    session = "019a8f00-1111-7222-8333-444455556666"
    records = [
        {
            "type": "session_meta",
            "payload": {
                "id": session,
                "timestamp": "2026-11-20T10:00:00.000Z",
                "cwd": "/home/dev/planted",
                "originator": "codex_cli_rs",
                "cli_version": "0.120.0",
                "source": "cli",
                "model_provider": "openai",
            },
        },
        {
            "type": "turn_context",
            "payload": {
                "turn_id": "turn-1",
                "cwd": "/home/dev/planted",
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write"},
                "model": "gpt-5-codex",
            },
        },
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "turn-1"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Check the env file"}],
            },
        },
        {
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "Check the env file", "images": []},
        },
        {
            "type": "response_item",
            "payload": {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": REASONING[3]}],
                "content": None,
                "encrypted_content": REASONING[4],
            },
        },
        {"type": "event_msg", "payload": {"type": "agent_reasoning", "text": REASONING[5]}},
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "cat .env"]}),
                "call_id": "call_Planted1",
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "call_Planted1",
                "output": json.dumps(
                    {"output": _ENV, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}
                ),
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The env file holds three settings."}],
            },
        },
        {
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": "The env file holds three settings."},
        },
        {
            "type": "event_msg",
            "payload": {
                "type": "task_complete",
                "turn_id": "turn-1",
                "last_agent_message": "The env file holds three settings.",
            },
        },
    ]
    lines = []
    for i, record in enumerate(records):
        lines.append(json.dumps({"timestamp": f"2026-11-20T10:00:{i:02d}.000Z", **record}))
    path = (
        folder / "sessions" / "2026" / "11" / "20" / f"rollout-2026-11-20T10-00-00-{session}.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_openai_chat(folder: Path) -> Path:
    """A Chat Completions request with ``reasoning_content`` and a key in a tool result."""
    doc = {
        "model": "deepseek-reasoner",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Read the config"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": REASONING[6],
                "tool_calls": [
                    {
                        "id": "call_abc1",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": "config.env"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_abc1", "content": _ENV},
            {"role": "assistant", "content": "Done reading."},
        ],
    }
    path = folder / "chat-request.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def write_anthropic(folder: Path) -> Path:
    """An Anthropic Messages request with a thinking block and a GitHub token."""
    doc = {
        "model": "claude-sonnet-4-5",
        "system": "You are a coding agent.",
        "messages": [
            {"role": "user", "content": f"Use token {GITHUB_TOKEN} for the API"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": REASONING[7], "signature": "c2lnbmF0dXJl"},
                    {"type": "text", "text": "I will not store that token."},
                ],
            },
        ],
    }
    path = folder / "anthropic-request.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def write_gemini(folder: Path) -> Path:
    """A legacy Gemini CLI chat file whose reply has thoughts."""
    doc = {
        "sessionId": "8c9d0e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f",
        "projectHash": "b" * 64,
        "startTime": "2026-11-20T11:00:00.000Z",
        "lastUpdated": "2026-11-20T11:01:00.000Z",
        "messages": [
            {
                "id": "g1",
                "timestamp": "2026-11-20T11:00:00.000Z",
                "type": "user",
                "content": f"my db is postgres://app:{DB_PASSWORD}@db/app",
            },
            {
                "id": "g2",
                "timestamp": "2026-11-20T11:00:30.000Z",
                "type": "gemini",
                "content": "Noted.",
                "thoughts": [
                    {
                        "subject": "Plan",
                        "description": REASONING[8],
                        "timestamp": "2026-11-20T11:00:20.000Z",
                    }
                ],
                "model": "gemini-2.5-pro",
                "tokens": {
                    "input": 10,
                    "output": 3,
                    "cached": 0,
                    "thoughts": 50,
                    "tool": 0,
                    "total": 63,
                },
            },
        ],
    }
    path = folder / "session-2026-11-20T11-00-8c9d0e1f.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def write_all(folder: Path) -> list[Path]:
    """Every planted transcript, in its own format."""
    return [
        write_claude_code(folder / "claude"),
        write_codex(folder / "codex"),
        write_openai_chat(folder),
        write_anthropic(folder),
        write_gemini(folder),
    ]
