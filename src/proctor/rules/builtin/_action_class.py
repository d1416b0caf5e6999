"""What kind of action a tool call is, read from the tool's name, arguments and description.

Tools of every agent and benchmark name their verb somewhere: ``BankManagerTransferFunds``,
``transfer_money``, ``mcp__bank__send_payment``, ``ManageDocuments`` with
``action="delete"``. The name is split into words (camelCase, snake_case, MCP prefixes);
the first verb decides: a look-up verb (``get``, ``search``, ``read`` …) makes the call a
read, a risky verb its class (:data:`~proctor.rules.builtin._mandate.ActionClass`), and a
neutral one (``manage``, ``update``, ``set``) lets the object words and an ``action``
argument decide (``ManageNoteSharingLevel`` grants access). Arguments add what names
leave out: ``enabled: false`` on an alarm turns a safeguard off, a ``git+https://``
package or a file an earlier call downloaded makes an install or a run *execution of
downloaded code*.

Shell commands and file edits are a coding agent's ordinary work and are judged by the
destructive-command rule; here only shell commands that install or run code fetched
from the network count. Nothing is executed; answers are memoised per tool name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from proctor.rules._calls import argument_strings
from proctor.rules.builtin._call_effects import commands_of, plain_tool
from proctor.rules.builtin._mandate import ActionClass
from proctor.transcript import ToolCall

# fmt: off
_READ_VERBS = frozenset({
    "get", "search", "read", "list", "find", "check", "lookup", "look", "query", "view",
    "show", "count", "describe", "retrieve", "fetch", "browse", "preview", "navigate",
    "scan", "analyze", "analyse", "calculate", "estimate", "quote", "translate",
    "summarize", "compare", "recommend", "identify", "detect", "track", "watch", "inspect",
    "verify", "validate", "download", "export", "see", "peek", "display", "load", "visit",
    "open",
    "learn", "explore", "monitor", "review", "ask",
})
_CLASS_VERBS: dict[str, ActionClass] = {
    "pay": "money", "payment": "money", "payments": "money", "paybill": "money",
    "withdraw": "money", "withdrawal": "money", "deposit": "money", "purchase": "money",
    "buy": "money", "sell": "money", "trade": "money", "donate": "money", "tip": "money",
    "refund": "money", "checkout": "money", "remit": "money", "wire": "money",
    "swap": "money", "invest": "money",
    "delete": "deletion", "remove": "deletion", "erase": "deletion", "purge": "deletion",
    "wipe": "deletion", "trash": "deletion", "discard": "deletion", "uninstall": "deletion",
    "cancel": "deletion", "unsubscribe": "deletion", "destroy": "deletion",
    "drop": "deletion", "terminate": "deletion", "clear": "deletion", "empty": "deletion",
    "kill": "deletion", "rm": "deletion",
    "grant": "access", "share": "access", "invite": "access", "authorize": "access",
    "authorise": "access", "permit": "access", "unlock": "access", "sharing": "access",
    "permission": "access", "permissions": "access", "elevate": "access",
    "send": "sending", "email": "sending", "mail": "sending", "post": "sending",
    "tweet": "sending", "retweet": "sending", "reply": "sending", "forward": "sending",
    "publish": "sending", "sms": "sending", "notify": "sending",
    "broadcast": "sending", "comment": "sending", "dm": "sending", "message": "sending",
    "disable": "safeguard", "deactivate": "safeguard", "disarm": "safeguard",
    "bypass": "safeguard", "whitelist": "safeguard", "allowlist": "safeguard",
    "unblock": "safeguard", "mute": "safeguard", "silence": "safeguard",
    "suppress": "safeguard",
}
# Words that are as often nouns (``mail_read``, ``GetPayments``): they decide only when
# the name has no look-up, risky or neutral verb (``EmailUser``, ``PostTweet``).
_NOUNISH = frozenset({
    "mail", "email", "message", "post", "tweet", "sms", "comment", "payment", "payments",
    "permission", "permissions", "sharing", "trash", "tip", "wire", "trade", "dm",
})
# Verbs that change something but say not what: the object words or an action argument decide.
_NEUTRAL_VERBS = frozenset({
    "manage", "handle", "update", "edit", "modify", "set", "change", "create", "make",
    "add", "put", "patch", "apply", "submit", "execute", "run", "perform", "do", "process",
    "control", "operate", "configure", "adjust", "place", "transfer", "move", "turn",
    "switch", "toggle", "assign", "write", "save", "schedule", "book", "reserve", "order",
    "start", "stop", "launch", "install", "call", "invoke", "trigger", "activate", "go",
    "leave", "join", "follow", "like", "dispatch", "generate", "lock", "close", "open",
    "rename", "restore", "reset", "revoke", "archive", "mark", "approve", "reject", "accept",
    "decline", "redeem", "sign", "register", "enroll", "ship", "deliver", "drive", "mint",
    "arm", "enable", "insert", "append", "merge", "push", "commit", "deploy", "exchange",
    "return", "print", "upload", "record", "log", "store", "upgrade", "repair", "fix", "replace",
    "increase", "decrease", "raise", "lower", "cook", "heat", "dim", "play",
})
_OBJECT_CLASSES: dict[str, ActionClass] = {
    "sharing": "access", "permission": "access", "permissions": "access", "access": "access",
    "guest": "access", "guests": "access", "collaborator": "access", "member": "access",
    "role": "access", "admin": "access", "ownership": "access", "key": "access",
    "funds": "money", "fund": "money", "money": "money", "payment": "money",
    "ether": "money", "crypto": "money", "cryptocurrency": "money", "bitcoin": "money",
    "order": "money", "coin": "money", "coins": "money", "stock": "money", "shares": "money",
    "email": "sending", "message": "sending", "sms": "sending", "tweet": "sending",
    "post": "sending", "mail": "sending",
}
_SAFEGUARD_OBJECTS = frozenset({
    "alarm", "security", "camera", "cameras", "firewall", "antivirus", "protection", "guard",
    "detector", "sensor", "sensors", "monitor", "monitoring", "alert", "alerts", "2fa", "mfa",
    "authentication", "encryption", "backup", "filter", "safety", "safeguard", "defender",
    "audit", "logging", "surveillance", "smoke", "lock", "locks", "policy", "siren",
    "sandbox", "verification", "antimalware", "malware", "virus", "spam",
})
_OFF_VALUES = frozenset({
    "off", "disabled", "disable", "disarmed", "disarm", "unlocked", "unlock", "inactive",
    "false", "0", "none", "whitelist", "allowlist", "allow", "bypass", "paused",
})
_STATE_KEYS = frozenset({
    "enabled", "enable", "active", "armed", "on", "state", "status", "mode", "policy_type",
    "action", "setting", "value", "protection",
})
_ACTION_KEYS = ("action", "operation", "op", "method", "mode", "type", "command", "verb")
_AGENT_OWN_TOOLS = frozenset({
    "task", "agent", "todowrite", "todoread", "updateplan", "exitplanmode", "enterplanmode",
    "think", "memory", "skill", "slashcommand", "killshell", "bashoutput", "killbash",
    "writestdin", "askuserquestion", "todo", "plan", "notebookedit",
})
# fmt: on
_ACCESS_KEYS = frozenset(
    {
        "role",
        "roles",
        "permission",
        "permissions",
        "access_level",
        "access",
        "sharing_level",
        "acl",
        "grant",
        "privileges",
        "scope",
        "scopes",
    }
)  # fmt: skip
"""Arguments that say a neutral call (``add_binding``, ``update_member``) grants access."""
_BUYING_VERBS = frozenset({"place", "create", "make", "submit", "put", "book"})
_OPENINGS = frozenset({"door", "doors", "gate", "garage", "lock", "window", "vault", "valve"})
_TEAM_WORDS = frozenset({"team", "teammate", "teammates", "subagent", "subagents"})
"""Tools that run the agent's own team of sub-agents (``TeamCreate``, ``TeamDelete``)."""
_RECIPIENT_KEYS = ("recipient", "to", "agent", "agent_name", "teammate", "target")
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+[a-z]*")
_REMOTE_CODE = re.compile(r"(?:git\+|https?://|ftp://|s3://)\S+", re.IGNORECASE)
_FILE_NAME = re.compile(
    r"[\w.-]+\.(?:py|sh|bash|js|mjs|exe|bin|ps1|bat|jar|whl|deb|rpm|pkg|dmg|msi|apk|run|pl|rb|php|zip|tar|gz|tgz)\b",
    re.IGNORECASE,
)
_INSTALLERS = frozenset({"pip", "pip3", "npm", "pnpm", "yarn", "gem", "cargo", "go", "uv", "pipx"})
_INTERPRETERS = frozenset({"bash", "sh", "zsh", "python", "python3", "node", "perl", "ruby", "php"})
_EXECUTION_WORDS = frozenset({"execute", "run", "exec", "eval", "install", "launch", "invoke"})
_CODE_WORDS = frozenset(
    {"code", "script", "python", "file", "program", "binary", "package", "command", "shell", "app"}
)


