"""The read-only story-graph tools an agent may call (SPEC UI-4), as plain functions.

Each tool takes the bound context (store, conversation, search indexer) and its arguments
and returns JSON-ready data; a mistake the agent can fix raises ``ToolRefusal`` with a
sentence saying what to do. Arguments are checked against the tool's input schema first:
one it does not declare, a wrong type or a limit out of range is refused, never ignored
or clamped. Ids and prefixes an agent gives are resolved among its project's own
conversations and the results covering it (its own and global ones, which are narrowed
to the project's facts), so no answer names or hints at another project's facts.
The server (``_server.py``) only wires these to the MCP protocol.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from proctor.errors import ProctorError
from proctor.graph.views import GraphView, ResultSummary
from proctor.mcp._scope import answered_from, covering_results, narrowed, project_id_of
from proctor.search import CATCH_UP_SECONDS, BackgroundIndexer
from proctor.store import ReadStore

GRAPH_LIMIT_MAX = 200
SEARCH_LIMIT_MAX = 20
QUERY_MAX_CHARS = 2_000
TRACE_MESSAGES = 20
TRACE_MAX_CHARS = 20_000
MESSAGE_CLIP = 1_500
_PAGE = 500
"""Conversations or results read per page when an id prefix is resolved in the project."""


class ToolRefusal(ProctorError):
    """A tool call the server will not answer; the message says what to do instead."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What every tool call is bound to."""

    store: ReadStore
    conversation_id: str
    """The conversation the server answers for; its project is the tools' whole world."""
    indexer: BackgroundIndexer | None = None
    """Keeps the search index current (None: the index is searched as it is)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, what it is for, its JSON Schema input, and its function."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    run: Callable[[ToolContext, Mapping[str, Any]], Any]


def gate_refusal(store: ReadStore, conversation_id: str) -> str | None:
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


def _project(store: ReadStore, conversation_id: str) -> str:
    return store.conversation(conversation_id).project


def check_arguments(tool: ToolSpec, arguments: Mapping[str, Any]) -> None:
    """Refuse what the tool's input schema does not allow, saying what it does.

    Undeclared arguments, wrong types and values out of range are refused with a sentence;
    nothing is dropped or clamped silently. A null or empty value means "not given".
    """
    properties: Mapping[str, Any] = tool.input_schema["properties"]
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        given = ", ".join(f"`{name[:60]}`" for name in unknown[:5])
        if len(unknown) > 5:
            given += f" and {len(unknown) - 5} more"
        allowed = ", ".join(f"`{name}`" for name in properties) or "none"
        raise ToolRefusal(
            f"{tool.name} does not take {given}; the arguments it takes are: {allowed}."
        )
    for name in tool.input_schema.get("required", []):
        if arguments.get(name) in (None, ""):
            described = properties[name].get("description", "")
            raise ToolRefusal(f"`{name}` is required: {described[:1].lower()}{described[1:]}")
    for name, value in arguments.items():
        if value is not None and value != "":
            _check_value(name, value, properties[name])


def _check_value(name: str, value: Any, spec: Mapping[str, Any]) -> None:
    if spec["type"] == "integer":
        low, high = spec["minimum"], spec["maximum"]
        if not isinstance(value, int) or isinstance(value, bool):
            raise ToolRefusal(f"`{name}` must be a whole number from {low} to {high}.")
        if value > high:
            raise ToolRefusal(
                f"`{name}` {value} is above the maximum {high}; ask for {high} or fewer."
            )
        if value < low:
            raise ToolRefusal(f"`{name}` {value} is below the minimum {low}.")
    elif spec["type"] == "string":
        if not isinstance(value, str):
            raise ToolRefusal(f"`{name}` must be a string.")
        longest = spec.get("maxLength")
        if longest is not None and len(value) > longest:
            raise ToolRefusal(
                f"`{name}` is {len(value):,} characters long; at most {longest:,} are allowed."
            )


def _limit(arguments: Mapping[str, Any], name: str, default: int) -> int:
    """A limit ``check_arguments`` has checked, or its default."""
    value = arguments.get(name)
    return default if value is None else int(value)


def _text(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None or value == "":
        return None
    return str(value)


def call_tool(context: ToolContext, name: str, arguments: Mapping[str, Any]) -> Any:
    """Check the arguments against the tool's schema, then run it."""
    tool = _BY_NAME.get(name)
    if tool is None:
        raise ToolRefusal(f"There is no tool {name!r}; the tools are {', '.join(_BY_NAME)}.")
    check_arguments(tool, arguments)
    return tool.run(context, arguments)


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


def overview(context: ToolContext, arguments: Mapping[str, Any]) -> Any:
    """Published reviews that cover the bound conversation's project: its own, newest first,
    then global ones; ``answered_from`` names the one ``graph`` answers from by default."""
    project = _project(context.store, context.conversation_id)
    limit = _limit(arguments, "limit", 10)
    results = covering_results(context.store, project, limit)
    return {
        "project": project,
        "answered_from": answered_from(results[0], project) if results else None,
        "results": [_result_json(result) for result in results],
    }


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


