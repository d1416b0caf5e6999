"""Episodes against user requests, per transcript file of ``../shared/transcripts`` (issue 20).

Every shared transcript is imported into a temporary store with Proctor's own ingest, one
batch of all of them goes through the structural layer (``extract_structural``), and
``gather_episodes`` tells each main conversation as episodes. Printed per file: the
user's requests (``is_user_request``), the episodes, the structural events they gather,
and the share of episodes to requests; then the totals and a few outcome lines.

    python bench/episodes.py                 # the table on stdout
    python bench/episodes.py --outcomes 20   # and 20 episodes with their outcome lines
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from proctor.ingest import ingest
from proctor.review._batch import BatchSource, SourceBatch
from proctor.review.structural import extract_structural, gather_episodes, is_user_request
from proctor.store import open_store
from proctor.transcript import Message, TaskEvent, ToolCall

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"


def _batch(store_path: Path, transcripts: Path) -> tuple[SourceBatch, dict[str, str]]:
    store = open_store(store_path)
    try:
        ingest(store, [transcripts])
        projects = {p.name: p.project_id for p in store.projects()}
        sources: list[BatchSource] = []
        conversations = {}
        origins: dict[str, str] = {}
        runs = {}
        summaries = store.list_conversations(include_children=True, limit=100_000)
        for summary in summaries:
            transcript = store.transcript(summary.conversation_id)
            conversation = transcript.summary.conversation
            conversations[conversation.conversation_id] = conversation
            origins[conversation.conversation_id] = summary.origin or "?"
            for child in transcript.children:
                run = store.transcript(child.conversation_id).subagent_run
                if run is not None and run.parent_tool_call_id is not None:
                    runs[run.parent_tool_call_id] = run
            project_id = projects[transcript.summary.project]
            held: list[tuple[str, Message | ToolCall | TaskEvent, datetime | None]] = [
                *(("message", m, m.created_at) for m in transcript.messages),
                *(("tool_call", c, c.created_at) for c in transcript.tool_calls),
                *(("task_event", e, e.created_at) for e in transcript.task_events),
            ]
            for kind, item, when in held:
                sources.append(
                    BatchSource(
                        ref=f"s{len(sources) + 1}",
                        source_type=kind,  # type: ignore[arg-type]
                        source_id=item.source_id,
                        conversation_id=conversation.conversation_id,
                        project_id=project_id,
                        fingerprint="",
                        occurred_at=when,
                        message=item if kind == "message" else None,  # type: ignore[arg-type]
                        tool_call=item if kind == "tool_call" else None,  # type: ignore[arg-type]
                        task_event=item if kind == "task_event" else None,  # type: ignore[arg-type]
                    )
                )
        earliest = datetime.min.replace(tzinfo=UTC)
        ordered = sorted(sources, key=lambda s: (s.occurred_at or earliest, int(s.ref[1:])))
        batch = SourceBatch("bench", 1, "all", tuple(ordered), conversations, {}, runs)
        return batch, origins
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=Path, default=SHARED)
    parser.add_argument("--outcomes", type=int, default=0, help="print this many episodes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-episodes-") as folder:
        batch, origins = _batch(Path(folder) / "proctor.db", args.transcripts)
    facts = extract_structural(batch)
    episodes = gather_episodes(facts.events, batch.conversations)
    requests: Counter[str] = Counter()
    for source in batch.sources:
        conversation = batch.conversations.get(source.conversation_id)
        if source.message is not None and is_user_request(source.message, conversation):
            requests[origins[source.conversation_id]] += 1
    told = Counter(origins[e.conversation_id] for e in episodes.events if e.kind == "episode")
    work = Counter(origins[e.conversation_id] for e in episodes.events if e.kind != "episode")
    root = str(args.transcripts.resolve()) + "/"
    print(f"{'file':<100} {'requests':>8} {'episodes':>8} {'events':>6}")
    for origin in sorted(set(requests) | set(told) | set(work)):
        name = origin.removeprefix(root)
        print(f"{name:<100} {requests[origin]:>8} {told[origin]:>8} {work[origin]:>6}")
    total_requests, total_episodes = sum(requests.values()), sum(told.values())
    print(
        f"{'total':<100} {total_requests:>8} {total_episodes:>8} {sum(work.values()):>6}"
        f"   (episodes per request {total_episodes / max(1, total_requests):.2f})"
    )
    shown = [e for e in episodes.events if e.kind == "episode"][: args.outcomes]
    for event in shown:
        print(f"{event.outcome:>8}  {event.title[:70]}\n          {event.summary}")


if __name__ == "__main__":
    main()
