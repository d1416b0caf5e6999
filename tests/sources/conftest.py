"""Fixtures shared by the source adapter tests."""

from __future__ import annotations

from typing import Any

import pytest

from proctor.sources import _source


@pytest.fixture
def head_parses(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every line a sample parses (its head's lines, or lines read past it)."""
    seen: list[bytes] = []
    original = _source.parse_json

    def counting(data: bytes, **kwargs: Any) -> Any:
        seen.append(data)
        return original(data, **kwargs)

    monkeypatch.setattr(_source, "parse_json", counting)
    return seen
