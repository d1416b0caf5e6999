"""Gemini CLI chat logs: legacy JSON and the replayed JSONL (research §4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from proctor.errors import SourceError
from proctor.sources._common import is_json_lines, named, sample_document
from proctor.sources._files import iter_jsonl, load_json_document
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.gemini_cli._convert import FORMAT, build_bundle
from proctor.sources.gemini_cli._replay import MESSAGE_TYPES, read_document, replay_lines
from proctor.transcript import SourceIssue


def _is_message_record(value: Any) -> bool:
    return isinstance(value, dict) and named(value.get("type"), MESSAGE_TYPES)


def _is_api_content(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("user", "model", "gemini")
        and isinstance(value.get("parts"), list)
    )


def looks_like_gemini_document(document: Any) -> bool:
    """A legacy ``ConversationRecord``, a drifted ``history`` file or a checkpoint array."""
    if isinstance(document, list):
        return _api_history(document)
    if not isinstance(document, dict):
        return False
    messages = document.get("messages")
    if isinstance(messages, list):
        # Identified by its session fields; one damaged message must not hide the file.
        identified = isinstance(document.get("sessionId"), str) or "projectHash" in document
        return identified and (
            "projectHash" in document or any(_is_message_record(m) for m in messages)
        )
    history = document.get("history")
    return isinstance(history, list) and _api_history(history)


def _api_history(entries: list[Any]) -> bool:
    """API contents (``{role, parts}``), damaged entries aside."""
    return any(map(_is_api_content, entries))


def looks_like_gemini_lines(records: list[dict[str, Any]]) -> bool:
    """The JSONL chat log: a metadata first line, then messages, ``$set`` and ``$rewindTo``."""
    if not records:
        return False
    first = records[0]
    if isinstance(first.get("sessionId"), str) and isinstance(first.get("projectHash"), str):
        return "type" not in first and "message" not in first
    ours = sum(
        _is_message_record(r) or isinstance(r.get("$set"), dict) or "$rewindTo" in r
        for r in records
    )
    return ours * 4 >= len(records) * 3 and any("$set" in r or "$rewindTo" in r for r in records)


class GeminiCliAdapter(SourceAdapter):
    """Gemini CLI chat logs: the legacy single-JSON file, checkpoints, and the JSONL log.

    The JSONL log is replayed (re-appended ids, ``$set``, ``$rewindTo``), so a session
    reads the same way Gemini CLI itself loads it, with rewound messages kept off the
    active branch. Each file is one session; sub-agent sessions are their own bundles.
    """

    name = FORMAT
    description = "Gemini CLI chat logs: legacy JSON and the replayed JSONL."

    def sniff(self, sample: Sample) -> bool:
        """True for Gemini CLI chat files, by their fields (never by file name)."""
        if is_json_lines(sample):
            return looks_like_gemini_lines(sample.records)
        return looks_like_gemini_document(sample_document(sample))

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield the session's bundle; bad lines and records become issues."""
        file = str(unit.path)
        sample = unit.sample or Sample(unit.path)
        if is_json_lines(sample):
            log = replay_lines(file, iter_jsonl(unit.path))
        else:
            try:
                document = load_json_document(unit.path)
            except SourceError as exc:
                yield SourceIssue(file, exc.reason, exc.line)
                return
            log = read_document(file, document)
        yield from log.issues
        if log.messages or log.metadata:
            yield build_bundle(log, file)
