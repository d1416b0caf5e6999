"""A pattern whose anchor is common ("key", "://") is tried only when the text also holds
its exact-case parts (``_EXACT``): every match of the pattern must hold them, else a
secret could slip through; and redaction with the parts finds what it finds without."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor import redaction as _redaction
from proctor.redaction import _EXACT, _PATTERNS, Redactor
from tests.properties import examples

_WITH_PARTS = [(kind, pattern) for kind, pattern, _, _ in _PATTERNS if kind in _EXACT]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "pattern"), _WITH_PARTS)
@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_every_match_of_a_pattern_holds_its_exact_parts(
    kind: str, pattern: str, data: st.DataObject
) -> None:
    compiled = re.compile(pattern)
    match = compiled.search(data.draw(st.from_regex(compiled)))
    assert match is not None
    for parts in _EXACT[kind]:
        assert any(part in match.group(0) for part in parts), (kind, match.group(0))


_TEXTS = [
    "export OPENAI_API_KEY=abc123def456ghi789 and the key is used later",
    "DB_PASSWORD: 'correct-horse-battery-9'",
    "GITHUB_TOKEN=ghp_" + "a1B2c3D4" * 5,
    "the key to success is a SECRET recipe",  # anchors, but no assignment
    "MY_SECRET_KEY = s3cr3tValue99",
    "clone https://alice:pa55word@git.example.org/repo.git then https://x.org/a",
    "see https://example.org/key?token=1 (no password in it)",
    "stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + " and sk_TEST_ABCDEFGHIJKLMNOPQ",
    "rk_test_" + "Zz9" * 8 + " _live_ in prose",
    "PRIVATE_KEY:'" + "k" * 40 + "'",
    "nothing here about keys, tokens, secrets or passwords at all",
]


@pytest.mark.parametrize("text", _TEXTS)
def test_redaction_finds_the_same_with_and_without_the_exact_parts(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = Redactor()
    found = quick.redact(text)
    monkeypatch.setattr(_redaction, "_COMPILED", [(*one[:5], None) for one in _redaction._COMPILED])
    plain = Redactor()
    assert found == plain.redact(text)
    assert quick.counts == plain.counts
