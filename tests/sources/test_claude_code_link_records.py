"""A progress line's thread node is made without ``Node.__init__`` (the hot path of an
import: most lines of a session): it must be the node the rule gives through ``Node``'s
own constructor, every field set, for well-formed and damaged link fields alike."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.sources.claude_code._model import Node, ParsedFile
from proctor.sources.claude_code._records import _Collector

_VALUES = st.one_of(
    st.none(),
    st.just(""),
    st.text(max_size=4),
    st.integers(),
    st.booleans(),
    st.lists(st.integers(), max_size=1),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)
_FIELDS = ("uuid", "parentUuid", "logicalParentUuid", "agentId", "timestamp", "isSidechain")


def _node_fields(node: Node) -> dict[str, Any]:
    return {field.name: getattr(node, field.name) for field in fields(node)}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _reference(record: dict[str, Any], line: int) -> Node:
    """The node of a link record by the rule, made by ``Node``'s constructor: ids are
    non-empty strings or None; without a ``parentUuid`` a ``logicalParentUuid`` (a
    compaction) is the parent, and a record with no ``parentUuid`` field at all follows the
    record before it."""
    parent = _text(record.get("parentUuid"))
    node = Node(
        _text(record.get("uuid")),
        parent,
        line,
        record.get("timestamp"),
        record.get("isSidechain") is True,
        _text(record.get("agentId")),
    )
    if parent is None:
        logical = _text(record.get("logicalParentUuid"))
        if logical is not None:
            node.parent = logical
        elif "parentUuid" not in record:
            node.follows_previous = True
    return node


def _both(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The node ``add`` makes of ``record`` and the one the rule gives."""
    by_add = ParsedFile(Path("s.jsonl"))
    _Collector(by_add, "s.jsonl").add(record, 7)
    (added,) = by_add.nodes
    return _node_fields(added), _node_fields(_reference(record, 7))


@pytest.mark.parametrize(
    "links",
    [
        {"uuid": "p2", "parentUuid": "p1", "timestamp": "2026-01-01T00:00:00Z"},
        {"uuid": "p1", "parentUuid": None, "isSidechain": True, "agentId": "a1"},
        {"uuid": "p1", "parentUuid": None, "logicalParentUuid": "c9"},
        {"uuid": "p1"},  # no parentUuid field: follows the record before it
        {"uuid": "", "parentUuid": "", "agentId": ""},
        {"uuid": 5, "parentUuid": ["x"], "agentId": {"a": 1}, "isSidechain": "true"},
    ],
)
def test_a_progress_line_gets_the_node_of_the_rule(links: dict[str, Any]) -> None:
    record = {"type": "progress", "data": {"type": "hook_progress"}, **links}
    added, chained = _both(record)
    assert added == chained
    assert added["entry"] is None and added["time"] is None


def test_a_progress_node_keeps_its_link_fields() -> None:
    record = {
        "type": "progress",
        "uuid": "p2",
        "parentUuid": "p1",
        "timestamp": "t",
        "isSidechain": True,
        "agentId": "a1",
    }
    added, _ = _both(record)
    assert (added["key"], added["parent"], added["line"], added["raw_time"]) == (
        "p2",
        "p1",
        7,
        "t",
    )
    assert added["sidechain"] is True and added["agent_id"] == "a1"
    assert added["follows_previous"] is False


@settings(max_examples=300, deadline=None)
@given(
    links=st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=len(_FIELDS)),
)
def test_generated_progress_lines_get_the_node_of_the_rule(links: dict[str, Any]) -> None:
    record = {"type": "progress", **links}
    added, chained = _both(record)
    assert added == chained
