"""Episodes: a user's request and the work it caused, told as one event with its outcome.

A timeline of single reads, edits and commands buries what happened; people think in
requests ("fix the rounding bug") and what came of them ("3 files edited; tests failing
→ passing"). The structural layer therefore gathers, per main conversation, every
structural event from one request (``_requests.py``) up to the next into that request's
``episode`` and writes its outcome line from them — files edited, created and read,
tests from failing to passing, commands still failing, sub-agent runs, errors, commits.

How the facts fit the story graph:

- the episode is an event of kind ``episode`` in its conversation's story line, at the
  request's time, titled by the request (a redacted request by its outcome line:
  ``Request (redacted) → 1 file edited``), citing the request's text (and the runs that
  decide its outcome: the last test run, commands still failing);
- its work stays as it was — every read, edit and command is still its own event citing
  its own tool call — and is also gathered in a sub-thread of the conversation's line,
  the episode's line (``episode_line_id``), which holds the episode event first and
  then its members in time order. So a timeline can show episodes by default and open
  one to its single events; nothing is merged away and nothing is merged by name;
- ids derive from sources: an episode's id from its request message, its line's id from
  the episode's id, so a review that reads the same sources again publishes the same
  episodes (``must_exist=False``: the first publish creates the line).

Work that comes before any request the review saw (the review began in the middle of a
request's work, or the conversation was started by an injected message, as teammate and
scheduled sessions are) becomes an episode titled ``Work without a new request``, its id
derived from its first event. Sub-agent and compaction conversations hold no requests:
their work is told in their own story lines, which the parent's ``subagent_run`` event
(a member of the parent's episode) leads to.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from proctor.graph import EventFact, SourceRef, StoryLineFact, structural_event_id
from proctor.review.structural._builder import Outcome
from proctor.review.structural._requests import titled_by_work
from proctor.review.structural._story import story_line_key
from proctor.transcript import Conversation

EPISODE_LINE_NAMESPACE = uuid.UUID("6a1f3d52-2b8e-5c47-9d0a-7e4b1c9f2a63")
WITHOUT_REQUEST = "Work without a new request"
"""The title of the work before the first request a review saw."""
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_RUNS = frozenset({"command", "test_run"})


def episode_line_key(episode_id: str) -> str:
    """The key of an episode's story line within a draft."""
    return f"episode:{episode_id}"


def episode_line_id(episode_id: str) -> str:
    """The id of an episode's story line: the same episode, the same line."""
    return str(uuid.uuid5(EPISODE_LINE_NAMESPACE, episode_id))


@dataclass(frozen=True, slots=True)
class Episodes:
    """A draft's events with every episode completed, and each episode's story line."""

    events: tuple[EventFact, ...]
    """The events given, in the same order, each episode with its outcome; an episode of
    work without a request, where there is one, just before its first event."""
    lines: tuple[StoryLineFact, ...]
    """One sub-thread per episode with work: the episode event, then its work."""
    members: Mapping[str, tuple[str, ...]]
    """Episode id → the ids of its work, in time order."""


def gather_episodes(
    events: Sequence[EventFact], conversations: Mapping[str, Conversation]
) -> Episodes:
    """Group each main conversation's structural work under the request that caused it."""
    by_conversation: dict[str, list[EventFact]] = {}
    for event in events:
        by_conversation.setdefault(event.conversation_id, []).append(event)
    completed: dict[str, EventFact] = {}
    added: dict[str, EventFact] = {}
    """First member's id → the episode without a request that it opens."""
    members: dict[str, tuple[str, ...]] = {}
    lines: list[StoryLineFact] = []
    for conversation_id, found in by_conversation.items():
        if not _holds_requests(conversations.get(conversation_id)):
            continue
        for anchor, work in _groups(found):
            episode = _complete(anchor, work) if anchor is not None else _without_request(work)
            if anchor is None:
                added[work[0].event_id] = episode
            else:
                completed[episode.event_id] = episode
            members[episode.event_id] = tuple(e.event_id for e in work)
            if work:
                lines.append(_line(episode, work))
    ordered: list[EventFact] = []
    for event in events:
        if event.event_id in added:
            ordered.append(added[event.event_id])
        ordered.append(completed.get(event.event_id, event))
    return Episodes(events=tuple(ordered), lines=tuple(lines), members=members)


