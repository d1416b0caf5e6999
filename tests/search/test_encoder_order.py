"""Every encoder gives each text its own vector, whatever the order and batching.

The encoders sort texts by length to batch similar widths together (the float graphs) or
hand them to several threads (the int8 graph): the rows must still come back in the order
given, each the vector its text gets when encoded alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from proctor.search import SentenceEncoder, TextEncoder
from proctor.search._encoder import cache_root, model_directory
from tests.search.conftest import needs_embeddings, needs_onnx

pytestmark = needs_embeddings

TEXTS = [
    f"{speaker}: {' '.join(words[: 3 + (index * 7) % 40])}"
    for index, (speaker, words) in enumerate(
        (
            ("Caroline" if i % 2 else "Melanie"),
            (
                "I went camping with my kids last weekend and we saw a bear near the lake "
                "while the adoption agency called back about the interviews in June and the "
                f"painting of a sunrise number {i} that hangs over the old piano in the hall"
            ).split(),
        )
        for i in range(40)
    )
]
"""Forty chat turns of 4 to 42 words, in an order unrelated to their length."""


def _numpy() -> TextEncoder:
    folder = model_directory()
    assert folder is not None
    return SentenceEncoder(folder)


def _onnx(precision: str) -> Callable[[], TextEncoder]:
    def make() -> TextEncoder:
        from proctor.search._onnx import OnnxEncoder

        folder = model_directory()
        assert folder is not None
        return OnnxEncoder(folder, cache_root() / "onnx", precision=precision)  # type: ignore[arg-type]

    return make


ENCODERS = [
    pytest.param(_numpy, id="numpy"),
    pytest.param(_onnx("float32"), id="onnx-float32", marks=needs_onnx),
    pytest.param(_onnx("int8"), id="onnx-int8", marks=needs_onnx),
]


@pytest.mark.slow  # runs whole encoders over 40 texts several times: seconds
@pytest.mark.parametrize("make", ENCODERS)
def test_each_row_is_the_vector_of_its_own_text(make: Callable[[], TextEncoder]) -> None:
    import numpy as np

    encoder = make()
    assert len({len(text.split()) for text in TEXTS}) > 20  # lengths really vary
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    together = encoder.encode(TEXTS, batch_size=8)
    assert np.allclose(together, alone, atol=1e-5)
    # A shuffled list gives the same vectors, shuffled the same way.
    order = list(range(len(TEXTS)))
    random.Random(7).shuffle(order)
    shuffled = encoder.encode([TEXTS[i] for i in order], batch_size=8)
    assert np.allclose(shuffled, alone[order], atol=1e-5)
    # Different texts have different vectors (no row copied onto another).
    similarities = alone @ alone.T
    assert float(similarities[~np.eye(len(TEXTS), dtype=bool)].max()) < 0.9999


@pytest.mark.slow
@pytest.mark.parametrize("make", ENCODERS)
def test_a_repeated_text_gets_one_vector_wherever_it_stands(
    make: Callable[[], TextEncoder],
) -> None:
    import numpy as np

    encoder = make()
    texts = [TEXTS[5], *TEXTS[10:20], TEXTS[5], *TEXTS[30:35], TEXTS[5]]
    vectors = encoder.encode(texts, batch_size=4)
    assert np.allclose(vectors[0], vectors[11], atol=1e-5)
    assert np.allclose(vectors[0], vectors[-1], atol=1e-5)
