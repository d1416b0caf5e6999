"""The pre-tool gate (SUP-5): "may this call proceed?", answered by deterministic rules.

``decide`` is the one decision function: a format-neutral ``GateRequest`` in, a
``GateDecision`` (allow / ask / deny, with rule and reason) out. ``GateService`` keeps one
live supervisor per conversation for in-process callers, fed only new events. Agent hook
protocols map their payloads onto requests: ``_claude_code`` for Claude Code's
``PreToolUse`` hook (``proctor gate``).
"""

from proctor.gate._claude_code import (
    PRE_TOOL_USE,
    ClaudeCodeHookInput,
    gate_request,
    hook_output,
    parse_hook_input,
)
from proctor.gate._decide import decide, policy_unusable
from proctor.gate._history import History, load_history, merge_events, stored_trace
from proctor.gate._request import GateRequest, proposed_call
from proctor.gate._state import GateService, HistoryLoader, PolicyCache

__all__ = [
    "PRE_TOOL_USE",
    "ClaudeCodeHookInput",
    "GateRequest",
    "GateService",
    "History",
    "HistoryLoader",
    "PolicyCache",
    "decide",
    "gate_request",
    "hook_output",
    "load_history",
    "merge_events",
    "parse_hook_input",
    "policy_unusable",
    "proposed_call",
    "stored_trace",
]
