"""Turn one conversation's nodes into messages, tool calls and run events.

Owns the Claude Code message rules: an API response written as several lines (one per
content block, all sharing ``message.id``) is one message with its usage counted once;
user lines that only carry ``tool_result`` blocks complete tool calls instead of being
messages; each message's parent is its nearest *message* ancestor, whatever chain-only
records (progress, attachments, system lines) sit in between.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.sources.claude_code._content import classify_user_text, teammate_author
from proctor.sources.claude_code._model import Entry, Node
from proctor.sources.claude_code._pairing import OpenCall, pair_results
from proctor.sources.claude_code._threading import Placed, assign_keys, thread
from proctor.sources.claude_code._values import as_int
from proctor.transcript import Message, SourceIssue, TaskEvent, ToolCall, Usage

_SYNTHETIC_MODEL = "<synthetic>"

_FOLDED = "\0folded"
"""What the walk finds above a folded record (never a source id: they start ``cc:``)."""


@dataclass(slots=True)
class BuiltConversation:
    """The sources of one conversation, in thread order."""

    messages: list[Message] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    task_events: list[TaskEvent] = field(default_factory=list)
    issues: list[SourceIssue] = field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    model: str | None = None
    first_user_text: str | None = None
    """Text of the first user message in thread order (a sub-agent's prompt)."""


@dataclass(slots=True, eq=False)
class _Draft:
    """A message being assembled from one or more lines."""

    source_id: str
    role: str
    created_at: datetime | None
    parent_source_id: str | None
    active: bool
    texts: list[str] = field(default_factory=list)
    entry: Entry | None = None
    """The first line's entry (flags of user lines)."""
    model: str | None = None
    stop_reason: str | None = None
    usage_line: tuple[int, int] | None = None
    """(output tokens, line) of the line whose usage is kept."""
    raw_usage: dict[str, Any] | None = None


def build_conversation(
    nodes: list[Node],
    *,
    scope: str,
    shown: str,
    first_parent_is_external: bool = False,
    harness_prompts: bool = False,
    fold_links: bool = True,
) -> BuiltConversation:
    """Build the sources of the conversation made of ``nodes`` (file order).

    Args:
        nodes: The conversation's records in file order.
        scope: Stable id scope (the session id, or session and agent id) for records
            without ids of their own.
        shown: The file, for issues.
        first_parent_is_external: The first record points into another file.
        harness_prompts: User turns are written by the harness (compaction runs).
        fold_links: Leave link records (progress lines) out of the walk (see
            ``_threading``); False is the reference the folding is tested against.
    """
    built = BuiltConversation()
    keyed, issues = assign_keys(nodes, scope, shown)
    built.issues.extend(issues)
    # Records with content: the only ones that start messages or carry a time (most of a
    # session's records are progress lines, which do neither).
    content = [node for node in keyed if node.entry is not None]
    starts = _message_starts(content)
    threaded = thread(
        keyed,
        message_starts=starts,
        shown=shown,
        first_parent_is_external=first_parent_is_external,
        fold_links=fold_links,
    )
    built.issues.extend(threaded.issues)
    walker = _Walker(built, harness_prompts)
    walker.walk(threaded.placed, threaded.folded)
    built.tool_calls, issues = pair_results(walker.calls, threaded.placed, shown)
    built.issues.extend(issues)
    _set_times_and_model(built, content)
    return built


def group_key(node: Node, entry: Entry) -> str:
    """The API response a line belongs to: ``msg:<message.id>`` or the line's own key."""
    if entry.message_id is not None:
        return f"msg:{entry.message_id}"
    return node.key or ""


def _message_starts(nodes: list[Node]) -> set[str]:
    """Keys of the first line of every message (``nodes``: keyed, in file order; records
    without content may be left out)."""
    starts: set[str] = set()
    seen_groups: set[str] = set()
    visible_groups = {
        group_key(node, node.entry)
        for node in nodes
        if node.entry is not None
        and node.entry.kind == "assistant"
        and (node.entry.texts or node.entry.tool_uses)
    }
    for node in nodes:
        entry = node.entry
        if entry is None or node.key is None:
            continue
        if entry.kind == "user" and entry.texts:
            starts.add(node.key)
        elif entry.kind == "assistant":
            group = group_key(node, entry)
            if group in visible_groups and group not in seen_groups:
                starts.add(node.key)
            seen_groups.add(group)
    return starts


class _Walker:
    """Walks nodes in thread order, tracking the nearest message above each node."""

    def __init__(self, built: BuiltConversation, harness_prompts: bool) -> None:
        self.built = built
        self.harness_prompts = harness_prompts
        self.message_above: dict[str, str | None] = {}
        self.drafts: dict[str, _Draft] = {}
        self.order: list[_Draft] = []
        self.calls: list[OpenCall] = []

    def walk(self, placed: list[Placed], folded: Mapping[str, str]) -> None:
        """Build the messages and calls of ``placed``; ``folded``: the folded link records
        with their nearest kept ancestors (a child of one has what that ancestor has
        above it)."""
        message_above = self.message_above
        above_of = message_above.get
        for item in placed:
            node, parent_key, _ = item
            key = node.key or ""
            if parent_key:
                above = above_of(parent_key, _FOLDED)
                if above is _FOLDED:  # the parent was folded (never walked)
                    above = above_of(folded[parent_key])
            else:
                above = None
            entry = node.entry
            if entry is None:  # a chain-only line (progress): the most common
                message_above[key] = above
                continue
            if entry.kind == "user" and entry.texts:
                above = self._user_message(item, entry, above)
            elif entry.kind == "assistant":
                above = self._assistant_line(item, entry, above)
            elif entry.kind == "tool_use":
                self._calls(item, entry, None)  # drifted logs: no assistant message owns it
            elif entry.event is not None:
                self.built.task_events.append(
                    TaskEvent(
                        source_id=f"cc:{key}",
                        kind=entry.event.kind,
                        text=entry.event.text,
                        created_at=node.time,
                        attributes=entry.event.attributes,
                    )
                )
            message_above[key] = above
        self.built.messages = [self._finish(draft) for draft in self.order]

    def _user_message(self, item: Placed, entry: Entry, above: str | None) -> str:
        node, _, active = item
        source_id = f"cc:{node.key}"
        draft = _Draft(source_id, "user", node.time, above, active, list(entry.texts))
        draft.entry = entry
        self.order.append(draft)
        if self.built.first_user_text is None:
            self.built.first_user_text = "\n\n".join(t.strip() for t in entry.texts)
        return source_id

    def _assistant_line(self, item: Placed, entry: Entry, above: str | None) -> str | None:
        node, _, active = item
        group = group_key(node, entry)
        draft = self.drafts.get(group)
        if draft is None and (entry.texts or entry.tool_uses):
            source_id = f"cc:{group}" if entry.message_id is not None else f"cc:{node.key}"
            draft = _Draft(source_id, "assistant", node.time, above, active)
            draft.entry = entry
            self.drafts[group] = draft
            self.order.append(draft)
        if draft is None:
            return above  # a response with no visible content (reasoning only)
        draft.texts.extend(entry.texts)
        if entry.usage is not None:
            output = as_int(entry.usage.get("output_tokens")) or 0
            # Every line of a response repeats usage and output_tokens grows line by line:
            # keep the largest (the last on a tie), never a sum.
            if draft.usage_line is None or (output, node.line) >= draft.usage_line:
                draft.usage_line = (output, node.line)
                draft.raw_usage = entry.usage
        draft.model = draft.model or entry.model
        draft.stop_reason = entry.stop_reason or draft.stop_reason
        self._calls(item, entry, draft.source_id)
        return draft.source_id

    def _calls(self, item: Placed, entry: Entry, message_id: str | None) -> None:
        node, _, active = item
        for use in entry.tool_uses:
            source_id = (
                f"cc:tool:{use.call_id}"
                if use.call_id is not None
                else f"cc:tool:{node.key}:{use.block_index}"
            )
            self.calls.append(
                OpenCall(
                    source_id,
                    use.name,
                    use.arguments if use.arguments is not None else {},
                    use.call_id,
                    message_id,
                    node.time,
                    active,
                    node.key or "",
                )
            )

    def _finish(self, draft: _Draft) -> Message:
        entry = draft.entry
        text = "\n\n".join(piece.strip() for piece in draft.texts)
        if draft.role == "user" and entry is not None:
            kind = (
                "injected"
                if self.harness_prompts
                else classify_user_text(
                    draft.texts,
                    is_meta=entry.is_meta,
                    is_compact_summary=entry.is_compact_summary,
                    origin_kind=entry.origin_kind,
                )
            )
            author = teammate_author(text) if kind == "injected" and "<teammate" in text else None
            return Message(
                source_id=draft.source_id,
                role="user",
                kind=kind,
                text=text,
                created_at=draft.created_at,
                parent_source_id=draft.parent_source_id,
                on_active_branch=draft.active,
                derived=kind == "summary",
                author=author,
            )
        attributes: dict[str, Any] = {}
        if draft.stop_reason is not None:
            attributes["stop_reason"] = draft.stop_reason
        if entry is not None and entry.request_id is not None:
            attributes["request_id"] = entry.request_id
        return Message(
            source_id=draft.source_id,
            role="assistant",
            kind="notice" if entry is not None and entry.is_api_error else "reply",
            text=text,
            created_at=draft.created_at,
            parent_source_id=draft.parent_source_id,
            on_active_branch=draft.active,
            model=draft.model,
            usage=usage_from(draft.raw_usage) if draft.raw_usage is not None else None,
            attributes=attributes,
        )


def usage_from(raw: dict[str, Any]) -> Usage:
    """Token usage of one API response, mapped to Proctor's names."""
    details = raw.get("output_tokens_details")
    reasoning = 0
    if isinstance(details, dict):
        reasoning = as_int(details.get("thinking_tokens", details.get("reasoning_tokens"))) or 0
    return Usage(
        input_tokens=as_int(raw.get("input_tokens")) or 0,
        output_tokens=as_int(raw.get("output_tokens")) or 0,
        cache_read_tokens=as_int(raw.get("cache_read_input_tokens")) or 0,
        cache_write_tokens=as_int(raw.get("cache_creation_input_tokens")) or 0,
        reasoning_tokens=reasoning,
    )


def _set_times_and_model(built: BuiltConversation, nodes: list[Node]) -> None:
    """Times from ``nodes`` (the records with content: only those have a time)."""
    times = [node.time for node in nodes if node.time is not None]
    if times:
        built.started_at = min(times)
        built.ended_at = max(times)
    models = Counter(
        m.model for m in built.messages if m.model is not None and m.model != _SYNTHETIC_MODEL
    )
    if models:
        built.model = models.most_common(1)[0][0]