def _holds_requests(conversation: Conversation | None) -> bool:
    """Main conversations the draft knows (a deleted one publishes no story line)."""
    return (
        conversation is not None
        and conversation.kind == "main"
        and conversation.parent_conversation_id is None
    )


def _groups(events: Iterable[EventFact]) -> list[tuple[EventFact | None, list[EventFact]]]:
    """(request's episode or None, its work) in time order; a request opens its own group
    even when a tool call shares its timestamp (the request comes first)."""
    structural = list({e.event_id: e for e in events if e.layer == "structural"}.values())
    timed = [e for e in structural if e.occurred_at is not None]
    if not timed:
        # A conversation without times (an API message list) is told in the order its
        # facts were recorded, which is the order things happened (``reading_order``).
        return _in_order(structural)
    timed.sort(key=lambda e: (e.occurred_at or _EARLIEST, e.kind != "episode", e.event_id))
    # A request without a time cannot be placed among the work: it stands alone.
    groups: list[tuple[EventFact | None, list[EventFact]]] = [
        (e, []) for e in structural if e.occurred_at is None and e.kind == "episode"
    ]
    for event in timed:
        if event.kind == "episode":
            groups.append((event, []))
        elif groups:
            groups[-1][1].append(event)
        else:
            groups.append((None, [event]))
    first = next((i for i, (anchor, _) in enumerate(groups) if anchor is None), None)
    if (
        first is not None
        and first + 1 < len(groups)
        and all(e.kind == "task_status" for e in groups[first][1])
    ):
        # A turn's "started" record can precede the request it starts (Codex writes it
        # first): task updates alone before a request belong to that request.
        leading, (anchor, work) = groups[first][1], groups[first + 1]
        groups[first : first + 2] = [(anchor, [*leading, *work])]
    return groups


def _in_order(events: Sequence[EventFact]) -> list[tuple[EventFact | None, list[EventFact]]]:
    groups: list[tuple[EventFact | None, list[EventFact]]] = []
    for event in events:
        if event.kind == "episode":
            groups.append((event, []))
        elif groups:
            groups[-1][1].append(event)
        else:
            groups.append((None, [event]))
    return groups


def _complete(anchor: EventFact, work: Sequence[EventFact]) -> EventFact:
    outcome = outcome_line(work)
    return replace(
        anchor,
        title=titled_by_work(anchor.title, outcome),
        summary=outcome,
        outcome=episode_outcome(work),
        entity_ids=_entities(anchor.entity_ids, work),
        sources=_sources(anchor.sources, work),
    )


def _without_request(work: Sequence[EventFact]) -> EventFact:
    first = work[0]
    return EventFact(
        event_id=structural_event_id("episode", "event", first.event_id),
        project_id=first.project_id,
        kind="episode",
        title=WITHOUT_REQUEST,
        summary=outcome_line(work),
        occurred_at=first.occurred_at,
        conversation_id=first.conversation_id,
        sources=_sources(first.sources, work),
        layer="structural",
        entity_ids=_entities((), work),
        outcome=episode_outcome(work),
    )


def _line(episode: EventFact, work: Sequence[EventFact]) -> StoryLineFact:
    return StoryLineFact(
        key=episode_line_key(episode.event_id),
        title=episode.title,
        summary=episode.summary,
        event_ids=(episode.event_id, *(e.event_id for e in work)),
        story_line_id=episode_line_id(episode.event_id),
        parent_key=story_line_key(episode.conversation_id),
        must_exist=False,
    )


def _entities(first: Sequence[str], work: Sequence[EventFact]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *(i for e in work for i in e.entity_ids)]))


