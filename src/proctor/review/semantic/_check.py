"""Validation of leaf and merge answers (SPEC REV-2, REV-3, REV-9): shape, then meaning.

The shape is the strict pydantic contract (``review._contract``): camelCase names only,
unknown fields rejected, a leaf's arrays all present. The meaning is checked against what
the call offered: a cited ``sourceReferenceIds`` entry must be a source of the batch
(background, known entities and conversations are not citable); a ``candidateRef`` must
be one of the offered ``known_N`` and map at most one entity; answer-local ids are unique
and every reference to one resolves; a merge's event and story line refs must have been
offered, ``parentKey`` must name another line of the answer, and sub-threads form no
cycle. Errors name the place (``entities.2.candidateRef``) and at most a short id the
model wrote, never observed text; they go back to the model in the repair call.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from proctor.review._contract import LeafOutput, MergeOutput

MAX_ERRORS = 20
"""Errors reported per answer at most (the repair call quotes them)."""

_KNOWN_REF = re.compile(r"known_[1-9][0-9]*")
_LINE_REF = re.compile(r"line_[1-9][0-9]*")
_Answer = TypeVar("_Answer", bound=BaseModel)


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def parse(model: type[_Answer], data: dict[str, Any] | None) -> tuple[_Answer | None, list[str]]:
    """The answer in the contract's shape, or None and what is wrong with it."""
    if data is None:
        return None, ["the answer is not one JSON object"]
    try:
        return model.model_validate(data, strict=True, by_alias=True, by_name=False), []
    except ValidationError as invalid:
        errors = [
            f"{'.'.join(str(part) for part in error['loc']) or 'answer'}: {error['msg']}"
            for error in invalid.errors(include_input=False, include_url=False)
        ]
        return None, errors[:MAX_ERRORS]


def _citations(place: str, refs: Iterable[str], sources: Collection[str]) -> list[str]:
    return [
        f"{place}.sourceReferenceIds: {_shown(ref)} is not a source of this batch "
        "(cite only the ids of message, tool_call and task_event lines)"
        for ref in refs
        if ref not in sources
    ]


def _entity_refs(place: str, ids: Iterable[str], entities: Collection[str]) -> list[str]:
    return [
        f"{place}: {_shown(entity_id)} is not the id of an entity in this answer "
        "(declare it in entities, with candidateRef for a known one)"
        for entity_id in ids
        if entity_id not in entities
    ]


def _entity_errors(answer: LeafOutput, known: Collection[str]) -> tuple[list[str], set[str]]:
    errors: list[str] = []
    ids: set[str] = set()
    mapped: dict[str, int] = {}
    for n, entity in enumerate(answer.entities):
        place = f"entities.{n}"
        if entity.id in ids:
            errors.append(f"{place}.id: {_shown(entity.id)} is used by another entity")
        ids.add(entity.id)
        ref = entity.candidate_ref
        if ref is None:
            continue
        if not _KNOWN_REF.fullmatch(ref):
            errors.append(
                f"{place}.candidateRef: {_shown(ref)} is not a known_N ref; use one of the "
                "offered known ids or null"
            )
        elif ref not in known:
            errors.append(f"{place}.candidateRef: {_shown(ref)} was not offered")
        elif ref in mapped:
            errors.append(
                f"{place}.candidateRef: {ref} is already mapped by entities.{mapped[ref]}; "
                "one entity per known ref"
            )
        else:
            mapped[ref] = n
    return errors, ids


def check_leaf(answer: LeafOutput, sources: Collection[str], known: Collection[str]) -> list[str]:
    """What in a well-formed leaf answer refers to something the call did not offer."""
    errors, ids = _entity_errors(answer, known)
    for n, entity in enumerate(answer.entities):
        errors += _citations(f"entities.{n}", entity.source_reference_ids, sources)
    for n, event in enumerate(answer.events):
        errors += _citations(f"events.{n}", event.source_reference_ids, sources)
        errors += _entity_refs(f"events.{n}.entityIds", event.entity_ids, ids)
    for n, change in enumerate(answer.entity_changes):
        errors += _citations(f"entityChanges.{n}", change.source_reference_ids, sources)
        errors += _entity_refs(f"entityChanges.{n}.entityId", [change.entity_id], ids)
    for n, relation in enumerate(answer.relations):
        place = f"relations.{n}"
        errors += _citations(place, relation.source_reference_ids, sources)
        errors += _entity_refs(f"{place}.fromId", [relation.from_id], ids)
        errors += _entity_refs(f"{place}.toId", [relation.to_id], ids)
        if relation.from_id == relation.to_id:
            errors.append(f"{place}: fromId and toId are the same entity")
    for n, item in enumerate(answer.open_items):
        errors += _citations(f"openItems.{n}", item.source_reference_ids, sources)
        errors += _entity_refs(f"openItems.{n}.entityIds", item.entity_ids, ids)
    return errors[:MAX_ERRORS]


def _event_refs(place: str, refs: Iterable[str], events: Collection[str]) -> list[str]:
    return [
        f"{place}.eventRefs: {_shown(ref)} is not an offered event (ev… ids only)"
        for ref in refs
        if ref not in events
    ]


def _cycles(parents: Mapping[str, str | None]) -> list[str]:
    errors: list[str] = []
    for key in parents:
        seen = {key}
        parent = parents[key]
        while parent is not None and parent in parents:
            if parent in seen:
                errors.append(f"storyLines: the sub-threads of {_shown(key)} form a cycle")
                break
            seen.add(parent)
            parent = parents[parent]
    return errors


def check_merge(
    answer: MergeOutput, events: Collection[str], story_lines: Collection[str]
) -> list[str]:
    """What in a well-formed merge answer refers to something the call did not offer."""
    errors: list[str] = []
    keys: set[str] = set()
    mapped: dict[str, int] = {}
    for n, line in enumerate(answer.story_lines):
        if line.key in keys:
            errors.append(f"storyLines.{n}.key: {_shown(line.key)} is used by another line")
        keys.add(line.key)
        ref = line.story_line_ref
        if ref is not None:
            if not _LINE_REF.fullmatch(ref) or ref not in story_lines:
                errors.append(f"storyLines.{n}.storyLineRef: {_shown(ref)} was not offered")
            elif ref in mapped:
                errors.append(
                    f"storyLines.{n}.storyLineRef: {ref} is already continued by "
                    f"storyLines.{mapped[ref]}"
                )
            else:
                mapped[ref] = n
        errors += _event_refs(f"storyLines.{n}", line.event_refs, events)
    for n, line in enumerate(answer.story_lines):
        if line.parent_key is None:
            continue
        if line.parent_key == line.key:
            errors.append(f"storyLines.{n}.parentKey: a line cannot be its own sub-thread")
        elif line.parent_key not in keys:
            errors.append(
                f"storyLines.{n}.parentKey: {_shown(line.parent_key)} is not the key of "
                "another line in this answer"
            )
    if not errors:
        errors += _cycles({line.key: line.parent_key for line in answer.story_lines})
    for n, experience in enumerate(answer.experiences):
        errors += _event_refs(f"experiences.{n}", experience.event_refs, events)
    for n, item in enumerate(answer.open_items):
        errors += _event_refs(f"openItems.{n}", item.event_refs, events)
    return errors[:MAX_ERRORS]
