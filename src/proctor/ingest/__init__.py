"""Importing transcripts into the store: one-shot (``ingest``) and following folders (``watch``)."""

from proctor.ingest._defaults import default_session_folders
from proctor.ingest._ingest import (
    FormatStats,
    IngestReport,
    ProgressCallback,
    ingest,
    ingest_plan,
    unit_digest,
)
from proctor.ingest._watch import Watcher, watch

__all__ = [
    "FormatStats",
    "IngestReport",
    "ProgressCallback",
    "Watcher",
    "default_session_folders",
    "ingest",
    "ingest_plan",
    "unit_digest",
    "watch",
]
