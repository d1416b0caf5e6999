"""The claims rule's shortcut for tools that run no command line and write no file.

``_record`` takes calls of such tools (``send_email``, ``get_balance``, ``run_tests``) from
what their name says; these tests hold that it remembers exactly what the full path would
(runs per topic, the latest run, edits, recent calls), for plain tools and others alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.rules._trace import Event
from proctor.rules.builtin import claims
from proctor.rules.builtin._call_effects import plain_tool
from proctor.transcript import ToolCall
from tests.properties import examples

_NAMES = ["send_email", "get_balance", "run_tests", "Read", "Write", "Bash", "mcp__x__pytest",
          "TerminalExecute", "read_file", "lint_code", "Edit", "search_files", "build_project"]  # fmt: skip
_ARGUMENTS = [{}, {"command": "pytest -q"}, {"command": "echo hi > out.py"},
              {"file_path": "src/a.py"}, {"recipient": "a@b.c"}, {"command": "view"}]  # fmt: skip
_RESULTS = ["ok", "2 failed, 3 passed", "all good", ""]
_STATUSES = ["ok", "error", "pending", "rejected"]


def _summary(state: Any) -> Any:
    def run(value: Any) -> Any:
        return None if value is None else (value.call.source_id, value.index, value.checked)

    return (
        sorted((topic, run(value)) for topic, value in state.runs.items()),
        run(state.last_execution),
        None if state.last_edit is None else (state.last_edit.index, state.last_edit.paths),
        [(seen.index, seen.call.source_id if seen.call else None) for seen in state.recent],
    )


def _replay(events: list[Event]) -> Any:
    state = claims._State()
    for event in events:
        claims._record(state, event)
    return _summary(state)


_CALLS = st.lists(
    st.tuples(
        st.sampled_from(_NAMES),
        st.sampled_from(_ARGUMENTS),
        st.sampled_from(_RESULTS),
        st.sampled_from(_STATUSES),
    ),
    max_size=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(_CALLS)
def test_plain_tools_leave_the_same_state_as_the_full_path(
    calls: list[tuple[str, dict[str, Any], str, str]],
) -> None:
    events: list[Event] = []
    for number, (name, arguments, result, status) in enumerate(calls):
        call = ToolCall(
            source_id=f"c{number}",
            name=name,
            arguments=arguments,
            result_text=result,
            status=status,  # type: ignore[arg-type]
        )
        events += [
            Event("call", len(events), call=call),
            Event("result", len(events) + 1, call=call),
        ]
    fast = _replay(events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claims, "plain_tool", lambda name: False)
        assert _replay(events) == fast


def test_plain_tools_are_known_by_name() -> None:
    assert plain_tool("send_email") and plain_tool("run_tests") and plain_tool("Read")
    assert not plain_tool("Bash") and not plain_tool("Write") and not plain_tool("TerminalExecute")
