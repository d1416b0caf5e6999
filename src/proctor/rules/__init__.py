"""Deterministic supervision: rules over trace events, policies, and the pre-tool gate."""

from proctor.rules._calls import (
    argument,
    argument_strings,
    command_text,
    file_paths,
    is_shell,
    tool_matches,
)
from proctor.rules._engine import Decision, GateDecision, Supervisor, check_trace
from proctor.rules._evidence import cite_absence, cite_call, cite_message, cite_result
from proctor.rules._policy import (
    DEFAULT_POLICY,
    Budgets,
    HardStop,
    IdempotencyKey,
    Notify,
    OutputSchema,
    Plan,
    Policy,
    RequiredArtifact,
    RuleMode,
    find_policy,
    load_policy,
    parse_policy,
)
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event, EventKind, Trace, TraceContext, call_events

__all__ = [
    "DEFAULT_POLICY",
    "Budgets",
    "Decision",
    "Event",
    "EventKind",
    "GateDecision",
    "HardStop",
    "Hit",
    "IdempotencyKey",
    "Notify",
    "OutputSchema",
    "Plan",
    "Policy",
    "RequiredArtifact",
    "Rule",
    "RuleContext",
    "RuleMode",
    "Supervisor",
    "Trace",
    "TraceContext",
    "argument",
    "argument_strings",
    "call_events",
    "check_trace",
    "cite_absence",
    "cite_call",
    "cite_message",
    "cite_result",
    "command_text",
    "file_paths",
    "find_policy",
    "is_shell",
    "load_policy",
    "parse_policy",
    "tool_matches",
]
