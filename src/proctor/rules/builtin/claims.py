"""Rule family: claims of verification the transcript does not back (category ``evidence_gap``).

``unverified_claim`` reads every assistant reply for claims of success ("all tests pass",
"the build succeeds", "lint is clean", "works now", "verified …"; see ``_claim_text``)
and checks them against what actually ran before, in the same conversation:

- a claim about **tests** needs a test run, about the **build** a build, compile or
  type-check run, about **lint** a linter run (see ``_verification``); "works" / "fixed"
  needs any command run; "verified X" needs a call that touched X;
- the run must have **passed**: a failed latest run (non-zero exit, error status, or
  output reporting failures) with no passing run after it contradicts the claim;
- the run must come **after the last edit** (``Write``/``Edit``/``apply_patch``/a shell
  command writing files): an earlier run verifies older code.

Severity: high (action ``request_review``) when the latest matching run failed; medium
(``warn``) when there is no matching run or it predates the last edit. A claim about one
test ("the new test passes") is satisfied by a run that reported passing tests even if
others failed. Claims are judged when the agent's turn moves on (its next message with
text, the user's next message, or the end of the run), so runs the claiming message
itself started count. Claims inside tool output never count: only assistant replies are
read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from proctor.findings import Evidence, Severity
from proctor.rules._calls import argument_strings
from proctor.rules._evidence import cite_absence, cite_message, cite_result
from proctor.rules._policy import RuleMode
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._call_effects import (
    commands_of,
    edited_paths,
    is_edit_tool,
    is_inspection,
    plain_tool,
    tool_base_name,
)
from proctor.rules.builtin._claim_text import Claim, ClaimTopic, find_claims
from proctor.rules.builtin._loop_track import action_label
from proctor.rules.builtin._shell_words import SimpleCommand
from proctor.rules.builtin._spans import cite_text_in_call
from proctor.rules.builtin._verification import (
    Topic,
    call_topics,
    name_topics,
    outcome,
    reported_passes,
    summary_span,
)
from proctor.transcript import Message, ToolCall

_RUN_TOPICS: dict[ClaimTopic, Topic] = {"tests": "tests", "build": "build", "lint": "lint"}
"""Claim topics backed by a specific kind of run; the others by any run or any check."""
_RECENT_CALLS = 50
"""Calls remembered for "verified X" claims (bounded memory)."""
_RESULT_CHARS = 4000
"""Characters of each remembered call's result searched for what a claim names."""
_PHRASES: dict[ClaimTopic, str] = {
    "tests": "the tests pass",
    "build": "the build succeeds",
    "lint": "lint is clean",
    "works": "it works",
    "verified": "it was verified",
}
_RUN_NOUNS: dict[ClaimTopic, str] = {
    "tests": "test run",
    "build": "build or type-check run",
    "lint": "lint run",
    "works": "run of the changed code",
    "verified": "check",
}
_MISSING: dict[ClaimTopic, str] = {
    "tests": "a test run (pytest, npm test, go test, cargo test …) before the claim",
    "build": "a build, compile or type-check run before the claim",
    "lint": "a linter run before the claim",
    "works": "a run of the changed code before the claim",
    "verified": "a tool call that checked what the claim names",
}


@dataclass(slots=True)  # not frozen: made for every finished call, and never changed
class _Run:
    """A finished call that can back a claim."""

    call: ToolCall
    index: int
    checked: bool | None
    """Whether it passed, when already known."""

    @property
    def passed(self) -> bool:
        """True when the run ended well."""
        return self.checked if self.checked is not None else outcome(self.call) == "passed"


@dataclass(slots=True)
class _Seen:
    """A finished call, or another participant's message, a "verified X" claim may rest on."""

    index: int
    call: ToolCall | None = None
    said: str = ""
    """For a message: its author and start, as ``text`` gives them."""

    def text(self) -> str:
        """Lower-cased: the call's arguments and the start of its result, or the message."""
        if self.call is None:
            return self.said
        arguments = " ".join(v for _, v in argument_strings(self.call.arguments))
        return f"{arguments}\n{(self.call.result_text or '')[:_RESULT_CHARS]}".lower()


@dataclass(slots=True)
class _Edit:
    call: ToolCall
    index: int
    paths: tuple[str, ...]


@dataclass(slots=True)
class _Pending:
    """A message with claims, judged once the turn moves on."""

    message: Message
    claims: list[Claim]
    last_edit: _Edit | None
    """The latest edit when the claim was made (later edits do not matter)."""


