"""What the benchmark adapters share: loading, record ids, labels, chat pairing, agent roles.

Benchmarks are labelled recordings, not live logs, so every adapter here follows the same
rules:

- ids come from the record's own ids (``index``, ``id``, ``question_ID``, ``task_id``,
  ``sample_id``), never from the file path; a record without one is named by a hash of
  its content, so the same data imported from another folder gets the same ids;
- the benchmark's ground truth goes to ``Conversation.attributes["labels"]`` and never
  into message text, so a supervisor under evaluation cannot read the answer;
- a bad record becomes a :class:`SourceIssue` naming the record and the field, and the
  rest of the file is still read.

Two record shapes recur across benchmarks and are parsed here once: OpenAI-chat message
lists with tool calls (AgentDojo, τ-bench in AgentRx) and Magentic-One speaker roles such
as ``"Orchestrator (-> WebSurfer)"`` (Who&When Hand-Crafted, AgentRx Magentic-One logs).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from proctor.errors import SourceError
from proctor.sources._files import load_json_document
from proctor.sources._source import ReadUnit
from proctor.transcript import (
    JSONValue,
    Message,
    MessageKind,
    Role,
    SourceIssue,
    ToolCall,
    ToolStatus,
    canonical_json,
    nesting_problem,
)

TITLE_CHARS = 100
"""Longest title taken from a record's first prompt or question."""


class RecordError(ValueError):
    """A record cannot be read; the message names the field that is wrong."""


RECORD_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError)
"""What reading one malformed record can raise: it becomes an issue for that record."""


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for naming a record in an issue."""
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def check_nesting(record: Any) -> None:
    """Raise ``RecordError`` naming the field when a record nests past the limit."""
    problem = nesting_problem(record)
    if problem is not None:
        raise RecordError(problem)


def load_document(unit: ReadUnit) -> tuple[Any, SourceIssue | None]:
    """The unit's whole-file JSON document, reusing the detection sample's parse."""
    if unit.sample is not None and unit.sample.path == unit.path:
        document = unit.sample.document
        if document is not None:
            return document, None
    return load_path(unit.path)


def load_path(path: Path) -> tuple[Any, SourceIssue | None]:
    """A whole-file JSON document, or the issue that says why it cannot be read."""
    try:
        return load_json_document(path), None
    except SourceError as exc:
        return None, SourceIssue(str(path), exc.reason, exc.line)
    except OSError as exc:
        return None, SourceIssue(str(path), f"cannot read: {exc.strerror or exc}")


def content_key(value: Any) -> str:
    """A short, stable hash of a JSON value: the id of records that carry none."""
    digest = hashlib.blake2b(canonical_json(value).encode(), digest_size=8)
    return digest.hexdigest()


def record_issue(
    path: Path,
    where: str,
    reason: str,
    *,
    line: int | None = None,
    severity: Literal["error", "warning"] = "error",
) -> SourceIssue:
    """An issue for one record; ``where`` names it (``record 3 (id 31)``)."""
    return SourceIssue(str(path), f"{where}: {reason}", line, severity)


@dataclass(slots=True)
class UniqueIds:
    """Keeps conversation ids unique inside one file.

    A repeated record id (two records claiming ``index`` 7) would make the second
    overwrite the first on import; it gets a content-hash suffix and a warning instead.
    """

    seen: set[str] = field(default_factory=set)

    def claim(self, conversation_id: str, record: Any) -> tuple[str, str | None]:
        """The id to use and, when it had to change, the reason for a warning."""
        if conversation_id not in self.seen:
            self.seen.add(conversation_id)
            return conversation_id, None
        unique = f"{conversation_id}~{content_key(record)}"
        self.seen.add(unique)
        return unique, f"id {conversation_id!r} is repeated in this file; read as {unique!r}"


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for optional sub-objects)."""
    return value if isinstance(value, Mapping) else {}


