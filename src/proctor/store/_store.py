"""The store: repositories composed over one database, every write path one transaction.

A repository is a small class over the shared ``Database`` (``_base.py``) holding the methods of
one group of tables: ``ConversationRepository``, ``FindingRepository``, ``GraphRepository`` …
Each comes as a ``…Reads`` class (only reads) and a ``…Repository`` that adds the writes.
``ReadStore`` composes the ``…Reads`` of every group (``store.repos``) over a database opened
read-only; ``SqlStore`` composes the full repositories over a writer. Both keep one delegating
method per repository method, so ``store.graph(…)`` and ``store.repos.graph.graph(…)`` are one
call; new code takes the narrowest repository (or protocol) it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Literal, overload

from sqlalchemy import Engine
from sqlalchemy.engine import Connection
from sqlalchemy.engine.base import OptionEngine
from sqlalchemy.exc import SQLAlchemyError

from proctor.errors import StoreError
from proctor.store._base import Database, P, R
from proctor.store._engine import create_sqlite_engine, create_url_engine, upgrade_schema
from proctor.store._location import configured_database_url
from proctor.store._parts import Parts, deferred, forward_to

if TYPE_CHECKING:
    from proctor.store._conversation_store import ConversationReads, ConversationRepository
    from proctor.store._goal_store import GoalReads, GoalRepository
    from proctor.store._graph_access import GraphAccessReads, GraphAccessRepository
    from proctor.store._graph_store import GraphReads, GraphRepository
    from proctor.store._heartbeat_store import HeartbeatReads, HeartbeatRepository
    from proctor.store._import_store import ImportRepository
    from proctor.store._inbox_store import FindingReads, FindingRepository
    from proctor.store._memory_store import MemoryReads, MemoryRepository
    from proctor.store._model_settings import ModelSettingsReads, ModelSettingsRepository
    from proctor.store._notifications import NotificationReads, NotificationRepository
    from proctor.store._review_reads import ReviewReads
    from proctor.store._review_store import ReviewStore
    from proctor.store._search_index import SearchIndexReads, SearchIndexRepository
    from proctor.store._suggestion_store import SuggestionReads, SuggestionRepository
    from proctor.store._supervision_store import SupervisionReads, SupervisionRepository
    from proctor.store._trace_store import TraceReads

    def _checked_before_this_module() -> None:
        """Never called. For mypy only: imports in a function order the repository modules
        before this one within the package's import cycle (imports under TYPE_CHECKING
        alone leave that order open, and then the types of facade methods forwarded to
        inferred attributes, e.g. ``ReviewReads.review_run``, cannot be determined)."""
        import proctor.store._conversation_store
        import proctor.store._goal_store
        import proctor.store._graph_access
        import proctor.store._graph_store
        import proctor.store._heartbeat_store
        import proctor.store._import_store
        import proctor.store._inbox_store
        import proctor.store._memory_store
        import proctor.store._model_settings
        import proctor.store._notifications
        import proctor.store._review_reads
        import proctor.store._review_store
        import proctor.store._search_index
        import proctor.store._suggestion_store
        import proctor.store._supervision_store
        import proctor.store._trace_store  # noqa: F401

else:
    # The repository classes by name: their modules are imported when a part is first used.
    ConversationReads = deferred("ConversationReads")
    ConversationRepository = deferred("ConversationRepository")
    GoalReads = deferred("GoalReads")
    GoalRepository = deferred("GoalRepository")
    GraphAccessReads = deferred("GraphAccessReads")
    GraphAccessRepository = deferred("GraphAccessRepository")
    GraphReads = deferred("GraphReads")
    GraphRepository = deferred("GraphRepository")
    HeartbeatReads = deferred("HeartbeatReads")
    HeartbeatRepository = deferred("HeartbeatRepository")
    ImportRepository = deferred("ImportRepository")
    FindingReads = deferred("FindingReads")
    FindingRepository = deferred("FindingRepository")
    MemoryReads = deferred("MemoryReads")
    MemoryRepository = deferred("MemoryRepository")
    ModelSettingsReads = deferred("ModelSettingsReads")
    ModelSettingsRepository = deferred("ModelSettingsRepository")
    NotificationReads = deferred("NotificationReads")
    NotificationRepository = deferred("NotificationRepository")
    ReviewReads = deferred("ReviewReads")
    ReviewStore = deferred("ReviewStore")
    SearchIndexReads = deferred("SearchIndexReads")
    SearchIndexRepository = deferred("SearchIndexRepository")
    SuggestionReads = deferred("SuggestionReads")
    SuggestionRepository = deferred("SuggestionRepository")
    SupervisionReads = deferred("SupervisionReads")
    SupervisionRepository = deferred("SupervisionRepository")
    TraceReads = deferred("TraceReads")

if TYPE_CHECKING:
    from proctor.store._goal_store import GoalStoreProtocol
    from proctor.store._graph_access import GraphAccessRecords
    from proctor.store._graph_interfaces import GraphRecords
    from proctor.store._heartbeat_records import HeartbeatRecords
    from proctor.store._interfaces import Store, StoreReader
    from proctor.store._memory_store import MemoryCandidateRecords
    from proctor.store._model_settings import ModelSettings, ModelSettingsReader
    from proctor.store._repository_protocols import (
        ConversationReader,
        ConversationRecords,
        FindingReader,
        FindingRecords,
        ImportRecords,
        NotificationReader,
        NotificationRecords,
        TraceReader,
    )
    from proctor.store._review_records import ReviewReader, ReviewRecords
    from proctor.store._suggestion_store import SuggestionRecords
    from proctor.store._supervision_store import SupervisionRecords

__all__ = ["ReadRepositories", "ReadStore", "Repositories", "SqlStore"]


if TYPE_CHECKING:
    # Every repository satisfies its protocol: mypy checks these (they never run).
    _conversation_reads: type[ConversationReader] = ConversationReads
    _conversations: type[ConversationRecords] = ConversationRepository
    _imports: type[ImportRecords] = ImportRepository
    _traces: type[TraceReader] = TraceReads
    _finding_reads: type[FindingReader] = FindingReads
    _findings: type[FindingRecords] = FindingRepository
    _notification_reads: type[NotificationReader] = NotificationReads
    _notifications: type[NotificationRecords] = NotificationRepository
    _memories: type[MemoryCandidateRecords] = MemoryRepository
    _review_reads: type[ReviewReader] = ReviewReads
    _reviews: type[ReviewRecords] = ReviewStore
    _graph: type[GraphRecords] = GraphRepository
    _graph_access: type[GraphAccessRecords] = GraphAccessRepository
    _heartbeat: type[HeartbeatRecords] = HeartbeatRepository
    _suggestions: type[SuggestionRecords] = SuggestionRepository
    _supervision: type[SupervisionRecords] = SupervisionRepository
    _goals: type[GoalStoreProtocol] = GoalRepository
    _model_reads: type[ModelSettingsReader] = ModelSettingsReads
    _models: type[ModelSettings] = ModelSettingsRepository


def _via(part: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A facade method that calls ``method`` on the repository ``store.repos.<part>``."""
    return forward_to(f"repos.{part}", method)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class ReadRepositories(Parts):
    """One read-only repository per group of tables: none of them has a write method.

    Each is imported and built the first time it is read (``Parts``), then kept.
    """

    conversations: ConversationReads
    traces: TraceReads
    findings: FindingReads
    notifications: NotificationReads
    memories: MemoryReads
    reviews: ReviewReads
    graph: GraphReads
    graph_access: GraphAccessReads
    heartbeat: HeartbeatReads
    suggestions: SuggestionReads
    supervision: SupervisionReads
    goals: GoalReads
    models: ModelSettingsReads
    search: SearchIndexReads

    @classmethod
    def over(cls, database: Database) -> ReadRepositories:
        """Every reading repository over ``database`` (each built on first use)."""
        return cls(database)


