"""A test log's failure and count lines are found the same when only lines near a word
are tried.

``outcome`` and ``summary_span`` try the line patterns only on the lines around a word
every match must hold (``_word_lines``), instead of at every character of the log. These
tests hold the premises (every match holds a word; ``\\s`` is ``str.isspace``) and compare
the answers with the plain ``search``/``finditer`` over texts built from the patterns'
own pieces, line breaks and Unicode blanks included.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules.builtin._verification import (
    _COUNT_WORDS,
    _COUNTS_LINE,
    _FAILURE,
    _FAILURE_LINE,
    _FAILURE_WORDS,
    _first_failure_line,
    _last_counts_line,
    outcome,
    summary_span,
)
from proctor.transcript import ToolCall
from tests.properties import examples


def _span(found: re.Match[str] | None) -> tuple[int, int] | None:
    return None if found is None else found.span()


def _plain_last_counts(text: str) -> tuple[int, int] | None:
    counts = list(_COUNTS_LINE.finditer(text))
    return counts[-1].span() if counts else None


def _assert_same(text: str) -> None:
    first = _span(_first_failure_line(text))
    assert first == _span(_FAILURE_LINE.search(text)), text
    assert (first is not None) == (_FAILURE.search(text) is not None), text
    assert _span(_last_counts_line(text)) == _plain_last_counts(text), text


def test_a_regex_blank_is_exactly_what_str_isspace_calls_one() -> None:
    blank = re.compile(r"\s")
    for code in range(sys.maxunicode + 1):
        character = chr(code)
        assert (blank.fullmatch(character) is not None) == character.isspace(), hex(code)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pattern", "words"),
    [(_FAILURE, _FAILURE_WORDS), (_COUNTS_LINE, _COUNT_WORDS)],
    ids=["failure", "counts"],
)
@settings(max_examples=examples(600), deadline=None)
@given(data=st.data())
def test_every_match_holds_one_of_its_words(
    pattern: re.Pattern[str], words: re.Pattern[str], data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(pattern))
    found = pattern.search(text)
    assert found is not None
    assert words.search(found.group(0)) is not None, found.group(0)


_PIECES = (
    "3", "0", "12", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\x1c", "\u2028", "\x85", "\xa0",
    "failed", "failing", "failures", "error", "errors", "ERROR", "ERR", "FAIL", "FAILED",
    "passed", "passing", "problems", "Failures: 2", "Tests run: 4, ", "--- FAIL:",
    "test result: FAILED", "FAILED (failures=", "BUILD FAILED", "Build failed", "npm ERR!",
    "error TS2304", "error[E0308]", "error:", ": error:", "no tests ran",
    "collected 0 items", "No tests found", "No test files found", "x", "_", "a", ".", ":",
    "é", "=====",
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_the_lines_found_are_those_a_plain_search_finds(text: str) -> None:
    _assert_same(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "all good",
        "3\n\n   failed",
        "ok\n  \n\tFAILED tests/test_a.py::test_x",
        "===== 2 failed, 22 passed in 0.53s =====",
        "12 passed\nthen 1 failed\nand 4\n passed at last",
        "4\n\u2028 errors",
        "error: could not compile\nerror[E0308]: mismatched types",
        "x" * 5000 + "\n== 1 passed ==\n" + "no failure here\n" * 200,
        "Tests run: 5, Failures: 0\nTests run: 5, Failures: 1",
    ],
)
def test_known_logs_give_the_same_lines(text: str) -> None:
    _assert_same(text)


def test_a_piped_pytest_run_reports_its_failure_and_its_summary_line() -> None:
    log = (
        "tests/test_a.py ..F\n" + "    assert 1 == 2\n" * 50 + "== 1 failed, 2 passed in 0.1s ==\n"
    )
    call = ToolCall(
        source_id="c1",
        name="Bash",
        arguments={"command": "pytest | tail"},
        status="ok",
        result_text=log,
    )
    assert outcome(call) == "failed"
    span = summary_span(call)
    assert span is not None
    assert log[span[0] : span[1]] == "== 1 failed, 2 passed in 0.1s =="
