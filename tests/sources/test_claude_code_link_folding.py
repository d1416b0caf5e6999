"""Link records (progress lines) folded out of the thread walk change nothing read.

The folded walk (``_threading.thread(fold_links=True)``, what an import uses) is checked
against the reference walk that gives every record its place: the same messages (text,
parents, branches, order), tool calls with their results, run events, issues and times,
on every real Claude Code file and on generated sessions whose progress lines sit in
chains, fan-outs, cycles, dangling and reused-uuid positions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.sources.claude_code._build import BuiltConversation, build_conversation
from proctor.sources.claude_code._records import read_jsonl
from proctor.sources.claude_code._subagents import split_sidechains
from proctor.sources.claude_code._threading import assign_keys, thread
from tests.sources.fixtures.claude_code.records import (
    Record,
    envelope,
    progress,
    prompt,
    reply,
    text,
    tool_result,
    tool_use,
    write_session,
)
from tests.sources.helpers import read

SHARED = Path(__file__).resolve().parents[3] / "shared" / "transcripts"


def _facts(built: BuiltConversation) -> tuple[Any, ...]:
    return (
        built.messages,
        built.tool_calls,
        built.task_events,
        built.issues,
        built.started_at,
        built.ended_at,
        built.model,
        built.first_user_text,
    )


def _both(path: Path, *, external: bool = False) -> list[tuple[tuple[Any, ...], ...]]:
    """The folded and the reference build of every conversation in the file at ``path``
    (each from its own parse: building keys the nodes in place)."""
    builds: list[list[tuple[Any, ...]]] = []
    for fold in (True, False):
        parsed = read_jsonl(path)
        main, runs = split_sidechains(parsed.nodes)
        builds.append(
            [
                _facts(
                    build_conversation(
                        nodes,
                        scope="s",
                        shown=str(path),
                        first_parent_is_external=external,
                        fold_links=fold,
                    )
                )
                for nodes in (main, *runs)
            ]
        )
    return list(zip(*builds, strict=True))


def _claude_code_files() -> list[Path]:
    root = SHARED / "claude-code"
    return sorted(root.rglob("*.jsonl")) if root.is_dir() else []


@pytest.mark.parametrize(
    "path", _claude_code_files(), ids=lambda p: str(p.relative_to(SHARED)).replace("/", ":")
)
def test_folding_link_records_builds_every_real_file_as_the_reference_walk(path: Path) -> None:
    external = "subagents" in path.parts or path.name.startswith("agent-")
    for folded, reference in _both(path, external=external):
        assert folded == reference


def test_a_real_session_folds_its_progress_lines_out_of_the_walk(transcripts_dir: Path) -> None:
    path = transcripts_dir / "claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    parsed = read_jsonl(path)
    keyed, _ = assign_keys(parsed.nodes, "s", str(path))
    starts = {node.key for node in keyed if node.entry is not None and node.key is not None}
    threaded = thread(keyed, message_starts=starts, shown=str(path))
    progress_lines = sum(1 for line in path.read_text().splitlines() if '"progress"' in line)
    assert progress_lines > 1000
    # Nearly every progress line is folded: the walk places the content records only.
    assert len(threaded.folded) >= progress_lines * 0.9
    assert len(threaded.placed) + len(threaded.folded) == len(keyed)
    assert all(node.entry is not None for node, _, _ in threaded.placed if node.key in starts)


def test_messages_below_progress_chains_keep_their_parents_branches_and_results(
    tmp_path: Path,
) -> None:
    records: list[Record | str] = [
        prompt("u1", None, "Build it", 0),
        progress("p1", "u1", 1),
        progress("p2", "p1", 2),
        reply("a1", "p2", "msg_1", [tool_use("toolu_1", "Bash", command="make")], 3),
        progress("p3", "a1", 4),
        progress("p4", "p3", 5),
        tool_result("r1", "p4", "toolu_1", "built", 6),
        progress("p5", "r1", 7),
        reply("a2", "p5", "msg_2", [text("Done")], 8),
        # A rewind: a second answer hangs off the same progress line, and is newer.
        progress("p6", "p2", 9),
        reply("a3", "p6", "msg_3", [text("Other answer")], 10),
    ]
    path = write_session(tmp_path / "s.jsonl", records)
    result = read(path)
    assert result.errors() == []
    (bundle,) = result.bundles
    messages = {m.source_id: m for m in bundle.messages}
    assert [m.source_id for m in bundle.messages] == [
        "cc:u1",
        "cc:msg:msg_1",
        "cc:msg:msg_2",
        "cc:msg:msg_3",
    ]
    assert messages["cc:msg:msg_1"].parent_source_id == "cc:u1"
    assert messages["cc:msg:msg_2"].parent_source_id == "cc:msg:msg_1"
    assert messages["cc:msg:msg_3"].parent_source_id == "cc:u1"
    assert not messages["cc:msg:msg_1"].on_active_branch
    assert messages["cc:msg:msg_3"].on_active_branch
    (call,) = bundle.tool_calls
    assert (call.status, call.result_text) == ("ok", "built")
    for folded, reference in _both(path):
        assert folded == reference


def test_an_unnamed_result_below_a_progress_line_is_paired_as_without_folding(
    tmp_path: Path,
) -> None:
    # Old logs: a call without an id is matched by the result's parent line, which here
    # is a progress line, not the call's line: folding must not make it match.
    call = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
    result_line = envelope(
        "user",
        "r1",
        "p1",
        3,
        message={"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
    )
    records: list[Record | str] = [
        prompt("u1", None, "List", 0),
        reply("a1", "u1", "msg_1", [call], 1),
        progress("p1", "a1", 2),
        result_line,
    ]
    path = write_session(tmp_path / "s.jsonl", records)
    for folded, reference in _both(path):
        assert folded == reference


def test_a_parent_cycle_through_progress_lines_is_cut_as_without_folding(tmp_path: Path) -> None:
    records: list[Record | str] = [
        prompt("u1", None, "Start", 0),
        progress("p1", "p3", 1),
        progress("p2", "p1", 2),
        progress("p3", "p2", 3),
        progress("p4", "q1", 4),
        progress("q1", "p4", 5),
        reply("a1", "p2", "msg_1", [text("inside")], 6),
    ]
    ((folded, reference),) = _both(write_session(tmp_path / "s.jsonl", records))
    assert folded == reference
    issues = folded[3]
    assert any("form a parent cycle" in issue.reason for issue in issues)


def assert_builds_as_reference(
    records: list[dict[str, Any]], folder: Path, *, external: bool = False
) -> None:
    """The session of ``records``, written to a file in ``folder``, builds with its link
    records folded as the reference walk that folds nothing builds it."""
    path = folder / "generated.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    for folded, reference in _both(path, external=external):
        assert folded == reference


_KEYS = [f"k{i}" for i in range(12)]


def generated_record(
    kind: str, key: str, parent: str | None, index: int, second: int, *, replies: int
) -> dict[str, Any]:
    """A generated session's ``index``-th record: a progress line, a prompt, a reply with a
    call (``replies`` distinct message ids in turn) or a call's result."""
    if kind == "progress":
        record = progress(key, parent or "", second)
        if parent is None:
            record["parentUuid"] = None
        return record
    if kind == "prompt":
        return prompt(key, parent, f"p{index}", second)
    if kind == "reply":
        blocks = [text(f"r{index}"), tool_use(f"toolu_{index % 3}", "Bash", command="ls")]
        return reply(key, parent, f"msg_{index % replies}", blocks, second)
    return tool_result(key, parent or "k0", f"toolu_{index % 3}", "out", second)


@st.composite
def _sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Sessions of prompts, replies with calls, results and progress lines whose parents
    are drawn from every earlier or later key, missing keys and none."""
    count = draw(st.integers(1, 12))
    parents = st.one_of(st.none(), st.sampled_from(_KEYS), st.just("gone"))
    records: list[dict[str, Any]] = []
    for index in range(count):
        key = draw(st.sampled_from(_KEYS[: count + 2]))  # some keys repeat
        parent = draw(parents)
        second = draw(st.integers(0, 5))
        kind = draw(
            st.sampled_from(["progress", "progress", "progress", "prompt", "reply", "result"])
        )
        record = generated_record(kind, key, parent, index, second, replies=4)
        if draw(st.booleans()) and draw(st.booleans()):
            del record["parentUuid"]  # follows the record before it
        records.append(record)
    return records


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=_sessions(), external=st.booleans())
def test_folding_builds_generated_sessions_as_the_reference_walk(
    records: list[dict[str, Any]], external: bool, tmp_path: Path
) -> None:
    assert_builds_as_reference(records, tmp_path, external=external)
