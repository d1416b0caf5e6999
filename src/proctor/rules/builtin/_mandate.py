"""What the user asked for: which kinds of risky action a request gives the agent a mandate for.

A *mandate* is read from the words of the user's own messages: "pay the electricity bill"
mandates moving money, "clean up my downloads" deleting, "share the deck with Ana"
granting access, "email Bob the summary" sending. A request that only asks to look
(read, find, check, what/when/how …) mandates no change at all.

The reading is generous on purpose, so that a finding means the user's text has *no*
word for the kind of thing the agent did:

- a class's verbs count wherever they stand ("pay", "delete", "grant"); words that are as
  often nouns count only in a verb's place ("please email …", "to email", a sentence's
  first word, but not "the latest email"); past forms describe rather than ask ("the
  shared calendar") and count only in a verb's place too;
- a request that asks for any change and names what a class acts on mandates it
  ("update my rent payment", "to each user write the message");
- a request that delegates a list ("do the tasks on my TODO list", "follow the
  instructions in Eve's e-mail") mandates every class;
- a user's "yes, go ahead" approves what the agent had just proposed (``confirms``).

Words are matched whole (``add`` is not ``address``), with their usual inflections
(``paid``, ``sending``, ``deleted``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

ActionClass = Literal["money", "deletion", "access", "sending", "execution", "safeguard"]
"""Kinds of action that are hard to undo or reach beyond the user."""

CLASS_NAMES: dict[ActionClass, str] = {
    "money": "moving money",
    "deletion": "deleting or cancelling",
    "access": "granting access or sharing",
    "sending": "sending or posting to others",
    "execution": "running or installing code",
    "safeguard": "turning off a safeguard",
}
"""How each class is named in findings."""

# fmt: off
# Per class: words that ask for it wherever they stand, and words that do so only in a
# verb's place ("email Bob the notes", "please email …", "to email", but not "the email").
_MANDATE_WORDS: dict[ActionClass, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "money": (
        ("pay", "withdraw", "buy", "sell", "invest", "donate", "subscribe", "renew",
         "reimburse", "settle", "spend", "repay", "remit", "recharge", "topup"),
        ("order", "book", "reserve", "trade", "exchange", "tip", "fund", "charge", "transfer",
         "wire", "purchase", "deposit", "refund", "cash", "checkout", "mint", "swap"),
    ),
    "deletion": (
        ("delete", "remove", "erase", "purge", "wipe", "discard", "uninstall", "cancel",
         "unsubscribe", "destroy", "prune", "revoke", "deactivate", "unfollow", "unshare",
         "terminate", "rid"),
        ("clear", "clean", "drop", "empty", "free", "tidy", "leave", "close", "kill", "stop",
         "end", "reset", "undo", "archive", "trash"),
    ),
    "access": (
        ("grant", "share", "allow", "unlock", "authorize", "authorise", "collaborate",
         "publish", "approve", "assign"),
        ("access", "open", "add", "enable", "accept", "join", "give", "let", "invite",
         "permit"),
    ),
    "sending": (
        ("send", "notify", "inform", "publish", "reply", "respond", "forward", "share",
         "contact", "announce", "broadcast", "remind", "greet", "thank", "introduce"),
        ("email", "mail", "message", "text", "sms", "post", "write", "draft", "submit",
         "upload", "call", "comment", "chat", "alert", "ping", "tell", "answer", "ask",
         "request", "report", "complain", "apply", "book", "schedule", "order", "tweet",
         "retweet", "invite", "cc", "dm"),
    ),
    "execution": (
        ("run", "execute", "install", "launch", "deploy", "compile", "debug", "configure",
         "upgrade", "boot"),
        ("start", "setup", "set", "build", "test", "try", "open", "download", "use", "play",
         "operate", "update", "fix"),
    ),
    "safeguard": (
        ("disable", "deactivate", "disarm", "whitelist", "allowlist", "unblock", "bypass",
         "mute", "silence", "override", "exempt", "unlock", "allow"),
        ("turn", "switch", "stop", "remove", "ignore", "skip", "pause", "lower", "reduce",
         "open", "relax"),
    ),
}
_OTHER_ACTIONS = (
    ("create", "update", "change", "modify", "rename", "schedule", "organize", "organise",
     "arrange", "handle", "process", "manage", "fix", "perform", "complete", "adjust",
     "increase", "decrease", "dispatch", "navigate", "prepare", "save", "register", "enroll",
     "replace", "convert", "generate", "compose", "reschedule", "postpone", "confirm",
     "activate", "restart", "reboot", "deliver", "redeem", "click", "press", "tap",
     "select", "choose", "reject", "block", "merge", "copy", "paste", "print", "cook",
     "wash", "heat", "dim", "brighten", "resume", "edit", "move", "sign", "login", "fill",
     "claim", "ship", "lock", "raise"),
    ("make", "do", "go", "plan", "take", "put", "place", "mark", "store", "record", "log",
     "control", "drive", "pick", "bring", "follow", "like", "rate", "review", "act",
     "type", "deny", "report", "flag", "pin", "star", "tag", "label", "sort", "split",
     "scan", "water", "feed", "cool", "play", "pause", "set", "turn", "switch", "order",
     "book", "reduce", "lower"),
)
# Things a class acts on: a request that asks for any change and names one of them
# mandates that class ("update my rent payment", "to each user write the message").
_OBJECTS: dict[ActionClass, tuple[str, ...]] = {
    "money": ("payment", "transaction", "transfer", "rent", "bill", "invoice", "subscription",
              "money", "funds", "refund", "amount", "difference", "balance", "price", "fee",
              "iban", "salary", "tuition", "loan", "debt", "purchase", "order", "ticket",
              "booking", "reservation", "share", "cost", "total"),
    "deletion": ("trash", "duplicate", "duplicates", "junk", "spam", "clutter", "space",
                 "storage", "subscription", "appointment", "reservation", "booking", "order"),
    "access": ("access", "permission", "permissions", "guest", "guests", "visitor", "role",
               "password", "key", "invitation", "invite", "collaborator", "door", "lock"),
    "sending": ("message", "messages", "email", "emails", "mail", "reply", "post", "tweet",
                "text", "sms", "invitation", "invite", "letter", "note", "announcement",
                "newsletter", "feedback", "review", "comment", "notification", "meeting",
                "event", "appointment", "call", "rsvp"),
    "execution": ("script", "code", "program", "package", "app", "application", "software",
                  "installer", "tool", "command", "server", "service", "emulator"),
    "safeguard": ("alarm", "camera", "firewall", "antivirus", "security", "filter", "lock",
                  "notification", "notifications", "alert", "alerts", "protection", "policy"),
}  # fmt: skip
# "Do the tasks on my TODO list", "follow the instructions in the e-mail from Eve": the
# user delegates whatever that list asks for, so every class is mandated.
_DELEGATION = re.compile(
    r"\b(?:do|perform|complete|follow|handle|carry\s+out|execute|take\s+care\s+of|work\s+through)"
    r"\s+(?:(?:all|each|every|any|the|my|his|her|their|these|those|following|listed|"
    r"remaining|open|pending|outstanding|same)\s+)*"
    r"(?:tasks?|actions?|instructions?|todos?|to-dos?|steps?|items?|requests?|things?)\b"
)
_LET_KNOW = re.compile(r"\blet\s+(?:\w+\s+){1,3}know\b")
_MONEY_CUES = re.compile(
    r"[$€£¥]\s?\d|\b\d[\d,]*\.\d\d\b|\b\d[\d,.]*\s?(?:usd|eur|gbp|btc|eth|dollars?|euros?|"
    r"pounds?|cents?|bucks|%)|\b(?:money|payment|amount|difference|funds|iban|refund|price|fee)\b"
)
_LOOK_WORDS = (
    "read", "find", "search", "look", "check", "get", "fetch", "retrieve", "show", "list",
    "view", "see", "what", "whats", "which", "who", "whom", "whose", "when", "where", "why",
    "how", "summarize", "summarise", "summary", "describe", "explain", "count", "display",
    "browse", "lookup", "query", "know", "learn", "compare", "recommend", "identify",
    "review", "reviews",
)
# fmt: on
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[.!?;:\n]")
_ABOUT_ME = re.compile(r"\b(?:tell|show|give|let)\s+(?:me|us)\b")
"""``tell me``, ``show me``, ``let me know`` ask to be told, not to act (``send me a copy``
still sends)."""
_VERB_SLOT = frozenset(
    {"please", "pls", "kindly", "to", "and", "then", "you", "also", "just", "now", "can",
     "could", "would", "will", "should", "must", "lets", "let's", "i'll", "we'll", "or",
     "help", "me", "us"}
)  # fmt: skip
_SENTENCE_END = frozenset(".!?;:\n")
_IRREGULAR = {
    "paid": "pay", "sent": "send", "sold": "sell", "bought": "buy", "told": "tell",
    "wrote": "write", "written": "write", "ran": "run", "gave": "give", "given": "give",
    "made": "make", "did": "do", "done": "do", "withdrew": "withdraw",
    "withdrawn": "withdraw", "spent": "spend", "shut": "shut", "went": "go", "took": "take",
}  # fmt: skip


def _forms(word: str) -> tuple[set[str], set[str]]:
    """A word's present forms (``pay``, ``pays``, ``paying``) and past forms (``payed``)."""
    present = {word, word + "s", word + "es", word + "ing"}
    past = {word + "ed", word + "d"}
    if word.endswith("e"):
        present.add(word[:-1] + "ing")
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        present.add(word[:-1] + "ies")
        past.add(word[:-1] + "ied")
    if len(word) >= 3 and word[-1] not in "aeiouwxy" and word[-2] in "aeiou":
        present.add(word + word[-1] + "ing")
        past.add(word + word[-1] + "ed")
    past |= {form for form, base in _IRREGULAR.items() if base == word}
    return present, past


