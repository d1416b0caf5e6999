"""Handing a draft to the conversation's sink.

Every conversation Proctor knows today was imported from an agent's files, and Proctor
cannot type into another program's session. So the sink of an imported conversation is
a ready-to-paste prompt file under ``$PROCTOR_HOME/prompts`` (or a file the person
names on the command line); the API also returns the text itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from proctor._util.clock import utcnow
from proctor._util.paths import proctor_home
from proctor.discussion._draft import check_edited_draft
from proctor.errors import ConfigError


def prompts_folder() -> Path:
    """Where prompt files go: ``$PROCTOR_HOME/prompts``."""
    return proctor_home() / "prompts"


def write_prompt_file(text: str, result_id: str, out: Path | None = None) -> Path:
    """Write a draft as a new prompt file (never over an existing one) and return its path."""
    draft = check_edited_draft(text) + "\n"
    if out is not None:
        try:
            with open(out, "x", encoding="utf-8") as handle:
                handle.write(draft)
        except FileExistsError:
            raise ConfigError(f"{out} already exists; name a new file with --out") from None
        except OSError as exc:
            raise ConfigError(f"cannot write {out}: {exc.strerror}; name another file") from None
        return out
    folder = prompts_folder()
    folder.mkdir(parents=True, exist_ok=True)
    safe_id = re.sub(r"[^A-Za-z0-9-]", "", result_id[:12]) or "result"
    stem = f"continue-{safe_id}-{utcnow():%Y%m%dT%H%M%SZ}"
    for attempt in range(1, 1000):
        path = folder / (f"{stem}.md" if attempt == 1 else f"{stem}-{attempt}.md")
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(draft)
        return path
    raise ConfigError(f"too many prompt files named {stem}*.md in {folder}; clear some out")
