"""``fit_bundle`` keeps a message or tool call that already fits as it is (its quick
test), and fits every other one field by field exactly as the ``fit_*`` functions do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources._fit import (
    MAX_ID_CHARS,
    NAME_CHARS,
    fit_bundle,
    fit_id,
    fit_label,
    fit_optional_count,
    fit_optional_id,
    fit_optional_label,
    fit_time,
)
from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall, Usage
from tests.properties import examples

_IDS = st.one_of(
    st.text(max_size=8),
    st.text(alphabet="ab\x00é\ud800", max_size=6),
    st.integers(MAX_ID_CHARS - 2, MAX_ID_CHARS + 2).map(lambda n: "x" * n),
)
_LABELS = st.one_of(_IDS, st.integers(NAME_CHARS - 1, NAME_CHARS + 1).map(lambda n: "m" * n))
_TIMES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
            datetime(2026, 1, 2, 3, 4, 5),
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        ]
    ),
)
_COUNTS = st.one_of(st.none(), st.integers(-(2**40), 2**40))


def _bundle(message: Message, call: ToolCall) -> ConversationBundle:
    return ConversationBundle(
        Conversation("c1", "test", "c1"), messages=(message,), tool_calls=(call,)
    )


def test_a_message_and_a_call_that_fit_are_kept() -> None:
    when = datetime(2026, 1, 2, tzinfo=UTC)
    message = Message("m1", "assistant", "reply", "hi", when, "m0", model="opus", usage=Usage(1))
    call = ToolCall("t1", "Bash", {}, "toolu_1", "m1", result_size=3, exit_code=0, created_at=when)
    fitted = fit_bundle(_bundle(message, call))
    assert fitted.messages[0] is message
    assert fitted.tool_calls[0] is call


@settings(max_examples=examples(400), deadline=None)
@given(
    ids=st.tuples(_IDS, st.one_of(st.none(), _IDS), _IDS, st.one_of(st.none(), _IDS)),
    labels=st.tuples(st.one_of(st.none(), _LABELS), st.one_of(st.none(), _LABELS), _LABELS),
    times=st.tuples(_TIMES, _TIMES),
    counts=st.tuples(_COUNTS, _COUNTS, _COUNTS),
)
def test_every_field_is_fitted_as_the_fit_functions_fit_it(
    ids: tuple[str, str | None, str, str | None],
    labels: tuple[str | None, str | None, str],
    times: tuple[datetime | None, datetime | None],
    counts: tuple[int | None, int | None, int | None],
) -> None:
    source_id, parent, call_source, call_id = ids
    author, model, name = labels
    created, completed = times
    size, exit_code, tokens = counts
    usage = None if tokens is None else Usage(tokens)
    message = Message(
        source_id, "user", "prompt", "t", created, parent, author=author, model=model, usage=usage
    )
    call = ToolCall(
        call_source,
        name,
        {},
        call_id,
        parent,
        result_size=size,
        exit_code=exit_code,
        created_at=created,
        completed_at=completed,
    )
    fitted = fit_bundle(_bundle(message, call))
    got = fitted.messages[0]
    assert (got.source_id, got.parent_source_id, got.author, got.model, got.created_at) == (
        fit_id(source_id),
        fit_optional_id(parent),
        fit_optional_label(author, NAME_CHARS),
        fit_optional_label(model, NAME_CHARS),
        fit_time(created),
    )
    assert got.usage == (None if tokens is None else Usage(fit_optional_count(tokens) or 0))
    made = fitted.tool_calls[0]
    assert (
        made.source_id,
        made.name,
        made.call_id,
        made.message_source_id,
        made.result_size,
        made.exit_code,
        made.created_at,
        made.completed_at,
    ) == (
        fit_id(call_source),
        fit_label(name, NAME_CHARS),
        fit_optional_id(call_id),
        fit_optional_id(parent),
        fit_optional_count(size),
        fit_optional_count(exit_code),
        fit_time(created),
        fit_time(completed),
    )
    assert fit_bundle(fitted) == fitted  # idempotent
