"""OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed).

The adapter recognises rollouts by their line envelope (``{timestamp, type, payload}``
with Codex's record kinds), groups a parent session's file with its sub-agents' files so
spawning calls can be linked, and reads every session in a unit: one bundle per session
id, a resumed session (``session_meta`` written again with the same id) staying one
conversation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.sources._common import json_type_name
from proctor.sources._files import iter_jsonl, open_binary
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.codex._bundle import build_bundle
from proctor.sources.codex._header import SessionHeader, session_id_of
from proctor.sources.codex._records import HISTORY_KINDS, ROLLOUT_KINDS, as_int, parse_time, short
from proctor.sources.codex._session import SessionReader
from proctor.transcript import SourceIssue

_SESSION_META_HEAD = re.compile(
    rb'\s*\{\s*"timestamp"\s*:\s*"[^"]{1,64}"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{'
)
_FIRST_LINE_BYTES = 8 * 1024 * 1024
_SHOWN_SKIPS = 20
"""Lines listed per kind of unknown record or item; more are counted in one warning."""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class CodexAdapter(SourceAdapter):
    """OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."""

    name = "codex"
    description = "OpenAI Codex CLI rollout files (JSONL, optionally zstd-compressed)."

    def sniff(self, sample: Sample) -> bool:
        """True for JSON Lines whose records carry the rollout envelope.

        One ``session_meta`` with an id is enough; without one (a file whose head was
        lost), two history records (``response_item``, ``event_msg``, ``turn_context``,
        ``compacted``) are required.
        """
        if sample.is_binary or sample.text_start != "{":
            return False
        if not sample.records:
            # A session_meta line longer than the sample (many dynamic tools) parses as
            # nothing; Codex writes the envelope keys first, so its head still tells.
            return _SESSION_META_HEAD.match(sample.head) is not None
        history = 0
        for record in sample.records:
            kind, payload = record.get("type"), record.get("payload")
            if not isinstance(payload, dict) or "timestamp" not in record:
                continue
            if kind == "session_meta" and session_id_of(payload):
                return True
            if kind in HISTORY_KINDS:
                history += 1
        return history >= 2

    def plan(self, files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
        """One unit per top-level session file, with its sub-agents' files as related."""
        samples = dict(files)
        heads = {path: _first_session(path) for path, _ in files}
        file_of_session: dict[str, Path] = {}
        for path, (session_id, _) in heads.items():
            if session_id is not None:
                file_of_session.setdefault(session_id, path)

        def root_of(path: Path) -> Path:
            """The file of the top-most ancestor session present among ``files``."""
            seen = {path}
            while True:
                parent = heads[path][1]
                parent_path = file_of_session.get(parent) if parent else None
                if parent_path is None or parent_path in seen:
                    return path
                seen.add(parent_path)
                path = parent_path

        groups: dict[Path, list[Path]] = {}
        for path, _ in files:
            groups.setdefault(root_of(path), []).append(path)
        return [
            ReadUnit(root, tuple(p for p in members if p != root), sample=samples[root])
            for root, members in groups.items()
        ]

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Every session in the unit's files, each as one bundle, plus issues."""
        sessions: dict[str, SessionReader] = {}
        for path in unit.paths:
            yield from _read_file(path, sessions)
        for session in sessions.values():
            header = session.header
            parent = sessions.get(header.parent_session_id or "")
            link = None
            if parent is not None and parent is not session:
                link = parent.children.get(header.session_id)
            try:
                yield build_bundle(session, link)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                yield SourceIssue(
                    session.origin,
                    f"session {session.header.session_id} could not be assembled "
                    f"({type(exc).__name__}: {exc}); it was not imported",
                )


def _read_file(path: Path, sessions: dict[str, SessionReader]) -> Iterator[SourceIssue]:
    """Feed one file's records to their sessions, yielding issues for bad records."""
    shown = str(path)
    current: SessionReader | None = None
    skipped: Counter[str] = Counter()
    bad_time: tuple[int, Any] | None = None
    for item in iter_jsonl(path):
        if isinstance(item, SourceIssue):
            yield item
            continue
        line, record = item
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(kind, str):
            reason = f'field "type" is {json_type_name(kind)}, not a record type; line skipped'
            yield SourceIssue(shown, reason, line)
            continue
        if kind not in ROLLOUT_KINDS:
            label = f"record type {short(kind)!r}"
            skipped[label] += 1
            if skipped[label] <= _SHOWN_SKIPS:
                yield SourceIssue(shown, f"unknown {label} skipped", line, "warning")
            continue
        if not isinstance(payload, dict):
            yield SourceIssue(shown, f"{kind} record has no payload object; line skipped", line)
            continue
        time = parse_time(record.get("timestamp"))
        if time is None and bad_time is None:
            bad_time = (line, record.get("timestamp"))
        if kind == "session_meta":
            session_id = session_id_of(payload)
            if session_id is None:
                yield SourceIssue(
                    shown, "session_meta without an id; it was skipped", line, "warning"
                )
                continue
            current = sessions.get(session_id)
            if current is not None:
                current.header.resume(payload)
            else:
                header = SessionHeader.from_meta(session_id, payload)
                current = sessions[session_id] = SessionReader(header, shown)
            continue
        if current is None:
            if kind not in HISTORY_KINDS:
                continue  # a baseline (world_state …) with no session to belong to
            session_id = _session_id_from_name(path)
            yield SourceIssue(
                shown,
                f"records before any session_meta; they were given to session {session_id} "
                "named by the file",
                line,
                "warning",
            )
            current = sessions.get(session_id)
            if current is None:
                header = SessionHeader.without_meta(session_id)
                current = sessions[session_id] = SessionReader(header, shown)
        try:
            unknown = current.accept(kind, payload, line, time, as_int(record.get("ordinal")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            yield SourceIssue(
                shown,
                f"{kind} record could not be read ({type(exc).__name__}: {exc}); skipped",
                line,
            )
            continue
        if unknown is not None:
            skipped[unknown] += 1
            if skipped[unknown] <= _SHOWN_SKIPS:
                yield SourceIssue(shown, f"unknown {short(unknown)} skipped", line, "warning")
    for label, count in skipped.items():
        if count > _SHOWN_SKIPS:
            yield SourceIssue(
                shown,
                f"{count - _SHOWN_SKIPS} more line(s) of unknown {short(label)} skipped "
                f"(the first {_SHOWN_SKIPS} are listed)",
                severity="warning",
            )
    if bad_time is not None:
        yield SourceIssue(
            shown,
            f"timestamp {short(bad_time[1])!r} is not an ISO-8601 time; records like it have "
            "no time (first shown)",
            bad_time[0],
            "warning",
        )


def _first_session(path: Path) -> tuple[str | None, str | None]:
    """The session id on a file's first line and the parent it names, if any.

    Only the first line is read: planning a folder of thousands of rollouts must not read
    their samples again.
    """
    try:
        with open_binary(path) as handle:
            record = orjson.loads(handle.readline(_FIRST_LINE_BYTES))
    except (OSError, ValueError):
        return None, None
    if not isinstance(record, dict):
        return None, None
    payload = record.get("payload")
    if record.get("type") != "session_meta" or not isinstance(payload, dict):
        return None, None
    session_id = session_id_of(payload)
    if session_id is None:
        return None, None
    return session_id, SessionHeader.from_meta(session_id, payload).parent_session_id


def _session_id_from_name(path: Path) -> str:
    """Codex names rollouts ``rollout-<time>-<session uuid>.jsonl``; else the file stem."""
    found = _UUID.findall(path.name)
    return found[-1].lower() if found else path.name.split(".")[0]
