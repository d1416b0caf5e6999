"""Redaction tries a secret pattern only when the text holds one of its anchors; every
match of the pattern must therefore hold one (else a secret could slip through)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import _ANCHORS, _PATTERNS, Redactor
from tests.properties import examples


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "pattern"), [(k, p) for k, p, _, _ in _PATTERNS])
@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_every_match_of_a_secret_pattern_holds_one_of_its_anchors(
    kind: str, pattern: str, data: st.DataObject
) -> None:
    compiled = re.compile(pattern)
    text = data.draw(st.from_regex(compiled))
    match = compiled.search(text)
    assert match is not None
    lowered = match.group(0).lower()
    assert any(anchor in lowered for anchor in _ANCHORS[kind]), (kind, match.group(0))


@pytest.mark.parametrize(
    "strings",
    [
        ["postgres://admin:hunter2secret@db.internal:5432/app", "plain"],
        ["ok", "Authorization: Bearer abcdefghijklmnop1234"],
        ["short", "AKIAIOSFODNN7EXAMPLE"],
    ],
)
def test_the_quick_test_over_joined_strings_passes_wherever_one_holds_a_secret(
    strings: list[str],
) -> None:
    assert any(Redactor().redact(s) != s for s in strings)
    assert Redactor.may_find("\x00".join(strings))


def test_anchors_are_found_in_text_beyond_ascii_and_with_lone_surrogates() -> None:
    text = "Clé privée \ud800 — export OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0kLmN"
    redacted = Redactor().redact(text)
    assert "[REDACTED:" in redacted and "a1B2c3D4e5F6g7H8i9J0kLmN" not in redacted
    assert redacted.startswith("Clé privée \ud800")
