"""Bad and odd Codex input becomes issues naming file, line and reason; the rest is read."""

from __future__ import annotations

from pathlib import Path

from proctor.sources import CodexAdapter, Sample
from tests.sources.helpers import read

META = '{"timestamp":"2026-03-04T09:00:00Z","type":"session_meta","payload":{"id":"s-bad","cwd":"/w"}}\n'
USER = (
    '{"timestamp":"2026-03-04T09:00:01Z","type":"response_item","payload":{"type":"message",'
    '"role":"user","content":[{"type":"input_text","text":"%s"}]}}\n'
)
REPLY = (
    '{"timestamp":"2026-03-04T09:00:02Z","type":"response_item","payload":{"type":"message",'
    '"role":"assistant","content":[{"type":"output_text","text":"%s"}]}}\n'
)


def _write(tmp_path: Path, text: str, name: str = "rollout.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_truncated_last_line_is_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        META + USER % "one" + REPLY % "two" + '{"timestamp":"2026-03-04T09:00:03Z","type":"resp',
    )
    result = read(path)
    (issue,) = result.issues
    assert (issue.severity, issue.line) == ("warning", 4)
    assert "truncated last line" in issue.reason
    (bundle,) = result.bundles
    assert [m.text for m in bundle.messages] == ["one", "two"]


def test_an_invalid_json_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, META + USER % "one" + "{not json}\n" + REPLY % "two")
    result = read(path, format_name="codex")
    (issue,) = result.errors()
    assert (issue.path, issue.line) == (str(path), 3)
    assert issue.reason.startswith("invalid JSON")
    assert [m.text for m in result.bundles[0].messages] == ["one", "two"]


def test_a_line_that_is_not_an_object_is_an_error_and_is_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, META + '["a", "list"]\n' + USER % "one")
    result = read(path)
    (issue,) = result.errors()
    assert issue.line == 2 and "expected a JSON object, got an array" in issue.reason
    assert len(result.bundles[0].messages) == 1


def test_unknown_record_kinds_are_skipped_with_a_warning_naming_each_line(tmp_path: Path) -> None:
    unknown = '{"timestamp":"2026-03-04T09:00:01Z","type":"future_kind","payload":{"x":1}}\n'
    unknown_item = '{"timestamp":"2026-03-04T09:00:01Z","type":"response_item","payload":{"type":"hologram_call"}}\n'
    quiet_event = '{"timestamp":"2026-03-04T09:00:01Z","type":"event_msg","payload":{"type":"brand_new_event"}}\n'
    path = _write(
        tmp_path,
        META + unknown + unknown + unknown_item + unknown_item + quiet_event + USER % "one",
    )
    result = read(path)
    assert result.errors() == []
    assert [(i.line, i.severity) for i in result.issues] == [
        (2, "warning"),
        (3, "warning"),
        (4, "warning"),
        (5, "warning"),
    ]
    assert "'future_kind'" in result.issues[0].reason
    assert "response_item:hologram_call" in result.issues[2].reason
    assert [m.text for m in result.bundles[0].messages] == ["one"]


def test_many_unknown_records_of_one_kind_are_listed_up_to_a_bound_then_counted(
    tmp_path: Path,
) -> None:
    unknown = '{"timestamp":"2026-03-04T09:00:01Z","type":"future_kind","payload":{"x":1}}\n'
    path = _write(tmp_path, META + unknown * 25 + USER % "one")
    result = read(path)
    listed = [i for i in result.issues if i.line is not None]
    assert [i.line for i in listed] == list(range(2, 22))
    (summary,) = [i for i in result.issues if i.line is None]
    assert summary.reason.startswith("5 more line(s) of unknown record type 'future_kind'")
    assert [m.text for m in result.bundles[0].messages] == ["one"]


def test_a_record_type_that_is_not_a_string_is_an_error_on_its_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        META
        + '{"timestamp":"2026-03-04T09:00:01Z","type":["response_item"],"payload":{}}\n'
        + USER % "one",
    )
    result = read(path)
    (issue,) = result.errors()
    assert (issue.line, issue.reason) == (
        2,
        'field "type" is an array, not a record type; line skipped',
    )
    assert [m.text for m in result.bundles[0].messages] == ["one"]


