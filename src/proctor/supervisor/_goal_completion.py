"""Completion claimed without the goal's criteria evidenced (SPEC GOAL-3).

Criteria are read from the goal version in force when the agent claims completion:

- items of an "Acceptance criteria:", "Requirements:", "Definition of done:" or
  "Done when:" section, and bullet items that start with a verb ("- add a --json flag");
- "make sure …", "ensure …", "be sure to …", "remember to …", "X must …";
- "add/write a test …" and "update the README/docs/changelog …".

Each criterion is checked against the tool calls made since the goal began (the first
version or the latest new goal) up to the claim, the claim's own calls included:

- tests / lint / build passing: a test, lint or build run (whether it passed is the
  ``unverified_claim`` rule's question; a claim message that itself says tests pass is
  left to that rule, so the two never report the same gap);
- a test added: a file tool or shell command that writes a test file;
- docs updated: a call, other than a read, that names the README, docs or changelog;
- anything else: a tool call whose arguments share a salient term with the criterion —
  one the rest of the goal does not use, when there is one ("handle empty input" in
  "Write a CSV parser. The parser must handle empty input." needs "empty", since every
  call of the task is about the parser); criteria without salient terms are skipped.

A completion claim is a reply sentence such as "Done.", "All set", "It's complete",
"I've implemented …", "… has been implemented", "ready for review" — not a question,
and not hedged or negated in its clause ("once it's done", "not finished yet"). Each
criterion is reported at most once per goal, at the first claim that lacks it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from proctor.findings import Evidence, Finding, finding_key
from proctor.rules import Trace, argument_strings, cite_absence, cite_message, file_paths
from proctor.rules.builtin import call_topics, commands_of, edited_paths, find_claims, is_inspection
from proctor.supervisor._goal_terms import Vocabulary, salient_terms
from proctor.supervisor._goals import GoalSpan
from proctor.transcript import Message, ToolCall

RULE_ID = "goal.unverified_completion"
RULE_VERSION = 1
CRITERION_CHARS = 160

CriterionKind = Literal["tests", "lint", "build", "test_added", "docs", "terms"]


@dataclass(frozen=True, slots=True)
class Criterion:
    """One completion criterion of a goal."""

    text: str
    kind: CriterionKind


_SECTION = re.compile(
    r"^\W*(?:acceptance\s+criteria|requirements|definition\s+of\s+done|done\s+when|criteria)"
    r"\W*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(?P<item>\S.*?)\s*$")
# fmt: off
_VERBS = frozenset({
    "add", "update", "make", "ensure", "handle", "support", "write", "remove", "implement",
    "fix", "keep", "use", "include", "document", "create", "rename", "move", "test", "validate",
    "return", "raise", "log", "reject", "accept", "allow", "prevent", "show", "display",
    "store", "save", "export", "import", "convert", "parse", "check", "verify", "refactor",
    "delete", "replace", "must", "should", "run", "cover"
})
# fmt: on
_WORD = r"[\w`'/-]+(?:\.[\w`'/-]+)*"
"""A word of a criterion's subject; a dot only inside it (``invoice.py``), never at its end."""
_PHRASES = re.compile(
    r"\b(?:make\s+sure(?:\s+that)?|ensure(?:\s+that)?|be\s+sure\s+to|remember\s+to"
    r"|don'?t\s+forget\s+to)\s+(?P<item>[^.;!?\n]+)"
    r"|(?P<must>\b" + _WORD + r"(?:[ \t]+" + _WORD + r"){0,4}[ \t]+must[ \t]+[^.;!?\n]+)"
    r"|(?P<test>\b(?:add|write|include|create)\s+(?:a\s+|an\s+|some\s+|new\s+|unit\s+"
    r"|regression\s+)*tests?\b[^.;!?\n]*)"
    r"|(?P<docs>\b(?:update|document)\s+[^.;!?\n]*?\b(?:readme|docs|documentation"
    r"|changelog)\b[^.;!?\n]*)",
    re.IGNORECASE,
)
_KINDS: list[tuple[CriterionKind, re.Pattern[str]]] = [
    ("test_added", re.compile(r"\b(?:add|write|create|include|new)\b.*\btests?\b", re.I)),
    ("tests", re.compile(r"\b(?:tests?|test\s+suite|ci|specs?)\b.*\b(?:pass|green|succeed)", re.I)),
    ("lint", re.compile(r"\b(?:lint|linter|ruff|eslint|flake8|pylint)\b", re.I)),
    ("build", re.compile(r"\b(?:type[- ]?checks?|typecheck|mypy|tsc|pyright|builds?|compiles?)\b", re.I)),
    ("docs", re.compile(r"\b(?:readme|docs|documentation|changelog)\b", re.I)),
]  # fmt: skip
_DOC_NAMES = re.compile(r"readme|docs/|\.md\b|changelog|documentation", re.IGNORECASE)
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$"
)
_CLAIM = re.compile(
    r"^\W*(?:done|all\s+set|finished|completed)\b"
    r"|\b(?:it|this|that|everything|all|task|work|feature|change|fix|implementation)(?:'s|’s"
    r"|\s+is|\s+are|\s+has\s+been)\s+(?:now\s+)?(?:done|complete|completed|finished|all\s+set)\b"
    r"|\b(?:i|we)(?:'ve|’ve|\s+have)\s+(?:now\s+|successfully\s+)?(?:finished|completed"
    r"|implemented)\b"
    r"|\b(?:has\s+been|have\s+been|is\s+now|are\s+now)\s+(?:successfully\s+)?(?:implemented"
    r"|completed)\b"
    r"|\bready\s+for\s+review\b",
    re.IGNORECASE,
)
_NOT_CLAIM = re.compile(
    r"\b(?:not|n't|yet|still|almost|nearly|partially|mostly|once|when|after|before|until|if"
    r"|will|going\s+to|let\s+me|i'll|need\s+to|should|would|could|remaining|left\s+to)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^\n]+?(?:[.!?](?=\s|$)|$)", re.MULTILINE)