def string(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def require(record: Mapping[str, Any], key: str, *kinds: type) -> Any:
    """``record[key]`` when it has one of the expected JSON types, else a ``RecordError``."""
    value = record.get(key)
    # bool is an int to Python but not to JSON: an id of ``true`` is wrong.
    if isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool)):
        return value
    names = " or ".join(kind.__name__ for kind in kinds)
    raise RecordError(f"field {key!r} must be {names}, got {type(value).__name__}")


def text_of(content: Any) -> str:
    """Visible text of a message ``content``: a string or a list of typed parts.

    Parts that are not text (images, audio) become a short placeholder, and parts that
    are reasoning are dropped (SPEC ING-3).
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping):
                kind = str(part.get("type") or "")
                if kind in ("thinking", "reasoning", "redacted_thinking"):
                    continue
                if isinstance(part.get("text"), str):
                    pieces.append(part["text"])
                elif kind:
                    pieces.append(f"[{kind}]")
        return "\n".join(pieces)
    return str(content)


def title_from(text: str | None) -> str | None:
    """The first line of ``text``, shortened to a title."""
    if not text:
        return None
    line = text.strip().split("\n", 1)[0].strip()
    if len(line) > TITLE_CHARS:
        line = line[: TITLE_CHARS - 1].rstrip() + "…"
    return line or None


def parse_json_arguments(raw: Any) -> JSONValue:
    """Tool arguments as an object: JSON strings are parsed, unparseable text is kept raw."""
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"raw": raw}
    return raw if raw is not None else {}


# -- OpenAI-chat message lists ---------------------------------------------------------


@dataclass(slots=True)
class _Call:
    source_id: str
    name: str
    arguments: JSONValue
    call_id: str | None
    message_source_id: str | None
    status: ToolStatus = "pending"
    result_text: str | None = None
    attributes: dict[str, JSONValue] = field(default_factory=dict)

    def build(self) -> ToolCall:
        return ToolCall(
            source_id=self.source_id,
            name=self.name,
            arguments=self.arguments,
            call_id=self.call_id,
            message_source_id=self.message_source_id,
            status=self.status,
            result_text=self.result_text,
            attributes=self.attributes,
        )


@dataclass(slots=True)
class ChatParts:
    """Messages and tool calls read from one chat message list."""

    messages: list[Message] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_CHAT_ROLES: dict[str, tuple[Role, MessageKind]] = {
    "system": ("system", "instructions"),
    "developer": ("developer", "instructions"),
    "user": ("user", "prompt"),
    "assistant": ("assistant", "reply"),
}


def read_chat(
    items: Any,
    scope: str,
    *,
    model: str | None = None,
    position: Callable[[int, Mapping[str, Any]], int] | None = None,
    error_of: Callable[[Mapping[str, Any]], str | None] | None = None,
    field_name: str = "messages",
) -> ChatParts:
    """Turn an OpenAI-chat message list into messages and paired tool calls.

    Message ids are ``<scope>:<position>`` (the list index, or what ``position`` returns,
    e.g. τ-bench's own ``index`` that its failure labels cite). Tool results are not
    messages: each becomes the result of its call. Benchmark exports do not keep call ids
    reliably (AgentDojo has empty, null and reused ids), so a result pairs with the
    earliest unanswered call with its id, else with the tool's name, else the earliest
    unanswered call; a call id names the call only when it is unique in the record.

    Raises:
        RecordError: when ``items`` (the record's ``field_name``) is not a list of
            role-tagged objects, or two entries claim the same position.
    """
    if not isinstance(items, list):
        raise RecordError(f"field {field_name!r} must be a list, got {type(items).__name__}")
    parts = ChatParts()
    issued = Counter(
        call.get("id")
        for item in items
        if isinstance(item, Mapping) and isinstance(item.get("tool_calls"), list)
        for call in item["tool_calls"]
        if isinstance(call, Mapping)
    )
    calls: list[_Call] = []
    taken: set[int] = set()
    for index, item in enumerate(items):
        where = f"{field_name}[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("role"), str):
            raise RecordError(f"{where} is not an object with a 'role'")
        at = position(index, item) if position is not None else index
        if at in taken:
            raise RecordError(f"{where} repeats position {at}, so its id would not be unique")
        taken.add(at)
        role = item["role"]
        if role == "tool":
            _attach_result(item, at, scope, calls, parts, error_of)
            continue
        if role not in _CHAT_ROLES:
            parts.warnings.append(f"{where} has unknown role {role!r}; skipped")
            continue
        message_role, kind = _CHAT_ROLES[role]
        source_id = f"{scope}:{at}"
        text = text_of(item.get("content")) or text_of(item.get("refusal"))
        requested = item.get("tool_calls") if role == "assistant" else None
        requested = requested if isinstance(requested, list) else []
        if not text.strip() and not requested:
            continue  # an empty turn (a model that stopped without output) carries nothing
        parts.messages.append(
            Message(
                source_id=source_id,
                role=message_role,
                kind=kind,
                text=text,
                model=model if role == "assistant" else None,
            )
        )
        for number, call in enumerate(requested):
            calls.append(
                _request(call, f"{where}.tool_calls[{number}]", number, source_id, scope, issued)
            )
    parts.tool_calls = [call.build() for call in calls]
    return parts


def _request(
    call: Any, where: str, number: int, message_id: str, scope: str, issued: Counter[Any]
) -> _Call:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        raise RecordError(f"{where} has no 'function' object")
    function = call["function"]
    call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
    unique = call_id is not None and issued[call_id] == 1
    return _Call(
        source_id=f"{scope}:call:{call_id}" if unique else f"{message_id}:call:{number}",
        name=str(function.get("name") or "unknown"),
        arguments=parse_json_arguments(function.get("arguments")),
        call_id=call_id,
        message_source_id=message_id,
    )


def _attach_result(
    item: Mapping[str, Any],
    at: int,
    scope: str,
    calls: list[_Call],
    parts: ChatParts,
    error_of: Callable[[Mapping[str, Any]], str | None] | None,
) -> None:
    echo = mapping(item.get("tool_call"))
    wanted_id = string(item.get("tool_call_id"))
    name = string(item.get("name")) or string(echo.get("function"))
    waiting = [call for call in calls if call.status == "pending" and call.message_source_id]
    match = next((c for c in waiting if wanted_id and c.call_id == wanted_id), None)
    if match is None and name:
        match = next((c for c in waiting if c.name == name), None)
    if match is None and not wanted_id and not name and waiting:
        match = waiting[0]
    if match is None:
        # A result whose call is missing still shows what the tool returned; the
        # result's own echo of the call names the tool.
        parts.warnings.append(f"tool result at position {at} has no matching call")
        match = _Call(
            source_id=f"{scope}:{at}",
            name=str(name or "unknown"),
            arguments=echo.get("args", {}),
            call_id=wanted_id or None,
            message_source_id=None,
        )
        calls.append(match)
    error = error_of(item) if error_of is not None else None
    text = text_of(item.get("content"))
    if error and error not in text:
        text = f"{text}\n{error}" if text else error
    match.result_text = text
    match.status = "error" if error else "ok"
    match.attributes["result_position"] = at


# -- Magentic-One speaker roles --------------------------------------------------------

_SPEAKER = re.compile(r"^\s*(?P<agent>[^()]+?)\s*\((?P<note>[^()]*)\)\s*$")
_PEOPLE = {"human", "user"}


def magentic_message(source_id: str, role: str, text: str) -> Message:
    """A Magentic-One log entry as a message, the acting agent as author.

    Magentic-One writes the actor and what it is doing into one ``role`` string:
    ``"Orchestrator (thought)"`` (its visible ledger), ``"Orchestrator (-> WebSurfer)"``
    (an instruction to another agent), ``"WebSurfer"`` (that agent's report), ``"human"``
    (the task). The original string is kept in the attributes.
    """
    attributes: dict[str, JSONValue] = {"role": role}
    author = role.strip()
    match = _SPEAKER.match(role)
    if match is not None:
        author = match["agent"]
        note = match["note"].strip()
        if note.startswith("->"):
            attributes["addressee"] = note[2:].strip()
        else:
            attributes["channel"] = note
    if is_person(author):
        return Message(source_id, "user", "prompt", text, author=author, attributes=attributes)
    return Message(source_id, "assistant", "reply", text, author=author, attributes=attributes)


def is_person(name: str) -> bool:
    """True for a speaker name that stands for a person (``human``, ``user``)."""
    return name.strip().lower() in _PEOPLE


def is_magentic_role(role: Any) -> bool:
    """True for roles only Magentic-One writes (``"Orchestrator (thought)"`` and the like)."""
    return isinstance(role, str) and _SPEAKER.match(role) is not None


def first_of(items: Sequence[Any], kind: type) -> Any:
    """The first item of ``items`` (looking at a few) that is a ``kind``, else None."""
    return next((item for item in items[:5] if isinstance(item, kind)), None)


def any_of(items: Sequence[Any], test: Callable[[Any], bool], look: int = 5) -> bool:
    """True when one of the first ``look`` items passes ``test`` (one damaged record at
    the top of a file must not hide the format)."""
    return any(test(item) for item in items[:look])


# -- Group-chat hand-offs ----------------------------------------------------------------

DELEGATE_TOOL = "delegate_to_agent"
"""The tool name a hand-off to another agent is recorded under (a sub-agent call)."""
ROUTING_WORDS = 4
"""A routing note ("Next speaker WebSurfer") is a first line of at most this many words."""
_WORDS = re.compile(r"[^\W_]+(?:[_\-][^\W_]+)*")
_FENCED = re.compile(r"^[ \t]*```[^\n`]*\n(?P<code>.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


def agent_key(name: str) -> str:
    """An agent name compared case- and separator-blind ("WebSurfer" = "Web_Surfer")."""
    return re.sub(r"[\s_\-]+", "", name).casefold()


@dataclass(frozen=True, slots=True)
class GroupChat:
    """A multi-agent log's messages and the hand-offs between its agents."""

    messages: tuple[Message, ...]
    calls: tuple[ToolCall, ...]


def group_chat(
    messages: Sequence[Message], *, executors: frozenset[str] = frozenset()
) -> GroupChat:
    """The hand-offs of a multi-agent log as delegated calls, each answered by the agent's reply.

    A group chat is one conversation with one participant per agent; what moves the work
    is one agent handing it to another. That structure is read from the messages alone:

    - an instruction addressed to another agent (``attributes["addressee"]``, Magentic-One's
      ``"Orchestrator (-> WebSurfer)"``, or a role note naming one other participant,
      ``"Lead (to Coder)"``) opens a hand-off to that agent;
    - a routing note, a first line of a few words that names exactly one other
      participant ("Next speaker WebSurfer", "Handing over to FileSurfer."), opens one
      too, unless a hand-off to that agent is already waiting (then it restates it);
      the note becomes a ``notice`` message (the chat's speaker selection);
    - a message by an ``executor`` (a participant that is a program, such as a group
      chat's code-running terminal) answers a hand-off from the message before it, whose
      instruction is the code blocks of that message (what the program runs; none when
      it holds no code);
    - the next message by the agent a hand-off waits for is its result.

    Each hand-off is a call named ``delegate_to_agent`` issued by the delegating message,
    arguments ``{"agent", "instruction"}``; a hand-off nobody answered stays pending.
    The messages keep their ids, authors and text: the reply is still its author's
    message (benchmark labels cite it), and also the call's result. Routing notes become
    ``notice`` messages (the chat's speaker selection, not anyone's answer), and an
    executor's turns ``tool`` messages (a program's output, not an agent's statement).
    """
    participants = _participants(messages)
    notes: set[str] = set()
    outputs: set[str] = set()
    programs = {agent_key(name) for name in executors}
    waiting: dict[str, _Call] = {}
    calls: list[_Call] = []
    previous: Message | None = None
    for message in messages:
        if message.role != "assistant" or message.author is None:
            previous = message
            continue
        author = agent_key(message.author)
        if author in programs:
            outputs.add(message.source_id)
            if previous is not None and previous.role == "assistant":
                code = code_blocks(previous.text)
                _answer(_open(calls, previous.source_id, message.author, code), message)
        elif author in waiting:
            _answer(waiting.pop(author), message)
        target = _addressee(message, participants)
        if target and agent_key(target) != author:
            waiting[agent_key(target)] = _open(calls, message.source_id, target, message.text)
        else:
            routed = _routed_to(message, participants)
            if routed is not None:
                notes.add(message.source_id)
                if agent_key(routed) not in waiting:
                    waiting[agent_key(routed)] = _open(calls, message.source_id, routed, None)
        previous = message
    return GroupChat(
        tuple(_restated(m, notes, outputs) for m in messages),
        tuple(call.build() for call in calls),
    )


def _restated(message: Message, notes: set[str], outputs: set[str]) -> Message:
    if message.source_id in notes:
        return replace(message, kind="notice")
    if message.source_id in outputs:
        return replace(message, role="tool")
    return message


def code_blocks(text: str) -> str | None:
    """The fenced code blocks of a message, joined, or None when it has none."""
    blocks = [match["code"].strip("\n") for match in _FENCED.finditer(text)]
    return "\n\n".join(blocks) if blocks else None


def _participants(messages: Sequence[Message]) -> dict[str, str]:
    """Every agent the log names (authors and addressees), by key."""
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant" and message.author:
            names.setdefault(agent_key(message.author), message.author)
        addressee = message.attributes.get("addressee")
        if isinstance(addressee, str) and addressee.strip():
            names.setdefault(agent_key(addressee), addressee.strip())
    return names


def _addressee(message: Message, participants: Mapping[str, str]) -> str:
    """The agent an instruction is addressed to: the speaker role's ``-> X``, or a role
    note that names exactly one other participant ("Lead (to Coder)"); else ``""``."""
    addressee = message.attributes.get("addressee")
    if isinstance(addressee, str) and addressee.strip():
        return addressee.strip()
    channel = message.attributes.get("channel")
    if not isinstance(channel, str):
        return ""
    author = agent_key(message.author or "")
    named = {
        agent_key(word)
        for word in _WORDS.findall(channel)
        if agent_key(word) in participants and agent_key(word) != author
    }
    return participants[named.pop()] if len(named) == 1 else ""


def _routed_to(message: Message, participants: Mapping[str, str]) -> str | None:
    """The participant a routing note hands to, else None.

    A routing note's first line is a few words that name exactly one other participant
    beside at least one other word ("Next speaker WebSurfer"); what follows it (a
    runtime warning printed into the log) does not matter. A bare name over a longer
    message is an address, not a routing note.
    """
    lines = [line for line in message.text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    words = [agent_key(word) for word in _WORDS.findall(lines[0])]
    if not words or len(words) > ROUTING_WORDS:
        return None
    author = agent_key(message.author or "")
    named = {word for word in words if word in participants and word != author}
    if len(named) != 1 or all(word in participants for word in words):
        return None
    return participants[named.pop()]


def _open(calls: list[_Call], issuer: str, agent: str, instruction: str | None) -> _Call:
    taken = {call.source_id for call in calls}
    source_id, number = f"{issuer}:handoff", 0
    while source_id in taken:  # one message may hand off more than once
        number += 1
        source_id = f"{issuer}:handoff:{number}"
    arguments: dict[str, JSONValue] = {"agent": agent}
    if instruction is not None:
        arguments["instruction"] = instruction
    call = _Call(source_id, DELEGATE_TOOL, arguments, None, issuer)
    calls.append(call)
    return call


def _answer(call: _Call, reply: Message) -> None:
    call.result_text = reply.text
    call.status = "ok"
    call.attributes["reply_message"] = reply.source_id