def _sources(first: Sequence[SourceRef], work: Sequence[EventFact]) -> tuple[SourceRef, ...]:
    """The request, then the runs the outcome line rests on (the last test run, and the
    last failed run of each command still failing)."""
    deciding: list[SourceRef] = []
    tests = [e for e in work if e.kind == "test_run" and e.outcome != "unknown"]
    if tests:
        deciding.extend(tests[-1].sources)
    for event in _still_failing(work):
        deciding.extend(event.sources)
    return tuple(dict.fromkeys([*first, *deciding]))


def _last_runs(work: Sequence[EventFact], kind: str) -> dict[str, EventFact]:
    """The last finished run of each command (or test), by the entity it runs."""
    last: dict[str, EventFact] = {}
    for event in work:
        if event.kind == kind and event.entity_ids and event.outcome != "unknown":
            last[event.entity_ids[0]] = event
    return last


def _still_failing(work: Sequence[EventFact]) -> list[EventFact]:
    return [e for e in _last_runs(work, "command").values() if e.outcome == "failed"]


def _test_states(work: Sequence[EventFact]) -> list[str]:
    states: list[str] = []
    for event in work:
        if event.kind == "test_run" and event.outcome != "unknown":
            state = "passing" if event.outcome == "ok" else "failing"
            if not states or states[-1] != state:
                states.append(state)
    return states


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def outcome_line(work: Sequence[EventFact]) -> str:
    """``3 files edited; tests failing → passing; 1 command still failing`` (time order).

    Files count once each however often they were touched; tests give the sequence of
    their states; a command is still failing when its last run in the episode failed, and
    fixed when an earlier run failed and its last one passed.
    """
    parts: list[str] = []
    for kind, verb in (("file_edit", "edited"), ("file_create", "created"), ("file_read", "read")):
        files = {e.entity_ids[0] for e in work if e.kind == kind and e.entity_ids}
        if files:
            parts.append(f"{_count(len(files), 'file', 'files')} {verb}")
    states = _test_states(work)
    if states:
        parts.append("tests " + " → ".join(states))
    commands = [e for e in work if e.kind == "command"]
    if commands:
        parts.append(_count(len(commands), "command", "commands") + " run")
    failed_before = {e.entity_ids[0] for e in commands if e.entity_ids and e.outcome == "failed"}
    last = _last_runs(work, "command")
    fixed = sum(e.outcome == "ok" and key in failed_before for key, e in last.items())
    failing = sum(e.outcome == "failed" for e in last.values())
    if fixed:
        parts.append(_count(fixed, "command", "commands") + " fixed")
    if failing:
        parts.append(_count(failing, "command", "commands") + " still failing")
    runs = [e for e in work if e.kind == "subagent_run"]
    if runs:
        failed = sum(e.outcome == "failed" for e in runs)
        parts.append(
            _count(len(runs), "sub-agent run", "sub-agent runs")
            + (f" ({failed} failed)" if failed else "")
        )
    for kind, one, many in (
        ("error", "tool error", "tool errors"),
        ("commit", "commit", "commits"),
        ("package_install", "package installed", "packages installed"),
        ("url_fetch", "URL fetched", "URLs fetched"),
        ("task_status", "task update", "task updates"),
    ):
        number = sum(e.kind == kind for e in work)
        if number:
            parts.append(_count(number, one, many))
    return "; ".join(parts) if parts else "no tool work"


def episode_outcome(work: Sequence[EventFact]) -> Outcome:
    """``failed`` when tests end failing, a command is still failing or the last sub-agent
    run failed; ``ok`` when runs finished and none of that holds; else ``unknown``."""
    states = _test_states(work)
    runs = [e for e in work if e.kind == "subagent_run" and e.outcome != "unknown"]
    if (
        (states and states[-1] == "failing")
        or _still_failing(work)
        or (runs and runs[-1].outcome == "failed")
    ):
        return "failed"
    finished = [e for e in work if e.kind in _RUNS | {"subagent_run"} and e.outcome != "unknown"]
    return "ok" if finished else "unknown"
