"""Where Claude Code puts a session's files, and which files are read together.

A session ``<sessionId>.jsonl`` owns its sub-agent files: ``<sessionId>/subagents/**/
agent-<id>.jsonl`` (2.1.x, with optional ``agent-<id>.meta.json``) and, in older builds,
``agent-<8hex>.jsonl`` beside it whose records carry the session's ``sessionId``. Planning
puts each session and its sub-agent files into one read unit, so walking a folder never
reads a sub-agent file twice; a sub-agent file whose session is not being read becomes
a unit of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from proctor.sources._files import load_json_document, open_binary
from proctor.sources._source import ReadUnit, Sample
from proctor.sources.claude_code._values import as_str
from proctor.transcript import SourceIssue

SUBAGENTS_DIR = "subagents"
AGENT_PREFIX = "agent-"
COMPACTION_PREFIX = "acompact"
_CONTENT_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
_HEAD_LINE_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileRole:
    """What a file is: a session, or one sub-agent of a session."""

    is_agent: bool
    session_id: str | None
    """A session file's own id; for a sub-agent file, the id of its parent session."""
    agent_id: str | None = None


def role_of(path: Path, records: Iterable[dict[str, Any]]) -> FileRole:
    """Classify a file from its path and first records."""
    records = list(records)
    first = next((r for r in records if as_str(r.get("type")) in _CONTENT_TYPES), None)
    agent_id = as_str(first.get("agentId")) if first is not None else None
    layout_session = layout_parent_session(path)
    sessions = [s for r in records if (s := as_str(r.get("sessionId"))) is not None]
    if layout_session is not None or (
        first is not None and first.get("isSidechain") is True and agent_id is not None
    ):
        agent_id = agent_id or bare_name(path).removeprefix(AGENT_PREFIX)
        return FileRole(True, layout_session or (sessions[0] if sessions else None), agent_id)
    return FileRole(False, session_id_for(path, sessions))


ROLE_FACT = "claude_code.role"
"""A sample's fact (``Sample.facts``): the file's role, read while planning."""


def planned_role(path: Path, sample: Sample) -> FileRole:
    """The role of a file (``role_of`` its head records), kept on its sample so that
    reading the unit later does not parse the head again."""
    role = sample.facts.get(ROLE_FACT)
    if not isinstance(role, FileRole):
        role = sample.facts[ROLE_FACT] = role_of(path, sample.records)
    return role


def session_id_for(path: Path, sessions: Sequence[str]) -> str:
    """A session's own id: its file name when records confirm it, else the first ``sessionId``."""
    name = bare_name(path)
    if name in sessions:
        return name
    return sessions[0] if sessions else name


def conversation_key(path: Path, sessions: Sequence[str]) -> str:
    """What a session's conversation id is built from.

    Claude Code names a session file ``<sessionId>.jsonl``; for such files this is the
    session id. Renamed or hand-made files may share a ``sessionId`` (the DAG fixtures all
    say ``s1``) or a base name (``sample_session.json`` and ``.jsonl``), so they are keyed
    by their file name instead and never overwrite each other.
    """
    name = bare_name(path)
    if name in sessions:
        return name
    return path.name.removesuffix(".zst").removesuffix(".gz")


def bare_name(path: Path) -> str:
    """The file name without extensions (``agent-a1b2.meta.json`` → ``agent-a1b2``)."""
    return path.name.split(".", 1)[0]


def meta_file(agent_file: Path) -> Path:
    """``agent-<id>.meta.json`` beside ``agent-<id>.jsonl``."""
    return agent_file.with_name(bare_name(agent_file) + ".meta.json")


def layout_parent_session(path: Path) -> str | None:
    """The session id of a file under ``<sessionId>/subagents/`` (any depth), else None."""
    if not path.name.startswith(AGENT_PREFIX):
        return None
    for folder in path.parents:
        if folder.name == SUBAGENTS_DIR:
            return folder.parent.name or None
    return None


