"""Volatile parts of tool output are masked the same as the plain patterns would mask them.

The loop rules' patterns begin with a character (class) and check the word boundary
behind it, so the engine can skip ahead; these tests hold each to its plain form.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules.builtin._loop_track import _VOLATILE, normalise_output
from tests.properties import examples

_PLAIN = [
    r"\x1b\[[0-9;?]*[A-Za-z]",
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
    r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b",
    r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b",
    r"\b0x[0-9a-fA-F]+\b",
    r"(?i)\b(id\b\s*[:=#]?\s*)[0-9A-Za-z_-]{4,}",
    r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{16,}\b",
    r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b",
    r"(?i)\b(pid|process|job)(\s*[:=#]?\s*)\d+\b",
    r"(?:/private)?(?:/tmp|/var/tmp|/var/folders)/[^\s'\"]+",
]
_PIECES = [
    "2024-01-02", "T", " ", "12:34:56", ".5", ",", "Z", "+01:00", "0x1F", "0xg", "id", "ID",
    "Id:", " = ", "#", "abcd", "deadbeef", "0123456789abcdef", "cafe", "1234", "-", "5 ms",
    "3s", "2.5 seconds", "10min", "pid", "PID", "Process", "job", "jOb", ": ", "42", "/tmp/x",
    "/private/var/folders/a", "/var/tmp/q", "/private/foo", "\x1b[31m", "x", "_", "\n", "\t",
    "İ", "ı", "ſ", "K", "٣", "µs", "us", "h", "hours", "pjob", "jid", "pob", "jrocess",
    "e6f1d2a3-1b2c-4d5e-8f90-1234567890ab",
]  # fmt: skip


def test_there_is_a_plain_form_for_every_pattern() -> None:
    assert len(_PLAIN) == len(_VOLATILE)


@pytest.mark.slow
@pytest.mark.parametrize("number", range(len(_PLAIN)))
@settings(max_examples=examples(1500), deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_each_pattern_masks_what_its_plain_form_masks(number: int, text: str) -> None:
    fast, replacement = _VOLATILE[number]
    assert fast.sub(replacement, text) == re.sub(_PLAIN[number], replacement, text)


def test_retries_that_differ_only_in_volatile_parts_normalise_alike() -> None:
    first = "2026-01-02T10:00:01Z pid 4242 took 1.5s  request id=abc123ff\n/tmp/xyz1 failed"
    second = "2026-03-04T11:22:33Z pid 77 took 20ms request id=ffee0099\n/tmp/q failed"
    assert normalise_output(first) == normalise_output(second)
    assert normalise_output("2 failed") != normalise_output("1 failed")


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_skipping_patterns_a_text_cannot_match_changes_nothing(text: str) -> None:
    every = text
    for pattern, replacement in _VOLATILE:
        every = pattern.sub(replacement, every)
    assert normalise_output(text) == " ".join(every.split())