@dataclass(frozen=True, init=False, repr=False, eq=False)
class Repositories(Parts):
    """One repository per group of tables, with its writes; all share one ``Database``.

    Each is imported and built the first time it is read (``Parts``), then kept.
    """

    conversations: ConversationRepository
    imports: ImportRepository
    traces: TraceReads
    findings: FindingRepository
    notifications: NotificationRepository
    memories: MemoryRepository
    reviews: ReviewStore
    graph: GraphRepository
    graph_access: GraphAccessRepository
    heartbeat: HeartbeatRepository
    suggestions: SuggestionRepository
    supervision: SupervisionRepository
    goals: GoalRepository
    models: ModelSettingsRepository
    search: SearchIndexRepository

    @classmethod
    def over(cls, database: Database) -> Repositories:
        """Every repository over ``database`` (each built on first use)."""
        return cls(database)


class ReadStore:
    """The reads of every repository, over one database.

    Opened read-only (``open_store(read_only=True)``, ``SqlStore.reader()``) it has no
    writer, its repositories have no write methods, and the database refuses a write sent
    through its connections anyway. The delegating methods below only forward to
    ``self.repos``.
    """

    def __init__(self, database: Database) -> None:
        self._database = database
        self.repos: ReadRepositories = ReadRepositories.over(database)
        self.description = database.description
        """Where the data lives, for messages (a file path or a URL without password)."""

    @property
    def dialect(self) -> str:
        """The database kind: ``sqlite`` (embedded) or ``postgresql`` (scale-out)."""
        return self._database.dialect

    @property
    def _reader(self) -> Engine | OptionEngine:
        return self._database.reader

    def _read(self) -> AbstractContextManager[Connection]:
        """A read-only connection (for the tests; code uses a repository, e.g. ``repos.search``)."""
        return self._database.read()

    def close(self) -> None:
        """Release every pooled connection."""
        self._database.close()

    # -- reads of every repository (forwarded to self.repos) --------------------------

    list_conversations = _via("conversations", ConversationReads.list_conversations)
    count_conversations = _via("conversations", ConversationReads.count_conversations)
    resolve_conversation_id = _via("conversations", ConversationReads.resolve_conversation_id)
    conversation = _via("conversations", ConversationReads.conversation)
    transcript = _via("conversations", ConversationReads.transcript)
    messages = _via("conversations", ConversationReads.messages)
    source = _via("conversations", ConversationReads.source)
    source_versions = _via("conversations", ConversationReads.source_versions)
    projects = _via("conversations", ConversationReads.projects)
    counts = _via("conversations", ConversationReads.counts)
    imports = _via("conversations", ConversationReads.imports)
    import_issues = _via("conversations", ConversationReads.import_issues)
    imported_file = _via("conversations", ConversationReads.imported_file)
    imported_files = _via("conversations", ConversationReads.imported_files)
    existing_conversation_ids = _via("conversations", ConversationReads.existing_conversation_ids)
    transcript_excerpts = _via("conversations", ConversationReads.transcript_excerpts)
    trace_outline = _via("traces", TraceReads.trace_outline)
    trace_sources = _via("traces", TraceReads.trace_sources)
    finding_citations = _via("traces", TraceReads.finding_citations)
    subagent_cards = _via("traces", TraceReads.subagent_cards)
    findings = _via("findings", FindingReads.findings)
    finding = _via("findings", FindingReads.finding)
    resolve_finding_id = _via("findings", FindingReads.resolve_finding_id)
    findings_page = _via("findings", FindingReads.findings_page)
    finding_position = _via("findings", FindingReads.finding_position)
    finding_groups = _via("findings", FindingReads.finding_groups)
    open_findings_by_conversation = _via("findings", FindingReads.open_findings_by_conversation)
    conversations_with_findings = _via("findings", FindingReads.conversations_with_findings)
    notifications = _via("notifications", NotificationReads.notifications)
    notification_page = _via("notifications", NotificationReads.notification_page)
    unread_notification_count = _via("notifications", NotificationReads.unread_notification_count)
    notification = _via("notifications", NotificationReads.notification)
    resolve_notification_key = _via("notifications", NotificationReads.resolve_notification_key)
    notifications_since = _via("notifications", NotificationReads.notifications_since)
    latest_notification_time = _via("notifications", NotificationReads.latest_notification_time)
    notifications_version = _via("notifications", NotificationReads.notifications_version)
    pending_webhook_notifications = _via(
        "notifications", NotificationReads.pending_webhook_notifications
    )
    memory_candidate = _via("memories", MemoryReads.memory_candidate)
    memory_candidates = _via("memories", MemoryReads.memory_candidates)
    project_memories = _via("memories", MemoryReads.project_memories)
    conversation_memories = _via("memories", MemoryReads.conversation_memories)
    review_run = _via("reviews", ReviewReads.review_run)
    review_runs = _via("reviews", ReviewReads.review_runs)
    review_slot_holder = _via("reviews", ReviewReads.review_slot_holder)
    review_slot_held = _via("reviews", ReviewReads.review_slot_held)
    manifest_page = _via("reviews", ReviewReads.manifest_page)
    review_batch_input = _via("reviews", ReviewReads.review_batch_input)
    review_batches = _via("reviews", ReviewReads.review_batches)
    manifest_counts = _via("reviews", ReviewReads.manifest_counts)
    done_manifest = _via("reviews", ReviewReads.done_manifest)
    done_sources = _via("reviews", ReviewReads.done_sources)
    checkpoint_count = _via("reviews", ReviewReads.checkpoint_count)
    scope_span = _via("reviews", ReviewReads.scope_span)
    review_conversations = _via("reviews", ReviewReads.review_conversations)
    source_contents = _via("reviews", ReviewReads.source_contents)
    resolve_graph_object = _via("graph", GraphReads.resolve_graph_object)
    needs_review_items = _via("graph", GraphReads.needs_review_items)
    overview = _via("graph", GraphReads.overview)
    resolve_result_id = _via("graph", GraphReads.resolve_result_id)
    result = _via("graph", GraphReads.result)
    latest_result = _via("graph", GraphReads.latest_result)
    graph = _via("graph", GraphReads.graph)
    project_graph = _via("graph", GraphReads.project_graph)
    result_conversations = _via("graph", GraphReads.result_conversations)
    source_times = _via("graph", GraphReads.source_times)
    stories = _via("graph", GraphReads.stories)
    source_text = _via("graph", GraphReads.source_text)
    source_context = _via("graph", GraphReads.source_context)
    result_object = _via("graph", GraphReads.result_object)
    conversation_sources = _via("graph", GraphReads.conversation_sources)
    attention = _via("graph", GraphReads.attention)
    entity_candidates = _via("graph", GraphReads.entity_candidates)
    story_line_candidates = _via("graph", GraphReads.story_line_candidates)
    entity = _via("graph", GraphReads.entity)
    graph_access = _via("graph_access", GraphAccessReads.graph_access)
    plan = _via("heartbeat", HeartbeatReads.plan)
    plans = _via("heartbeat", HeartbeatReads.plans)
    heartbeat_run = _via("heartbeat", HeartbeatReads.heartbeat_run)
    heartbeat_runs = _via("heartbeat", HeartbeatReads.heartbeat_runs)
    activity = _via("heartbeat", HeartbeatReads.activity)
    result_changes = _via("suggestions", SuggestionReads.result_changes)
    suggestions = _via("suggestions", SuggestionReads.suggestions)
    suggestion = _via("suggestions", SuggestionReads.suggestion)
    user_tasks = _via("suggestions", SuggestionReads.user_tasks)
    memories = _via("suggestions", SuggestionReads.memories)
    supervision_session = _via("supervision", SupervisionReads.supervision_session)
    supervision_sessions = _via("supervision", SupervisionReads.supervision_sessions)
    supervision_runs = _via("supervision", SupervisionReads.supervision_runs)
    supervision_usage = _via("supervision", SupervisionReads.supervision_usage)
    task_conversation_id = _via("supervision", SupervisionReads.task_conversation_id)
    goal_versions = _via("goals", GoalReads.goal_versions)
    current_goal = _via("goals", GoalReads.current_goal)
    intent_labels = _via("goals", GoalReads.intent_labels)
    connection = _via("models", ModelSettingsReads.connection)
    list_connections = _via("models", ModelSettingsReads.list_connections)
    get_setting = _via("models", ModelSettingsReads.get_setting)
    model_usage = _via("models", ModelSettingsReads.model_usage)


