"""The claim finder's shortcuts change no answer, only how much text is searched.

Claim stems are found in the lower-cased text in one Aho-Corasick pass (instead of a
case-blind regular expression), and a topic's pattern runs only on sentences holding one
of its words. These tests hold the premises over every Unicode character and every shape
of match, and compare answers with the shortcuts on and off.
"""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from proctor.rules.builtin._claim_text import (
    _PATTERNS,
    _STEMS,
    _TOPIC_WORDS,
    _UNALIGNED,
    ANY_DIGIT,
    ClaimTopic,
    _find_claims,
    _mask,
    find_claims,
)
from tests.properties import examples
from tests.rules.helpers import every_character


@functools.cache
def _aligned() -> str:
    """Every character the claim patterns search aligned (``_UNALIGNED`` left out)."""
    return _UNALIGNED.sub("", every_character())


def test_what_a_case_blind_stem_letter_matches_lower_cases_to_that_letter() -> None:
    groups = [g for topic_groups in _TOPIC_WORDS.values() for g in topic_groups]
    words = [*_STEMS, *(w for g in groups for w in g if w != ANY_DIGIT)]
    letters = {c for word in words for c in word}
    for letter in sorted(letters):
        for character in re.findall(re.escape(letter), _aligned(), re.IGNORECASE):
            assert character.lower() == letter, (letter, hex(ord(character)))


@pytest.mark.slow
@pytest.mark.parametrize(("topic", "pattern"), _PATTERNS, ids=[topic for topic, _ in _PATTERNS])
@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_every_match_of_a_topic_holds_a_word_of_each_of_its_groups(
    topic: ClaimTopic, pattern: re.Pattern[str], data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(pattern))
    match = pattern.search(text)
    assert match is not None
    assume(not _UNALIGNED.search(match.group(0)))
    lowered = match.group(0).lower()
    for group in _TOPIC_WORDS[topic]:
        digit = ANY_DIGIT in group and re.search(r"\d", lowered) is not None
        assert digit or any(word in lowered for word in group), (topic, match.group(0), group)


_PIECES = (
    "All tests pass", "the build succeeds", "lint is clean", "it works now", "I verified",
    "`pytest -q`", "src/app.py", "no errors", "24 passed", "not", "let me check whether",
    "PASSED", "Green", "ok", "fine", "fixed", "was confirmed", "compiles cleanly", "CI",
    "tests", "build", "mypy", "ruff", "except", "but", "should", "bypass", "workflow",
    "Verified:", "- [ ]", "- [x]", "> ", "```", '"', "“", "”", "`", ".", "!", "?", ";",
    ",", ":", " ", " ", " ", "\n", "\n\n", "\t", "ſ", "ı", "İ", "K", "é", "_", "x", "3",
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_claims_are_the_same_with_and_without_the_shortcuts(text: str) -> None:
    assert find_claims(text) == _find_claims(text, _mask(text), None)


@pytest.mark.parametrize(
    "text",
    [
        "All tests pass now.",
        "ALL TESTS PASS.",
        'He said "all tests pass". The build is green.',
        "```\nall tests pass\n```\nThe build succeeds.",
        "> tests pass\nLint is clean.",
        "I verified `src/app.py` and it works now.",
        "Paſsing: all teſts paſs. The build is green.",  # long s: no line-up, searched case-blind
        "İstanbul: the build succeeds.",  # lower-casing changes the length
        "The workflow bypass is ok? No: 24 passed.",
    ],
)
def test_examples_agree_with_the_plain_search(text: str) -> None:
    assert find_claims(text) == _find_claims(text, _mask(text), None)
    assert find_claims(text)  # each example claims something
