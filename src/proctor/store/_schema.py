"""The database schema, as SQLAlchemy Core tables (the one description migrations follow).

Portable across SQLite and PostgreSQL: generic column types, UTC datetimes through
:class:`UTCDateTime`, JSON through the dialect's JSON type. Every content table hangs
off ``conversations`` with ``ON DELETE CASCADE``, so deleting a conversation removes its
sources in one statement.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores it as text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _conversation_fk() -> ForeignKey:
    return ForeignKey("conversations.conversation_id", ondelete="CASCADE")


def _id(name: str, *args: Any, **kwargs: Any) -> Column[str]:
    return Column(name, String(255), *args, **kwargs)


projects = Table(
    "projects",
    metadata,
    _id("project_id", primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("status", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

conversations = Table(
    "conversations",
    metadata,
    _id("conversation_id", primary_key=True),
    _id("project_id", ForeignKey("projects.project_id"), nullable=False, index=True),
    Column("format", String(64), nullable=False),
    _id("external_id", nullable=False),
    Column("kind", String(16), nullable=False),
    _id("parent_conversation_id", index=True),
    Column("title", Text),
    Column("cwd", Text),
    Column("model", String(200)),
    Column("started_at", UTCDateTime(), index=True),
    Column("ended_at", UTCDateTime()),
    Column("origin", Text),
    Column("attributes", JSON, nullable=False),
    Column("redactions", Integer, nullable=False),
    Column("header_hash", String(32), nullable=False),
    Column("imported_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)


sources = Table(
    "sources",
    metadata,
    Column("source_type", String(16), primary_key=True),
    _id("source_id", primary_key=True),
    _id(
        "conversation_id",
        _conversation_fk(),
        nullable=False,
        index=True,
    ),
    Column("fingerprint", String(32), nullable=False),
    Column("content_hash", String(32), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("redactions", Integer, nullable=False),
    Column("occurred_at", UTCDateTime()),
    Column("first_seen_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    # The search index's freshness check (count and latest update of the messages and tool
    # calls, on every search) reads this index alone instead of every source row.
    Index("ix_sources_source_type_updated_at", "source_type", "updated_at"),
)

source_versions = Table(
    "source_versions",
    metadata,
    Column("source_type", String(16), primary_key=True),
    _id("source_id", primary_key=True),
    Column("revision", Integer, primary_key=True),
    Column("fingerprint", String(32), nullable=False),
    Column("recorded_at", UTCDateTime(), nullable=False),
    ForeignKeyConstraint(
        ["source_type", "source_id"],
        ["sources.source_type", "sources.source_id"],
        ondelete="CASCADE",
    ),
)

messages = Table(
    "messages",
    metadata,
    _id("source_id", primary_key=True),
    _id(
        "conversation_id",
        _conversation_fk(),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    _id("parent_source_id"),
    Column("role", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("author", String(200)),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime()),
    Column("on_active_branch", Boolean, nullable=False),
    Column("derived", Boolean, nullable=False),
    Column("model", String(200)),
    Column("input_tokens", Integer),
    Column("output_tokens", Integer),
    Column("cache_read_tokens", Integer),
    Column("cache_write_tokens", Integer),
    Column("reasoning_tokens", Integer),
    Column("attributes", JSON, nullable=False),
    Index("ix_messages_conversation_seq", "conversation_id", "seq"),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    _id("source_id", primary_key=True),
    _id(
        "conversation_id",
        _conversation_fk(),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    _id("message_source_id"),
    _id("call_id"),
    Column("name", String(200), nullable=False),
    Column("arguments", JSON),
    Column("status", String(16), nullable=False),
    Column("exit_code", Integer),
    Column("result_text", Text),
    Column("result_size", Integer),
    Column("created_at", UTCDateTime()),
    Column("completed_at", UTCDateTime()),
    Column("on_active_branch", Boolean, nullable=False),
    Column("attributes", JSON, nullable=False),
    Index("ix_tool_calls_conversation_seq", "conversation_id", "seq"),
)

tasks = Table(
    "tasks",
    metadata,
    _id("task_id", primary_key=True),
    _id(
        "conversation_id",
        _conversation_fk(),
        nullable=False,
        index=True,
    ),
    Column("seq", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("goal", Text),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime()),
    Column("completed_at", UTCDateTime()),
    Column("attributes", JSON, nullable=False),
)

task_events = Table(
    "task_events",
    metadata,
    _id("source_id", primary_key=True),
    _id(
        "conversation_id",
        _conversation_fk(),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    _id("task_id"),
    Column("kind", String(64), nullable=False),
    Column("status", String(32)),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime()),
    Column("attributes", JSON, nullable=False),
    Index("ix_task_events_conversation_seq", "conversation_id", "seq"),
)

subagent_runs = Table(
    "subagent_runs",
    metadata,
    _id(
        "conversation_id",
        _conversation_fk(),
        primary_key=True,
    ),
    _id("parent_tool_call_id", index=True),
    Column("agent_type", String(200)),
    Column("description", Text),
    Column("status", String(32)),
    Column("summary", Text),
    Column("rounds", Integer, nullable=False),
    Column("total_tokens", Integer, nullable=False),
    Column("tool_uses", Integer, nullable=False),
    Column("rejected_tools", JSON, nullable=False),
    Column("stop_kind", String(64)),
    Column("duration_ms", Integer),
)

imports = Table(
    "imports",
    metadata,
    _id("import_id", primary_key=True),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
    Column("status", String(32), nullable=False),
    Column("paths", JSON, nullable=False),
    Column("format", String(64)),
    Column("project", String(200)),
    Column("files", Integer, nullable=False),
    Column("conversations", Integer, nullable=False),
    Column("conversations_written", Integer, nullable=False),
    Column("sources_added", Integer, nullable=False),
    Column("sources_revised", Integer, nullable=False),
    Column("sources_unchanged", Integer, nullable=False),
    Column("redactions", Integer, nullable=False),
    Column("issues", Integer, nullable=False),
    Column("owner_host", String(255)),
    Column("owner_pid", Integer),
    Column("owner_start", String(80)),
)
"""One run of ``proctor ingest`` (or one watch cycle). ``owner_*`` name the importing
process (host, id, ``<boot id>:<start ticks>`` on Linux), so the next import can tell a
crashed one (marked ``interrupted``) from one still running."""

import_issues = Table(
    "import_issues",
    metadata,
    Column("issue_id", Integer, primary_key=True, autoincrement=True),
    _id(
        "import_id", ForeignKey("imports.import_id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("path", Text, nullable=False),
    Column("line", Integer),
    Column("severity", String(16), nullable=False),
    Column("reason", Text, nullable=False),
)

import_files = Table(
    "import_files",
    metadata,
    Column("path", String(1024), primary_key=True),
    Column("content_hash", String(32), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("adapter", String(64), nullable=False),
    Column("adapter_version", Integer, nullable=False),
    Column("conversation_ids", JSON, nullable=False),
    Column("imported_at", UTCDateTime(), nullable=False),
)

findings = Table(
    "findings",
    metadata,
    _id("finding_id", primary_key=True),
    Column("key", String(64), nullable=False, unique=True),
    _id("conversation_id", _conversation_fk(), nullable=False, index=True),
    Column("origin", String(16), nullable=False),
    Column("rule", String(200), nullable=False, index=True),
    Column("rule_version", Integer, nullable=False),
    Column("action", String(32), nullable=False),
    Column("category", String(32), nullable=False),
    Column("severity", String(16), nullable=False),
    Column("title", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("evidence", JSON, nullable=False),
    Column("confidence", Float, nullable=False),
    Column("actual", JSON),
    Column("threshold", JSON),
    _id("trigger_source_id"),
    Column("speculative", Boolean, nullable=False),
    Column("status", String(32), nullable=False, index=True),
    Column("digested", Boolean, nullable=False),
    Column("content_hash", String(32), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("status_changed_at", UTCDateTime()),
    Index("ix_findings_created_at", "created_at"),
    Index("ix_findings_conversation_id_status_severity", "conversation_id", "status", "severity"),
)

finding_changes = Table(
    "finding_changes",
    metadata,
    Column("change_id", String(32), primary_key=True),
    Column("action", String(32), nullable=False),
    Column("status", String(32), nullable=False),
    Column("finding_count", Integer, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("undone_at", UTCDateTime()),
)
"""One bulk status change (the findings inbox): what it did, and when it was undone."""

finding_change_items = Table(
    "finding_change_items",
    metadata,
    Column(
        "change_id",
        String(32),
        ForeignKey("finding_changes.change_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _id(
        "finding_id",
        ForeignKey("findings.finding_id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    ),
    Column("previous_status", String(32), nullable=False),
    Column("previous_changed_at", UTCDateTime()),
)
"""Each finding a bulk change moved, with the status it had before (for an exact undo)."""

notifications = Table(
    "notifications",
    metadata,
    Column("key", String(64), primary_key=True),
    _id("finding_id", ForeignKey("findings.finding_id", ondelete="CASCADE"), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("read_at", UTCDateTime()),
    Column("webhook_state", String(16), default="pending", index=True),
    Column("webhook_attempts", Integer),
    Column("webhook_at", UTCDateTime()),
    Column("webhook_error", Text),
)
"""One notification per finding key, ever (SPEC SUP-8). ``webhook_state`` is where its
delivery to the policy's webhook stands: ``pending`` (new), ``sending`` (claimed by one
process), ``delivered``, ``failed`` (``webhook_error`` says why) or ``skipped`` (no webhook
in the policy); NULL for notifications written before deliveries existed."""

settings = Table(
    "settings",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)

model_connections = Table(
    "model_connections",
    metadata,
    Column("name", String(80), primary_key=True),
    Column("provider", String(16), nullable=False),
    Column("model", String(200), nullable=False),
    Column("base_url", Text),
    Column("api_key_env", String(200)),
    Column("path", Text),
    Column("kind", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

model_calls = Table(
    "model_calls",
    metadata,
    Column("call_id", Integer, primary_key=True, autoincrement=True),
    Column("connection", String(80), nullable=False, index=True),
    Column("model", String(200), nullable=False),
    Column("stage", String(32), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("input_tokens", Integer),
    Column("output_tokens", Integer),
    Column("seconds", Float, nullable=False),
    _id("target_id", index=True),
    _id("run_id", index=True),
    Column("created_at", UTCDateTime(), nullable=False, index=True),
)

supervision_sessions = Table(
    "supervision_sessions",
    metadata,
    _id("session_id", primary_key=True),
    Column("target_type", String(16), nullable=False),
    _id("target_id", nullable=False, unique=True),
    Column("mode", String(16), nullable=False),
    Column("triggers", JSON, nullable=False),
    Column("every_n_steps", Integer),
    Column("throttle_seconds", Float, nullable=False),
    Column("budget_calls", Integer),
    Column("budget_tokens", Integer),
    Column("budget_period_seconds", Float, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("state", String(32), nullable=False),
    Column("last_run_at", UTCDateTime()),
    Column("last_event_index", Integer, nullable=False),
    Column("pending", Boolean, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)

supervision_runs = Table(
    "supervision_runs",
    metadata,
    _id("run_id", primary_key=True),
    _id(
        "session_id", ForeignKey("supervision_sessions.session_id", ondelete="CASCADE"), index=True
    ),
    _id("target_id", nullable=False, index=True),
    Column("trigger", String(32), nullable=False),
    Column("mode", String(16), nullable=False),
    Column("prompt_version", Integer, nullable=False),
    Column("connection", String(80)),
    Column("model", String(200)),
    Column("status", String(32), nullable=False),
    Column("error", Text),
    Column("findings", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("window_chars", Integer, nullable=False),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
)

goal_versions = Table(
    "goal_versions",
    metadata,
    _id("target_id", primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("goal", Text, nullable=False),
    Column("goal_hash", String(32), nullable=False),
    _id("source_id"),
    Column("reason", String(32), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

intent_labels = Table(
    "intent_labels",
    metadata,
    _id("source_id", primary_key=True),
    _id("target_id", nullable=False, index=True),
    Column("intent", String(16), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("low_confidence", Boolean, nullable=False),
    Column("goal_version", Integer),
    Column("model", String(200)),
    Column("prompt_version", Integer, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)


# --- Review pipeline (SPEC §6, REV-1 … REV-10) ---------------------------------------

review_runs = Table(
    "review_runs",
    metadata,
    _id("run_id", primary_key=True),
    Column("scope_key", String(300), nullable=False, index=True),
    _id("project_id"),
    Column("time_from", UTCDateTime()),
    Column("time_to", UTCDateTime()),
    Column("trigger", String(16), nullable=False),
    Column("reanalyze", Boolean, nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("active", Boolean, nullable=False),
    Column("connection", String(80)),
    Column("model", String(200)),
    Column("options", JSON, nullable=False),
    Column("sources_total", Integer, nullable=False),
    Column("sources_done", Integer, nullable=False),
    Column("batches_total", Integer, nullable=False),
    Column("batches_done", Integer, nullable=False),
    Column("model_calls", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("error", Text),
    _id("result_id"),
    Column("created_at", UTCDateTime(), nullable=False, index=True),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
)
"""One review: frozen scope and range, state (REV-5) and counters. ``active`` is true while
a worker executes it, so a cancelled run that is still stopping reads as "cancelling"."""

review_slot = Table(
    "review_slot",
    metadata,
    Column("slot", Integer, primary_key=True, autoincrement=False),
    _id("run_id"),
    Column("owner", String(200)),
    Column("acquired_at", UTCDateTime()),
    Column("heartbeat_at", UTCDateTime()),
)
"""The one execution slot (REV-6): a single row, claimed in a transaction."""


def _run_fk() -> ForeignKey:
    return ForeignKey("review_runs.run_id", ondelete="CASCADE")


review_manifest = Table(
    "review_manifest",
    metadata,
    _id("run_id", _run_fk(), primary_key=True),
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("source_type", String(16), nullable=False),
    _id("source_id", nullable=False),
    _id("conversation_id", nullable=False),
    Column("fingerprint", String(32), nullable=False),
    Column("occurred_at", UTCDateTime()),
    Column("batch_no", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Index("ix_review_manifest_run_id_batch_no_position", "run_id", "batch_no", "position"),
)
"""The frozen, paged list of sources a run reads, in order, with their batch. A batch's page
is read and updated through (run, batch, position): one index range, already in order."""

review_batches = Table(
    "review_batches",
    metadata,
    _id("run_id", _run_fk(), primary_key=True),
    Column("batch_no", Integer, primary_key=True, autoincrement=False),
    Column("state", String(16), nullable=False),
    Column("sources", Integer, nullable=False),
    Column("output", JSON),
    Column("error", Text),
    Column("model_calls", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("completed_at", UTCDateTime()),
)
"""A saved batch keeps its facts, so pause/resume and restarts never redo it."""

review_checkpoints = Table(
    "review_checkpoints",
    metadata,
    Column("stage", String(16), primary_key=True),
    Column("scope_key", String(300), primary_key=True),
    Column("source_type", String(16), primary_key=True),
    _id("source_id", primary_key=True),
    Column("fingerprint", String(32), nullable=False),
    _id("run_id", nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""What each (stage, scope, source) was last processed at (REV-7); moved only on publish."""

