"""The local provider's guards, without running a model (SPEC MOD-1, MOD-4)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from proctor.errors import ModelError
from proctor.models import ModelConnection, PoolLimits, grammar_schema, open_caller
from proctor.models._local import _generate, _loaded, _LoadedModel
from proctor.supervisor._decision import answer_schema
from tests.models.helpers import ask, complete


class _FakeLlama:
    """Streams chunks of 40 bytes and notes whether its generator was closed."""

    def __init__(self) -> None:
        self.closed = False
        self.yielded = 0

    def create_chat_completion(self, **options: Any) -> Iterator[dict[str, Any]]:
        try:
            while True:
                self.yielded += 1
                yield {"choices": [{"delta": {"content": "x" * 40}, "finish_reason": None}]}
        finally:
            self.closed = True


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> _FakeLlama:
    llama = _FakeLlama()
    module = SimpleNamespace(LogitsProcessorList=list)
    monkeypatch.setitem(_loaded, "fake.gguf", _LoadedModel(llama, module, threading.Lock()))
    return llama


def test_without_llama_cpp_a_local_call_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    connection = ModelConnection(name="local", provider="local", model="m", path=str(model))
    with pytest.raises(ModelError, match=r"pip install 'proctor\[local\]'") as caught:
        complete(open_caller(connection, limits=PoolLimits()))
    assert caught.value.kind == "config"


def test_a_local_answer_past_the_capacity_stops_the_generation(fake_model: _FakeLlama) -> None:
    with pytest.raises(ModelError) as caught:
        _generate("fake.gguf", ask(), threading.Event(), capacity_bytes=100)
    assert caught.value.kind == "capacity"
    assert (fake_model.yielded, fake_model.closed) == (3, True)


def test_a_cancelled_local_call_stops_its_generation(fake_model: _FakeLlama) -> None:
    cancelled = threading.Event()
    cancelled.set()
    _generate("fake.gguf", ask(), cancelled, capacity_bytes=1024)
    assert (fake_model.yielded, fake_model.closed) == (1, True)


def test_the_grammar_schema_leaves_huge_bounds_to_validation() -> None:
    decision = grammar_schema(answer_schema())["properties"]["decisions"]["items"]
    assert "maxLength" not in decision["properties"]["content"]  # 4000: too large for llama.cpp
    assert decision["properties"]["title"]["maxLength"] == 200
    assert decision["properties"]["evidence"]["maxItems"] == 20
