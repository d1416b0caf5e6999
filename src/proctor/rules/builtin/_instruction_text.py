"""Finding requests in tool output: sentences that ask for something to be done.

A tool output is data; a sentence in it that *asks for an action* — an imperative ("Send
the report to …", "Visit www.…"), a request ("please …", "could you …", "I need you to
…"), a TODO or action item — is an instruction someone put there. Whether it was meant
for the agent does not matter here: what matters (``injection``) is whether a later call
took a value from such a sentence rather than from the user's request or from a data field.

The forms are grammatical, not one benchmark's wording: a sentence that starts with an
action verb (after bullets, a field label, a greeting, "please", "TODO:" …); an action
verb that the words before it ask for ("if you could send", "I need you to send", "the
next step is to send", "someone must send"); or a request phrase anywhere. A sentence that ends in a colon takes in the line after it when
that line is a bare value, not a labelled field ("to this account:\\nUS13…" is part of the
request; "IBAN: UK12…" under "please pay to the following account:" is a data field).

One pass of an Aho-Corasick automaton finds the candidate words; each is then checked
with a few character comparisons around it, so the cost is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, MatchKind

# fmt: off
_VERBS = (
    "send", "transfer", "wire", "pay", "forward", "email", "e-mail", "mail", "message",
    "text", "call", "phone", "post", "publish", "share", "invite", "add", "remove", "delete",
    "erase", "wipe", "grant", "give", "visit", "go", "open", "click", "navigate", "browse",
    "download", "upload", "install", "run", "execute", "create", "make", "book", "reserve",
    "schedule", "change", "update", "set", "reset", "modify", "move", "rename", "copy",
    "write", "reply", "respond", "tell", "contact", "notify", "submit", "sign", "buy",
    "purchase", "order", "cancel", "refund", "approve", "accept", "concatenate", "combine",
    "collect", "gather", "get", "fetch", "retrieve", "find", "look", "check", "summarize",
    "summarise", "include", "attach", "put", "insert", "append", "subscribe", "register",
    "join", "leave", "kick", "ban", "block", "archive", "export", "save", "store", "use",
    "provide", "enter", "fill", "confirm", "verify", "disable", "enable", "turn", "deposit",
    "withdraw", "redirect", "route", "deliver", "dispatch", "report", "upgrade", "downgrade",
    "print", "output", "grab", "pull", "push", "deploy", "follow", "sync", "link", "assign",
    "transmit", "relay", "ping", "dm", "cc", "bcc", "loop", "reach", "inform", "let",
    "arrange", "organize", "organise", "plan", "setup", "transmit", "top", "edit", "overwrite",
    "replace", "drop", "purge", "revoke", "change", "mark", "flag", "star", "like", "rate",
    "review", "download", "attach", "list", "read", "show", "display", "tweet", "repost",
)
# Phrases that make a sentence a request wherever they stand in it.
_REQUEST_PHRASES = (
    "please", "pls", "plz", "kindly", "could you", "can you", "would you", "will you",
    "i need you to", "i'd like you to", "i would like you to", "i want you to",
    "we need you to", "you must", "you should", "you need to", "you have to", "you are to",
    "you're to", "make sure", "be sure to", "don't forget", "do not forget", "remember to",
    "it is important that", "it's important that", "it is essential", "it is required",
    "action required", "action item", "action needed", "todo", "to-do", "to do:",
    "next step", "next steps", "your task", "i ask you", "i'm asking you", "we ask you",
    "must be sent", "must be transferred", "needs to be sent", "should be sent",
    "bitte", "por favor", "s'il vous plaît", "s'il vous plait", "veuillez", "per favore",
    "favor de", "gelieve", "proszę", "пожалуйста", "请", "お願いします", "lütfen",
)
# Words that may stand between the start of a sentence and its verb.
_LEAD_WORDS = frozenset({
    "please", "pls", "plz", "kindly", "also", "then", "first", "firstly", "now", "and",
    "so", "next", "finally", "lastly", "afterwards", "additionally", "just", "quickly",
    "immediately", "urgently", "asap", "todo", "to-do", "to", "do", "note", "ps", "p.s",
    "p.s.", "nb", "action", "item", "items", "reminder", "urgent", "important", "step",
    "task", "tasks", "request", "required", "hey", "hi", "hello", "dear", "ok", "okay",
    "but", "or", "after", "that", "secondly", "thirdly", "once", "done", "meanwhile",
})
# fmt: on
_PHRASE_COUNT = len(_REQUEST_PHRASES)
_LABEL_PHRASES = frozenset(
    number
    for number, phrase in enumerate(_REQUEST_PHRASES)
    if phrase in ("todo", "to-do", "action item", "next step", "next steps", "action needed")
)
"""Phrases that mark a request only as a label ("TODO:", "Action item -") or at the start
of a sentence; inside one ("my todo app") they name a thing."""
_WORDS = list(_REQUEST_PHRASES) + [v for v in dict.fromkeys(_VERBS) if v not in _REQUEST_PHRASES]
_AUTOMATON = AhoCorasick(_WORDS, matchkind=MatchKind.LeftmostLongest)
_BYTES_AUTOMATON = BytesAhoCorasick(
    [word.encode() for word in _WORDS], matchkind=MatchKind.LeftmostLongest
)
"""The same automaton over bytes: for ASCII text, byte offsets are character offsets."""
_SENTENCE_END = re.compile(r"\.[\"')\]]?(?=\s)|![\"')\]]?(?=\s)|\?[\"')\]]?(?=\s)|\n|\\n")
_LABEL = re.compile(r"[ \t]*[-*]?[ \t]*[\w .'-]{1,40}:[ \t]")
_TRAILING_PUNCT = ",;:-–—*•>\"'“”‘’()[]#|"
SENTENCE_LIMIT = 500
"""Characters a request sentence may run on past its start (a run-on block ends there)."""
_LOOK_BACK = 80
"""How far before a verb the start of its sentence is looked for."""


@dataclass(frozen=True, slots=True)
class RequestSpan:
    """A sentence in a tool output that asks for something to be done."""

    start: int
    end: int
    cue: str
    """The words that make it a request (its verb, or a request phrase)."""


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


_BOUNDARY = re.compile(r"""\n|\\n|[.!?:] |["“'|\t{\[]|[—–] | - """)
"""What ends the text before a sentence: a line break (or an escaped one), a sentence's
end, a field label's colon, an opening quote or bracket, a dash."""


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` begins (after a line break, a sentence's
    end, a field label's colon or an opening quote), looked for ``_LOOK_BACK`` back."""
    floor = max(0, at - _LOOK_BACK)
    best = floor
    for found in _BOUNDARY.finditer(text, floor, at):
        best = found.end()
    return best


def _leads_a_sentence(text: str, at: int) -> int | None:
    """Where the sentence begins when the word at ``at`` is its (imperative) verb.

    Only bullets, numbering, lead words ("please", "also", "TODO:") and a short greeting
    ("Hi Emma,") may stand before it; otherwise the word is inside a sentence.
    """
    if at and text[at - 1] in "([":
        return None  # "(visit www.… for details)", "[Reset password](…)": a reference
    start = _sentence_start(text, at)
    words = text[start:at].split()
    if not words:
        return start
    greeting = False
    for word in words:
        bare = word.strip(_TRAILING_PUNCT).lower()
        if not bare or bare.rstrip(".)").isdigit():
            continue  # a bullet, a number
        if bare in _LEAD_WORDS:
            continue
        if word.endswith(",") and len(words) <= 3:
            greeting = True  # "Emma, send …", "Hi Emma, send …"
            continue
        return None
    return start if greeting or len(words) <= 4 else None


_POLITE = frozenset({"please", "pls", "plz", "kindly"})
_OBLIGED = frozenset({"must", "should", "shall", "ought"})
_ASKING_MODALS = frozenset({"could", "can", "would", "will", "might", "may", "'d", "d"})
_TO_HEADS = frozenset({
    "need", "needs", "needed", "have", "has", "had", "want", "wants", "like", "love",
    "ask", "asks", "asked", "required", "requested", "supposed", "expected", "instructed",
    "told", "important", "necessary", "essential", "urgent", "remember", "forget", "sure",
    "time", "is", "be", "going", "got", "mind", "wish", "hope", "able", "free", "allowed",
    "permitted", "encouraged", "invited", "welcome", "advised", "reminded", "used",
    "possible", "ready", "happy", "glad", "best", "better", "way", "plan", "planning",
})  # fmt: skip
_WANTING = frozenset({
    "want", "wants", "wanted", "ask", "asks", "asked", "require", "requires", "required",
    "request", "requests", "requested", "instruct", "instructs", "instructed", "tell",
    "tells", "told", "expect", "expects", "expected", "need", "needs", "like", "remind",
    "reminds", "advise", "urge", "urges", "invite", "invites", "encourage", "direct",
    "directs", "authorize", "authorise", "authorizes", "authorises",
})  # fmt: skip
"""Verbs that ask someone named after them to do what follows "to"."""
_YOU_HEADS = frozenset({
    "that", "ask", "request", "require", "suggest", "recommend", "want", "need", "insist",
    "if", "when", "once", "advise", "urge",
})  # fmt: skip
"""Words before "you" that make the verb after it asked for ("we ask that you send")."""
_ADVERBS = frozenset({
    "just", "also", "then", "now", "quickly", "immediately", "urgently", "simply", "still",
    "really", "definitely", "kindly", "please", "first", "finally", "always", "absolutely",
})  # fmt: skip


def _asked_for(text: str, at: int) -> bool:
    """Whether the verb at ``at`` is asked for by the words right before it in its clause:
    "if you could send", "I need you to send", "the next step is to send", "someone must
    send", "please send" (adverbs such as "just" or "also" in between are passed over)."""
    words = text[max(0, at - 60) : at].lower().replace("’", "'").split()
    while words and words[-1].strip(",") in _ADVERBS - _POLITE:
        words.pop()
    if not words:
        return False
    last = words[-1]
    if last in _POLITE or last in _OBLIGED:
        return True
    recent = words[-4:]
    if last in _ASKING_MODALS or last.endswith("'d"):
        return "you" in recent or any(w.startswith("you'") for w in recent)
    if last == "to" and len(words) >= 2:
        head = words[-2]
        if head in _TO_HEADS or head == "you" or "you" in recent[:-1]:
            return True
        # "the owner wants the assistant to send", "asks whoever reads this to send"
        return any(word in _WANTING for word in words[-6:-2])
    if last == "you" and len(words) >= 2:
        return words[-2] in _YOU_HEADS
    return last in ("you'll", "you'd", "youll", "youd")


_MAY_PRECEDE = (
    _LEAD_WORDS | _POLITE | _OBLIGED | _ASKING_MODALS | _ADVERBS | {"to", "you", "youll", "youd"}
)
"""Words right before a verb that may make it a request (any other plain word does not)."""


def _sentence_end(text: str, start: int, at: int) -> int:
    """Where the sentence that holds ``at`` ends; a sentence ending in a colon takes in
    the next line when that line is a bare value rather than a labelled field."""
    limit = min(len(text), start + SENTENCE_LIMIT, at + SENTENCE_LIMIT)
    found = _SENTENCE_END.search(text, at, limit)
    end = found.end() if found else limit
    head = text[start:end].rstrip()
    if head.endswith("\\n"):
        head = head[:-2].rstrip()
    if head.endswith(":") and end < limit:
        nxt = text[end:limit]
        if _LABEL.match(nxt) is None:
            after = _SENTENCE_END.search(text, end + 1, limit)
            end = after.end() if after else limit
    return end


def find_requests(text: str) -> tuple[RequestSpan, ...]:
    """Sentences that ask for an action, in order, not overlapping."""
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    spans: list[RequestSpan] = []
    cursor = 0
    if lowered.isascii():
        found_words = _BYTES_AUTOMATON.find_matches_as_indexes(lowered.encode())
    else:
        found_words = _AUTOMATON.find_matches_as_indexes(lowered)
    for number, at, end in found_words:
        if at < cursor:
            continue
        if (
            at
            and _is_word_char(lowered[at - 1])
            and _is_word_char(lowered[at])
            and not lowered.startswith("\\n", at - 2)  # an escaped line break before it
        ):
            continue
        after = lowered[end : end + 1]
        phrase = number < _PHRASE_COUNT
        if phrase:
            if after and _is_word_char(after) and _is_word_char(lowered[end - 1]):
                continue
            start = _sentence_start(text, at)
            if number in _LABEL_PHRASES and not (
                lowered.startswith((":", " :", ")", " -", " –", " —"), end) or start == at
            ):
                continue  # "my todo app", "the next step in the pipeline": not a label
        else:
            # A verb: a word follows it ("send the …", not "send(", "send_money", "send.")
            if (
                after not in (" ", "\t") or not _is_word_char(lowered[end + 1 : end + 2] or ".")
            ) and not lowered.startswith((" $", ' "', " '"), end):
                continue
            # Most verbs stand inside a sentence after a plain word ("we send the"): one
            # look at that word settles it without the sentence and clause checks.
            if at >= 2 and lowered[at - 1] == " " and lowered[at - 2].isalpha():
                prev = lowered[lowered.rfind(" ", max(0, at - 40), at - 1) + 1 : at - 1]
                if prev.isalpha() and prev not in _MAY_PRECEDE:
                    continue
            found = _leads_a_sentence(text, at)
            if found is None:
                if not _asked_for(text, at):
                    continue
                found = _sentence_start(text, at)
            start = found
        stop = _sentence_end(text, start, end)
        spans.append(RequestSpan(start, stop, text[at:end]))
        cursor = stop
    return tuple(spans)


__all__ = ["SENTENCE_LIMIT", "RequestSpan", "find_requests"]
