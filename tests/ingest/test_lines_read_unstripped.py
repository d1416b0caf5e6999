"""The import's line reader parses a line of the usual shape (``{…}`` and a newline)
without stripping it first; it reads the same objects and reports the same issues as
``iter_jsonl``, which strips every line, whatever the line holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources._files import iter_jsonl, read_jsonl_objects
from proctor.transcript import SourceIssue
from tests.properties import examples

_LINES = [
    b'{"type":"user","n":1}\n',
    b'{"a":"}\n',  # an unterminated string that ends in a brace
    b'{"a":1}}\n',
    b'{"a":NaN}\n',
    b'{"big":123456789012345678901234567890}\n',
    b'{"neg":-92233720368547758090}\n',
    b'{"deep":' + b"[" * 150 + b"]" * 150 + b"}\n",
    b'{"a":"\\ud800"}\n',
    b'  {"pad":1}  \n',
    b'\xef\xbb\xbf{"bom":1}\n',
    b"[1,2]\n",
    b"\n",
    b'{"a":1}\r\n',
    b'{"a":"x\x0c"}\n',
    b'{"a":1}\x0c\n',
    b"{not json}\n",
]


def _read(path: Path) -> tuple[list[Any], list[SourceIssue]]:
    objects: list[Any] = []
    issues: list[SourceIssue] = []
    read_jsonl_objects(path, lambda value, number: objects.append((number, value)), issues)
    return objects, issues


def _reference(path: Path) -> tuple[list[Any], list[SourceIssue]]:
    objects: list[Any] = []
    issues: list[SourceIssue] = []
    for item in iter_jsonl(path):
        if isinstance(item, SourceIssue):
            issues.append(item)
        else:
            objects.append(item)
    return objects, issues


@settings(max_examples=examples(300), deadline=None)
@given(lines=st.lists(st.sampled_from(_LINES), max_size=8), last=st.sampled_from([b"", b'{"t":1}']))
def test_lines_read_as_iter_jsonl_reads_them(
    tmp_path_factory: Any, lines: list[bytes], last: bytes
) -> None:
    path = tmp_path_factory.mktemp("lines") / "session.jsonl"
    path.write_bytes(b"".join(lines) + last)
    assert _read(path) == _reference(path)


def test_every_kind_of_line(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(_LINES))
    objects, issues = _read(path)
    assert (objects, issues) == _reference(path)
    assert [number for number, _ in objects] == [1, 4, 5, 6, 8, 9, 10, 13, 15]
    assert objects[2][1] == {"big": 123456789012345678901234567890}
    reasons = {issue.line: issue.reason for issue in issues}
    assert "invalid JSON" in reasons[2] and "invalid JSON" in reasons[3]
    assert "nest" in reasons[7] and "array" in reasons[11]
