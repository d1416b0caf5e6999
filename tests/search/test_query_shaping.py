"""What the query and the turns bring beyond their words: a turn that asks a question is not
its own answer, and the names of people a query asks about are the author signal's part,
not the embedding's."""

from __future__ import annotations

import pytest

from proctor.search import index_sources, search
from proctor.search._query import _Match, embedded_query
from proctor.search._write import resolve_encoder
from proctor.store import SqlStore
from tests.search.conftest import needs_embeddings
from tests.search.helpers import FRIENDS, dialogue, write

ASKED_AND_ANSWERED = [
    ("Ann", "The weather was grey all week, so we stayed at home."),
    ("Ann", "Did you finish the painting of the lake?"),
    ("Bo", "Yes, I finished it last night, the lake looks calm and it hangs in my hall now."),
    ("Ann", "We should go to the market on Saturday morning."),
    ("Bo", "Good idea, I need fresh bread and some apples."),
]


def _match(author: str | None) -> _Match:
    return _Match(row_id=1, score=1.0, conversation_id="c", position=0, author=author)


@pytest.mark.parametrize(
    ("query", "authors", "expected"),
    [
        ("What did Melanie paint?", ["Melanie", "Caroline"], "What did paint?"),
        ("Where did Caroline's brother move?", ["Caroline"], "Where did brother move?"),
        ("What did Jon and Gina open together?", ["Gina", "Jon"], "What did and open together?"),
        ("Which city did JON visit?", ["Jon Snow"], "Which city did visit?"),
        # Not an author of any match: a name of something talked about stays.
        ("What did Picasso paint?", ["Melanie"], "What did Picasso paint?"),
        # Nothing but names: read as it is.
        ("Melanie", ["Melanie"], "Melanie"),
    ],
)
def test_the_embedded_query_leaves_out_the_authors_it_names(
    query: str, authors: list[str], expected: str
) -> None:
    matches = [_match(a) for a in authors] + [_match(None)]
    terms = [w.strip("?'s").lower() for w in query.split()]
    assert embedded_query(query, matches, terms) == expected


def test_a_question_ranks_below_the_reply_that_answers_it(store: SqlStore) -> None:
    # The question matches every word and the reply two of three: by full text alone the
    # question ranks first, but the answer is in the reply, which the question lifts.
    write(store, dialogue("c1", ASKED_AND_ANSWERED))
    index_sources(store, encoder=None)
    hits = search(store, "finished painting lake", encoder=None).hits
    assert [h.doc_id for h in hits[:2]] == ["c1:t2", "c1:t1"]


@needs_embeddings
def test_hybrid_search_embeds_the_query_without_the_named_author(sqlite_store: SqlStore) -> None:
    write(sqlite_store, dialogue("c1", FRIENDS))
    index_sources(sqlite_store)
    encoder = resolve_encoder("auto")
    assert encoder is not None
    result = search(sqlite_store, "What did Melanie paint?", limit=3)
    assert result.hits[0].doc_id == "c1:t3"
    top = result.hits[0]
    without = encoder.encode(["What did paint?"])[0]
    document = encoder.encode([f"Melanie: {FRIENDS[3][1]}"])[0]
    named = encoder.encode(["What did Melanie paint?"])[0]
    assert top.similarity == pytest.approx(float(document @ without), abs=1e-5)
    assert abs(float(document @ named) - float(document @ without)) > 1e-3