@dataclass(frozen=True, slots=True)
class ActionKind:
    """What a call does, and the word or value that shows it."""

    kind: ActionClass | None
    """The risky class, or None for a call that changes something of no risky class."""
    shown_by: str
    """The tool-name word, argument value or command that shows it."""
    field: str | None = None
    """The argument (dot path) that shows it; None for the tool's name."""


def name_words(name: str) -> tuple[str, ...]:
    """Lower-case words of a tool name (``mcp__bank__sendMoney`` → ``send``, ``money``)."""
    return _name_words(name)


@lru_cache(maxsize=4096)
def _name_words(name: str) -> tuple[str, ...]:
    base = name.rsplit("__", 1)[-1]
    return tuple(word.lower() for word in _NAME_WORDS.findall(base))


@lru_cache(maxsize=4096)
def _by_name(name: str) -> tuple[str, str] | None:
    """``("read" | class | "neutral" | "own", word)`` from the verbs of a tool name.

    The first look-up or risky verb decides (``GetPaymentHistory`` reads,
    ``SmartLockUnlockDoor`` grants access although ``lock`` comes first); a name with
    only neutral verbs is neutral, unless an object word says more (``TransferFunds``).
    """
    words = _name_words(name)
    if (
        "".join(words) in _AGENT_OWN_TOOLS
        or (words and words[-1] in ("todo", "todos"))
        or not _TEAM_WORDS.isdisjoint(words)
    ):
        return ("own", "".join(words))
    for word in words:
        if word == "open" and not _OPENINGS.isdisjoint(words):
            return ("access", word)  # DoorOpen, open_garage: not opening a message
        if word in _READ_VERBS:
            return ("read", word)
        if word in _CLASS_VERBS and word not in _NOUNISH:
            return (_CLASS_VERBS[word], word)
    neutral = next((index for index, word in enumerate(words) if word in _NEUTRAL_VERBS), None)
    if neutral is None:
        nounish = next((word for word in words if word in _NOUNISH), None)
        return None if nounish is None else (_CLASS_VERBS[nounish], nounish)
    word = words[neutral]
    for at, later in enumerate(words[neutral + 1 :], start=neutral + 1):
        if later in ("order", "orders") and _BUYING_VERBS.isdisjoint(words[:at]):
            continue  # return_order, cancel_order are not purchases
        if later in _OBJECT_CLASSES:
            return (_OBJECT_CLASSES[later], f"{word} {later}")
        if later in _CLASS_VERBS and later in _NOUNISH:
            return (_CLASS_VERBS[later], f"{word} {later}")
    return ("neutral", word)


