"""FTS5 over the whole index ranks in the full-text index first, then reads the documents of
the best matches only: the same matches and scores as filtering through the documents."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from proctor.search import _query as query_module
from proctor.search._query import _fts5, query_terms
from proctor.search._vectors import Scope
from proctor.store import SqlStore
from tests.search.test_vectors import WORDS, _fill


@pytest.mark.parametrize("candidates", [1_000, 40])
def test_whole_index_matches_equal_those_read_through_the_documents(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch, candidates: int
) -> None:
    if store.dialect != "sqlite":
        pytest.skip("FTS5 is SQLite's")
    _fill(store, conversations=6)
    monkeypatch.setattr(query_module, "CANDIDATES", candidates)
    with store._read() as connection:
        types = tuple(
            connection.execute(text("SELECT DISTINCT doc_type FROM search_documents")).scalars()
        )
        every_type = Scope(None, None, types)  # the same documents, filtered by the join
        for query in [*WORDS[:12], "paint lake sunrise", "What did Ann bake in the oven?"]:
            terms = query_terms(query)
            first = _fts5(connection, terms, Scope(None, None, None))
            joined = _fts5(connection, terms, every_type)
            assert len(first) == len(joined) <= candidates
            assert sorted(m.score for m in first) == pytest.approx(sorted(m.score for m in joined))
            cut = min((m.score for m in joined), default=0.0)
            above = {m for m in first if m.score > cut + 1e-9}  # rows tied at the cut may differ
            assert above == {m for m in joined if m.score > cut + 1e-9}
            assert [m.score for m in first] == sorted((m.score for m in first), reverse=True)
