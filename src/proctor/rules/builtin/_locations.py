"""Where a path points: inside the project, a credential store, or a system location.

Paths in transcripts are written every way a shell allows (``~/.aws``, ``$HOME/.ssh``,
``../other-repo``, ``C:\\Users\\me``). ``Places`` resolves them against the
conversation's working folder and the home folder it implies (``/home/dev/…`` →
``/home/dev``), so the permission rules compare like with like. Nothing here touches
the file system: the supervised machine is not this one.

Locations a normal build reads (``/usr``, ``/tmp``, ``/proc``, language installs,
``~/.cache``, ``site-packages``, ``node_modules``…) are *system* locations and never
count as cross-project reads. Credential stores (``~/.ssh``, ``~/.aws``,
``/etc/shadow``…) always count, in any user's home.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Location = Literal["credentials", "system", "other"]

_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")
_HOME_OF = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root|[a-z]:/users/[^/]+)(?=/|$)", re.IGNORECASE)
_HOME_VARIABLE = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)")

# Relative to any home folder (the user's own or another's).
_CREDENTIAL_STORES = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    "Library/Keychains",
)
_SYSTEM_CREDENTIALS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d")
_SYSTEM_KEY = re.compile(r"^/etc/ssh/ssh_host_[^/]*_key$")

_SYSTEM_PREFIXES = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
    "/etc",
    "/tmp",
    "/var/tmp",
    "/var/folders",
    "/var/cache",
    "/private/tmp",
    "/private/var/folders",
    "/proc",
    "/sys",
    "/dev",
    "/nix",
    "/snap",
    "/System",
    "/Library",
    "/Applications",
    "/home/linuxbrew",
    "c:/windows",
    "c:/program files",
    "c:/program files (x86)",
)
# Relative to the home folder: package caches, toolchains and the agents' own instructions.
_HOME_SYSTEM = (
    ".cache",
    ".npm",
    ".nvm",
    ".pyenv",
    ".rustup",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/bin",
    ".local/lib",
    ".local/bin",
    ".local/pipx",
    ".local/share/uv",
    ".local/share/virtualenvs",
    "go/pkg",
    ".m2",
    ".gradle/caches",
    ".virtualenvs",
    ".conda",
    "miniconda3",
    "anaconda3",
    "miniforge3",
    ".deno",
    ".bun",
    ".yarn",
    ".pnpm-store",
    ".volta",
    ".sdkman",
    ".asdf",
    ".gem",
    ".rbenv",
    ".gitconfig",
    ".config/git",
    "Library/Caches",
    ".claude/CLAUDE.md",
    ".claude/skills",
    ".claude/plugins",
    ".claude/commands",
    ".claude/agents",
    ".codex/AGENTS.md",
    ".codex/prompts",
    ".codex/skills",
    ".gemini/GEMINI.md",
)
# The agents' own configuration folders: listing one is not reading another project.
_HOME_SYSTEM_EXACT = (".claude", ".codex", ".gemini")
# Library code inside any folder: reading it is reading dependencies, not another project.
_SYSTEM_SEGMENTS = ("/site-packages/", "/dist-packages/", "/node_modules/", "/.venv/")


def within(path: str, folder: str) -> bool:
    """True when ``path`` is ``folder`` or inside it (both normalised)."""
    if folder == "/":
        return path.startswith("/")
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def home_of(path: str | None) -> str | None:
    """The home folder a normalised path lies in (``/home/dev/p`` → ``/home/dev``)."""
    if not path:
        return None
    match = _HOME_OF.match(path)
    return match.group(1) if match else None


@lru_cache(maxsize=4096)
def normalise(path: str, base: str | None, home: str | None) -> str:
    """An absolute, normalised path where possible.

    ``~`` and ``$HOME`` become ``home`` (or stay ``~`` when the home is unknown);
    relative paths are joined to ``base``; Windows separators become ``/``.
    """
    text = path.strip()
    if _WINDOWS.match(text) or ("\\" in text and "/" not in text):
        text = text.replace("\\", "/")
    if _WINDOWS.match(text):
        text = text[0].lower() + text[1:]  # drive letters: E: is e:
    text = _HOME_VARIABLE.sub(home or "~", text, count=1)
    if not text.startswith(("/", "~")) and not _WINDOWS.match(text) and base:
        text = posixpath.join(base, text)
    normal = posixpath.normpath(text) if text else text
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def display(path: str, home: str | None) -> str:
    """A path as a person would write it: the home folder as ``~``."""
    if home and within(path, home):
        return "~" + path[len(home) :]
    return path


@dataclass(frozen=True, slots=True)
class Places:
    """The folders of one conversation: its project roots and its user's home."""

    roots: tuple[str, ...]
    """The working folder and the policy's project roots, normalised."""
    explicit_roots: tuple[str, ...]
    """Only the roots the policy names (a credential store inside one is intended)."""
    home: str | None

    @classmethod
    def of(cls, cwd: str | None, project_roots: Sequence[str] = ()) -> Places:
        """Places for a conversation working in ``cwd`` with extra policy roots."""
        home = home_of(normalise(cwd, None, None)) if cwd else None
        working = normalise(cwd, None, home) if cwd else None
        if working is not None and not (working.startswith("/") or _WINDOWS.match(working)):
            working = None  # a relative (anonymised) working folder locates nothing
        explicit = tuple(normalise(root, working, home) for root in project_roots)
        roots = ((working,) if working else ()) + explicit
        return cls(roots, explicit, home)

    def resolve(self, path: str, base: str | None = None) -> str:
        """``path`` normalised against ``base`` (default: the working folder)."""
        folder = normalise(base, self.roots[0] if self.roots else None, self.home) if base else None
        return normalise(path, folder or (self.roots[0] if self.roots else None), self.home)

    def inside_project(self, path: str) -> bool:
        """True when the normalised path lies in one of the project roots."""
        return any(within(path, root) for root in self.roots)

    def relative(self, path: str) -> Iterable[str]:
        """The path relative to every root it lies in (for plan globs), then as given."""
        for root in self.roots:
            if within(path, root) and path != root:
                yield path[len(root.rstrip("/")) + 1 :]
            elif path == root:
                yield "."
        yield path

    def show(self, path: str) -> str:
        """Relative to the project root it lies in, else with the home folder as ``~``."""
        for root in self.roots:
            if within(path, root) and path != root:
                return path[len(root.rstrip("/")) + 1 :]
        return display(path, self.home)

    def location(self, path: str) -> Location:
        """What kind of place a normalised path is."""
        if path in _SYSTEM_CREDENTIALS or _SYSTEM_KEY.match(path):
            return "credentials"
        if any(within(path, p) for p in _SYSTEM_CREDENTIALS):
            return "credentials"
        home = home_of(path) or ("~" if path == "~" or path.startswith("~/") else None)
        if home is not None:
            rest = path[len(home) + 1 :]
            if any(rest == store or rest.startswith(store + "/") for store in _CREDENTIAL_STORES):
                return "credentials"
            if home in (self.home, "~") and (
                rest in _HOME_SYSTEM_EXACT
                or any(rest == place or rest.startswith(place + "/") for place in _HOME_SYSTEM)
            ):
                return "system"
        elif path == "/" or any(within(path.lower(), p.lower()) for p in _SYSTEM_PREFIXES):
            return "system"
        if any(segment in path + "/" for segment in _SYSTEM_SEGMENTS):
            return "system"
        return "other"

    def someone_elses_home(self, path: str) -> bool:
        """True for a path in a home folder other than this conversation's user's."""
        home = home_of(path)
        return home is not None and self.home is not None and home != self.home


