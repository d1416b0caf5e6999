"""The read-only story-graph tools an agent may call (SPEC UI-4), as plain functions.

Each tool takes the store and the bound conversation and returns JSON-ready data; a
mistake the agent can fix raises ``ToolRefusal`` with a sentence saying what to do. The
server (``_server.py``) only wires these to the MCP protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from proctor.errors import ProctorError
from proctor.graph.views import GraphView, ResultSummary
from proctor.store import SqlStore

GRAPH_LIMIT_MAX = 200
SEARCH_LIMIT_MAX = 20
TRACE_MESSAGES = 20
TRACE_MAX_CHARS = 20_000
MESSAGE_CLIP = 1_500


class ToolRefusal(ProctorError):
    """A tool call the server will not answer; the message says what to do instead."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, what it is for, its JSON Schema input, and its function."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    run: Callable[[SqlStore, str, Mapping[str, Any]], Any]


def gate_refusal(store: SqlStore, conversation_id: str) -> str | None:
    """Why the tools are closed right now, or None when both switches are on."""
    from proctor.heartbeat import app_enabled

    if not app_enabled(store):
        return (
            "The Proctor supervisor app is disabled; a person can turn it on with "
            "`proctor app enable`."
        )
    if not store.graph_access(conversation_id):
        return (
            f"Story-graph access is off for conversation {conversation_id}; a person can turn "
            f"it on with `proctor conversations graph-access on {conversation_id}`."
        )
    return None


def _project(store: SqlStore, conversation_id: str) -> str:
    return store.conversation(conversation_id).project


