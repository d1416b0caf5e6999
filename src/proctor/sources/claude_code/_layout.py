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
from proctor.sources._real_paths import RealPaths
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
    """Classify a file from its path and first records.

    Reads ``records`` only as far as the answer needs (a lazy sample parses no further):
    the first content record, the first ``sessionId`` and, for a session, whether one of
    them is the file's name."""
    name = bare_name(path)
    layout_session = layout_parent_session(path)
    first: dict[str, Any] | None = None
    first_session: str | None = None
    named = False
    for record in records:
        if first is None and as_str(record.get("type")) in _CONTENT_TYPES:
            first = record
        session = as_str(record.get("sessionId"))
        if session is not None:
            if first_session is None:
                first_session = session
            named = named or session == name
        if first is not None and (
            layout_session is not None
            or (first_session is not None and (named or _is_agent(first)))
        ):
            break
    agent_id = as_str(first.get("agentId")) if first is not None else None
    if layout_session is not None or (first is not None and _is_agent(first)):
        agent_id = agent_id or name.removeprefix(AGENT_PREFIX)
        return FileRole(True, layout_session or first_session, agent_id)
    return FileRole(False, name if named or first_session is None else first_session)


def _is_agent(record: dict[str, Any]) -> bool:
    """A sidechain record that names its agent: the first content record of a sub-agent
    file."""
    return record.get("isSidechain") is True and as_str(record.get("agentId")) is not None


ROLE_FACT = "claude_code.role"
"""A sample's fact (``Sample.facts``): the file's role, read while planning."""


def planned_role(path: Path, sample: Sample) -> FileRole:
    """The role of a file (``role_of`` its head records), kept on its sample so that
    reading the unit later does not parse the head again."""
    role = sample.facts.get(ROLE_FACT)
    if not isinstance(role, FileRole):
        role = sample.facts[ROLE_FACT] = role_of(path, sample.iter_records())
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
    resolved: dict[Path, Path] = {}  # each path resolved once
    real_path = RealPaths()

    def real(path: Path) -> Path:
        found = resolved.get(path)
        if found is None:
            found = resolved[path] = real_path(path)
        return found

    claimed: set[Path] = set()
    input_agents: dict[str, list[Path]] = {}
    for path, _ in files:
        role = roles[path]
        if role.is_agent and role.session_id is not None:
            input_agents.setdefault(role.session_id, []).append(path)
    head_sessions: dict[Path, str | None] = {}
    listed: dict[Path, list[Path]] = {}
    units: list[ReadUnit] = []
    for path, sample in files:
        role = roles[path]
        if role.is_agent or real(path) in claimed:
            continue
        claimed.add(real(path))
        session_id = role.session_id or path.stem
        related: list[Path] = []
        for candidate in [
            *_discover(path, session_id, head_sessions, listed),
            *(a for a in input_agents.get(session_id, ()) if _beside(a, path)),
        ]:
            if real(candidate) not in claimed:
                claimed.add(real(candidate))
                related.extend(_with_meta(candidate))
        units.append(ReadUnit(path, tuple(related), sample=sample))
    for path, sample in files:
        if real(path) not in claimed:
            claimed.add(real(path))
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
    session_file: Path,
    session_id: str,
    head_sessions: dict[Path, str | None],
    listed: dict[Path, list[Path]],
) -> list[Path]:
    """The sub-agent files of a session on disk. ``head_sessions``: the ``sessionId`` of
    agent files already opened; ``listed``: the old layout's agent files of each folder
    already listed (sessions that share a folder list it once)."""
    found: list[Path] = []
    for name in dict.fromkeys((session_file.stem, session_id)):
        if not _plain_name(name):
            continue  # a session id read from a record never leads out of the folder
        folder = session_file.parent / name / SUBAGENTS_DIR
        if folder.is_dir():
            found.extend(sorted(folder.rglob(f"{AGENT_PREFIX}*.jsonl")))
    parent = session_file.parent
    beside = listed.get(parent)
    if beside is None:
        beside = listed[parent] = sorted(parent.glob(f"{AGENT_PREFIX}*.jsonl"))
    for candidate in beside:
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
