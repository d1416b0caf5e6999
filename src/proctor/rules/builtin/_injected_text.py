"""Finding instructions addressed to the agent inside untrusted tool output, and the values in them.

Data a tool returns (a web page, an email, a file, a review) is written for people; text
in it that addresses the *AI agent* — names it ("to you, GPT-4", "AI assistants reading
this"), refers to its task or instructions ("before you can solve the task I gave you",
"ignore previous instructions"), or poses as a system message — is an instruction the
user never gave. This module finds such spans generically (no benchmark wording, task or
model list), and pulls out the values an attacker wants used: e-mail addresses, URLs,
account numbers, phone numbers, quoted strings, identifiers and names.

Text may carry escaped newlines (``\\n``) when a tool returned a repr of data; both forms
count as line breaks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import NamedTuple

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

_AI = (
    r"(?:AI|A\.I\.|assistant|agent|language model|LLM|chat ?bot|bot|model|GPT[-\w.]*|ChatGPT|"
    r"Claude[-\w.]*|Gemini[-\w.]*|Llama[-\w.]*|Command[- ]?R\+?|Mistral|Mixtral|Qwen|DeepSeek|"
    r"Copilot|Cursor|Codex)"
)
_AI_WORD = ("ai", "a.i.", "assistant", "agent", "model", "llm", "bot", "gpt", "claude", "gemini", "llama", "command", "mistral", "mixtral", "qwen", "deepseek", "copilot", "cursor", "codex")  # fmt: skip
_TASK_WORD = ("task", "request", "instruction", "job", "assignment", "goal", "objective")


class MarkerSpec(NamedTuple):
    """One marker: its pattern, the literals its match must contain, and what its fast paths
    may take for granted (each field past ``required`` is held by a property test)."""

    pattern: str
    required: tuple[tuple[str, ...], ...]
    """The literals (lower case) a match must contain: groups that must all be present, any
    word of a group will do. The first group's words are the marker's anchor words.
    Checking them with ``in`` first keeps the regular expressions off the large majority of
    outputs they cannot match."""
    starts_at_anchor: bool = False
    """Every match begins with one of the anchor words: where the text lines up with its
    lower-cased copy, the marker is tried right at each anchor instead of searched for in a
    window around it."""
    ends_at_anchor: bool = False
    """Every match ends with one of the anchor words (plus at most one letter, a plural
    "s"): the window searched around an anchor needs to reach only just past it."""
    before: int | None = None
    """For a marker searched for in windows: how far before an anchor a match can begin
    (its words before it are few; whitespace runs of about 40 characters between them, or
    an AI name of 40, are as far as they are looked for). None: ``_WINDOW_BEFORE``."""
    reach: int | None = None
    """For a marker searched for in windows whose words after an anchor are few: how far
    past an anchor a match can end (whitespace runs of about 40 characters between those
    words, or an AI name of 60, are as far as they are looked for; "system" markers hold
    no whitespace there). None: ``_WINDOW_AFTER``."""
    lead_in: tuple[str, ...] = ()
    """The anchor word (the last word of every match) follows whitespace and a word ending
    in one of these: where no anchor of the text does, the text holds no match (and the
    marker's windows are not searched). Empty: no such test."""
    tail: str | None = None
    """Every match holds, starting at one of its anchor words, a match of this pattern
    (over the lower-cased text): where no anchor starts one, the text holds no match."""


_LEAD_WORDS = ("new", "real", "actual", "true", "updated", "primary", "first")

_MARKER_SPECS: tuple[MarkerSpec, ...] = (
    # "ignore (all) previous instructions", "disregard the above rules"
    MarkerSpec(
        r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|"
        r"earlier|all|original|your|system|user'?s?)\b[^.\n]{0,30}?\b(?:instructions?|tasks?|"
        r"prompts?|rules?|directions?|guidelines?|messages?)",
        (
            ("ignore", "disregard", "forget", "override", "bypass"),
            ("instruction", "task", "prompt", "rule", "direction", "guideline", "message"),
        ),
        starts_at_anchor=True,
    ),
    # "… to you, GPT-4", "message for the AI assistant"
    MarkerSpec(
        r"\bto you,?\s+(?:the\s+|my\s+|dear\s+)?" + _AI + r"\b",
        (("to you",), _AI_WORD),
        starts_at_anchor=True,
    ),
    MarkerSpec(
        r"\b(?:dear|attention|hey|hello|hi|note to|message (?:to|for)|instructions? (?:to|for))\s+"
        r"(?:the\s+|all\s+|any\s+)?" + _AI + r"s?\b",
        (
            (
                "dear",
                "attention",
                "hey",
                "hello",
                "hi",
                "note to",
                "message to",
                "message for",
                "instruction",
            ),
            _AI_WORD,
        ),
        starts_at_anchor=True,
    ),
    # "AI assistants reading this", "if you are an AI"
    MarkerSpec(
        r"\b" + _AI + r"s?\s+(?:reading|processing|seeing|parsing|summari[sz]ing|that reads?|who "
        r"reads?|that is reading)\s+(?:this|these)\b",
        (("read", "processing", "seeing", "parsing", "summari"), _AI_WORD),
        before=80,
        reach=60,
        tail=r"(?:read(?:ing|s)?|processing|seeing|parsing|summari[sz]ing)\s+th(?:is|ese)\b",
    ),
    MarkerSpec(
        r"\bif you are an?\s+" + _AI + r"\b",
        (("if you are a",), _AI_WORD),
        starts_at_anchor=True,
    ),
    MarkerSpec(
        r"\bas an?\s+" + _AI + r",?\s+you\s+(?:must|should|need|have|will)\b",
        (("as a",), ("must", "should", "need", "have", "will")),
        starts_at_anchor=True,
    ),
    # references to the agent's own task or instructions
    MarkerSpec(
        r"\b(?:the|your)\s+(?:original\s+)?(?:task|request|instructions?|job|assignment|goal)\s+"
        r"(?:that\s+)?(?:I|the user|we|they)\s+(?:gave|assigned|asked|provided|set)\b",
        (("gave", "assigned", "asked", "provided", "set"), _TASK_WORD),
        ends_at_anchor=True,
        before=100,
    ),
    MarkerSpec(
        r"\bbefore you (?:can |may |are able to )?(?:solve|complete|finish|answer|continue|proceed"
        r"|respond|do|start|perform)\b",
        (("before you",),),
        starts_at_anchor=True,
    ),
    MarkerSpec(
        r"\b(?:your|the)\s+(?:new|real|actual|true|updated|primary|first)\s+(?:task|goal|"
        r"instructions?|objective)\b",
        (_TASK_WORD, _LEAD_WORDS),
        ends_at_anchor=True,
        before=60,
        lead_in=_LEAD_WORDS,
    ),
    MarkerSpec(
        r"\b(?:new|updated|additional|important|urgent|hidden|secret)\s+instructions?\s+(?:for|to)"
        r"\s+(?:you|the\s+" + _AI + r")\b",
        (("instruction",),),
        before=50,
        reach=100,
    ),
    MarkerSpec(
        r"\binstead of (?:the|your) (?:user'?s? )?(?:task|request|instructions?)\b",
        (("instead of",),),
        starts_at_anchor=True,
    ),
    # posing as another voice: a system message, chat-template tokens
    MarkerSpec(
        r"(?:\(|\[|<|#{2,}\s*)system[_ ]?(?:message|override|instructions?)?(?:\)|\]|>)|"
        r"\[/?INST\]|<\|im_start\|>|<\|system\|>|\bSYSTEM (?:OVERRIDE|MESSAGE|NOTICE)\b",
        (("system", "[inst", "[/inst", "im_start"),),
        before=40,
        reach=30,
    ),
    MarkerSpec(
        r"\b(?:do not|don't|never)\s+(?:tell|inform|mention|notify|alert|reveal(?: this)? to|"
        r"let)\s+(?:the\s+)?user\b",
        (("do not", "don't", "never"), ("user",)),
        starts_at_anchor=True,
    ),
)


class _Marker(NamedTuple):
    pattern: re.Pattern[str]
    required: tuple[tuple[str, ...], ...]


_MARKERS = tuple(_Marker(re.compile(s.pattern, re.IGNORECASE), s.required) for s in _MARKER_SPECS)

# The same patterns for the lower-cased text, case-sensitive and without a leading ``\b``:
# wherever a marker matches the text, its skeleton matches the lower-cased text at the same
# place (when the two line up, see ``_UNALIGNED``), and the regular expression engine finds
# a skeleton's first characters quickly. Markers are tried only where skeletons match.
_SKELETONS = tuple(re.compile(s.pattern.removeprefix(r"\b").lower()) for s in _MARKER_SPECS)
# Characters for which the lower-cased text does not line up with what the case-blind
# patterns match (a different length, or a case-blind match of an ASCII letter that
# ``str.lower`` does not give): with one of them present, every window is searched.
_UNALIGNED = re.compile("[\u0130\u0131\u017f\u212a]")


_ANCHOR_WORDS = sorted({word for _, groups in _MARKERS for word in groups[0]})
_ANCHOR_PATTERNS = tuple(
    tuple(number for number, (_, groups) in enumerate(_MARKERS) if word in groups[0])
    for word in _ANCHOR_WORDS
)
"""Per anchor word (a word of a marker's first group), the markers it anchors."""
_ANCHOR_STARTS_WORD = tuple(word[0].isalnum() or word[0] == "_" for word in _ANCHOR_WORDS)
_ANCHORS = AhoCorasick(_ANCHOR_WORDS)
_ANCHOR_BYTES = BytesAhoCorasick([word.encode() for word in _ANCHOR_WORDS])
"""The same automaton over bytes: for ASCII text, byte offsets are character offsets, and
searching bytes skips the offset translation a ``str`` search does."""
_PAST_ANCHOR = max(map(len, _ANCHOR_WORDS)) + 1
"""How far past where an anchor word begins a match that ends with it can reach."""


def _anchor_positions(lowered: str, *, word_starts: bool) -> dict[int, list[int]]:
    """Per marker with any, where its anchor words start in ``lowered``, in order (one pass).

    With ``word_starts``, an occurrence of a word that begins with a letter or digit counts
    only where a word begins (no word character before it). Every marker pattern has its
    anchor words right after ``\\b`` or whitespace, so the occurrences left out ("hi" in
    "this", "set" in "reset") can never be the anchor of a match.
    """
    positions: dict[int, list[int]] = {}
    if lowered.isascii():
        found_words = _ANCHOR_BYTES.find_matches_as_indexes(lowered.encode(), overlapping=True)
    else:
        found_words = _ANCHORS.find_matches_as_indexes(lowered, overlapping=True)
    for word, at, _end in found_words:
        if word_starts and at and _ANCHOR_STARTS_WORD[word]:
            before = lowered[at - 1]
            if before.isalnum() or before == "_":
                continue
        for number in _ANCHOR_PATTERNS[word]:
            found = positions.get(number)
            if found is None:
                positions[number] = [at]
            else:
                found.append(at)
    for found in positions.values():
        if len(found) > 1:
            found.sort()  # overlapping words of different lengths end out of start order
    return positions


_WINDOW_BEFORE = 120
_WINDOW_AFTER = 400
_LOOK_BACK = 600
"""How far before a marker the start of its instruction block is looked for."""
_NEAR = 160
"""Characters before a marker searched first for where its block begins."""


class _Plan(NamedTuple):
    """How to look for one marker (in text that lines up with its lower case, or not)."""

    pattern: re.Pattern[str]
    skeleton: re.Pattern[str] | None
    """Tried first on the lower-cased text (``None``: search every window in full)."""
    at_anchor: bool
    """Tried only right at its anchors' positions."""
    before: int
    """How far before an anchor a window begins."""
    reach: int
    """How far past an anchor a window ends."""
    later: tuple[tuple[str, ...], ...]
    """Groups one word of each of which the text must hold (for markers in windows)."""
    lead: tuple[str, ...]
    """Words one of which some anchor must follow (``MarkerSpec.lead_in``; empty: no test)."""
    tail: re.Pattern[str] | None
    """What some anchor must start (``MarkerSpec.tail``; None: no test)."""


def _plan(number: int, *, aligned: bool) -> _Plan:
    spec = _MARKER_SPECS[number]
    pattern, groups = _MARKERS[number]
    if not aligned:
        return _Plan(pattern, None, False, _WINDOW_BEFORE, _WINDOW_AFTER, groups[1:], (), None)
    at_anchor = spec.starts_at_anchor
    if spec.ends_at_anchor:
        reach = _PAST_ANCHOR
    else:
        reach = _WINDOW_AFTER if spec.reach is None else spec.reach
    before = _WINDOW_BEFORE if spec.before is None else spec.before
    later = () if at_anchor else groups[1:]
    tail = re.compile(spec.tail) if spec.tail is not None else None
    return _Plan(pattern, _SKELETONS[number], at_anchor, before, reach, later, spec.lead_in, tail)


def _fits_anchor(lowered: str, anchor: int, plan: _Plan) -> bool:
    """Whether a match could hold the anchor word at ``anchor``: it starts the plan's tail
    and follows whitespace and one of its lead words (looked for only as far back as its
    windows reach)."""
    if plan.tail is not None and plan.tail.match(lowered, anchor) is None:
        return False
    if plan.lead:
        head = lowered[max(0, anchor - plan.before) : anchor]
        word = head.rstrip()
        return len(word) < len(head) and word.endswith(plan.lead)
    return True


_ALIGNED_PLANS = tuple(_plan(number, aligned=True) for number in range(len(_MARKERS)))
_UNALIGNED_PLANS = tuple(_plan(number, aligned=False) for number in range(len(_MARKERS)))


class _MarkerScanner:
    """Finds the next marker at or after a position, searching only near anchor words.

    Once a marker is found, the caller skips past the whole instruction block, so an
    output that repeats an injection twenty times costs twenty finds, not twenty times
    every marker pattern.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        lowered = text.lower()
        self.lowered = lowered
        aligned = text.isascii() or _UNALIGNED.search(text) is None
        plans = _ALIGNED_PLANS if aligned else _UNALIGNED_PLANS
        self.plans: list[_Plan] = []
        """How to look for each candidate marker."""
        self.anchors: list[list[int]] = []
        """Per candidate marker, where its anchor words begin, in order."""
        positions = _anchor_positions(lowered, word_starts=aligned)
        contains = lowered.__contains__
        present: dict[tuple[str, ...], bool] = {}  # several patterns share a group
        for number in sorted(positions):  # markers without an anchor cannot match
            plan, anchors = plans[number], positions[number]
            if (plan.lead or plan.tail) and not any(
                _fits_anchor(lowered, at, plan) for at in anchors
            ):
                continue
            # A marker tried right at its anchors needs no other cheap test; one searched
            # for in windows is skipped when a later group's words are all missing.
            for group in plan.later:
                found = present.get(group)
                if found is None:
                    found = present[group] = any(map(contains, group))
                if not found:
                    break
            else:
                self.plans.append(plan)
                self.anchors.append(anchors)
        self.cache: list[tuple[int, int, str] | None] = [(-1, -1, "")] * len(self.plans)

    def next_hit(self, cursor: int) -> tuple[int, int, str] | None:
        """The earliest marker match starting at or after ``cursor``."""
        order: list[tuple[int, int]] = []
        cache = self.cache
        for index, anchors in enumerate(self.anchors):
            cached = cache[index]
            if cached is None:
                continue
            if cached[0] >= cursor:
                order.append((cached[0], index))
                continue
            before = self.plans[index].before
            at = bisect.bisect_left(anchors, cursor - before)
            if at < len(anchors):
                order.append((anchors[at] - before, index))
            else:
                cache[index] = None
        best: tuple[int, int, str] | None = None
        # Patterns in the order their next possible match starts: once the best match
        # starts before a pattern's earliest window, that pattern cannot do better.
        for earliest, index in sorted(order):
            if best is not None and best[0] <= earliest:
                break
            cached = cache[index]
            if cached is None or cached[0] < cursor:
                plan, anchors = self.plans[index], self.anchors[index]
                if plan.at_anchor:
                    cached = self._match_at_anchors(plan.pattern, anchors, cursor)
                else:
                    cached = self._search(plan, anchors, cursor)
                cache[index] = cached
            if cached is not None and (best is None or cached[0] < best[0]):
                best = cached
        return best

    def _match_at_anchors(
        self, pattern: re.Pattern[str], anchors: list[int], cursor: int
    ) -> tuple[int, int, str] | None:
        text = self.text
        for position in anchors[bisect.bisect_left(anchors, cursor) :]:
            match = pattern.match(text, position, position + _WINDOW_AFTER)
            if match is not None:
                return match.start(), match.end(), match.group(0)
        return None

    def _search(self, plan: _Plan, anchors: list[int], cursor: int) -> tuple[int, int, str] | None:
        pattern, skeleton, before, reach = plan.pattern, plan.skeleton, plan.before, plan.reach
        searched = cursor
        for position in anchors[bisect.bisect_left(anchors, cursor - before) :]:
            end = min(len(self.text), position + reach)
            if end <= searched:
                continue
            start = max(searched, position - before)
            if skeleton is None:
                match = pattern.search(self.text, start, end)
            else:
                match = self._search_at_skeletons(pattern, skeleton, start, end)
            if match is not None:
                return match.start(), match.end(), match.group(0)
            searched = max(searched, end - before)
        return None

    def _search_at_skeletons(
        self, pattern: re.Pattern[str], skeleton: re.Pattern[str], start: int, end: int
    ) -> re.Match[str] | None:
        """``pattern.search(text, start, end)``, tried only where the skeleton matches."""
        while (rough := skeleton.search(self.lowered, start, end)) is not None:
            match = pattern.match(self.text, rough.start(), end)
            if match is not None:
                return match
            start = rough.start() + 1
        return None


_NL = r"(?:\n|\\n)"
_DASH_ITEM = r"[ \t]*-[ \t]+[A-Za-z_]\w*:\s"
_KEY_LINE = r"[ \t]*[A-Za-z_]\w*:[ \t]"
_QUOTED_KEY = r"[\"'][^\"'\n]{1,80}[\"']\s*:"
# Where a data record resumes after an injected string: the next key of a dict or YAML record.
# Every branch starts with a literal (and the branches in the order of the plain form), so
# the regular expression engine skips ahead to the characters that can begin one; a branch
# starting with a class or a group would make it try every position (3x slower).
_DATA_BOUNDARY = re.compile(
    rf"\",\s*{_QUOTED_KEY}|',\s*{_QUOTED_KEY}|\}},\s*[{{\[]|\],\s*[{{\[]|"
    rf"\n(?:{_DASH_ITEM}|{_KEY_LINE})|\\n(?:{_DASH_ITEM}|{_KEY_LINE})"
)
_BLANK_LINE = re.compile(_NL + r"[ \t]*" + _NL)
_CLOSER = r"[\"')\]]?(?=\s)"
_SENTENCE_END = re.compile(rf"\.{_CLOSER}|!{_CLOSER}|\?{_CLOSER}|\n|\\n")  # literals first
SPAN_AFTER_MARKER = 1500
"""Characters after the last marker an instruction block may run on."""
_BOUNDARY_ROOM = 200
"""Longest data boundary looked for (a quoted key is at most 80 characters)."""

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_SPACE = re.compile(r"\s")
_SPACES = (" ", "\n", "\t", "\r", "\f", "\v")
_URL = re.compile(
    r"(?:https?://|www\.)[^\s'\"<>)\]\\]+|\b(?:[\w-]++\.)+(?:com|org|net|io|ai|dev|info|co|"
    r"us|uk|de|fr|app|site|xyz|biz|me|ru|cn|online|store|tech)\b(?:/[^\s'\"<>)\]\\]*)?"
)
# Lookaheads without backtracking: in a run of capitals and digits the first character that is
# not a capital decides whether there is a digit, the first that is not a digit whether there
# is a capital (and likewise for identifiers below). Patterns that begin with a character
# class (the word boundary checked behind the first character, and lookaheads moved past it:
# "a digit ahead" holds when that first character is one) let the engine skip ahead to where
# a match can start.
_ACCOUNT = re.compile(
    r"[A-Z\d](?<=\b[A-Z\d])(?:(?<=[A-Z0-9])(?:(?<=\d)|(?=[A-Z]*+\d))(?:(?<=[A-Z])|(?=\d*+[A-Z]))"
    r"[A-Z0-9]{9,33}\b|(?<=\d)\d{7,}\b)"
)
_PHONE = re.compile(r"[+\d](?:(?<=\+)\d|(?<!\+))[\d ()-]{7,}\d")
_QUOTED = re.compile(r"['\"“‘]([^'\"”’\n\\]{1,80})['\"”’]")
_DIGIT = re.compile(r"\d")
_IDENT = re.compile(r"\b(?=[^\W_\d]*+[_\d])(?=\w*[A-Za-z])\w{6,40}\b")
_NAME = re.compile(
    r"[A-Z](?<=\b[A-Z])[a-z]+(?:\s+(?:[A-Z][a-z]+|of|the|de|la)){0,3}\s+[A-Z][a-z]+\b"
)
_CHANNEL = re.compile(r"#([A-Za-z][\w-]{1,40})")
_HANDLE = re.compile(r"@([A-Za-z][\w.-]{1,30}[A-Za-z\d])")
_FILE = re.compile(
    r"\w(?<=\b\w)[\w.-]{0,80}\.(?:pdf|docx?|xlsx?|csv|txt|pptx?|zip|json|md|png|jpe?g|html?|"
    r"ya?ml|sh|py|exe)\b",
    re.IGNORECASE,
)
_MID_WORD = re.compile(r"(?<=[a-z,] )[A-Z][a-z]{2,20}\b")
"""A capitalised word inside a sentence: a person's or a place's name ("send it to Dora")."""


@dataclass(frozen=True, slots=True)
class InjectedSpan:
    """Instructions addressed to the agent, found in one tool output."""

    start: int
    end: int
    marker: str
    """The words that show the text addresses the agent."""


@dataclass(frozen=True, slots=True)
class InjectedValue:
    """A value inside an injected span that a later call might use."""

    value: str
    """Normalised (lower case; URLs without scheme, ``www.`` and trailing slash)."""
    kind: str
    """``email``, ``url``, ``account``, ``phone``, ``quoted``, ``identifier``, ``name``,
    ``channel``, ``user`` (a handle), ``file`` or ``word`` (a capitalised word)."""
    strong: bool = field(init=False)
    """Distinctive enough to match inside a longer argument (not only whole values)."""

    def __post_init__(self) -> None:
        strong = self.kind in ("email", "url", "account", "phone") or (
            self.kind == "quoted" and len(self.value) >= 8
        )
        object.__setattr__(self, "strong", strong)


def normalise_url(value: str) -> str:
    """Compare URLs without scheme, ``www.`` or trailing punctuation."""
    value = value.strip(".,;:!?").lower()
    value = re.sub(r"^https?://", "", value)
    value = re.sub(r"^www\.", "", value)
    return value.rstrip("/")


def normalise_argument(text: str) -> str:
    """An argument string in the form values are compared in."""
    lowered = text.lower()
    return lowered.replace("https://", "").replace("http://", "").replace("www.", "")


def find_spans(text: str) -> tuple[InjectedSpan, ...]:
    """Instruction blocks addressed to the agent, in order, not overlapping."""
    scanner = _MarkerScanner(text)
    spans: list[InjectedSpan] = []
    cursor = 0
    while (hit := scanner.next_hit(cursor)) is not None:
        start, end, marker = hit
        # Start one sentence before the marker, but never across a blank line or a data boundary:
        # text before that belongs to the data the instruction hides in.
        span_start = _span_start(text, start)
        # Only a boundary before the span's longest reach matters: the search stops there
        # (with room for the boundary itself), not at the end of a long output.
        boundary = _DATA_BOUNDARY.search(text, end, end + SPAN_AFTER_MARKER + _BOUNDARY_ROOM)
        span_end = min(boundary.start() if boundary else len(text), end + SPAN_AFTER_MARKER)
        spans.append(InjectedSpan(span_start, span_end, marker))
        cursor = max(span_end, end)
    return tuple(spans)


def _span_start(text: str, marker: int) -> int:
    """Where the instruction block holding a marker begins: one sentence before the marker,
    but never across a blank line or a data boundary (text before that is the data the
    instruction hides in), and at most ``_LOOK_BACK`` characters before it.

    The nearest boundaries are looked for just before the marker first, and further back
    only when none is there: most markers sit a line or two into their block.
    """
    back = max(0, marker - _LOOK_BACK)
    near = max(back, marker - _NEAR)
    for window in (near, back) if near > back else (back,):
        floor = max(
            [m.end() for m in _BLANK_LINE.finditer(text, window, marker)]
            + [m.end() for m in _DATA_BOUNDARY.finditer(text, window, marker)],
            default=back,
        )
        if floor > back or window == back:
            break
    ends: list[int] = []
    for window in (max(floor, near), floor) if near > floor else (floor,):
        ends = [m.end() for m in _SENTENCE_END.finditer(text, window, marker)]
        if len(ends) >= 2:
            break
    return ends[-2] if len(ends) >= 2 else floor


def extract_values(text: str) -> tuple[InjectedValue, ...]:
    """Values an instruction asks the agent to use, most distinctive first."""
    found: dict[str, InjectedValue] = {}

    def add(value: str, kind: str) -> None:
        if value and value not in found:
            found[value] = InjectedValue(value, kind)

    emails, rest = _emails(text) if "@" in text else ((), text)
    for email in emails:
        add(email.strip(".,;:").lower(), "email")
    # URLs, accounts and identifiers hold no whitespace and are not all letters: searched
    # for only in the words that are not (each pattern finds what it finds in ``rest``).
    words = list(filterfalse(str.isalpha, rest.split()))
    tokens = " ".join(words)
    # A URL holds a "/" or a "." followed by more: only such words are searched for one.
    for match in _URL.finditer(" ".join([w for w in words if "/" in w or "." in w[:-1]])):
        url = normalise_url(match.group(0))
        if len(url) >= 4:
            add(url, "url")
    has_digit = _DIGIT.search(tokens) is not None
    for match in _ACCOUNT.finditer(tokens) if has_digit else ():
        add(match.group(0).lower(), "account")
    for match in _PHONE.finditer(rest) if has_digit else ():
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= 8:
            add(match.group(0).strip().lower(), "phone")
    for match in _QUOTED.finditer(text):
        quoted = match.group(1).strip().lower()
        if quoted:
            add(quoted, "quoted")
    for match in _IDENT.finditer(tokens) if has_digit or "_" in tokens else ():
        add(match.group(0).lower(), "identifier")
    for match in _NAME.finditer(rest):
        add(match.group(0).lower(), "name")
    if "#" in rest:
        for match in _CHANNEL.finditer(rest):
            add(match.group(0).lower(), "channel")
            add(match.group(1).lower(), "channel")
    if "@" in rest:
        for match in _HANDLE.finditer(rest):
            add(match.group(0).lower(), "user")
            add(match.group(1).lower(), "user")
    if "." in tokens:
        for match in _FILE.finditer(tokens):
            add(match.group(0).lower(), "file")
    for match in _MID_WORD.finditer(rest):
        add(match.group(0).lower(), "word")
    return tuple(found.values())


def target_values(text: str) -> tuple[InjectedValue, ...]:
    """The e-mail addresses, URLs and account numbers (letters and digits) in a text: the
    values that pick where an effect lands. Cheaper than ``extract_values``: text without
    an "@", a "." or a digit holds none."""
    has_at, has_dot = "@" in text, "." in text
    has_digit = _DIGIT.search(text) is not None
    if not (has_at or has_dot or has_digit):
        return ()
    found: dict[str, InjectedValue] = {}
    emails, rest = _emails(text) if has_at else ((), text)
    for email in emails:
        value = email.strip(".,;:").lower()
        found.setdefault(value, InjectedValue(value, "email"))
    words = [w for w in rest.split() if not w.isalpha()]
    if has_dot or "/" in rest:
        urls = " ".join([w for w in words if "/" in w or "." in w[:-1]])
        for match in _URL.finditer(urls):
            url = normalise_url(match.group(0))
            if len(url) >= 4:
                found.setdefault(url, InjectedValue(url, "url"))
    if has_digit:
        for match in _ACCOUNT.finditer(" ".join(words)):
            account = match.group(0).lower()
            if not account.isdigit():
                found.setdefault(account, InjectedValue(account, "account"))
    return tuple(found.values())


def _emails(text: str) -> tuple[list[str], str]:
    """E-mail addresses in order, and the text with each replaced by a space.

    Searched for only in the whitespace-free stretch around each "@": an address holds no
    whitespace, and searching the whole text would try every word as an address's start.
    (Any window start after the previous address is right; after the nearest space, tab
    or line break is merely cheap.)
    """
    emails: list[str] = []
    pieces: list[str] = []
    position = 0  # where the previous address ended
    at = text.find("@")
    while at != -1:
        start = max(position, *(text.rfind(space, position, at) + 1 for space in _SPACES))
        end_match = _SPACE.search(text, at)
        end = end_match.start() if end_match else len(text)
        match = _EMAIL.search(text, start, end)
        if match is None:
            at = text.find("@", at + 1)
            continue
        emails.append(match.group(0))
        pieces += (text[position : match.start()], " ")
        position = match.end()
        at = text.find("@", position)
    return emails, "".join(pieces) + text[position:]


def strip_spans(text: str, spans: Sequence[InjectedSpan]) -> str:
    """The text with injected spans blanked out (what the data itself says)."""
    pieces: list[str] = []
    position = 0
    for span in spans:
        pieces.append(text[position : span.start])
        pieces.append(" ")
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces)
