"""What a tool call does to the world: edits files, only inspects, or has other effects.

Several behavioural rules need the same three questions answered for any agent's tools:
did this call change source files (a test run before it no longer proves anything), did it
only look at things (``cat``, ``git status``, ``Read``), and could repeating it do harm
(writes, deploys, sends)? Answers are conservative guesses from tool names and parsed
shell commands; nothing is executed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from proctor.rules._calls import argument, command_text, file_paths, shell_by_name
from proctor.rules.builtin._shell_words import SimpleCommand, simple_commands
from proctor.transcript import ToolCall

# fmt: off
# Tools that change files, by the last segment of their name (MCP tools are `mcp__x__name`).
EDIT_TOOLS = frozenset({
    "write", "edit", "multiedit", "notebookedit", "apply_patch", "applypatch", "write_file",
    "replace", "create_file", "edit_file", "write_to_file", "replace_in_file",
    "search_replace", "str_replace_editor", "str_replace_based_edit_tool", "append_file",
    "insert_text", "edit_notebook", "delete_file", "move_file",
})
_VIEW_COMMANDS = frozenset({"view", "read"})
READ_TOOLS = frozenset({
    "read", "read_file", "read_many_files", "view", "grep", "glob", "ls", "list_directory",
    "list_dir", "search_file_content", "find_files", "notebookread",
})
# Programs that only look at things. `sed`/`awk` only when not editing in place.
_INSPECTION = frozenset({
    "cat", "less", "more", "head", "tail", "ls", "ll", "tree", "find", "fd", "grep", "egrep",
    "rg", "ag", "ack", "sed", "awk", "wc", "pwd", "echo", "printf", "which", "whereis", "type",
    "file", "stat", "du", "df", "env", "printenv", "ps", "jq", "yq", "diff", "cd", "true",
    "false", "sleep", "date", "whoami", "uname", "hostname", "id", "nl", "sort", "uniq", "cut",
    "tr", "column", "basename", "dirname", "realpath", "readlink", "test", "[", "xxd", "od",
    "hexdump", "md5sum", "sha256sum", "shasum", "wait",
})
_GIT_INSPECTION = frozenset({
    "status", "diff", "log", "show", "branch", "blame", "ls-files", "rev-parse", "remote",
})
_GIT_WRITES = frozenset({
    "apply", "am", "checkout", "restore", "reset", "merge", "rebase", "pull", "cherry-pick",
    "revert", "rm", "mv", "switch",
})
_GIT_EFFECTS = _GIT_WRITES | {"push", "commit", "tag", "stash", "clean"}
_WRITING_PROGRAMS = frozenset({"tee", "mv", "cp", "rm", "rmdir", "patch", "truncate", "install"})
# Formatters and fixers rewrite source files.
_FIX_FLAGS = frozenset({"--fix", "--write", "-w", "--in-place", "-i", "--apply"})
_FORMATTERS = frozenset({"black", "isort", "gofmt", "rustfmt", "autopep8", "yapf"})
_EFFECT_PROGRAMS = frozenset({
    "kubectl", "helm", "terraform", "pulumi", "docker", "podman", "aws", "gcloud", "az", "gh",
    "psql", "mysql", "sqlite3", "mongosh", "redis-cli", "scp", "rsync", "ssh", "mail",
    "sendmail", "dd", "mkfs", "chmod", "chown", "systemctl", "service", "kill", "pkill",
    "killall", "pip", "pip3", "npm", "yarn", "pnpm", "apt", "apt-get", "brew",
})
# Verbs in a function tool's name that mean it changes something outside the agent.
_EFFECT_VERBS = frozenset({
    "send", "post", "create", "update", "delete", "remove", "write", "insert", "put", "patch",
    "modify", "cancel", "transfer", "pay", "refund", "book", "reserve", "publish", "deploy",
    "submit", "upload", "move", "rename", "append", "add", "set", "share", "invite",
    "schedule", "exchange", "return", "execute", "merge", "push", "commit",
})
# fmt: on
_SCRIPT_EDITS = re.compile(r"^(format|fmt|fix|lint:fix|format:write)$")
_NETWORK_WRITE = re.compile(
    r"(?:^|\s)(?:-X\s*(?:POST|PUT|PATCH|DELETE)|--request\s+(?:POST|PUT|PATCH|DELETE)"
    r"|-d\b|--data\S*|-F\b|--form\b|-T\b|--upload-file\b)",
    re.IGNORECASE,
)
_TERMINAL_NAME = re.compile(r"terminal|shell|bash|console|cmd|command")
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_NON_CODE = (".md", ".markdown", ".txt", ".log", ".rst", ".adoc", ".png", ".jpg", ".svg", ".gif")
_PROSE_FILES = frozenset({"license", "licence", "changelog", "authors", "notice", "codeowners"})
_SCRATCH = ("/tmp/", "/var/tmp/", "/dev/", "$TMPDIR", "${TMPDIR")


def tool_base_name(call: ToolCall) -> str:
    """Lower-case tool name without an MCP prefix (``mcp__fs__write_file`` → ``write_file``)."""
    return _base_name(call.name)


@lru_cache(maxsize=4096)
def _base_name(name: str) -> str:
    return name.rsplit("__", 1)[-1].lower()


@lru_cache(maxsize=4096)
def _terminal_like(base_name: str) -> bool:
    return _TERMINAL_NAME.search(base_name) is not None


_KEYSTROKE_TOOLS = ("write_stdin", "send_keys", "send_input")


@lru_cache(maxsize=4096)
def _never_a_shell(name: str) -> bool:
    """True when no call of a tool so named runs a command line, whatever its arguments."""
    base = _base_name(name)
    return (
        shell_by_name(name) is False and base not in _KEYSTROKE_TOOLS and not _terminal_like(base)
    )


def shell_text(call: ToolCall) -> str | None:
    """The command line a call runs, including keystrokes sent to an open shell session.

    Besides the shell tools ``command_text`` knows, a tool named like a terminal
    (``TerminalExecute``, ``run_terminal_cmd``, ``mcp__x__shell_exec``) with a string
    ``command``/``cmd`` argument counts: benchmark and MCP tools name them freely.
    """
    if _never_a_shell(call.name):
        return None  # most tools: known from the name alone
    text = command_text(call)
    if text is not None:
        return text
    name = tool_base_name(call)
    if name in _KEYSTROKE_TOOLS:
        chars = argument(call, "chars") or argument(call, "input") or argument(call, "text")
        return chars if isinstance(chars, str) and chars.strip() else None
    if _terminal_like(name):
        for key in ("command", "cmd", "commands", "script"):
            value = argument(call, key)
            if isinstance(value, str) and value.strip():
                return value
    return None


@lru_cache(maxsize=4096)
def plain_tool(name: str) -> bool:
    """True when a tool so named neither runs a command line nor writes files, whatever its
    arguments (``send_email``, ``get_balance``): ``commands_of`` and ``edited_paths`` give
    nothing, ``is_edit_tool`` is false and ``is_inspection`` says whether it reads."""
    return _never_a_shell(name) and _base_name(name) not in EDIT_TOOLS


def commands_of(call: ToolCall) -> Sequence[SimpleCommand]:
    """Parsed simple commands of a shell call (empty for other tools)."""
    text = shell_text(call)
    return simple_commands(text) if text else ()


def is_edit_tool(call: ToolCall) -> bool:
    """True for file-writing tools (``Write``, ``Edit``, ``apply_patch``, ``replace`` …)."""
    name = tool_base_name(call)
    if name not in EDIT_TOOLS:
        return False
    sub_command = argument(call, "command")
    return not (isinstance(sub_command, str) and sub_command.lower() in _VIEW_COMMANDS)


def edited_paths(call: ToolCall, commands: Sequence[SimpleCommand] | None = None) -> list[str]:
    """Source files a call changes (scratch files and docs left out); empty when none."""
    if is_edit_tool(call):
        paths = file_paths(call) or [call.name]
    elif commands or shell_text(call) is not None:
        paths = _shell_written_paths(commands if commands is not None else commands_of(call))
    else:
        return []
    return [p for p in paths if not _is_scratch_or_doc(p)]


def _is_scratch_or_doc(path: str) -> bool:
    """Files whose change cannot alter what a test or build run showed."""
    lowered = path.lower()
    name = lowered.rsplit("/", 1)[-1]
    return (
        lowered.endswith(_NON_CODE)
        or lowered.startswith(_SCRATCH)
        or name.endswith("ignore")  # .gitignore, .dockerignore, .dialyzerignore …
        or name.split(".", 1)[0] in _PROSE_FILES
        or path == "&1"
    )


def _shell_written_paths(commands: Sequence[SimpleCommand]) -> list[str]:
    paths: list[str] = []
    for command in commands:
        paths.extend(r.output_file for r in command.redirects if r.output_file)
        program, args = command.program, command.args
        if program in ("sed", "perl") and any(
            a.startswith(("-i", "-pi", "--in-place")) for a in args
        ):
            paths.extend(a for a in args[1:] if not a.startswith("-"))
        elif program in _WRITING_PROGRAMS and program != "tee":
            operands = [a for a in args if not a.startswith("-")]
            paths.extend(operands[-1:] if program in ("mv", "cp", "install") else operands)
        elif program == "tee":
            paths.extend(a for a in args if not a.startswith("-"))
        elif program == "git" and args and args[0] in _GIT_WRITES:
            paths.append(f"git {args[0]}")
        elif program in _FORMATTERS or (program in ("ruff", "eslint", "prettier", "biome")):
            if program in _FORMATTERS or set(args) & _FIX_FLAGS or "format" in args:
                paths.append(f"{program} (formatter)")
        elif program in ("npm", "yarn", "pnpm", "make", "just") and args:
            script = args[1] if args[0] == "run" and len(args) > 1 else args[0]
            if _SCRIPT_EDITS.match(script):
                paths.append(f"{program} {script}")
    return paths


def is_inspection(call: ToolCall, commands: Sequence[SimpleCommand] | None = None) -> bool:
    """True when a call only reads: file-reading tools or shell commands that change nothing."""
    if tool_base_name(call) in READ_TOOLS:
        return True
    commands = commands if commands is not None else commands_of(call)
    if not commands:
        return False
    for command in commands:
        program = command.program
        if any(r.output_file not in (None, "/dev/null") for r in command.redirects):
            return False
        if program == "git":
            if not command.args or command.args[0] not in _GIT_INSPECTION:
                return False
        elif (
            program not in _INSPECTION
            or (program in ("sed", "perl") and any(a.startswith("-i") for a in command.args))
            or (program == "find" and ("-delete" in command.args or "-exec" in command.args))
        ):
            return False
    return True


def has_side_effects(call: ToolCall, commands: Sequence[SimpleCommand] | None = None) -> bool:
    """True when repeating the call could change something (files, services, messages)."""
    if is_edit_tool(call):
        return True
    commands = commands if commands is not None else commands_of(call)
    if commands:
        if edited_paths(call, commands):
            return True
        for command in commands:
            program = command.program
            if program == "git" and command.args and command.args[0] in _GIT_EFFECTS:
                return True
            if program in _EFFECT_PROGRAMS:
                return True
            if program in ("curl", "wget", "http", "https") and _NETWORK_WRITE.search(command.text):
                return True
        return False
    if tool_base_name(call) in READ_TOOLS:
        return False
    name = call.name.rsplit("__", 1)[-1]
    words = {w.lower() for w in _NAME_WORDS.findall(name)}
    return not words.isdisjoint(_EFFECT_VERBS)