def test_a_record_without_a_payload_object_is_an_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        META
        + '{"timestamp":"2026-03-04T09:00:01Z","type":"response_item","payload":"oops"}\n'
        + USER % "one",
    )
    result = read(path)
    (issue,) = result.errors()
    assert issue.line == 2 and "no payload object" in issue.reason
    assert len(result.bundles[0].messages) == 1


def test_fields_whose_type_changed_are_tolerated(tmp_path: Path) -> None:
    drifted = (
        # Epoch-millisecond timestamp, content as a bare string, output as an object.
        '{"timestamp":1772614801000,"type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}\n'
        '{"timestamp":"2026-03-04T09:00:02Z","type":"response_item","payload":{"type":"function_call","name":"f",'
        '"arguments":{"a":1},"call_id":"c1"}}\n'
        '{"timestamp":"2026-03-04T09:00:03Z","type":"response_item","payload":{"type":"function_call_output",'
        '"call_id":"c1","output":{"content":"boom","success":false}}}\n'
        '{"timestamp":"2026-03-04T09:00:04Z","type":"event_msg","payload":{"type":"token_count","info":null}}\n'
    )
    result = read(_write(tmp_path, META + drifted))
    assert result.errors() == [] and result.issues == []
    (bundle,) = result.bundles
    (message,) = bundle.messages
    assert message.text == "hi" and message.created_at is not None
    (call,) = bundle.tool_calls
    assert (call.arguments, call.status, call.result_text) == ({"a": 1}, "error", "boom")


def test_records_before_any_session_meta_go_to_the_session_named_by_the_file(
    tmp_path: Path,
) -> None:
    session = "0195f3c0-5555-7000-8000-00000000000e"
    path = _write(
        tmp_path, USER % "one" + REPLY % "two", name=f"rollout-2026-03-04T09-00-00-{session}.jsonl"
    )
    assert CodexAdapter().sniff(Sample(path))
    result = read(path)
    (warning,) = result.issues
    assert (warning.severity, warning.line) == ("warning", 1)
    (bundle,) = result.bundles
    assert bundle.conversation.conversation_id == f"codex:{session}"
    assert len(bundle.messages) == 2


def test_concatenated_sessions_become_one_bundle_each(tmp_path: Path) -> None:
    other = META.replace("s-bad", "s-other")
    path = _write(tmp_path, META + USER % "one" + other + USER % "two" + META + REPLY % "three")
    bundles = {b.conversation.external_id: b for b in read(path).bundles}
    assert sorted(bundles) == ["s-bad", "s-other"]
    assert [m.text for m in bundles["s-bad"].messages] == ["one", "three"]
    assert bundles["s-bad"].conversation.attributes["resumed"] == 1
    assert [m.text for m in bundles["s-other"].messages] == ["two"]


def test_json_lines_of_another_shape_are_not_claimed(tmp_path: Path) -> None:
    history = _write(
        tmp_path, '{"session_id":"s","ts":1,"text":"hi"}\n{"session_id":"s","ts":2,"text":"yo"}\n'
    )
    claude = _write(
        tmp_path,
        '{"type":"user","timestamp":"2026-03-04T09:00:00Z","message":{"role":"user","content":"hi"}}\n'
        '{"type":"assistant","timestamp":"2026-03-04T09:00:01Z","message":{"role":"assistant","content":"yo"}}\n',
        name="claude.jsonl",
    )
    assert not CodexAdapter().sniff(Sample(history))
    assert not CodexAdapter().sniff(Sample(claude))


def test_a_session_meta_line_longer_than_the_sample_is_still_recognised(tmp_path: Path) -> None:
    tools = ",".join(f'{{"name":"tool_{n}","description":"{"x" * 200}"}}' for n in range(2000))
    meta = (
        '{"timestamp":"2026-03-04T09:00:00Z","type":"session_meta","payload":'
        f'{{"id":"s-big","cwd":"/w","dynamic_tools":[{tools}]}}}}\n'
    )
    assert len(meta) > 300_000
    path = _write(tmp_path, meta + USER % "one")
    assert CodexAdapter().sniff(Sample(path))
    (bundle,) = read(path).bundles
    assert bundle.conversation.external_id == "s-big"
    assert "dynamic_tools" not in str(bundle.conversation.attributes)
