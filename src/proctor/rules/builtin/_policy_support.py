"""Small pieces the policy-driven rule families share: citations, wording, places."""

from __future__ import annotations

from functools import lru_cache

from proctor.findings import Evidence
from proctor.rules._policy import Policy
from proctor.rules._rule import RuleContext
from proctor.rules.builtin._file_access import FileAccess
from proctor.rules.builtin._locations import Places
from proctor.rules.builtin._spans import cite_argument_span
from proctor.transcript import ToolCall


def origin(policy: Policy) -> str:
    """Where the policy came from, for finding text."""
    if policy.source in (None, "defaults"):
        return "Proctor's default policy"
    return f"the policy {policy.source}"


def cite_span(
    call: ToolCall, field: str, text: str, start: int | None = None, end: int | None = None
) -> Evidence:
    """A tool call argument, with the character range inside it when known."""
    piece = text if start is None or end is None else text[start:end]
    return cite_argument_span(call, field, start, end, piece)


def cite_access(call: ToolCall, access: FileAccess) -> Evidence:
    """The argument (and characters) of a call naming a path."""
    return cite_argument_span(call, access.field, access.start, access.end, access.path)


def places(context: RuleContext) -> Places:
    """The conversation's project roots and home, computed once per conversation."""
    found = context.facts.get("policy_places")
    if not isinstance(found, Places):
        found = _places(context.trace.cwd, tuple(context.policy.plan.project_roots))
        context.facts["policy_places"] = found
    return found


@lru_cache(maxsize=256)
def _places(cwd: str | None, project_roots: tuple[str, ...]) -> Places:
    # Conversations of one project share their folders; Places is immutable.
    return Places.of(cwd, project_roots)


def resolved(places: Places, access: FileAccess) -> str | None:
    """The access's absolute path, or None when a relative path has nothing to resolve against."""
    path = places.resolve(access.path, access.base)
    if path.startswith(("/", "~")) or (len(path) > 2 and path[1] == ":"):
        return path
    return None
