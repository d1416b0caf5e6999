"""The import path's preparation keeps a message or tool call that nothing changes as
the object the adapter made (no copy with equal fields), and stores exactly what
``prepare_bundle`` stores, whatever the attributes hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources import parse_json, prepare_bundle, prepare_imported_bundle
from proctor.store import conversation_rows
from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall
from tests.properties import examples
from tests.sources.json_values import TEXT as _TEXT
from tests.sources.json_values import VALUES as _VALUES


def _parsed(value: Any) -> Any:
    return parse_json(json.dumps(value).encode("utf-8", "surrogatepass"))


def _bundle(message: Message, call: ToolCall) -> ConversationBundle:
    return ConversationBundle(
        Conversation("c1", "test", "c1"), messages=(message,), tool_calls=(call,)
    )


def test_an_unchanged_message_and_call_are_kept() -> None:
    message = Message("m1", "assistant", "reply", "hello", attributes={"request_id": "req_1"})
    call = ToolCall("t1", "Bash", _parsed({"command": "ls"}), result_text="a.txt")
    imported = prepare_imported_bundle(_bundle(message, call))
    assert imported.bundle.messages[0] is message
    assert imported.bundle.tool_calls[0] is call
    public = prepare_bundle(_bundle(message, call))
    assert public.bundle.messages[0] is not message
    assert conversation_rows(imported) == conversation_rows(public)


def test_a_changed_message_or_call_is_replaced() -> None:
    secret = "sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty"
    cases = [
        (Message("m1", "user", "prompt", "hi  "), ToolCall("t1", "Bash", {})),  # trailing blank
        (
            Message("m1", "user", "prompt", "hi", attributes={"note": "x "}),
            ToolCall("t1", "Bash", {}, result_text=f"key {secret}"),
        ),
        (
            Message("m1", "user", "prompt", "hi", attributes={"n": 2**70}),
            ToolCall("t1", "Bash", {}, attributes={"v": float("nan")}),
        ),
    ]
    for message, call in cases:
        imported = prepare_imported_bundle(_bundle(message, call))
        public = prepare_bundle(_bundle(message, call))
        changed = [
            imported.bundle.messages[0] is not message,
            imported.bundle.tool_calls[0] is not call,
        ]
        assert any(changed)
        assert conversation_rows(imported) == conversation_rows(public)
        assert imported.sources == public.sources


@settings(max_examples=examples(300), deadline=None)
@given(
    message_attributes=st.dictionaries(_TEXT, _VALUES, max_size=4),
    call_attributes=st.dictionaries(_TEXT, _VALUES, max_size=4),
    text=_TEXT,
)
def test_the_import_stores_what_prepare_bundle_stores(
    message_attributes: dict[str, Any], call_attributes: dict[str, Any], text: str
) -> None:
    message = Message("m1", "user", "prompt", text, attributes=_parsed(message_attributes))
    call = ToolCall(
        "t1", "Read", _parsed({"path": text}), result_text=text, attributes=_parsed(call_attributes)
    )
    imported = prepare_imported_bundle(_bundle(message, call))
    public = prepare_bundle(_bundle(message, call))
    assert conversation_rows(imported) == conversation_rows(public)
    assert imported.sources == public.sources
    assert imported.redactions_by_kind == public.redactions_by_kind
