"""Facts of one tool call: dispatch by what the call is, sub-agent runs, and errors.

A failed call (error status or non-zero exit) yields an ``error`` event citing the one
line of its result that says what went wrong, linked to what the call was about (the
file, the URL, the sub-agent). Shell calls are the exception: their ``command`` event
already says the command failed and cites its error line, and a ``test_run`` event cites
the runner's summary. Calls the user
rejected did nothing and yield nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proctor.review._batch import BatchSource
from proctor.review.structural._builder import FactBuilder, Outcome
from proctor.review.structural._file_facts import fetch_facts, file_facts
from proctor.review.structural._output import error_line, excerpt, printed_exit_code
from proctor.review.structural._scope import CallScope, call_outcome
from proctor.review.structural._shell import shell_run
from proctor.review.structural._shell_facts import shell_facts
from proctor.review.structural._titles import short
from proctor.rules import argument
from proctor.rules.builtin import is_spawn
from proctor.transcript import Conversation, SubagentRun, ToolCall

_RUN_OK = frozenset({"completed", "complete", "success", "succeeded", "ok", "done"})
_RUN_FAILED = frozenset({"error", "failed", "failure", "errored", "max_turns", "timeout"})
_UNKNOWN_AGENT = "sub-agent"
"""The agent identity when neither the run nor the call names a type."""


def call_facts(
    builder: FactBuilder,
    source: BatchSource,
    call: ToolCall,
    conversation: Conversation | None,
    subagent_runs: Mapping[str, SubagentRun],
) -> None:
    """Record everything structure shows about one tool call."""
    if call.status == "rejected":
        return
    run = None if is_spawn(call) else shell_run(call)
    exit_code = call.exit_code
    if exit_code is None and run is not None:
        exit_code = printed_exit_code(call.result_text)
    scope = CallScope(builder, source, call, conversation, exit_code)
    outcome = call_outcome(call, exit_code)
    if is_spawn(call):
        named = [_subagent(scope, subagent_runs.get(call.source_id), outcome)]
        label = f"{call.name} sub-agent"
    elif run is not None:
        # The command or test_run event says it failed and cites the error line itself.
        shell_facts(scope, run, outcome)
        return
    else:
        named = file_facts(scope, outcome) + fetch_facts(scope, outcome)
        label = call.name
    if outcome == "failed":
        _error(scope, label, named)


def _error(scope: CallScope, label: str, entity_ids: Sequence[str]) -> None:
    call = scope.call
    text = call.result_text or ""
    span = error_line(text)
    line = excerpt(text, span) if span is not None else ""
    ended = f"exit code {scope.exit_code}" if scope.exit_code not in (None, 0) else "an error"
    refs = [scope.cite("result_text", span)] if span is not None else [scope.cite()]
    scope.builder.event(
        scope.source,
        "error",
        title=f"Error in {label}: {line}" if line else f"Error in {label}",
        summary=f"{call.name} ended with {ended}" + (f": {line}" if line else "."),
        refs=refs,
        entity_ids=entity_ids,
        outcome="failed",
        occurred_at=scope.occurred_at,
    )


def _subagent(scope: CallScope, run: SubagentRun | None, call_ended: Outcome) -> str:
    """An ``agent`` entity for the sub-agent's type and a ``subagent_run`` event."""
    call, builder, source = scope.call, scope.builder, scope.source
    agent_type = (run.agent_type if run else None) or _text_argument(
        call, "subagent_type", "agent_type", "agent"
    )
    agent_type = agent_type or _UNKNOWN_AGENT
    description = (run.description if run else None) or _text_argument(call, "description", "name")
    field = next(
        (f"arguments.{k}" for k in ("description", "prompt") if argument(call, k)), "arguments"
    )
    refs = [scope.cite(field)]
    if call.result_text:
        refs.append(scope.cite("result_text"))
    agent_id = builder.entity(
        source,
        "agent",
        agent_type,
        name=agent_type,
        description=f"Sub-agent type {agent_type}",
        refs=[scope.cite(field)],
    )
    outcome = _run_outcome(run, call_ended)
    kind = "Sub-agent" if agent_type == _UNKNOWN_AGENT else f"{agent_type} sub-agent"
    title = f"{kind}: {short(description)}" if description else kind
    builder.event(
        source,
        "subagent_run",
        title=title,
        summary=_run_summary(agent_type, description, run),
        refs=refs,
        entity_ids=[agent_id],
        outcome=outcome,
        occurred_at=scope.occurred_at,
    )
    return agent_id


def _run_outcome(run: SubagentRun | None, call: Outcome) -> Outcome:
    """How the sub-agent ended; a launched call alone does not say (async agents)."""
    if call == "failed":
        return "failed"
    status = ((run.status or run.stop_kind) if run else None) or ""
    if status.lower() in _RUN_OK:
        return "ok"
    if status.lower() in _RUN_FAILED:
        return "failed"
    return "unknown"


def _run_summary(agent_type: str, description: str | None, run: SubagentRun | None) -> str:
    text = "A sub-agent" if agent_type == _UNKNOWN_AGENT else f"A {agent_type} sub-agent"
    text += " was started"
    text += f" to {description[0].lower()}{description[1:]}" if description else ""
    if run is None:
        return text + "; its run was not recorded."
    stats = []
    if run.rounds:
        stats.append(f"{run.rounds} rounds")
    if run.tool_uses:
        stats.append(f"{run.tool_uses} tool uses")
    if run.total_tokens:
        stats.append(f"{run.total_tokens:,} tokens")
    if run.duration_ms:
        stats.append(f"{run.duration_ms / 1000:.1f} s")
    ended = run.status or run.stop_kind or "unknown"
    return text + f"; it ended {ended}" + (f" after {', '.join(stats)}." if stats else ".")


def _text_argument(call: ToolCall, *keys: str) -> str | None:
    for key in keys:
        value = argument(call, key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