def graph(context: ToolContext, arguments: Mapping[str, Any]) -> Any:
    """What a result covering the project published (its own newest review, else the newest
    global one narrowed to the project's facts), bounded; ``answered_from`` says which."""
    store = context.store
    project = _project(store, context.conversation_id)
    limit = _limit(arguments, "limit", 50)
    ref = _text(arguments, "result_id")
    if ref is None:
        newest = covering_results(store, project, 1)
        if not newest:
            raise ToolRefusal(
                f"No published review covers project {project!r} yet; a person can run "
                f"`proctor review run` (or `proctor review run --project {project}`) to "
                "publish one."
            )
        result = newest[0]
    else:
        result = _covering_result(store, project, ref)
    story_line_id = _text(arguments, "story_line_id")
    if result.is_global:
        whole = store.graph(result.result_id, story_line_id, limit=None)
        view = narrowed(whole, project_id_of(store, project), limit)
    else:
        view = store.graph(result.result_id, story_line_id, limit=limit)
    return {"answered_from": answered_from(result, project)} | _view_json(view)


def _covering_result(store: ReadStore, project: str, ref: str) -> ResultSummary:
    """The result covering the project that an id or prefix names; others do not exist here."""
    matches: dict[str, ResultSummary] = {}
    offset = 0
    while True:
        page = store.overview(project, offset + _PAGE)[offset:]
        for result in page:
            if result.result_id.startswith(ref):
                matches[result.result_id] = result
        if ref in matches:
            return matches[ref]
        if len(page) < _PAGE:
            break
        offset += _PAGE
    if len(matches) == 1:
        return next(iter(matches.values()))
    if not matches:
        raise ToolRefusal(
            f"No result covering project {project!r} matches {ref!r}; call `overview` for "
            "the results this project can read."
        )
    raise ToolRefusal(
        f"{ref!r} matches {len(matches)} results covering project {project!r}; give more of "
        "the id (`overview` lists them)."
    )


def stories(context: ToolContext, arguments: Mapping[str, Any]) -> Any:
    """Story lines of the project, most recently updated first, and the newest result
    covering the project they were read alongside (``answered_from``)."""
    project = _project(context.store, context.conversation_id)
    limit = _limit(arguments, "limit", 50)
    lines = context.store.stories(project)
    newest = covering_results(context.store, project, 1)
    return {
        "project": project,
        "answered_from": answered_from(newest[0], project) if newest else None,
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


def search(context: ToolContext, arguments: Mapping[str, Any]) -> Any:
    """Hybrid (or full-text) search over the project's sources and graph objects.

    Messages stored up to the call are searchable: the background indexer's full-text pass
    catches up first (a few seconds at most). The answer's ``index`` says when the hits may
    be incomplete (``stale``): sources not indexed yet, or documents not embedded yet.
    """
    from proctor.search import search as run_search

    query = _text(arguments, "query")
    assert query is not None  # required: check_arguments refused its absence
    if context.indexer is not None:
        context.indexer.catch_up(CATCH_UP_SECONDS)
    project = _project(context.store, context.conversation_id)
    limit = _limit(arguments, "limit", 10)
    # "auto" falls back to full text (and says so in ``note``) when embeddings are missing.
    found = run_search(context.store, query, project=project, limit=limit)
    status = found.index if context.indexer is None else context.indexer.annotate(found.index)
    return found.as_json() | {"index": status.as_json()}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _trace_of(store: ReadStore, conversation_id: str) -> dict[str, Any]:
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


def subagent_trace(context: ToolContext, arguments: Mapping[str, Any]) -> Any:
    """How a sub-agent ran and its last messages, or the bound conversation's sub-agents."""
    store, conversation_id = context.store, context.conversation_id
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
    return _trace_of(store, _project_conversation_id(store, _project(store, conversation_id), ref))


def _project_conversation_id(store: ReadStore, project: str, ref: str) -> str:
    """The project's own conversation an id, external id or prefix names.

    Resolved among the project's conversations only: a conversation of another project
    is answered exactly as one that does not exist, and an ambiguous prefix lists only
    ids of this project.
    """
    exact: list[str] = []
    matches: list[str] = []
    offset = 0
    while True:
        page = store.list_conversations(
            project=project, include_children=True, limit=_PAGE, offset=offset
        )
        for row in page:
            ids = (row.conversation_id, row.conversation.external_id or "")
            if ref in ids:
                exact.append(row.conversation_id)
            elif any(value.startswith(ref) for value in ids):
                matches.append(row.conversation_id)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    found = exact or matches
    if len(found) == 1:
        return found[0]
    if not found:
        raise ToolRefusal(
            f"No conversation of project {project!r} matches {ref!r}; call subagent_trace "
            "without an id to list the bound conversation's sub-agents."
        )
    shown = ", ".join(sorted(found)[:5])
    raise ToolRefusal(
        f"{ref!r} matches {len(found)} conversations of project {project!r} ({shown}); "
        "give more of the id."
    )


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
        "Published story-graph reviews covering this project (its own newest first, then "
        "global ones): summary, time span, what changed, and which one `graph` answers from.",
        _schema({"limit": _int("How many results (default 10).", 50)}),
        overview,
    ),
    ToolSpec(
        "graph",
        "Events, entities, relations and open items one review published (by default the "
        "project's newest, else the newest global one narrowed to this project), each with "
        "the source ids that support it; `answered_from` says which review.",
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
                "query": {
                    "type": "string",
                    "description": "Words or a question.",
                    "maxLength": QUERY_MAX_CHARS,
                },
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

_BY_NAME = {tool.name: tool for tool in TOOLS}
