"""The state behind the ``monologue`` rule: assistant messages that lead nowhere.

Two shapes: a streak of assistant messages with no tool call and no user message between
them (the agent narrates instead of acting or asking), and the same assistant text again
and again within one turn (it is stuck on one answer).

What is not talk:

- a message that issues a call is acting: it extends no streak, so a message is judged
  only once the next event shows whether it issued one (or at the end of the run); its
  text still counts as a repeat unless the text is the call itself (an instruction an
  orchestrator hands to another agent is the delegated call's argument);
- in multi-agent logs each author is a participant, so a message by another author
  breaks a streak; an orchestrator handing work to another agent issues a delegated
  call, which is action like any other;
- a message that repeats the result of a call just made is that result shown again
  (a delegated agent's reply, a code runner's output): it breaks a streak like a tool
  result and is not counted as the assistant repeating itself;
- a status record, a message that is mostly one JSON object after at most a short
  label line (an orchestrator's progress ledger, a structured plan), is bookkeeping: it
  neither extends nor breaks a streak.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field

from proctor.findings import Evidence
from proctor.rules._evidence import cite_message
from proctor.rules._rule import Hit
from proctor.rules._trace import Event
from proctor.rules.builtin._loop_track import is_user_prompt
from proctor.transcript import Message, ToolCall

MONOLOGUE_MESSAGES = 4
"""Assistant messages in a row, with no call and no user message, that make a monologue."""
REPEATED_TEXT = 3
"""Times the same assistant text may appear in one turn before it is a loop."""
MIN_REPEATED_CHARS = 40
"""Shorter texts ("Done.", "Next speaker WebSurfer") repeat legitimately."""
_MAX_TEXTS = 200
"""Distinct texts remembered per turn (bounded memory on very long turns)."""
_MAX_RESULTS = 16
"""Recent call results remembered, to recognise a message that shows one again."""
LABEL_CHARS = 60
"""Longest label line a status record may have before its JSON object."""
_DECODER = json.JSONDecoder()


@dataclass(slots=True)
class _Repeat:
    messages: list[Message]
    evidence: tuple[Evidence, ...] = ()


@dataclass(slots=True)
class Monologue:
    """Per-conversation state of the monologue rule."""

    streak: list[Message] = field(default_factory=list)
    streak_evidence: tuple[Evidence, ...] = ()
    texts: dict[str, _Repeat] = field(default_factory=dict)
    pending: Message | None = None
    """The last assistant message, not judged until the next event shows it issued no call."""
    results: OrderedDict[str, None] = field(default_factory=OrderedDict)
    """Recent call results (normalised), oldest first."""

    def advance(self, event: Event) -> list[Hit]:
        """Take in one event; the hits it causes when it makes (or extends) a monologue.

        The hits of an assistant message come with the event after it: only then is it
        known whether the message issued a call.
        """
        pending, self.pending = self.pending, None
        hits: list[Hit] = []
        if pending is not None:
            call = event.call
            if (
                event.kind == "call"
                and call is not None
                and call.message_source_id == (pending.source_id)
            ):
                self._break_streak()  # the message acted: it extends no streak
                if not _carried_by(call, pending.text):
                    hits = self._repeats(pending)  # commentary beside the call may repeat
            else:
                hits = self._talk(pending)
        self._take(event)
        return hits

    def finish(self) -> list[Hit]:
        """The hits of the run's last message, when it was talk."""
        pending, self.pending = self.pending, None
        return [] if pending is None else self._talk(pending)

    def _take(self, event: Event) -> None:
        message = event.message
        if message is None:
            if event.kind == "result" and event.call is not None:
                self._remember_result(event.call.result_text)
            self._break_streak()  # a tool call is action
            return
        if message.role in ("user", "tool"):
            self._break_streak()
            if is_user_prompt(message):
                self.texts.clear()
            return
        if message.role != "assistant" or message.kind != "reply" or not message.text.strip():
            return
        if self._shows_result(message.text):
            self._break_streak()  # a delegated agent's reply, already seen as a result
            return
        if not is_status_record(message.text):
            self.pending = message

    def _talk(self, message: Message) -> list[Hit]:
        """A message known to be talk: it extends the streak and may repeat a text."""
        if self.streak and self.streak[-1].author != message.author:
            self._break_streak()  # another participant answered
        self.streak.append(message)
        hits = [self._streak_hit(message)] if len(self.streak) >= MONOLOGUE_MESSAGES else []
        return [*hits, *self._repeats(message)]

    def _repeats(self, message: Message) -> list[Hit]:
        repeat = self._repeat_hit(message)
        return [] if repeat is None else [repeat]

    def _remember_result(self, text: str | None) -> None:
        if not text or not text.strip():
            return
        key = " ".join(text.split())
        self.results.pop(key, None)
        self.results[key] = None
        if len(self.results) > _MAX_RESULTS:
            self.results.popitem(last=False)

    def _shows_result(self, text: str) -> bool:
        key = " ".join(text.split())
        if key not in self.results:
            return False
        del self.results[key]
        return True

    def _break_streak(self) -> None:
        self.streak.clear()
        self.streak_evidence = ()

    def _streak_hit(self, message: Message) -> Hit:
        if not self.streak_evidence:
            self.streak_evidence = tuple(cite_message(m) for m in self.streak)
        count = len(self.streak)
        return Hit(
            title="Assistant keeps talking without acting",
            severity="medium",
            evidence=self.streak_evidence,
            content=(
                f"{count} assistant messages in a row with no tool call and no user message "
                "in between: the agent is narrating instead of acting or asking."
            ),
            actual=count,
            threshold=MONOLOGUE_MESSAGES,
            trigger=message.source_id,
        )

    def _repeat_hit(self, message: Message) -> Hit | None:
        if len(message.text) < MIN_REPEATED_CHARS:
            return None  # collapsing whitespace only makes it shorter
        text = " ".join(message.text.split()).lower()
        if len(text) < MIN_REPEATED_CHARS:
            return None
        repeat = self.texts.pop(text, None)
        if repeat is None:  # the first time: remember it, nothing to report
            repeat = _Repeat([message])
        else:
            repeat.messages.append(message)
        self.texts[text] = repeat  # most recently seen last, so the oldest is dropped first
        if len(self.texts) > _MAX_TEXTS:
            del self.texts[next(iter(self.texts))]
        if len(repeat.messages) < REPEATED_TEXT:
            return None
        if not repeat.evidence:
            repeat.evidence = tuple(cite_message(m) for m in repeat.messages)
        count = len(repeat.messages)
        return Hit(
            title="Assistant repeats the same message",
            severity="medium",
            evidence=repeat.evidence,
            content=f"The same assistant text appeared {count} times in one turn.",
            actual=count,
            threshold=REPEATED_TEXT,
            trigger=message.source_id,
        )


def _carried_by(call: ToolCall, text: str) -> bool:
    """True when the message's text is one of the call's arguments (the message is the call)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    key = " ".join(text.split())
    return any(isinstance(v, str) and " ".join(v.split()) == key for v in arguments.values())


def is_status_record(text: str) -> bool:
    """True for a message that is a JSON object, after at most a short label line.

    Text after the object (a runtime warning printed into the log) is allowed as long as
    the object is most of the message.
    """
    stripped = text.strip()
    start = stripped.find("{")
    if start < 0:
        return False
    label = stripped[:start].strip()
    if len(label) > LABEL_CHARS or "\n" in label:
        return False
    try:
        value, end = _DECODER.raw_decode(stripped, start)
    except ValueError:
        return False
    return isinstance(value, dict) and (end - start) * 2 >= len(stripped)
