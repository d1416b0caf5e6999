"""Codex adapter behaviour on small hand-written rollouts in ``fixtures/codex``.

The fixtures follow the shapes of real Codex 0.98–0.120 rollouts: a parent session that
spawns a sub-agent (two files), a session resumed after a compaction, and a legacy file
without turn ids.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from proctor.sources import CodexAdapter, Sample
from proctor.transcript import ConversationBundle, ToolCall, Usage
from tests.sources.helpers import read

FIXTURES = Path(__file__).parent / "fixtures" / "codex"
FAMILY = FIXTURES / "parent-with-subagent"
PARENT_FILE = next(FAMILY.glob("*-00000000000a.jsonl"))
CHILD_FILE = next(FAMILY.glob("*-00000000000b.jsonl"))
PARENT = "0195f3a0-1111-7000-8000-00000000000a"
CHILD = "0195f3a0-2222-7000-8000-00000000000b"
RESUMED = FIXTURES / "resumed-and-compacted.jsonl"
LEGACY = FIXTURES / "legacy-without-turn-ids.jsonl"


def _bundles(*paths: Path) -> dict[str, ConversationBundle]:
    result = read(*paths)
    assert result.errors() == []
    return {b.conversation.external_id: b for b in result.bundles}


def _calls(bundle: ConversationBundle) -> dict[str, ToolCall]:
    return {call.call_id or call.source_id: call for call in bundle.tool_calls}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def test_outputs_pair_with_calls_by_call_id_and_carry_exit_code_and_status() -> None:
    calls = _calls(_bundles(PARENT_FILE)[PARENT])
    listing = calls["call_ls"]
    assert listing.source_id == f"codex:{PARENT}:call:call_ls"
    assert (listing.name, listing.arguments) == (
        "exec_command",
        {"cmd": "ls src", "workdir": "/home/dev/shop"},
    )
    assert (listing.status, listing.exit_code) == ("ok", 0)
    assert listing.result_text is not None and listing.result_text.endswith("app.py\n")
    assert listing.attributes["duration_ms"] == 15
    assert listing.completed_at is not None and listing.created_at is not None
    assert listing.completed_at > listing.created_at
    # "Exit code: N" in the output header, with no execution event.
    assert (calls["call_pytest"].status, calls["call_pytest"].exit_code) == ("error", 1)
    # Codex's normalised denial text.
    assert calls["call_rm"].status == "rejected"
    # A freeform apply_patch: raw input kept, the JSON result envelope unwrapped.
    patch = calls["call_patch"]
    assert isinstance(patch.arguments, str) and patch.arguments.startswith("*** Begin Patch")
    assert patch.result_text == "Success. Updated the following files:\nM src/app.py\n"
    assert patch.attributes["files"] == ["/home/dev/shop/src/app.py"]
    assert (patch.status, patch.exit_code) == ("ok", 0)


def test_a_call_left_without_output_by_an_aborted_turn_is_interrupted() -> None:
    deploy = _calls(_bundles(PARENT_FILE)[PARENT])["call_deploy"]
    assert deploy.status == "interrupted"
    assert deploy.result_text is None


def test_a_call_without_output_in_an_open_turn_is_pending(transcripts_dir: Path) -> None:
    (path,) = (transcripts_dir / "codex" / "localpush").rglob("*f30553347322.jsonl")
    (bundle,) = read(path).bundles
    (call,) = bundle.tool_calls
    assert (call.call_id, call.status, call.result_text) == (
        "call_UtYwHmwWekzvq83m8Rb9K8jJ",
        "pending",
        None,
    )


def test_arguments_that_are_not_json_are_kept_as_text_with_one_warning() -> None:
    bundle = _bundles(PARENT_FILE)[PARENT]
    assert _calls(bundle)["call_bad_args"].arguments == "not json {"
    (warning,) = bundle.issues
    assert (
        warning.severity == "warning"
        and "1 tool calls whose arguments are not JSON" in warning.reason
    )


def test_the_agent_message_mirror_of_a_reply_is_not_imported_twice() -> None:
    bundle = _bundles(PARENT_FILE)[PARENT]
    replies = [m for m in bundle.messages if m.kind == "reply"]
    assert [m.text for m in replies] == [
        "I'll look at the server first.",
        "Added /health and a test; one test still fails.",
    ]
    assert [m.attributes["phase"] for m in replies] == ["commentary", "final_answer"]
    prompts = [m.text for m in bundle.messages if m.kind == "prompt"]
    assert prompts == ["Add a /health endpoint and tests for it.", "Now deploy it."]


def test_a_mirror_without_a_history_item_is_imported_once(tmp_path: Path) -> None:
    path = tmp_path / "mirrors-only.jsonl"
    path.write_text(
        '{"timestamp":"2026-03-03T08:00:00Z","type":"session_meta","payload":{"id":"s-1","cwd":"/w"}}\n'
        '{"timestamp":"2026-03-03T08:00:01Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t-1"}}\n'
        '{"timestamp":"2026-03-03T08:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}\n'
        '{"timestamp":"2026-03-03T08:00:03Z","type":"event_msg","payload":{"type":"agent_message","message":"hello"}}\n'
        '{"timestamp":"2026-03-03T08:00:03Z","type":"event_msg","payload":{"type":"item_completed","turn_id":"t-1",'
        '"item":{"type":"AgentMessage","id":"am-1","content":[{"type":"Text","text":"hello"}]}}}\n'
    )
    (bundle,) = _bundles(path).values()
    assert [(m.role, m.kind, m.text) for m in bundle.messages] == [
        ("user", "prompt", "hi"),
        ("assistant", "reply", "hello"),
    ]


def test_injected_context_is_classified_apart_from_the_typed_prompt() -> None:
    bundle = _bundles(PARENT_FILE)[PARENT]
    kinds = [(m.role, m.kind, m.text.split("\n")[0][:30]) for m in bundle.messages]
    assert kinds[:4] == [
        ("developer", "instructions", "<permissions instructions>Ask "),
        ("user", "injected", "# AGENTS.md instructions for /"),
        ("user", "injected", "<environment_context>"),
        ("user", "prompt", "Add a /health endpoint and tes"),
    ]
    assert kinds[-1] == ("user", "injected", "<turn_aborted>")


def test_cumulative_token_counts_become_per_response_usage_without_repeats() -> None:
    bundle = _bundles(PARENT_FILE)[PARENT]
    replies = [m for m in bundle.messages if m.kind == "reply"]
    # The first snapshot (1000 in, 200 cached, 50 out, 20 reasoning) is the commentary's.
    assert replies[0].usage == Usage(
        input_tokens=800, output_tokens=50, cache_read_tokens=200, reasoning_tokens=20
    )
    # Later responses without a message (tool calls only) are charged to the next reply,
    # and the aborted turn's response, which wrote none, to the last one.
    assert replies[1].usage == Usage(
        input_tokens=3700, output_tokens=370, cache_read_tokens=3800, reasoning_tokens=110
    )
    total = sum((m.usage for m in bundle.messages if m.usage), Usage())
    assert (total.input_tokens + total.cache_read_tokens, total.output_tokens) == (8500, 420)
    attributes = bundle.conversation.attributes
    assert attributes["duplicate_token_counts"] == 2
    assert attributes["model_responses"] == 6
    assert attributes["usage"]["total_tokens"] == 8920


def test_a_compaction_becomes_one_derived_summary_and_replaced_history_is_not_imported() -> None:
    (bundle,) = _bundles(RESUMED).values()
    (summary,) = [m for m in bundle.messages if m.kind == "summary"]
    assert summary.derived and summary.role == "assistant"
    assert summary.text.startswith("Summary so far: the user asked for a summary of notes.md")
    assert summary.attributes["replaced_items"] == 3
    produced = "\n".join(_strings(bundle))
    for hidden in ("REPLACED-HISTORY-PROMPT", "REPLACED-HISTORY-REPLY", "ENCRYPTED-COMPACTION"):
        assert hidden not in produced
    assert [e.kind for e in bundle.task_events].count("context_compacted") == 1


def test_a_resumed_session_stays_one_conversation_with_both_turns() -> None:
    result = read(RESUMED)
    (bundle,) = result.bundles
    conversation = bundle.conversation
    assert conversation.conversation_id == "codex:0195f3b0-3333-7000-8000-00000000000c"
    assert conversation.attributes["resumed"] == 1
    assert conversation.attributes["cli_version"] == "0.98.0"
    assert conversation.attributes["models"] == ["gpt-5-codex", "gpt-5.1-codex"]
    assert (conversation.model, conversation.project_hint) == ("gpt-5-codex", "notes")
    assert [t.title for t in bundle.tasks] == ["Summarise notes.md", "What is in this screenshot?"]
    assert all(t.status == "completed" for t in bundle.tasks)
    assert conversation.started_at is not None and conversation.ended_at is not None
    assert (conversation.ended_at - conversation.started_at).total_seconds() > 4 * 3600


def test_images_become_placeholders_and_base64_never_enters() -> None:
    (bundle,) = _bundles(RESUMED).values()
    (with_image,) = [m for m in bundle.messages if "[image:" in m.text]
    assert "[image: image/png, 768 bytes]" in with_image.text
    assert with_image.kind == "prompt"
    assert not any("base64" in s or "AAECAwQF" in s for s in _strings(bundle))


def test_base_instructions_and_reasoning_are_never_imported() -> None:
    produced = "\n".join(s for b in _bundles(FAMILY).values() for s in _strings(b))
    for hidden in (
        "BASE-INSTRUCTIONS-NOT-TO-IMPORT",
        "REASONING-SUMMARY-ONE",
        "REASONING-RAW-ONE",
        "ENCRYPTED-REASONING-ONE",
        "REASONING-SUMMARY-CHILD",
        "ENCRYPTED-REASONING-CHILD",
    ):
        assert hidden not in produced


def test_turns_become_tasks_with_the_prompt_as_goal_and_lifecycle_events() -> None:
    bundle = _bundles(PARENT_FILE)[PARENT]
    first, second = bundle.tasks
    assert first.task_id == f"codex:{PARENT}:turn:0195f3a0-1111-7000-9000-000000000001"
    assert (first.goal, first.status) == ("Add a /health endpoint and tests for it.", "completed")
    assert first.attributes["approval_policy"] == "on-request"
    assert first.attributes["sandbox"] == "workspace-write"
    assert (second.status, second.attributes["abort_reason"]) == ("interrupted", "interrupted")
    events = [(e.kind, e.status, e.task_id == second.task_id) for e in bundle.task_events]
    assert events[-3:] == [
        ("task_started", "running", True),
        ("error", "error", True),
        ("turn_aborted", "interrupted", True),
    ]


def test_a_subagent_is_linked_to_its_parent_and_to_the_spawning_call() -> None:
    bundles = _bundles(FAMILY)
    parent, child = bundles[PARENT], bundles[CHILD]
    assert parent.subagent_run is None
    assert child.conversation.kind == "subagent"
    assert child.conversation.parent_conversation_id == f"codex:{PARENT}"
    run = child.subagent_run
    assert run is not None
    spawn = _calls(parent)["call_spawn"]
    assert run.parent_tool_call_id == spawn.source_id
    assert spawn.attributes["child_conversation_id"] == f"codex:{CHILD}"
    assert (run.agent_type, run.description) == ("worker", "Write tests for /health")
    assert (run.status, run.stop_kind) == ("completed", "completed")
    assert run.summary == "Added tests/test_health.py; 2 tests pass."
    assert (run.rounds, run.total_tokens, run.tool_uses) == (2, 2100, 1)
    assert run.duration_ms == 5200
    # Both sessions have a call_ls: ids are namespaced by session.
    assert _calls(child)["call_ls"].source_id == f"codex:{CHILD}:call:call_ls"


def test_a_subagent_read_alone_keeps_its_parent_link_and_its_own_ending() -> None:
    child = _bundles(CHILD_FILE)[CHILD]
    assert child.conversation.parent_conversation_id == f"codex:{PARENT}"
    run = child.subagent_run
    assert run is not None
    assert run.parent_tool_call_id is None
    assert (run.status, run.summary) == ("completed", "Added tests/test_health.py; 2 tests pass.")


def test_plan_puts_a_subagent_file_in_its_parents_read_unit() -> None:
    files = [(path, Sample(path)) for path in (CHILD_FILE, PARENT_FILE, RESUMED)]
    units = CodexAdapter().plan(files)
    assert sorted((u.path.name, tuple(p.name for p in u.related)) for u in units) == sorted(
        [(PARENT_FILE.name, (CHILD_FILE.name,)), (RESUMED.name, ())]
    )


def test_a_legacy_file_without_turn_ids_gets_positional_ids_scoped_to_the_session() -> None:
    (bundle,) = _bundles(LEGACY).values()
    session = "0193aa00-4444-7000-8000-00000000000d"
    assert [(m.source_id, m.kind) for m in bundle.messages] == [
        (f"codex:{session}:session:user:0", "injected"),
        (f"codex:{session}:session:user:1", "prompt"),
        (f"codex:{session}:session:assistant:0", "reply"),
        (f"codex:{session}:session:user:2", "prompt"),
        (f"codex:{session}:session:assistant:1", "reply"),
    ]
    assert [m.parent_source_id for m in bundle.messages[1:]] == [
        m.source_id for m in bundle.messages[:-1]
    ]
    calls = _calls(bundle)
    assert (calls["call_shell_1"].exit_code, calls["call_shell_1"].result_text) == (
        0,
        "README.md\nsetup.py\n",
    )
    assert (calls["call_local_1"].name, calls["call_local_1"].status) == ("local_shell", "error")
    searches = [c for c in bundle.tool_calls if c.name == "web_search"]
    assert [c.source_id for c in searches] == [
        f"codex:{session}:session:web_search_call:0",
        f"codex:{session}:session:web_search_call:1",
    ]
    assert bundle.tasks == ()
    assert bundle.conversation.model == "codex-mini-latest"
