"""Proctor's own JSON Lines event format (docs/proctor-jsonl.md).

The format agents and scripts use to send events to Proctor: one self-contained JSON
object per line (``conversation``, ``message``, ``tool_call``, ``tool_result``,
``task``, ``task_event``, ``subagent_run``), optionally after a ``header`` line. The
same lines will arrive through the HTTP intake, so each is validated on its own.

A line that fails validation is reported with its line number and the field at fault,
and skipped; the rest of the file is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from proctor.sources._common import named
from proctor.sources._files import iter_jsonl
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.jsonl._assembly import Assembler
from proctor.sources.jsonl._schema import EVENT_TYPES, HeaderLine
from proctor.sources.jsonl._validation import validate_line
from proctor.transcript import SourceIssue

FORMAT_NAME = "proctor-jsonl"
SUPPORTED_VERSION = 1


def _is_header(record: dict[str, Any]) -> bool:
    return record.get("type") == "header" and record.get("format") == FORMAT_NAME


def _is_event(record: dict[str, Any]) -> bool:
    return named(record.get("type"), EVENT_TYPES) and isinstance(record.get("conversation_id"), str)


class ProctorJsonlAdapter(SourceAdapter):
    """Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."""

    name = "proctor_jsonl"
    description = "Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."

    def sniff(self, sample: Sample) -> bool:
        """True when the file opens with the header, or its lines are Proctor events.

        Events are lines whose ``type`` is one of the format's event types and which
        carry a string ``conversation_id``; other formats' lines never do both. The
        first line and at least half of the sampled lines must be events (or a header),
        so a few bad lines do not hide the format.
        """
        first = sample.first_records(1)
        if not first:
            return False
        if _is_header(first[0]):
            return True
        if not _is_event(first[0]):
            return False  # decided by the first record: the rest of the sample is not parsed
        records = sample.records
        ours = sum(1 for record in records if _is_event(record) or _is_header(record))
        return ours * 2 >= len(records)

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Validate every line, then yield one bundle per conversation (parents first)."""
        shown = str(unit.path)
        assembler = Assembler(shown)
        first = True
        for item in iter_jsonl(unit.path):
            if isinstance(item, SourceIssue):
                yield item
                first = False
                continue
            number, record = item
            line, problems = validate_line(record)
            if problems:
                yield from (SourceIssue(shown, problem, number) for problem in problems)
            elif isinstance(line, HeaderLine):
                if not first:
                    yield SourceIssue(
                        shown,
                        "a header may only be the first line; this one was ignored",
                        number,
                        severity="warning",
                    )
                elif line.version != SUPPORTED_VERSION:
                    yield SourceIssue(
                        shown,
                        f'field "version": version {line.version} is not supported (this '
                        f"Proctor reads version {SUPPORTED_VERSION}); upgrade Proctor to "
                        "import this file",
                        number,
                    )
                    return
                else:
                    assembler.producer = line.producer
            elif line is not None:
                assembler.add(number, line)
            first = False
        yield from assembler.bundles()
