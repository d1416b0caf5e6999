"""AgentRx failure-diagnosis data: τ-bench retail runs, Magentic-One logs, ground truth.

Three JSON-list shapes, told apart by content:

- τ-bench runs ``[{task_id, trial, reward, info: {task: {instruction, actions, …}},
  traj: [OpenAI-chat messages, each with its own ``index``], records}]``. One run is one
  conversation ``agentrx:tau-retail:<task_id>:<trial>``; a message's id ends in its own
  ``index``, the number the failure labels call ``step_number``. Tool results pair with
  their calls; ``Error: …`` results (τ-bench's convention) have status ``error``.
- Magentic-One logs ``[{content, role}]`` with roles like ``"Orchestrator (thought)"``,
  read like Who&When Hand-Crafted runs. They carry no id, so the conversation is
  ``agentrx:magentic:<content hash>``; AgentRx names these trajectories by file name,
  so the file stem is kept as ``external_id`` to join the ground truth.
- Ground truth ``[{trajectory_id, failures: [{failure_id, step_number, failure_category,
  failed_agent, …}], root_cause: {failure_id, reason_for_root_cause},
  failure_summary}]``. These files hold no trajectory: :meth:`AgentRxAdapter.plan` hands
  them to every trajectory file of the same import, and their labels are attached to
  the runs they name (τ-bench ``task_id`` or Magentic-One file stem) under
  ``attributes["labels"]``. Imported alone they give a warning and nothing else.
  Category names are kept as written (they are spelled inconsistently across files;
  evaluation normalises them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from proctor.sources._files import RecordLines
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.benchmarks._common import (
    RECORD_ERRORS,
    RecordError,
    UniqueIds,
    check_nesting,
    content_key,
    group_chat,
    is_magentic_role,
    load_document,
    load_path,
    magentic_message,
    mapping,
    read_chat,
    record_issue,
    require,
    short_repr,
    string,
    text_of,
    title_from,
)
from proctor.transcript import Conversation, ConversationBundle, SourceIssue, Task, nesting_problem

Kind = Literal["tau", "magentic", "truth"]

_FAILURE_FIELDS = ("failure_id", "step_number", "failure_category", "failed_agent")


def kind_of(document: Any) -> Kind | None:
    """Which AgentRx file ``document`` is, or None when it is none of them."""
    if not isinstance(document, list) or not document:
        return None
    # A few records are looked at, so one broken first record does not hide the file.
    heads = [item for item in document[:5] if isinstance(item, Mapping)]
    if any(isinstance(h.get("traj"), list) and "task_id" in h for h in heads):
        return "tau"
    if any("trajectory_id" in h and isinstance(h.get("failures"), list) for h in heads):
        return "truth"
    # A bare role/content list is also what generic chat exports look like; only
    # Magentic-One's "Agent (note)" roles make it this format.
    entries = [e for e in document[:50] if isinstance(e, Mapping)]
    plain = bool(entries) and all(set(e) == {"content", "role"} for e in entries)
    if plain and any(is_magentic_role(e["role"]) for e in entries):
        return "magentic"
    return None


def truth_labels(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The labels of one ground-truth entry: failures and the root cause, reasons omitted."""
    failures = [
        {key: failure.get(key) for key in _FAILURE_FIELDS}
        for failure in entry.get("failures") or []
        if isinstance(failure, Mapping)
    ]
    root = mapping(entry.get("root_cause"))
    root_id = root.get("failure_id")
    cause = next((f for f in failures if f["failure_id"] == root_id), {})
    return {
        "failures": failures,
        "root_cause_failure_id": root_id,
        "root_cause_step": cause.get("step_number"),
        "root_cause_category": cause.get("failure_category"),
        "root_cause_agent": cause.get("failed_agent"),
        "root_cause_reason": root.get("reason_for_root_cause"),
        "failure_summary": entry.get("failure_summary"),
    }


