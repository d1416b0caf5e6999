"""Claude Code sub-agents (ING-6): child conversations linked to the call that spawned them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor.sources import Sample, adapter_named
from proctor.transcript import ConversationBundle
from tests.sources.fixtures.claude_code.records import (
    SESSION,
    envelope,
    prompt,
    reply,
    text,
    tool_result,
    tool_use,
    write_session,
)
from tests.sources.helpers import read

CC = "claude-code"
MAROT = f"{CC}/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
WORKTREES = f"{CC}/claude-code-log/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
TEAMMATES = f"{CC}/claude-code-log-synthetic/teammates/ef000000-0000-4000-8000-000000000001.jsonl"
ASYNC = f"{CC}/claude-code-log-synthetic/async_agents/eb000000-0000-4000-8000-000000000001.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def runs_by_call(bundles: list[ConversationBundle]) -> dict[str | None, ConversationBundle]:
    return {b.subagent_run.parent_tool_call_id: b for b in bundles if b.subagent_run is not None}


def spawn_results(path: Path) -> dict[str, dict[str, Any]]:
    """``toolUseResult`` of each spawning call's result line, by tool_use id."""
    found = {}
    for record in lines(path):
        content = record.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                summary = record.get("toolUseResult")
                if isinstance(summary, dict) and "agentId" in summary:
                    found[block["tool_use_id"]] = summary
    return found