def is_compaction_agent(agent_id: str) -> bool:
    """``agent-acompact-*`` files are the model call that wrote a compaction summary."""
    return agent_id.startswith(COMPACTION_PREFIX)


def read_meta(agent_file: Path) -> tuple[dict[str, Any], SourceIssue | None]:
    """The ``agent-<id>.meta.json`` beside a sub-agent file (agentType, description)."""
    meta_path = meta_file(agent_file)
    if not meta_path.is_file():
        return {}, None
    try:
        value = load_json_document(meta_path)
    except Exception as exc:  # any unreadable meta file is reported, never fatal
        reason = getattr(exc, "reason", None) or str(exc)
        return {}, SourceIssue(
            str(meta_path), f"sub-agent metadata unreadable ({reason}); ignored", severity="warning"
        )
    return (value if isinstance(value, dict) else {}), None


def plan_units(files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
    """Group sessions with their sub-agent files (on disk and among ``files``)."""
    roles = {path: planned_role(path, sample) for path, sample in files}
    claimed: set[Path] = set()
    input_agents: dict[str, list[Path]] = {}
    for path, _ in files:
        role = roles[path]
        if role.is_agent and role.session_id is not None:
            input_agents.setdefault(role.session_id, []).append(path)
    head_sessions: dict[Path, str | None] = {}
    units: list[ReadUnit] = []
    for path, sample in files:
        role = roles[path]
        if role.is_agent or path.resolve() in claimed:
            continue
        claimed.add(path.resolve())
        session_id = role.session_id or path.stem
        related: list[Path] = []
        for candidate in [
            *_discover(path, session_id, head_sessions),
            *(a for a in input_agents.get(session_id, ()) if _beside(a, path)),
        ]:
            resolved = candidate.resolve()
            if resolved not in claimed:
                claimed.add(resolved)
                related.extend(_with_meta(candidate))
        units.append(ReadUnit(path, tuple(related), sample=sample))
    for path, sample in files:
        if path.resolve() not in claimed:
            claimed.add(path.resolve())
            related = _with_meta(path)[1:] if roles[path].is_agent else []
            units.append(ReadUnit(path, tuple(related), sample=sample))
    return units


def _plain_name(name: str) -> bool:
    """True for a name that is one folder name here: no separator, not ``..``, not too long."""
    return (
        0 < len(name.encode("utf-8", "surrogatepass")) <= 255
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and name not in (".", "..")
    )


def _with_meta(agent_file: Path) -> list[Path]:
    """A sub-agent file and its metadata file, so a change to either re-reads the unit."""
    meta = meta_file(agent_file)
    return [agent_file, meta] if meta.is_file() else [agent_file]


def _discover(
    session_file: Path, session_id: str, head_sessions: dict[Path, str | None]
) -> list[Path]:
    found: list[Path] = []
    for name in dict.fromkeys((session_file.stem, session_id)):
        if not _plain_name(name):
            continue  # a session id read from a record never leads out of the folder
        folder = session_file.parent / name / SUBAGENTS_DIR
        if folder.is_dir():
            found.extend(sorted(folder.rglob(f"{AGENT_PREFIX}*.jsonl")))
    for candidate in sorted(session_file.parent.glob(f"{AGENT_PREFIX}*.jsonl")):
        if candidate not in head_sessions:
            head_sessions[candidate] = _first_session_id(candidate)
        if head_sessions[candidate] == session_id:
            found.append(candidate)
    return found


def _beside(agent_file: Path, session_file: Path) -> bool:
    """Old layout keeps agents next to the session; new layout under ``<session>/``."""
    return (
        agent_file.parent == session_file.parent
        or session_file.parent / session_file.stem in agent_file.parents
    )


def _first_session_id(path: Path) -> str | None:
    try:
        with open_binary(path) as handle:
            line = handle.readline(_HEAD_LINE_BYTES)
        record = orjson.loads(line)
    except (OSError, orjson.JSONDecodeError):
        return None
    return as_str(record.get("sessionId")) if isinstance(record, dict) else None