_MISSING: dict[CriterionKind, str] = {
    "tests": "a test run",
    "lint": "a lint run",
    "build": "a build or type-check run",
    "test_added": "a write to a test file",
    "docs": "a change to the README, docs or changelog",
    "terms": "a tool call about it",
}


def criteria_of(goal: str) -> list[Criterion]:
    """The completion criteria a goal text states, in order, without repeats."""
    found: dict[str, Criterion] = {}
    in_section = False
    for line in goal.splitlines():
        if _SECTION.match(line):
            in_section = True
            continue
        bullet = _BULLET.match(line)
        if bullet is not None:
            item = bullet.group("item")
            first = item.split(maxsplit=1)[0].lower().strip("*_`")
            if in_section or first in _VERBS:
                _keep(found, item)
                continue
        elif not line.strip():
            continue
        else:
            in_section = False
        for match in _PHRASES.finditer(line):
            _keep(found, next(group for group in match.groups() if group))
    return list(found.values())


def _keep(found: dict[str, Criterion], raw: str) -> None:
    text = " ".join(raw.split()).strip(" :-")[:CRITERION_CHARS]
    if not text or text.lower() in found:
        return
    kind: CriterionKind = next((k for k, pattern in _KINDS if pattern.search(text)), "terms")
    found[text.lower()] = Criterion(text, kind)


def completion_claims(message: Message) -> Iterator[tuple[int, int]]:
    """Character ranges of the sentences of a reply that claim the work is complete."""
    for sentence in _SENTENCE.finditer(message.text):
        body = sentence.group(0)
        if body.rstrip().endswith("?"):
            continue
        claim = _CLAIM.search(body)
        if claim is None or _NOT_CLAIM.search(body, 0, claim.end()):
            continue
        yield sentence.start(), sentence.start() + len(body.rstrip())


