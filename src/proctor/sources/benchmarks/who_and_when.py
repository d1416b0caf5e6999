"""Who&When failure-attribution runs as conversations.

Shape: one JSON object per failed multi-agent run::

    {question, question_ID, ground_truth, history: [{content, role, name?}],
     mistake_agent, mistake_step ("12": a 0-based index into history), mistake_reason,
     level?, is_correct? | is_corrected?, mistake_type?, system_prompt? {agent: prompt}}

Two subsets share the shape and are told apart by content: *Hand-Crafted* runs are
Magentic-One logs whose ``role`` holds the actor (``"Orchestrator (-> WebSurfer)"``) and
have no ``name``; *Algorithm-Generated* runs are CaptainAgent group chats with the agent
in ``name`` and a ``system_prompt`` per agent. The same question appears in both subsets,
so the conversation id is ``ww:<subset>:<question_ID>``.

History entry ``i`` is message ``ww:<subset>:<question_ID>:<i>``: ``mistake_step`` is
exactly that index, which makes "the finding cites message N" checkable. Agent system
prompts become instruction messages ``…:system:<agent>`` ahead of the history. The
labels (``mistake_*``, ``ground_truth`` and correctness flags) are kept only in
``attributes["labels"]``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from proctor.sources._files import RecordLines
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.benchmarks._common import (
    RECORD_ERRORS,
    RecordError,
    agent_key,
    any_of,
    check_nesting,
    content_key,
    group_chat,
    is_person,
    load_document,
    magentic_message,
    record_issue,
    require,
    string,
    text_of,
    title_from,
)
from proctor.transcript import Conversation, ConversationBundle, Message, Task, nesting_problem

HAND_CRAFTED = "hand-crafted"
ALGORITHM_GENERATED = "algorithm-generated"

_LABEL_FIELDS = (
    "mistake_agent",
    "mistake_reason",
    "mistake_type",
    "ground_truth",
    "is_correct",
    "is_corrected",
    "labels",
)


def subset_of(record: Mapping[str, Any]) -> str:
    """``algorithm-generated`` when agents are named per entry, else ``hand-crafted``."""
    history = record.get("history")
    named = isinstance(history, list) and any(
        isinstance(entry, Mapping) and "name" in entry for entry in history
    )
    return ALGORITHM_GENERATED if named or "system_prompt" in record else HAND_CRAFTED


class WhoAndWhenAdapter(SourceAdapter):
    """Who&When runs: one conversation per file, history index as message id."""

    name = "who_and_when"
    description = "Who&When multi-agent failure runs (one JSON object per run)."

    def sniff(self, sample: Sample) -> bool:
        """A JSON object with a ``history`` of content entries and a ``question``."""
        if sample.text_start != "{" or sample.is_jsonl:
            return False
        document = sample.document
        if not isinstance(document, Mapping) or "question" not in document:
            return False
        history = document.get("history")
        return isinstance(history, list) and any_of(
            history, lambda entry: isinstance(entry, Mapping) and "content" in entry
        )

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield the run's bundle, or an issue naming the field that is wrong."""
        document, issue = load_document(unit)
        if issue is not None:
            yield issue
            return
        path = unit.path
        try:
            if not isinstance(document, Mapping):
                raise RecordError("expected one JSON object per run")
            check_nesting({k: v for k, v in document.items() if k != "history"})
            bundle, warnings, skipped = self._bundle(document, str(path))
        except RECORD_ERRORS as exc:
            yield record_issue(path, "run", f"{exc}; file skipped")
            return
        lines = RecordLines(path, "history")
        for index, reason in skipped:
            yield record_issue(path, f"history[{index}]", reason, line=lines.of(index))
        for warning in warnings:
            yield record_issue(path, "run", warning, severity="warning")
        yield bundle

    def _bundle(
        self, record: Mapping[str, Any], origin: str
    ) -> tuple[ConversationBundle, list[str], list[tuple[int, str]]]:
        history = require(record, "history", list)
        question = text_of(record.get("question"))
        subset = subset_of(record)
        question_id = record.get("question_ID")
        key = question_id if isinstance(question_id, str) and question_id else None
        key = key or content_key([question, history])
        conversation_id = f"ww:{subset}:{key}"
        warnings: list[str] = []
        skipped: list[tuple[int, str]] = []
        """Steps that could not be read: their index and why."""
        prompts = record.get("system_prompt")
        messages = self._system_prompts(prompts, conversation_id)
        history_messages: list[Message] = []
        for index, entry in enumerate(history):
            # A damaged step is skipped alone; the others keep their index (mistake_step).
            if not isinstance(entry, Mapping):
                skipped.append((index, "not a JSON object; step skipped"))
                continue
            too_deep = nesting_problem(entry)
            if too_deep is not None:
                skipped.append((index, f"{too_deep}; step skipped"))
                continue
            opening = index == 0 and subset == ALGORITHM_GENERATED
            history_messages.append(
                self._message(entry, f"{conversation_id}:{index}", subset, opening=opening)
            )
        chat = group_chat(history_messages, executors=_executors(prompts, history_messages))
        messages.extend(chat.messages)
        labels: dict[str, Any] = {k: record[k] for k in _LABEL_FIELDS if k in record}
        step = record.get("mistake_step")
        if step is not None:
            labels["mistake_step"] = _step(step, len(history), warnings)
        level = record.get("level")
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=key,
            title=title_from(question),
            project_hint=f"who-and-when/{subset}",
            attributes={"labels": labels, "subset": subset, "level": level},
        )
        tasks: tuple[Task, ...] = ()
        if question.strip():
            tasks = (
                Task(
                    task_id=f"{conversation_id}:task",
                    title=title_from(question) or key,
                    goal=question,
                    status="completed",
                    attributes={"level": level} if level is not None else {},
                ),
            )
        bundle = ConversationBundle(
            conversation, tuple(messages), chat.calls, tasks=tasks, origin=origin
        )
        return bundle, warnings, skipped

    @staticmethod
    def _system_prompts(prompts: Any, conversation_id: str) -> list[Message]:
        if not isinstance(prompts, Mapping):
            return []
        return [
            Message(
                f"{conversation_id}:system:{agent}",
                "system",
                "instructions",
                text_of(prompt),
                author=str(agent),
            )
            for agent, prompt in prompts.items()
            if text_of(prompt).strip()
        ]

    @staticmethod
    def _message(
        entry: Mapping[str, Any], source_id: str, subset: str, *, opening: bool
    ) -> Message:
        text = text_of(entry.get("content"))
        role = string(entry.get("role")) or ""
        name = string(entry.get("name"))
        if subset == HAND_CRAFTED or name is None:
            return magentic_message(source_id, role or "unknown", text)
        attributes = {"role": role}
        if opening or is_person(name):
            # A group chat starts with the message that poses the task to the group
            # (recorded under the name of the agent that relayed it): the run's prompt.
            # A person in the chat prompts too.
            return Message(source_id, "user", "prompt", text, author=name, attributes=attributes)
        # CaptainAgent's user/assistant roles are the recorder's point of view; every
        # named speaker is an agent of the group chat.
        return Message(source_id, "assistant", "reply", text, author=name, attributes=attributes)


def _executors(prompts: Any, messages: list[Message]) -> frozenset[str]:
    """Speakers that are programs: in a chat whose agents each have a system prompt, the
    speakers without one (the group chat's code-running terminal), people aside."""
    if not isinstance(prompts, Mapping) or not prompts:
        return frozenset()
    agents = {agent_key(str(name)) for name in prompts}
    return frozenset(
        m.author
        for m in messages
        if m.role == "assistant"
        and m.author
        and agent_key(m.author) not in agents
        and not is_person(m.author)
    )


def _step(value: Any, length: int, warnings: list[str]) -> Any:
    """``mistake_step`` as an int index into history; odd values are kept as given."""
    try:
        step = int(value)
    except (TypeError, ValueError, OverflowError):
        warnings.append(f"mistake_step {value!r} is not an index; kept as given")
        return value
    if not 0 <= step < length:
        warnings.append(f"mistake_step {step} is outside history (length {length})")
    return step
