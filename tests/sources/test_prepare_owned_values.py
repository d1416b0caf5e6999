"""The import path's preparation (``prepare_imported_bundle``) keeps the tool arguments it
parsed itself instead of copying them, and stores exactly what ``prepare_bundle`` stores;
``prepare_bundle`` still copies a caller's value. Redaction's quick test on serialised
(ASCII) bytes agrees with its test on the text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import _ALL_ANCHORS, Redactor
from proctor.sources import (
    parse_json,
    plan_import,
    prepare_bundle,
    prepare_imported_bundle,
    read_unit,
)
from proctor.sources._prepare import Limits, _Sanitizer
from proctor.sources._registry import default_adapters
from proctor.store import conversation_rows
from proctor.transcript import Conversation, ConversationBundle, SourceIssue, ToolCall
from tests.properties import examples
from tests.sources.json_values import TEXT as _TEXT
from tests.sources.json_values import VALUES as _VALUES


def _parsed(value: Any) -> Any:
    """``value`` as an adapter has it: written as JSON text, read by Proctor's parser."""
    return parse_json(json.dumps(value).encode("utf-8", "surrogatepass"))


def _stored(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


@settings(max_examples=examples(400), deadline=None)
@given(value=st.one_of(st.lists(_VALUES, min_size=1), st.dictionaries(_TEXT, _VALUES, min_size=1)))
def test_an_owned_value_is_stored_as_a_shared_one_is(value: Any) -> None:
    for limit in (64, 4_096):
        owned, shared = _Sanitizer(Limits()), _Sanitizer(Limits())
        kept = owned.owned_value(_parsed(value), limit)
        copied = shared.value(_parsed(value), limit)
        assert _stored(kept) == _stored(copied)
        assert owned.redactor.counts == shared.redactor.counts


def test_an_owned_plain_value_is_kept_not_copied() -> None:
    value = _parsed({"command": "ls -la", "nested": {"list": [1, 2.5, True]}})
    assert _Sanitizer(Limits()).owned_value(value, 4_096) is value


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": NaN}',  # written as null: compared, then walked
        b'{"a": [Infinity, null]}',
        b'{"a": 123456789012345678901234}',  # past 64 bits: walked
        b'{"command": "echo sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty"}',
        b'{"path": "x "}',
    ],
)
def test_an_owned_value_that_changes_is_not_kept(text: bytes) -> None:
    value = parse_json(text)
    owned, shared = _Sanitizer(Limits()), _Sanitizer(Limits())
    kept = owned.owned_value(value, 4_096)
    assert kept is not value
    assert _stored(kept) == _stored(shared.value(parse_json(text), 4_096))
    assert owned.redactor.counts == shared.redactor.counts


def test_only_the_import_keeps_tool_arguments() -> None:
    arguments = _parsed({"command": "ls -la"})
    call = ToolCall(source_id="t1", name="Bash", arguments=arguments)
    bundle = ConversationBundle(Conversation("c1", "test", "c1"), tool_calls=(call,))
    imported = prepare_imported_bundle(bundle)
    public = prepare_bundle(bundle)
    assert imported.bundle.tool_calls[0].arguments is arguments
    assert public.bundle.tool_calls[0].arguments is not arguments
    assert imported == public


@pytest.mark.shared
def test_the_import_prepares_every_shared_transcript_as_prepare_bundle_does(
    transcripts_dir: Path,
) -> None:
    plan = plan_import([transcripts_dir], default_adapters())
    bundles = 0
    for adapter, unit in plan.units:
        for item in read_unit(adapter, unit):
            if isinstance(item, SourceIssue):
                continue
            bundles += 1
            assert conversation_rows(prepare_imported_bundle(item)) == conversation_rows(
                prepare_bundle(item)
            ), item.conversation_id
    assert bundles > 10


_ANCHOR_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_ALL_ANCHORS).flatmap(
            lambda anchor: st.sampled_from([anchor, anchor.upper(), anchor.title()])
        ),
        st.text(alphabet=st.characters(max_codepoint=127), max_size=6),
    ),
    max_size=5,
).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(text=_ANCHOR_TEXT)
def test_the_quick_test_on_ascii_bytes_agrees_with_the_test_on_text(text: str) -> None:
    assert Redactor.may_find_in_ascii(text.encode()) == Redactor.may_find(text)