@lru_cache(maxsize=1024)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif char == "*":
            parts.append("[^/]*")
            i += 1
        elif char == "?":
            parts.append("[^/]")
            i += 1
        elif char == "[":
            close = pattern.find("]", i + 1)
            if close < 0:
                parts.append(re.escape(char))
                i += 1
            else:
                body = pattern[i + 1 : close].replace("\\", "\\\\")
                parts.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = close + 1
        else:
            parts.append(re.escape(char))
            i += 1
    # A folder pattern ("src", "src/**") also covers the folder itself and all below it.
    body = "".join(parts)
    if pattern.endswith("/**"):
        body = body[: -len("/.*")] + "(?:/.*)?"
    elif not any(c in pattern for c in "*?["):
        body = body.rstrip("/") + "(?:/.*)?"
    return re.compile(body + r"\Z", re.IGNORECASE if _WINDOWS.match(pattern) else 0)


def glob_matches(pattern: str, path: str) -> bool:
    """``**`` spans folders, ``*`` and ``?`` stay within one; a plain folder covers its tree."""
    return _glob_regex(pattern if pattern == "/" else pattern.rstrip("/")).match(path) is not None


def path_matches(patterns: Iterable[str], path: str, places: Places) -> bool:
    """True when the path matches a glob, relative to a project root or absolute."""
    candidates = list(places.relative(path))
    for pattern in patterns:
        resolved = (
            normalise(pattern, None, places.home) if pattern.startswith(("~", "$HOME")) else pattern
        )
        if any(glob_matches(resolved, candidate) for candidate in candidates):
            return True
    return False
