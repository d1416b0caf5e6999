"""ING-3 and ING-4 end to end: the database file never holds hidden reasoning or secrets."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from proctor.ingest import ingest
from proctor.store import open_store
from tests.ingest import planted


def _database_bytes(db: Path) -> bytes:
    # The main file plus any WAL/SHM left behind: a secret must be in none of them.
    return b"".join(p.read_bytes() for p in sorted(db.parent.glob(db.name + "*")))


def test_no_planted_secret_or_reasoning_reaches_the_database_file(tmp_path: Path) -> None:
    files = planted.write_all(tmp_path / "inputs")
    db = tmp_path / "home" / "proctor.db"
    store = open_store(db)
    report = ingest(store, files)
    store.close()

    assert report.errors == []
    assert set(report.by_format) == {
        "claude_code",
        "codex",
        "openai_chat",
        "anthropic",
        "gemini_cli",
    }
    assert report.conversations == 5
    assert report.redactions >= len(planted.SECRETS)

    content = _database_bytes(db)
    for secret in planted.SECRETS:
        assert secret.encode() not in content, f"secret {secret[:12]}… stored"
    for reasoning in planted.REASONING:
        assert reasoning.encode() not in content, f"reasoning {reasoning} stored"

    with sqlite3.connect(db) as connection:
        texts = [row[0] for row in connection.execute("SELECT result_text FROM tool_calls")]
        texts += [row[0] for row in connection.execute("SELECT text FROM messages")]
        per_source = dict(
            connection.execute("SELECT source_id, redactions FROM sources WHERE redactions > 0")
        )
    joined = "\n".join(t for t in texts if t)
    assert "[REDACTED:" in joined
    assert "Found GITHUB_TOKEN=[REDACTED:" in joined
    assert per_source, "per-source redaction counts are recorded"
    assert sum(per_source.values()) >= len(planted.SECRETS)
