"""Finding claims of success or verification in an assistant's text.

A claim is a sentence that asserts an outcome: "All tests pass now.", "the suite is
green", "`tsc --noEmit` is clean", "it builds cleanly", "lint is clean", "works now",
"the bug is fixed", "Verified: …". Patterns are generic English, by topic:

- ``tests``: a test subject (tests, the suite, specs, CI, a backticked test command) with
  a pass predicate, "passes all tests", "all 24 tests pass", "24 passed", "no failures";
- ``build``: build / compilation / type checks / ``tsc`` / ``mypy`` that succeed or are
  clean, "compiles without errors", "no type errors";
- ``lint``: lint / a linter that passes or is clean, "no lint errors";
- ``works``: "works now", "is working", "runs without errors", "the bug is fixed";
- ``verified``: "verified", "confirmed", "double-checked" about something the sentence
  names (a backticked span, a path or file name); about nothing specific it cannot be
  checked and is left alone.

Not claims: questions, hedges and plans ("let me check whether the tests pass", "this
should fix it", "to make sure the build succeeds", "once CI is green"), negations ("not
all tests pass", "the build still fails"), text in code blocks, block quotes and double
quotes (quoting the task is not claiming it), and unchecked boxes (``- [ ] tests pass``).
A sentence with a specific claim (tests, build, lint) is judged on that alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

ClaimTopic = Literal["tests", "build", "lint", "works", "verified"]
SPECIFIC: tuple[ClaimTopic, ...] = ("tests", "build", "lint")


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim in a message."""

    topic: ClaimTopic
    start: int
    """Start of the claiming sentence in the message text."""
    end: int
    single: bool = False
    """A claim about one named test ("the new test passes"), not the suite."""
    terms: tuple[str, ...] = ()
    """Things the sentence names (backticked spans, paths), for ``verified`` claims."""


def _code(words: str) -> str:
    """A backticked span naming one of ``words`` (``\u0060npm test\u0060``)."""
    return rf"`[^`\n]*\b(?:{words})\b[^`\n]*`"


_GAP = r"(?:\s+[\w'’-]+){0,3}?\s+"
_TESTS_SUBJECT = (
    r"(?P<subject>\b(?:(?:npm|yarn|pnpm|bun|go|cargo|dotnet|make|mix|swift) test|test suites?|"
    r"suites?|tests|specs|test cases|CI|test(?!\s+(?:files?|data|helpers?|fixtures?|utils?))|"
    r"spec|test case)\b|"
    + _code("test|tests|pytest|vitest|jest|mocha|rspec|phpunit|tox|nox|unittest")
    + ")"
)
_BUILD_SUBJECT = (
    r"(?:\b(?:build|builds|compilation|compiler|type[- ]?checks?|typecheck(?:ing|er)?|"
    r"type checking|types|tsc|mypy|pyright)\b|"
    + _code("tsc|mypy|pyright|build|typecheck|type-check|vet|compile|make")
    + ")"
)
_LINT_SUBJECT = (
    r"(?:\b(?:lint(?:ing|er|ers)?|ruff|eslint|flake8|pylint|clippy|prettier|black|"
    r"formatting|format check|pre-commit|style checks?)\b|"
    + _code("lint|ruff|eslint|flake8|pylint|clippy|prettier|black|pre-commit|fmt")
    + ")"
)
_PASS = r"(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green|successful(?:ly)?)\b"
_CLEAN = r"(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green|clean|successful(?:ly)?|ok|works)\b"
_WITHOUT_ERRORS = (
    r"without (?:any\s+)?(?:errors|warnings|issues|failures)|with no (?:errors|warnings)"
)

