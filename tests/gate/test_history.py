"""The history a decision sees: the stored conversation, then what only the transcript has."""

from __future__ import annotations

import json
from pathlib import Path

from proctor.gate import gate_request, load_history, parse_hook_input
from proctor.gate._request import GateRequest
from proctor.store import open_store
from tests.gate.helpers import (
    CONVERSATION_ID,
    append_session,
    ingest_session,
    payload,
    write_session,
)

SESSION_EVENTS = 7  # prompt, reply, Read call + result, reply, Bash call + result
TAIL_EVENTS = 5  # prompt, reply, Read call + result, reply (its Bash call is the proposed one)


def _request(transcript: Path | None) -> GateRequest:
    data = payload(
        "pre_tool_use_webfetch_injected.json",
        transcript_path=str(transcript) if transcript is not None else None,
    )
    return gate_request(parse_hook_input(json.dumps(data).encode()))


def test_the_stored_events_come_first_then_only_what_the_transcript_adds(
    tmp_path: Path,
) -> None:
    transcript = write_session(tmp_path / "logs", "session.jsonl")
    ingest_session(transcript)
    append_session(transcript, "session_tail.jsonl")
    store = open_store(read_only=True)
    try:
        history = load_history(_request(transcript), store)
    finally:
        store.close()
    assert (history.stored, history.from_transcript) == (SESSION_EVENTS, TAIL_EVENTS)
    assert [e.index for e in history.events] == list(range(SESSION_EVENTS + TAIL_EVENTS))
    keys = [(e.kind, e.source_id) for e in history.events]
    assert len(set(keys)) == len(keys), "nothing is fed twice"
    assert history.context.conversation_id == CONVERSATION_ID
    assert history.context.project == "shop"  # as stored
    assert history.notes == ()


def test_the_proposed_call_already_in_the_transcript_is_not_part_of_its_own_history(
    tmp_path: Path,
) -> None:
    transcript = write_session(tmp_path / "logs", "session.jsonl", "session_tail.jsonl")
    request = _request(transcript)
    assert request.source_id in transcript.read_text().replace("toolu_", "cc:tool:toolu_")
    history = load_history(request, None)
    assert request.source_id not in {e.source_id for e in history.events}
    assert history.from_transcript == SESSION_EVENTS + TAIL_EVENTS


def test_a_last_line_still_being_written_is_quietly_left_for_the_next_call(
    tmp_path: Path,
) -> None:
    transcript = write_session(tmp_path / "logs", "session.jsonl")
    with transcript.open("a") as handle:
        handle.write('{"parentUuid":"e5f4a3b6-9c6d-40ce-b1a5-4fbc7b6a5e06","type":"assi')
    history = load_history(_request(transcript), None)
    assert (history.from_transcript, history.notes) == (SESSION_EVENTS, ())


def test_a_broken_record_is_reported_and_the_rest_is_used(tmp_path: Path) -> None:
    transcript = write_session(tmp_path / "logs", "session.jsonl", "session_tail.jsonl")
    lines = transcript.read_text().splitlines(keepends=True)
    lines[6] = "{not json\n"  # the new request is lost, the rest of the tail stays
    transcript.write_text("".join(lines))
    history = load_history(_request(transcript), None)
    assert history.from_transcript == SESSION_EVENTS + TAIL_EVENTS - 1
    assert history.notes == (
        f"the transcript has unreadable records ({transcript}:7: invalid JSON (unexpected "
        "character, expected a string key at column 2); line skipped); the rest was used",
    )


def test_without_a_store_or_a_transcript_the_history_is_empty_but_placed(tmp_path: Path) -> None:
    history = load_history(_request(None), None)
    assert history.events == ()
    assert history.context.conversation_id == CONVERSATION_ID
    assert history.context.cwd == "/home/dev/shop"
