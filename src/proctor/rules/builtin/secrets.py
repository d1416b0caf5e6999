"""Rule family: secrets in the agent's own output (category ``risk``).

``secret_in_output`` fires when the agent itself emitted a secret: in an assistant
message, or in a tool call's arguments (a key pasted into a ``curl`` header, written into
a file, passed on a command line, sent in an email). Stored text already has secrets
replaced by ``[REDACTED:<kind>]`` (SPEC ING-4), so the rule looks for those placeholders
and cites each one's character range; it also runs :class:`proctor.sources.Redactor`
over the text itself, because the gate sees a proposed call's raw input and live events
may arrive before storage. Evidence never contains the secret, only the placeholder.

How bad, by where the secret goes (severity → intended gate decision):

- a call that sends it over the network (a URL in the same call, a network client such as
  ``curl``/``wget``/``ssh``, or a sending tool such as ``send_email``) → high, ``deny``;
- a call that writes it into a file (``Write``, ``Edit``, ``apply_patch``, ``> file``) →
  medium, ``ask``;
- any other call argument, or an assistant message → medium.

Not flagged: secrets that only appear in tool *results* (the agent read ``.env``: the
tool produced it, not the agent) and the text an edit replaces (``old_string``: quoting
a secret in order to remove it is the fix, not the leak). User messages are the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar, Literal

from proctor.findings import Evidence, Severity
from proctor.redaction import Redactor
from proctor.rules._calls import argument_strings
from proctor.rules._policy import RuleMode
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._call_effects import commands_of, edited_paths, is_edit_tool, shell_text
from proctor.transcript import Message, ToolCall

Destination = Literal["network", "file", "arguments", "message"]
_HEADLINES: dict[Destination, str] = {
    "network": "sent to a network destination",
    "file": "written into a file",
    "arguments": "in tool call arguments",
    "message": "in an assistant message",
}

PLACEHOLDER = re.compile(r"\[REDACTED:([a-z][a-z0-9_]*)\]")
_CONTEXT_CHARS = 40
"""Characters shown on each side of a placeholder in an evidence excerpt."""
_REPLACED_TEXT_FIELDS = frozenset({"old_string", "old_str", "oldtext", "old_text", "search"})
_URL = re.compile(r"\b(?:https?|wss?|ftp)://([^/\s\"'<>:@]+)", re.IGNORECASE)
# fmt: off
_NETWORK_PROGRAMS = frozenset({
    "curl", "wget", "http", "https", "xh", "nc", "ncat", "netcat", "telnet", "ssh", "scp", "sftp",
    "rsync", "ftp", "mail", "sendmail", "mutt", "aws", "gsutil", "gcloud", "az", "gh", "docker",
})
_NETWORK_TOOL_WORDS = frozenset({
    "fetch", "http", "request", "post", "send", "email", "mail", "slack", "webhook", "upload",
    "publish", "tweet", "message", "sms", "url", "web", "browse", "navigate", "api",
})
# fmt: on
_WORDS = re.compile(r"[a-z]+")
_CALL_TAIL = re.compile(r"[\"'][A-Za-z_][A-Za-z0-9_]*[\"']\s*[),\]]")


def destination(call: ToolCall) -> Literal["network", "file", "arguments"]:
    """Where a call's arguments go: over the network, into a file, or nowhere further."""
    if is_edit_tool(call):
        return "file"
    strings = [value for _, value in argument_strings(call.arguments)]
    if shell_text(call) is not None:
        commands = commands_of(call)
        if any(c.program in _NETWORK_PROGRAMS for c in commands):
            return "network"
        if any(c.program == "git" and any(_URL.search(a) for a in c.args) for c in commands):
            return "network"
        return "file" if edited_paths(call, commands) else "arguments"
    name_words = set(_WORDS.findall(call.name.lower()))
    if any(_URL.search(s) for s in strings) or not name_words.isdisjoint(_NETWORK_TOOL_WORDS):
        return "network"
    return "arguments"


def _excerpt(text: str, start: int, end: int) -> str:
    left = max(0, start - _CONTEXT_CHARS)
    right = min(len(text), end + _CONTEXT_CHARS)
    piece = " ".join(text[left:right].split())
    return ("…" if left else "") + piece + ("…" if right < len(text) else "")


def _placeholders(text: str, redactor: Redactor) -> tuple[str, list[re.Match[str]]]:
    """The text with any raw secret redacted, and every placeholder in it."""
    if "[REDACTED:" not in text and len(text) < 8:
        return text, []
    clean = redactor.redact(text)
    if "[REDACTED:" not in clean:
        return clean, []
    return clean, [m for m in PLACEHOLDER.finditer(clean) if not _looks_like_code(clean, m)]


