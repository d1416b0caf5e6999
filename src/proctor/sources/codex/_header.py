"""The header of a Codex session, read from its ``session_meta`` record(s).

Owns the session id, where the work ran, the small metadata worth keeping
(``cli_version``, ``originator``, ``source``, git), and whether the session is a
sub-agent (``source.subagent``, ``parent_thread_id``) or the model call that wrote a
compaction (``source.subagent == "compact"``). ``base_instructions`` and
``dynamic_tools`` are deliberately not kept: large, repeated, and not evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from proctor.sources.codex._records import as_dict, as_int, as_str, parse_time
from proctor.transcript import ConversationKind

_KEPT_FIELDS = ("cli_version", "originator", "thread_source", "model_provider", "agent_path")


def session_id_of(payload: dict[str, Any]) -> str | None:
    """The session id a ``session_meta`` payload names (``id``, or ``session_id`` in newer builds)."""
    return as_str(payload.get("id")) or as_str(payload.get("session_id"))


@dataclass(slots=True)
class SessionHeader:
    """What a session says about itself."""

    session_id: str
    kind: ConversationKind = "main"
    parent_session_id: str | None = None
    agent_role: str | None = None
    agent_nickname: str | None = None
    cwd: str | None = None
    started_at: datetime | None = None
    resumes: int = 0
    """How many more times ``session_meta`` was written (each resume appends one)."""
    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_meta(cls, session_id: str, payload: dict[str, Any]) -> SessionHeader:
        """Read the first ``session_meta`` of a session."""
        header = cls(session_id)
        header._read_origin(payload)
        header._fill(payload)
        return header

    @classmethod
    def without_meta(cls, session_id: str) -> SessionHeader:
        """A header for records that came before any ``session_meta``."""
        return cls(session_id, attributes={"session_meta_missing": True})

    def resume(self, payload: dict[str, Any]) -> None:
        """A later ``session_meta`` of the same session: fill what the first one lacked."""
        self.resumes += 1
        self.attributes.pop("session_meta_missing", None)
        self._fill(payload)

    def _read_origin(self, payload: dict[str, Any]) -> None:
        source = payload.get("source")
        subagent = source.get("subagent") if isinstance(source, dict) else None
        spawn = as_dict(subagent.get("thread_spawn")) if isinstance(subagent, dict) else {}
        parent = as_str(payload.get("parent_thread_id")) or as_str(spawn.get("parent_thread_id"))
        if subagent == "compact":
            self.kind = "compaction"
        elif subagent is not None or parent is not None:
            self.kind = "subagent"
        if self.kind != "main":
            self.parent_session_id = parent
        self.agent_role = as_str(payload.get("agent_role")) or as_str(spawn.get("agent_role"))
        if self.agent_role is None and isinstance(subagent, str):
            self.agent_role = subagent  # "review" and other named sub-agent kinds
        elif self.agent_role is None and isinstance(subagent, dict):
            self.agent_role = as_str(subagent.get("other"))
        self.agent_nickname = as_str(payload.get("agent_nickname")) or as_str(
            spawn.get("agent_nickname")
        )
        depth = as_int(spawn.get("depth"))
        if depth is not None:
            self.attributes["agent_depth"] = depth
        if isinstance(source, str):
            self.attributes["source"] = source
        elif subagent is not None:
            self.attributes["source"] = "subagent"
        forked_from = as_str(payload.get("forked_from_id"))
        if forked_from:
            self.attributes["forked_from"] = f"codex:{forked_from}"

    def _fill(self, payload: dict[str, Any]) -> None:
        self.cwd = self.cwd or as_str(payload.get("cwd"))
        self.started_at = self.started_at or parse_time(payload.get("timestamp"))
        for name in _KEPT_FIELDS:
            value = as_str(payload.get(name))
            if value and name not in self.attributes:
                self.attributes[name] = value
        git = as_dict(payload.get("git"))
        for name, key in (
            ("branch", "git_branch"),
            ("commit_hash", "git_commit"),
            ("repository_url", "git_repository_url"),
        ):
            value = as_str(git.get(name))
            if value and key not in self.attributes:
                self.attributes[key] = value
