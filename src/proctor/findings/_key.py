"""Finding keys: stable across runs, so re-running updates instead of duplicating (SUP-8)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache

from proctor.findings._model import Evidence

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1024)  # rules reuse a handful of titles; measured values vary a few
def normalise_title(title: str) -> str:
    """Lower case, numbers as ``#``, single spaces: measured values do not change the key."""
    return _SPACE.sub(" ", _DIGITS.sub("#", title.lower())).strip()


def finding_key(rule: str, conversation_id: str, evidence: Iterable[Evidence], title: str) -> str:
    """Hash of rule, conversation, cited sources (with their ranges) and normalised title."""
    cited = sorted(
        f"{e.source_type}|{e.source_id}|{e.field or ''}|{e.start}|{e.end}|{e.missing or ''}"
        for e in evidence
    )
    payload = "\n".join([rule, conversation_id, normalise_title(title), *cited])
    return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()
