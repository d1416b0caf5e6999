"""What a leaf call sees (SPEC REV-2, REV-3, REV-7b, REV-13): bounded, ordered, never citable
background, structural facts beside their sources."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

from proctor.graph import EntityCandidate
from proctor.review._contract import MAX_CANDIDATES
from proctor.review.semantic import BackgroundNote, RenderLimits, leaf_view
from proctor.transcript import ToolCall
from tests.review.semantic.builders import (
    CONVERSATION,
    FILE_ID,
    PROJECT,
    SQLITE_ID,
    T0,
    batch,
    candidates,
    source,
    structural,
)


def entries(lines: tuple[str, ...]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def test_structural_entities_come_first_then_candidates_in_order_up_to_the_limit() -> None:
    many = [
        EntityCandidate(f"id-{n}", PROJECT, "concept", f"Concept {n}", "", T0) for n in range(150)
    ]
    the_batch = batch()
    roomy = RenderLimits(known_min_chars=20_000, known_chars=20_000)
    view = leaf_view(the_batch, structural(the_batch), [*candidates(), *many], (), roomy)

    known = [e for e in entries(view.lines) if e["type"] == "known"]
    assert len(known) == len(view.known) == MAX_CANDIDATES
    assert [e["id"] for e in known] == [f"known_{n}" for n in range(1, MAX_CANDIDATES + 1)]
    assert [view.known[e["id"]].entity_id for e in known[:3]] == [
        FILE_ID,
        SQLITE_ID,
        candidates()[1].entity_id,
    ]
    assert view.known["known_4"].entity_id == "id-0"


def test_a_small_batch_gets_a_small_share_of_candidates() -> None:
    many = [
        EntityCandidate(f"id-{n}", PROJECT, "concept", f"Concept {n}", "x" * 300, T0)
        for n in range(100)
    ]
    the_batch = batch()
    limits = RenderLimits()
    view = leaf_view(the_batch, structural(the_batch), many, (), limits)

    known = [line for line in view.lines if '"type":"known"' in line]
    assert 0 < len(known) < 100
    assert sum(len(line) for line in known) <= limits.known_min_chars
    # The most recent candidates are the ones kept.
    assert [k.entity_id for k in view.known.values()][1:4] == ["id-0", "id-1", "id-2"]


def test_a_candidate_already_offered_is_offered_once() -> None:
    the_batch = batch()
    again = replace(candidates()[0], entity_id=FILE_ID)
    view = leaf_view(the_batch, structural(the_batch), [again, *candidates()], (), RenderLimits())
    assert [k.entity_id for k in view.known.values()].count(FILE_ID) == 1


def test_background_is_bounded_dated_and_has_no_id_to_cite() -> None:
    notes = [BackgroundNote("x" * 900, T0 + timedelta(days=n)) for n in range(6)]
    the_batch = batch()
    view = leaf_view(the_batch, structural(the_batch), (), [*notes, "plain note"], RenderLimits())

    background = [e for e in entries(view.lines) if e["type"] == "background"]
    assert len(background) == 4
    assert all(len(e["text"]) <= 500 and "id" not in e for e in background)
    assert background[0]["updated_at"] == "2026-11-20T09:00Z"
    assert set(view.sources) == {s.ref for s in the_batch.sources}


def test_structural_facts_are_shown_beside_the_source_they_cite() -> None:
    the_batch = batch()
    view = leaf_view(the_batch, structural(the_batch), (), (), RenderLimits())
    by_id = {e.get("id"): e for e in entries(view.lines)}
    assert by_id["s3"]["facts"] == [
        "test_run failed: pytest -q tests/test_cache.py",
        "open: pytest -q tests/test_cache.py still fails",
    ]
    assert "facts" not in by_id["s2"]
    assert by_id["c1"] == {
        "id": "c1",
        "type": "conversation",
        "title": "Cache work",
        "project": "invoice-service",
    }


def test_long_outputs_keep_head_and_tail_and_a_huge_batch_stays_bounded() -> None:
    calls = [
        ToolCall(
            source_id=f"{CONVERSATION}:call-{n}",
            name="Bash",
            arguments={"command": f"cat big-{n}.log"},
            status="ok",
            result_text="HEAD " + "y" * 50_000 + " TAIL",
            created_at=T0,
        )
        for n in range(40)
    ]
    the_batch = replace(batch(), sources=tuple(source(f"s{n}", c) for n, c in enumerate(calls, 1)))
    limits = RenderLimits()
    view = leaf_view(the_batch, structural(the_batch), (), (), limits)

    outputs = [e for e in entries(view.lines) if e["type"] == "tool_call"]
    assert len(outputs) == 40
    assert all(e["output"].startswith("HEAD") and e["output"].endswith("TAIL") for e in outputs)
    assert all("characters omitted" in e["output"] and e["output_chars"] > 50_000 for e in outputs)
    assert sum(len(line) + 1 for line in view.lines) <= limits.sources_chars + 1_000
