"""Importing transcripts into the store: one-shot (``ingest``), following folders (``watch``)
and live intake from request bodies (``Intake``).

Names are imported when first used (PEP 562): the one-shot import brings every source
adapter, and a process that needs only intake's limits (the server's request bodies)
must not pay for loading them at start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proctor.ingest._defaults import default_session_folders
    from proctor.ingest._ingest import (
        FormatStats,
        IngestReport,
        ProgressCallback,
        ingest,
        ingest_plan,
    )
    from proctor.ingest._intake import Intake, IntakeReport
    from proctor.ingest._intake_payload import PayloadError, PayloadProblem
    from proctor.ingest._limits import MAX_PAYLOAD_BYTES
    from proctor.ingest._reading import unit_digest
    from proctor.ingest._watch import Watcher, watch

_WHERE = {
    "MAX_PAYLOAD_BYTES": "_limits",
    "FormatStats": "_ingest",
    "IngestReport": "_ingest",
    "Intake": "_intake",
    "IntakeReport": "_intake",
    "PayloadError": "_intake_payload",
    "PayloadProblem": "_intake_payload",
    "ProgressCallback": "_ingest",
    "Watcher": "_watch",
    "default_session_folders": "_defaults",
    "ingest": "_ingest",
    "ingest_plan": "_ingest",
    "unit_digest": "_reading",
    "watch": "_watch",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'proctor.ingest' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"proctor.ingest.{module}"), name)
    globals()[name] = value
    return value


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
