"""The Codex adapter against the real rollouts in ``../shared/transcripts/codex``.

Expected counts are derived here from the raw lines with plain ``json`` and a few
independent rules, never copied from the adapter's output.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import zstandard

from proctor.sources import CodexAdapter, Sample, prepare_bundle
from proctor.transcript import ConversationBundle
from tests.conftest import TRANSCRIPTS_DIR
from tests.sources.helpers import detected_format, read

pytestmark = pytest.mark.shared

CODEX_DIR = TRANSCRIPTS_DIR / "codex"
ROLLOUTS = sorted(
    [
        *(CODEX_DIR / "localpush" / "raw" / "sessions").glob("*.jsonl"),
        CODEX_DIR / "agent-sessions" / "small.jsonl",
        CODEX_DIR / "agent-sessions" / "large.jsonl",
    ]
)
NOT_ROLLOUTS = [
    CODEX_DIR / "localpush" / "manifest.json",
    CODEX_DIR / "localpush" / "README.md",
    CODEX_DIR / "PROVENANCE.md",
    # Four of its five lines lack the rollout envelope and it has no session_meta: a
    # drift fixture for a tolerant generic reader, not a rollout.
    CODEX_DIR / "agent-sessions" / "schema_drift.jsonl",
]
LOCALPUSH = [path for path in ROLLOUTS if "localpush" in path.parts]

# Warnings each rollout is expected to produce, as (where, reason fragment); anything else
# (and every error) fails. `file`: yielded by the read; `bundle`: attached to a conversation.
EXPECTED_WARNINGS: dict[str, list[tuple[str, str]]] = {
    # The sanitiser replaced every argument string with a `[REDACTED_…]` marker.
    **{path.name: [("bundle", "arguments are not JSON")] for path in LOCALPUSH},
    # A synthetic perf fixture with payload kinds Codex never writes.
    "large.jsonl": [
        ("file", "unknown response_item:tool_call"),
        ("file", "unknown response_item:tool_result"),
    ],
    # Values (timestamps, ids, call ids) replaced by "[trimmed for fixture]", so sessions,
    # calls and ids collide and a sub-agent names itself as its parent.
    "small.jsonl": [
        ("file", "is not an ISO-8601 time"),
        ("bundle", "have no matching call"),
        ("bundle", "reuse a call_id already taken"),
        ("bundle", "repeat a call_id already answered"),
        ("bundle", "repeat an id or ordinal"),
        ("bundle", "names itself as its parent"),
    ],
}

_REDACTION = re.compile(r"\[REDACTED_[A-Z_]+ (len=\d+ sha=[0-9a-f]+)\]")
_CALL_ITEMS = {
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "tool_search_call",
    "web_search_call",
    "image_generation_call",
    "mcp_call",
}
_TOOL_EVENTS = {
    "exec_command_end",
    "patch_apply_end",
    "mcp_tool_call_end",
    "web_search_end",
    "view_image_tool_call",
    "image_generation_end",
    "dynamic_tool_call_request",
    "dynamic_tool_call_response",
}
_INJECTED = ("<environment_context>", "# agents.md instructions", "<user_instructions>")


@dataclass
class Expected:
    """Counts for one session, computed from the raw file."""

    subagent: bool
    history: list[tuple[str, str, bool]] = field(default_factory=list)
    """(role, first-text key, marked as injected) of each response_item message."""
    other_messages: int = 0
    mirrors: list[tuple[str, str | None, str, str]] = field(default_factory=list)
    """(layer, turn, role, key) of each user_message / agent_message mirror."""
    call_keys: set[str] = field(default_factory=set)
    unkeyed_calls: int = 0
    turns: set[str] = field(default_factory=set)

    def counts(self) -> dict[str, int]:
        """Messages (mirrors only where no history item has their text), prompts, calls, tasks."""
        free = Counter((role, key) for role, key, _ in self.history)
        twinned: Counter[tuple[str, str]] = Counter()
        per_layer: Counter[tuple[Any, ...]] = Counter()
        for layer, turn, role, key in self.mirrors:
            if free[role, key] > 0:
                free[role, key] -= 1
                twinned[role, key] += 1
            else:
                per_layer[layer, turn, role, key] += 1
        kept: dict[tuple[Any, ...], int] = defaultdict(int)
        for (_, turn, role, key), count in per_layer.items():
            kept[turn, role, key] = max(kept[turn, role, key], count)
        prompts = sum(count for (_, role, _), count in kept.items() if role == "user")
        for role, key, injected in self.history:
            if role == "user" and not injected and twinned[role, key] > 0:
                twinned[role, key] -= 1
                prompts += 1
        has_user_mirrors = any(role == "user" for _, _, role, _ in self.mirrors)
        if not has_user_mirrors:
            prompts += sum(
                1 for role, _, injected in self.history if role == "user" and not injected
            )
        return {
            "messages": len(self.history) + self.other_messages + sum(kept.values()),
            "prompts": prompts,
            "tool_calls": len(self.call_keys) + self.unkeyed_calls,
            "tasks": len(self.turns),
        }


def _key(text: str) -> str:
    return _REDACTION.sub(r"\1", text).strip()


def _first_text(content: Any) -> str:
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return part["text"]
    return ""


def expected_sessions(path: Path) -> dict[str, Expected]:
    """Per session id, what the file holds, by rules written independently of the adapter."""
    sessions: dict[str, Expected] = {}
    current: Expected | None = None
    turn: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        kind, payload = record.get("type"), record.get("payload")
        if kind == "session_meta":
            session_id = payload.get("id") or payload.get("session_id")
            source = payload.get("source")
            subagent = (isinstance(source, dict) and "subagent" in source) or bool(
                payload.get("parent_thread_id")
            )
            current = sessions.setdefault(session_id, Expected(subagent))
            continue
        if current is None or not isinstance(payload, dict):
            continue
        kind_of_payload = payload.get("type")
        if kind == "turn_context" and payload.get("turn_id"):
            turn = payload["turn_id"]
            current.turns.add(turn)
        elif kind == "compacted":
            current.other_messages += 1
        elif kind == "response_item":
            if kind_of_payload == "message":
                text = _first_text(payload.get("content"))
                injected = text.lstrip().lower().startswith(_INJECTED)
                current.history.append((payload["role"], _key(text), injected))
            elif kind_of_payload == "agent_message":
                current.other_messages += 1
            elif kind_of_payload in _CALL_ITEMS:
                key = payload.get("call_id") or payload.get("id")
                if key:
                    current.call_keys.add(key)
                else:
                    current.unkeyed_calls += 1
            elif str(kind_of_payload).endswith("_output") and payload.get("call_id"):
                current.call_keys.add(payload["call_id"])
        elif kind == "event_msg":
            own_turn = payload.get("turn_id") or turn
            if kind_of_payload in ("task_started", "task_complete", "turn_aborted"):
                if own_turn:
                    current.turns.add(own_turn)
                turn = own_turn if kind_of_payload == "task_started" else None
            elif kind_of_payload in ("user_message", "agent_message"):
                role = "user" if kind_of_payload == "user_message" else "assistant"
                current.mirrors.append(
                    ("event", own_turn, role, _key(payload.get("message") or ""))
                )
            elif kind_of_payload in _TOOL_EVENTS:
                current.call_keys.add(payload.get("call_id") or payload.get("callId"))
            elif kind_of_payload == "item_completed":
                item = payload.get("item") or {}
                if item.get("type") in ("UserMessage", "AgentMessage"):
                    role = "user" if item["type"] == "UserMessage" else "assistant"
                    current.mirrors.append(
                        ("item", own_turn, role, _key(_first_text(item.get("content"))))
                    )
                elif item.get("type") in ("CommandExecution", "McpToolCall", "FileChange"):
                    current.call_keys.add(item["id"])
    return sessions


def _strings(value: Any) -> list[str]:
    """Every string inside a bundle: texts, ids, arguments, attributes."""
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.fixture(scope="module", autouse=True)
def _shared_codex_dir() -> None:
    if not CODEX_DIR.is_dir():
        pytest.skip(f"{CODEX_DIR} is not available")


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_every_rollout_is_detected_as_codex(path: Path) -> None:
    assert detected_format(path) == "codex"


@pytest.mark.parametrize("path", NOT_ROLLOUTS, ids=lambda p: p.name)
def test_manifest_readme_and_non_rollouts_are_not_taken_for_codex(path: Path) -> None:
    assert not CodexAdapter().sniff(Sample(path))


@pytest.mark.slow
def test_files_of_every_other_format_are_not_taken_for_codex() -> None:
    shared = CODEX_DIR.parents[1]
    others = [
        path
        for folder in ("transcripts", "datasets")
        for path in sorted((shared / folder).rglob("*"))
        if path.is_file() and CODEX_DIR not in path.parents
    ]
    assert len(others) > 100
    claimed = [path for path in others if CodexAdapter().sniff(Sample(path))]
    assert claimed == []


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_rollouts_read_with_only_the_expected_warnings(path: Path) -> None:
    result = read(path)
    assert result.errors() == []
    found = [("file", issue.reason) for issue in result.issues]
    found += [("bundle", issue.reason) for b in result.bundles for issue in b.issues]
    assert all(issue.severity == "warning" for b in result.bundles for issue in b.issues)
    expected = EXPECTED_WARNINGS[path.name]
    matched = [
        next((e for e in expected if e[0] == where and e[1] in reason), None)
        for where, reason in found
    ]
    assert None not in matched, found
    assert sorted(matched, key=str) == sorted(expected, key=str)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_counts_match_an_independent_count_of_the_raw_lines(path: Path) -> None:
    expected = expected_sessions(path)
    result = read(path)
    by_id = {b.conversation.external_id: b for b in result.bundles}
    assert sorted(by_id) == sorted(expected)
    for session_id, wanted in expected.items():
        bundle = by_id[session_id]
        got = {
            "messages": len(bundle.messages),
            "prompts": sum(1 for m in bundle.messages if m.kind == "prompt"),
            "tool_calls": len(bundle.tool_calls),
            "tasks": len(bundle.tasks),
        }
        assert got == wanted.counts(), session_id
        assert (bundle.subagent_run is not None) == wanted.subagent
    assert result.subagents == sum(1 for e in expected.values() if e.subagent)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_ids_are_unique_and_identical_across_two_reads(path: Path) -> None:
    first, second = read(path), read(path)
    assert first.bundles == second.bundles
    for bundle in first.bundles:
        ids = [m.source_id for m in bundle.messages]
        ids += [c.source_id for c in bundle.tool_calls]
        ids += [e.source_id for e in bundle.task_events]
        assert len(ids) == len(set(ids))
        prefix = f"codex:{bundle.conversation.external_id}:"
        assert all(source_id.startswith(prefix) for source_id in ids)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_no_reasoning_text_or_encrypted_content_reaches_any_field(path: Path) -> None:
    hidden: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        payload = json.loads(line).get("payload") or {}
        text = json.dumps(payload)
        hidden.update(re.findall(r'"encrypted_content": "([^"]+)"', text))
        if payload.get("type") == "reasoning":
            hidden.update(p["text"] for p in payload.get("summary") or [] if p.get("text"))
        if str(payload.get("type", "")).startswith("agent_reasoning"):
            hidden.add(payload.get("text") or "")
    # The trimmed fixture puts this placeholder in every field, visible ones included.
    hidden -= {"", "[trimmed for fixture]"}
    produced = "\n".join(s for b in read(path).bundles for s in _strings(b))
    leaked = [secret for secret in hidden if secret in produced]
    assert leaked == []


@pytest.mark.parametrize("path", LOCALPUSH, ids=lambda p: p.name[:40])
def test_usage_on_messages_adds_up_to_the_final_cumulative_total(path: Path) -> None:
    totals = [
        json.loads(line)["payload"]["info"]["total_token_usage"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if '"token_count"' in line and json.loads(line)["payload"].get("info")
    ]
    final = totals[-1]
    (bundle,) = read(path).bundles
    usages = [m.usage for m in bundle.messages if m.usage is not None]
    assert all(m.role == "assistant" for m in bundle.messages if m.usage is not None)
    assert sum(u.input_tokens + u.cache_read_tokens for u in usages) == final["input_tokens"]
    assert sum(u.cache_read_tokens for u in usages) == final["cached_input_tokens"]
    assert sum(u.output_tokens for u in usages) == final["output_tokens"]
    assert sum(u.reasoning_tokens for u in usages) == final["reasoning_output_tokens"]
    repeats = sum(1 for before, after in pairwise(totals) if before == after)
    assert bundle.conversation.attributes.get("duplicate_token_counts", 0) == repeats


def test_localpush_sessions_agree_with_the_fixture_manifest() -> None:
    manifest = json.loads((CODEX_DIR / "localpush" / "manifest.json").read_text())
    verification = manifest["verification"]
    bundles = [b for path in LOCALPUSH for b in read(path).bundles]
    # The manifest describes six files; four were kept, so only bounds and sets compare.
    assert len(bundles) <= verification["sessions_in_scope"]
    models = {m.model for b in bundles for m in b.messages if m.model}
    assert models == set(verification["models_used"])
    last = max(b.conversation.ended_at for b in bundles if b.conversation.ended_at)
    first_allowed = datetime.fromisoformat(verification["first_event_timestamp"])
    assert last == datetime.fromisoformat(verification["last_event_timestamp"])
    assert all(b.conversation.started_at >= first_allowed for b in bundles)
    repeats = sum(b.conversation.attributes.get("duplicate_token_counts", 0) for b in bundles)
    assert 0 < repeats <= verification["duplicate_events_collapsed"]
    compacted = sum(b.conversation.attributes.get("compactions", 0) for b in bundles)
    assert compacted == manifest["observed_line_types"]["compacted"]
    # Token totals are for UTC day 2026-02-23 over six files: ours, from four, stay below.
    day = date(2026, 2, 23)
    day_input = sum(
        m.usage.input_tokens + m.usage.cache_read_tokens
        for b in bundles
        for m in b.messages
        if m.usage is not None and m.created_at is not None and m.created_at.date() == day
    )
    assert 0 < day_input <= verification["token_totals"]["input"]


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_every_time_is_timezone_aware_utc(path: Path) -> None:
    for bundle in read(path).bundles:
        times = [bundle.conversation.started_at, bundle.conversation.ended_at]
        times += [m.created_at for m in bundle.messages]
        times += [c.created_at for c in bundle.tool_calls] + [
            c.completed_at for c in bundle.tool_calls
        ]
        times += [e.created_at for e in bundle.task_events]
        assert all(t.tzinfo is UTC for t in times if t is not None)


def test_a_zstd_compressed_copy_reads_identically(tmp_path: Path) -> None:
    source = next(path for path in LOCALPUSH if path.stat().st_size > 500_000)
    copy = tmp_path / f"{source.name}.zst"
    copy.write_bytes(zstandard.ZstdCompressor().compress(source.read_bytes()))
    assert detected_format(copy) == "codex"
    original, compressed = read(source), read(copy)

    def without_origin(bundles: list[ConversationBundle]) -> list[ConversationBundle]:
        return [
            dataclasses.replace(
                b, origin=None, issues=tuple(dataclasses.replace(i, path="") for i in b.issues)
            )
            for b in bundles
        ]

    assert without_origin(compressed.bundles) == without_origin(original.bundles)
    assert len(compressed.bundles[0].messages) > 300


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:40])
def test_bundles_prepare_for_storage_without_loss_of_identity(path: Path) -> None:
    for bundle in read(path).bundles:
        prepared = prepare_bundle(bundle)
        assert len(prepared.sources) == (
            len(bundle.messages) + len(bundle.tool_calls) + len(bundle.task_events)
        )
        assert len({s.source_id for s in prepared.sources}) == len(prepared.sources)
