"""Chains of link records (progress lines) in a file whose uuids are all distinct are
folded without a lookup per record (``_threading._depth_first_folding``): the walk must
still build every such session as the reference walk that folds nothing.

The generated sessions are trees of distinct uuids, each record's parent drawn from the
records before it (or none, or one not in the file), so progress lines form chains,
fan-outs and dead ends below content records and below each other, as in real logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sources.fixtures.claude_code.records import (
    progress,
    prompt,
    reply,
    text,
    tool_result,
    tool_use,
    write_session,
)
from tests.sources.helpers import read
from tests.sources.test_claude_code_link_folding import (
    _both,
    assert_builds_as_reference,
    generated_record,
)


@st.composite
def _distinct_trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 40))
    records: list[dict[str, Any]] = []
    for index in range(count):
        key = f"k{index}"
        choice = draw(st.integers(0, 9))
        if index == 0 or choice == 0:
            parent = None
        elif choice == 1:
            parent = "gone"  # not in the file
        elif choice <= 6:
            parent = f"k{index - 1}"  # the record just before: a chain
        else:
            parent = f"k{draw(st.integers(0, index - 1))}"
        second = draw(st.integers(0, 5))
        kind = draw(st.sampled_from(["progress"] * 5 + ["prompt", "reply", "result"]))
        records.append(generated_record(kind, key, parent, index, second, replies=5))
    return records


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=_distinct_trees(), external=st.booleans())
def test_chains_of_links_with_distinct_uuids_build_as_the_reference_walk(
    records: list[dict[str, Any]], external: bool, tmp_path: Path
) -> None:
    assert_builds_as_reference(records, tmp_path, external=external)


def test_a_long_progress_chain_between_a_call_and_its_result(tmp_path: Path) -> None:
    chain = [progress(f"p{i}", f"p{i - 1}" if i else "a1", 2 + i) for i in range(30)]
    records = [
        prompt("u1", None, "Run it", 0),
        reply("a1", "u1", "msg_1", [tool_use("toolu_1", "Bash", command="make")], 1),
        *chain,
        tool_result("r1", "p29", "toolu_1", "made", 40),
        # A dead-end chain beside it, as hook progress lines hang off a reply.
        progress("h1", "a1", 41),
        progress("h2", "h1", 42),
        reply("a2", "r1", "msg_2", [text("Done")], 43),
    ]
    path = write_session(tmp_path / "s.jsonl", list(records))
    (bundle,) = read(path).bundles
    assert [m.source_id for m in bundle.messages] == ["cc:u1", "cc:msg:msg_1", "cc:msg:msg_2"]
    assert bundle.messages[2].parent_source_id == "cc:msg:msg_1"
    (call,) = bundle.tool_calls
    assert (call.status, call.result_text) == ("ok", "made")
    for folded, reference in _both(path):
        assert folded == reference