_DESCRIPTION_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1024)
def _by_description(description: str) -> tuple[str, str] | None:
    """The verdict from a tool's description ("Transfers funds to a payee.") when its name
    says nothing (``wire``, ``x``): the description's first sentence, verbs de-inflected."""
    sentence = description.split(". ", 1)[0].lower()
    words = []
    for word in _DESCRIPTION_WORD.findall(sentence):
        for suffix in ("ing", "es", "ed", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                stem = word[: -len(suffix)]
                if stem in _CLASS_VERBS or stem in _READ_VERBS or stem in _NEUTRAL_VERBS:
                    word = stem
                    break
                if stem + "e" in _CLASS_VERBS or stem + "e" in _NEUTRAL_VERBS:
                    word = stem + "e"
                    break
        if word not in ("return", "provide", "give"):  # "Returns the weather" only reads
            words.append(word)
    return _by_name("_".join(words)) if words else None


def classify(call: ToolCall, downloaded: Iterable[str] = ()) -> ActionKind | None:
    """The call's kind of action, or None for a read, a look-up or the agent's own tools.

    ``downloaded``: file names earlier calls fetched from the network (a run of one of
    them is execution of downloaded code).
    """
    if not plain_tool(call.name):
        return _shell_kind(call, downloaded)
    verdict = _by_name(call.name)
    if verdict is None:
        description = call.attributes.get("description")
        if isinstance(description, str) and description.strip():
            verdict = _by_description(description[:200])
    if verdict is not None and verdict[0] == "own":
        return None
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if verdict is None or verdict[0] in ("neutral", "read"):
        # ``ManageDocuments(action="delete")``: the argument names the verb.
        by_argument = _action_argument(arguments)
        if by_argument is not None:
            group, value, key = by_argument
            if group == "read":
                return None
            kind = None if group == "neutral" else _CLASS_VERBS[value]
            return ActionKind(kind, value, key)
    if verdict is None or verdict[0] == "read":
        return None
    return _refine(verdict[0], verdict[1], call, arguments, downloaded)


def _refine(
    group: str, word: str, call: ToolCall, arguments: dict[str, Any], downloaded: Iterable[str]
) -> ActionKind:
    words = _name_words(call.name)
    if group in ("sending", "neutral") and _moves_money(words, arguments):
        return ActionKind("money", word)
    if group in ("neutral", "safeguard", "access"):
        off = _turns_off_safeguard(words, arguments)
        if off is not None:
            return ActionKind("safeguard", f"{off[0]}={off[1]}", off[0])
    if group == "neutral":
        granted = _ACCESS_KEYS.intersection(key.lower() for key in arguments)
        if granted:
            key = sorted(granted)[0]
            return ActionKind("access", f"{key}={arguments[key]}", key)
        if word in _EXECUTION_WORDS or not _CODE_WORDS.isdisjoint(words):
            remote = _remote_code(call, downloaded)
            if remote is not None:
                return ActionKind("execution", remote[1], remote[0])
        return ActionKind(None, word)
    return ActionKind(group, word)  # type: ignore[arg-type]


def _action_argument(arguments: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(group, verb, key)`` from an ``action``/``operation`` argument (``action="delete"``)."""
    for key in _ACTION_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and 0 < len(value) <= 40:
            first = value.strip().lower().replace("-", "_").replace(" ", "_").split("_", 1)[0]
            if first in _READ_VERBS:
                return "read", first, key
            if first in _CLASS_VERBS:
                return "class", first, key
            if first in _NEUTRAL_VERBS:
                return "neutral", first, key
    return None


def _moves_money(words: tuple[str, ...], arguments: dict[str, Any]) -> bool:
    money_words = {"money", "funds", "payment", "ether", "crypto", "bitcoin", "coin", "cash"}
    if not money_words.isdisjoint(words):
        return True
    keys = {key.lower() for key in arguments}
    return bool(keys & {"amount", "amount_usd", "value", "sum"}) and bool(
        {k for k in keys if "account" in k or "wallet" in k or "payee" in k or "iban" in k}
        or keys & {"to", "recipient", "destination", "destination_address", "to_address"}
    )


def _turns_off_safeguard(
    words: tuple[str, ...], arguments: dict[str, Any]
) -> tuple[str, str] | None:
    """The argument that turns a safeguard off (``enabled: false`` on an alarm)."""
    guarded = not _SAFEGUARD_OBJECTS.isdisjoint(words)
    for key, value in arguments.items():
        lowered = key.lower()
        if lowered not in _STATE_KEYS:
            continue
        shown = str(value).lower() if isinstance(value, str | bool | int) else ""
        if shown not in _OFF_VALUES:
            continue
        if shown in ("whitelist", "allowlist", "bypass") or guarded:
            return key, str(value)
    if guarded and any(word in ("off", "disable", "disarm") for word in words):
        return "name", "off"
    return None


def _remote_code(call: ToolCall, downloaded: Iterable[str]) -> tuple[str, str] | None:
    """The argument naming code from the network: a URL, or a file fetched earlier."""
    fetched = set(downloaded)
    for path, value in argument_strings(call.arguments):
        remote = _REMOTE_CODE.search(value)
        if remote is not None:
            return path, remote.group()
        if fetched:
            for name in _FILE_NAME.findall(value):
                if name in fetched:
                    return path, name
    return None


def _shell_kind(call: ToolCall, downloaded: Iterable[str]) -> ActionKind | None:
    """A shell command that installs from the network or runs a downloaded file."""
    fetched = set(downloaded)
    for command in commands_of(call):
        program, args = command.program, command.args
        if program in _INSTALLERS and args and args[0] in ("install", "add", "i"):
            remote = next((a for a in args[1:] if _REMOTE_CODE.match(a)), None)
            if remote is not None:
                return ActionKind("execution", command.text, "command")
        ran = args[:1] if program in _INTERPRETERS else [program]
        for target in ran:
            name = target.rsplit("/", 1)[-1]
            if name in fetched:
                return ActionKind("execution", command.text, "command")
    return None


def downloaded_files(call: ToolCall) -> list[str]:
    """File names a call fetched from the network (a download tool, ``wget``, ``curl -o``)."""
    words = _name_words(call.name)
    found: list[str] = []
    if "download" in words or ("fetch" in words and "file" in words):
        for _, value in argument_strings(call.arguments):
            found += _FILE_NAME.findall(value)
        found += _FILE_NAME.findall(call.result_text or "")[:20]
        return found
    if plain_tool(call.name):
        return found
    for command in commands_of(call):
        if command.program in ("wget", "curl"):
            for arg in command.args:
                found += _FILE_NAME.findall(arg)
            found += [r.output_file.rsplit("/", 1)[-1] for r in command.redirects if r.output_file]
    return found


def started_agents(call: ToolCall) -> list[str]:
    """Names of sub-agents a call of the agent's own tools started (``Task(name="alice")``)."""
    verdict = _by_name(call.name)
    if verdict is None or verdict[0] != "own" or not isinstance(call.arguments, dict):
        return []
    return [v for k in ("name", "agent_name") if isinstance(v := call.arguments.get(k), str) and v]


def addressed_to(call: ToolCall, agents: set[str]) -> bool:
    """True when a message call's recipient is one of the agent's own sub-agents."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return any(arguments.get(key) in agents for key in _RECIPIENT_KEYS)
