"""Recognising destructive commands, one program at a time.

Each checker looks at one parsed simple command (``sudo``/``env``/``bash -c`` already
unwrapped) and returns what is dangerous about it. Severity ``high`` means irreversible
loss of data or of the machine (deleting the home folder, ``git reset --hard``, ``DROP
TABLE``, ``mkfs``, ``terraform destroy``); ``medium`` means dangerous but recoverable or
limited (``git branch -D``, ``chmod -R 777``, ``curl … | sh``, turning a firewall off).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from proctor.findings import Severity
from proctor.rules.builtin._danger_paths import Danger, is_system_path, path_danger
from proctor.rules.builtin._danger_text import SQL_CLIENTS, sql_dangers
from proctor.rules.builtin._shell_words import SimpleCommand

Checker = Callable[[SimpleCommand, str | None, str | None], list[Danger]]

_BLOCK_DEVICE = re.compile(r"^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/)")
_SAFE_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def _short_flags(args: tuple[str, ...]) -> set[str]:
    """Single-letter flags, with clusters expanded (``-rf`` → r, f)."""
    flags: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--"):
            flags.update(arg[1:])
    return flags


def _operands(args: tuple[str, ...]) -> list[str]:
    """Arguments that are not options (everything after ``--`` counts)."""
    result: list[str] = []
    options_done = False
    for arg in args:
        if options_done or not arg.startswith("-") or arg == "-":
            result.append(arg)
        elif arg == "--":
            options_done = True
    return result


def _rm(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    flags = _short_flags(command.args)
    if not ({"r", "R"} & flags or "--recursive" in command.args):
        return []
    dangers = []
    for target in _operands(command.args):
        judged = path_danger(target, cwd, after_cd)
        if judged is not None:
            severity, what = judged
            dangers.append(
                Danger(severity, f"rm -r of {what}", "deletes files for good", command.text)
            )
    return dangers


# fmt: off
_FIND_FILTERS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-mtime", "-mmin", "-newer",
    "-size", "-empty", "-user", "-perm", "-wholename", "-type",
})
_KUBE_DATA_KINDS = frozenset({
    "namespace", "namespaces", "ns", "pv", "pvc", "persistentvolume", "persistentvolumes",
    "persistentvolumeclaim", "persistentvolumeclaims", "crd", "crds",
})
_SECURITY_SERVICES = frozenset({"firewalld", "ufw", "apparmor", "auditd", "nftables"})
_WHOLE_TREE = frozenset({".", "./", ":/", "*"})
_WORLD_WRITABLE = re.compile(r"0?777|a\+rwx|ugo\+rwx")
# fmt: on


def _find(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    args = command.args
    deletes = "-delete" in args or any(
        a in ("-exec", "-execdir") and i + 1 < len(args) and args[i + 1].rsplit("/", 1)[-1] == "rm"
        for i, a in enumerate(args)
    )
    if not deletes:
        return []
    first_option = next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))
    dangers = []
    for start in args[:first_option] or (".",):
        judged = path_danger(start, cwd, after_cd)
        # `find . -name '*.pyc' -delete` is targeted; `find . -delete` empties the folder.
        if judged is not None and (start not in (".", "./") or not _FIND_FILTERS & set(args)):
            what = f"find -delete over {judged[1]}"
            dangers.append(Danger(judged[0], what, "deletes files for good", command.text))
    return dangers


def _git(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    args = list(command.args)
    while args and args[0].startswith("-"):  # global options: -C dir, -c key=value
        args = args[2:] if args[0] in ("-C", "-c") else args[1:]
    if not args:
        return []
    sub, rest = args[0], tuple(args[1:])
    flags = _short_flags(rest)
    text = command.text

    def danger(severity: Severity, what: str, why: str) -> list[Danger]:
        return [Danger(severity, what, why, text)]

    if sub == "push":
        if "--force-with-lease" in rest or any(a.startswith("--force-with-lease=") for a in rest):
            return danger("medium", "git push --force-with-lease", "rewrites the remote branch")
        if "--force" in rest or "f" in flags or any(a.startswith("+") for a in rest):
            return danger("high", "git push --force", "overwrites the remote history")
        if "--mirror" in rest:
            return danger("high", "git push --mirror", "overwrites and deletes remote refs")
        if "--delete" in rest or "d" in flags or any(a.startswith(":") for a in _operands(rest)):
            return danger("medium", "git push --delete", "deletes a remote branch")
    elif sub == "reset" and "--hard" in rest:
        return danger("high", "git reset --hard", "discards uncommitted changes")
    elif sub == "clean" and ("f" in flags or "--force" in rest):
        if not ("n" in flags or "--dry-run" in rest):
            return danger("high", "git clean -f", "deletes untracked files for good")
    elif sub in ("checkout", "restore"):
        return _git_discard(sub, rest, flags, text)
    elif sub == "branch" and ("D" in flags or ("--delete" in rest and "--force" in rest)):
        return danger("medium", "git branch -D", "deletes a branch with unmerged commits")
    elif sub == "stash" and rest[:1] in (("drop",), ("clear",)):
        return danger("medium", f"git stash {rest[0]}", "discards stashed changes")
    elif sub in ("filter-branch", "filter-repo"):
        return danger("medium", f"git {sub}", "rewrites the repository history")
    return []


def _git_discard(sub: str, rest: tuple[str, ...], flags: set[str], text: str) -> list[Danger]:
    if sub == "checkout" and ("f" in flags or "--force" in rest):
        return [Danger("high", "git checkout --force", "discards uncommitted changes", text)]
    staged_only = ("--staged" in rest or "S" in flags) and not (
        "--worktree" in rest or "W" in flags
    )
    if sub == "restore" and staged_only:
        return []  # only unstages
    paths = _operands(rest)
    if sub == "checkout" and "--" not in rest:
        # `git checkout main` switches branches; without `--` only `git checkout .` discards.
        paths = [p for p in paths if p in _WHOLE_TREE]
    if any(p in _WHOLE_TREE for p in paths):
        return [Danger("high", f"git {sub} .", "discards every uncommitted change", text)]
    if paths:
        what = f"git {sub} <file>"
        return [Danger("medium", what, "discards uncommitted changes to files", text)]
    return []


def _chmod_chown(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    program, args, text = command.program, command.args, command.text
    recursive = "R" in _short_flags(args) or "--recursive" in args
    operands = _operands(args)
    if len(operands) < 2:
        return []
    mode, targets = operands[0], operands[1:]
    if "/" in targets and (recursive or program == "chown"):
        return [Danger("high", f"{program} -R on /", "breaks the whole system's permissions", text)]
    if program == "chmod" and recursive and _WORLD_WRITABLE.fullmatch(mode):
        return [Danger("medium", "chmod -R 777", "makes files writable by everyone", text)]
    if program == "chown" and recursive and any(is_system_path(t) for t in targets):
        what = "chown -R on a system folder"
        return [Danger("medium", what, "changes the owner of system files", text)]
    return []


def _simple(severity: Severity, what: str, why: str) -> Checker:
    def check(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
        return [Danger(severity, what, why, command.text)]

    return check


def _dd(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    for arg in command.args:
        if arg.startswith("of=/dev/") and arg[3:] not in _SAFE_DEVICES:
            return [Danger("high", "dd onto a device", "overwrites a disk", command.text)]
    return []


_Entry = tuple[tuple[str, ...], tuple[str, ...], Severity, str, str]


def _subcommand(entries: list[_Entry]) -> Checker:
    """A checker for ``program sub …`` forms: the leading operands, then any one option."""

    def check(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
        operands = _operands(command.args)
        for wanted, options, severity, what, why in entries:
            if tuple(operands[: len(wanted)]) == wanted and (
                not options or any(_has_option(command.args, o) for o in options)
            ):
                return [Danger(severity, what, why, command.text)]
        return []

    return check


def _has_option(args: tuple[str, ...], option: str) -> bool:
    if option.startswith("--") or len(option) > 2:
        return any(a == option or a.startswith(option + "=") for a in args)
    return option[1] in _short_flags(args)


def _kubectl(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    operands = _operands(command.args)
    if not operands or operands[0] != "delete":
        return []
    broad = {"--all", "-A", "--all-namespaces"} & set(command.args)
    kind = operands[1].split("/")[0].split(".")[0] if len(operands) > 1 else ""
    if broad or kind in _KUBE_DATA_KINDS:
        return [
            Danger(
                "high",
                "kubectl delete of namespaces, volumes or --all",
                "deletes cluster resources and their data",
                command.text,
            )
        ]
    return [Danger("medium", "kubectl delete", "deletes cluster resources", command.text)]


def _security_off(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    program, args = command.program, command.args
    off = (
        (program == "setenforce" and args[:1] in (("0",), ("Permissive",)))
        or (program == "ufw" and args[:1] == ("disable",))
        or (program in ("iptables", "ip6tables") and ("-F" in args or "--flush" in args))
        or (program == "spctl" and "--master-disable" in args)
        or (program == "csrutil" and args[:1] == ("disable",))
        or (
            program == "systemctl"
            and args[:1] in (("stop",), ("disable",), ("mask",))
            and any(a.split(".")[0] in _SECURITY_SERVICES for a in args[1:])
        )
        or (program.lower() == "set-mppreference" and any("disable" in a.lower() for a in args))
        or (program == "netsh" and "off" in args and "advfirewall" in args)
    )
    if not off:
        return []
    return [Danger("medium", "turning off a security control", "disables protection", command.text)]


_SECURITY_PROGRAMS = (
    "setenforce", "ufw", "iptables", "ip6tables", "spctl", "csrutil", "systemctl", "netsh",
    "Set-MpPreference",
)  # fmt: skip
_DESTROY = "destroys infrastructure"
_VOLUMES = "deletes volumes and their data"
_OBJECTS = "deletes stored objects"
_DB = "drops the database"

CHECKERS: dict[str, Checker] = {
    "rm": _rm,
    "find": _find,
    "git": _git,
    "chmod": _chmod_chown,
    "chown": _chmod_chown,
    "dd": _dd,
    "mkfs": _simple("high", "mkfs", "formats a disk"),
    "wipefs": _simple("high", "wipefs", "erases disk signatures"),
    "dropdb": _simple("high", "dropdb", _DB),
    "kubectl": _kubectl,
    "terraform": _subcommand(
        [
            (("destroy",), (), "high", "terraform destroy", _DESTROY),
            (("apply",), ("-destroy",), "high", "terraform destroy", _DESTROY),
        ]
    ),
    "pulumi": _subcommand([(("destroy",), (), "high", "pulumi destroy", _DESTROY)]),
    "cdk": _subcommand([(("destroy",), (), "high", "cdk destroy", _DESTROY)]),
    "docker": _subcommand(
        [
            (
                ("system", "prune"),
                ("--volumes",),
                "high",
                "docker system prune --volumes",
                _VOLUMES,
            ),
            (("volume", "prune"), (), "high", "docker volume prune", _VOLUMES),
            (("volume", "rm"), (), "high", "docker volume rm", _VOLUMES),
            (("compose", "down"), ("-v", "--volumes"), "high", "docker compose down -v", _VOLUMES),
            (
                ("system", "prune"),
                ("-a", "--all"),
                "medium",
                "docker system prune -a",
                "deletes all images and build caches",
            ),
        ]
    ),
    "aws": _subcommand(
        [
            (("s3", "rm"), ("--recursive",), "high", "aws s3 rm --recursive", _OBJECTS),
            (("s3", "rb"), (), "high", "aws s3 rb", "deletes a bucket"),
        ]
    ),
    "gsutil": _subcommand(
        [
            (("rm",), ("-r", "-R"), "high", "gsutil rm -r", _OBJECTS),
            (("rb",), (), "high", "gsutil rb", "deletes a bucket"),
        ]
    ),
    "prisma": _subcommand(
        [
            (("migrate", "reset"), (), "high", "prisma migrate reset", _DB),
            (("db", "push"), ("--force-reset",), "high", "prisma db push --force-reset", _DB),
        ]
    ),
    **dict.fromkeys(
        ("rails", "rake"),
        _subcommand(
            [
                ((task,), (), "high", f"rails {task}", _DB)
                for task in ("db:drop", "db:reset", "db:purge")
            ]
        ),
    ),
    **dict.fromkeys(_SECURITY_PROGRAMS, _security_off),
}
_RUNNERS = frozenset({"npx", "pnpx", "bunx"})


def command_dangers(command: SimpleCommand, cwd: str | None, after_cd: str | None) -> list[Danger]:
    """What is destructive about one simple command."""
    if command.program in _RUNNERS and len(command.argv) > 1:  # `npx prisma migrate reset`
        command = command.without_program()
    program = command.program
    checker = CHECKERS.get(program) or (CHECKERS["mkfs"] if program.startswith("mkfs.") else None)
    dangers = checker(command, cwd, after_cd) if checker else []
    if program in SQL_CLIENTS:
        dangers += sql_dangers(" ".join((*command.args, command.heredoc)))
    for redirect in command.redirects:
        if redirect.output_file and _BLOCK_DEVICE.match(redirect.output_file):
            dangers.append(
                Danger("high", "writing onto a disk device", "overwrites a disk", command.text)
            )
    return dangers