class SqlStore(ReadStore):
    """Every repository with its writes (``Store``) on SQLAlchemy Core: a SQLite file or a
    PostgreSQL URL. ``reader()`` is the same database read-only."""

    repos: Repositories  # type: ignore[assignment]

    def __init__(self, writer: Engine, reader: Engine | OptionEngine, *, description: str) -> None:
        database = Database(writer, reader, description=description)
        super().__init__(database)
        self.repos = Repositories.over(database)

    def reader(self) -> ReadStore:
        """The reads of this store through its read-only engine (closed with this store)."""
        return ReadStore(self._database.read_only_view())

    def database_url(self) -> str:
        """The writer's URL, password included: for a job queue on the same database."""
        return self._database.url()

    @property
    def _writer(self) -> Engine:
        return self._database.writer

    def _write(self) -> AbstractContextManager[Connection]:
        """One write transaction (for the tests; code uses a repository, e.g. ``repos.search``)."""
        return self._database.write()

    # -- writes of every repository (forwarded to self.repos) -------------------------

    write_conversation = _via("conversations", ConversationRepository.write_conversation)
    write_conversations = _via("conversations", ConversationRepository.write_conversations)
    append_conversations = _via("conversations", ConversationRepository.append_conversations)
    delete_conversation = _via("conversations", ConversationRepository.delete_conversation)
    record_imported_file = _via("conversations", ConversationRepository.record_imported_file)
    import_batch = _via("conversations", ConversationRepository.import_batch)
    begin_import = _via("imports", ImportRepository.begin_import)
    finish_import = _via("imports", ImportRepository.finish_import)
    mark_interrupted_imports = _via("imports", ImportRepository.mark_interrupted_imports)
    record_findings = _via("findings", FindingRepository.record_findings)
    set_finding_status = _via("findings", FindingRepository.set_finding_status)
    set_finding_digested = _via("findings", FindingRepository.set_finding_digested)
    change_findings = _via("findings", FindingRepository.change_findings)
    undo_finding_change = _via("findings", FindingRepository.undo_finding_change)
    mark_notifications_read = _via("notifications", NotificationRepository.mark_notifications_read)
    claim_webhook_deliveries = _via(
        "notifications", NotificationRepository.claim_webhook_deliveries
    )
    record_webhook_outcome = _via("notifications", NotificationRepository.record_webhook_outcome)
    remember_finding = _via("memories", MemoryRepository.remember_finding)
    confirm_memory = _via("memories", MemoryRepository.confirm_memory)
    discard_memory = _via("memories", MemoryRepository.discard_memory)
    create_review_run = _via("reviews", ReviewStore.create_review_run)
    set_review_status = _via("reviews", ReviewStore.set_review_status)
    add_review_usage = _via("reviews", ReviewStore.add_review_usage)
    fail_interrupted_reviews = _via("reviews", ReviewStore.fail_interrupted_reviews)
    claim_review_slot = _via("reviews", ReviewStore.claim_review_slot)
    beat_review_slot = _via("reviews", ReviewStore.beat_review_slot)
    release_review_slot = _via("reviews", ReviewStore.release_review_slot)
    save_review_batch = _via("reviews", ReviewStore.save_review_batch)
    publish_result = _via("graph", GraphRepository.publish_result)
    confirm = _via("graph", GraphRepository.confirm)
    revise = _via("graph", GraphRepository.revise)
    remove = _via("graph", GraphRepository.remove)
    dismiss_needs_review = _via("graph", GraphRepository.dismiss_needs_review)
    set_graph_access = _via("graph_access", GraphAccessRepository.set_graph_access)
    create_plan = _via("heartbeat", HeartbeatRepository.create_plan)
    update_plan = _via("heartbeat", HeartbeatRepository.update_plan)
    delete_plan = _via("heartbeat", HeartbeatRepository.delete_plan)
    claim_due_plans = _via("heartbeat", HeartbeatRepository.claim_due_plans)
    claim_plan_now = _via("heartbeat", HeartbeatRepository.claim_plan_now)
    release_plan_lease = _via("heartbeat", HeartbeatRepository.release_plan_lease)
    set_heartbeat_outcome = _via("heartbeat", HeartbeatRepository.set_heartbeat_outcome)
    save_suggestions = _via("suggestions", SuggestionRepository.save_suggestions)
    accept_suggestion = _via("suggestions", SuggestionRepository.accept_suggestion)
    ignore_suggestion = _via("suggestions", SuggestionRepository.ignore_suggestion)
    put_supervision_session = _via("supervision", SupervisionRepository.put_supervision_session)
    claim_supervision_run = _via("supervision", SupervisionRepository.claim_supervision_run)
    finish_supervision_run = _via("supervision", SupervisionRepository.finish_supervision_run)
    clear_supervision_pending = _via("supervision", SupervisionRepository.clear_supervision_pending)
    record_goal_versions = _via("goals", GoalRepository.record_goal_versions)
    record_intent_labels = _via("goals", GoalRepository.record_intent_labels)
    save_connection = _via("models", ModelSettingsRepository.save_connection)
    delete_connection = _via("models", ModelSettingsRepository.delete_connection)
    set_setting = _via("models", ModelSettingsRepository.set_setting)
    record_model_attempts = _via("models", ModelSettingsRepository.record_model_attempts)


