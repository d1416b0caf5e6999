"""Classifying file and text programs: readers, searches, ``sed``/``awk``, ``find``, ``cp``…

``cat``, ``grep`` and ``sed -n`` only read the files they name; ``rm``, ``mv``,
``touch``, ``chmod``, ``tee``, ``dd of=``, ``sed -i`` and ``find -delete`` change them.
Every file word is recorded with how the program uses it, so the permission rules can
check it against the plan and the project roots.
"""

from __future__ import annotations

from proctor.rules.builtin._shell_effects import (
    Access,
    Ctx,
    Handler,
    has_option,
    looks_like_path,
    option_values,
    split_args,
)
from proctor.rules.builtin._shell_words import Word

# Programs whose positional words are files they only read; values: options taking a value.
_READERS: dict[str, dict[str, int]] = {
    name: {} for name in (
        "cat", "tac", "nl", "less", "more", "wc", "file", "rev", "readlink", "realpath", "cmp",
        "comm", "zcat", "zless", "bzcat", "xzcat", "base64", "md5sum", "sha1sum", "sha256sum",
        "sha512sum", "cksum", "b2sum", "test", "[", "ldd", "nm", "objdump", "otool", "tree",
        "ls", "stat", "du", "xxd", "od", "hexdump", "strings", "diff", "column", "fold", "fmt",
        "expand", "paste", "join", "cut", "bat", "source", ".", "open",
    )
}  # fmt: skip
for _name, _values in {
    "head": "-n -c", "tail": "-n -c", "ls": "-I -w --hide --ignore", "tree": "-L -I -P",
    "stat": "-c -f --format", "du": "-d --max-depth", "diff": "-U -x -X", "cut": "-d -f -c -b",
    "column": "-s -t", "fold": "-w", "fmt": "-w", "paste": "-d", "join": "-t -1 -2 -j",
    "strings": "-n", "hexdump": "-n -s", "xxd": "-l -s -c", "od": "-N -j -t", "bat": "-l",
    "shasum": "-a",
}.items():  # fmt: skip
    _READERS[_name] = dict.fromkeys(_values.split(), 1)
_SEARCH_VALUES = ("-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "-j", "-d", "-M", "--glob",
                  "--type", "--include", "--exclude", "--max-count", "--regexp", "--file",
                  "--context", "--max-depth")  # fmt: skip
_SEARCHERS: dict[str, dict[str, int]] = {
    name: dict.fromkeys(_SEARCH_VALUES, 1)
    for name in ("grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "git-grep")
}
_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})


def _reader(name: str, args: list[Word], ctx: Ctx) -> None:
    _, positionals = split_args(args, _READERS[name])
    if name in ("test", "["):
        positionals = [w for w in positionals if looks_like_path(w.text)]
    if name in ("source", "."):
        ctx.unknown(f"runs the script {positionals[0].text}" if positionals else "sources a script")
    ctx.paths_in(positionals, "read")


def _searcher(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, _SEARCHERS[name])
    pattern_given = any(w.text.split("=")[0] in ("-e", "-f", "--regexp", "--file") for w in options)
    ctx.paths_in(positionals if pattern_given else positionals[1:], "read")
    for word in option_values(args, "-f", "--file"):
        ctx.path(word, "read")


def _sed(name: str, args: list[Word], ctx: Ctx) -> None:
    in_place = False
    kept: list[Word] = []
    for i, word in enumerate(args):
        text = word.text
        if text.startswith("--in-place") or (
            text.startswith("-") and not text.startswith("--") and "i" in text.split(".")[0][1:]
        ):
            in_place = True
        if text == "" and i > 0 and args[i - 1].text == "-i":
            continue  # BSD sed: -i '' (no backup suffix)
        kept.append(word)
    options, positionals = split_args(kept, {"-e": 1, "-f": 1, "-l": 1, "--expression": 1})
    scripted = any(w.text in ("-e", "-f", "--expression") for w in options)
    files = positionals if scripted else positionals[1:]
    if in_place:
        ctx.writes(f"edits files in place ({name} -i)")
    ctx.paths_in(files, "write" if in_place else "read")


def _awk(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, {"-F": 1, "-v": 1, "-f": 1, "-i": 1})
    if any(w.text == "-i" for w in options) and "inplace" in {w.text for w in args}:
        ctx.writes(f"edits files in place ({name} -i inplace)")
    program_file = any(w.text == "-f" for w in options)
    program = "" if program_file or not positionals else positionals[0].text
    if "system(" in program or '| "' in program or "print >" in program or "printf >" in program:
        ctx.unknown(f"runs an {name} program that writes or runs commands")
    ctx.paths_in(positionals if program_file else positionals[1:], "read")


