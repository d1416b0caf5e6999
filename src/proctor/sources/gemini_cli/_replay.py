"""Replaying a Gemini CLI chat file into its session metadata and messages.

The current ``.jsonl`` files are not a plain append log (research §4): the first line is
metadata; a line with an ``id`` is a message, and the same id is appended again whenever
the message changes (the last copy wins, in the place of the first); ``{"$set": {...}}``
merges metadata and may replace the message list; ``{"$rewindTo": id}`` removes that
message and everything after it. Rewound messages are kept, marked off the active branch,
rather than deleting evidence; a rewound id appended again becomes active at the end.

Legacy ``.json`` files hold one ``ConversationRecord``. Older or drifted files hold the
raw API history instead (``history`` or a checkpoint array of ``{role, parts}``); those
are normalised to message records with positional ids (``@<index>``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.sources._common import Located, as_text, json_type_name
from proctor.sources._files import RecordLines
from proctor.transcript import SourceIssue, nesting_problem

MESSAGE_TYPES = frozenset({"user", "gemini", "model", "info", "error", "warning"})


@dataclass(slots=True)
class LoggedMessage:
    """One message after replay: its last copy, where it was, and whether it still counts."""

    record: dict[str, Any]
    where: Located
    parent_key: str | None
    active: bool = True


@dataclass(slots=True)
class SessionLog:
    """A replayed chat file: merged metadata and messages in order, keyed by message id."""

    metadata: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, LoggedMessage] = field(default_factory=dict)
    issues: list[SourceIssue] = field(default_factory=list)

    def last_active(self) -> str | None:
        """Key of the last message still on the active branch."""
        return next((k for k, m in reversed(self.messages.items()) if m.active), None)

    def put(self, key: str, record: dict[str, Any], where: Located) -> None:
        """Add a message, or replace an earlier copy of it (last copy wins)."""
        existing = self.messages.get(key)
        if existing is not None and existing.active:
            existing.record, existing.where = record, where
            return
        if existing is not None:  # appended again after a rewind: active again, at the end
            del self.messages[key]
        self.messages[key] = LoggedMessage(record, where, self.last_active())

    def rewind(self, key: str) -> bool:
        """Mark ``key`` and every later active message rewound; False when ``key`` is unknown."""
        keys = [k for k, m in self.messages.items() if m.active]
        found = key in keys
        # Gemini CLI clears the whole history when the rewind target is unknown.
        for rewound in keys[keys.index(key) :] if found else keys:
            self.messages[rewound].active = False
        return found


def replay_lines(
    file: str, lines: Iterable[tuple[int, dict[str, Any]] | SourceIssue]
) -> SessionLog:
    """Replay a ``.jsonl`` chat file (lines from ``iter_jsonl``)."""
    log = SessionLog()
    for item in lines:
        if isinstance(item, SourceIssue):
            log.issues.append(item)
            continue
        line, record = item
        where = Located(record, "", line)
        if "$rewindTo" in record:
            target = record["$rewindTo"]
            if not isinstance(target, str):
                log.issues.append(where.issue(file, "$rewindTo is not a message id; ignored"))
            elif not log.rewind(target):
                reason = f"$rewindTo names unknown message {target!r}; all earlier messages rewound"
                log.issues.append(where.issue(file, reason, warning=True))
        elif isinstance(record.get("id"), str):
            log.put(record["id"], record, where)
        elif "$set" in record:
            _merge_metadata(file, log, record["$set"], where)
        elif isinstance(record.get("sessionId"), str):
            log.metadata.update(record)
        else:
            reason = "not a Gemini CLI record (no id, sessionId, $set or $rewindTo); skipped"
            log.issues.append(where.issue(file, reason, warning=True))
    return log


def _merge_metadata(file: str, log: SessionLog, update: Any, where: Located) -> None:
    if not isinstance(update, dict):
        reason = f"$set holds {json_type_name(update)}, expected an object; ignored"
        log.issues.append(where.issue(file, reason))
        return
    messages = update.get("messages")
    log.metadata.update({k: v for k, v in update.items() if k != "messages"})
    if isinstance(messages, list):
        # A replaced list (history masking, compression): known ids update in place,
        # new ones (a compression summary) are added; earlier messages stay as evidence.
        for index, message in enumerate(messages):
            item = Located(message, f"$set.messages[{index}]", where.line)
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                log.put(message["id"], message, item)
            else:
                log.issues.append(item.issue(file, "message without an id; skipped", warning=True))


def read_document(file: str, document: Any) -> SessionLog:
    """Read a legacy ``.json`` chat file, a drifted ``history`` file, or a checkpoint array."""
    log = SessionLog()
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        log.metadata = {k: v for k, v in document.items() if k != "messages"}
        entries, path = document["messages"], "messages"
    elif isinstance(document, dict) and isinstance(document.get("history"), list):
        log.metadata = {k: v for k, v in document.items() if k != "history"}
        entries, path = document["history"], "history"
    elif isinstance(document, list):
        entries, path = document, ""
    else:
        reason = f"the document is {json_type_name(document)} without a message list"
        log.issues.append(SourceIssue(file, f"{reason}; not a Gemini CLI chat"))
        return log
    too_deep = nesting_problem(log.metadata)
    if too_deep is not None:
        log.issues.append(SourceIssue(file, f"{too_deep}; the file was not imported"))
        log.metadata = {}
        return log
    lines = RecordLines(Path(file), path or None)
    for index, entry in enumerate(entries):
        where = f"{path}[{index}]"
        if not isinstance(entry, dict):
            reason = f"message is {json_type_name(entry)}, expected an object; skipped"
            log.issues.append(SourceIssue(file, f"{where}: {reason}", lines.of(index)))
            continue
        too_deep = nesting_problem(entry)
        if too_deep is not None:
            reason = f"{where}: {too_deep}; message skipped"
            log.issues.append(SourceIssue(file, reason, lines.of(index)))
            continue
        record = entry if "type" in entry else _from_api_content(entry)
        key = as_text(record.get("id")) or f"@{index}"
        if key in log.messages:
            reason = f"{where}: message id {key} repeated; kept by position"
            log.issues.append(SourceIssue(file, reason, lines.of(index), "warning"))
            key = f"@{index}"
        log.put(key, record, Located(entry, where))
    return log


def _from_api_content(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``{role, parts}`` API content entry as a message record."""
    role = entry.get("role")
    kind = "user" if role == "user" else "gemini" if role in ("model", "gemini") else role
    timestamp = entry.get("timestamp", entry.get("ts"))
    return {"type": kind, "content": entry.get("parts"), "timestamp": timestamp}
