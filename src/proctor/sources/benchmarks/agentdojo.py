"""AgentDojo prompt-injection runs (trace exports) as conversations.

Shape: JSON Lines. The first line is a header, ``{"metadata": {"benchmark": "agent-dojo",
"accuracy": …, "name": <model and defense>}}``; every later line is one run::

    {index, messages: [OpenAI-chat messages; assistant tool_calls carry OBJECT
     arguments; role "tool" results add tool_call_id, a tool_call echo and error],
     metadata: {suite_name, model, success, security, user_task_id,
                injection_task_id | null, attack_type, hierarchy_path, name},
     annotations: [explorer annotations]}

One run is one conversation, ``agentdojo:<run name>:<index>``: the run name (from the
header, else the record's model) keeps the 194 records of each model file apart, since
every file numbers its records from 1. ``metadata`` is the benchmark's ground truth
(``security`` true on a run with an injection task means the agent was hijacked;
``success`` is utility; even the run's ``name`` says whether it was attacked) and is
kept only in ``attributes["labels"]``; the header goes to ``attributes["run"]``. The
injected text itself sits in tool results, where the supervisor must find it. Tool
results are not messages: each is the result of its call (see
:func:`~proctor.sources.benchmarks._common.read_chat` for pairing without reliable
ids). Inline ``<thinking>`` text in replies is left for
:func:`proctor.sources.prepare_bundle` to remove (SPEC ING-3).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from proctor.sources._files import iter_jsonl
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.benchmarks._common import (
    RECORD_ERRORS,
    UniqueIds,
    read_chat,
    record_issue,
    require,
    string,
    title_from,
)
from proctor.transcript import Conversation, ConversationBundle, SourceIssue, Task

_LABEL_FIELDS = (
    "name",  # e.g. "user_task_6[important_instructions]": it tells attacked runs apart
    "suite_name",
    "user_task_id",
    "injection_task_id",
    "attack_type",
    "success",
    "security",
)


def _is_header(record: Mapping[str, Any]) -> bool:
    metadata = record.get("metadata")
    return (
        "messages" not in record
        and isinstance(metadata, Mapping)
        and metadata.get("benchmark") == "agent-dojo"
    )


def _is_run(record: Mapping[str, Any]) -> bool:
    metadata = record.get("metadata")
    return (
        isinstance(record.get("messages"), list)
        and isinstance(metadata, Mapping)
        and "user_task_id" in metadata
        and "suite_name" in metadata
    )


class AgentDojoAdapter(SourceAdapter):
    """AgentDojo trace exports: one conversation per run, labels kept apart."""

    name = "agentdojo"
    description = "AgentDojo prompt-injection runs (JSONL trace export with a header line)."

    def sniff(self, sample: Sample) -> bool:
        """A JSONL file whose header names the benchmark, or whose records are runs."""
        if sample.text_start != "{":
            return False
        return any(_is_header(r) or _is_run(r) for r in sample.records[:3])

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield one bundle per run; bad lines and records become issues."""
        path = unit.path
        run: dict[str, Any] = {}
        ids = UniqueIds()
        for item in iter_jsonl(path):
            if isinstance(item, SourceIssue):
                yield item
                continue
            line, record = item
            if _is_header(record):
                run = dict(record["metadata"])
                continue
            where = f"record on line {line}"
            try:
                bundle, warnings = self._bundle(record, run, ids, str(path))
            except RECORD_ERRORS as exc:
                yield record_issue(path, where, f"{exc}; record skipped", line=line)
                continue
            for warning in warnings:
                yield record_issue(path, where, warning, line=line, severity="warning")
            yield bundle

    def _bundle(
        self, record: Mapping[str, Any], run: Mapping[str, Any], ids: UniqueIds, origin: str
    ) -> tuple[ConversationBundle, list[str]]:
        index = require(record, "index", int, str)
        metadata = require(record, "metadata", Mapping)
        model = string(metadata.get("model"))
        run_name = str(run.get("name") or model or "unknown")
        conversation_id, repeated = ids.claim(f"agentdojo:{run_name}:{index}", record)
        parts = read_chat(
            record.get("messages"),
            conversation_id,
            model=model,
            error_of=lambda item: string(item.get("error")),
        )
        warnings = [*([repeated] if repeated else []), *parts.warnings]
        suite = string(metadata.get("suite_name"))
        user_task = metadata.get("user_task_id")
        prompt = next((m.text for m in parts.messages if m.role == "user"), None)
        labels = {key: metadata[key] for key in _LABEL_FIELDS if key in metadata}
        attributes: dict[str, Any] = {"labels": labels, "run": dict(run)}
        if "hierarchy_path" in metadata:
            attributes["hierarchy_path"] = metadata["hierarchy_path"]
        annotations = record.get("annotations")
        if isinstance(annotations, list) and annotations:
            attributes["annotations"] = annotations
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=str(index),
            title=title_from(prompt) or f"AgentDojo run {index}",
            project_hint=f"agentdojo/{suite}" if suite else "agentdojo",
            model=model,
            attributes=attributes,
        )
        tasks: tuple[Task, ...] = ()
        if prompt is not None:
            tasks = (
                Task(
                    task_id=f"{conversation_id}:task",
                    title=f"{suite}/{user_task}" if suite else str(user_task),
                    goal=prompt,
                    # The run is over; whether it succeeded is a label, not a status.
                    status="completed",
                ),
            )
        bundle = ConversationBundle(
            conversation=conversation,
            messages=tuple(parts.messages),
            tool_calls=tuple(parts.tool_calls),
            tasks=tasks,
            origin=origin,
        )
        return bundle, warnings
