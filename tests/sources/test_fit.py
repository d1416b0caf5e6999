"""Every prepared value fits what SQLite and PostgreSQL both hold, the same way on both."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from proctor.sources import prepare_bundle
from proctor.sources._fit import (
    EVENT_KIND_CHARS,
    FORMAT_CHARS,
    MAX_COUNT,
    MAX_ID_CHARS,
    NAME_CHARS,
    STATUS_CHARS,
    fit_bundle,
    fit_id,
)
from proctor.store import _schema as schema
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    Message,
    SubagentRun,
    Task,
    TaskEvent,
    ToolCall,
    Usage,
)


def _bundle(**parts: object) -> ConversationBundle:
    conversation = parts.pop("conversation", Conversation("c1", "jsonl", "c1"))
    return ConversationBundle(conversation, **parts)  # type: ignore[arg-type]


def test_a_long_id_keeps_its_start_and_stays_distinct_from_its_neighbours() -> None:
    first, second = "x" * 300 + "a", "x" * 300 + "b"
    assert len(fit_id(first)) == MAX_ID_CHARS
    assert fit_id(first).startswith("x" * 200)
    assert fit_id(first) != fit_id(second)
    assert fit_id(fit_id(first)) == fit_id(first)
    assert fit_id("short") == "short"


def test_every_reference_to_a_long_id_is_fitted_the_same_way() -> None:
    long_id = "m" * 400
    bundle = _bundle(
        messages=(Message(long_id, "user", "prompt", "hi"),),
        tool_calls=(ToolCall("t1", "Bash", {}, message_source_id=long_id),),
    )
    fitted = fit_bundle(bundle)
    assert fitted.tool_calls[0].message_source_id == fitted.messages[0].source_id
    assert len(fitted.messages[0].source_id) == MAX_ID_CHARS


def test_nul_in_ids_names_and_text_is_replaced_before_fingerprints() -> None:
    bundle = _bundle(
        conversation=Conversation("c\x001", "jsonl", "c\x001", title="t\x00", cwd="/a\x00"),
        messages=(Message("m\x00", "user", "prompt", "hello\x00world", author="a\x00"),),
        tool_calls=(ToolCall("t\x00", "Ba\x00sh", {"k\x00": "v\x00", "n": 2**80}),),
    )
    prepared = prepare_bundle(bundle)
    text = repr(prepared)
    assert "\\x00" not in text
    assert prepared.bundle.messages[0].text == "hello\ufffdworld"
    assert prepared.bundle.tool_calls[0].arguments == {"k\ufffd": "v\ufffd", "n": str(2**80)}
    assert prepared.bundle.conversation_id == "c\ufffd1"


def test_names_and_labels_are_cut_to_their_column_width() -> None:
    bundle = _bundle(
        conversation=Conversation("c1", "f" * 100, "c1", model="m" * 300, project_hint="p" * 300),
        messages=(Message("m1", "assistant", "reply", "hi", author="a" * 300, model="m" * 300),),
        tool_calls=(ToolCall("t1", "n" * 500, {}),),
        tasks=(Task("k1", "title", status="s" * 100),),
        task_events=(TaskEvent("e1", "k" * 100, status="s" * 100),),
        subagent_run=SubagentRun(agent_type="a" * 300, status="s" * 100, stop_kind="x" * 100),
    )
    fitted = fit_bundle(bundle)
    assert len(fitted.conversation.format) == FORMAT_CHARS
    assert len(fitted.conversation.model or "") == NAME_CHARS
    assert len(fitted.conversation.project_hint or "") == NAME_CHARS
    assert len(fitted.messages[0].author or "") == NAME_CHARS
    assert fitted.tool_calls[0].name.endswith("…") and len(fitted.tool_calls[0].name) == NAME_CHARS
    assert len(fitted.tasks[0].status) == STATUS_CHARS
    assert len(fitted.task_events[0].kind) == EVENT_KIND_CHARS
    run = fitted.subagent_run
    assert run is not None and len(run.agent_type or "") == NAME_CHARS


def test_counts_past_the_integer_columns_are_held_at_their_bound() -> None:
    bundle = _bundle(
        messages=(Message("m1", "assistant", "reply", "hi", usage=Usage(2**70, -(2**70))),),
        tool_calls=(ToolCall("t1", "Bash", {}, exit_code=2**40, result_size=2**33),),
        subagent_run=SubagentRun(rounds=2**64, total_tokens=2**64, duration_ms=-(2**64)),
    )
    fitted = fit_bundle(bundle)
    usage = fitted.messages[0].usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (
        MAX_COUNT,
        -MAX_COUNT,
    )
    assert (fitted.tool_calls[0].exit_code, fitted.tool_calls[0].result_size) == (
        MAX_COUNT,
        MAX_COUNT,
    )
    run = fitted.subagent_run
    assert run is not None and (run.rounds, run.duration_ms) == (MAX_COUNT, -MAX_COUNT)


def test_a_time_without_a_utc_equivalent_is_dropped_and_naive_times_are_utc() -> None:
    far = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))
    naive = datetime(2026, 3, 1, 10, 0)
    bundle = _bundle(messages=(Message("m1", "user", "prompt", "hi", created_at=far),))
    assert fit_bundle(bundle).messages[0].created_at is None
    bundle = _bundle(messages=(Message("m1", "user", "prompt", "hi", created_at=naive),))
    assert fit_bundle(bundle).messages[0].created_at == naive.replace(tzinfo=UTC)
    assert (
        len(
            prepare_bundle(
                _bundle(messages=(Message("m", "user", "prompt", "x", created_at=far),))
            ).sources
        )
        == 1
    )


@pytest.mark.parametrize(
    ("table", "column", "width"),
    [
        ("conversations", "conversation_id", MAX_ID_CHARS),
        ("conversations", "external_id", MAX_ID_CHARS),
        ("conversations", "format", FORMAT_CHARS),
        ("conversations", "model", NAME_CHARS),
        ("projects", "name", NAME_CHARS),
        ("messages", "source_id", MAX_ID_CHARS),
        ("messages", "author", NAME_CHARS),
        ("messages", "model", NAME_CHARS),
        ("tool_calls", "name", NAME_CHARS),
        ("tool_calls", "call_id", MAX_ID_CHARS),
        ("tasks", "status", STATUS_CHARS),
        ("task_events", "kind", EVENT_KIND_CHARS),
        ("task_events", "status", STATUS_CHARS),
        ("subagent_runs", "agent_type", NAME_CHARS),
        ("subagent_runs", "stop_kind", EVENT_KIND_CHARS),
    ],
)
def test_the_fitted_widths_are_those_of_the_store_columns(
    table: str, column: str, width: int
) -> None:
    assert getattr(schema, table).c[column].type.length == width
