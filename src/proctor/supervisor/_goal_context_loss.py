"""Context loss (SPEC GOAL-3): the agent asks for, or contradicts, what the user established.

What counts as established: a concrete value the user typed for a named thing —

- "the/our/my/your KEY is VALUE" ("the database is Postgres on port 5433"),
- a labelled line "KEY: VALUE" ("Database: Postgres 16"),
- "use VALUE for/as the KEY" ("use Redis for the cache"), and "port NNNN",
- a short reply (20 words or fewer) to an agent question that asked for exactly one KEY.

A value is concrete when it holds a token with a digit, a capital letter, a path or
dotted name, or a quoted or backticked span; the first word must not hedge ("not",
"probably"), and a range, limit, alternative or calculation ("between 220-400 per
night", "Postgres or MySQL", "€60 x 3 = €180") is a constraint, not a value. Vague keys ("the problem", "the goal", "the tests") are never facts. A later
user statement of the same key replaces the earlier one.

The agent loses context when a later reply asks "which/what KEY …?", "what is the
KEY?" or "where is the KEY?" without naming the value (a confirmation is fine), or
states "the KEY is OTHER" (or "KEY: OTHER") where no word and no number of OTHER matches
the user's value. Conditionals, hedges, negations, examples and quotes of the user ("you
said …") are not statements. Keys must match exactly (after case and plural folding):
"database engine" is not "database". Code blocks are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from proctor.findings import Finding, finding_key
from proctor.rules import Trace, cite_message
from proctor.supervisor._goal_terms import terms_match
from proctor.transcript import Message

RULE_ID = "goal.context_loss"
RULE_VERSION = 1
ANSWER_WORDS = 20

_KEY = r"[a-z][a-z0-9_-]*(?:[ \t]+[a-z][a-z0-9_-]*)?"
_VALUE = r"(?P<value>(?:[^\n;,.?!()]|[.,](?=\S))+)"
_STATEMENTS = [
    re.compile(
        r"\b(?:the|our|my|your)\s+(?P<key>" + _KEY + r")\s+(?:is|are|will\s+be|=)\s+" + _VALUE,
        re.IGNORECASE,
    ),
    re.compile(
        r"^[ \t]*(?:[-*•][ \t]*)?(?P<key>[A-Za-z][\w]*(?:[ -][A-Za-z]\w*)?)[ \t]*:[ \t]+"
        r"(?P<value>[^\n]+?)[ \t]*$",
        re.MULTILINE,
    ),
    re.compile(
        r"\buse\s+(?P<value>[A-Z][\w.+-]*(?:\s+\d[\w.]*)?)\s+(?:for|as)\s+"
        r"(?:the\s+|our\s+|my\s+)?(?P<key>" + _KEY + r")\b"
    ),
    re.compile(r"\b(?P<key>port)\s+(?P<value>\d{2,5})\b", re.IGNORECASE),
]
_QUESTIONS = [
    re.compile(
        r"\b(?:which|what)\s+(?:kind\s+of\s+|type\s+of\s+|sort\s+of\s+)?(?P<key>" + _KEY + r")"
        r"\s+(?:are|is|do|does|should|would|will|did|were|was|have|has|can)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bwhat(?:'s|’s|\s+is|\s+are)\s+(?:the|your|our)\s+(?P<key>" + _KEY + r")"
        r"\s*(?:\?|$|\b(?:you|we|to|for|that)\b)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bwhere\s+(?:is|are|do|does)\s+(?:the|your|our)\s+(?P<key>" + _KEY + r")\b",
        re.IGNORECASE,
    ),
]
# fmt: off
_VAGUE_KEYS = frozenset({
    "problem", "issue", "idea", "goal", "plan", "point", "thing", "reason", "question",
    "answer", "result", "output", "error", "task", "fix", "code", "change", "difference", "way",
    "best", "only", "first", "last", "next", "following", "same", "main", "other", "rest",
    "end", "case", "situation", "current", "new", "old", "one", "bug", "test", "file", "work",
    "status", "note", "step", "approach", "solution", "option", "reply", "response", "message",
    "summary", "context"
})
# fmt: on
# fmt: off
_NOT_KEY_WORDS = frozenset({
    "of", "the", "a", "an", "you", "we", "i", "it", "this", "that", "these", "those", "do",
    "is", "are", "be", "what", "which", "your", "our", "my"
})
# fmt: on
# fmt: off
_HEDGED_VALUE = frozenset({
    "not", "no", "never", "probably", "maybe", "perhaps", "likely", "unknown", "unclear", "tbd",
    "either"
})
# fmt: on
_CONSTRAINT = re.compile(
    r"\b(?:between|under|over|below|above|less|more|least|most|max(?:imum)?|min(?:imum)?"
    r"|up\s+to|around|about|approx\w*|roughly|within|range|budget|or|any|each|every|per)\b"
    r"|[<>~≤≥*×=+]|\d\s*[-–]\s*\d",
    re.IGNORECASE,
)
"""Ranges, limits, alternatives and arithmetic: a constraint or a computation, not one value."""
_NOT_STATEMENT = re.compile(
    r"\b(?:if|whether|unless|assum\w*|suppos\w*|maybe|perhaps|might|could|would|should|"
    r"e\.g|for example|such as|instead of|rather than|not|never|you said|you mentioned|"
    r"you told|typically|usually|default)\b|n't\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"`[^`\n]+`|\"[^\"\n]+\"|[\w./:@+-]+")
_SENTENCE = re.compile(r"[^\n]+?(?:[.!?](?=\s|$)|$)", re.MULTILINE)
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Fact:
    """A value the user established for a key."""

    key: str
    message: Message
    start: int
    end: int
    words: frozenset[str]
    numbers: frozenset[str]


def detect_context_loss(trace: Trace) -> list[Finding]:
    """Agent questions about, and statements against, values the user established."""
    facts: dict[str, Fact] = {}
    asked: list[str] = []
    findings: list[Finding] = []
    for event in trace.events:
        message = event.message
        if message is None or not message.on_active_branch or message.derived:
            continue
        text = _FENCED.sub(lambda m: " " * len(m.group(0)), message.text)
        if message.role == "user" and message.kind == "prompt":
            for fact in _facts(message, text, asked):
                facts[fact.key] = fact
            asked = []
        elif message.role == "assistant" and message.kind == "reply":
            asked = []
            for finding, key in _judge_reply(trace.context.conversation_id, message, text, facts):
                if finding is not None:
                    findings.append(finding)
                else:
                    asked.append(key)
    return findings


def _facts(message: Message, text: str, asked: list[str]) -> Iterator[Fact]:
    found = False
    for pattern in _STATEMENTS:
        for match in pattern.finditer(text):
            fact = _fact(message, match.group("key"), match.group("value"), *match.span())
            if fact is not None:
                found = True
                yield fact
    if not found and len(asked) == 1 and len(text.split()) <= ANSWER_WORDS:
        stripped = text.strip()
        start = text.find(stripped)
        fact = _fact(message, asked[0], stripped, start, start + len(stripped))
        if fact is not None:
            yield fact


def _judge_reply(
    conversation_id: str, message: Message, text: str, facts: dict[str, Fact]
) -> Iterator[tuple[Finding | None, str]]:
    """Findings of one reply, and (with None) the keys it asks about that are not facts."""
    reported: set[str] = set()
    for sentence in _SENTENCE.finditer(text):
        body = sentence.group(0)
        if body.rstrip().endswith("?"):
            for pattern in _QUESTIONS:
                for match in pattern.finditer(body):
                    key = _key(match.group("key"))
                    if key is None or key in reported:
                        continue
                    fact = facts.get(key)
                    if fact is None:
                        yield None, key
                    elif not _mentions(body, fact):
                        reported.add(key)
                        yield _finding(conversation_id, fact, message, sentence.span(), "ask"), key
        elif not _NOT_STATEMENT.search(body):
            for pattern in _STATEMENTS:
                for match in pattern.finditer(body):
                    key = _key(match.group("key"))
                    fact = facts.get(key) if key is not None else None
                    if key is None or fact is None or key in reported:
                        continue
                    said = _tokens(match.group("value"))
                    if said is not None and _contradicts(fact, *said):
                        reported.add(key)
                        span = (sentence.start() + match.start(), sentence.start() + match.end())
                        yield _finding(conversation_id, fact, message, span, "contradict"), key


def _key(raw: str) -> str | None:
    words = [w if len(w) <= 4 or not w.endswith("s") or w.endswith("ss") else w[:-1]
             for w in raw.lower().split()]  # fmt: skip
    if not words or any(w in _NOT_KEY_WORDS for w in words) or words[-1] in _VAGUE_KEYS:
        return None
    return " ".join(words)


def _tokens(value: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """Concrete words and numbers of a value; None when it is not a concrete value."""
    tokens = _TOKEN.findall(value)[:8]
    if not tokens or tokens[0].lower() in _HEDGED_VALUE or _CONSTRAINT.search(value):
        return None
    words: set[str] = set()
    numbers: set[str] = set()
    for token in tokens:
        bare = token.strip('`"').rstrip(".:").lower()
        quoted = token[0] in '`"'
        if bare.replace(".", "").isdigit():
            numbers.add(bare)
        elif (
            len(bare) >= 2
            and (quoted or any(c.isupper() for c in token) or any(c in bare for c in "/._:@"))
        ) or any(c.isdigit() for c in bare):
            words.add(bare)
    return (frozenset(words), frozenset(numbers)) if words or numbers else None


def _fact(message: Message, raw_key: str, value: str, start: int, end: int) -> Fact | None:
    key = _key(raw_key)
    tokens = _tokens(value)
    if key is None or tokens is None:
        return None
    return Fact(key, message, start, end, *tokens)


def _mentions(text: str, fact: Fact) -> bool:
    lowered = text.lower()
    return any(token in lowered for token in fact.words | fact.numbers)


def _contradicts(fact: Fact, words: frozenset[str], numbers: frozenset[str]) -> bool:
    """No word and no number in common, and at least one kind present on both sides."""
    compared = False
    for said, known in ((words, fact.words), (numbers, fact.numbers)):
        if said and known:
            compared = True
            if any(terms_match(a, b) for a in said for b in known):
                return False
    return compared


def _finding(
    conversation_id: str, fact: Fact, reply: Message, span: tuple[int, int], kind: str
) -> Finding:
    asks = kind == "ask"
    evidence = [cite_message(fact.message, fact.start, fact.end), cite_message(reply, *span)]
    established = evidence[0].excerpt or fact.key
    title = (
        f"Agent asks again for the {fact.key} the user gave"
        if asks
        else f"Agent contradicts the {fact.key} the user gave"
    )
    content = f"The user established “{established}”, but the agent later " + (
        "asks for it again." if asks else f"states “{evidence[1].excerpt}”."
    )
    return Finding(
        key=finding_key(RULE_ID, conversation_id, evidence, title),
        conversation_id=conversation_id,
        origin="rule",
        rule=RULE_ID,
        rule_version=RULE_VERSION,
        action="comment" if asks else "warn",
        category="quality" if asks else "contradiction",
        severity="low" if asks else "medium",
        title=title,
        content=content,
        evidence=evidence,
        trigger_source_id=reply.source_id,
    )
