"""Which tools write, which spawn sub-agents, and which files a call reads or writes.

The built-in list of writing tools covers the file tools of Claude Code (``Write``,
``Edit``, ``MultiEdit``, ``NotebookEdit``), Codex (``apply_patch``), Gemini CLI
(``write_file``, ``replace``), the Anthropic text editor (anything but ``view``) and
MCP file servers. A function tool whose first verb changes something (``send_money``,
``create_issue``, ``GmailSendEmail``, ``github_delete_branch``) writes too; agent
bookkeeping (``TodoWrite``, ``update_plan``, ``TaskCreate``, ``SendMessage``…) does not.
A policy's ``write_tools`` replaces this list. Shell commands are judged by their text
(``_shell_classify``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from proctor.rules._calls import argument_strings, command_text, file_paths, is_shell, tool_matches
from proctor.rules.builtin._call_effects import tool_base_name
from proctor.rules.builtin._shell_classify import command_effects
from proctor.rules.builtin._shell_effects import Access, CommandEffects
from proctor.transcript import ToolCall

_FILE_WRITERS = frozenset({
    "write", "edit", "multiedit", "multi_edit", "notebookedit", "apply_patch", "write_file",
    "write_to_file", "replace", "edit_file", "create_file", "str_replace", "insert",
    "append_file", "append_to_file", "edit_notebook", "search_replace", "delete_file",
    "remove_file", "move_file", "rename_file", "create_directory", "make_directory",
})  # fmt: skip
_EDITORS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})
_BOOKKEEPING = frozenset({
    "todowrite", "todo_write", "write_todos", "update_plan", "taskcreate", "taskupdate",
    "tasklist", "taskget", "taskoutput", "taskstop", "sendmessage", "teamcreate", "teamdelete",
    "exitplanmode", "enterplanmode", "skill", "toolsearch", "write_stdin", "askuserquestion",
    "killshell", "killbash", "bashoutput", "save_memory",
})  # fmt: skip
_CHANGING_VERBS = frozenset({
    "write", "create", "delete", "remove", "update", "edit", "modify", "set", "send", "post",
    "put", "patch", "insert", "append", "move", "rename", "upload", "publish", "deploy",
    "commit", "push", "merge", "add", "drop", "truncate", "reset", "cancel", "schedule",
    "transfer", "pay", "book", "purchase", "buy", "invite", "share", "apply", "overwrite",
    "save", "store", "install", "uninstall", "reserve", "submit", "approve", "close", "archive",
    "assign", "grant", "revoke", "change", "replace", "reschedule", "return", "exchange",
    "place", "give", "generate", "manage", "execute", "run", "import", "restore", "enable",
    "disable", "kill", "terminate", "restart",
})  # fmt: skip
_READING_VERBS = frozenset({
    "get", "list", "read", "search", "find", "fetch", "query", "view", "show", "describe",
    "check", "lookup", "count", "retrieve", "inspect", "browse", "open", "load", "select",
    "preview", "explain", "validate", "verify", "compare", "diff", "grep", "glob", "ls", "stat",
    "watch", "wait", "ping", "health", "status", "info", "summarize", "download", "web",
})  # fmt: skip
_SPAWNERS = frozenset({"task", "agent", "spawn_agent", "spawn_subagent", "create_subagent",
                       "delegate_to_agent", "dispatch_agent", "run_subagent"})  # fmt: skip
_WORKDIR_KEYS = ("workdir", "cwd", "directory", "working_directory", "dir_path")
_COMMAND_KEYS = ("command", "cmd", "commands", "script", "code", "input")
_PATCH_HEADER = re.compile(
    r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.MULTILINE
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True, slots=True)
class FileAccess:
    """One path a tool call uses, how, and where the call's arguments name it."""

    path: str
    """As written (resolve with ``Places.resolve(path, base)``)."""
    access: Access
    field: str
    start: int | None = None
    end: int | None = None
    base: str | None = None
    """The folder ``path`` is relative to when not the working folder (``workdir``, ``cd``)."""


