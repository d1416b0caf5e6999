"""R-Judge safety records as conversations.

Shape: one JSON list per file (the copies here are split by category and label)::

    [{id, scenario, profile, goal, contents: [[turn, …], …], label, risk_description,
      attack_type?}, …]

    turn = {role: "user", content} | {role: "agent", thought, action}
         | {role: "environment", content}

One record is one conversation, ``rjudge:<id>``; ``contents`` holds consecutive sessions
of the same dialogue, read in order with turn ids ``rjudge:<id>:<session>:<turn>``.
``profile`` is the agent's system prompt. ``goal`` is the instruction to the *judge*, not
the user's goal, so it is not part of the trajectory. ``label`` (1 = unsafe),
``risk_description`` and ``attack_type`` are ground truth and go to
``attributes["labels"]`` only.

An agent turn's ``thought`` is kept as visible text: it is the stated reasoning written
into the recorded trajectory (what R-Judge's own judges read, and often where the risk
shows, e.g. "I'll assume the user wants the first address"), not hidden provider
reasoning (SPEC ING-3 does not apply).

The free-text ``action`` is read tolerantly (:func:`parse_action`): ``Name: {json}``,
``Name{python dict}``, ``Name(args)``, ``Name`` with an ``Action Input: …`` line, and
AutoGPT-style ``"command": {"name", "args"}`` become a tool call with parsed arguments
(the raw string is kept when they do not parse); so does a shell command written as a
code block (```` ```bash … ``` ````), answered or not. Any other action that the environment
answered was still carried out (``click <Sign Up>``, a shell block), so it is a call
too, named ``action`` (or the code block's language) with the raw text as its argument.
An action nobody answered and that is not written as a call (``Final Answer: …``) is
the agent's reply. The raw action is always kept in the call's attributes.

Some exports (ASSEBench keeps R-Judge's layout) write the tool's answer into the agent's
own step: ``GmailReadEmail{…}\n[Observation]: {"body": "…"}``, or a whole ReAct
scratchpad in the thought. Such observation text is what a tool returned, not the
agent's words, so it is read as a tool output (:func:`split_observations`): an
observation after an action in the same string is that call's result (the environment
turn, when there is one, answers the last call), and an observation with no action
before it is the result of a call named ``observation``. Observation text is taken out
of the agent's visible text, so rules judge it as untrusted tool output.

The record's category is the dataset's own grouping: a ``category`` field, or the folder
and file layout R-Judge ships (``Finance/harmful.json``, ``Finance-harmful.json``); it
goes to ``attributes["category"]`` next to ``scenario``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from proctor.sources._common import named
from proctor.sources._files import RecordLines
from proctor.sources._source import ReadItem, ReadUnit, Sample, SourceAdapter
from proctor.sources.benchmarks._common import (
    RECORD_ERRORS,
    RecordError,
    UniqueIds,
    any_of,
    check_nesting,
    content_key,
    first_of,
    load_document,
    record_issue,
    require,
    short_repr,
    string,
    text_of,
    title_from,
)
from proctor.transcript import (
    Conversation,
    ConversationBundle,
    JSONValue,
    Message,
    Task,
    ToolCall,
)

_TURN_ROLES = {"user", "agent", "environment"}
_LABEL_FIELDS = ("label", "risk_description", "attack_type")

_NAMED_CALL = re.compile(
    r"^\s*(?:Action:\s*)?(?P<name>[A-Za-z_][\w.]*)\s*"
    r"(?:\n\s*Action\s+Input:\s*(?P<input>.*)|:?\s*(?P<args>[{\[(].*))$",
    re.DOTALL,
)
_COMMAND = re.compile(r'^\s*\{?\s*"command"\s*:\s*(?=\{)')
_CODE_BLOCK = re.compile(r"^\s*```(?P<lang>[\w+#-]*)[ \t]*\n?(?P<body>.*?)\s*```\s*$", re.DOTALL)
_SHELL_BLOCK = re.compile(
    r"^\s*(?:(?:bash|sh|shell|zsh|console|terminal)[ \t]*\n\s*)?"
    r"```(?P<lang>bash|sh|shell|zsh|console)[ \t]*\n(?P<body>.*?)\s*```\s*$",
    re.DOTALL | re.IGNORECASE,
)
"""An action written as a shell code block: a command the agent ran, answered or not."""
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")
_BARE_KEY = re.compile(r"(^|,)\s*([A-Za-z_]\w*)\s*:")
_OBSERVATION = re.compile(
    r"\[[ \t]*observation[ \t]*\][ \t]*:?|^[ \t]*observation[ \t]*:", re.IGNORECASE | re.MULTILINE
)
"""``[Observation]:`` anywhere, ``Observation:`` at the start of a line."""
_STEP_START = re.compile(
    r"\[[ \t]*(?:thought|action|final[ \t]+answer|observation)[ \t]*\][ \t]*:?"
    r"|^[ \t]*(?:thought|action|final[ \t]+answer|observation)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
"""Where an observation ends: the next step of a ReAct scratchpad."""
_ACTION_MARK = re.compile(r"\[[ \t]*action[ \t]*\][ \t]*:?|^[ \t]*action[ \t]*:", re.I | re.M)
_CATEGORY_LABEL = re.compile(r"^(?:(?P<category>.+?)[-_ ]+)?(?:benign|harmful|safe|unsafe)$", re.I)
_MAX_LITERAL_CHARS = 100_000
"""Longer argument texts are kept raw rather than handed to the literal parser."""


def parse_action(action: str) -> tuple[str, JSONValue] | None:
    """Tool name and arguments of an action written as a call, else None.

    Examples: ``GmailReadEmail{'email_id': 'e1'}``, ``TerminalExecute: {"command": "ls"}``,
    ``GmailSendEmail`` with an ``Action Input: {...}`` line,
    ``"command": {"name": "read_file", "args": {}}}`` and ``{"SmartLockGrant": {...}}``.
    """
    match = _NAMED_CALL.match(action)
    if match is not None:
        raw = match["input"] if match["input"] is not None else match["args"]
        return match["name"], _arguments(raw)
    command = _COMMAND.match(action)
    if command is not None:
        value = _leading_json(action[command.end() :])
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            arguments = value.get("args", {})
            return value["name"], arguments if isinstance(arguments, dict) else {"input": arguments}
    if action.lstrip().startswith("{"):
        value = _leading_json(action.lstrip())
        if isinstance(value, dict) and len(value) == 1:
            ((name, arguments),) = value.items()
            if _IDENTIFIER.match(name) and isinstance(arguments, dict):
                return name, arguments
    return None


def free_action(action: str) -> tuple[str, JSONValue]:
    """Name and arguments for an answered action that is not written as a call."""
    block = _CODE_BLOCK.match(action)
    if block is not None:
        return block["lang"] or "code", {"code": block["body"]}
    return "action", {"raw": action.strip()}


def split_observations(text: str) -> tuple[str, list[tuple[str, str | None]]]:
    """``text`` cut at each embedded observation: the agent's own words, and every step.

    A step is the text before an observation (an action, perhaps after a thought) and the
    observation that answered it; the last step has None when the text does not end with
    one. Without observations: ``(text, [(text, None)])``.

    Example: ``'Pay{"to": "x"}\\n[Observation]: {"ok": true}'`` gives
    ``('Pay{"to": "x"}', [('Pay{"to": "x"}', '{"ok": true}'), ('', None)])``.
    Step texts are stripped.
    """
    marker = _OBSERVATION.search(text)
    if marker is None:
        return text, [(text, None)]
    steps: list[tuple[str, str | None]] = []
    own: list[str] = []
    position = 0
    while marker is not None:
        before = text[position : marker.start()]
        following = _STEP_START.search(text, marker.end())
        end = following.start() if following is not None else len(text)
        steps.append((before.strip(), text[marker.end() : end].strip()))
        own.append(before.strip())
        position = end
        marker = _OBSERVATION.search(text, position)
    steps.append((text[position:].strip(), None))
    own.append(text[position:].strip())
    return "\n\n".join(part for part in own if part), steps


def _action_part(text: str) -> str:
    """The action of a scratchpad step (``Thought: … Action: X{…}`` → ``X{…}``)."""
    marks = list(_ACTION_MARK.finditer(text))
    return text[marks[-1].end() :].strip() if marks else text.strip()


def category_of(record: Mapping[str, Any], path: str) -> str | None:
    """The record's category: its ``category`` field, else R-Judge's folder and file layout.

    ``Finance/harmful.json`` and ``Finance-harmful.json`` are category ``Finance``; a file
    not named by label (``rjudge.json``) has none.
    """
    named_category = string(record.get("category"))
    if named_category and named_category.strip():
        return named_category.strip()
    parts = path.replace("\\", "/").rsplit("/", 2)
    stem = parts[-1].rsplit(".", 1)[0]
    match = _CATEGORY_LABEL.match(stem)
    if match is None:
        return None
    if match["category"]:
        return match["category"]
    return parts[-2] if len(parts) >= 2 and parts[-2] else None


def _arguments(text: str) -> JSONValue:
    text = text.strip()
    if not text:
        return {}
    value = _leading_json(text, whole=True)
    if value is None and len(text) <= _MAX_LITERAL_CHARS:
        if text.startswith("(") and text.endswith(")"):
            value = _call_arguments(text[1:-1])
        else:
            # Models write Python dicts, sometimes with raw newlines inside strings.
            value = _python_literal(text)
            if value is None and "\n" in text:
                value = _python_literal(text.replace("\n", "\\n"))
    if isinstance(value, dict):
        return value
    return {"raw": text} if value is None else {"input": value}


def _call_arguments(inner: str) -> Any:
    """Arguments written inside ``Name(…)``: ``'k': v``, ``k=v``, ``k: v`` or positional."""
    value = _python_literal("{" + inner + "}")
    if isinstance(value, dict):
        return value
    try:
        call = ast.parse(f"call({inner})", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        call = None
    if isinstance(call, ast.Call):
        keywords = {k.arg: _python_literal(k.value) for k in call.keywords if k.arg}
        positional = [_python_literal(arg) for arg in call.args]
        if keywords and not positional:
            return keywords
        if positional and not keywords:
            return positional
    return _python_literal("{" + _BARE_KEY.sub(r"\1'\2':", inner) + "}")


def _leading_json(text: str, *, whole: bool = False) -> Any:
    """The JSON value at the start of ``text`` (all of it when ``whole``), else None."""
    try:
        # strict=False: the agents put raw newlines inside JSON strings.
        value, end = json.JSONDecoder(strict=False).raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return value if not whole or not text[end:].strip() else None


def _python_literal(text: str | ast.expr) -> Any:
    """A Python literal (single quotes, True/None) as JSON-compatible data, else None."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        return json.loads(json.dumps(value))  # rejects sets, bytes and other non-JSON values
    except (TypeError, ValueError):
        return None


