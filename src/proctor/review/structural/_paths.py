"""The exact locator of a file: what makes two mentions of a path the same file entity.

A file entity's identity (REV-3) is its normalised path, relative to the conversation's
working folder when it lies inside it, so ``/home/dev/app/src/x.py`` read with ``Read``
and ``src/x.py`` edited by ``apply_patch`` in ``/home/dev/app`` are one file. A path
whose text is not the path itself (a variable, a glob, a substitution) has no identity:
guessing one would merge or split files by accident.
"""

from __future__ import annotations

import posixpath
import re

from proctor.rules.builtin import home_of, normalise, within

_HOME_PREFIX = re.compile(r"^(?:~|\$HOME|\$\{HOME\})(?=/|$)")
_INEXACT = re.compile(r"[*?`]|\$|\{|\}|<\(|\n")
"""Globs, variables, substitutions, braces: the text is not one path."""


def file_identity(path: str, *, base: str | None, cwd: str | None) -> str | None:
    """The identity key of the file ``path`` names, or None when the text is not exact.

    Args:
        path: The path as written (absolute, ``~``-relative or relative).
        base: The folder a relative ``path`` is relative to when not ``cwd`` (a shell
            ``workdir``, a ``cd`` earlier in the line); itself relative to ``cwd`` or absolute.
        cwd: The conversation's working folder, when known.

    Returns:
        The normalised path relative to ``cwd`` when inside it, else the normalised
        absolute (or, without any folder known, normalised relative) path.
    """
    text = path.strip()
    if not text or _INEXACT.search(_HOME_PREFIX.sub("~", text)):
        return None
    root = _folder(cwd, None)
    home = home_of(root)
    folder = _folder(base, root) if base else root
    absolute = normalise(text, folder, home)
    if root and within(absolute, root):
        relative = absolute[len(root) :].lstrip("/")
        return relative or "."
    return absolute


def _folder(folder: str | None, root: str | None) -> str | None:
    if not folder:
        return None
    return normalise(folder, root, home_of(root))


def file_description(identity: str, cwd: str | None) -> str:
    """``File src/x.py under /home/dev/app``: a relative identity says relative to what."""
    if cwd and not identity.startswith(("/", "~")):
        return f"File {identity} under {cwd}"
    return f"File {identity}"


def looks_like_file(path: str) -> bool:
    """True when the last segment has a suffix (``tests/test_x.py``), i.e. names a file.

    Test commands name folders and files alike; only a file is worth a ``tests`` relation.
    """
    name = posixpath.basename(path.rstrip("/"))
    stem, dot, suffix = name.rpartition(".")
    return bool(dot and stem and suffix and suffix.isalnum())
