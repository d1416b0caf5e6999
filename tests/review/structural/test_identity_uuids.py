"""Structural ids are name-based UUIDs (uuid5): the same as ``uuid.uuid5`` gives, always.

``proctor.graph`` derives them without building a ``UUID`` object (a first review makes
tens of thousands); ids already published must never change, so the short way is held
to the standard library's over any name, and to ids recorded before it existed.
"""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.graph import structural_entity_id, structural_event_id
from tests.properties import examples

NAMESPACE = uuid.UUID("5b0f2c7e-7d7a-4c5e-9a51-1f6f0c7d2b10")
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)


@settings(max_examples=examples(500), deadline=None)
@given(project=TEXT, kind=TEXT, key=TEXT)
def test_an_entity_id_is_the_uuid5_of_its_locator(project: str, kind: str, key: str) -> None:
    expected = str(uuid.uuid5(NAMESPACE, f"{project}\x1f{kind}\x1f{key}"))
    assert structural_entity_id(project, kind, key) == expected


@settings(max_examples=examples(500), deadline=None)
@given(kind=TEXT, source_type=TEXT, source_id=TEXT, part=TEXT)
def test_an_event_id_is_the_uuid5_of_its_source(
    kind: str, source_type: str, source_id: str, part: str
) -> None:
    expected = uuid.uuid5(NAMESPACE, f"event\x1f{kind}\x1f{source_type}\x1f{source_id}\x1f{part}")
    made = structural_event_id(kind, source_type, source_id, part)
    assert made == str(expected)
    assert uuid.UUID(made).version == 5
    assert uuid.UUID(made).variant == uuid.RFC_4122


def test_ids_recorded_before_the_short_way_are_unchanged() -> None:
    # Written down from str(uuid.uuid5(...)) before graph/_facts.py derived them itself.
    assert structural_entity_id("p1", "file", "src/app.py") == (
        "13ae5daf-c0a3-59e7-a6f5-867d52849bb6"
    )
    assert structural_entity_id("é", "package", "numpy@pypi") == (
        "928ad0d1-a2f4-58bf-9de5-5ac9a954bde0"
    )
    assert structural_event_id("command", "tool_call", "cc:tool:toolu_01") == (
        "1d2de831-930d-5528-a829-a111c34d8c13"
    )