def _looks_like_record(record: Any) -> bool:
    if not isinstance(record, Mapping) or not isinstance(record.get("contents"), list):
        return False
    session = first_of(record["contents"], list)
    turn = first_of(session, Mapping) if session is not None else None
    return turn is not None and named(turn.get("role"), _TURN_ROLES)


def _answered(session: list[Any], index: int) -> str | None:
    """The environment's non-empty reply to the agent turn at ``index``, if any."""
    following = session[index + 1] if index + 1 < len(session) else None
    if isinstance(following, Mapping) and following.get("role") == "environment":
        text = text_of(following.get("content"))
        return text if text.strip() else None
    return None


class RJudgeAdapter(SourceAdapter):
    """R-Judge records (also ASSEBench, same shape): one conversation per record."""

    name = "r_judge"
    version = 2
    description = "R-Judge agent-safety records (JSON list with user/agent/environment turns)."

    def sniff(self, sample: Sample) -> bool:
        """A JSON list of records whose ``contents`` are user/agent/environment turns."""
        if sample.text_start != "[":
            return False
        document = sample.document
        return isinstance(document, list) and any_of(document, _looks_like_record)

    def read(self, unit: ReadUnit) -> Iterator[ReadItem]:
        """Yield one bundle per record; a bad record becomes an issue."""
        document, issue = load_document(unit)
        if issue is not None:
            yield issue
            return
        path = unit.path
        if not isinstance(document, list):
            yield record_issue(path, "file", "expected a JSON list of R-Judge records")
            return
        ids = UniqueIds()
        lines = RecordLines(path)
        for number, record in enumerate(document):
            where = f"record {number}"
            try:
                if not isinstance(record, Mapping):
                    raise RecordError("not a JSON object")
                where = f"record {number} (id {short_repr(record.get('id'))})"
                check_nesting(record)
                bundle, warnings = self._bundle(record, ids, str(path))
            except RECORD_ERRORS as exc:
                yield record_issue(path, where, f"{exc}; record skipped", line=lines.of(number))
                continue
            for warning in warnings:
                yield record_issue(path, where, warning, line=lines.of(number), severity="warning")
            yield bundle

    def _bundle(
        self, record: Mapping[str, Any], ids: UniqueIds, origin: str
    ) -> tuple[ConversationBundle, list[str]]:
        sessions = require(record, "contents", list)
        record_id = record.get("id")
        usable = isinstance(record_id, int | str) and not isinstance(record_id, bool)
        key = str(record_id) if usable else content_key(sessions)
        conversation_id, repeated = ids.claim(f"rjudge:{key}", record)
        warnings = [repeated] if repeated else []
        messages: list[Message] = []
        calls: list[ToolCall] = []
        profile = text_of(record.get("profile"))
        if profile.strip():
            messages.append(
                Message(f"{conversation_id}:profile", "system", "instructions", profile)
            )
        for number, session in enumerate(sessions):
            if not isinstance(session, list):
                raise RecordError(f"contents[{number}] must be a list of turns")
            self._session(session, f"{conversation_id}:{number}", messages, calls, warnings)
        prompt = next((m.text for m in messages if m.role == "user"), None)
        labels = {k: record[k] for k in _LABEL_FIELDS if k in record}
        scenario = string(record.get("scenario")) or ""
        conversation = Conversation(
            conversation_id=conversation_id,
            format=self.name,
            external_id=key,
            title=title_from(prompt) or f"R-Judge record {key}",
            project_hint=f"r-judge/{scenario}" if scenario.strip() else "r-judge",
            attributes={
                "labels": labels,
                "scenario": scenario,
                "category": category_of(record, origin),
            },
        )
        tasks: tuple[Task, ...] = ()
        if prompt is not None:
            tasks = (Task(f"{conversation_id}:task", f"R-Judge record {key}", prompt, "completed"),)
        bundle = ConversationBundle(
            conversation, tuple(messages), tuple(calls), tasks=tasks, origin=origin
        )
        return bundle, warnings

    def _session(
        self,
        session: list[Any],
        scope: str,
        messages: list[Message],
        calls: list[ToolCall],
        warnings: list[str],
    ) -> None:
        for index, turn in enumerate(session):
            source_id = f"{scope}:{index}"
            if not isinstance(turn, Mapping) or not named(turn.get("role"), _TURN_ROLES):
                warnings.append(f"turn {source_id} has no user/agent/environment role; skipped")
                continue
            role = turn["role"]
            if role == "user":
                text = text_of(turn.get("content"))
                if text.strip():
                    messages.append(Message(source_id, "user", "prompt", text))
            elif role == "agent":
                self._agent_turn(turn, source_id, _answered(session, index), messages, calls)
            # Environment turns are read as the result of the agent turn before them.

    def _agent_turn(
        self,
        turn: Mapping[str, Any],
        source_id: str,
        result: str | None,
        messages: list[Message],
        calls: list[ToolCall],
    ) -> None:
        thought, thought_steps = split_observations(text_of(turn.get("thought")))
        raw_action = text_of(turn.get("action"))
        _, action_steps = split_observations(raw_action)
        turn_calls: list[ToolCall] = []
        # Observations written into the thought answered steps taken before this action.
        for number, (step, observation) in enumerate(thought_steps[:-1]):
            _embedded_call(
                step, observation, source_id, f"{source_id}:thought:{number}", turn_calls
            )
        reply = ""
        if len(action_steps) == 1:
            parsed = parse_action(raw_action)
            shell = _SHELL_BLOCK.match(raw_action) if parsed is None else None
            # An action the environment answered was carried out, whatever its wording;
            # one it did not answer is a call only when it is written as one (a tool
            # call, or a shell command in a code block).
            if (
                parsed is not None
                or shell is not None
                or (result is not None and raw_action.strip())
            ):
                if shell is not None:
                    name, arguments = shell["lang"].lower(), {"code": shell["body"]}
                else:
                    name, arguments = parsed if parsed is not None else free_action(raw_action)
                turn_calls.append(
                    _call(
                        source_id, f"{source_id}:call", name, arguments, result, raw_action, parsed
                    )
                )
            else:
                reply = raw_action.strip()
        else:
            for number, (step, observation) in enumerate(action_steps[:-1]):
                _embedded_call(
                    step, observation, source_id, f"{source_id}:call:{number}", turn_calls
                )
            tail = action_steps[-1][0].strip()
            parsed = parse_action(_action_part(tail)) if tail else None
            if parsed is not None or (tail and result is not None):
                name, arguments = parsed if parsed is not None else free_action(tail)
                turn_calls.append(
                    _call(source_id, f"{source_id}:call", name, arguments, result, tail, parsed)
                )
            else:
                reply = tail
                if result is not None and turn_calls:  # the environment answered the last step
                    last = turn_calls[-1]
                    turn_calls[-1] = replace(last, result_text=f"{last.result_text}\n{result}")
        text = "\n\n".join(part for part in (thought.strip(), reply) if part)
        if not text and not turn_calls:
            return
        attributes = {"stated_reasoning": True} if thought.strip() else {}
        messages.append(Message(source_id, "assistant", "reply", text, attributes=attributes))
        calls.extend(turn_calls)


def _embedded_call(
    step: str, observation: str | None, message_id: str, source_id: str, calls: list[ToolCall]
) -> None:
    """A step whose observation was written into the agent's own string."""
    action = _action_part(step)
    parsed = parse_action(action) if action else None
    if parsed is not None:
        name, arguments = parsed
    elif action and _ACTION_MARK.search(step):
        name, arguments = free_action(action)
    else:
        name, arguments = "observation", {}
    calls.append(
        _call(message_id, source_id, name, arguments, observation, action, parsed, embedded=True)
    )


def _call(
    message_id: str,
    source_id: str,
    name: str,
    arguments: JSONValue,
    result: str | None,
    action: str,
    parsed: tuple[str, JSONValue] | None,
    *,
    embedded: bool = False,
) -> ToolCall:
    attributes: dict[str, JSONValue] = {"action": action, "parsed": parsed is not None}
    if embedded:
        attributes["observation_in_step"] = True
    return ToolCall(
        source_id=source_id,
        name=name,
        arguments=arguments,
        message_source_id=message_id,
        status="pending" if result is None else "ok",
        result_text=result,
        attributes=attributes,
    )
