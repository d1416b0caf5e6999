"""Sentence vectors kept between test runs, so the LoCoMo split is embedded once, not per pass.

Embedding every turn of the development split takes the encoder a minute or more, and
``make test`` evaluates the split twice (on SQLite, then on PostgreSQL). The vectors do
not depend on the store: ``CachedEncoder`` answers each text with the vector the installed
encoder gave it before, and asks the encoder for the texts it has not seen.

The cache is content-addressed. Its file is named by a fingerprint of what makes a vector
(the model's weights and tokenizer, the encoder's own code, ``MODEL_NAME``), so a change to
any of them starts a new file; inside, each vector is keyed by the SHA-256 of its text.
It lives under ``$XDG_CACHE_HOME/proctor-tests`` (``~/.cache`` by default; the wheels of
``make test`` are kept beside it), or ``$PROCTOR_TEST_CACHE`` when set. It is written to a
temporary file and renamed into place, so two processes filling it at once (the two
passes, pytest-xdist workers, another checkout) each leave a whole file. A cache that
cannot be read or written is passed over: the vectors are then computed, as without it.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from proctor.search import SentenceEncoder, TextEncoder
from proctor.search import _encoder as encoder_module
from proctor.search._encoder import DIMENSIONS, MODEL_NAME, model_directory

if TYPE_CHECKING:
    from numpy.typing import NDArray


def cache_folder() -> Path:
    """Where the vector files are kept."""
    chosen = os.environ.get("PROCTOR_TEST_CACHE")
    if chosen:
        return Path(chosen) / "embeddings"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "proctor-tests" / "embeddings"


def encoder_fingerprint() -> str:
    """A digest of everything a vector depends on: weights, tokenizer, encoder code, name."""
    folder = model_directory()
    assert folder is not None, "the embedding model is not installed"
    digest = hashlib.sha256(MODEL_NAME.encode())
    for part in (
        folder / "model.safetensors",
        folder / "tokenizer.json",
        Path(encoder_module.__file__),
        Path(encoder_module.__file__).with_name("_onnx.py"),
    ):
        digest.update(part.name.encode() + b"\0")
        with part.open("rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


def text_key(text: str) -> bytes:
    """The key of one text's vector (lone surrogates hashed as they are)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEncoder(SentenceEncoder):
    """The installed encoder, remembering its vectors in a file between runs.

    Only ``encode`` is used by search; the weights stay with ``inner``, so the parent's
    constructor is not run.
    """

    def __init__(self, inner: TextEncoder, file: Path) -> None:
        self._inner = inner
        self.name = inner.name  # the vectors are the inner encoder's (int8, float, numpy)
        self.file = file
        self._known: dict[bytes, NDArray[np.float32]] = _read(file)
        self._used: set[bytes] = set()
        self.reused = 0
        """Texts answered from the cache."""
        self.computed = 0
        """Texts the encoder was asked for."""

    @classmethod
    def around(cls, inner: TextEncoder) -> CachedEncoder:
        """``inner`` with the cache file of its fingerprint."""
        return cls(inner, cache_folder() / f"{inner.name}-{encoder_fingerprint()}.npz")

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        """One unit vector per text, from the cache where it has one."""
        keys = [text_key(text) for text in texts]
        missing = [index for index, key in enumerate(keys) if key not in self._known]
        if missing:
            fresh = self._inner.encode([texts[i] for i in missing], batch_size=batch_size)
            for index, vector in zip(missing, fresh, strict=True):
                self._known[keys[index]] = vector
        self.computed += len(missing)
        self.reused += len(keys) - len(missing)
        self._used.update(keys)
        if not keys:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.stack([self._known[key] for key in keys])

    def save(self) -> None:
        """Write the vectors this encoder gave, when any was new (atomically: a temporary
        file renamed into place). Vectors of texts no longer asked for are left out."""
        if not self.computed:
            return
        kept = sorted(self._used)
        partial: Path | None = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(
                dir=self.file.parent, prefix=f".{self.file.name}.", suffix=".tmp"
            )
            partial = Path(name)
            with os.fdopen(handle, "wb") as written:
                np.savez(
                    written,
                    keys=np.frombuffer(b"".join(kept), dtype=np.uint8).reshape(len(kept), 32),
                    vectors=np.stack([self._known[key] for key in kept]).astype(np.float32),
                )
            os.replace(partial, self.file)
        except OSError:
            if partial is not None:
                partial.unlink(missing_ok=True)


def _read(file: Path) -> dict[bytes, NDArray[np.float32]]:
    """The vectors in ``file`` by text key; nothing when it is missing or unreadable."""
    try:
        # From bytes: numpy leaves the file open when it is not a valid archive.
        with np.load(io.BytesIO(file.read_bytes()), allow_pickle=False) as stored:
            keys, vectors = stored["keys"], stored["vectors"]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return {}
    if keys.ndim != 2 or keys.shape[1] != 32 or vectors.shape != (len(keys), DIMENSIONS):
        return {}
    return {
        bytes(key): vector for key, vector in zip(keys, vectors.astype(np.float32), strict=True)
    }
