"""A folder of distinct Claude Code sessions made from one real one, for large imports."""

from __future__ import annotations

import re
import sys
from pathlib import Path

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PROVIDER_ID = re.compile(rb"\b(msg_|toolu_|req_)([A-Za-z0-9]{6,})")
SAMPLE = "claude-code/marot-spotter/tool_heavy.jsonl"


def session_copies(transcripts_dir: Path, target: Path, copies: int) -> Path:
    """``copies`` sessions in ``target``: the sample with every id made unique per copy."""
    sample = (transcripts_dir / SAMPLE).read_bytes()
    for copy in range(copies):
        tag = f"{copy:08x}".encode()
        data = _UUID.sub(lambda m, t=tag: t + m.group(0)[8:], sample)
        data = _PROVIDER_ID.sub(lambda m, t=tag: m.group(1) + t + m.group(2), data)
        (target / f"session-{copy:04d}.jsonl").write_bytes(data)
    return target


SMALL_BATCHES = 200
"""Sources per write transaction in :func:`ingest_command` (the product commits every
20,000 or 2 s, which a quiet machine's whole copied corpus fits in: nothing would be
visible, and nothing to interrupt, until the end)."""


def ingest_command(*arguments: str) -> list[str]:
    """``proctor ingest ARGUMENTS`` as a subprocess whose import commits every
    ``SMALL_BATCHES`` sources, so a test can watch it at work and kill it part-way."""
    run = (
        "import proctor.ingest._ingest as ingest; "
        f"ingest.BATCH_SOURCES = {SMALL_BATCHES}; "
        "from proctor.cli.main import main; main()"
    )
    return [sys.executable, "-c", run, "ingest", *arguments]
