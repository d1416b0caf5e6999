"""Where agents keep their session logs on a user's machine."""

from __future__ import annotations

import os
from pathlib import Path


def default_session_folders() -> list[Path]:
    """Session folders of Claude Code and Codex CLI that exist on this machine."""
    home = Path.home()
    claude = Path(os.environ.get("CLAUDE_CONFIG_DIR", home / ".claude")) / "projects"
    codex_home = Path(os.environ.get("CODEX_HOME", home / ".codex"))
    candidates = [claude, codex_home / "sessions", codex_home / "archived_sessions"]
    return [folder for folder in candidates if folder.is_dir()]
