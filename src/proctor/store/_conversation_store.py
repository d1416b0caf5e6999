"""The conversations repository: list, show and write conversations, their sources and the
records of what was imported (``_reader.py`` reads, ``_writer.py`` writes)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from proctor._util.clock import utcnow
from proctor.errors import ConversationWriteError
from proctor.store import _reader as reads
from proctor.store._base import Repository
from proctor.store._bulk import driver_sql, run_driver
from proctor.store._deletion import delete_conversations, with_subagents
from proctor.store._import_batch import ImportBatch, store_imported_file
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
from proctor.store._writer import stored_head, write_conversation
from proctor.transcript import Conversation, Message, PreparedBundle

DEFAULT_PROJECT = "default"


class ConversationReads(Repository):
    """Conversations, their sources, projects, counts and import records: the reads."""

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

    def transcript_excerpts(
        self, wanted: Mapping[str, ExcerptRequest]
    ) -> dict[str, TranscriptExcerpt]:
        """What appends to these conversations need of them (the stored ones only)."""
        with self._read() as c:
            found = {cid: reads.transcript_excerpt(c, cid, one) for cid, one in wanted.items()}
        return {cid: excerpt for cid, excerpt in found.items() if excerpt is not None}


class ConversationRepository(ConversationReads):
    """``ConversationReads`` and the writes (conversations, appends, deletion, imported
    files), each one transaction."""

    def write_conversation(
        self, prepared: PreparedBundle, *, project: str | None = None
    ) -> WriteOutcome:
        """Write one conversation in one transaction; unchanged sources are not written."""
        try:
            with self._write() as c:
                name = project or project_for(c, prepared.bundle.conversation)
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
                    name = project or project_for(c, one.bundle.conversation)
                    outcomes.append(write_conversation(c, one, name, utcnow()))
                except (ConversationWriteError, IntegrityError) as exc:
                    reason = exc.orig if isinstance(exc, IntegrityError) else exc
                    raise ConversationWriteError(
                        f"conversation {one.bundle.conversation_id!r} could not be stored "
                        f"({reason}); nothing of this request was written"
                    ) from exc
        return outcomes

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
                    # One statement for the stored header and project, where the project
                    # is the conversation's own (no parent's, none given).
                    head = None
                    if project is None and bundle.conversation.parent_conversation_id is None:
                        head = stored_head(c, bundle.conversation_id)
                    if head is not None and head.project_name is not None:
                        name = head.project_name
                    elif head is not None:  # not stored: what project_for would find
                        name = bundle.conversation.project_hint or DEFAULT_PROJECT
                    else:
                        name = project or project_for(c, bundle.conversation)
                    written = write_conversation(
                        c, one.prepared, name, utcnow(), places=one.places, stored=head
                    )
                except (ConversationWriteError, IntegrityError) as exc:
                    reason = exc.orig if isinstance(exc, IntegrityError) else exc
                    raise ConversationWriteError(
                        f"conversation {bundle.conversation_id!r} could not be stored "
                        f"({reason}); nothing of this request was written"
                    ) from exc
                outcomes.append(written)
        return outcomes

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
            batch = ImportBatch(c, project_for)
            yield batch
            batch.finish()


_PROJECT_OF = (
    "SELECT projects.name FROM projects JOIN conversations "
    "ON conversations.project_id = projects.project_id "
    "WHERE conversations.conversation_id = ?"
)


def project_for(connection: Connection, conversation: Conversation) -> str:
    """The project a conversation goes to: its parent's, the one it is in, its hint or
    ``DEFAULT_PROJECT``.

    Read by ``run_driver`` (on the driver's cursor in an import's batch: two reads per
    conversation, which SQLAlchemy's statement machinery cost more than the database)."""
    sql = driver_sql(connection.dialect, _PROJECT_OF)
    for conversation_id in (conversation.parent_conversation_id, conversation.conversation_id):
        if conversation_id is not None:
            found = run_driver(connection, sql, (conversation_id,))
            if found:
                return str(found[0][0])
    return conversation.project_hint or DEFAULT_PROJECT