def _limit(arguments: Mapping[str, Any], name: str, default: int, maximum: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolRefusal(f"`{name}` must be a whole number from 1 to {maximum}.")
    return min(value, maximum)


def _text(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolRefusal(f"`{name}` must be a string.")
    return value


def _result_json(result: ResultSummary) -> dict[str, Any]:
    return {
        "result_id": result.result_id,
        "scope": result.scope_label,
        "scope_key": result.scope_key,
        "time_from": result.time_from,
        "time_to": result.time_to,
        "trigger": result.trigger,
        "summary": result.summary,
        "change_digest": result.change_digest,
        "complete": result.complete,
        "created_at": result.created_at,
    }


_GLOBAL_ALLOWANCE = 50
"""Extra rows read past the limit, so global results filtered out do not shorten it."""


def overview(store: SqlStore, conversation_id: str, arguments: Mapping[str, Any]) -> Any:
    """Published reviews of the bound conversation's project, newest first."""
    project = _project(store, conversation_id)
    limit = _limit(arguments, "limit", 10, 50)
    return {
        "project": project,
        "results": [_result_json(result) for result in _project_results(store, project, limit)],
    }


def _project_results(store: SqlStore, project: str, limit: int) -> list[ResultSummary]:
    """The project's own results. Global results cover every project: an agent bound to
    one project must not read another's facts through them."""
    found = store.overview(project, limit + _GLOBAL_ALLOWANCE)
    return [result for result in found if not result.is_global][:limit]


def _refs(sources: Any) -> list[dict[str, str]]:
    return [{"source_type": ref.source_type, "source_id": ref.source_id} for ref in sources]


def _view_json(view: GraphView) -> dict[str, Any]:
    return {
        "result": _result_json(view.result),
        "story_line_id": view.story_line_id,
        "events": [
            {
                "event_id": e.event_id,
                "kind": e.kind,
                "title": e.title,
                "summary": e.summary,
                "occurred_at": e.occurred_at,
                "outcome": e.outcome,
                "conversation_id": e.conversation_id,
                "entity_ids": list(e.entity_ids),
                "sources": _refs(e.sources),
            }
            for e in view.events
        ],
        "entities": [
            {
                "entity_id": e.entity_id,
                "kind": e.kind,
                "name": e.name,
                "description": e.description,
                "state": e.state,
                "sources": _refs(e.sources),
            }
            for e in view.entities
        ],
        "relations": [
            {
                "relation_id": r.relation_id,
                "from_entity_id": r.from_entity_id,
                "to_entity_id": r.to_entity_id,
                "type": r.type,
                "reason": r.reason,
                "state": r.state,
                "sources": _refs(r.sources),
            }
            for r in view.relations
        ],
        "open_items": [
            {
                "key": o.key,
                "title": o.title,
                "detail": o.detail,
                "status": o.status,
                "sources": _refs(o.sources),
            }
            for o in view.open_items
        ],
        "totals": dataclasses.asdict(view.totals),
        "truncated": view.truncated,
    }


def graph(store: SqlStore, conversation_id: str, arguments: Mapping[str, Any]) -> Any:
    """What one result of the project published (the newest by default), bounded."""
    project = _project(store, conversation_id)
    limit = _limit(arguments, "limit", 50, GRAPH_LIMIT_MAX)
    ref = _text(arguments, "result_id")
    if ref is None:
        newest = _project_results(store, project, 1)
        if not newest:
            raise ToolRefusal(
                f"Project {project!r} has no published review of its own yet; a person can "
                f"run `proctor review run --project {project}` to publish one."
            )
        result_id = newest[0].result_id
    else:
        result_id = store.resolve_result_id(ref)
        chosen = store.result(result_id)
        if chosen.is_global or chosen.project_name != project:
            raise ToolRefusal(
                f"Result {ref} is not a result of project {project!r}; call `overview` for "
                "this project's results."
            )
    view = store.graph(result_id, _text(arguments, "story_line_id"), limit=limit)
    return _view_json(view)


def stories(store: SqlStore, conversation_id: str, arguments: Mapping[str, Any]) -> Any:
    """Story lines of the project, most recently updated first."""
    project = _project(store, conversation_id)
    limit = _limit(arguments, "limit", 50, GRAPH_LIMIT_MAX)
    lines = store.stories(project)
    return {
        "project": project,
        "stories": [
            {
                "story_line_id": s.story_line_id,
                "parent_id": s.parent_id,
                "title": s.title,
                "summary": s.summary,
                "first_at": s.first_at,
                "last_at": s.last_at,
                "event_count": s.event_count,
            }
            for s in lines[:limit]
        ],
        "more": max(0, len(lines) - limit),
    }


def search(store: SqlStore, conversation_id: str, arguments: Mapping[str, Any]) -> Any:
    """Hybrid (or full-text) search over the project's sources and graph objects."""
    from proctor.search import search as run_search

    query = _text(arguments, "query")
    if query is None:
        raise ToolRefusal("`query` is required: a few words or a question.")
    limit = _limit(arguments, "limit", 10, SEARCH_LIMIT_MAX)
    # "auto" falls back to full text (and says so in ``note``) when embeddings are missing.
    found = run_search(store, query, project=_project(store, conversation_id), limit=limit)
    return found.as_json()


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _trace_of(store: SqlStore, conversation_id: str) -> dict[str, Any]:
    transcript = store.transcript(conversation_id)
    run = transcript.subagent_run
    header: dict[str, Any] = {
        "conversation_id": conversation_id,
        "title": transcript.summary.conversation.title,
        "kind": transcript.summary.conversation.kind,
        "parent_conversation_id": transcript.summary.conversation.parent_conversation_id,
        "messages_total": len(transcript.messages),
    }
    if run is not None:
        header |= {
            "agent_type": run.agent_type,
            "description": _clip(run.description or "", 500),
            "summary": _clip(run.summary or "", 4_000),
            "status": run.status,
            "rounds": run.rounds,
            "total_tokens": run.total_tokens,
            "tool_uses": run.tool_uses,
            "rejected_tools": list(run.rejected_tools),
            "stop_kind": run.stop_kind,
            "duration_ms": run.duration_ms,
        }
    tail = [
        {
            "source_id": m.source_id,
            "role": m.role,
            "kind": m.kind,
            "created_at": m.created_at.isoformat() if m.created_at else None,
            "text": _clip(m.text, MESSAGE_CLIP),
        }
        for m in transcript.messages[-TRACE_MESSAGES:]
    ]
    # Drop the oldest of the shown messages until the whole answer fits the size cap.
    budget = TRACE_MAX_CHARS - len(_encode(header)) - 200
    while tail and len(_encode(tail)) > budget:
        tail.pop(0)
    header["messages"] = tail
    header["messages_shown"] = len(tail)
    return header


def _encode(value: Any) -> str:
    from proctor.mcp._json import dumps

    return dumps(value)


def subagent_trace(store: SqlStore, conversation_id: str, arguments: Mapping[str, Any]) -> Any:
    """How a sub-agent ran and its last messages, or the bound conversation's sub-agents."""
    ref = _text(arguments, "conversation_id")
    if ref is None:
        transcript = store.transcript(conversation_id)
        if transcript.subagent_run is not None or not transcript.children:
            return _trace_of(store, conversation_id)
        return {
            "conversation_id": conversation_id,
            "subagents": [
                {
                    "conversation_id": child.conversation_id,
                    "title": child.conversation.title,
                    "messages": child.messages,
                }
                for child in transcript.children[:50]
            ],
            "more": max(0, len(transcript.children) - 50),
            "hint": "Call subagent_trace with one of these conversation_id values.",
        }
    target = store.resolve_conversation_id(ref)
    if _project(store, target) != _project(store, conversation_id):
        raise ToolRefusal(
            f"Conversation {ref} belongs to another project; this server answers only for "
            "the project of its bound conversation."
        )
    return _trace_of(store, target)


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required or [],
        "additionalProperties": False,
    }


def _int(description: str, maximum: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": maximum, "description": description}


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "overview",
        "Published story-graph reviews of this project, newest first: summary, time span, "
        "what changed.",
        _schema({"limit": _int("How many results (default 10).", 50)}),
        overview,
    ),
    ToolSpec(
        "graph",
        "Events, entities, relations and open items one review published (the newest by "
        "default), each with the source ids that support it.",
        _schema(
            {
                "result_id": {"type": "string", "description": "A result id or prefix."},
                "story_line_id": {"type": "string", "description": "Only this story line."},
                "limit": _int("At most this many events (default 50).", GRAPH_LIMIT_MAX),
            }
        ),
        graph,
    ),
    ToolSpec(
        "stories",
        "Story lines (threads of events) of this project, most recently updated first.",
        _schema({"limit": _int("How many story lines (default 50).", GRAPH_LIMIT_MAX)}),
        stories,
    ),
    ToolSpec(
        "search",
        "Search this project's messages, tool calls and graph objects; hits carry source ids.",
        _schema(
            {
                "query": {"type": "string", "description": "Words or a question."},
                "limit": _int("How many hits (default 10).", SEARCH_LIMIT_MAX),
            },
            ["query"],
        ),
        search,
    ),
    ToolSpec(
        "subagent_trace",
        "How a sub-agent ran (summary, status, rounds, tokens, rejected tools, stop kind) "
        "and its last messages, at most 20; without an id, the sub-agents of this "
        "conversation.",
        _schema(
            {
                "conversation_id": {
                    "type": "string",
                    "description": "A sub-agent conversation id or prefix.",
                }
            }
        ),
        subagent_trace,
    ),
)
"""Every tool, in the order ``list_tools`` offers them."""