def writes_by_name(call: ToolCall, write_tools: list[str] | None = None) -> bool:
    """True for a non-shell tool that changes files or the outside world."""
    if write_tools is not None:
        return tool_matches(call.name, write_tools)
    if is_shell(call):
        return False
    name = tool_base_name(call)
    if name in _BOOKKEEPING:
        return False
    if name in _FILE_WRITERS:
        return True
    if name in _EDITORS:
        command = call.arguments.get("command") if isinstance(call.arguments, dict) else None
        return command != "view"
    # The first verb decides: toolkit prefixes ("GmailSendEmail", "github_create_issue") are
    # nouns, so the verb after them is what the tool does.
    for word in (w.lower() for w in _WORD.findall(call.name.rsplit("__", 1)[-1])):
        if word in _CHANGING_VERBS:
            return True
        if word in _READING_VERBS:
            return False
    return False


def is_spawn(call: ToolCall) -> bool:
    """True for a call that starts a sub-agent (``Task``, ``Agent``, Codex ``spawn_agent``)."""
    name = tool_base_name(call)
    return name in _SPAWNERS or name.startswith("subagent")


def succeeded(call: ToolCall) -> bool:
    """True for a call that finished without an error."""
    return call.status == "ok" and call.exit_code in (None, 0)


def shell_source(call: ToolCall) -> tuple[str, str, bool] | None:
    """The command a shell call runs, the argument holding it, and whether offsets map 1:1.

    None for other tools, and for commands removed before storage (nothing to judge).
    """
    text = command_text(call)
    if text is None:
        return None
    args = call.arguments
    if isinstance(args, str):
        return text, "arguments", True
    if isinstance(args, dict):
        for key in _COMMAND_KEYS:
            value = args.get(key)
            if value == text:
                return text, f"arguments.{key}", True
            if isinstance(value, list):
                position = next((i for i, v in enumerate(value) if v == text), None)
                if position is not None:
                    return text, f"arguments.{key}.{position}", True
                return text, f"arguments.{key}", False
    return text, "arguments", False


def shell_workdir(call: ToolCall) -> str | None:
    """The folder a shell call runs in when its arguments say (Codex ``workdir``)."""
    if isinstance(call.arguments, dict):
        for key in _WORKDIR_KEYS:
            value = call.arguments.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def shell_effects(call: ToolCall) -> CommandEffects | None:
    """What a shell call's command does, or None for other tools."""
    source = shell_source(call)
    return None if source is None else command_effects(source[0])


_last: tuple[ToolCall, tuple[str, ...] | None, tuple[FileAccess, ...]] | None = None


def file_accesses(call: ToolCall, write_tools: list[str] | None = None) -> tuple[FileAccess, ...]:
    """Every path the call names: file tool arguments, patch headers, shell command words."""
    global _last
    # Several rules ask about the same call in a row; remember the last answer.
    key = None if write_tools is None else tuple(write_tools)
    last = _last
    if last is not None and last[0] is call and last[1] == key:
        return last[2]
    found = tuple(_accesses(call, write_tools))
    _last = (call, key, found)
    return found


def _accesses(call: ToolCall, write_tools: list[str] | None) -> list[FileAccess]:
    source = shell_source(call)
    if source is not None:
        text, field, exact = source
        workdir = shell_workdir(call)
        found = []
        for use in command_effects(text).paths:
            base = use.base if workdir is None else _join(workdir, use.base)
            start, end = (use.start, use.end) if exact else (None, None)
            found.append(FileAccess(use.text, use.access, field, start, end, base))
        return found
    writes = writes_by_name(call, write_tools)
    name = tool_base_name(call)
    default: Access = "read"
    if writes:
        default = "delete" if name in ("delete_file", "remove_file") else "write"
        default = "modify" if name in ("create_directory", "make_directory") else default
    strings = list(argument_strings(call.arguments))
    found = []
    seen: set[str] = set()
    for field, value in strings:
        if "*** " not in value:
            continue
        for match in _PATCH_HEADER.finditer(value):
            group = 2 if match.group(2) else 3
            named = match.group(group).strip()
            access: Access = "delete" if match.group(1) == "Delete" else "write"
            start = match.start(group)
            found.append(FileAccess(named, access, field, start, start + len(named)))
            seen.add(named)
    for path in dict.fromkeys(file_paths(call)):
        if path in seen:
            continue
        field = next((f for f, v in strings if v == path), "arguments")
        found.append(FileAccess(path, default, field))
    return found


def _join(workdir: str, base: str | None) -> str:
    if base is None or base.startswith(("/", "~", "$HOME", "${HOME}")):
        return base or workdir
    return workdir.rstrip("/") + "/" + base
