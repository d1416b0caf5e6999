"""SQLite: common words' postings beside the FTS5 index, and FTS5's vocabulary tables

``search_fts_postings`` keeps the documents' row ids and lengths, and for every word held
by many documents, where its documents stand among them and how often it occurs in each
one's body and context; the background indexer
builds it (``proctor.search._postings``) so that a search of common words is ranked in
numpy, not by FTS5 scoring every match (the 1 GB bench store's "git commit": 24,455
matches, 29 ms of CPU in FTS5's ``bm25()``). ``search_fts_instances`` and
``search_fts_terms`` are ``fts5vocab`` tables over ``search_fts`` (each occurrence of
each word, and each word's documents): the postings are read from them. All are derived
data, like the FTS5 index (``is_search_fts_table``); PostgreSQL ranks with its own index.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-14 08:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_SQLITE = [
    "CREATE TABLE search_fts_postings ("
    "term TEXT NOT NULL PRIMARY KEY, "
    "through INTEGER NOT NULL, "
    "documents INTEGER NOT NULL, "
    "members BLOB NOT NULL, "
    "counts BLOB NOT NULL)",
    "CREATE VIRTUAL TABLE search_fts_instances USING fts5vocab(search_fts, 'instance')",
    "CREATE VIRTUAL TABLE search_fts_terms USING fts5vocab(search_fts, 'row')",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in _SQLITE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table in ("search_fts_terms", "search_fts_instances", "search_fts_postings"):
            op.execute(f"DROP TABLE IF EXISTS {table}")