if TYPE_CHECKING:
    _store: type[Store] = SqlStore
    _reader: type[StoreReader] = ReadStore


PG_READ_ONLY = "-c default_transaction_read_only=on"
"""Connection options of a read-only PostgreSQL store: every transaction is read-only."""


@overload
def open_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: Literal[False] = False
) -> SqlStore: ...


@overload
def open_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: Literal[True]
) -> ReadStore: ...


@overload
def open_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: bool
) -> ReadStore: ...


def open_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: bool = False
) -> ReadStore:
    """Open (and create or migrate) the database.

    Without ``path`` or ``url`` the store is ``PROCTOR_DATABASE_URL`` when it is set
    (PostgreSQL for scale-out), else ``$PROCTOR_HOME/proctor.db``.

    Args:
        path: SQLite file; default ``$PROCTOR_HOME/proctor.db``.
        url: a database URL instead of a file (e.g. ``postgresql://…``).
        read_only: a ``ReadStore`` without any write access (the database must exist): on
            SQLite the file is opened ``mode=ro``, on PostgreSQL every transaction is
            read-only (``default_transaction_read_only``); the database refuses writes.
    """
    from proctor._util.paths import database_path

    if isinstance(path, str) and "://" in path:
        scheme = path.split("://", 1)[0]
        raise StoreError(
            f"open_store was given a database URL ({scheme}://…) as a file path; "
            "pass it as url=… (a path would make a SQLite file named after the URL)"
        )
    if path is None and url is None:
        url = configured_database_url()
    try:
        if url is not None:
            if read_only:
                # Read-only twice over: the session's default and each transaction.
                engine = create_url_engine(url, options=PG_READ_ONLY)
                described = engine.url.render_as_string(hide_password=True)
                read_only_engine = engine.execution_options(postgresql_readonly=True)
                return ReadStore(Database(None, read_only_engine, description=described))
            engine = create_url_engine(url)
            upgrade_schema(engine)
            reader = engine.execution_options(postgresql_readonly=True)
            return SqlStore(
                engine, reader, description=engine.url.render_as_string(hide_password=True)
            )
        file = Path(path) if path is not None else database_path()
        if read_only:
            if not file.exists():
                raise StoreError(
                    f"no database at {file}; run `proctor init` or `proctor ingest` first"
                )
            only_reader = create_sqlite_engine(file, read_only=True)
            return ReadStore(Database(None, only_reader, description=str(file)))
        file.parent.mkdir(parents=True, exist_ok=True)
        writer = create_sqlite_engine(file)
        upgrade_schema(writer)
        return SqlStore(writer, create_sqlite_engine(file, read_only=True), description=str(file))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot open the database: {exc}") from exc
