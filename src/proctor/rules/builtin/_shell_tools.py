"""Classifying developer tools by subcommand: git, package managers, test runners, network.

``git status`` reads and ``git push`` writes; ``npm ls`` reads and ``npm install``
writes; ``pytest`` and ``mypy`` only read the project (their caches are not the
project's files); ``curl`` reads unless it saves a file or sends data (``-o``, ``-d``,
``-F``, ``-X POST``). Subcommands not listed are *unknown*, never silently read-only.
"""

from __future__ import annotations

from proctor.rules.builtin._shell_effects import (
    Ctx,
    Handler,
    has_option,
    looks_like_path,
    loose_paths,
    option_values,
    split_args,
)
from proctor.rules.builtin._shell_words import Word

PYTHON_MODULES = frozenset({"pytest", "pip", "mypy", "unittest", "json.tool", "venv", "ruff",
                            "black", "isort", "flake8", "pylint", "pyright", "uv"})  # fmt: skip

_GIT_READ = frozenset({
    "status", "log", "diff", "show", "blame", "annotate", "grep", "ls-files", "ls-tree",
    "ls-remote", "rev-parse", "rev-list", "describe", "shortlog", "cat-file", "show-ref",
    "for-each-ref", "whatchanged", "merge-base", "name-rev", "check-ignore", "check-attr",
    "count-objects", "var", "help", "version", "cherry", "range-diff", "verify-commit",
    "verify-tag", "show-branch", "fsck", "difftool",
})  # fmt: skip
_GIT_BRANCH_WRITES = frozenset({"-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy",
                                "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream",
                                "--edit-description"})  # fmt: skip
_GIT_SUBLISTS = {"stash": ("list", "show"), "worktree": ("list",), "submodule": ("status", "summary"),
                 "notes": ("list", "show"), "reflog": ("show",), "lfs": ("ls-files", "status", "env"),
                 "remote": ("show", "get-url"), "config": ("get", "list")}  # fmt: skip


def _git_reads(sub: str, options: list[Word], positionals: list[Word]) -> bool:
    flags = {w.text.split("=")[0] for w in options}
    first = positionals[0].text if positionals else None
    if sub in _GIT_READ:
        return True
    if sub == "branch":
        return not flags & _GIT_BRANCH_WRITES and (
            not positionals or bool(flags & {"-l", "--list"})
        )
    if sub == "tag":
        return "-d" not in flags and (
            not positionals or bool(flags & {"-l", "--list", "-v", "--verify"})
        )
    if sub == "config" and flags & {"--get", "--get-all", "--get-regexp", "--list", "-l"}:
        return True
    if sub == "config" and len(positionals) == 1 and not flags & {"--unset", "--unset-all"}:
        return True
    if sub in ("remote", "reflog") and not positionals:
        return True
    return first in _GIT_SUBLISTS.get(sub, ())


def _git(name: str, args: list[Word], ctx: Ctx) -> None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text == "-C" and i + 1 < len(args):
            ctx.path(args[i + 1], "read")
        i += 1 + (
            1 if args[i].text in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 0
        )
    if i >= len(args):
        return
    sub, rest = args[i].text, args[i + 1 :]
    marker = next((k for k, w in enumerate(rest) if w.text == "--"), len(rest))
    options, positionals = split_args(rest[:marker])
    reads = _git_reads(sub, options, positionals)
    if not reads:
        ctx.writes(f"changes the repository (git {sub})")
    # Refs contain "/" too (origin/main), so only unmistakable paths and those after "--".
    paths = [w for w in positionals if looks_like_path(w.text)] + rest[marker + 1 :]
    ctx.paths_in(paths, "read" if reads else "modify")


_INSTALL = frozenset({"install", "i", "add", "remove", "rm", "uninstall", "un", "purge", "upgrade",
                      "update", "up", "reinstall", "autoremove", "link", "unlink", "tap", "ci",
                      "sync", "lock", "publish", "init", "new", "dedupe", "prune", "pack",
                      "download", "wheel", "create", "fix", "build", "get", "tidy", "fmt", "clean",
                      "-S", "-R", "-Syu", "-U"})  # fmt: skip
_PACKAGE_READS = frozenset({"list", "ls", "search", "show", "info", "view", "outdated", "why",
                            "explain", "freeze", "check", "version", "--version", "-v", "-V",
                            "help", "--help", "which", "doctor", "root", "bin", "prefix", "tree",
                            "metadata", "env", "vet", "test", "audit", "debug", "-Q", "-Ss",
                            "config", "clippy"})  # fmt: skip
_RUNS_NESTED = frozenset({"run", "exec", "dlx", "x"})


