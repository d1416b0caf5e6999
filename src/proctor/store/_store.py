"""The store: one writer, read-only readers, every write path one transaction.

``SqlStore`` implements ``StoreReader`` and ``Store`` (``_interfaces.py``) with SQLAlchemy
Core on SQLite (the default) or PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from proctor._util.clock import utcnow
from proctor.errors import ConversationWriteError, StoreError
from proctor.findings import Finding, Severity, Status
from proctor.store import _findings as findings_store
from proctor.store import _reader as reads
from proctor.store import _schema as t
from proctor.store._base import StoreBase
from proctor.store._deletion import delete_conversations, with_subagents
from proctor.store._engine import create_sqlite_engine, create_url_engine, upgrade_schema
from proctor.store._findings import NotificationRecord, RecordOutcome
from proctor.store._goal_store import GoalStore
from proctor.store._graph_access import GraphAccessStore
from proctor.store._graph_store import GraphStore
from proctor.store._heartbeat_store import HeartbeatStore
from proctor.store._import_batch import ImportBatch, store_imported_file
from proctor.store._import_store import ImportStore
from proctor.store._inbox_store import FindingsInboxStore
from proctor.store._location import configured_database_url
from proctor.store._memory_store import MemoryCandidateStore
from proctor.store._model_settings import ModelSettingsStore
from proctor.store._notifications import NotificationStore
from proctor.store._records import (
    ConversationSummary,
    ExcerptRequest,
    ImportedFile,
    ImportIssueRecord,
    ImportRecord,
    PlacedBundle,
    ProjectSummary,
    SourceVersion,
    StoreCounts,
    StoredSource,
    StoredTranscript,
    TranscriptExcerpt,
    WriteOutcome,
)
from proctor.store._review_store import ReviewStore
from proctor.store._suggestion_store import SuggestionStore
from proctor.store._supervision_store import SupervisionStore
from proctor.store._trace_store import TraceStore
from proctor.store._writer import write_conversation
from proctor.transcript import Message, PreparedBundle

DEFAULT_PROJECT = "default"


class SqlStore(
    FindingsInboxStore,
    GraphStore,
    ModelSettingsStore,
    SupervisionStore,
    GoalStore,
    ReviewStore,
    HeartbeatStore,
    SuggestionStore,
    MemoryCandidateStore,
    GraphAccessStore,
    ImportStore,
    NotificationStore,
    TraceStore,
    StoreBase,
):
    """``Store`` on SQLAlchemy Core (SQLite file or PostgreSQL URL)."""

    # -- reads ----------------------------------------------------------------------

    def list_conversations(
        self,
        *,
        project: str | None = None,
        include_children: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[ConversationSummary]:
        """Conversations, newest first; sub-agent conversations only when asked."""
        with self._read() as c:
            return reads.list_conversations(
                c, project=project, include_children=include_children, limit=limit, offset=offset
            )

    def count_conversations(
        self, *, project: str | None = None, include_children: bool = False
    ) -> int:
        """How many conversations match."""
        with self._read() as c:
            return reads.count_conversations(c, project=project, include_children=include_children)

    def resolve_conversation_id(self, ref: str) -> str:
        """The full id for an id, external id or unique prefix."""
        with self._read() as c:
            return reads.resolve_conversation_id(c, ref)

    def conversation(self, conversation_id: str) -> ConversationSummary:
        """One conversation's summary."""
        with self._read() as c:
            return reads.conversation_summary(c, conversation_id)

    def transcript(self, conversation_id: str) -> StoredTranscript:
        """One conversation with everything in it."""
        with self._read() as c:
            return reads.load_transcript(c, conversation_id)

    def messages(self, conversation_id: str) -> list[Message]:
        """Messages of one conversation in order."""
        with self._read() as c:
            return list(reads.iter_messages(c, conversation_id))

    def source(self, source_type: str, source_id: str) -> StoredSource:
        """The current version of one source."""
        with self._read() as c:
            return reads.get_source(c, source_type, source_id)

    def source_versions(self, source_type: str, source_id: str) -> list[SourceVersion]:
        """Every revision of one source, oldest first."""
        with self._read() as c:
            return reads.source_versions(c, source_type, source_id)

    def projects(self) -> list[ProjectSummary]:
        """Every project."""
        with self._read() as c:
            return reads.list_projects(c)

    def counts(self) -> StoreCounts:
        """Row counts."""
        with self._read() as c:
            return reads.counts(c)

    def imports(self, limit: int = 20) -> list[ImportRecord]:
        """Recent imports, newest first."""
        with self._read() as c:
            return reads.list_imports(c, limit)

    def import_issues(self, import_id: str) -> list[ImportIssueRecord]:
        """Issues of one import."""
        with self._read() as c:
            return reads.import_issues(c, import_id)

    def imported_file(self, path: str) -> ImportedFile | None:
        """Fast-path record of a read unit."""
        with self._read() as c:
            return reads.imported_file(c, path)

    def imported_files(self, paths: Sequence[str]) -> dict[str, ImportedFile]:
        """Fast-path records of those read units imported before, by path."""
        with self._read() as c:
            return reads.imported_files(c, paths)

    def existing_conversation_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored."""
        with self._read() as c:
            return reads.existing_conversation_ids(c, ids)

    def findings(
        self,
        *,
        conversation_ids: Sequence[str] | None = None,
        statuses: Sequence[Status] | None = None,
        min_severity: Severity | None = None,
        rule: str | None = None,
        severities: Sequence[str] | None = None,
        digested: bool | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Finding], int]:
        """A page of findings (most severe, newest first) and the total count.

        ``severities`` keeps exactly those severities; ``digested`` only collapsed (True)
        or only expanded (False) findings.
        """
        with self._read() as c:
            return findings_store.list_findings(
                c,
                conversation_ids=conversation_ids,
                statuses=statuses,
                min_severity=min_severity,
                rule=rule,
                severities=severities,
                digested=digested,
                limit=limit,
                offset=offset,
            )

    def finding(self, finding_id: str) -> Finding:
        """One finding."""
        with self._read() as c:
            return findings_store.get_finding(c, finding_id)

    def resolve_finding_id(self, ref: str) -> str:
        """The finding id for an id, key or unique prefix."""
        with self._read() as c:
            return findings_store.resolve_finding_id(c, ref)

    def notifications(self, *, unread_only: bool = True) -> list[NotificationRecord]:
        """Notifications, newest first."""
        with self._read() as c:
            return findings_store.list_notifications(c, unread_only=unread_only)

    # -- writes ---------------------------------------------------------------------

    def record_findings(self, findings: Sequence[Finding]) -> RecordOutcome:
        """Insert or update findings by key in one transaction; notify once per key."""
        with self._write() as c:
            return findings_store.record_findings(c, findings, utcnow())

    def set_finding_status(self, finding_id: str, status: Status) -> Finding:
        """Move a finding along its lifecycle."""
        with self._write() as c:
            return findings_store.set_status(c, finding_id, status, utcnow())

    def set_finding_digested(self, finding_id: str, digested: bool) -> None:
        """Collapse (``True``) or expand a finding in lists."""
        with self._write() as c:
            findings_store.set_digested(c, finding_id, digested)

    def write_conversation(
        self, prepared: PreparedBundle, *, project: str | None = None
    ) -> WriteOutcome:
        """Write one conversation in one transaction; unchanged sources are not written."""
        try:
            with self._write() as c:
                name = project or self._project_for(c, prepared)
                return write_conversation(c, prepared, name, utcnow())
        except ConversationWriteError as exc:
            raise ConversationWriteError(
                f"conversation {prepared.bundle.conversation_id!r} could not be stored: {exc}"
            ) from exc

    def write_conversations(
        self, prepared: Sequence[PreparedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write several conversations in one transaction: all of them, or none."""
        outcomes: list[WriteOutcome] = []
        with self._write() as c:
            for one in prepared:
                try:
                    name = project or self._project_for(c, one)
                    outcomes.append(write_conversation(c, one, name, utcnow()))
                except (ConversationWriteError, IntegrityError) as exc:
                    reason = exc.orig if isinstance(exc, IntegrityError) else exc
                    raise ConversationWriteError(
                        f"conversation {one.bundle.conversation_id!r} could not be stored "
                        f"({reason}); nothing of this request was written"
                    ) from exc
        return outcomes

    def transcript_excerpts(
        self, wanted: Mapping[str, ExcerptRequest]
    ) -> dict[str, TranscriptExcerpt]:
        """What appends to these conversations need of them (the stored ones only)."""
        with self._read() as c:
            found = {cid: reads.transcript_excerpt(c, cid, one) for cid, one in wanted.items()}
        return {cid: excerpt for cid, excerpt in found.items() if excerpt is not None}

    def append_conversations(
        self, appends: Sequence[PlacedBundle], *, project: str | None = None
    ) -> list[WriteOutcome]:
        """Write appends to several conversations in one transaction: all of them, or none.

        Only each append's own sources are written, at the places it gives; the rest of
        the conversation is neither read nor written.
        """
        outcomes: list[WriteOutcome] = []
        with self._write() as c:
            for one in appends:
                bundle = one.prepared.bundle
                try:
                    name = project or self._project_for(c, one.prepared)
                    written = write_conversation(c, one.prepared, name, utcnow(), places=one.places)
                except (ConversationWriteError, IntegrityError) as exc:
                    reason = exc.orig if isinstance(exc, IntegrityError) else exc
                    raise ConversationWriteError(
                        f"conversation {bundle.conversation_id!r} could not be stored "
                        f"({reason}); nothing of this request was written"
                    ) from exc
                outcomes.append(written)
        return outcomes

    def _project_for(self, connection: Connection, prepared: PreparedBundle) -> str:
        conversation = prepared.bundle.conversation
        parent_id = conversation.parent_conversation_id
        if parent_id is not None:
            parent_project = connection.execute(
                select(t.projects.c.name)
                .join(t.conversations, t.conversations.c.project_id == t.projects.c.project_id)
                .where(t.conversations.c.conversation_id == parent_id)
            ).scalar_one_or_none()
            if parent_project is not None:
                return str(parent_project)
        current = connection.execute(
            select(t.projects.c.name)
            .join(t.conversations, t.conversations.c.project_id == t.projects.c.project_id)
            .where(t.conversations.c.conversation_id == conversation.conversation_id)
        ).scalar_one_or_none()
        if current is not None:
            return str(current)
        return conversation.project_hint or DEFAULT_PROJECT

    def delete_conversation(self, conversation_id: str) -> list[str]:
        """Delete a conversation, its sub-agent conversations and everything derived from
        them, in one transaction (``_deletion.py`` says what goes and what stays)."""
        with self._write() as c:
            doomed = with_subagents(c, conversation_id)
            delete_conversations(c, doomed)
            return doomed

    def record_imported_file(self, imported: ImportedFile) -> None:
        """Remember that a read unit was imported with this content."""
        with self._write() as c:
            store_imported_file(c, imported, utcnow())

    @contextmanager
    def import_batch(self) -> Iterator[ImportBatch]:
        """One transaction for many conversations and unit records of an import, each
        conversation in a savepoint (``_import_batch.py``); committed when the block ends,
        rolled back when it raises."""
        with self._write() as c:
            batch = ImportBatch(c, self._project_for)
            yield batch
            batch.finish()


def open_store(
    path: Path | str | None = None, *, url: str | None = None, read_only: bool = False
) -> SqlStore:
    """Open (and create or migrate) the database.

    Without ``path`` or ``url`` the store is ``PROCTOR_DATABASE_URL`` when it is set
    (PostgreSQL for scale-out), else ``$PROCTOR_HOME/proctor.db``.

    Args:
        path: SQLite file; default ``$PROCTOR_HOME/proctor.db``.
        url: a database URL instead of a file (e.g. ``postgresql://…``).
        read_only: open without any write access (the database must exist).
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
            engine = create_url_engine(url)
            if not read_only:
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
            return SqlStore(only_reader, only_reader, description=str(file))
        file.parent.mkdir(parents=True, exist_ok=True)
        writer = create_sqlite_engine(file)
        upgrade_schema(writer)
        return SqlStore(writer, create_sqlite_engine(file, read_only=True), description=str(file))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot open the database: {exc}") from exc
