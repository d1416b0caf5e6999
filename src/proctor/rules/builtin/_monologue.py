"""The state behind the ``monologue`` rule: assistant messages that lead nowhere.

Two shapes: a streak of assistant messages with no tool call and no user message between
them (the agent narrates instead of acting or asking), and the same assistant text again
and again within one turn (it is stuck on one answer). In multi-agent logs each author
is a participant, so a message by another author breaks a streak.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from proctor.findings import Evidence
from proctor.rules._evidence import cite_message
from proctor.rules._rule import Hit
from proctor.rules._trace import Event
from proctor.rules.builtin._loop_track import is_user_prompt
from proctor.transcript import Message

MONOLOGUE_MESSAGES = 4
"""Assistant messages in a row, with no call and no user message, that make a monologue."""
REPEATED_TEXT = 3
"""Times the same assistant text may appear in one turn before it is a loop."""
MIN_REPEATED_CHARS = 40
"""Shorter texts ("Done.", "Next speaker WebSurfer") repeat legitimately."""
_MAX_TEXTS = 200
"""Distinct texts remembered per turn (bounded memory on very long turns)."""


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

    def advance(self, event: Event) -> list[Hit]:
        """Take in one event; the hits it causes when it makes (or extends) a monologue."""
        message = event.message
        if message is None:
            if self.streak:
                self._break_streak()  # a tool call is action
            return []
        if message.role in ("user", "tool"):
            self._break_streak()
            if is_user_prompt(message):
                self.texts.clear()
            return []
        if message.role != "assistant" or message.kind != "reply" or not message.text.strip():
            return []
        if self.streak and self.streak[-1].author != message.author:
            self._break_streak()  # another participant answered
        self.streak.append(message)
        hits = [self._streak_hit(message)] if len(self.streak) >= MONOLOGUE_MESSAGES else []
        repeat = self._repeat_hit(message)
        return hits if repeat is None else [*hits, repeat]

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
