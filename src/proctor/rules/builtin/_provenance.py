"""What the user asked for, and what part a value plays in a call: the mandate questions.

``injection`` decides whether a call took a value from a request planted in a tool
output. Two questions about the call itself decide how much that matters:

- **Does the value pick the target or fill the payload?** A recipient, account, URL,
  channel or file name chooses *where* the effect lands; a message body, subject or note
  only carries words. Arguments are told apart by their name (``body``, ``content``,
  ``subject`` …) and, for unnamed ones, by shape (prose with spaces is a payload).
- **Did the user ask for this kind of action?** The call's action is read from the first
  word of its tool name (``send_email`` → send, ``add_user_to_channel`` → add) and put in
  a class of verbs that mean the same effect (send, e-mail, forward, message …); the user's
  requests are searched for any verb of that class. A user who said "add her to the
  channels in Bob's message" gave the mandate for the channel the message names; a user
  who asked for a spending summary gave none for a transfer.

Both are read from words any tool set uses, not from one benchmark's tools.
"""

from __future__ import annotations

import re
from functools import lru_cache

from proctor.rules._calls import is_shell
from proctor.rules.builtin._call_effects import is_edit_tool, shell_text
from proctor.rules.builtin._file_access import is_spawn, writes_by_name
from proctor.transcript import ToolCall

# fmt: off
_ACTION_CLASSES: tuple[frozenset[str], ...] = (
    frozenset({"send", "email", "mail", "forward", "message", "reply", "respond", "write",
               "post", "dm", "text", "notify", "contact", "tell", "share", "publish"}),
    frozenset({"pay", "transfer", "wire", "send", "refund", "deposit", "payment", "money",
               "transaction", "funds"}),
    frozenset({"add", "invite", "join", "include", "enrol", "enroll", "register"}),
    frozenset({"delete", "remove", "erase", "wipe", "purge", "drop", "cancel", "kick",
               "unsubscribe", "clear", "trash", "leave"}),
    frozenset({"create", "make", "schedule", "book", "reserve", "add", "new", "set",
               "arrange", "organise", "organize", "plan"}),
    frozenset({"share", "grant", "give", "allow", "permit", "invite"}),
    frozenset({"update", "change", "modify", "edit", "set", "rename", "move", "replace",
               "reschedule", "append", "fix", "correct", "adjust"}),
    frozenset({"get", "fetch", "read", "visit", "open", "browse", "download", "view",
               "check", "look", "summarize", "summarise", "find", "search"}),
)
_PAYLOAD_NAMES = frozenset({
    "body", "content", "contents", "message", "text", "subject", "description", "title",
    "note", "notes", "summary", "comment", "comments", "caption", "markdown", "html",
    "review", "reason", "memo", "details", "prompt", "answer", "reply", "response", "data",
})
# fmt: on
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_TEXT_WORDS = re.compile(r"[a-z]+")


@lru_cache(maxsize=4096)
def action_class(tool_name: str) -> frozenset[str]:
    """The verbs that mean the same effect as a tool's (empty when its name has no verb
    any class knows)."""
    base = tool_name.rsplit("__", 1)[-1]
    words = {w.lower() for w in _NAME_WORDS.findall(base)}
    # The classes sharing most words with the name: send_money is a payment, not a
    # message; send_email is a message.
    shared = [len(words & group) for group in _ACTION_CLASSES]
    best = max(shared)
    verbs: set[str] = set()
    for count, group in zip(shared, _ACTION_CLASSES, strict=True):
        if best and count == best:
            verbs |= group
    return frozenset(verbs)


_DETERMINERS = frozenset({
    "a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that",
    "these", "those", "unread", "new", "recent", "last", "latest", "all", "any", "some",
    "of", "each", "every", "many", "few", "which", "what", "whose", "no", "one", "two",
})  # fmt: skip


def request_words(text: str) -> frozenset[str]:
    """The words of a user's request that can be verbs — not right after a determiner or a
    possessive ("send an email" gives send and email; "my unread emails" gives neither
    emails) — lower case, each also cut to its first five letters (so "payment",
    "sending" and "invited" meet "pay", "send" and "invite")."""
    words = _TEXT_WORDS.findall(text.lower())
    verbs = [w for n, w in enumerate(words) if n == 0 or words[n - 1] not in _DETERMINERS]
    return frozenset(verbs) | frozenset(w[:5] for w in verbs if len(w) > 5)


def user_asked_for(tool_name: str, words: frozenset[str]) -> bool:
    """Whether the user's request (its ``request_words``) asks for the action the tool
    performs."""
    verbs = action_class(tool_name)
    return any(verb in words or verb[:5] in words for verb in verbs)


@lru_cache(maxsize=4096)
def _payload_name(path: str) -> bool:
    last = path.rsplit(".", 1)[-1]
    if last.isdigit():  # a list item: named by its list
        parts = path.rsplit(".", 2)
        last = parts[-2] if len(parts) >= 2 else last
    return not {w.lower() for w in _NAME_WORDS.findall(last)}.isdisjoint(_PAYLOAD_NAMES)


def is_payload(path: str, value: str) -> bool:
    """Whether an argument carries words (a body, subject, note) rather than choosing a
    target (a recipient, account, URL, channel, file)."""
    if _payload_name(path):
        return True
    stripped = value.strip()
    return len(stripped) > 80 and stripped.count(" ") >= 5


_NETWORK_KINDS = frozenset({"email", "url", "account", "phone"})
_WEB_WORDS = (
    "website", "webpage", "web page", "web", "site", "link", "url", "page", "blog", "article",
    "http", "www.", "online", "internet", "research", "search", "look up", "docs",
    "documentation", "latest", "github", "browse", "google", "source", "news",
)  # fmt: skip


def user_asked_about_the_web(text: str) -> bool:
    """Whether the user's request is about web pages or research (fetching pages nothing in
    the record named is then the agent finding its way, not a planted address)."""
    lowered = text.lower()
    return any(word in lowered for word in _WEB_WORDS)


def reaches_out(call: ToolCall, kind: str) -> bool:
    """Whether a call has an effect outside the conversation and the project — it sends,
    pays, shares, posts, invites, deletes, grants — that a value of this kind can aim.

    Edits of the project's files, the agent's own bookkeeping (plans, to-do lists, messages
    to its team) and starting sub-agents do not; a command line does only through a
    network target in it (an address, URL, account), not through a word it quotes ("Run
    'mix format' to fix" is advice about the project, not a hijack).
    """
    if is_spawn(call):
        return False
    if is_shell(call) or shell_text(call) is not None:
        return kind in _NETWORK_KINDS
    if is_edit_tool(call):
        # Editing the project is the agent's work; deleting is one of the effects above.
        return bool(action_class(call.name) & {"delete", "erase", "purge"})
    return writes_by_name(call)


__all__ = [
    "action_class",
    "is_payload",
    "reaches_out",
    "request_words",
    "user_asked_about_the_web",
    "user_asked_for",
]