def _package_manager(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, {"-p": 1, "--prefix": 1, "-C": 1, "--cwd": 1})
    if not positionals:
        if name == "yarn" and not options:
            ctx.writes("installs packages (yarn)")
        elif not options or not any(w.text in _PACKAGE_READS for w in options):
            ctx.unknown(f"runs {name}")
        return
    sub = positionals[0].text
    if name in ("uv", "pipx") and sub == "pip" and len(positionals) > 1:
        sub = positionals[1].text
    if sub in _RUNS_NESTED and name in (
        "uv",
        "poetry",
        "pipenv",
        "pdm",
        "hatch",
        "pnpm",
        "bun",
        "conda",
    ):
        nested = positionals[1:]
        if nested:
            ctx.run(nested, ctx)
            return
    if sub in _INSTALL or (sub == "audit" and has_option(options, "--fix")):
        ctx.writes(f"installs or changes packages ({name} {sub})")
    elif sub in _PACKAGE_READS:
        pass
    else:
        ctx.unknown(f"runs {name} {' '.join(w.text for w in positionals[:2])}")


def _runner(name: str, args: list[Word], ctx: Ctx) -> None:
    """``npx vitest`` runs ``vitest``."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in ("-p", "--package") else 1
    if i < len(args):
        ctx.run(args[i:], ctx)


_CHECK_WRITES: dict[str, tuple[str, ...]] = {
    "pytest": ("--snapshot-update",),
    "vitest": ("-u", "--update"),
    "jest": ("-u", "--updateSnapshot"),
    "eslint": ("--fix",),
    "ruff": ("--fix",),
    "prettier": ("--write", "-w"),
    "cargo": ("--fix",),
}


def _check(name: str, args: list[Word], ctx: Ctx) -> None:
    options, positionals = split_args(args, {"-k": 1, "-m": 1, "-c": 1, "-p": 1, "--config": 1})
    flags = {w.text.split("=")[0] for w in options}
    if flags & set(_CHECK_WRITES.get(name, ())):
        ctx.writes(f"rewrites files ({name} {sorted(flags & set(_CHECK_WRITES[name]))[0]})")
    elif name in ("black", "isort") and not flags & {"--check", "--diff"}:
        ctx.writes(f"reformats files ({name})")
    elif (
        name == "ruff"
        and positionals[:1]
        and positionals[0].text == "format"
        and not flags & {"--check", "--diff"}
    ):
        ctx.writes("reformats files (ruff format)")
    elif name == "tsc" and not flags & {"--noEmit", "--version", "-v", "--help", "--showConfig"}:
        ctx.unknown("compiles TypeScript, which may write output files")
    elif name in ("go", "cargo"):
        _package_manager(name, args, ctx)
        return
    loose_paths(positionals, ctx)


_DATA_OPTIONS = frozenset({"-d", "--data", "--data-binary", "--data-raw", "--data-urlencode",
                           "--json", "-F", "--form", "--form-string", "-T", "--upload-file"})  # fmt: skip


def _curl(name: str, args: list[Word], ctx: Ctx) -> None:
    for i, word in enumerate(args[:-1]):
        option, value = word.text, args[i + 1]
        if option in ("-X", "--request") and value.text.upper() in (
            "POST",
            "PUT",
            "PATCH",
            "DELETE",
        ):
            ctx.writes(f"sends a {value.text.upper()} request (curl)")
        elif option in _DATA_OPTIONS:
            ctx.writes(f"sends data to a server (curl {option})")
            _curl_file(option, value, ctx)
        elif option in ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header"):
            if value.text != "-":
                ctx.writes(f"saves a download to a file (curl {option})")
                ctx.path(value, "write")
        elif option in ("-K", "--config", "--cacert", "--cert", "--key"):
            ctx.path(value, "read")
    if any(w.text in ("-O", "--remote-name", "--remote-name-all") for w in args):
        ctx.writes("saves a download to a file (curl -O)")


def _curl_file(option: str, value: Word, ctx: Ctx) -> None:
    """``-d @file``, ``-F name=@file;type=…``, ``-F name=<file``, ``-T file``."""
    text = value.text
    if option in ("-T", "--upload-file"):
        ctx.path(value, "read")
    elif text.startswith("@"):
        ctx.path(value, "read", 1)
    elif option in ("-F", "--form"):
        for marker in ("=@", "=<"):
            at = text.find(marker)
            if at >= 0:
                end = text.find(";", at)
                file_value = Word(text[: end if end >= 0 else len(text)], value.start, value.end,
                                  value.positions[: end if end >= 0 else len(text)])  # fmt: skip
                ctx.path(file_value, "read", at + 2)
                return


def _wget(name: str, args: list[Word], ctx: Ctx) -> None:
    texts = [w.text for w in args]
    to_stdout = any(t in ("-O-", "-qO-", "--spider") for t in texts) or any(
        t in ("-O", "--output-document") and i + 1 < len(texts) and texts[i + 1] == "-"
        for i, t in enumerate(texts)
    )
    if any(t.startswith(("--post-data", "--post-file", "--method")) for t in texts):
        ctx.writes("sends data to a server (wget)")
    elif not to_stdout:
        ctx.writes("saves a download to a file (wget)")
    for word in option_values(args, "-O", "--output-document"):
        if word.text != "-":
            ctx.path(word, "write")


_SERVICE_READS = frozenset({"ps", "images", "inspect", "logs", "version", "info", "stats", "top",
                            "port", "history", "diff", "search", "get", "describe", "explain",
                            "api-resources", "status", "list", "list-units", "show", "is-active",
                            "is-enabled", "cat", "plan", "validate", "output", "template", "view",
                            "checks", "ls", "whoami", "config", "--version"})  # fmt: skip
_CLOUD_READ_PREFIXES = ("describe", "list", "get", "show", "ls", "head", "wait", "lookup", "whoami",
                        "view", "checks", "diff", "status", "search")  # fmt: skip


def _service(name: str, args: list[Word], ctx: Ctx) -> None:
    """docker, kubectl, systemctl, gh, aws …: the first verb-like word decides."""
    _, positionals = split_args(args, {"-n": 1, "--namespace": 1, "--context": 1, "-R": 1,
                                       "--repo": 1, "--profile": 1, "--region": 1, "-f": 1})  # fmt: skip
    words = [w.text for w in positionals]
    if name == "gh" and words[:1] == ["api"]:
        sends = any(
            w.text in ("-X", "--method", "-f", "-F", "--field", "--raw-field", "--input")
            for w in args
        )
        if sends:
            ctx.writes("sends data to GitHub (gh api)")
        return
    for word in words[:3]:
        if word in _SERVICE_READS or word.startswith(_CLOUD_READ_PREFIXES):
            return
    verb = " ".join(words[:2]) if words else ""
    if name in ("aws", "gcloud", "az") and not verb:
        ctx.unknown(f"runs {name}")
        return
    kind = "services" if name in ("systemctl", "service", "launchctl") else "resources"
    ctx.writes(f"changes {kind} ({name} {verb})" if verb else f"changes {kind} ({name})")


def _archive(name: str, args: list[Word], ctx: Ctx) -> None:
    texts = [w.text for w in args]
    first = texts[0].lstrip("-") if texts else ""
    if name == "tar" and ("t" in first or "--list" in texts):
        return
    if name in ("unzip",) and any(t in ("-l", "-t", "-Z", "-v") for t in texts):
        return
    if name in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd") and any(
        t in ("-c", "-l", "-t", "--stdout", "--list", "--test") for t in texts
    ):
        return
    ctx.writes(f"creates or extracts files ({name})")
    loose_paths(args, ctx, "write")


def _processes(name: str, args: list[Word], ctx: Ctx) -> None:
    if name == "crontab" and any(w.text == "-l" for w in args):
        return
    if name == "kill" and any(w.text in ("-l", "-L") for w in args):
        return
    ctx.writes(f"changes running processes or schedules ({name})")


def _patch(name: str, args: list[Word], ctx: Ctx) -> None:
    _, positionals = split_args(args, {"-i": 1, "-p": 1, "-d": 1, "-o": 1})
    ctx.writes(f"patches files ({name})")
    ctx.paths_in(positionals[:1], "write")
    for word in option_values(args, "-i", "--input"):
        ctx.path(word, "read")


_PACKAGE_MANAGERS = ("pip", "pip3", "uv", "poetry", "pipenv", "pdm", "hatch", "npm", "pnpm", "yarn",
                     "bun", "apt", "apt-get", "yum", "dnf", "apk", "pacman", "zypper", "brew",
                     "port", "snap", "choco", "winget", "gem", "conda", "mamba", "micromamba",
                     "pipx", "composer", "bundle", "rustup")  # fmt: skip
_CHECKERS = ("pytest", "py.test", "mypy", "pyright", "flake8", "pylint", "vitest", "jest", "mocha",
             "tsc", "eslint", "ruff", "black", "isort", "prettier", "go", "cargo", "unittest",
             "rspec", "phpunit")  # fmt: skip
_SERVICES = ("docker", "podman", "kubectl", "helm", "oc", "systemctl", "service", "launchctl",
             "terraform", "gh", "aws", "gcloud", "az")  # fmt: skip
_ARCHIVERS = ("tar", "zip", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd",
              "7z", "split", "csplit", "mktemp")  # fmt: skip
_PROCESS_TOOLS = ("kill", "pkill", "killall", "crontab", "shutdown", "reboot")


def _json_tool(name: str, args: list[Word], ctx: Ctx) -> None:
    ctx.paths_in(split_args(args)[1], "read")


def _venv(name: str, args: list[Word], ctx: Ctx) -> None:
    ctx.writes("creates a virtual environment (python -m venv)")


HANDLERS: dict[str, Handler] = {
    "git": _git,
    **dict.fromkeys(_PACKAGE_MANAGERS, _package_manager),
    **dict.fromkeys(("npx", "pnpx", "bunx"), _runner),
    **dict.fromkeys(_CHECKERS, _check),
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(_SERVICES, _service),
    **dict.fromkeys(_ARCHIVERS, _archive),
    **dict.fromkeys(_PROCESS_TOOLS, _processes),
    "patch": _patch,
    "json.tool": _json_tool,
    "venv": _venv,
}