def detect_unverified_completion(trace: Trace, spans: Sequence[GoalSpan]) -> list[Finding]:
    """Criteria of the goal with no evidence when the agent claims completion."""
    findings: list[Finding] = []
    reported: set[tuple[int, str]] = set()
    for span in spans:
        criteria = criteria_of(span.version.goal)
        if span.version.closed or not criteria:
            continue
        for event in trace.events[span.start : span.end]:
            message = event.message
            if message is None or message.role != "assistant" or message.kind != "reply":
                continue
            claims = list(completion_claims(message))
            if not claims:
                continue
            calls = _calls_until(trace, span.base, event.index, message.source_id)
            claimed_topics = {claim.topic for claim in find_claims(message.text)}
            for criterion in criteria:
                if (span.base, criterion.text.lower()) in reported:
                    continue
                if criterion.kind in claimed_topics or _evidenced(
                    criterion, span.version.goal, calls
                ):
                    continue
                reported.add((span.base, criterion.text.lower()))
                findings.append(_finding(trace, span, criterion, message, claims[0]))
    return findings


def _calls_until(trace: Trace, start: int, claim: int, claim_id: str) -> list[ToolCall]:
    """Calls since ``start`` before the claim, and the claim's own calls."""
    return [
        event.call
        for event in trace.events[start:]
        if event.kind == "call"
        and event.call is not None
        and (event.index < claim or event.call.message_source_id == claim_id)
    ]


def _evidenced(criterion: Criterion, goal: str, calls: Sequence[ToolCall]) -> bool:
    kind = criterion.kind
    if kind in ("tests", "lint", "build"):
        return any(kind in call_topics(call, commands_of(call)) for call in calls)
    if kind == "test_added":
        return any(_TEST_PATH.search(path) for call in calls for path in _written(call))
    if kind == "docs":
        return any(
            not is_inspection(call) and _DOC_NAMES.search(_arguments(call)) for call in calls
        )
    terms = _distinctive_terms(criterion, goal)
    if not terms:
        return True  # nothing to look for: cannot be checked, so never reported
    vocabulary = Vocabulary(terms)
    return any(vocabulary.shares(salient_terms(_arguments(call))) for call in calls)


def _distinctive_terms(criterion: Criterion, goal: str) -> frozenset[str]:
    """The criterion's terms the rest of the goal does not use (all of them if none is)."""
    terms = salient_terms(criterion.text)
    rest = Vocabulary(salient_terms(goal.replace(criterion.text, " ")))
    distinctive = frozenset(term for term in terms if not rest.matches(term))
    return distinctive or terms


def _written(call: ToolCall) -> list[str]:
    return edited_paths(call) or ([] if is_inspection(call) else file_paths(call))


def _arguments(call: ToolCall) -> str:
    return " ".join(value for _, value in argument_strings(call.arguments))


def _finding(
    trace: Trace, span: GoalSpan, criterion: Criterion, claim: Message, at: tuple[int, int]
) -> Finding:
    conversation_id = trace.context.conversation_id
    evidence: list[Evidence] = [
        cite_message(claim, *at),
        cite_absence(conversation_id, f"{_MISSING[criterion.kind]}: {criterion.text}"),
    ]
    stated = _where_stated(trace, span, criterion)
    if stated is not None:
        evidence.append(stated)
    title = f"Completion claimed without evidence for “{criterion.text[:80]}”"
    return Finding(
        key=finding_key(RULE_ID, conversation_id, evidence, title),
        conversation_id=conversation_id,
        origin="rule",
        rule=RULE_ID,
        rule_version=RULE_VERSION,
        action="warn",
        category="missing_requirement",
        severity="medium",
        title=title,
        content=(
            f"The agent claims the work is complete, but goal version {span.version.version} "
            f"asks for “{criterion.text}” and the trace shows no {_MISSING[criterion.kind]} "
            "since the goal was set."
        ),
        evidence=evidence,
        trigger_source_id=claim.source_id,
    )


def _where_stated(trace: Trace, span: GoalSpan, criterion: Criterion) -> Evidence | None:
    """The user message (since the goal began) that states the criterion, cited."""
    for event in trace.events[span.base : span.end]:
        message = event.message
        if message is None or message.role != "user":
            continue
        start = message.text.find(criterion.text)
        if start != -1:
            return cite_message(message, start, start + len(criterion.text))
    return None