def _looks_like_code(text: str, match: re.Match[str]) -> bool:
    """True for ``KEY = os.getenv("KEY")``, which redaction takes for ``KEY = <secret>``.

    The ``secret_assignment`` pattern accepts any 8+ characters after ``KEY=``, so the
    call ``os.getenv(`` becomes the "secret" and the quoted variable name and closing
    parenthesis are left right after the placeholder. Reading a key from the environment
    is the safe practice this rule recommends, not a leak.
    """
    return match.group(1) == "secret_assignment" and bool(_CALL_TAIL.match(text, match.end()))


class SecretInOutput(Rule):
    """A secret the agent wrote: in its message or in the arguments of a call it made."""

    id = "secret_in_output"
    version = 1
    category = "risk"
    description = "The agent put a secret in a message or a tool call (sent, written or passed)"
    gate_mode: ClassVar[RuleMode] = "deny"
    """Deny: right for secrets sent over the network. Writing one into a file ought to
    ``ask``; that needs a per-hit gate decision the engine does not have yet."""
    observes = frozenset({"message", "call"})

    def start(self, context: RuleContext) -> Redactor:
        return Redactor()

    def observe(self, state: Redactor, event: Event, context: RuleContext) -> Iterable[Hit]:
        if event.kind == "message" and event.message is not None:
            return self._message(event.message, state)
        if event.kind == "call" and event.call is not None:
            return self._call(event.call, state)
        return ()

    def before_call(self, state: Redactor, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        # A fresh redactor: the gate must not change state (the redactor counts secrets).
        return self._call(call, Redactor())

    def _message(self, message: Message, redactor: Redactor) -> list[Hit]:
        if message.role != "assistant" or message.kind != "reply" or message.derived:
            return []
        text, found = _placeholders(message.text, redactor)
        if not found:
            return []
        evidence = tuple(
            Evidence(
                source_type="message",
                source_id=message.source_id,
                field="text",
                start=m.start(),
                end=m.end(),
                excerpt=_excerpt(text, m.start(), m.end()),
            )
            for m in found
        )
        where: Destination = "message"
        return [self._hit(found, evidence, where, _HEADLINES[where], "medium", message.source_id)]

    def _call(self, call: ToolCall, redactor: Redactor) -> list[Hit]:
        found: list[re.Match[str]] = []
        evidence: list[Evidence] = []
        strings = argument_strings(call.arguments)
        joined = "\x00".join(value for _, value in strings)
        if "[REDACTED:" not in joined and not redactor.may_find(joined):
            return []  # no argument holds a secret or a placeholder: the usual case
        for field, value in strings:
            if field.rsplit(".", 1)[-1].lower() in _REPLACED_TEXT_FIELDS:
                continue
            text, matches = _placeholders(value, redactor)
            found += matches
            evidence += [
                Evidence(
                    source_type="tool_call",
                    source_id=call.source_id,
                    field=field,
                    start=m.start(),
                    end=m.end(),
                    excerpt=_excerpt(text, m.start(), m.end()),
                )
                for m in matches
            ]
        if not found:
            return []
        where = destination(call)
        severity: Severity = "high" if where == "network" else "medium"
        if where == "network":
            hosts = sorted(
                {h.lower() for _, v in argument_strings(call.arguments) for h in _URL.findall(v)}
            )
            detail = f"sent over the network by {call.name}" + (
                f" (to {', '.join(hosts[:3])})" if hosts else ""
            )
        elif where == "file":
            detail = f"written into a file by {call.name}"
        else:
            detail = f"in the arguments of {call.name}"
        return [self._hit(found, tuple(evidence), where, detail, severity, call.source_id)]

    def _hit(
        self,
        found: list[re.Match[str]],
        evidence: tuple[Evidence, ...],
        where: Destination,
        detail: str,
        severity: Severity,
        trigger: str,
    ) -> Hit:
        kinds = sorted({m.group(1) for m in found})
        count = len(found)
        noun = "secret" if count == 1 else "secrets"
        return Hit(
            title=f"Secret {_HEADLINES[where]}: {', '.join(kinds)}",
            severity=severity,
            evidence=evidence,
            content=(
                f"The agent's output contains {count} {noun} ({', '.join(kinds)}) {detail}. "
                "Rotate the credential if it reached logs or other systems; pass secrets "
                "through environment variables or a secret store instead of writing them out."
            ),
            action="request_review" if severity == "high" else "warn",
            actual=count,
            threshold=0,
            trigger=trigger,
            gate="deny" if where == "network" else "ask",
        )


RULES: list[Rule] = [SecretInOutput()]
