"""The shared memory of the loop rules: recent steps, what "the same" means, runs, alternation.

Every loop rule asks questions about the same recent history, so one ``LoopTracker`` per
conversation (kept in ``RuleContext.facts`` and referenced from each rule's state) turns
each finished tool call into a ``Step`` once, whichever loop rule sees the event first.

*Same action*: same tool and same arguments after normalisation — whitespace collapsed,
presentation-only keys (``description``, ``timeout``, ``yield_time_ms`` …) ignored, shell
tools compared by their command line whatever the tool is called. *Same result*: same
status, exit code and result text once volatile parts are masked (timestamps, durations,
labelled ids, long hex ids, UUIDs, addresses, pids, temp paths, ANSI colours), so two runs
of one failing command match although their ``Wall time`` differs, while ``2 failed`` and
``1 failed`` stay different (that is progress).

A user prompt starts a fresh history (the person may have asked for a retry). Memory is
bounded: the last ``WINDOW`` steps.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any

from proctor.rules._calls import argument_strings, command_text, is_shell
from proctor.rules._rule import RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._call_effects import has_side_effects
from proctor.transcript import Message, ToolCall

WINDOW = 20
"""Tool calls remembered; repeats further apart than this are not one loop."""

_FACT = "loops.tracker"
_IGNORED_ARGUMENTS = frozenset(
    {
        "description",
        "timeout",
        "timeout_ms",
        "yield_time_ms",
        "max_output_tokens",
        "justification",
        "explanation",
        "reason",
    }
)
# Every pattern begins with a character (class), the word boundary checked behind it, so
# the regular expression engine skips ahead to where a match can start; tests hold each to
# its plain form (``\\b\\d{4}-…``).
_VOLATILE = [
    (re.compile(r"\x1b\[[0-9;?]*[A-Za-z]"), ""),
    (
        re.compile(
            r"\d(?<=\b\d)\d{3}-\d{2}-\d{2}"
            r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
        ),
        "<time>",
    ),
    (re.compile(r"\d(?<=\b\d)\d?:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (
        re.compile(
            r"[0-9a-fA-F](?<=\b[0-9a-fA-F])[0-9a-fA-F]{7}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    (re.compile(r"0(?<=\b0)x[0-9a-fA-F]+\b"), "<addr>"),
    # Labelled ids (`Chunk ID: 5dacf8`, `request id=ab12…`) and long random hex; a short
    # unlabelled hash (`sha=16bcc09a`, a commit) may be the very thing that changed.
    (re.compile(r"(i(?<=\bi)d\b\s*[:=#]?\s*)[0-9A-Za-z_-]{4,}", re.IGNORECASE), r"\1<id>"),
    (
        re.compile(
            r"[0-9a-f](?<=\b[0-9a-f])(?:(?<=\d)(?=[0-9a-f]*[a-f])|(?<=[a-f])(?=[0-9a-f]*\d))"
            r"[0-9a-f]{15,}\b"
        ),
        "<hex>",
    ),
    (
        re.compile(
            r"\d(?<=\b\d)\d*(?:\.\d+)?\s?"
            r"(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b"
        ),
        "<duration>",
    ),
    (
        re.compile(
            r"([pj](?<=\b[pj])(?:(?<=p)(?:id|rocess)|(?<=j)ob))(\s*[:=#]?\s*)\d+\b", re.IGNORECASE
        ),
        r"\1\2<n>",
    ),
    (
        re.compile(
            r"/(?:private/tmp|private/var/tmp|private/var/folders|tmp|var/tmp|var/folders)/"
            r"[^\s'\"]+"
        ),
        "<tmp>",
    ),
]
_A_DIGIT = ("0-9",)
_ID_WORDS = ("id",)
_PROCESS_WORDS = ("pid", "process", "job")
_CASE_BLIND_NEEDS = (_ID_WORDS, _PROCESS_WORDS)
_NEEDS: tuple[tuple[str, ...] | None, ...] = (
    ("\x1b",),
    _A_DIGIT,
    _A_DIGIT,
    ("-",),
    ("0x",),
    _ID_WORDS,
    _A_DIGIT,
    _A_DIGIT,
    _PROCESS_WORDS,
    ("/tmp/", "/var/tmp/", "/var/folders/"),
)
"""Per volatile pattern, what every match holds (one of; lower case where it is case-blind;
``_A_DIGIT``: any digit): a text without it is not searched. A test holds them."""
_DIGIT = re.compile(r"\d")
_WHITESPACE = re.compile(r"\s+")
_KEY_OF_PAIR = itemgetter(0)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


def normalise_output(text: str) -> str:
    """``text`` with volatile parts masked and whitespace collapsed."""
    for (pattern, replacement), needs in zip(_VOLATILE, _NEEDS, strict=True):
        if _may_match(text, needs):
            text = pattern.sub(replacement, text)
    return _collapsed(text)


def _may_match(text: str, needs: tuple[str, ...] | None) -> bool:
    """False when ``text`` lacks what every match of a volatile pattern holds."""
    if needs is None:
        return True
    if needs is _A_DIGIT:
        return _DIGIT.search(text) is not None
    if needs in _CASE_BLIND_NEEDS:
        if not text.isascii():
            return True  # case-blind matching beyond ASCII (İ, ſ …): no quick test
        text = text.lower()
    return any(map(text.__contains__, needs))


def _collapsed(text: str) -> str:
    """Whitespace runs as one space, none at the ends (what ``\\s+`` → " " and strip give)."""
    return " ".join(text.split())


def _canonical(value: Any) -> Any:
    """Arguments as plain nested values: objects as key-sorted tuples of pairs, arrays as
    lists, strings with whitespace collapsed."""
    if isinstance(value, str):
        return _collapsed(value)
    if isinstance(value, dict):
        pairs = []
        for k, v in value.items():
            key = str(k)
            if key not in _IGNORED_ARGUMENTS:
                pairs.append((key, " ".join(v.split()) if isinstance(v, str) else _canonical(v)))
        pairs.sort(key=_KEY_OF_PAIR)
        return tuple(pairs)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return value


def action_key(call: ToolCall) -> str:
    """What the call does, normalised: equal keys mean "the same action".

    Only ever compared within one conversation, never stored. The arguments' ``repr``
    keeps what JSON keeps apart (``1``, ``1.0``, ``"1"``, ``true``; objects are tuples,
    arrays lists).
    """
    if is_shell(call):
        command = command_text(call)
        if command is not None:
            return "shell\x00" + _collapsed(command)
    return f"{call.name.lower()}\x00{_canonical(call.arguments)!r}"


def failed(call: ToolCall) -> bool:
    """True when the call ended in an error (status or a non-zero exit code)."""
    return call.status == "error" or (call.exit_code is not None and call.exit_code != 0)


@lru_cache(maxsize=512)
def _normalised_digest(text: str) -> str:
    # Retries usually return the very same text: masking it once is enough.
    return _digest(normalise_output(text))


def outcome_key(call: ToolCall) -> str:
    """What the call gave back, normalised: equal keys mean "the same result"."""
    return f"{call.status}|{call.exit_code}|{_normalised_digest(call.result_text or '')}"


def action_label(call: ToolCall, limit: int = 80) -> str:
    """A short human label for the action: the command line, or the tool and main argument."""
    command = command_text(call)
    if command is None:
        strings = [s for _, s in argument_strings(call.arguments) if s.strip()]
        command = f"{call.name} {', '.join(strings)}" if strings else call.name
    command = _WHITESPACE.sub(" ", command).strip()
    return command if len(command) <= limit else command[: limit - 1] + "…"


@dataclass(slots=True)
class Step:
    """One finished tool call as the loop rules see it.

    The result key and the side-effect guess cost a regex pass or a shell parse, so they
    are computed on first use: most calls never repeat and never need them.
    """

    call: ToolCall
    ordinal: int
    """Number of the step since the conversation started."""
    action: str
    failed: bool
    run: int = 0
    """Id of the run of identical steps (same action and result, nothing else between)."""
    run_length: int = 1
    """Position of this step in its run, from 1."""
    alternation: int | None = None
    """Id of the A-B-A-B alternation it is part of, if any."""
    _outcome: str | None = None
    _effects: bool | None = None
    _signature: tuple[str, int] | None = None

    @property
    def outcome(self) -> str:
        """The normalised result key."""
        if self._outcome is None:
            self._outcome = outcome_key(self.call)
        return self._outcome

    @property
    def effects(self) -> bool:
        """True when repeating the call could change something."""
        if self._effects is None:
            self._effects = has_side_effects(self.call)
        return self._effects

    def same_as(self, other: Step) -> bool:
        """Same action and same result (the cheap comparisons first)."""
        if self.action != other.action:
            return False
        mine, theirs = self.call, other.call
        if (
            mine.status == theirs.status
            and mine.exit_code == theirs.exit_code
            and mine.result_text == theirs.result_text
        ):
            return True  # the very same result: no need to mask volatile parts
        return self.outcome == other.outcome


@dataclass(slots=True)
class LoopTracker:
    """Recent steps of one conversation, advanced once per event."""

    enabled: set[str] = field(default_factory=set)
    """Ids of the loop rules running here (so a rule knows whom it may leave a case to)."""
    steps: deque[Step] = field(default_factory=lambda: deque(maxlen=WINDOW))
    actions: dict[str, int] = field(default_factory=dict)
    """How often each action occurs among ``steps`` (see ``count``)."""
    epoch: int = 0
    """Bumped at each user prompt; reports from an older epoch are over."""
    latest: Step | None = None
    """The step made by the latest event (None when that event was not a result)."""
    _seen: int = -1
    _ordinal: int = 0
    _run: int = 0
    _alternations: int = 0
    _broken: bool = False
    _pending: tuple[str, str] = ("", "")
    """Source id and action key of the latest call event (its result usually follows)."""
    _feeder: str | None = None
    _results: dict[str, list[Step]] = field(default_factory=dict)
    """Per action in the window, the latest step of each different result it gave."""
    _signatures: int = 0

    @classmethod
    def of(cls, context: RuleContext, rule_id: str) -> LoopTracker:
        """The conversation's tracker, registering ``rule_id`` as running."""
        tracker = context.facts.get(_FACT)
        if not isinstance(tracker, LoopTracker):
            tracker = cls()
            context.facts[_FACT] = tracker
        tracker.enabled.add(rule_id)
        return tracker

    def feeds(self, rule_id: str) -> bool:
        """Whether ``rule_id`` is the one loop rule that passes the tracker every event.

        The tracker must see every event (a user prompt starts over, a different call
        breaks a run), but one rule passing them on is enough: the first to ask is chosen,
        and the others need only the results, where steps are made.
        """
        if self._feeder is None:
            self._feeder = rule_id
        return self._feeder == rule_id

    def advance(self, event: Event) -> Step | None:
        """Take in ``event`` (only the first call per event counts); return its step."""
        if event.index <= self._seen:
            return self.latest
        self._seen = event.index
        self.latest = None
        if event.message is not None:
            if is_user_prompt(event.message):
                self._reset()
            return None
        call = event.call
        assert call is not None
        action = self._action(call)
        if event.kind == "call":
            self._pending = (call.source_id, action)
            if self.steps and self.steps[-1].action != action:
                self._broken = True  # a different call in between is progress
            return None
        self.latest = self._add(call, action)
        return self.latest

    def _action(self, call: ToolCall) -> str:
        source_id, action = self._pending
        return action if source_id == call.source_id else action_key(call)

    def _reset(self) -> None:
        self.steps.clear()
        self.actions.clear()
        self._results.clear()
        self.epoch += 1
        self._broken = False

    def _add(self, call: ToolCall, action: str) -> Step:
        self._ordinal += 1
        step = Step(call, self._ordinal, action, failed(call))
        previous = self.steps[-1] if self.steps else None
        if previous is not None and not self._broken and previous.same_as(step):
            step.run, step.run_length = previous.run, previous.run_length + 1
        else:
            self._run += 1
            step.run = self._run
        self._broken = False
        if len(self.steps) == WINDOW:
            dropped = self.steps[0].action
            self.actions[dropped] -= 1
            if self.actions[dropped] <= 0:
                del self.actions[dropped]
                self._results.pop(dropped, None)
        self.steps.append(step)
        self.actions[action] = self.actions.get(action, 0) + 1
        self._mark_alternation()
        return step

    def _mark_alternation(self) -> None:
        if len(self.steps) < 6:
            return
        last = list(self.steps)[-6:]
        a, b = last[-1], last[-2]
        # Actions first (cheap); results only when the actions already alternate.
        if a.action == b.action or any(
            s.action != (a if i % 2 == 0 else b).action for i, s in enumerate(reversed(last))
        ):
            return
        if not all(s.same_as(a if i % 2 == 0 else b) for i, s in enumerate(reversed(last))):
            return
        if last[-2].alternation is None:
            self._alternations += 1
        number = last[-2].alternation or self._alternations
        for step in last:
            step.alternation = number

    def signature(self, step: Step) -> tuple[str, int]:
        """A key for a step's action and result: equal for two steps in the window exactly
        when they are the same (``same_as``). Results are masked only when one action gave
        different texts: a retry that returned the very same text needs no masking."""
        if step._signature is None:
            results = self._results.setdefault(step.action, [])
            for position, known in enumerate(results):
                if known.same_as(step):
                    assert known._signature is not None
                    step._signature = known._signature
                    if step.ordinal > known.ordinal:
                        results[position] = step  # the latest: the others leave the window first
                    break
            else:
                self._signatures += 1
                step._signature = (step.action, self._signatures)
                results.append(step)
            if len(results) > 1:  # forget results no step in the window gave any more
                oldest = self._ordinal - WINDOW
                results[:] = [known for known in results if known.ordinal > oldest]
        return step._signature

    def count(self, action: str) -> int:
        """How often ``action`` occurs in the window."""
        return self.actions.get(action, 0)

    def same_steps(self, step: Step) -> list[Step]:
        """Steps in the window with the same action and result as ``step``, oldest first."""
        if self.actions.get(step.action, 0) < 2:
            return [s for s in self.steps if s is step]
        return [s for s in self.steps if s.same_as(step)]

    def last_of(self, action: str) -> Step | None:
        """The latest step in the window with this action."""
        if not self.actions.get(action):
            return None
        for step in reversed(self.steps):
            if step.action == action:
                return step
        return None

    def current_run(self) -> list[Step]:
        """The steps of the latest run, oldest first (empty when a different call broke it)."""
        if not self.steps or self._broken:
            return []
        length = self.steps[-1].run_length
        return list(self.steps)[-length:]


def is_user_prompt(message: Message) -> bool:
    """True for what a person typed (progress for every loop rule)."""
    return message.role == "user" and message.kind == "prompt"
