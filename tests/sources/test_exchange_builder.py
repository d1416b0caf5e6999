"""What the exchange-log adapters share (``sources/_builder.py``): a message or item id used
twice keeps the copy by position with a warning, and the bundle carries the exchanges."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import read, write_json


def _anthropic_response(message_id: str, reply: str) -> dict[str, object]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": reply}],
    }


def _responses_log(item_id: str) -> dict[str, object]:
    return {
        "model": "gpt-x",
        "input": [
            {"type": "message", "id": item_id, "role": "user", "content": "first"},
            {"type": "message", "id": item_id, "role": "user", "content": "second"},
        ],
    }


def test_an_anthropic_message_id_seen_twice_keeps_the_copy_by_position(tmp_path: Path) -> None:
    request = {
        "model": "claude-x",
        "messages": [
            {"role": "user", "content": "hello"},
            {"id": "msg_same", "role": "assistant", "content": "one"},
            {"role": "user", "content": "again"},
            {"id": "msg_same", "role": "assistant", "content": "two"},
        ],
    }
    result = read(write_json(tmp_path / "log.json", request), format_name="anthropic")
    [bundle] = result.bundles
    ids = [m.source_id.rsplit(":", 1)[1] for m in bundle.messages]
    assert ids == ["0", "msg_same", "2", "3"]
    assert [m.text for m in bundle.messages] == ["hello", "one", "again", "two"]
    [warning] = [i for i in bundle.issues if "appears twice" in i.reason]
    assert warning.reason.endswith(
        ": message id msg_same appears twice; the copy is kept by position"
    )
    assert warning.severity == "warning"


@pytest.mark.parametrize("item_id", ["msg_a", "item-7"])
def test_a_responses_item_id_seen_twice_keeps_the_copy_by_position(
    tmp_path: Path, item_id: str
) -> None:
    log = write_json(tmp_path / "log.json", _responses_log(item_id))
    [bundle] = read(log, format_name="openai_responses").bundles
    assert [m.source_id.split(":", 2)[2] for m in bundle.messages] == [item_id, "1"]
    [warning] = [i for i in bundle.issues if "appears twice" in i.reason]
    assert warning.reason.endswith(
        f": item id {item_id} appears twice; the copy is kept by position"
    )


def test_the_bundle_names_its_format_key_and_messages(tmp_path: Path) -> None:
    log = write_json(tmp_path / "one.json", _anthropic_response("msg_1", "yes"))
    [bundle] = read(log, format_name="anthropic").bundles
    conversation = bundle.conversation
    assert conversation.format == "anthropic"
    assert conversation.conversation_id == f"anthropic:{conversation.external_id}"
    assert conversation.attributes == {}
    assert bundle.origin == str(log)
    assert [m.source_id for m in bundle.messages] == [f"{conversation.conversation_id}:msg_1"]
