"""Reading tool calls the same way in every rule: commands, file paths, argument strings.

Agents name the same things differently: Claude Code's ``Bash`` takes ``command``, Codex's
``shell`` takes an argv list under ``command`` and ``exec_command`` a ``cmd``; file tools
use ``file_path``, ``path``, ``notebook_path`` or an ``apply_patch`` body. These helpers
hide that, so a rule asks one question ("what command ran?") for every format.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from proctor.transcript import ToolCall

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "exec_command",
        "local_shell",
        "local_shell_call",
        "run_shell_command",
        "execute_command",
        "run_command",
        "terminal",
        "execute_bash",
        "cmd",
        "powershell",
    }
)
_COMMAND_KEYS = ("command", "cmd", "commands", "script", "code", "input")
_PATH_KEYS = (
    "file_path",
    "path",
    "notebook_path",
    "filename",
    "file",
    "target_file",
    "paths",
    "files",
)
_PATCH_PATH = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$", re.MULTILINE)
_REDACTED_ONLY = re.compile(r"^\[REDACTED[^\]]*\]$")


def tool_matches(name: str, patterns: Iterable[str]) -> bool:
    """True when ``name`` matches one of the globs (case-insensitive)."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)


def is_shell(call: ToolCall) -> bool:
    """True for tools that run shell commands (``Bash``, ``shell``, ``TerminalExecute`` …)."""
    by_name = shell_by_name(call.name)
    if by_name is not None:
        return by_name
    # Terminal-like tools of other agents: a name that says so and a command string to run.
    return isinstance(argument(call, "command"), str)


@lru_cache(maxsize=4096)
def shell_by_name(name: str) -> bool | None:
    """Whether a tool of this name runs shell commands; None when its arguments decide
    (a terminal-like name with a ``command`` string)."""
    lowered = name.lower()
    if lowered in SHELL_TOOLS or lowered.endswith(("_shell", "__bash")):
        return True
    return None if "terminal" in lowered or "shell" in lowered else False


def argument(call: ToolCall, path: str) -> Any:
    """The argument at a dot path (``options.force``), or None."""
    value: Any = call.arguments
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def argument_strings(value: Any, prefix: str = "arguments") -> list[tuple[str, str]]:
    """Every string inside arguments with its dot path (numbers and booleans as text)."""
    found: list[tuple[str, str]] = []
    _collect_strings(value, prefix, found)
    return found


def _collect_strings(value: Any, prefix: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, str):
        found.append((prefix, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):  # the usual case, without a call per value
                found.append((f"{prefix}.{key}", item))
            else:
                _collect_strings(item, f"{prefix}.{key}", found)
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            _collect_strings(item, f"{prefix}.{position}", found)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        found.append((prefix, str(value)))


def command_text(call: ToolCall) -> str | None:
    """The shell command a call runs, as one string, or None for non-shell tools."""
    if not is_shell(call):
        return None
    command = _raw_command(call.arguments)
    # Arguments removed before storage (sanitised exports) say nothing about the command.
    if command is None or _REDACTED_ONLY.match(command.strip()):
        return None
    return command


def _raw_command(args: Any) -> str | None:
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        return None
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return _unwrap_shell(value)
    return None


def _unwrap_shell(argv: list[str]) -> str:
    # ["bash", "-lc", "pytest -q"] runs "pytest -q"
    if (
        len(argv) >= 3
        and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
        and argv[1] in ("-c", "-lc", "-ic")
    ):
        return argv[2]
    return shlex.join(argv)


def file_paths(call: ToolCall) -> list[str]:
    """File paths a file tool reads or writes (not paths inside shell commands)."""
    if is_shell(call):
        return []
    found: list[str] = []
    args = call.arguments
    if isinstance(args, dict):
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                found.append(value)
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str) and v)
        for key in ("input", "patch"):
            value = args.get(key)
            if isinstance(value, str) and "*** " in value:
                found.extend(m.strip() for m in _PATCH_PATH.findall(value))
    elif isinstance(args, str) and "*** " in args:
        found.extend(m.strip() for m in _PATCH_PATH.findall(args))
    return found
