"""Real paths of many files in few folders, each folder resolved once.

Planning an import tells files apart by their real path (a file named twice, or through
a symbolic link, is read once). ``Path.resolve()`` walks every component of every path:
on a folder of 2,282 sessions about a tenth of the plan's CPU, twice (the plan's files,
then the Claude Code grouping). Here a file that is not itself a symbolic link is its
folder's real path (resolved once per folder) joined with its name: one ``lstat``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class RealPaths:
    """``path.resolve()`` for each path asked, each folder resolved once per instance
    (an instance lives as long as one plan: a folder renamed later is not seen)."""

    def __init__(self) -> None:
        self._folders: dict[Path, Path] = {}

    def __call__(self, path: Path) -> Path:
        if path.name in ("", ".", ".."):
            return path.resolve()
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):  # missing, unreadable, a NUL in the name
            return path.resolve()
        if stat.S_ISLNK(mode):
            return path.resolve()
        folder = path.parent
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = folder.resolve()
        return real / path.name
