"""ING-9: damaged bytes, odd JSON and damaged first lines are reported by line, the rest is read.

Each test writes a small real file, damages it the way files get damaged (a byte order
mark, CRLF line ends, a torn or garbled first line, a number past 64 bits, nesting past
the limit), reads it through detection and the adapter, and checks both halves: the
damage is named by file and line, and every intact record is still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.sources import Sample, SourceAdapter, default_adapters, detect, iter_jsonl
from proctor.sources._files import JSONProblem, element_lines, parse_json
from proctor.transcript import MAX_JSON_DEPTH
from tests.sources.helpers import read

SESSION = "5e55aaaa-0000-4000-8000-000000000000"


def _cc_line(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "user" if index % 2 == 0 else "assistant",
        "uuid": f"0000000{index}-0000-4000-8000-000000000000",
        "parentUuid": None if index == 0 else f"0000000{index - 1}-0000-4000-8000-000000000000",
        "sessionId": SESSION,
        "timestamp": f"2026-03-01T10:00:0{index}.000Z",
        "message": {"role": "user" if index % 2 == 0 else "assistant", "content": text},
    }


def _session(tmp_path: Path, lines: list[bytes], *, newline: bytes = b"\n") -> Path:
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(line + newline for line in lines))
    return path


def _good(count: int) -> list[bytes]:
    return [json.dumps(_cc_line(i, f"line {i + 1} text")).encode() for i in range(count)]


def _texts(path: Path) -> list[str]:
    return sorted(m.text for b in read(path).bundles for m in b.messages)


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"k": value}
    return value


# --- one JSON rule ------------------------------------------------------------------------


def test_a_byte_order_mark_before_a_json_value_is_ignored() -> None:
    assert parse_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


@pytest.mark.parametrize(
    "number",
    [
        2**64 + 1,
        -(2**63) - 1,  # nineteen digits: below a 64-bit integer all the same
        -(2**63),
        2**63 - 1,
        -(10**30) - 7,
        123456789012345678901234567890,
    ],
)
def test_integers_of_any_size_and_sign_are_read_exactly(number: int) -> None:
    value = parse_json(f'{{"a": {number}, "b": [{number}], "c": "id-{number}"}}'.encode())
    assert value == {"a": number, "b": [number], "c": f"id-{number}"}
    assert type(value["a"]) is int


def test_what_python_writes_but_json_forbids_is_read_nan_and_lone_surrogates() -> None:
    value = parse_json(b'{"x": NaN, "y": -Infinity, "s": "a\\ud800b"}')
    assert value["s"] == "a\ud800b"
    assert value["x"] != value["x"] and value["y"] == float("-inf")


@pytest.mark.parametrize("text", [b'{"to": 0x8f3a9b}', b'{"a": 1', b'{"a": "\xff"}'])
def test_text_that_is_not_json_is_refused_with_where(text: bytes) -> None:
    with pytest.raises(JSONProblem) as refused:
        parse_json(text)
    assert refused.value.position is not None


def test_a_value_nested_past_the_record_limit_is_refused_naming_the_field() -> None:
    with pytest.raises(JSONProblem) as refused:
        parse_json(json.dumps({"message": {"input": _nested(MAX_JSON_DEPTH + 5)}}).encode())
    assert refused.value.reason.startswith("field message.input.k.k")
    parse_json(json.dumps({"message": {"input": _nested(MAX_JSON_DEPTH - 5)}}).encode())


# --- JSON Lines ---------------------------------------------------------------------------


def test_crlf_line_ends_and_a_byte_order_mark_on_any_line_are_read(tmp_path: Path) -> None:
    lines = _good(4)
    lines[0] = b"\xef\xbb\xbf" + lines[0]
    lines[2] = b"\xef\xbb\xbf" + lines[2]
    path = _session(tmp_path, lines, newline=b"\r\n")
    result = read(path)
    assert result.errors() == []
    assert _texts(path) == [f"line {i} text" for i in range(1, 5)]


def test_a_line_nested_300_deep_is_named_by_line_and_field_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    lines = _good(4)
    deep = _cc_line(2, "deep")
    deep["message"]["content"] = [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": _nested(300)}
    ]
    lines[2] = json.dumps(deep).encode()
    path = _session(tmp_path, lines)
    (error,) = read(path).errors()
    assert error.line == 3
    assert error.reason.startswith("field message.content[0].input.k.k.k.k…")
    assert error.reason.endswith(
        "nested deeper than 100 levels (the limit for one record); line skipped"
    )
    assert _texts(path) == ["line 1 text", "line 2 text", "line 4 text"]


@pytest.mark.parametrize(
    "first",
    [
        b'{"type": "user", "uuid": "torn',  # a torn first line
        b'["not", "a", "record"]',  # another JSON type
        b"\xff\xfe\x00garbage\x00",  # bytes that are not text
        json.dumps({"a": _nested(200)}).encode(),  # nesting past the limit
        b"0x8f3a9b2c4d5e6f708192a3b4c5d6e7f8",  # an unquoted hex number
    ],
    ids=["torn", "array", "garbage", "deep", "hex"],
)
def test_a_damaged_first_line_is_reported_and_the_session_is_still_read(
    tmp_path: Path, first: bytes
) -> None:
    path = _session(tmp_path, [first, *_good(3)])
    assert detect(Sample(path), default_adapters()) is not None
    result = read(path)
    assert [issue.line for issue in result.errors()] == [1]
    assert _texts(path) == ["line 1 text", "line 2 text", "line 3 text"]


def test_a_first_line_longer_than_the_sample_does_not_hide_the_format(tmp_path: Path) -> None:
    long_line = _cc_line(0, "x" * 600_000)
    long_line.pop("parentUuid")  # the envelope keys come after the long value
    path = _session(tmp_path, [json.dumps(long_line).encode(), *_good(3)[1:]])
    sample = Sample(path)
    assert sample.is_jsonl and detect(sample, default_adapters()) is not None


def test_a_json_lines_file_whose_every_line_is_damaged_is_reported_line_by_line(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "events.jsonl").write_bytes(b'{"torn\n[1, 2]\n{"x": 0x1f}\n')
    result = read(folder)
    assert [(i.line, i.severity) for i in result.issues if i.line] == [
        (1, "error"),
        (2, "error"),
        (3, "error"),
    ]
    assert result.issues[-1].reason.startswith("no line was recognised as a transcript record")


def test_a_damaged_json_document_met_in_a_folder_is_reported_with_its_line(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "r.json").write_text('[\n {"id": 1,\n  "contents": [[\n   {"role": \n')
    (folder / "notes.json").write_text('{"shopping": ["milk"]}')  # JSON of no known format
    result = read(folder)
    (issue,) = result.issues
    assert (Path(issue.path).name, issue.line) == ("r.json", 5)
    assert issue.reason.startswith("invalid JSON") and "not imported" in issue.reason


def test_a_json_lines_file_with_a_garbled_line_is_not_taken_for_a_binary_file(
    tmp_path: Path,
) -> None:
    lines = _good(3)
    lines[1] = lines[1][:40] + b"\x00\xff\xfe\x80" + lines[1][40:]
    path = _session(tmp_path, lines)
    assert not Sample(path).is_binary
    assert [issue.line for issue in read(path).errors()] == [2]
    assert _texts(path) == ["line 1 text", "line 3 text"]


# --- documents ----------------------------------------------------------------------------


def test_the_line_of_each_record_of_a_json_array_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[\n {"a": "x,[y"},\n\n {"b": [1, {"c": 2}]},\n "s"\n]')
    assert element_lines(path) == [2, 4, 5]
    (tmp_path / "o.json").write_text('{"a": [1, 2]}')
    assert element_lines(tmp_path / "o.json") == []


def test_escaped_quotes_and_long_strings_do_not_move_the_lines_found(tmp_path: Path) -> None:
    # A string token runs to the first quote no backslash escapes: brackets, commas and
    # escaped quotes inside it (and an escaped backslash just before its end) are text.
    long = "w [x], {y}: " * 20_000
    records = [{"a": 'say "[1, 2]" ' + long}, {"b": "ends in a backslash \\"}, "last"]
    path = tmp_path / "e.json"
    path.write_text("[\n" + ",\n\n".join(json.dumps(r) for r in records) + "\n]")
    assert element_lines(path) == [2, 4, 6]
    keyed = tmp_path / "k.json"
    keyed.write_text('{"skip": "\\"[", "loglines": [\n{"m": "\\\\"},\n{"n": 1}\n]}')
    assert element_lines(keyed, "loglines") == [2, 3]


def _r_judge(record_id: int, prompt: str) -> dict[str, Any]:
    return {
        "id": record_id,
        "scenario": "s",
        "profile": "p",
        "contents": [[{"role": "user", "content": prompt}]],
        "label": 0,
    }


def test_a_bad_record_in_a_json_document_is_named_by_its_line(tmp_path: Path) -> None:
    records = [_r_judge(1, "first"), _r_judge(2, "second"), _r_judge(3, "third")]
    records[1]["contents"] = {"not": "a list"}
    records[2]["label"] = _nested(150)
    path = tmp_path / "r.json"
    path.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    result = read(path)
    errors = sorted((issue.line, issue.reason) for issue in result.errors())
    assert [line for line, _ in errors] == [3, 4]
    assert "contents" in errors[0][1]
    assert errors[1][1].startswith("record 2 (id 3): field label.k.k")
    assert [m.text for b in result.bundles for m in b.messages if m.role == "user"] == ["first"]


def test_an_r_judge_action_with_an_unquoted_hex_number_is_imported(tmp_path: Path) -> None:
    record = _r_judge(7, "pay it")
    record["contents"][0] += [
        {
            "role": "agent",
            "thought": "ok",
            "action": "Send{'to': 0x8f3a9b2c4d5e6f708192a3b4c5d6e7f8}",
        },
        {"role": "environment", "content": "sent"},
    ]
    path = tmp_path / "r.json"
    path.write_text(json.dumps([record]))
    result = read(path)
    assert result.errors() == []
    (call,) = result.bundles[0].tool_calls
    assert call.arguments == {"to": 0x8F3A9B2C4D5E6F708192A3B4C5D6E7F8}


# --- detection ----------------------------------------------------------------------------


class _Broken(SourceAdapter):
    """An adapter whose recognition fails on everything (a bug in one adapter)."""

    name = "broken"
    description = "fails"

    def sniff(self, sample: Sample) -> bool:
        raise TypeError("unhashable type: 'list'")

    def read(self, unit: Any) -> Iterator[Any]:
        raise AssertionError("never read")


def test_an_adapter_failing_to_recognise_a_file_leaves_it_to_the_others(tmp_path: Path) -> None:
    path = _session(tmp_path, _good(2))
    adapter = detect(Sample(path), [_Broken(), *default_adapters()])
    assert adapter is not None and adapter.name == "claude_code"


def test_iterating_lines_names_every_kind_of_damage_by_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(
        b'{"a": 1}\n[1]\n{"b": NaN}\n{"c": 0x1}\n' + json.dumps(_nested(101)).encode() + b"\n"
    )
    items = list(iter_jsonl(path))
    assert [i.line if hasattr(i, "line") else i[0] for i in items] == [1, 2, 3, 4, 5]
    assert [type(i).__name__ for i in items] == [
        "tuple",
        "SourceIssue",
        "tuple",
        "SourceIssue",
        "SourceIssue",
    ]


def test_a_session_id_read_from_a_record_never_leads_out_of_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "subagents"
    outside.mkdir(parents=True)
    (outside / "agent-a1.jsonl").write_text(json.dumps(_cc_line(0, "not to be read")) + "\n")
    folder = tmp_path / "in"
    folder.mkdir()
    record = _cc_line(0, "the session's own text") | {"sessionId": "../outside"}
    (folder / "s.jsonl").write_text(
        json.dumps(record) + "\n" + json.dumps(_cc_line(1, "two")) + "\n"
    )
    assert _texts(folder) == ["the session's own text", "two"]


def test_a_session_id_longer_than_a_file_name_is_read_without_an_error(tmp_path: Path) -> None:
    lines = [json.loads(line) | {"sessionId": "s" * 5000} for line in _good(2)]
    path = _session(tmp_path, [json.dumps(line).encode() for line in lines])
    result = read(tmp_path)
    assert result.issues == [] and _texts(path) == ["line 1 text", "line 2 text"]


def test_json_lines_whose_first_line_was_cut_to_its_brace_are_read(tmp_path: Path) -> None:
    path = _session(tmp_path, [b"{", *_good(2)[1:]])
    assert Sample(path).is_jsonl
    assert _texts(path) == ["line 2 text"]
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps({"a": {"b": 1}, "c": [1]}, indent=2))
    assert not Sample(pretty).is_jsonl


def test_a_first_line_garbled_into_prose_does_not_hide_json_lines(tmp_path: Path) -> None:
    path = _session(tmp_path, [b'xq{"type": "user", "uuid":', *_good(3)[1:]])
    assert Sample(path).is_jsonl
    assert [issue.line for issue in read(path).errors()] == [1]
    readme = tmp_path / "README.md"
    readme.write_text("# Notes\n\nA sample line:\n\n```json\n" + _good(1)[0].decode() + "\n```\n")
    assert not Sample(readme).is_jsonl


def test_a_claude_code_web_export_laid_out_on_few_lines_is_recognised(tmp_path: Path) -> None:
    lines = [_cc_line(0, "first"), _cc_line(1, "second")]
    path = tmp_path / "export.json"
    body = ",\n".join(json.dumps(line) for line in lines)
    path.write_text('{"loglines": [\n' + body + "\n]}")
    assert _texts(path) == ["first", "second"]


def test_an_r_judge_record_whose_id_is_a_boolean_is_named_by_its_content(tmp_path: Path) -> None:
    records = [_r_judge(1, "first") | {"id": True}, _r_judge(2, "second") | {"id": True}]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records))
    result = read(path)
    ids = [bundle.conversation_id for bundle in result.bundles]
    assert len(set(ids)) == 2 and "rjudge:True" not in ids
