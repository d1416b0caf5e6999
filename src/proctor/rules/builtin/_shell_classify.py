"""Classifying shell command lines as read-only, writing or unknown (see ``_shell_effects``).

Each simple command is unwrapped (``sudo``, ``env``, ``timeout``, ``xargs``, ``bash -c``,
``uv run`` …) down to the program that does the work, then judged by a handler for
that program: file programs (``rm``, ``cp``, ``tee``, ``sed -i``), searches, ``find``,
``git``, and the tools in ``_shell_tools``. Redirections to files write, wherever they
appear. A program nobody described is *unknown*.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache

from proctor.rules.builtin import _shell_files, _shell_tools
from proctor.rules.builtin._shell_effects import (
    Change,
    CommandEffects,
    Ctx,
    Handler,
    PathUse,
    has_option,
    is_assignment,
    looks_like_path,
    loose_paths,
    option_values,
    split_args,
)
from proctor.rules.builtin._shell_words import Redirect, SimpleCommand, Word, simple_commands

_DISCARDED = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
_RESERVED = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until",
                       "fi", "done", "esac", "time", "[[", "]]"})  # fmt: skip
_CONTROL = frozenset({"for", "case", "select", "function"})
_NO_EFFECT = frozenset({
    "echo", "printf", "pwd", "whoami", "id", "groups", "date", "uname", "hostname", "printenv",
    "which", "whereis", "type", "true", "false", ":", "sleep", "seq", "yes", "export", "set",
    "unset", "alias", "unalias", "shopt", "history", "jobs", "wait", "read", "exit", "return",
    "shift", "local", "declare", "typeset", "ulimit", "umask", "trap", "hash", "help", "man",
    "info", "tldr", "ps", "uptime", "free", "df", "lsblk", "lscpu", "nproc", "locale", "tput",
    "clear", "basename", "dirname", "getconf", "dig", "nslookup", "host", "ping", "whois",
    "netstat", "ss", "lsof", "ifconfig", "arch", "sw_vers", "expr", "bc", "cal", "nvidia-smi",
    "popd", "dirs", "tty", "logname", "users", "w", "who", "last", "env", "top", "htop",
})  # fmt: skip
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_INTERPRETERS = frozenset({"python", "python3", "py", "node", "deno", "ruby", "perl", "php",
                           "rscript", "java", "lua", "osascript", "pwsh", "powershell"})  # fmt: skip
_WRAPPER_VALUES: dict[str, dict[str, int]] = {
    "sudo": {"-u": 1, "-g": 1, "-C": 1, "-D": 1, "-h": 1, "-p": 1, "-r": 1, "-t": 1},
    "doas": {"-u": 1, "-C": 1},
    "env": {"-u": 1, "-C": 1, "-S": 1, "--unset": 1, "--chdir": 1},
    "nice": {"-n": 1},
    "ionice": {"-c": 1, "-n": 1},
    "timeout": {"-s": 1, "-k": 1, "--signal": 1, "--kill-after": 1},
    "stdbuf": {"-i": 1, "-o": 1, "-e": 1},
    "taskset": {},
    "nohup": {},
    "time": {"-f": 1, "-o": 1},
    "exec": {"-a": 1},
    "builtin": {},
    "caffeinate": {"-t": 1, "-w": 1},
    "chronic": {},
    "unbuffer": {},
    "strace": {"-o": 1, "-e": 1, "-p": 1},
    "watch": {"-n": 1, "-d": 0},
    "xargs": dict.fromkeys(("-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a", "--max-args"), 1),
}
_PROGRAM_ARGUMENTS = {"timeout": 1, "taskset": 1}  # a positional before the wrapped command


def _program_name(word: Word) -> str:
    name = posixpath.basename(word.text.replace("\\", "/")).lower()
    if name.startswith("python") and name[6:].replace(".", "").isdigit():
        return "python"
    return name.removesuffix(".exe")


def run_program(words: list[Word], ctx: Ctx) -> None:
    """Classify one program invocation (``words[0]`` is the program)."""
    while words and (is_assignment(words[0]) or words[0].text in _RESERVED):
        words = words[1:]
    if not words or words[0].text in _CONTROL:
        return
    name = _program_name(words[0])
    args = words[1:]
    if name in _WRAPPER_VALUES:
        _wrapper(name, args, ctx)
        return
    if looks_like_path(words[0].text) and name not in _INTERPRETERS:
        ctx.path(words[0], "read")
    handler = _HANDLERS.get(name)
    if handler is not None:
        handler(name, args, ctx)
    elif name in _NO_EFFECT:
        pass
    else:
        ctx.unknown(f"runs {name}, which may change files")
        loose_paths(args, ctx)


def _wrapper(name: str, args: list[Word], ctx: Ctx) -> None:
    values = _WRAPPER_VALUES[name]
    i = 0
    while i < len(args) and (
        args[i].text.startswith("-") or (name == "env" and is_assignment(args[i]))
    ):
        if name == "xargs" and args[i].text in ("-a", "--arg-file") and i + 1 < len(args):
            ctx.path(args[i + 1], "read")
        i += 1 + values.get(args[i].text, 0)
    i += _PROGRAM_ARGUMENTS.get(name, 0)
    rest = args[i:]
    if rest:
        run_program(rest, ctx)
    elif name == "xargs":
        pass  # xargs alone runs echo
    elif name in ("sudo", "doas", "exec"):
        ctx.unknown(f"runs {name} without a command")


def _shell(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, {"-o": 1, "+o": 1, "-O": 1})
    inline = next((w for w in options if not w.text.startswith("--") and "c" in w.text), None)
    if inline is not None and positionals:
        _nested_line(positionals[0], ctx)
    elif positionals and has_option(options, "-n"):
        ctx.path(positionals[0], "read")  # syntax check only: nothing runs
    elif positionals:
        ctx.path(positionals[0], "read")
        ctx.unknown(f"runs the script {positionals[0].text}")
    else:
        ctx.unknown(f"runs {name} reading commands from input")


def _eval(name: str, args: list[Word], ctx: Ctx) -> None:
    if len(args) == 1:
        _nested_line(args[0], ctx)
    elif args:
        ctx.unknown("evaluates a built command line")


def _nested_line(word: Word, ctx: Ctx) -> None:
    """Classify a command line given as one word (``bash -c '…'``), mapping positions back."""
    inner = command_effects(word.text)
    for change in inner.changes:
        start, end = word.span(change.start, change.end)
        ctx.changes.append(Change(change.verdict, change.reason, start, end))
    for use in inner.paths:
        start, end = word.span(use.start, use.end)
        base = (
            use.base if ctx.base is None or use.base is None else posixpath.join(ctx.base, use.base)
        )
        ctx.paths.append(PathUse(use.text, start, end, use.access, base or ctx.base))


def _interpreter(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, {"-m": 1, "-W": 1, "-X": 1, "-c": 1, "-e": 1,
                                             "--eval": 1, "-r": 1, "--require": 1, "-I": 1})  # fmt: skip
    if args and args[0].text in ("-V", "--version", "-v", "--help", "-h"):
        return
    module = option_values(args, "-m")
    if name in ("python", "py") and module:
        rest = args[args.index(module[0]) :]
        if rest[0].text in _shell_tools.PYTHON_MODULES:
            run_program(rest, ctx)
            return
        ctx.unknown(f"runs the Python module {module[0].text}")
    elif name == "perl" and any(w.text.startswith("-") and "i" in w.text[1:] for w in options):
        ctx.writes("edits files in place (perl -i)")
        scripted = any(w.text == "-e" or w.text.endswith("e") for w in options)
        ctx.paths_in(positionals if scripted else positionals[1:], "write")
        return
    elif any(w.text in ("-c", "-e", "--eval", "-p") for w in options):
        ctx.unknown(f"runs inline {name} code")
    elif positionals:
        ctx.unknown(f"runs the script {positionals[0].text}")
        ctx.path(positionals[0], "read")
        loose_paths(positionals[1:], ctx)
    else:
        ctx.unknown(f"runs {name} reading code from input")


_HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_SHELLS, _shell),
    **dict.fromkeys(_INTERPRETERS, _interpreter),
    "eval": _eval,
    **_shell_files.HANDLERS,
    **_shell_tools.HANDLERS,
}


def _redirect(redirect: Redirect, ctx: Ctx) -> None:
    target = redirect.target
    if target is None or redirect.operator in ("<<", "<<-", "<<<"):
        return
    if redirect.operator in ("<", "<&"):
        if not target.text.isdigit():
            ctx.path(target, "read")
        return
    if redirect.operator == ">&" and (target.text.isdigit() or target.text == "-"):
        return
    if target.text in _DISCARDED or target.text.startswith("/dev/fd/"):
        return
    reason = f"redirects output to {target.text}"
    ctx.changes.append(Change("writes", reason, redirect.start, redirect.end))
    ctx.path(target, "write")


def _command(command: SimpleCommand, base: str | None, into: Ctx) -> str | None:
    ctx = Ctx(command, base, run_program)
    for redirect in command.redirects:
        _redirect(redirect, ctx)
    words = list(command.words)
    run_program(words, ctx)
    into.changes.extend(ctx.changes)
    into.paths.extend(ctx.paths)
    if not words or words[0].text not in ("cd", "pushd"):
        return base
    # Later commands of the same line resolve relative paths against the new folder.
    target = next((w.text for w in words[1:] if not w.text.startswith("-")), "~")
    if target == "-":
        return base
    if base is None or target.startswith(("/", "~", "$HOME", "${HOME}")):
        return target
    return posixpath.join(base, target)


@lru_cache(maxsize=4096)
def command_effects(line: str) -> CommandEffects:
    """What a shell command line writes and which paths it uses (cached by text)."""
    collected = Ctx(SimpleCommand((), (), 0, 0), None, run_program)
    base: str | None = None
    for command in simple_commands(line):
        # What `bash -c '…'` runs is classified from its word (see `_shell`), positions and all.
        if command.origin != "script":
            base = _command(command, base, collected)
    return CommandEffects(tuple(collected.changes), tuple(collected.paths))
