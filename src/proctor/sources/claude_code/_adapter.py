"""Claude Code session logs (JSONL) and their sub-agent files.

The adapter wires the stages together: recognise (``_sniff``), group files into units
(``_layout``), read records (``_records``), order and build each conversation
(``_threading``, ``_build``), derive task lists (``_tasks``) and link sub-agents
(``_subagents``). A unit yields its session bundle first, then one bundle per sub-agent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.claude_code._build import BuiltConversation, build_conversation
from proctor.sources.claude_code._layout import (
    AGENT_PREFIX,
    bare_name,
    conversation_key,
    is_compaction_agent,
    plan_units,
    planned_role,
    read_meta,
    session_id_for,
)
from proctor.sources.claude_code._model import ParsedFile
from proctor.sources.claude_code._records import read_jsonl, read_records
from proctor.sources.claude_code._sniff import (
    is_single_document,
    loglines_of,
    looks_like_claude_code,
)
from proctor.sources.claude_code._subagents import (
    SpawnIndex,
    child_prompt,
    is_warmup,
    split_sidechains,
    subagent_run,
)
from proctor.sources.claude_code._tasks import task_list
from proctor.sources.claude_code._values import basename, short_title
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    ConversationKind,
    SourceIssue,
    SubagentRun,
)

FORMAT = "claude_code"


class ClaudeCodeAdapter(SourceAdapter):
    """Claude Code session logs (JSONL) and their sub-agent files."""

    name = FORMAT
    description = "Claude Code session logs (JSONL) and their sub-agent files."

    def sniff(self, sample: Sample) -> bool:
        """True for Claude Code session/sub-agent JSONL or the web ``loglines`` export."""
        if not looks_like_claude_code(sample):
            return False
        # While the sample still caches its head records: what planning and reading
        # the file ask of them, kept on the sample (``Sample.facts``) past detection.
        planned_role(sample.path, sample)
        _single_document(sample)
        return True

    def plan(self, files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
        """One unit per session with its sub-agent files; orphan sub-agent files alone."""
        return plan_units(files)

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """The session bundle, then its sub-agents' bundles; bad lines become issues."""
        sample = unit.sample if unit.sample is not None else Sample(unit.path)
        role = planned_role(unit.path, sample)
        if role.is_agent:
            yield from self._read_agent(unit.path, role.session_id, None)
            return
        parsed = _parse(unit.path, sample)
        yield from parsed.issues
        session_id = conversation_key(unit.path, parsed.session_ids)
        main_nodes, inline_runs = split_sidechains(parsed.nodes)
        built = build_conversation(main_nodes, scope=session_id, shown=str(unit.path))
        external_id = session_id_for(unit.path, parsed.session_ids)
        yield _bundle(
            parsed,
            built,
            _conversation(parsed, built, external_id, f"cc:session:{session_id}", session_id),
            scope=session_id,
        )
        spawns = SpawnIndex(built.tool_calls, parsed.agent_links, built.messages)
        for run in inline_runs:
            agent_id = run[0].agent_id or run[0].key or "sidechain"
            child = build_conversation(run, scope=f"{session_id}:{agent_id}", shown=str(unit.path))
            bundle = _child_bundle(
                parsed, child, session_id, agent_id, {}, spawns, file_warnings=False
            )
            if bundle is not None:
                yield bundle
        for path in unit.related:
            if path.name.endswith(".jsonl"):  # the rest are the agents' .meta.json files
                yield from self._read_agent(path, session_id, spawns)

    def _read_agent(
        self, path: Path, session_id: str | None, spawns: SpawnIndex | None
    ) -> Iterator[ReadItem]:
        parsed = read_jsonl(path)
        yield from parsed.issues
        meta, meta_issue = read_meta(path)
        if meta_issue is not None:
            yield meta_issue
        parent_session = session_id or (parsed.session_ids[0] if parsed.session_ids else path.stem)
        agent_id = parsed.first_agent_id or bare_name(path).removeprefix(AGENT_PREFIX)
        compaction = is_compaction_agent(agent_id)
        child = build_conversation(
            parsed.nodes,
            scope=f"{parent_session}:{agent_id}",
            shown=str(path),
            first_parent_is_external=True,
            harness_prompts=compaction,
        )
        bundle = _child_bundle(parsed, child, parent_session, agent_id, meta, spawns)
        if bundle is not None:
            yield bundle


_SINGLE_DOCUMENT_FACT = "claude_code.single_document"
"""A sample's fact (``Sample.facts``): whether the file is one JSON document."""


