"""The episodes of a graph as the API returns it, read the way the story graph page reads
them: an episode's sub-thread is a story line under a conversation's line that holds
exactly one ``episode`` event (shared by the story graph's browser tests)."""

from __future__ import annotations

from typing import Any


def episodes_of(graph: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """Episode id → (its sub-thread's id, its work's event ids)."""
    kinds = {e["event_id"]: e["kind"] for e in graph["events"]}
    found: dict[str, tuple[str, list[str]]] = {}
    for line in graph["story_lines"]:
        heads = [i for i in line["event_ids"] if kinds.get(i) == "episode"]
        if line["parent_id"] and len(heads) == 1:
            work = [i for i in line["event_ids"] if i != heads[0] and i in kinds]
            found[heads[0]] = (line["story_line_id"], work)
    return found
