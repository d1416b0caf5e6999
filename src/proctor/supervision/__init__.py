"""Supervising stored conversations: run the rules, record the findings."""

from proctor.supervision._check import CheckResult, check_conversations, trace_of

__all__ = ["CheckResult", "check_conversations", "trace_of"]
