"""Preparation before storage: reasoning, secrets, bounds and fingerprints (ING-2…ING-5)."""

from __future__ import annotations

import dataclasses

from proctor.sources import Limits, prepare_bundle
from proctor.transcript import ConversationBundle, Message
from tests.builders import conversation_bundle, with_message_text, with_tool_attributes


def _with_result(bundle: ConversationBundle, text: str) -> ConversationBundle:
    call = dataclasses.replace(bundle.tool_calls[0], result_text=text)
    return dataclasses.replace(bundle, tool_calls=(call,))


def test_inline_reasoning_tags_are_removed_from_agent_text_only() -> None:
    bundle = with_message_text(
        conversation_bundle(), 1, "<thinking>The user seems upset</thinking>Done."
    )
    bundle = with_message_text(bundle, 0, "Please explain <thinking> tags in XML")
    prepared = prepare_bundle(bundle)
    assert prepared.bundle.messages[1].text == "Done."
    assert prepared.bundle.messages[0].text == "Please explain <thinking> tags in XML"
    assert prepared.reasoning_removed == 1


def test_secrets_are_redacted_everywhere_and_counted_per_source() -> None:
    key = "sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty"
    bundle = with_message_text(conversation_bundle(), 1, f"I found {key} in .env")
    call = dataclasses.replace(
        bundle.tool_calls[0],
        arguments={"command": f"curl -H 'Authorization: Bearer {key}' https://x"},
        result_text=f"OPENAI_API_KEY={key}",
        attributes={"stdout": key},
    )
    prepared = prepare_bundle(dataclasses.replace(bundle, tool_calls=(call,)))
    text_of_everything = repr(prepared.bundle)
    assert key not in text_of_everything
    by_id = {s.source_id: s.redactions for s in prepared.sources}
    assert by_id["test:conv-1:m1"] == 1
    assert by_id["test:conv-1:call-1"] == 3
    assert prepared.redactions == 4


def test_long_tool_output_keeps_head_and_tail_and_records_the_original_size() -> None:
    output = "start\n" + "x" * 200_000 + "\n3 failed, 10 passed"
    prepared = prepare_bundle(
        _with_result(conversation_bundle(), output), Limits(max_tool_output_chars=10_000)
    )
    call = prepared.bundle.tool_calls[0]
    assert call.result_text is not None
    assert len(call.result_text) < 10_100
    assert call.result_text.startswith("start")
    assert call.result_text.endswith("3 failed, 10 passed")
    assert call.result_size == len(output)
    assert prepared.truncated == 1


def test_inline_base64_images_become_placeholders() -> None:
    blob = "iVBORw0KGgo" + "A" * 4000
    prepared = prepare_bundle(
        _with_result(conversation_bundle(), f"see data:image/png;base64,{blob} end")
    )
    result = prepared.bundle.tool_calls[0].result_text
    assert result is not None
    assert blob not in result
    assert "[image/png data, 3008 bytes]" in result


def test_fingerprints_are_stable_and_follow_semantic_fields_only() -> None:
    first = {s.source_id: s.fingerprint for s in prepare_bundle(conversation_bundle()).sources}
    again = {s.source_id: s.fingerprint for s in prepare_bundle(conversation_bundle()).sources}
    assert first == again
    edited = prepare_bundle(with_message_text(conversation_bundle(), 1, "other text"))
    changed = {s.source_id for s in edited.sources if s.fingerprint != first[s.source_id]}
    assert changed == {"test:conv-1:m1"}
    metadata_only = prepare_bundle(with_tool_attributes(conversation_bundle(), durationMs=1))
    assert {s.source_id: s.fingerprint for s in metadata_only.sources} == first
    assert {s.content_hash for s in metadata_only.sources} != {
        s.content_hash for s in prepare_bundle(conversation_bundle()).sources
    }


def test_unicode_normalisation_and_trailing_space_do_not_change_a_fingerprint() -> None:
    composed = with_message_text(conversation_bundle(), 1, "café")
    decomposed = with_message_text(conversation_bundle(), 1, "cafe\u0301   \n")
    fp = [
        next(s.fingerprint for s in prepare_bundle(b).sources if s.source_id == "test:conv-1:m1")
        for b in (composed, decomposed)
    ]
    assert fp[0] == fp[1]


def test_a_changed_time_or_role_is_a_new_version() -> None:
    base = conversation_bundle()
    original = prepare_bundle(base).sources[1].fingerprint
    message = base.messages[1]
    for changed in (
        dataclasses.replace(message, role="user"),
        dataclasses.replace(message, created_at=None),
    ):
        bundle = dataclasses.replace(base, messages=(base.messages[0], changed, *base.messages[2:]))
        assert prepare_bundle(bundle).sources[1].fingerprint != original


def test_a_message_is_never_lost_when_its_text_is_huge() -> None:
    text = "y" * 1_000_000
    bundle = dataclasses.replace(
        conversation_bundle(),
        messages=(Message(source_id="m", role="user", kind="prompt", text=text),),
    )
    prepared = prepare_bundle(bundle, Limits(max_message_chars=50_000))
    message = prepared.bundle.messages[0]
    assert len(message.text) < 50_100
    assert message.attributes["original_chars"] == 1_000_000
