"""ING-3 and ING-4 end to end: the database never holds hidden reasoning or secrets."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from proctor.ingest import ingest
from proctor.store import open_store
from tests.backends import raw_connection, stored_bytes
from tests.ingest import planted


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

    content = stored_bytes(db)  # the file and any WAL/SHM (on PostgreSQL: every row)
    for secret in planted.SECRETS:
        assert secret.encode() not in content, f"secret {secret[:12]}… stored"
    for reasoning in planted.REASONING:
        assert reasoning.encode() not in content, f"reasoning {reasoning} stored"

    with raw_connection(db) as connection:
        texts = list(connection.execute(text("SELECT result_text FROM tool_calls")).scalars())
        texts += connection.execute(text("SELECT text FROM messages")).scalars()
        per_source = {
            row.source_id: row.redactions
            for row in connection.execute(
                text("SELECT source_id, redactions FROM sources WHERE redactions > 0")
            )
        }
    joined = "\n".join(t for t in texts if t)
    assert "[REDACTED:" in joined
    assert "Found GITHUB_TOKEN=[REDACTED:" in joined
    assert per_source, "per-source redaction counts are recorded"
    assert sum(per_source.values()) >= len(planted.SECRETS)
