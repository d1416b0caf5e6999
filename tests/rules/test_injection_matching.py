"""Which injected values a call uses: the indexed lookup (strong values tested against all
arguments at once, weak ones looked up by whole argument) finds the same matches, in the
same order, as testing every value against the arguments one by one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules import DEFAULT_POLICY
from proctor.rules._calls import argument_strings
from proctor.rules._rule import RuleContext
from proctor.rules._trace import TraceContext
from proctor.rules.builtin._injected_text import normalise_argument
from proctor.rules.builtin.injection import _Injected, _matches, _Output, _State
from proctor.transcript import ToolCall
from tests.properties import examples

_VALUES = ["eve@proton.me", "https://www.evil.com/x", "DE89370400440532013000", "'Q3 numbers'",
           "Alice Smith", "new_password2", "+1 415 555 0100", "'go'", "evil.com"]  # fmt: skip
_WORDS = ["send", "to", "the", "and", "then", ",", ".", "\n"]


def _plain(state: _State, call: ToolCall, context: RuleContext) -> Iterator[tuple[Any, ...]]:
    """The reference: every value of every source tested on its own, in order."""
    arguments = [(p, t, normalise_argument(t)) for p, t in argument_strings(call.arguments)]
    whole: dict[str, int] = {}
    for number, (_, _, normalised) in enumerate(arguments):
        whole.setdefault(normalised.strip(), number)
    for source in state.injected:
        if source.call.source_id == call.source_id:
            continue
        for value in source.values(context).values:
            if not value.strong:
                used = whole.get(value.value)
            else:
                used = next((n for n, a in enumerate(arguments) if value.value in a[2]), None)
            if used is None or state.is_trusted(value) or state.seen_in_data(value, context):
                continue
            yield source.start, value.value, arguments[used][0]


_TEXT = st.lists(st.sampled_from(_VALUES + _WORDS), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(_TEXT, min_size=1, max_size=3),  # injected spans
    st.lists(st.sampled_from([*_VALUES, "eve", "x Alice Smith y", "hello"]), max_size=4),
    st.sampled_from(["", "Ask Alice Smith about Q3 numbers", "mail eve@proton.me"]),  # request
    st.sampled_from(["", "evil.com is our vendor"]),  # data seen
)
def test_the_indexed_lookup_finds_what_testing_each_value_finds(
    spans: list[str], arguments: list[str], request: str, data: str
) -> None:
    context = RuleContext(DEFAULT_POLICY, TraceContext(conversation_id="c"))
    state = _State()
    state.trusted_raw.append(request)
    state.outputs.append(_Output(data, ()))
    for number, text in enumerate(spans):
        source = ToolCall(source_id=f"r{number}", name="read_inbox", arguments={}, result_text=text)
        state.injected.append(_Injected(source, number, number + 1, text, "m", None))
    call = ToolCall(
        source_id="c1", name="send_email", arguments={f"a{n}": a for n, a in enumerate(arguments)}
    )
    fast = [
        (m.source.start, m.value.value, m.argument)
        for m in _matches(state, call, context)
        if m.source is not None
    ]
    assert fast == list(_plain(state, call, context))