def test_every_real_sub_agent_is_linked_to_its_agent_call_with_the_parents_totals(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / WORKTREES
    main, *children = read(path).bundles
    results = spawn_results(path)
    assert len(children) == len(results) == 6
    linked = runs_by_call(children)
    for call_id, summary in results.items():
        child = linked[f"cc:tool:{call_id}"]
        run = child.subagent_run
        assert run is not None
        assert child.conversation.conversation_id == (
            f"cc:agent:{main.conversation.external_id}:{summary['agentId']}"
        )
        assert child.conversation.parent_conversation_id == main.conversation_id
        assert (run.status, run.stop_kind) == ("completed", "completed")
        assert run.total_tokens == summary["totalTokens"]
        assert run.tool_uses == summary["totalToolUseCount"]
        assert run.duration_ms == summary["totalDurationMs"]
        assert run.agent_type == summary["agentType"]
        (call,) = [c for c in main.tool_calls if c.call_id == call_id]
        assert call.name == "Agent"
        assert run.description == call.arguments["description"]
        assert run.summary == call.result_text
        assert run.rounds == sum(1 for m in child.messages if m.role == "assistant")
        meta = json.loads(
            (
                path.parent / path.stem / "subagents" / f"agent-{summary['agentId']}.meta.json"
            ).read_text()
        )
        assert child.conversation.title == meta["description"]


def test_agent_progress_copies_link_the_child_but_never_become_messages(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / MAROT
    copies = [r for r in lines(path) if r.get("data", {}).get("type") == "agent_progress"]
    assert len(copies) == 25
    copied = {f"cc:{r['data']['message']['uuid']}" for r in copies}
    main, *children = read(path).bundles
    assert not copied & {m.source_id for m in main.messages}
    (child,) = [b for b in children if b.subagent_run is not None]
    child_lines = {
        f"cc:{r['uuid']}" for r in lines(path.parent / path.stem / "subagents/agent-aac57f5.jsonl")
    }
    assert copied <= child_lines
    every_id = [m.source_id for b in (main, *children) for m in b.messages]
    assert len(every_id) == len(set(every_id))
    (tool_use_id,) = {r["parentToolUseID"] for r in copies}
    run = child.subagent_run
    assert run is not None
    summary = spawn_results(path)[tool_use_id]
    assert run.parent_tool_call_id == f"cc:tool:{tool_use_id}"
    assert (run.total_tokens, run.tool_uses, run.duration_ms) == (
        summary["totalTokens"],
        summary["totalToolUseCount"],
        summary["totalDurationMs"],
    )
    assert run.agent_type == "general-purpose"


def test_a_teammate_without_an_agent_id_is_linked_through_its_result_or_prompt(
    transcripts_dir: Path,
) -> None:
    _, *children = read(transcripts_dir / TEAMMATES).bundles
    linked = runs_by_call(children)
    assert set(linked) == {"cc:tool:tu_Task_alice", "cc:tool:tu_Task_bob"}
    alice, bob = linked["cc:tool:tu_Task_alice"], linked["cc:tool:tu_Task_bob"]
    assert alice.conversation.external_id == "aaaa111111111111"
    assert bob.conversation.external_id == "bbbb222222222222"
    first = bob.messages[0]
    assert (first.kind, first.author) == ("injected", "team-lead")
    assert "TaskCreate" not in {b.subagent_run.agent_type for b in children if b.subagent_run}


def test_task_list_tools_are_tasks_not_sub_agents(transcripts_dir: Path) -> None:
    main, *children = read(transcripts_dir / TEAMMATES).bundles
    assert len(children) == 2
    titles = {t.task_id.rsplit(":", 1)[-1]: (t.title, t.status) for t in main.tasks}
    assert titles == {"1": ("Add relay tests", "in_progress"), "2": ("Add server tests", "pending")}
    assert [(e.kind, e.status) for e in main.task_events] == [
        ("created", "pending"),
        ("created", "pending"),
        ("status", "in_progress"),
    ]


def test_a_background_agent_takes_its_outcome_from_the_task_notification(
    transcripts_dir: Path,
) -> None:
    main, child = read(transcripts_dir / ASYNC).bundles
    run = child.subagent_run
    assert run is not None
    assert run.parent_tool_call_id == "cc:tool:tu_Task_async_001"
    assert (run.status, run.stop_kind) == ("completed", "completed")
    assert (run.total_tokens, run.tool_uses, run.duration_ms) == (23099, 2, 15506)
    final = [m for m in child.messages if m.role == "assistant"][-1]
    assert run.summary == final.text
    assert run.agent_type == "Explore"
    (notification,) = [m for m in main.messages if "<task-notification>" in m.text]
    assert notification.kind == "injected"


def test_an_inline_sidechain_of_an_old_log_becomes_a_linked_sub_agent(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / f"{CC}/claude-code-log/sidechain.jsonl"
    main, child = read(path).bundles
    assert [m.role for m in main.messages] == ["assistant"]
    assert child.conversation.kind == "subagent"
    run = child.subagent_run
    assert run is not None
    assert run.parent_tool_call_id == "cc:tool:toolu_01VJzVGXqdaUe6AYX6CAJUHz"
    assert run.description == "Debug failing test output"
    sidechain_user = [r for r in lines(path) if r["isSidechain"] and r["type"] == "user"]
    assert child.messages[0].source_id == f"cc:{sidechain_user[0]['uuid']}"


def test_the_sub_agents_final_answer_is_its_run_summary_not_a_second_parent_message(
    transcripts_dir: Path,
) -> None:
    folder = transcripts_dir / f"{CC}/claude-code-log-synthetic"
    main, child = read(folder / "dedup_main.jsonl", folder / "dedup_agent.jsonl").bundles
    final = child.messages[-1].text
    assert final.startswith("I created the test file successfully.")
    assert [m.text for m in main.messages].count(final) == 0
    run = child.subagent_run
    assert run is not None
    assert (run.parent_tool_call_id, run.summary) == ("cc:tool:toolu_dedup_task", final)


def test_a_sub_agent_without_ids_is_linked_by_its_metadata_agent_type(
    transcripts_dir: Path,
) -> None:
    path = (
        transcripts_dir / f"{CC}/agent-sessions/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
    )
    main, child = read(path).bundles
    (spawn,) = main.tool_calls
    run = child.subagent_run
    assert run is not None
    assert (run.parent_tool_call_id, run.agent_type) == (spawn.source_id, "general-purpose")
    assert child.conversation.conversation_id == (
        "cc:agent:0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f:a0ad4f44468bdf20d"
    )


def test_a_warmup_agent_on_its_own_yields_nothing(transcripts_dir: Path) -> None:
    path = (
        transcripts_dir
        / f"{CC}/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/agent-3ea04571.jsonl"
    )
    result = read(path)
    assert (result.bundles, result.issues) == ([], [])


def agent_line(
    agent_id: str, uuid: str, parent: str | None, second: int, **extra: Any
) -> dict[str, Any]:
    return envelope("user", uuid, parent, second, isSidechain=True, agentId=agent_id, **extra)


def old_layout_project(folder: Path) -> Path:
    """A session with one real old-layout sub-agent, one Warmup agent, one of another session."""
    session = write_session(
        folder / f"{SESSION}.jsonl",
        [
            prompt("u1", None, "Audit the payment code", 0),
            reply(
                "a1",
                "u1",
                "msg_1",
                [
                    tool_use(
                        "toolu_task",
                        "Task",
                        description="Audit",
                        prompt="Audit payments",
                        subagent_type="Explore",
                    )
                ],
                1,
            ),
            tool_result(
                "r1",
                "a1",
                "toolu_task",
                "Two issues found.",
                9,
                toolUseResult={
                    "status": "completed",
                    "agentId": "1234abcd",
                    "totalTokens": 900,
                    "totalToolUseCount": 1,
                    "totalDurationMs": 8000,
                },
            ),
            reply("a2", "r1", "msg_2", [text("The audit found two issues.")], 10),
        ],
    )
    write_session(
        folder / "agent-1234abcd.jsonl",
        [
            agent_line(
                "1234abcd", "c1", None, 2, message={"role": "user", "content": "Audit payments"}
            ),
            reply(
                "c2",
                "c1",
                "msg_c1",
                [tool_use("toolu_rm", "Bash", command="rm -rf build")],
                3,
                isSidechain=True,
                agentId="1234abcd",
            ),
            tool_result(
                "c3",
                "c2",
                "toolu_rm",
                "The user doesn't want to proceed with this tool use.",
                4,
                is_error=True,
                isSidechain=True,
                agentId="1234abcd",
            ),
            reply(
                "c4",
                "c3",
                "msg_c2",
                [text("Two issues found.")],
                5,
                isSidechain=True,
                agentId="1234abcd",
            ),
        ],
    )
    write_session(
        folder / "agent-00000001.jsonl",
        [agent_line("00000001", "w1", None, 0, message={"role": "user", "content": "Warmup"})],
    )
    write_session(
        folder / "agent-99999999.jsonl",
        [
            agent_line("99999999", "o1", None, 0, message={"role": "user", "content": "Elsewhere"})
            | {"sessionId": "another-session"}
        ],
    )
    return session


def test_a_folder_walk_groups_a_session_with_its_sub_agents_and_skips_warmups(
    tmp_path: Path,
) -> None:
    session = old_layout_project(tmp_path / "project")
    result = read(tmp_path / "project")
    assert result.issues == []
    kinds = sorted((b.conversation.kind, b.conversation.external_id) for b in result.bundles)
    assert kinds == [("main", SESSION), ("subagent", "1234abcd"), ("subagent", "99999999")]
    linked = runs_by_call(result.bundles)
    child = linked["cc:tool:toolu_task"]
    run = child.subagent_run
    assert run is not None
    assert (run.total_tokens, run.tool_uses, run.duration_ms) == (900, 1, 8000)
    assert run.rejected_tools == ("Bash",)
    assert run.rounds == 2
    orphan = linked[None]
    assert orphan.conversation.parent_conversation_id == "cc:session:another-session"
    assert session.exists()


def test_planning_puts_each_sub_agent_file_and_its_metadata_in_exactly_one_unit(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    old_layout_project(project)
    new_agent = project / SESSION / "subagents" / "agent-a55b.jsonl"
    write_session(
        new_agent, [agent_line("a55b", "n1", None, 0, message={"role": "user", "content": "Hi"})]
    )
    new_agent.with_name("agent-a55b.meta.json").write_text('{"agentType": "Plan"}')
    adapter = adapter_named("claude_code")
    files = sorted(p for p in project.rglob("*.jsonl"))
    units = adapter.plan([(p, Sample(p)) for p in files])
    paths = [p for unit in units for p in unit.paths]
    assert len(paths) == len(set(paths))
    (main_unit,) = [u for u in units if u.path.name == f"{SESSION}.jsonl"]
    assert {p.name for p in main_unit.related} == {
        "agent-1234abcd.jsonl",
        "agent-00000001.jsonl",
        "agent-a55b.jsonl",
        "agent-a55b.meta.json",
    }
    assert [u.path.name for u in units if u is not main_unit] == ["agent-99999999.jsonl"]


def test_reading_only_the_session_file_finds_its_sub_agents_on_disk(tmp_path: Path) -> None:
    session = old_layout_project(tmp_path / "project")
    result = read(session)
    assert [b.conversation.external_id for b in result.bundles] == [SESSION, "1234abcd"]


def test_an_orphan_sub_agent_takes_its_totals_from_its_own_final_response(
    transcripts_dir: Path,
) -> None:
    path = transcripts_dir / f"{CC}/claude-code-log-synthetic/dag_cycle.jsonl"
    (record,) = lines(path)
    usage = record["message"]["usage"]
    (bundle,) = read(path).bundles
    run = bundle.subagent_run
    assert run is not None
    assert run.parent_tool_call_id is None
    assert run.total_tokens == sum(
        usage[k]
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )
    assert (run.rounds, run.tool_uses, run.rejected_tools) == (1, 0, ())


def test_unreadable_sub_agent_metadata_is_a_warning_and_the_agent_is_still_read(
    tmp_path: Path,
) -> None:
    session = old_layout_project(tmp_path / "project")
    agent = tmp_path / "project" / SESSION / "subagents" / "agent-b0b.jsonl"
    write_session(
        agent, [agent_line("b0b", "m1", None, 0, message={"role": "user", "content": "Plan it"})]
    )
    agent.with_name("agent-b0b.meta.json").write_text("{broken")
    result = read(session)
    ((severity, name, reason),) = [(i.severity, Path(i.path).name, i.reason) for i in result.issues]
    assert (severity, name) == ("warning", "agent-b0b.meta.json")
    assert reason.startswith("sub-agent metadata unreadable")
    assert "b0b" in [b.conversation.external_id for b in result.bundles]
