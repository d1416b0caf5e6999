"""Which conversation each span belongs to.

A conversation is keyed by ``gen_ai.conversation.id`` (or OpenInference ``session.id``)
and otherwise by its trace id. Spans that name no conversation take the key of their
nearest ancestor that does; when a trace names exactly one conversation, every span of
the trace belongs to it (agents often set the id on model calls but not on tool spans).

Sub-agents: an ``invoke_agent`` span whose agent differs from the nearest agent span
above it starts a sub-agent scope; everything below it, down to the next such span,
is the sub-agent's conversation, a child of the scope its agent span was started from.

Traces without any GenAI or OpenInference data form no scope at all, so a generic
trace export imports as nothing rather than as empty conversations.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise

from proctor.sources.otel._operations import SpanNode

SpanRef = tuple[str, str]
"""``(trace_id, span_id)``."""

ScopeKey = tuple[str, SpanRef | None]
"""``(conversation key, span starting the sub-agent scope or None for the main scope)``."""

_LATEST = datetime.max.replace(tzinfo=UTC)


def ref_of(node: SpanNode) -> SpanRef:
    """The node's ``(trace_id, span_id)``."""
    return node.trace_id, node.span_id


@dataclass(slots=True)
class Scope:
    """The spans of one conversation: a main conversation or one sub-agent run."""

    key: ScopeKey
    nodes: list[SpanNode] = field(default_factory=list)
    parent: ScopeKey | None = None
    agent_span: SpanNode | None = None
    """The ``invoke_agent`` span that started this sub-agent scope."""
    spawning_tool_span: SpanNode | None = None
    """The parent's tool span the sub-agent ran under, when there is one."""
    task_span: dict[SpanRef, SpanRef] = field(default_factory=dict)
    """For each span, the agent span whose run it belongs to (its task)."""

    @property
    def conversation_key(self) -> str:
        """The conversation key shared by the scope's spans."""
        return self.key[0]

    @property
    def started_at(self) -> datetime:
        """Earliest start of any span (for ordering scopes)."""
        return min((n.started_at for n in self.nodes if n.started_at), default=_LATEST)


class SpanForest:
    """Spans of one file as trees, with memoised ancestor walks."""

    def __init__(self, nodes: Iterable[SpanNode]) -> None:
        self.nodes = list(nodes)
        self._by_ref = {ref_of(node): node for node in self.nodes}
        self._keys: dict[SpanRef, str] = {}
        keys_by_trace: dict[str, set[str]] = {}
        for node in self.nodes:
            if node.conversation_key is not None:
                keys_by_trace.setdefault(node.trace_id, set()).add(node.conversation_key)
        self._trace_key = {
            trace: next(iter(keys)) for trace, keys in keys_by_trace.items() if len(keys) == 1
        }

    def parent(self, node: SpanNode) -> SpanNode | None:
        """The node's parent span, when it is in the file."""
        if node.parent_span_id is None:
            return None
        return self._by_ref.get((node.trace_id, node.parent_span_id))

    def ancestors(self, node: SpanNode) -> list[SpanNode]:
        """Parent, grandparent, … (a cycle in bad data ends the walk)."""
        found: list[SpanNode] = []
        seen = {ref_of(node)}
        current = self.parent(node)
        while current is not None and ref_of(current) not in seen:
            found.append(current)
            seen.add(ref_of(current))
            current = self.parent(current)
        return found

    def conversation_key(self, node: SpanNode) -> str:
        """The node's own key, its nearest ancestor's, the trace's only one, or the trace id."""
        cached = self._keys.get(ref_of(node))
        if cached is not None:
            return cached
        key = node.conversation_key
        if key is None:
            key = next(
                (a.conversation_key for a in self.ancestors(node) if a.conversation_key), None
            )
        if key is None:
            key = self._trace_key.get(node.trace_id, node.trace_id)
        self._keys[ref_of(node)] = key
        return key

    def sub_agent_start(self, node: SpanNode) -> SpanNode | None:
        """The agent span that starts the sub-agent scope ``node`` runs in; None for main."""
        agents = [n for n in (node, *self.ancestors(node)) if n.agent is not None]
        for inner, outer in pairwise(agents):
            assert inner.agent is not None and outer.agent is not None
            if not inner.agent.same_agent(outer.agent):
                return inner
        return None

    def nearest_agent(self, node: SpanNode) -> SpanNode | None:
        """The closest agent span at or above ``node``."""
        return next((n for n in (node, *self.ancestors(node)) if n.agent is not None), None)

    def scope_key(self, node: SpanNode) -> ScopeKey:
        """The scope ``node`` belongs to."""
        start = self.sub_agent_start(node)
        if start is None:
            return self.conversation_key(node), None
        return self.conversation_key(start), ref_of(start)


def assign_scopes(nodes: Iterable[SpanNode]) -> list[Scope]:
    """Group spans into conversation scopes.

    Args:
        nodes: Every span of one file (and the log events joined to them).

    Returns:
        Scopes holding GenAI data, main conversations before their sub-agents.
    """
    forest = SpanForest(nodes)
    scopes: dict[ScopeKey, Scope] = {}
    for node in forest.nodes:
        key = forest.scope_key(node)
        scope = scopes.get(key)
        if scope is None:
            scope = scopes[key] = Scope(key)
        scope.nodes.append(node)
        agent = forest.nearest_agent(node)
        if agent is not None:
            scope.task_span[ref_of(node)] = ref_of(agent)
        if key[1] == ref_of(node):
            _link_to_parent(forest, scope, node)
    kept = [s for s in scopes.values() if any(n.genai for n in s.nodes)]
    return _parents_first(kept)


def _link_to_parent(forest: SpanForest, scope: Scope, agent_span: SpanNode) -> None:
    scope.agent_span = agent_span
    parent = forest.parent(agent_span)
    if parent is None:
        return
    scope.parent = forest.scope_key(parent)
    for ancestor in (parent, *forest.ancestors(parent)):
        if ancestor.agent is not None:
            break
        if ancestor.tool is not None:
            scope.spawning_tool_span = ancestor
            break


def _parents_first(scopes: list[Scope]) -> list[Scope]:
    by_key = {scope.key: scope for scope in scopes}

    def depth(scope: Scope) -> int:
        level, parent, seen = 0, scope.parent, {scope.key}
        while parent is not None and parent in by_key and parent not in seen:
            seen.add(parent)
            level, parent = level + 1, by_key[parent].parent
        return level

    return sorted(scopes, key=lambda s: (depth(s), s.started_at, s.key[0], s.key[1] or ("", "")))
