"""The pre-tool gate (SUP-5): "may this call proceed?", answered by deterministic rules.

``decide`` is the one decision function: a format-neutral ``GateRequest`` in, a
``GateDecision`` (allow / ask / deny, with rule and reason) out. ``GateService`` keeps one
live supervisor per conversation for in-process callers, fed only new events. Agent hook
protocols map their payloads onto requests: ``_claude_code`` for Claude Code's
``PreToolUse`` hook (``proctor gate``). ``LiveGate`` is the server's: per-session history
advanced by the lines each transcript gained. Without a server, the warm gate process
(``_daemon``, asked and started by the hook through ``_warm``) imports the rules once and
decides for later hook processes exactly as they would alone.

Names are imported when first used: the hook's fast path (``_hook``, ``_discovery``,
``_warm``) must not pay for the rules, pydantic or the store.
"""

from __future__ import annotations

from proctor._util.lazy import lazy_exports

TYPE_CHECKING = False  # not typing's: importing typing costs the hook more than it decides
if TYPE_CHECKING:
    from proctor.gate._alone import decide_alone
    from proctor.gate._claude_code import (
        PRE_TOOL_USE,
        ClaudeCodeHookInput,
        gate_request,
        hook_output,
        parse_hook_input,
    )
    from proctor.gate._decide import decide, policy_unusable
    from proctor.gate._discovery import ServerAddress, advertise, withdraw
    from proctor.gate._history import History, load_history, merge_events, stored_trace
    from proctor.gate._hook import forward
    from proctor.gate._live import LiveGate, LiveGateCounters
    from proctor.gate._request import GateRequest, proposed_call
    from proctor.gate._state import GateService, HistoryLoader, PolicyCache
    from proctor.gate._warm import answered as answered_warm
    from proctor.gate._warm import enabled as warm_enabled
    from proctor.gate._warm import start as start_warm

_RENAMED = {"answered_warm": "answered", "warm_enabled": "enabled", "start_warm": "start"}
_WHERE = {
    "answered_warm": "_warm",
    "warm_enabled": "_warm",
    "start_warm": "_warm",
    "PRE_TOOL_USE": "_claude_code",
    "ClaudeCodeHookInput": "_claude_code",
    "gate_request": "_claude_code",
    "hook_output": "_claude_code",
    "parse_hook_input": "_claude_code",
    "decide_alone": "_alone",
    "decide": "_decide",
    "policy_unusable": "_decide",
    "ServerAddress": "_discovery",
    "advertise": "_discovery",
    "withdraw": "_discovery",
    "forward": "_hook",
    "History": "_history",
    "load_history": "_history",
    "merge_events": "_history",
    "stored_trace": "_history",
    "LiveGate": "_live",
    "LiveGateCounters": "_live",
    "GateRequest": "_request",
    "proposed_call": "_request",
    "GateService": "_state",
    "HistoryLoader": "_state",
    "PolicyCache": "_state",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals(), renamed=_RENAMED)


__all__ = [
    "PRE_TOOL_USE",
    "ClaudeCodeHookInput",
    "GateRequest",
    "GateService",
    "History",
    "HistoryLoader",
    "LiveGate",
    "LiveGateCounters",
    "PolicyCache",
    "ServerAddress",
    "advertise",
    "answered_warm",
    "decide",
    "decide_alone",
    "forward",
    "gate_request",
    "hook_output",
    "load_history",
    "merge_events",
    "parse_hook_input",
    "policy_unusable",
    "proposed_call",
    "start_warm",
    "stored_trace",
    "warm_enabled",
    "withdraw",
]
