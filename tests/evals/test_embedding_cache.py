"""The vector cache the LoCoMo evaluation uses gives exactly what the encoder gives."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from proctor.search import SentenceEncoder, load_encoder

if TYPE_CHECKING:
    from tests.evals.embedding_cache import CachedEncoder

TEXTS = ["I adopted a grey cat called Pixel.", "The violin recital went well.", "Lisbon"]


class CountingEncoder(SentenceEncoder):
    """Deterministic vectors from each text's characters; counts the texts it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> Any:
        import numpy as np

        self.asked.extend(texts)
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for index, char in enumerate(text):
                rows[row, (index * 7 + ord(char)) % self.dimensions] += 1.0
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def cached(inner: SentenceEncoder, file: Path) -> CachedEncoder:
    from tests.evals.embedding_cache import CachedEncoder

    return CachedEncoder(inner, file)


def test_a_second_encoder_on_the_file_asks_only_for_texts_it_has_not_seen(tmp_path: Path) -> None:
    import numpy as np

    file = tmp_path / "cache" / "vectors.npz"
    first_inner = CountingEncoder()
    first = cached(first_inner, file)
    given = first.encode(TEXTS)
    first.save()
    assert (first.computed, first.reused) == (3, 0) and file.is_file()

    second_inner = CountingEncoder()
    second = cached(second_inner, file)
    again = second.encode([TEXTS[2], "A text never seen", TEXTS[0]])

    assert second_inner.asked == ["A text never seen"]
    assert (second.computed, second.reused) == (1, 2)
    np.testing.assert_array_equal(again[0], given[2])
    np.testing.assert_array_equal(again[2], given[0])
    np.testing.assert_array_equal(again[1], CountingEncoder().encode(["A text never seen"])[0])
    assert second.encode([]).shape == (0, SentenceEncoder.dimensions)


def test_a_text_that_differs_by_one_character_is_not_taken_for_another(tmp_path: Path) -> None:
    file = tmp_path / "vectors.npz"
    first = cached(CountingEncoder(), file)
    first.encode(["Pixel knocked over my plant."])
    first.save()
    inner = CountingEncoder()
    cached(inner, file).encode(["Pixel knocked over my plant!", "Pixel knocked over my plant."])
    assert inner.asked == ["Pixel knocked over my plant!"]


def test_a_damaged_cache_file_is_passed_over_and_replaced_whole(tmp_path: Path) -> None:
    file = tmp_path / "vectors.npz"
    file.write_bytes(b"PK\x03\x04 not really a zip")
    inner = CountingEncoder()
    encoder = cached(inner, file)
    encoder.encode(TEXTS)
    encoder.save()

    assert inner.asked == TEXTS
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.npz"], "no temporary file is left"
    reread = CountingEncoder()
    cached(reread, file).encode(TEXTS)
    assert reread.asked == []


def test_nothing_is_written_when_every_vector_came_from_the_cache(tmp_path: Path) -> None:
    file = tmp_path / "vectors.npz"
    first = cached(CountingEncoder(), file)
    first.encode(TEXTS)
    first.save()
    written = file.stat().st_mtime_ns
    second = cached(CountingEncoder(), file)
    second.encode(TEXTS)
    second.save()
    assert file.stat().st_mtime_ns == written


def test_the_cached_vectors_are_the_installed_encoder_s_own(tmp_path: Path) -> None:
    import numpy as np

    real = load_encoder()
    if real is None:
        pytest.skip("the embeddings extra or the model is not installed")
    from tests.evals.embedding_cache import CachedEncoder, encoder_fingerprint

    file = tmp_path / "vectors.npz"
    first = CachedEncoder(real, file)
    first.encode(TEXTS)
    first.save()
    reused = CachedEncoder(real, file).encode(TEXTS)

    np.testing.assert_allclose(reused, real.encode(TEXTS), rtol=0, atol=1e-6)
    fingerprint = encoder_fingerprint()
    assert CachedEncoder.around(real).file.name == f"{real.name}-{fingerprint}.npz"
