"""A local GGUF model run in process by llama-cpp-python (the optional ``local`` extra).

Decoding is constrained by a grammar built from the answer's JSON Schema (through
``grammar_schema``), so a finished answer is schema-shaped JSON. Generation runs in a
worker thread and is streamed: between tokens it stops at once when the call was
cancelled (the thread is abandoned, and ends at its next token) or the answer passed the
response capacity. Models are loaded once per file and used by one generation at a time.
Usage is counted from llama.cpp's sampling loop: the prompt's tokens, and every token
sampled for the answer (its closing end-of-turn token included).
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread

from proctor.errors import ModelError
from proctor.model_types import ModelConnection, ModelRequest
from proctor.models._attempt import AttemptProgress
from proctor.models._schema import grammar_schema

CONTEXT_TOKENS = 8192
"""Context window the model is loaded with (SmolLM2 was trained on 8k)."""
NEEDS_EXTRA = (
    'local models need the optional extra: CMAKE_ARGS="-DGGML_NATIVE=OFF" '
    "pip install 'proctor[local]'"
)


@dataclass(frozen=True, slots=True)
class _LoadedModel:
    llama: Any
    module: Any
    lock: threading.Lock


_loaded: dict[str, _LoadedModel] = {}
_loading = threading.Lock()


def llama_cpp_module() -> Any:
    """The ``llama_cpp`` module, or a ``config`` error naming the extra to install."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise ModelError("config", NEEDS_EXTRA) from exc


def _model(path: str) -> _LoadedModel:
    with _loading:
        if path not in _loaded:
            module = llama_cpp_module()
            if not Path(path).is_file():
                raise ModelError("config", f"the GGUF file {path} does not exist")
            try:
                llama = module.Llama(
                    model_path=path,
                    n_ctx=CONTEXT_TOKENS,
                    n_threads=max(1, (os.cpu_count() or 2) // 2),
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ModelError("config", f"cannot load the GGUF file {path}: {exc}") from exc
            _loaded[path] = _LoadedModel(llama, module, threading.Lock())
        return _loaded[path]


class _TokenCounter:
    """A llama.cpp logits processor that only counts: prompt tokens and tokens sampled."""

    def __init__(self) -> None:
        self.prompt_tokens: int | None = None
        self.sampled = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.prompt_tokens is None:
            self.prompt_tokens = len(input_ids)  # the evaluated prompt, before any sample
        self.sampled += 1
        return scores


@dataclass(frozen=True, slots=True)
class _Generated:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    sampled_tokens: int


def _capacity_error(capacity_bytes: int) -> ModelError:
    return ModelError(
        "capacity",
        f"the local model's answer passed the response capacity of {capacity_bytes // 1024} KiB "
        "and was stopped",
    )


def _generate(
    path: str, request: ModelRequest, cancelled: threading.Event, capacity_bytes: int
) -> _Generated:
    """Stream one answer; stop early when the call was cancelled (nobody waits for it then)."""
    model = _model(path)
    counter = _TokenCounter()
    parts: list[str] = []
    finish_reason: str | None = None
    received = 0
    with model.lock:
        chunks = model.llama.create_chat_completion(
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            response_format={"type": "json_object", "schema": grammar_schema(request.json_schema)},
            max_tokens=request.max_output_tokens,
            temperature=request.temperature,
            logits_processor=model.module.LogitsProcessorList([counter]),
            stream=True,
        )
        try:
            for chunk in chunks:
                if cancelled.is_set():
                    break
                choice = chunk["choices"][0]
                piece = choice["delta"].get("content") or ""
                received += len(piece.encode())
                if received > capacity_bytes:
                    raise _capacity_error(capacity_bytes)
                parts.append(piece)
                finish_reason = choice.get("finish_reason") or finish_reason
        except ValueError as exc:
            raise ModelError("config", f"the local model refused the request: {exc}") from exc
        finally:
            chunks.close()  # ends llama.cpp's generation loop at once
    return _Generated("".join(parts), finish_reason, counter.prompt_tokens, counter.sampled)


async def local_attempt(
    connection: ModelConnection,
    request: ModelRequest,
    progress: AttemptProgress,
    *,
    key: str | None,
    capacity_bytes: int,
) -> None:
    """One generation by the connection's GGUF model into ``progress``."""
    if not connection.path:
        raise ModelError("config", f"local connection {connection.name!r} has no GGUF file")
    cancelled = threading.Event()
    generate = partial(_generate, connection.path, request, cancelled, capacity_bytes)
    try:
        generated = await anyio.to_thread.run_sync(generate, abandon_on_cancel=True)
    except BaseException:
        cancelled.set()  # the abandoned thread stops at its next token
        raise
    if generated.finish_reason is None:
        raise ModelError(
            "bad_response", f"the local model {connection.name!r} stopped without finishing"
        )
    progress.parts.append(generated.text)
    progress.input_tokens = generated.prompt_tokens
    progress.output_tokens = generated.sampled_tokens
    progress.finish_reason = generated.finish_reason
    progress.model = connection.model
