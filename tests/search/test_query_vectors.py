"""A query's embedding is kept per encoder (``_query.query_vector``): the same search again
(the next page, another filter, a UI asking twice) does not run the encoder again, and gives
the same hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from proctor.search import embed_pending, index_full_text, search
from proctor.search._query import QUERY_VECTORS, query_vector
from proctor.store import SqlStore
from tests.search.helpers import dialogue, write
from tests.search.test_vectors import WordEncoder

if TYPE_CHECKING:
    from numpy.typing import NDArray


class CountingEncoder(WordEncoder):
    """``WordEncoder`` that records every text it embeds."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        self.texts.extend(texts)
        return super().encode(texts, batch_size=batch_size)


def test_a_repeated_query_is_embedded_once_and_ranks_the_same(store: SqlStore) -> None:
    write(
        store,
        dialogue("c1", [("Ann", "we went camping by the lake"), ("Bo", "the bread from the oven")]),
    )
    index_full_text(store)
    encoder = CountingEncoder()
    embed_pending(store, encoder)
    encoder.texts.clear()
    first = search(store, "camping trip", encoder=encoder)
    again = search(store, "camping trip", encoder=encoder)
    assert encoder.texts == ["camping trip"]
    assert first.hits == again.hits and first.hits
    search(store, "fresh bread", encoder=encoder)
    assert encoder.texts == ["camping trip", "fresh bread"]
    assert search(store, "camping trip", encoder=CountingEncoder()).hits == first.hits


def test_kept_vectors_are_the_encoders_read_only_and_bounded() -> None:
    encoder = CountingEncoder()
    vector = query_vector(encoder, "lake")
    assert np.array_equal(vector, WordEncoder().encode(["lake"])[0])
    assert not vector.flags.writeable
    for number in range(QUERY_VECTORS):
        query_vector(encoder, f"query {number}")
    query_vector(encoder, "lake")  # pushed out by newer ones: embedded again
    assert encoder.texts.count("lake") == 2
