"""Entry names and the paths they map to: nothing a name says can leave its folder.

A name is checked before it touches the file system: NUL and other control characters,
absolute paths, ``~``, Windows drive names (``C:``) and device names (``NUL``, ``COM1``),
backslashes and ``.``/``..`` segments are refused with a sentence. A name that is written
is also *slugged* (``Ledger export`` → ``ledger-export``) and stays flat in the folder; a
name that is read may name a note in a sub-folder (``team/ledger``) of an external base.
After that, the path is resolved and must still lie inside the resolved folder, so a
symbolic link pointing outside is refused too; writes refuse any link at all.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from proctor.knowledge._errors import EntryNameError

ENTRY_SUFFIX = ".md"
"""Every entry is a Markdown file."""

MAX_NAME_CHARS = 80
"""The longest slug Proctor writes."""

_DRIVE = re.compile(r"^[A-Za-z]:")
_NOT_SLUG = re.compile(r"[^\w]+")
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{n}" for n in range(1, 10)}
    | {f"lpt{n}" for n in range(1, 10)}
)


def _refuse(name: str, why: str) -> EntryNameError:
    return EntryNameError(
        f"the entry name {name!r} is refused: {why}; "
        "give a plain name such as `ledger-export` (`proctor kb list` shows the entries)"
    )


def check_entry_name(name: str) -> list[str]:
    """The name's folder segments, or ``EntryNameError`` when it could escape its folder."""
    if not name.strip():
        raise _refuse(name, "it is empty")
    if "\x00" in name:
        raise _refuse(name, "it contains a NUL byte")
    if any(unicodedata.category(char) in {"Cc", "Cs"} for char in name):
        raise _refuse(name, "it contains control characters or broken Unicode")
    if name.startswith(("/", "\\", "~")) or os.path.isabs(name):
        raise _refuse(name, "it is an absolute path")
    if _DRIVE.match(name):
        raise _refuse(name, "it names a Windows drive")
    if "\\" in name:
        raise _refuse(name, "it contains a backslash")
    segments = name.split("/")
    for segment in segments:
        if segment in {"", ".", ".."}:
            raise _refuse(name, "it has an empty, `.` or `..` part")
        if segment.startswith("."):
            raise _refuse(name, "a part starts with a dot")
        stem = segment.split(".")[0].strip().lower()
        if stem in _WINDOWS_DEVICES:
            raise _refuse(name, "it is a Windows device name")
    return segments


def slug_entry_name(name: str) -> str:
    """The flat file stem Proctor writes for ``name`` (``Ledger export`` → ``ledger-export``)."""
    segments = check_entry_name(name)
    if len(segments) > 1:
        raise _refuse(name, "entries Proctor writes cannot be in sub-folders")
    stem = name[: -len(ENTRY_SUFFIX)] if name.lower().endswith(ENTRY_SUFFIX) else name
    slug = _NOT_SLUG.sub("-", unicodedata.normalize("NFKC", stem).lower()).strip("-_")
    slug = slug[:MAX_NAME_CHARS].rstrip("-_")
    if not slug:
        raise _refuse(name, "it has no letters or digits")
    if slug in _WINDOWS_DEVICES:
        raise _refuse(name, "it is a Windows device name")
    return slug


def slug_from_title(title: str) -> str:
    """A slug for a title that was never meant as a path (an entity's name, e.g. a file path)."""
    slug = _NOT_SLUG.sub("-", unicodedata.normalize("NFKC", title).lower()).strip("-_")
    slug = slug[:MAX_NAME_CHARS].rstrip("-_") or "entry"
    return f"{slug}-note" if slug in _WINDOWS_DEVICES else slug


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def readable_path(root: Path, name: str) -> Path:
    """The file an entry name reads inside ``root``; refused when it would lie outside."""
    segments = check_entry_name(name)
    if not segments[-1].lower().endswith(ENTRY_SUFFIX):
        segments[-1] += ENTRY_SUFFIX
    real_root = root.resolve()
    candidate = real_root.joinpath(*segments)
    if not _inside(candidate.resolve(), real_root):
        raise _refuse(name, "it leads outside the knowledge-base folder (a link?)")
    return candidate


def writable_path(root: Path, slug: str) -> Path:
    """The file a slug writes inside ``root``: never through a link, never a folder."""
    if slug_entry_name(slug) != slug:
        raise _refuse(slug, "it is not a slug (lower-case letters, digits and dashes)")
    path = root.resolve() / f"{slug}{ENTRY_SUFFIX}"
    if path.is_symlink():
        raise _refuse(slug, "the entry is a symbolic link, which Proctor never writes through")
    if path.exists() and not path.is_file():
        raise _refuse(slug, "something other than a file has that name")
    return path


def entry_name_of(path: Path, root: Path) -> str:
    """The name under which ``path`` (inside ``root``) is listed: relative, without ``.md``."""
    relative = path.relative_to(root).as_posix()
    return relative[: -len(ENTRY_SUFFIX)]
