"""Suggestion candidates from one result's changes (HB-5): rules, fingerprints, the cap.

Four kinds, each from objects the result itself published (``Store.result_changes``):

* ``open_item``     an open item the result opened or kept open;
* ``disagreement``  a ``contrasts`` relation with no ``supersedes`` between its entities;
* ``convention``    an automatic entity supported by ≥ ``MIN_SOURCES`` distinct sources;
* ``revision``      a ``revised`` entity change the result recorded.

A candidate's fingerprint is a hash of (kind, object type, object id) — or of its
normalised title when an object has no id — so the same object gives the same suggestion
on every run. Its evidence key hashes the sorted (source type, id, content hash) list, so
a new source or an edited one gives a new key and nothing else does.

Order, then the cap of ``MAX_CANDIDATES``: open items first (they ask for work), then
disagreements, revisions, conventions; within a kind the better supported first (more
distinct sources), then the most recent, then the fingerprint (stable ties).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from proctor._util.text import one_line
from proctor.store import ChangedObject, EvidenceRef, ResultChanges, SuggestionKind

MAX_CANDIDATES = 20
"""At most this many candidates per run: one phrasing call stays bounded (HB-4)."""
MIN_SOURCES = 3
"""An automatic entity needs this many distinct original sources to read as a convention."""
RULE_VERSION = 1
"""Version of the candidate rules and their texts."""
_DETAIL_CHARS = 240
_KIND_ORDER: dict[SuggestionKind, int] = {
    "open_item": 0,
    "disagreement": 1,
    "revision": 2,
    "convention": 3,
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A suggestion before phrasing: what it is about, its rule text and evidence."""

    kind: SuggestionKind
    object_type: str | None
    object_id: str | None
    project_id: str | None
    title: str
    rule_text: str
    evidence: tuple[EvidenceRef, ...]
    fingerprint: str
    evidence_key: str
    sort_at: float
    """When the object last changed (POSIX seconds), for the order."""


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()


def normalised(text: str) -> str:
    """Lower case, single spaces, no punctuation: the same words give the same text."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def fingerprint(kind: str, object_type: str | None, object_id: str | None, text: str = "") -> str:
    """The identity of a suggestion across runs: its object, or its normalised text."""
    if object_type is not None and object_id is not None:
        return _digest("v1", kind, object_type, object_id)
    return _digest("v1", kind, "text", normalised(text))


def evidence_key(evidence: Iterable[EvidenceRef]) -> str:
    """A hash of the sorted evidence: changes with a new or edited source only."""
    lines = sorted(f"{e.source_type}\x1e{e.source_id}\x1e{e.content_hash or ''}" for e in evidence)
    return _digest("v1", *lines)


def _clip(text: str, limit: int = _DETAIL_CHARS) -> str:
    return one_line(text, limit, trim=True)


def _sentence(text: str) -> str:
    text = _clip(text)
    return text.rstrip(". ")


def _open_item(item: ChangedObject) -> tuple[str, str]:
    detail = f" — {_sentence(item.detail)}" if item.detail.strip() else ""
    return item.title, f"Open: {_sentence(item.title)}{detail}; consider a task to fix it."


def _disagreement(relation: ChangedObject) -> tuple[str, str]:
    reason = f" — {_sentence(relation.detail)}" if relation.detail.strip() else ""
    return (
        f"Disagreement: {relation.title}",
        f"Disagreement: {_sentence(relation.title)}{reason}; decide which one holds.",
    )


def _convention(entity: ChangedObject) -> tuple[str, str]:
    kind = f" ({entity.entity_kind})" if entity.entity_kind else ""
    about = f" — {_sentence(entity.detail)}" if entity.detail.strip() else ""
    return (
        f"Convention: {entity.title}",
        f"Convention: {_sentence(entity.title)}{kind} recurs in {len(entity.evidence)} "
        f"sources{about}; confirm it to remember it.",
    )


def _revision(change: ChangedObject) -> tuple[str, str]:
    return (
        f"Revised: {change.title}",
        f"Revised: {_sentence(change.title)} — {_sentence(change.detail)}; "
        "check that the change is intended.",
    )


_RULES = {
    "open_item": _open_item,
    "disagreement": _disagreement,
    "convention": _convention,
    "revision": _revision,
}


def _candidate(kind: SuggestionKind, changed: ChangedObject) -> Candidate:
    title, rule_text = _RULES[kind](changed)
    return Candidate(
        kind=kind,
        object_type=changed.object_type,
        object_id=changed.object_id,
        project_id=changed.project_id,
        title=_clip(title, 200),
        rule_text=rule_text,
        evidence=changed.evidence,
        fingerprint=fingerprint(kind, changed.object_type, changed.object_id, title),
        evidence_key=evidence_key(changed.evidence),
        sort_at=changed.at.timestamp(),
    )


def candidates(changes: ResultChanges, limit: int = MAX_CANDIDATES) -> list[Candidate]:
    """The result's candidates in the documented order, at most ``limit``."""
    found: list[Candidate] = []
    groups: Sequence[tuple[SuggestionKind, tuple[ChangedObject, ...]]] = (
        ("open_item", changes.open_items),
        ("disagreement", changes.disagreements),
        ("revision", changes.revisions),
        ("convention", changes.conventions),
    )
    seen: set[str] = set()
    for kind, objects in groups:
        for changed in objects:
            candidate = _candidate(kind, changed)
            if candidate.fingerprint not in seen:
                seen.add(candidate.fingerprint)
                found.append(candidate)
    found.sort(key=lambda c: (_KIND_ORDER[c.kind], -len(c.evidence), -c.sort_at, c.fingerprint))
    return found[:limit]