def _single_document(sample: Sample) -> bool:
    """``is_single_document``, told once per sample (while planning, when it caches)."""
    single = sample.facts.get(_SINGLE_DOCUMENT_FACT)
    if not isinstance(single, bool):
        single = sample.facts[_SINGLE_DOCUMENT_FACT] = is_single_document(sample)
    return single


def _parse(path: Path, sample: Sample) -> ParsedFile:
    """Read a session file: JSON Lines, or a JSON document holding ``loglines``."""
    if _single_document(sample):
        loglines = loglines_of(sample.document)  # parsed and cached while sniffing
        if loglines is not None:
            return read_records(path, loglines)
    return read_jsonl(path)


def _child_bundle(
    parsed: ParsedFile,
    child: BuiltConversation,
    session_id: str,
    agent_id: str,
    meta: Mapping[str, Any],
    spawns: SpawnIndex | None,
    *,
    file_warnings: bool = True,
) -> ConversationBundle | None:
    """A sub-agent (or compaction) bundle; None for a cache warm-up agent."""
    if is_warmup(child):
        return None
    kind: ConversationKind = "compaction" if is_compaction_agent(agent_id) else "subagent"
    run: SubagentRun | None = None
    if kind == "subagent":
        spawn = spawns.link(agent_id, child_prompt(child), meta) if spawns is not None else None
        notification = spawns.notifications.get(agent_id) if spawns is not None else None
        run = subagent_run(spawn, child, meta, notification)
    conversation = _conversation(
        parsed,
        child,
        agent_id,
        f"cc:agent:{session_id}:{agent_id}",
        session_id,
        kind=kind,
        title=(run.description if run is not None else None) or None,
    )
    return _bundle(
        parsed,
        child,
        conversation,
        scope=f"{session_id}:{agent_id}",
        run=run,
        file_warnings=file_warnings,
    )


def _conversation(
    parsed: ParsedFile,
    built: BuiltConversation,
    external_id: str,
    conversation_id: str,
    session_id: str,
    *,
    kind: ConversationKind = "main",
    title: str | None = None,
) -> Conversation:
    attributes = {
        key: value
        for key, value in (
            ("version", parsed.version),
            ("gitBranch", parsed.git_branch),
            ("entrypoint", parsed.entrypoint),
            ("permissionMode", parsed.permission_mode),
        )
        if value is not None
    }
    return Conversation(
        conversation_id=conversation_id,
        format=FORMAT,
        external_id=external_id,
        title=title or _title(parsed, built, kind),
        kind=kind,
        parent_conversation_id=None if kind == "main" else f"cc:session:{session_id}",
        project_hint=basename(parsed.cwd) if parsed.cwd else None,
        cwd=parsed.cwd,
        started_at=built.started_at,
        ended_at=built.ended_at,
        model=built.model,
        attributes=attributes,
    )


def _title(parsed: ParsedFile, built: BuiltConversation, kind: ConversationKind) -> str | None:
    if kind == "main":
        if parsed.custom_title or parsed.ai_title:
            return parsed.custom_title or parsed.ai_title
        if parsed.summaries:
            keys = {node.key for node in parsed.nodes}
            own = [text for text, leaf in parsed.summaries if leaf in keys]
            return short_title((own or [parsed.summaries[-1][0]])[-1])
    for message in built.messages:
        if message.kind == "prompt" or (kind != "main" and message.role == "user"):
            return short_title(message.text)
    return None


def _bundle(
    parsed: ParsedFile,
    built: BuiltConversation,
    conversation: Conversation,
    *,
    scope: str,
    run: SubagentRun | None = None,
    file_warnings: bool = True,
) -> ConversationBundle:
    tasks, task_events = task_list(built.tool_calls, scope)
    issues = list(built.issues)
    if file_warnings and parsed.first_unreadable_time is not None:
        line, value = parsed.first_unreadable_time
        issues.append(
            SourceIssue(
                str(parsed.path),
                f"{parsed.unreadable_times} record(s) have an unreadable timestamp "
                f"(first: {value!r}); their times were left empty",
                line,
                severity="warning",
            )
        )
    return ConversationBundle(
        conversation=conversation,
        messages=tuple(built.messages),
        tool_calls=tuple(built.tool_calls),
        tasks=tuple(tasks),
        task_events=(*built.task_events, *task_events),
        subagent_run=run,
        issues=tuple(issues),
        origin=str(parsed.path),
    )