@dataclass(slots=True)
class _State:
    runs: dict[Topic, _Run] = field(default_factory=dict)
    """Latest finished run per topic."""
    last_execution: _Run | None = None
    """Latest finished call that ran something (not an edit, not a pure read)."""
    last_edit: _Edit | None = None
    recent: deque[_Seen] = field(default_factory=lambda: deque(maxlen=_RECENT_CALLS))
    """Recent finished non-edit calls (their text is only read when a claim needs it)."""
    pending: list[_Pending] = field(default_factory=list)
    parsed: tuple[str, Sequence[SimpleCommand], frozenset[Topic]] = ("", (), frozenset())
    """The latest call's parse, reused for its result event."""
    participants: dict[str, int] = field(default_factory=dict)
    """In multi-agent logs: each named author's latest message index."""


class UnverifiedClaim(Rule):
    """A claim of success or verification with no passing run behind it."""

    id = "unverified_claim"
    version = 1
    category = "evidence_gap"
    description = (
        "The agent claims tests pass, the build succeeds, lint is clean, it works or it was "
        "verified, without a matching passing run after the last edit"
    )
    gate_mode: ClassVar[RuleMode] = "warn"

    def start(self, context: RuleContext) -> _State:
        return _State()

    def observe(self, state: _State, event: Event, context: RuleContext) -> Iterable[Hit]:
        hits: list[Hit] = []
        if event.message is not None:
            message = event.message
            moves_on = message.role == "user" or (
                message.role == "assistant" and bool(message.text.strip())
            )
            if moves_on:
                hits = self._judge_pending(state, context)
            if message.role == "assistant" and message.kind == "reply" and not message.derived:
                claims = find_claims(message.text)
                if claims:
                    state.pending.append(_Pending(message, claims, state.last_edit))
                if message.author is not None:
                    _heard(state, event.index, message)
        elif event.call is not None:
            _record(state, event)
        return hits

    def finish(self, state: _State, context: RuleContext) -> Iterable[Hit]:
        return self._judge_pending(state, context)

    def _judge_pending(self, state: _State, context: RuleContext) -> list[Hit]:
        hits = [
            hit
            for pending in state.pending
            for hit in _judge(pending, state, context.trace.conversation_id)
        ]
        state.pending.clear()
        return hits


def _heard(state: _State, index: int, message: Message) -> None:
    """Remember another participant's message: in multi-agent logs it may carry a run."""
    assert message.author is not None
    state.participants[message.author] = index
    text = message.text[:_RESULT_CHARS].lower()
    state.recent.append(_Seen(index, said=f"\x00{message.author}\x00{text}"))


def _others_since(state: _State, message: Message, since: int) -> bool:
    """True when a participant other than the claim's author spoke after ``since``.

    Multi-agent logs without tool calls (group chats where a "Computer_terminal" agent
    runs the code) show their runs as messages; absence of a tool call proves nothing.
    """
    return any(
        author != message.author and index > since for author, index in state.participants.items()
    )


def _record(state: _State, event: Event) -> None:
    """Take in a call (its edits) or a result (its runs)."""
    call = event.call
    assert call is not None
    plain = plain_tool(call.name)  # no command line, no file written: its name says it all
    if plain:
        commands: Sequence[SimpleCommand] = ()
        topics = name_topics(tool_base_name(call))
    elif state.parsed[0] == call.source_id:
        commands, topics = state.parsed[1], state.parsed[2]
    else:
        commands = commands_of(call)
        topics = frozenset(call_topics(call, commands))
        state.parsed = (call.source_id, commands, topics)
    if event.kind == "call":
        # A call that runs a check is a run; its own writes (`pytest > log`) are not edits.
        paths = [] if topics or plain else edited_paths(call, commands)
        if paths:
            state.last_edit = _Edit(call, event.index, tuple(paths))
        return
    if call.status in ("pending", "interrupted", "rejected") or (not plain and is_edit_tool(call)):
        return
    state.recent.append(_Seen(event.index, call))
    if topics:
        run = _Run(call, event.index, outcome(call) == "passed")
        for topic in topics:
            state.runs[topic] = run
        state.last_execution = run
    elif not is_inspection(call, commands):
        # Whether it passed is only needed if a "works now" claim comes: judged then.
        state.last_execution = _Run(call, event.index, None)


def _judge(pending: _Pending, state: _State, conversation_id: str) -> Iterator[Hit]:
    """Hits for a message's claims, one per topic."""
    by_topic: dict[ClaimTopic, list[Claim]] = {}
    for claim in pending.claims:
        by_topic.setdefault(claim.topic, []).append(claim)
    for topic, claims in by_topic.items():
        yield from _judge_topic(topic, claims, pending, state, conversation_id)


