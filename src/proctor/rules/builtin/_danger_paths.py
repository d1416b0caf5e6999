"""Destructive findings, and how much a recursive delete of a path can destroy.

``rm -rf node_modules`` is housekeeping; ``rm -rf ~`` is a disaster. The difference is
the target, judged from the unexpanded word the agent wrote (the rule never touches
the file system):

- **high**: the file system root, a top-level or system folder (``/etc``, ``/usr``,
  ``/var/lib/…``), a home folder (``~``, ``$HOME``, ``/home/dev``), the current or parent
  folder wholesale (``.``, ``*``, ``..``), the project root itself, a ``.git`` folder;
- **medium**: a folder outside the project (``../other``, ``/home/dev/other``), something
  in the home folder that is not a cache, a path starting with a variable that could be
  empty (``$DIR/`` becomes ``/``);
- **none**: anything inside the project, and anything that is regenerated or scratch
  anywhere (``node_modules``, ``build``, ``dist``, ``target``, ``.venv``, caches, temp
  folders). Deleting inside the project is everyday work and version control keeps it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from proctor.findings import Severity


@dataclass(frozen=True, slots=True)
class Danger:
    """One destructive thing a call does."""

    severity: Severity
    what: str
    """Short, stable description used in the title (``git reset --hard``)."""
    why: str
    """What is lost or risked."""
    text: str
    """The piece of the command or statement that does it (to cite its characters)."""
    until: str = ""
    """When the danger spans several pieces (``curl … | sh``): the last one."""


# fmt: off
# Folders that tools regenerate: deleting them loses nothing that cannot be rebuilt.
REGENERABLE = frozenset({
    "node_modules", "build", "dist", "out", "target", ".venv", "venv", "env", "__pycache__",
    ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", "coverage", "htmlcov",
    ".coverage", ".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache", ".cache",
    ".gradle", ".angular", "tmp", "temp", ".tmp", "obj", "cmake-build-debug",
    "cmake-build-release", ".eggs", "site", "_build", ".docusaurus", "storybook-static",
    "logs",
})
_HOME_CACHES = (
    ".cache",
    ".npm",
    ".gradle/caches",
    ".m2/repository",
    "Library/Caches",
    ".pnpm-store",
)
_SYSTEM_TOP = frozenset({
    "bin", "sbin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
    "run", "srv", "sys", "usr", "var", "snap", "mnt", "media", "System", "Library",
    "Applications", "private", "Volumes",
})
# fmt: on
_HOMES = frozenset({"home", "Users"})
_TEMP_ROOTS = ("/tmp/", "/var/tmp/", "/private/tmp/", "/private/var/folders/", "/var/folders/")
_TEMP_VARIABLES = re.compile(r"^\$\{?(TMPDIR|TMP|TEMP|RUNNER_TEMP)\b")
_HOME_VARIABLE = re.compile(r"^(~|\$HOME\b|\$\{HOME\})")
_OTHER_VARIABLE = re.compile(r"^\"?\$\{?([A-Za-z_][A-Za-z0-9_]*)(:[?][^}]*)?\}?/")
WHOLE_FOLDER = frozenset({".", "./", "*", "./*", ".*", "..", "../", "../*", "./.*"})


def _normalise(word: str) -> str:
    """The path without trailing ``/``, ``/*`` or ``/.`` (``/tmp/*`` empties ``/tmp``)."""
    path = word.strip().strip("\"'")
    while len(path) > 1 and path.endswith(("/*", "/.", "/")):
        path = path[:-2] if path.endswith(("/*", "/.")) else path[:-1]
    return path


def path_danger(
    word: str, cwd: str | None, after_cd: str | None = None
) -> tuple[Severity, str] | None:
    """Severity and a description of deleting ``word`` recursively, or None when harmless.

    ``cwd`` is the conversation's working folder; ``after_cd`` the folder a preceding
    ``cd`` in the same command line moved to (relative words are then inside it).
    """
    if not word or word.startswith("-"):
        return None
    if word in WHOLE_FOLDER:
        if after_cd is not None:
            inner = path_danger(after_cd, cwd)
            return None if inner is None else (inner[0], f"everything in {after_cd}")
        if word.startswith(".."):
            return "high", "the parent folder"
        return "high", "everything in the current folder"
    path = _normalise(word)
    name = posixpath.basename(path)
    if _HOME_VARIABLE.match(path):
        rest = _HOME_VARIABLE.sub("", path, count=1).lstrip("/")
        if not rest:
            return "high", "the home folder"
        if rest.startswith(_HOME_CACHES) or name in REGENERABLE:
            return None
        return "medium", f"{word} in the home folder"
    if _TEMP_VARIABLES.match(path):
        return None
    variable = _OTHER_VARIABLE.match(word)
    if variable and variable.group(1) not in ("PWD",) and not variable.group(2):
        return "medium", f"{word} (an empty ${variable.group(1)} makes it /{word.split('/', 1)[1]})"
    if path.startswith("/"):
        return _absolute_danger(path, name, cwd)
    if name == ".git":
        return "high", "the repository history (.git)"
    if path.startswith(".."):
        return None if name in REGENERABLE else ("medium", f"{word}, outside the project")
    return None


def is_system_path(word: str) -> bool:
    """True for absolute paths in the operating system's folders (``/usr``, ``/etc/x``)."""
    path = _normalise(word)
    return path.startswith("/") and path.strip("/").split("/")[0] in _SYSTEM_TOP


def _absolute_danger(path: str, name: str, cwd: str | None) -> tuple[Severity, str] | None:
    if path == "/":
        return "high", "the whole file system"
    if (path + "/").startswith(_TEMP_ROOTS):
        # A folder inside the temp area is scratch; the temp area itself is shared.
        return ("medium", f"all of {path}") if path + "/" in _TEMP_ROOTS else None
    parts = path.strip("/").split("/")
    if cwd and (path == cwd.rstrip("/") or path.startswith(cwd.rstrip("/") + "/")):
        if path == cwd.rstrip("/"):
            return "high", "the whole project folder"
        return ("high", "the repository history (.git)") if name == ".git" else None
    if len(parts) == 1:
        return "high", f"the top-level folder {path}"
    if parts[0] in _SYSTEM_TOP:
        return "high", f"the system folder {path}"
    if parts[0] in _HOMES and len(parts) == 2:
        return "high", f"the home folder {path}"
    if name == ".git":
        return "high", "the repository history (.git)"
    if name in REGENERABLE:
        return None
    return "medium", f"{path}, outside the project"
