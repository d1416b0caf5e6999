"""Importing transcripts into the store: one-shot (``ingest``), following folders (``watch``)
and live intake from request bodies (``Intake``)."""

from proctor.ingest._defaults import default_session_folders
from proctor.ingest._ingest import (
    FormatStats,
    IngestReport,
    ProgressCallback,
    ingest,
    ingest_plan,
)
from proctor.ingest._intake import Intake, IntakeReport
from proctor.ingest._intake_payload import MAX_PAYLOAD_BYTES, PayloadError, PayloadProblem
from proctor.ingest._reading import unit_digest
from proctor.ingest._watch import Watcher, watch

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "FormatStats",
    "IngestReport",
    "Intake",
    "IntakeReport",
    "PayloadError",
    "PayloadProblem",
    "ProgressCallback",
    "Watcher",
    "default_session_folders",
    "ingest",
    "ingest_plan",
    "unit_digest",
    "watch",
]