results = Table(
    "results",
    metadata,
    _id("result_id", primary_key=True),
    _id("run_id", _run_fk(), nullable=False, unique=True),
    Column("scope_key", String(300), nullable=False, index=True),
    _id("project_id", index=True),
    Column("time_from", UTCDateTime()),
    Column("time_to", UTCDateTime()),
    Column("trigger", String(16), nullable=False),
    Column("summary", Text, nullable=False),
    Column("change_digest", Text, nullable=False),
    Column("coverage", JSON, nullable=False),
    Column("complete", Boolean, nullable=False),
    Column("snapshot", JSON, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False, index=True),
)
"""One published review (REV-8): its summaries, coverage and the graph as it said then."""

# --- Story graph (current state; every object cites its sources) --------------------

entities = Table(
    "entities",
    metadata,
    _id("entity_id", primary_key=True),
    _id("project_id", index=True),
    Column("kind", String(32), nullable=False),
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("identity_key", Text),
    Column("layer", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    _id("first_result_id"),
    _id("last_result_id"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False, index=True),
)

graph_events = Table(
    "graph_events",
    metadata,
    _id("event_id", primary_key=True),
    _id("project_id", index=True),
    _id("conversation_id", index=True),
    Column("kind", String(32), nullable=False),
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("occurred_at", UTCDateTime(), index=True),
    Column("outcome", String(16), nullable=False),
    Column("layer", String(16), nullable=False),
    _id("first_result_id"),
    _id("last_result_id"),
    Column("created_at", UTCDateTime(), nullable=False),
)


def _entity_fk() -> ForeignKey:
    return ForeignKey("entities.entity_id", ondelete="CASCADE")


def _event_fk() -> ForeignKey:
    return ForeignKey("graph_events.event_id", ondelete="CASCADE")


event_entities = Table(
    "event_entities",
    metadata,
    _id("event_id", _event_fk(), primary_key=True),
    _id("entity_id", _entity_fk(), primary_key=True, index=True),
)

entity_changes = Table(
    "entity_changes",
    metadata,
    _id("change_id", primary_key=True),
    _id("entity_id", _entity_fk(), nullable=False, index=True),
    _id("result_id", nullable=False, index=True),
    Column("kind", String(16), nullable=False),
    Column("description", Text, nullable=False),
    Column("layer", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

relations = Table(
    "relations",
    metadata,
    _id("relation_id", primary_key=True),
    _id("project_id", index=True),
    _id("from_entity_id", _entity_fk(), nullable=False, index=True),
    _id("to_entity_id", _entity_fk(), nullable=False, index=True),
    Column("type", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    Column("layer", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    _id("first_result_id"),
    _id("last_result_id"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""A revoked relation keeps its row so later runs never recreate it (REV-4)."""

open_items = Table(
    "open_items",
    metadata,
    Column("item_key", String(500), primary_key=True),
    _id("project_id", index=True),
    Column("title", Text, nullable=False),
    Column("detail", Text, nullable=False),
    Column("entity_ids", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("layer", String(16), nullable=False),
    _id("first_result_id"),
    _id("last_result_id"),
    _id("resolved_result_id"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)

story_lines = Table(
    "story_lines",
    metadata,
    _id("story_line_id", primary_key=True),
    _id("project_id", index=True),
    _id("parent_id", ForeignKey("story_lines.story_line_id", ondelete="SET NULL")),
    Column("title", Text, nullable=False),
    Column("summary", Text, nullable=False),
    _id("first_result_id"),
    _id("last_result_id"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)

story_line_events = Table(
    "story_line_events",
    metadata,
    _id(
        "story_line_id",
        ForeignKey("story_lines.story_line_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _id("event_id", _event_fk(), primary_key=True, index=True),
    _id("result_id", nullable=False),
)

experiences = Table(
    "experiences",
    metadata,
    _id("experience_id", primary_key=True),
    _id("project_id", index=True),
    _id("result_id", nullable=False, index=True),
    Column("title", Text, nullable=False),
    Column("lesson", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

experience_events = Table(
    "experience_events",
    metadata,
    _id(
        "experience_id",
        ForeignKey("experiences.experience_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _id("event_id", _event_fk(), primary_key=True),
)

source_refs = Table(
    "source_refs",
    metadata,
    Column("ref_id", Integer, primary_key=True, autoincrement=True),
    Column("object_type", String(16), nullable=False),
    _id("object_id", nullable=False),
    Column("source_type", String(16), nullable=False),
    _id("source_id", nullable=False, index=True),
    Column("field", String(200)),
    Column("start_offset", Integer),
    Column("end_offset", Integer),
    _id("result_id", nullable=False),
    # With result_id: one result's references of an object are an index-only range.
    Index(
        "ix_source_refs_object_type_object_id_result_id", "object_type", "object_id", "result_id"
    ),
)
"""Where each graph object comes from; kept when a source is deleted (it then reads as gone)."""

result_objects = Table(
    "result_objects",
    metadata,
    _id("result_id", ForeignKey("results.result_id", ondelete="CASCADE"), primary_key=True),
    Column("object_type", String(16), primary_key=True),
    _id("object_id", primary_key=True),
    Index("ix_result_objects_object_type_object_id", "object_type", "object_id"),
)
"""Which objects a result published: ``graph(result_id)`` reads exactly these (REV-12)."""

needs_review = Table(
    "needs_review",
    metadata,
    Column("item_id", Integer, primary_key=True, autoincrement=True),
    Column("object_type", String(16), nullable=False),
    _id("object_id", nullable=False, index=True),
    _id("result_id", nullable=False),
    Column("reason", String(32), nullable=False),
    Column("proposed", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)
"""New automatic evidence that disagrees with a user's edit: shown, never applied (REV-4)."""

graph_edits = Table(
    "graph_edits",
    metadata,
    Column("edit_id", Integer, primary_key=True, autoincrement=True),
    Column("object_type", String(16), nullable=False),
    _id("object_id", nullable=False, index=True),
    Column("action", String(16), nullable=False),
    Column("before", JSON),
    Column("after", JSON),
    Column("note", Text),
    Column("created_at", UTCDateTime(), nullable=False),
)
"""Every confirm / revise / remove a person made, with what it replaced."""


# --- Search index (SPEC REV-14; owned by proctor.search) -----------------------------

search_documents = Table(
    "search_documents",
    metadata,
    # An integer key the full-text index can point at (SQLite may renumber implicit rowids).
    Column("row_id", Integer, primary_key=True, autoincrement=True),
    Column("doc_key", String(300), nullable=False, unique=True),
    Column("doc_type", String(32), nullable=False, index=True),
    _id("doc_id", nullable=False),
    _id("project_id", index=True),
    _id("conversation_id", _conversation_fk()),
    Column("position", Integer),
    Column("author", String(200)),
    Column("title", Text),
    Column("text", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("context", Text, nullable=False),
    Column("occurred_at", UTCDateTime()),
    Column("source_refs", JSON, nullable=False),
    Column("basis", String(32), nullable=False),
    Column("indexed_at", UTCDateTime(), nullable=False),
    # A search looks up the turns just before and after its candidates (migration 0016).
    Index("ix_search_documents_conversation_id_position", "conversation_id", "position"),
    sqlite_autoincrement=True,
)
"""One searchable document: a message, tool call or graph object. ``text`` is what a hit
shows and what is embedded; full text ranks ``body`` (the text and its date) and, at a
lower weight, ``context`` (the neighbouring turns). ``basis`` fingerprints the inputs, so
unchanged documents are not rebuilt."""

search_vectors = Table(
    "search_vectors",
    metadata,
    Column(
        "row_id",
        Integer,
        ForeignKey("search_documents.row_id", ondelete="CASCADE"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("model", String(100), nullable=False),
    Column("text_hash", String(32), nullable=False),
    Column("vector", LargeBinary, nullable=False),
)
"""A document's sentence embedding: float32, little-endian, unit length."""

search_state = Table(
    "search_state",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""Small facts about the index, e.g. what the sources looked like at the last full pass."""

SEARCH_FTS_TABLE = "search_fts"
"""SQLite only: the FTS5 index over ``search_documents`` (body, context), kept by triggers.
It and its shadow tables (``search_fts_*``) are derived data, not described above."""


def is_search_fts_table(name: str | None) -> bool:
    """Whether a table name is the SQLite FTS5 index or one of its shadow tables."""
    return name is not None and (
        name == SEARCH_FTS_TABLE or name.startswith(SEARCH_FTS_TABLE + "_")
    )


# --- Heartbeat plans, activity and suggestions (SPEC §7, HB-1 … HB-7) ------------------

heartbeat_plans = Table(
    "heartbeat_plans",
    metadata,
    _id("plan_id", primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    _id("project_id"),
    Column("scope_key", String(300), nullable=False),
    Column("recurrence", String(16), nullable=False),
    Column("time_of_day", String(5), nullable=False),
    Column("weekdays", JSON, nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("intervention", String(16), nullable=False),
    Column("window_hours", Integer),
    Column("next_run_at", UTCDateTime(), index=True),
    Column("last_run_at", UTCDateTime()),
    Column("lease_owner", String(200)),
    Column("lease_attempt", Integer, nullable=False),
    Column("lease_expires_at", UTCDateTime()),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""A scheduled review (HB-2); the lease columns make a due plan claimable by one owner."""

heartbeat_runs = Table(
    "heartbeat_runs",
    metadata,
    _id("heartbeat_id", primary_key=True),
    _id("plan_id", ForeignKey("heartbeat_plans.plan_id", ondelete="CASCADE"), index=True),
    Column("due_at", UTCDateTime(), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("owner", String(200), nullable=False),
    Column("status", String(32), nullable=False),
    Column("phase", String(16), nullable=False),
    _id("review_run_id", index=True),
    _id("result_id"),
    Column("error", Text),
    Column("suggestions", Integer, nullable=False),
    Column("started_at", UTCDateTime(), nullable=False, index=True),
    Column("finished_at", UTCDateTime()),
)
"""One firing of a plan and what it did (HB-3, HB-7)."""

suggestions = Table(
    "suggestions",
    metadata,
    _id("suggestion_id", primary_key=True),
    Column("fingerprint", String(64), nullable=False, unique=True),
    Column("kind", String(32), nullable=False),
    _id("project_id", index=True),
    Column("object_type", String(16)),
    _id("object_id"),
    _id("result_id", nullable=False, index=True),
    _id("heartbeat_id"),
    Column("title", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("rule_text", Text, nullable=False),
    Column("phrased", Boolean, nullable=False),
    Column("evidence", JSON, nullable=False),
    Column("evidence_key", String(64), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("decided_at", UTCDateTime()),
)
"""A suggestion from a result's changes (HB-5); an ignored one returns only with new
evidence (``evidence_key`` changes)."""

user_tasks = Table(
    "user_tasks",
    metadata,
    _id("task_id", primary_key=True),
    _id("project_id", index=True),
    _id("suggestion_id"),
    Column("title", Text, nullable=False),
    Column("detail", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""A task a person took on by accepting an open item; created paused (HB-6)."""

memories = Table(
    "memories",
    metadata,
    _id("memory_id", primary_key=True),
    _id("project_id", index=True),
    _id("entity_id", index=True),
    _id("suggestion_id"),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False, index=True),
)
"""What a person confirmed to remember (a convention); background for reviews (REV-7b)."""

memory_candidates = Table(
    "memory_candidates",
    metadata,
    _id("candidate_id", primary_key=True),
    _id(
        "finding_id",
        ForeignKey("findings.finding_id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    _id("project_id", index=True),
    Column("text", Text, nullable=False),
    Column("status", String(16), nullable=False, index=True),
    _id("memory_id"),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
    Column("decided_at", UTCDateTime()),
)
"""A memory drafted from a finding ("Remember this", SUP-10): ``candidate`` until a person
confirms it (a ``memories`` row is written, ``memory_id`` names it) or discards it. Only
confirmed memories reach the supervisor (SUP-3)."""

graph_access = Table(
    "graph_access",
    metadata,
    _id("conversation_id", _conversation_fk(), primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""Whether agents of this conversation may ask its project's story graph over MCP (UI-4).

Off unless a person turned it on; turning it on starts no review and writes nothing else."""
