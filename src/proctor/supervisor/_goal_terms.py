"""Salient terms: the words that say what a goal, a message or a tool call is about.

Goal drift and the completion check compare texts by their salient terms: identifiers,
file and function names and content words of four letters or more, lower-cased, with
snake_case, camelCase, dotted and path names also split into their parts, and common
English and generic programming words left out ("please", "function", "update", "test").
Two terms match when they are equal or, both five letters or longer, one starts with the
other ("round" / "rounding", "invoice" / "invoices").
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections.abc import Iterable

MIN_TERM = 4
PREFIX_MATCH = 5
TEXT_CHARS = 2000
"""Characters of one message or one tool call's arguments read for terms."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.\-][A-Za-z0-9]+)*")
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# fmt: off
_STOP = frozenset({
    "about", "above", "after", "again", "against", "along", "already", "also", "although",
    "always", "among", "another", "anything", "anyway", "around", "because", "been", "before",
    "behind", "being", "below", "between", "both", "cannot", "could", "does", "doing", "done",
    "down", "during", "each", "either", "else", "even", "ever", "every", "everything", "first",
    "following", "from", "further", "have", "having", "here", "hence", "however", "into",
    "itself", "just", "keep", "kept", "last", "later", "least", "less", "like", "likely",
    "made", "make", "makes", "making", "many", "maybe", "more", "most", "much", "must", "need",
    "needed", "needs", "never", "next", "none", "nothing", "only", "other", "others",
    "otherwise", "over", "perhaps", "please", "quite", "rather", "really", "same", "should",
    "since", "some", "something", "soon", "still", "such", "sure", "than", "thank", "thanks",
    "that", "their", "them", "then", "there", "therefore", "these", "they", "thing", "things",
    "this", "those", "though", "through", "thus", "under", "unless", "until", "upon", "very",
    "want", "wanted", "wants", "well", "were", "what", "whatever", "when", "where", "whether",
    "which", "while", "will", "with", "within", "without", "would", "your", "yours", "okay",
    "sorry", "actually", "instead", "refined", "corrected", "able", "code", "codes", "file",
    "files", "folder", "test", "tests", "testing", "function", "functions", "class", "classes",
    "method", "methods", "change", "changes", "changed", "update", "updates", "updated",
    "fixes", "fixed", "adds", "added", "adding", "implement", "implemented", "implementing",
    "create", "created", "creating", "write", "writes", "written", "writing", "read", "reads",
    "reading", "runs", "running", "work", "works", "working", "check", "checks", "checked",
    "error", "errors", "issue", "issues", "problem", "problems", "value", "values", "data",
    "input", "output", "result", "results", "line", "lines", "name", "names", "type", "types",
    "item", "items", "list", "current", "second", "task", "tasks", "goal", "goals", "step",
    "steps", "part", "version", "look", "looks", "looking", "find", "found", "show", "shows", "handle", "handles", "support", "supports",
    "lets", "going", "gets", "used", "uses", "using", "help"
})
# fmt: on


def salient_terms(text: str) -> frozenset[str]:
    """The salient terms of ``text`` (its first ``TEXT_CHARS`` characters)."""
    terms: set[str] = set()
    for match in _WORD.finditer(text[:TEXT_CHARS]):
        word = match.group(0)
        candidates = [word.lower(), *(p.lower() for p in _PARTS.findall(word))]
        for candidate in candidates:
            if len(candidate) >= MIN_TERM and candidate not in _STOP and not candidate.isdigit():
                terms.add(candidate)
    return frozenset(terms)


def terms_match(first: str, second: str) -> bool:
    """Equal, or one a prefix of the other when both are long enough."""
    if first == second:
        return True
    if min(len(first), len(second)) < PREFIX_MATCH:
        return False
    return first.startswith(second) or second.startswith(first)


class Vocabulary:
    """A growing set of terms that answers "does this term match one of yours?" quickly."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        self._terms: set[str] = set()
        self._sorted: list[str] = []
        self.add(terms)

    def __len__(self) -> int:
        return len(self._terms)

    def add(self, terms: Iterable[str]) -> None:
        """Learn more terms."""
        for term in terms:
            if term not in self._terms:
                self._terms.add(term)
                insort(self._sorted, term)

    def matches(self, term: str) -> bool:
        """True when ``term`` matches a known term."""
        if term in self._terms:
            return True
        if len(term) < PREFIX_MATCH:
            return False
        if any(term[:end] in self._terms for end in range(PREFIX_MATCH, len(term))):
            return True
        position = bisect_left(self._sorted, term)
        return position < len(self._sorted) and self._sorted[position].startswith(term)

    def shares(self, terms: Iterable[str]) -> bool:
        """True when any of ``terms`` matches a known term."""
        return any(self.matches(term) for term in terms)
