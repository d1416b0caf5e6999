"""Which knowledge bases exist: the local, writable one and configured external ones.

The local base is a folder of Markdown notes: ``PROCTOR_KNOWLEDGE_DIR`` when set, else the
``knowledge.dir`` setting, else ``$PROCTOR_HOME/knowledge``. External bases are folders
someone else owns (a team wiki checkout, an Obsidian vault): ``PROCTOR_KNOWLEDGE_EXTERNAL``
(``name=path`` pairs separated by the path separator, ``:`` on Linux and macOS) and the
``knowledge.external`` setting (an object of name → path). Proctor lists and reads them,
and never writes to them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from proctor._util.paths import proctor_home
from proctor.errors import ConfigError, NotFoundError

LOCAL_BASE = "local"
"""The name of the one writable knowledge base."""

DIR_ENV = "PROCTOR_KNOWLEDGE_DIR"
EXTERNAL_ENV = "PROCTOR_KNOWLEDGE_EXTERNAL"
DIR_SETTING = "knowledge.dir"
EXTERNAL_SETTING = "knowledge.external"

_BASE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


class SettingsReader(Protocol):
    """Reads a stored setting (the store does)."""

    def get_setting(self, key: str) -> Any | None:
        """A setting's JSON value, or None when unset."""
        ...


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    """A folder of Markdown notes; only the local one is writable."""

    name: str
    """``local``, or the name an external base was configured under."""
    root: Path
    writable: bool


def _external_from_env(value: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for part in filter(None, value.split(os.pathsep)):
        name, sep, path = part.partition("=")
        if not sep or not path:
            raise ConfigError(
                f"{EXTERNAL_ENV} holds {part!r}; write each external knowledge base as NAME=PATH"
            )
        pairs[name.strip()] = path
    return pairs


def _external_from_setting(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(
            f"the {EXTERNAL_SETTING} setting must map names to folder paths; "
            "set it again with `proctor kb attach NAME PATH`"
        )
    return dict(value)


def check_base_name(name: str) -> str:
    """``name`` when it can name an external base (lower case, digits, ``-``/``_``)."""
    if name == LOCAL_BASE:
        raise ConfigError(f"{LOCAL_BASE!r} is the local knowledge base; pick another name")
    if not _BASE_NAME.match(name):
        raise ConfigError(
            f"{name!r} cannot name a knowledge base: use lower-case letters, digits, - and _"
        )
    return name


def local_root(settings: SettingsReader | None) -> Path:
    """The local knowledge base's folder (it need not exist yet)."""
    configured = os.environ.get(DIR_ENV)
    if not configured and settings is not None:
        stored = settings.get_setting(DIR_SETTING)
        configured = stored if isinstance(stored, str) else None
    if configured:
        return Path(configured).expanduser()
    return proctor_home() / "knowledge"


def knowledge_bases(settings: SettingsReader | None) -> tuple[KnowledgeBase, ...]:
    """The local base first, then every external one by name."""
    external = _external_from_setting(
        settings.get_setting(EXTERNAL_SETTING) if settings is not None else None
    )
    external.update(_external_from_env(os.environ.get(EXTERNAL_ENV, "")))
    bases = [KnowledgeBase(LOCAL_BASE, local_root(settings), writable=True)]
    for name in sorted(external):
        bases.append(KnowledgeBase(check_base_name(name), Path(external[name]).expanduser(), False))
    return tuple(bases)


def find_base(bases: Sequence[KnowledgeBase], name: str) -> KnowledgeBase:
    """The base called ``name``."""
    for base in bases:
        if base.name == name:
            return base
    known = ", ".join(base.name for base in bases)
    raise NotFoundError(f"no knowledge base {name!r}; the configured ones are: {known}")