def _find(name: str, args: list[Word], ctx: Ctx) -> None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text.startswith("-O")):
        i += 1
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", "\\(")):
        ctx.path(args[i], "read")
        i += 1
    while i < len(args):
        text = args[i].text
        if text == "-delete":
            ctx.writes("deletes files (find -delete)")
        elif text in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            ctx.writes(f"writes a file (find {text})")
            ctx.path(args[i + 1], "write")
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next(
                (k for k in range(i + 1, len(args)) if args[k].text in (";", "+")), len(args)
            )
            nested = Ctx(ctx.command, ctx.base, ctx.run)
            ctx.run(args[i + 1 : end], nested)
            if nested.changes:
                (ctx.writes if nested.changes[0].verdict == "writes" else ctx.unknown)(
                    f"runs a command on each file found ({text} {nested.changes[0].reason})"
                )
            ctx.paths.extend(nested.paths)
            i = end
        i += 1


def _files(access: Access, reason: str) -> Handler:
    def handle(name: str, args: list[Word], ctx: Ctx) -> None:
        _, positionals = split_args(args, {"-m": 1, "--mode": 1, "-s": 1, "--size": 1})
        if name in ("chmod", "chown", "chgrp") and not any(
            w.text.startswith("--reference") for w in args
        ):
            positionals = positionals[1:]
        ctx.writes(f"{reason} ({name})")
        ctx.paths_in(positionals, access)

    return handle


def _copy(name: str, args: list[Word], ctx: Ctx) -> None:
    values = {
        "-t": 1,
        "--target-directory": 1,
        "-S": 1,
        "--suffix": 1,
        "-m": 1,
        "-o": 1,
        "-g": 1,
        "-e": 1,
    }
    options, positionals = split_args(args, values)
    targets = option_values(args, "-t", "--target-directory")
    if name == "install" and has_option(options, "-d"):
        ctx.writes("creates folders (install -d)")
        ctx.paths_in(positionals, "modify")
        return
    if not targets and positionals:
        targets, positionals = positionals[-1:], positionals[:-1]
    remote = [w for w in targets if ":" in w.text.split("/")[0]]
    verb = {"mv": "moves files", "ln": "creates links"}.get(name, "copies files")
    ctx.writes(f"{verb} ({name})" if not remote else f"copies files to another machine ({name})")
    source_access: Access = "delete" if name == "mv" else "read"
    ctx.paths_in([w for w in positionals if ":" not in w.text.split("/")[0]], source_access)
    ctx.paths_in([w for w in targets if w not in remote], "write")


def _tee(name: str, args: list[Word], ctx: Ctx) -> None:
    _, positionals = split_args(args)
    if positionals:
        ctx.writes("writes files (tee)")
        ctx.paths_in(positionals, "write")


def _dd(name: str, args: list[Word], ctx: Ctx) -> None:
    for word in args:
        if word.text.startswith("if="):
            ctx.path(word, "read", 3)
        elif word.text.startswith("of="):
            ctx.writes("writes a file (dd of=)")
            ctx.path(word, "write", 3)


def _cd(name: str, args: list[Word], ctx: Ctx) -> None:
    _, positionals = split_args(args)
    if positionals and positionals[0].text != "-":
        ctx.path(positionals[0], "read")


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_READERS, _reader),
    **dict.fromkeys(_SEARCHERS, _searcher),
    **{name: _files("delete", "deletes files") for name in _DELETERS},
    "mkdir": _files("modify", "creates folders"),
    "touch": _files("write", "creates files"),
    "truncate": _files("write", "truncates files"),
    "chmod": _files("modify", "changes permissions"),
    "chown": _files("modify", "changes owners"),
    "chgrp": _files("modify", "changes owners"),
    "mkfifo": _files("write", "creates files"),
    **dict.fromkeys(("cp", "mv", "ln", "install", "rsync", "scp"), _copy),
    "tee": _tee,
    "sponge": _tee,
    "dd": _dd,
    **dict.fromkeys(("sed", "gsed"), _sed),
    **dict.fromkeys(("awk", "gawk", "mawk"), _awk),
    "find": _find,
    "cd": _cd,
    "pushd": _cd,
}