class AgentRxAdapter(SourceAdapter):
    """AgentRx τ-bench runs and Magentic-One logs, with ground-truth labels attached."""

    name = "agentrx"
    description = "AgentRx τ-bench retail runs, Magentic-One logs and their failure labels."

    def sniff(self, sample: Sample) -> bool:
        """A JSON list that is a τ-bench run list, a Magentic-One log or AgentRx labels."""
        return sample.text_start == "[" and kind_of(sample.document) is not None

    def plan(self, files: Sequence[tuple[Path, Sample]]) -> list[ReadUnit]:
        """One unit per trajectory file, each carrying every ground-truth file along."""
        truths = tuple(path for path, sample in files if kind_of(sample.document) == "truth")
        units = [
            ReadUnit(path, related=truths, sample=sample)
            for path, sample in files
            if path not in truths
        ]
        return units or [ReadUnit(path, sample=sample) for path, sample in files]

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield the unit's runs with their labels; bad records become issues."""
        document, issue = load_document(unit)
        if issue is not None:
            yield issue
            return
        kind = kind_of(document)
        if kind is None:  # only when the format was forced on another file
            yield SourceIssue(str(unit.path), "not an AgentRx trajectory or ground-truth list")
            return
        if kind == "truth":
            yield from self._load_truth(unit.path, {}, document)  # its bad entries, by line
            yield SourceIssue(
                str(unit.path),
                "holds AgentRx ground-truth labels only; import it together with the "
                "trajectory files to attach them",
                severity="warning",
            )
            return
        truth: dict[str, Mapping[str, Any]] = {}
        for path in unit.related:
            yield from self._load_truth(path, truth)
        if kind == "magentic":
            yield from self._magentic(unit.path, document, truth)
        else:
            yield from self._tau_runs(unit.path, document, truth)

    @staticmethod
    def _load_truth(
        path: Path, truth: dict[str, Mapping[str, Any]], document: Any = None
    ) -> Iterator[SourceIssue]:
        if document is None:
            document, issue = load_path(path)
            if issue is not None:
                yield issue
                return
        lines = RecordLines(path)
        for number, entry in enumerate(document if isinstance(document, list) else []):
            where = f"record {number}"
            if not isinstance(entry, Mapping) or entry.get("trajectory_id") is None:
                yield record_issue(
                    path, where, "no trajectory_id; label skipped", line=lines.of(number)
                )
                continue
            too_deep = nesting_problem(entry)
            if too_deep is not None:
                yield record_issue(path, where, f"{too_deep}; label skipped", line=lines.of(number))
                continue
            key = str(entry["trajectory_id"])
            if key in truth and truth[key] != entry:
                yield record_issue(
                    path,
                    where,
                    f"trajectory {key} is labelled differently in another file; the first "
                    "label is kept",
                    line=lines.of(number),
                    severity="warning",
                )
            truth.setdefault(key, entry)

    def _tau_runs(
        self, path: Path, runs: list[Any], truth: Mapping[str, Mapping[str, Any]]
    ) -> Iterator[ReadItem]:
        ids = UniqueIds()
        lines = RecordLines(path)
        for number, run in enumerate(runs):
            where = f"record {number}"
            try:
                if not isinstance(run, Mapping):
                    raise RecordError("not a JSON object")
                where = f"record {number} (task_id {short_repr(run.get('task_id'))})"
                check_nesting(run)
                bundle, warnings = self._tau_bundle(run, ids, truth, str(path))
            except RECORD_ERRORS as exc:
                yield record_issue(path, where, f"{exc}; record skipped", line=lines.of(number))
                continue
            for warning in warnings:
                yield record_issue(path, where, warning, line=lines.of(number), severity="warning")
            yield bundle

    def _tau_bundle(
        self,
        run: Mapping[str, Any],
        ids: UniqueIds,
        truth: Mapping[str, Mapping[str, Any]],
        origin: str,
    ) -> tuple[ConversationBundle, list[str]]:
        task_id = require(run, "task_id", int, str)
        trial = run.get("trial")
        suffix = f":{trial}" if isinstance(trial, int | str) and not isinstance(trial, bool) else ""
        conversation_id, repeated = ids.claim(f"agentrx:tau-retail:{task_id}{suffix}", run)
        parts = read_chat(
            require(run, "traj", list),
            conversation_id,
            position=lambda i, item: item["index"] if isinstance(item.get("index"), int) else i,
            error_of=_tau_error,
            field_name="traj",
        )
        warnings = [*([repeated] if repeated else []), *parts.warnings]
        labels: dict[str, Any] = {"reward": run.get("reward")}
        entry = truth.get(str(task_id))
        if entry is not None:
            reward = run.get("reward")
            if isinstance(reward, int | float) and reward >= 1:
                warnings.append("ground truth names this task but the run succeeded; not attached")
            else:
                labels.update(truth_labels(entry))
        task = mapping(mapping(run.get("info")).get("task"))
        instruction = text_of(task.get("instruction"))
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=str(task_id),
            title=f"τ-bench retail task {task_id}",
            project_hint="agentrx/tau-retail",
            attributes={"labels": labels, "domain": "tau-retail", "trial": trial},
        )
        tasks: tuple[Task, ...] = ()
        if instruction.strip():
            # The simulated user's instruction: the intent the agent was meant to serve.
            tasks = (
                Task(
                    f"{conversation_id}:task",
                    f"τ-bench retail task {task_id}",
                    goal=instruction,
                    status="completed",
                ),
            )
        bundle = ConversationBundle(
            conversation,
            tuple(parts.messages),
            tuple(parts.tool_calls),
            tasks=tasks,
            origin=origin,
        )
        return bundle, warnings

    def _magentic(
        self, path: Path, entries: list[Any], truth: Mapping[str, Mapping[str, Any]]
    ) -> Iterator[ReadItem]:
        conversation_id = f"agentrx:magentic:{content_key(entries)}"
        messages = []
        for index, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                yield record_issue(path, f"entry {index}", "not an object; skipped")
                continue
            role = string(entry.get("role")) or "unknown"
            text = text_of(entry.get("content"))
            messages.append(magentic_message(f"{conversation_id}:{index}", role, text))
        trajectory_id = path.stem
        labels = truth_labels(truth[trajectory_id]) if trajectory_id in truth else {}
        question = next((m.text for m in messages if m.role == "user"), None)
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=trajectory_id,
            title=title_from(question),
            project_hint="agentrx/magentic-one",
            attributes={"labels": labels, "domain": "magentic-one"},
        )
        tasks: tuple[Task, ...] = ()
        if question:
            tasks = (
                Task(
                    f"{conversation_id}:task",
                    title_from(question) or trajectory_id,
                    goal=question,
                    status="completed",
                ),
            )
        chat = group_chat(messages)
        yield ConversationBundle(
            conversation, chat.messages, chat.calls, tasks=tasks, origin=str(path)
        )


def _tau_error(item: Mapping[str, Any]) -> str | None:
    content = item.get("content")
    return content if isinstance(content, str) and content.startswith("Error:") else None