_PATTERNS: list[tuple[ClaimTopic, re.Pattern[str]]] = [
    (
        "tests",
        re.compile(
            _TESTS_SUBJECT
            + _GAP
            + _PASS
            + r"|\bpass(?:es|ed|ing)?\s+(?:all\s+)?(?:of\s+)?(?:the\s+|its\s+|our\s+)?(?:\w+\s+)?"
            r"(?:tests|test suite|suite|specs)\b"
            r"|\ball\s+\d+\s+(?:\w+\s+)?(?:tests?\s+)?(?:pass(?:es|ed)?|are passing|green)\b"
            r"|\b\d+\s+(?:tests?\s+)?passed\b"
            r"|\b(?:no|zero|0)\s+(?:failing tests|test failures|failed tests|failures)\b"
            r"|\btests?\b[^.;\n]*?\b(?:they|all of them)\s+(?:all\s+)?pass(?:ed)?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "build",
        re.compile(
            _BUILD_SUBJECT
            + _GAP
            + _CLEAN
            + r"|\b(?:builds|compiles|compiled|built|type-?checks)\s+(?:now\s+)?"
            r"(?:successfully|cleanly|fine|ok|" + _WITHOUT_ERRORS + r")"
            r"|\b(?:no|zero|0)\s+(?:type|compile|compilation|build|tsc|mypy|pyright|typescript)"
            r"\s+errors\b"
            r"|\bpass(?:es|ed)?\s+(?:the\s+)?(?:type[- ]?check(?:ing|s)?|typecheck(?:ing)?|build|"
            r"compilation|mypy|tsc|pyright)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "lint",
        re.compile(
            _LINT_SUBJECT + _GAP + r"(?:pass(?:es|ed|ing)?|clean|green|happy|ok)\b"
            r"|\b(?:no|zero|0)\s+(?:lint(?:ing)?|linter|ruff|eslint|flake8|style)\s+"
            r"(?:errors|warnings|issues|problems|violations)\b|\blint[- ]clean\b",
            re.IGNORECASE,
        ),
    ),
    (
        "works",
        re.compile(
            r"\b(?:works now|now works|now working|is working(?: now| again| correctly| properly|"
            r" as expected)?|works (?:correctly|properly|as expected|again|fine|perfectly)|"
            r"(?:runs|ran|starts|started|completes|completed) (?:successfully|cleanly|"
            + _WITHOUT_ERRORS
            + r"))\b"
            r"|\b(?:bug|issue|error|problem|crash|regression|failure|it|this)\s+"
            r"(?:is|has been|was)\s+(?:now\s+)?(?:fixed|resolved)\b"
            r"|\b(?:fixed|resolved)\s+now\b|\beverything (?:works|is working|passes)\b"
            r"|\bno (?:more\s+)?errors\b",
            re.IGNORECASE,
        ),
    ),
    # A verb, not an adjective or a label: "I verified `x`", "`x` was confirmed",
    # "Verified: …" — not "the verified list" or a page's "Verified 343fae6" badge.
    (
        "verified",
        re.compile(
            r"\b(?:I|we)(?:'ve|’ve| have| had)?\s+(?:\w+ly\s+|also\s+|now\s+|just\s+)*"
            r"(?:verified|confirmed|double-checked|validated)\b"
            r"|\b(?:has|have|had|was|were|is|are|been)\s+(?:\w+ly\s+|also\s+|now\s+)?"
            r"(?:verified|confirmed|double-checked|validated)\b"
            r"|^\s*(?:[-*+•]|\d+[.)]|#+)?\s*(?:\*\*)?"
            r"(?:verified|confirmed|double-checked|validated)\b",
            re.IGNORECASE,
        ),
    ),
]

# Per topic, groups of words (lower case): every match of the topic's pattern contains a
# word of each group (a property test holds it). A sentence lacking every word of a group
# is not searched for that topic: most sentences that say "successfully" or "ok" name no
# tests, build or linter.
ANY_DIGIT = r"\d"
"""In a group: any decimal digit (of any script, as ``\\d`` matches) will do."""
_DIGIT = re.compile(r"\d")
_TOPIC_WORDS: dict[ClaimTopic, tuple[tuple[str, ...], ...]] = {
    "tests": (
        ("pass", "succe", "green", "fail"),
        ("test", "suite", "spec", "ci", "fail", "jest", "mocha", "phpunit", "tox", "nox", ANY_DIGIT),
    ),
    "build": (
        ("pass", "succe", "green", "clean", "ok", "works", "builds", "compile", "built",
         "checks", "errors"),
        ("buil", "compil", "type", "tsc", "mypy", "pyright", "vet", "make", "check"),
    ),
    "lint": (
        ("pass", "clean", "green", "happy", "ok", "errors", "warnings", "issues", "problems",
         "violations"),
        ("lint", "ruff", "flake8", "clippy", "prettier", "black", "format", "pre-commit",
         "style", "fmt"),
    ),
    "works": (
        ("work", "succe", "clean", "without", "with no", "fixed", "resolved", "pass", "errors"),
        ("work", "runs ", "ran ", "starts ", "started ", "completes ", "completed ", "fixed",
         "resolved", "everything", "errors"),
    ),
    "verified": (("verified", "confirmed", "double-checked", "validated"),),
}  # fmt: skip

_GATE_WORDS = sorted({w for gs in _TOPIC_WORDS.values() for g in gs for w in g} - {ANY_DIGIT})
_GATE_FINDER = AhoCorasick(_GATE_WORDS)
_TOPIC_GATES = tuple(
    (
        topic,
        tuple(
            (frozenset(_GATE_WORDS.index(w) for w in group if w != ANY_DIGIT), ANY_DIGIT in group)
            for group in groups
        ),
    )
    for topic, groups in _TOPIC_WORDS.items()
)
"""Per topic, its groups as numbers of ``_GATE_WORDS`` (and whether any digit will do)."""
_ALL_TOPICS: frozenset[ClaimTopic] = frozenset(_TOPIC_WORDS)

_NEGATION = re.compile(
    r"\b(?:not|no longer|never|none of|fail(?:s|ed|ing)?|broken|unable|cannot|can't|couldn't|"
    r"won't|isn't|aren't|doesn't|don't|didn't|haven't|hasn't|wasn't|weren't|unverified|"
    r"without running|yet to|still need)\b|n't\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:let me|let's|let us|i'll|i will|i'm going to|going to|we'll|we will|to (?:make sure|"
    r"ensure|check|verify|confirm|see|test)|make sure|ensure|check (?:if|whether|that)|"
    r"verify (?:that|whether|if)|see (?:if|whether)|whether|if|once|until|when|should|would|"
    r"could|can|might|may|hopefully|expect(?:ed|s)?|need(?:s)? to|want(?:s)? to|try(?:ing)? to|"
    r"so that|in order to|make|making|aim|goal|plan|asked|require[sd]?|must|ought|can you|"
    r"please|whenever|unless|assuming|as long as|previously|used to|earlier|before the|"
    r"hypothes\w+|suppos\w+|probably|likely|seems?|appears?)\b",
    re.IGNORECASE,
)
# Every claim pattern contains one of these; a cheap test before the regular expressions.
_STEMS = ("pass", "succe", "green", "clean", "work", "fixed", "resolved", "verified",
          "confirmed", "validated", "double-checked", "errors", "failures", "builds", "built",
          "compile", "lint", "ok", "fine", "happy", "failing tests", "failed tests")  # fmt: skip
_STEM_FINDER = AhoCorasick(_STEMS)
_STEM_BYTES = BytesAhoCorasick([stem.encode() for stem in _STEMS])
"""For ASCII text (byte offsets are character offsets; no offset translation)."""
_UNALIGNED = re.compile("[\u0130\u0131\u017f\u212a]")
_STEM_PATTERN = re.compile(
    r"\b(?:" + "|".join(re.escape(stem) for stem in _STEMS) + ")", re.IGNORECASE
)
_CLAUSE_BREAK = re.compile(r"[;,:]|\s[-–—]\s|\b(?:but|while|although|though|whereas)\b")
_PARTIAL = re.compile(r"\b(?:except|apart from|other than|besides|but|however)\b", re.IGNORECASE)
_NOT_NEWLINE = re.compile(r"[^\n]")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_BLOCKQUOTE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_QUOTED = re.compile(r"\"[^\"\n]{1,300}\"|“[^”\n]{1,300}”")
_MASKS = ((_FENCED, ("```",)), (_BLOCKQUOTE, (">",)), (_QUOTED, ('"', "“")))
_SENTENCE = re.compile(r"[^\n]+?(?:[.!?](?=\s|$)|$)", re.MULTILINE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)?\s*(?:\[[ xX]\]\s*)?")
_UNCHECKED = re.compile(r"^\s*(?:[-*+•]\s*)?\[ \]")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(
    r"(?<![\w/.])(?:[\w.-]+/)+[\w.-]+"
    r"|\b[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|json|toml|yaml|yml|sql|sh|md)\b"
)


def _mask(text: str) -> str:
    """Blank out code blocks, block quotes and quoted text, keeping every offset."""

    def blank(match: re.Match[str]) -> str:
        return _NOT_NEWLINE.sub(" ", match.group(0))

    for pattern, needs in _MASKS:
        if any(map(text.__contains__, needs)):  # what every match of the pattern holds
            text = pattern.sub(blank, text)
    return text


def find_claims(text: str) -> list[Claim]:
    """Every claim in ``text``, at most one per topic per sentence, in order."""
    if not text:
        return []  # a turn with tool calls only
    lowered = text.lower()
    if not (text.isascii() or _lines_up(text, lowered)):
        return _find_claims(text, _mask(text), None)  # rare: search case-blind instead
    stems = _stem_starts(lowered)
    if not stems:
        return []  # most messages claim nothing; skip the sentence patterns
    masked = _mask(text)
    # Masking blanks whole stems (a stem holds no quote, backtick or line break).
    return _find_claims(text, masked, [at for at in stems if masked[at] != " "])


def _find_claims(text: str, masked: str, stems: list[int] | None) -> list[Claim]:
    claims: list[Claim] = []
    for sentence_match in _candidate_sentences(masked, stems):
        sentence = sentence_match.group(0)
        if sentence.rstrip().endswith("?") or _UNCHECKED.match(sentence):
            continue
        found: dict[ClaimTopic, re.Match[str]] = {}
        possible = _possible_topics(sentence) if stems is not None else _ALL_TOPICS
        for topic, pattern in _PATTERNS:
            if topic not in possible:
                continue  # lined-up text: the sentence lacks every word of a needed group
            match = pattern.search(sentence)
            if match and _asserted(sentence, match):
                found.setdefault(topic, match)
        if any(topic in found for topic in SPECIFIC):
            found.pop("works", None)
            found.pop("verified", None)
        lead = _LIST_MARKER.match(sentence)
        start = sentence_match.start() + (lead.end() if lead else 0)
        end = sentence_match.start() + len(sentence.rstrip())
        terms: tuple[str, ...] = ()
        if "verified" in found:
            terms = _terms(text[sentence_match.start() : sentence_match.end()])
            if not terms:
                del found["verified"]  # "verified" about nothing specific cannot be checked
        for topic, match in found.items():
            claims.append(
                Claim(
                    topic,
                    start,
                    end,
                    single=topic == "tests" and _is_single(match),
                    terms=terms if topic == "verified" else (),
                )
            )
    return claims


def _possible_topics(sentence: str) -> set[ClaimTopic]:
    """The topics whose every group has a word in the sentence (one pass over it)."""
    present = {
        number
        for number, _, _ in _GATE_FINDER.find_matches_as_indexes(sentence.lower(), overlapping=True)
    }
    digit: bool | None = None
    possible: set[ClaimTopic] = set()
    for topic, groups in _TOPIC_GATES:
        for numbers, any_digit in groups:
            if numbers.isdisjoint(present):
                if any_digit and digit is None:
                    digit = _DIGIT.search(sentence) is not None
                if not (any_digit and digit):
                    break
        else:
            possible.add(topic)
    return possible


def _lines_up(text: str, lowered: str) -> bool:
    """Whether stems found in ``lowered`` are exactly the case-blind matches in ``text``.

    Not when lower-casing changes the length (offsets shift) or the text holds a letter
    that a case-blind pattern matches but ``str.lower`` does not give (dotless ı, long ſ).
    """
    return len(lowered) == len(text) and _UNALIGNED.search(text) is None


def _stem_starts(lowered: str) -> list[int]:
    """Where claim stems begin a word in ``lowered``, in order (one pass over the text)."""
    starts: list[int] = []
    if lowered.isascii():
        found = _STEM_BYTES.find_matches_as_indexes(lowered.encode(), overlapping=True)
    else:
        found = _STEM_FINDER.find_matches_as_indexes(lowered, overlapping=True)
    for _, at, _end in found:
        before = lowered[at - 1] if at else " "
        if not (before.isalnum() or before == "_"):
            starts.append(at)
    starts.sort()  # overlapping stems of different lengths end out of start order
    return starts


def _candidate_sentences(masked: str, stems: list[int] | None) -> Iterator[re.Match[str]]:
    """Sentences of the lines that contain a claim word (long logs have few such lines).

    ``stems`` are where claim stems begin a word in ``masked``; None when the lower-cased
    text does not line up with it, and the stems are searched for case-blind here.
    """
    if stems is None:
        stems = [m.start() for m in _STEM_PATTERN.finditer(masked)]
    line_end = -1
    for at in stems:
        if at < line_end:
            continue
        line_start = masked.rfind("\n", 0, at) + 1
        line_end = masked.find("\n", at)
        line_end = len(masked) if line_end == -1 else line_end
        for sentence in _SENTENCE.finditer(masked, line_start, line_end):
            # A stem cannot run past a sentence's end (stems hold no ".", "!", "?" or "\n").
            first = bisect.bisect_left(stems, sentence.start())
            if first < len(stems) and stems[first] < sentence.end() and sentence.group(0).strip():
                yield sentence


def _asserted(sentence: str, match: re.Match[str]) -> bool:
    """True unless the claim is hedged, negated or partial in its own clause."""
    if _HEDGE.search(sentence, 0, match.end()):
        return False
    before = list(_CLAUSE_BREAK.finditer(sentence, 0, match.start()))
    clause_start = before[-1].end() if before else 0
    after = _CLAUSE_BREAK.search(sentence, match.end())
    clause_end = after.start() if after else len(sentence)
    if _NEGATION.search(sentence, clause_start, clause_end):
        return False
    # "All tests pass except the flaky one" / "… but CI fails" claim only part of it.
    return not _PARTIAL.search(sentence, match.end())


def _is_single(match: re.Match[str]) -> bool:
    """True when the subject is one test ("the new half-cent test passes"), not the suite."""
    subject = match.groupdict().get("subject") or ""
    return subject.lower() in ("test", "spec", "test case") and not re.search(
        r"\b(?:all|every|each)\b", match.group(0), re.IGNORECASE
    )


def _terms(sentence: str) -> tuple[str, ...]:
    named = [m.group(1) for m in _BACKTICKED.finditer(sentence)]
    named += [m.group(0) for m in _PATHLIKE.finditer(sentence)]
    return tuple(dict.fromkeys(t.strip().lower() for t in named if len(t.strip()) >= 3))