def _judge_topic(
    topic: ClaimTopic,
    claims: list[Claim],
    pending: _Pending,
    state: _State,
    conversation_id: str,
) -> Iterator[Hit]:
    message, edit = pending.message, pending.last_edit
    cited = tuple(cite_message(message, c.start, c.end) for c in claims)
    phrase, noun = _PHRASES[topic], _RUN_NOUNS[topic]
    since = edit.index if edit is not None else -1
    if topic == "verified":
        if _touched(claims, state, since, message):
            return
        yield _hit(
            f"Claim that {phrase} with no matching check",
            "medium",
            (*cited, cite_absence(conversation_id, _MISSING[topic])),
            f"The message claims to have verified {', '.join(_named(claims))}, but no tool call "
            + ("after the last edit " if edit else "")
            + "looked at it.",
            "no matching check",
            message,
        )
        return
    run_topic = _RUN_TOPICS.get(topic)
    run = state.runs.get(run_topic) if run_topic is not None else state.last_execution
    if run is None:
        if _others_since(state, message, since):
            return
        yield _hit(
            f"Claim that {phrase} with no {noun}",
            "medium",
            (*cited, cite_absence(conversation_id, _MISSING[topic])),
            f"The message claims {phrase}, but no {noun} happened before it in this conversation.",
            f"no {noun}",
            message,
        )
        return
    edited_after = edit is not None and edit.index > run.index
    single_ok = all(c.single for c in claims) and reported_passes(run.call)
    run_label = f"`{action_label(run.call)}`"
    if not run.passed and not single_ok:
        detail = _failure_detail(run.call)
        content = (
            f"The message claims {phrase}, but the latest {noun} ({run_label}) failed"
            f"{detail} and no {noun} passed after it."
        )
        evidence = (*cited, _cite_run(run.call))
        if edited_after and edit is not None:
            content += (
                f" The only change since was an edit of {', '.join(edit.paths)}, "
                f"and the {noun} was not repeated after it."
            )
            evidence = (*evidence, _cite_edit(edit))
        yield _hit(
            f"Claim that {phrase} after a failing {noun}",
            "high",
            evidence,
            content,
            f"latest {noun} failed{detail}",
            message,
        )
    elif edited_after and edit is not None:
        yield _hit(
            f"Claim that {phrase} not re-checked after the last edit",
            "medium",
            (*cited, _cite_run(run.call), _cite_edit(edit)),
            f"The message claims {phrase}. The last {noun} ({run_label}) passed, but "
            f"{', '.join(edit.paths)} was edited after it, so it verified older code.",
            f"{noun} before the last edit",
            message,
        )


def _touched(claims: list[Claim], state: _State, since: int, message: Message) -> bool:
    """True when a call (or another participant) after ``since`` mentions what the claims name."""
    own = f"\x00{message.author}\x00"
    terms = [t for claim in claims for t in claim.terms]
    for seen in state.recent:
        if seen.index <= since:
            continue
        text = seen.text()
        if not text.startswith(own) and any(term in text for term in terms):
            return True
    return False


def _named(claims: list[Claim]) -> list[str]:
    return [f"`{t}`" for t in dict.fromkeys(t for c in claims for t in c.terms)][:3]


def _failure_detail(call: ToolCall) -> str:
    parts = []
    if call.exit_code not in (None, 0):
        parts.append(f"exit {call.exit_code}")
    span = summary_span(call)
    if span is not None:
        line = (call.result_text or "")[span[0] : span[1]]
        parts.append(f'"{line if len(line) <= 80 else line[:79] + "…"}"')
    return f" ({', '.join(parts)})" if parts else ""


def _cite_edit(edit: _Edit) -> Evidence:
    return cite_text_in_call(edit.call, edit.paths[0])


def _cite_run(call: ToolCall) -> Evidence:
    span = summary_span(call)
    return cite_result(call) if span is None else cite_result(call, *span)


def _hit(
    title: str,
    severity: Severity,
    evidence: tuple[Evidence, ...],
    content: str,
    actual: str,
    message: Message,
) -> Hit:
    return Hit(
        title=title,
        severity=severity,
        evidence=evidence,
        content=content,
        action="request_review" if severity == "high" else "warn",
        actual=actual,
        trigger=message.source_id,
    )


RULES: list[Rule] = [UnverifiedClaim()]