def _index(words: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Present and past forms of ``words``."""
    present: set[str] = set()
    past: set[str] = set()
    for word in words:
        now, before = _forms(word)
        present |= now
        past |= before
    return frozenset(present), frozenset(past - present)


def _split(
    anywhere: Iterable[str], in_slot: Iterable[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """Forms that ask wherever they stand, and forms that ask only in a verb's place.

    Past forms ask only in a verb's place: "the shared calendar", "tasks completed last
    week" describe things, they do not ask for anything.
    """
    present, past = _index(anywhere)
    slot_present, slot_past = _index(in_slot)
    return present, past | slot_present | slot_past


_CLASS_FORMS: dict[ActionClass, tuple[frozenset[str], frozenset[str]]] = {
    kind: _split(anywhere, in_slot) for kind, (anywhere, in_slot) in _MANDATE_WORDS.items()
}
_LOOK_FORMS = frozenset().union(*_index(_LOOK_WORDS))
_OBJECT_FORMS: dict[ActionClass, frozenset[str]] = {
    kind: frozenset(word + suffix for word in words for suffix in ("", "s"))
    for kind, words in _OBJECTS.items()
}
_GIVE_FORMS = frozenset().union(*_index(("send", "give", "return", "refund", "wire")))
_ACTION_ANYWHERE, _ACTION_IN_SLOT = (forms - _LOOK_FORMS for forms in _split(*_OTHER_ACTIONS))


@dataclass(frozen=True, slots=True)
class Request:
    """What one user message asks for."""

    classes: frozenset[ActionClass]
    """Risky classes the message gives a mandate for."""
    acts: bool
    """The message asks for some change (an action word), not only to look."""
    looks: bool
    """The message asks to look something up (a read word or a question)."""


_CONFIRMATION = re.compile(
    r"^\W*(?:yes|yeah|yep|sure|ok|okay|correct|right|confirmed?|please\s+do|do\s+it|go\s+ahead|"
    r"proceed|sounds\s+good|that'?s\s+(?:right|correct|fine)|agreed?|approved?)\b",
    re.IGNORECASE,
)


def confirms(text: str) -> bool:
    """True for a reply that approves what the agent just proposed ("Yes, go ahead")."""
    return len(text) <= 400 and _CONFIRMATION.search(text) is not None


@lru_cache(maxsize=2048)
def read_request(text: str) -> Request:
    """The mandate in one user message (memoised: the gate asks again for the same text)."""
    lowered = _ABOUT_ME.sub(" ", text.lower())
    anywhere: set[str] = set()
    in_slot: set[str] = set()
    previous = "."
    for token in _TOKEN.findall(lowered):
        if token in _SENTENCE_END:
            previous = "."
            continue
        anywhere.add(token)
        if previous == "." or previous in _VERB_SLOT:
            in_slot.add(token)
        previous = token
    classes = {
        kind
        for kind, (everywhere, slotted) in _CLASS_FORMS.items()
        if not anywhere.isdisjoint(everywhere) or not in_slot.isdisjoint(slotted)
    }
    gives = not anywhere.isdisjoint(_GIVE_FORMS)
    if "money" not in classes and gives and _MONEY_CUES.search(lowered):
        classes.add("money")  # "send $40 to Ana", "send them the difference"
    acts = (
        bool(classes)
        or not anywhere.isdisjoint(_ACTION_ANYWHERE)
        or not in_slot.isdisjoint(_ACTION_IN_SLOT)
    )
    if acts:
        classes |= {kind for kind, forms in _OBJECT_FORMS.items() if not anywhere.isdisjoint(forms)}
    if _LET_KNOW.search(lowered):
        classes.add("sending")  # "let Bob know"
        acts = True
    if _DELEGATION.search(lowered):
        classes = set(CLASS_NAMES)
        acts = True
    looks = "?" in text or not anywhere.isdisjoint(_LOOK_FORMS)
    return Request(frozenset(classes), acts, looks)


def class_words(kind: ActionClass, text: str) -> list[tuple[int, int]]:
    """Where ``text`` asks for ``kind`` (character spans), read as a request is: a word
    that asks wherever it stands, or one that asks in a verb's place ("Please wire …").
    Used to cite the instruction a tool output carried."""
    anywhere, in_slot = _CLASS_FORMS[kind]
    spans: list[tuple[int, int]] = []
    previous = "."
    for match in _TOKEN.finditer(text.lower()):
        token = match.group()
        if token in _SENTENCE_END:
            previous = "."
            continue
        slot = previous == "." or previous in _VERB_SLOT
        if len(token) > 2 and (token in anywhere or (slot and token in in_slot)):
            spans.append(match.span())
        previous = token
    return spans
