"""Persistence: schema, migrations, the one writer and read-only readers.

SQLite (WAL) at ``$PROCTOR_HOME/proctor.db`` by default; PostgreSQL through a URL
(``PROCTOR_DATABASE_URL``). Both
run the same SQLAlchemy Core code and the same Alembic migrations.
"""

from proctor.store._findings import NotificationRecord, RecordOutcome
from proctor.store._interfaces import Store, StoreReader
from proctor.store._location import (
    DATABASE_URL_VARIABLE,
    configured_database_url,
    database_exists,
    database_location,
)
from proctor.store._notifications import Notification, NotificationPage, WebhookState
from proctor.store._records import (
    ConversationSummary,
    ExcerptRequest,
    ImportedFile,
    ImportIssueRecord,
    ImportRecord,
    PlacedBundle,
    ProjectSummary,
    SourceKey,
    SourceVersion,
    StoreCounts,
    StoredSource,
    StoredTranscript,
    TranscriptExcerpt,
    WriteOutcome,
)
from proctor.store._review_records import (
    ManifestEntry,
    ReviewRunRecord,
    ReviewScope,
    SavedBatch,
    SourceContents,
)
from proctor.store._store import DEFAULT_PROJECT, SqlStore, open_store

__all__ = [
    "DATABASE_URL_VARIABLE",
    "DEFAULT_PROJECT",
    "ConversationSummary",
    "ExcerptRequest",
    "ImportIssueRecord",
    "ImportRecord",
    "ImportedFile",
    "ManifestEntry",
    "Notification",
    "NotificationPage",
    "NotificationRecord",
    "PlacedBundle",
    "ProjectSummary",
    "RecordOutcome",
    "ReviewRunRecord",
    "ReviewScope",
    "SavedBatch",
    "SourceContents",
    "SourceKey",
    "SourceVersion",
    "SqlStore",
    "Store",
    "StoreCounts",
    "StoreReader",
    "StoredSource",
    "StoredTranscript",
    "TranscriptExcerpt",
    "WebhookState",
    "WriteOutcome",
    "configured_database_url",
    "database_exists",
    "database_location",
    "open_store",
]
