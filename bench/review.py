"""The review pipeline at scale: model cost, no-change time, publish time, query latency.

One run reports, against the targets of issue #5:

1. **Model cost** — a review with a model connection over real sessions (the scripted
   loopback server stands in for the model and reports input tokens as request
   characters / 4): model calls and input tokens per 1,000 messages, beside the
   transcripts' own tokens (their stored text / 4). Targets: ≤ 1 call per 25 messages;
   input tokens ≤ 1.5 × the transcripts' own tokens.
2. **No-change review** over ≥ 100k stored sources (a corpus of copied real Claude Code
   sessions, reviewed once structurally): the time of the second review, which must find
   nothing pending and call no model. Target < 1 s.
3. **Publish** of a draft with 10k facts (entities, events, relations, source refs): one
   transaction. Reported, no target.
4. **Queries** with ≥ 100k entities in the graph: p95 of ``overview``, ``graph(result)``
   (default limit: the newest 500 events) for a 10k-fact result and for the structural
   review's result, ``graph(result, story_line)`` for that result's largest story line,
   ``graph(..., as_published=True)``, ``stories``, ``entity`` (the most linked one),
   ``attention`` and ``search``.

5. **Scale** (issue 18, ``bench/review_scale.py``): a first structural review of the
   200 MB corpus in sources per second (target ≥ 5,000/s), the no-change review after it
   in process (< 0.3 s) and as a ``proctor review run`` process (< 0.5 s wall), and a
   9,520-fact publish (< 0.5 s), each side by side with the code before issue 18
   (alternating runs of both in the same bench run).

    python bench/review.py                      # 100k sources, then the scale comparison
    python bench/review.py --sources 20000      # a quicker look
    python bench/review.py --scale-only         # only (5)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("PROCTOR_HOME", tempfile.mkdtemp(prefix="proctor-bench-home-"))

MODEL_SAMPLES = [
    SHARED / "transcripts/claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    SHARED / "transcripts/claude-code/marot-spotter/tool_heavy.jsonl",
    REPO / "examples",
]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def _own_chars(store: Any) -> tuple[int, int]:
    """(messages, characters of stored text) — what the transcripts themselves hold."""
    from sqlalchemy import Text, cast, func, select

    from proctor.store import _schema as t

    with store._read() as conn:
        messages, message_chars = conn.execute(
            select(func.count(), func.coalesce(func.sum(func.length(t.messages.c.text)), 0))
        ).one()
        call_chars = conn.execute(
            select(
                func.coalesce(func.sum(func.length(t.tool_calls.c.result_text)), 0)
                + func.coalesce(func.sum(func.length(cast(t.tool_calls.c.arguments, Text))), 0)
            )
        ).scalar_one()
    return int(messages), int(message_chars) + int(call_chars)


def model_cost() -> dict[str, Any]:
    """A model review over real sessions, every request counted and sized."""
    from proctor.ingest import ingest
    from proctor.models import set_default_connection
    from proctor.review import ReviewRequest, open_semantic_layer, start_review
    from proctor.review.semantic import MERGE_SYSTEM
    from proctor.store import open_store
    from proctor.testing.scripted_model import (
        RecordedRequest,
        ScriptedModelServer,
        ScriptedReply,
    )

    def answer(request: RecordedRequest) -> ScriptedReply:
        merge = request.text_of("system").strip() == MERGE_SYSTEM.strip()
        body = (
            {"summary": "s", "changeDigest": "d", "storyLines": [], "experiences": []}
            if merge
            else {
                "events": [],
                "entities": [],
                "entityChanges": [],
                "relations": [],
                "summary": "s",
                "changeDigest": "d",
                "openItems": [],
            }
        )
        tokens = math.ceil(len(json.dumps(request.body)) / 4)
        return ScriptedReply(content=json.dumps(body), input_tokens=tokens, output_tokens=20)

    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(responder=answer) as server:
        store = open_store(Path(tmp) / "model.db")
        store.save_connection(server.connection("bench"))
        set_default_connection(store, "bench")
        ingest(store, [p for p in MODEL_SAMPLES if p.exists()])
        messages, chars = _own_chars(store)
        semantic, _ = open_semantic_layer(store, None)
        start = time.perf_counter()
        run = start_review(store, ReviewRequest(), semantic=semantic)
        seconds = time.perf_counter() - start
        store.close()
    own_tokens = chars / 4
    return {
        "messages": messages,
        "own_tokens": round(own_tokens),
        "calls": run.model_calls,
        "input_tokens": run.input_tokens,
        "calls_per_1000_messages": 1000 * run.model_calls / messages,
        "messages_per_call": messages / max(run.model_calls, 1),
        "input_tokens_per_1000_messages": 1000 * run.input_tokens / messages,
        "input_over_own": run.input_tokens / own_tokens,
        "status": run.status,
        "seconds": seconds,
    }


def large_store(folder: Path, sources: int) -> tuple[Any, dict[str, Any]]:
    """A store holding ≥ ``sources`` sources from copied real sessions, reviewed once."""
    from ingest import build_corpus  # bench/ingest.py
    from proctor.ingest import ingest
    from proctor.review import ReviewRequest, start_review
    from proctor.store import open_store

    size_mb = max(20, math.ceil(sources / 190))
    corpus = REPO / "bench" / ".corpus" / f"{size_mb}mb"
    build_corpus(corpus, size_mb)
    store = open_store(folder / "large.db")
    start = time.perf_counter()
    ingest(store, [corpus])
    ingest_seconds = time.perf_counter() - start
    counts = store.counts()
    stored = counts.messages + counts.tool_calls
    start = time.perf_counter()
    first = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
    first_seconds = time.perf_counter() - start
    return store, {
        "corpus_mb": size_mb,
        "stored_sources": first.sources_total,
        "messages_and_tool_calls": stored,
        "ingest_seconds": ingest_seconds,
        "first_review_seconds": first_seconds,
        "first_review_status": first.status,
        "first_review_batches": first.batches_total,
    }


def no_change(store: Any, repeats: int = 5) -> dict[str, Any]:
    from proctor.review import ReviewRequest, start_review

    times: list[float] = []
    statuses: set[str] = set()
    for _ in range(repeats):
        start = time.perf_counter()
        run = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
        times.append(time.perf_counter() - start)
        statuses.add(run.status)
    return {"median_s": statistics.median(times), "max_s": max(times), "statuses": sorted(statuses)}


def synthetic_draft(project_id: str, run_id: str, n_entities: int, n_events: int) -> Any:
    from proctor.graph import (
        Coverage,
        EntityFact,
        EventFact,
        RelationFact,
        ResultDraft,
        SourceRef,
        StoryLineFact,
    )

    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    entities = tuple(
        EntityFact(
            entity_id=str(uuid.uuid4()),
            project_id=project_id,
            kind="file",
            name=f"src/module_{i}.py",
            description=f"Module {i} of the synthetic project",
            sources=(SourceRef("message", f"bench:{run_id}:{i}"),),
            layer="structural",
            identity_key=f"src/module_{i}.py",
        )
        for i in range(n_entities)
    )
    events = tuple(
        EventFact(
            event_id=str(uuid.uuid4()),
            project_id=project_id,
            kind="file_edit",
            title=f"Edited src/module_{i % n_entities}.py",
            summary="synthetic edit",
            occurred_at=t0 + timedelta(seconds=i),
            conversation_id=f"bench:conversation:{i % 50}",
            sources=(SourceRef("tool_call", f"bench:{run_id}:call:{i}"),),
            layer="structural",
            entity_ids=(entities[i % n_entities].entity_id,),
            outcome="ok",
        )
        for i in range(n_events)
    )
    relations = tuple(
        RelationFact(
            from_entity_id=entities[i].entity_id,
            to_entity_id=entities[i + 1].entity_id,
            type="depends_on",
            reason="synthetic import",
            sources=(SourceRef("message", f"bench:{run_id}:{i}"),),
            layer="structural",
        )
        for i in range(0, n_entities - 1, 10)
    )
    lines = tuple(
        StoryLineFact(
            key=f"line:{k}",
            title=f"Line {k}",
            summary="synthetic",
            event_ids=tuple(e.event_id for e in events[k::20]),
        )
        for k in range(20)
    )
    return ResultDraft(
        result_id=str(uuid.uuid4()),
        run_id=run_id,
        scope_key=f"project:{project_id}",
        project_id=project_id,
        time_from=None,
        time_to=None,
        trigger="manual",
        summary="synthetic",
        change_digest="synthetic",
        coverage=Coverage(n_events, n_events, 0, semantic="skipped"),
        entities=entities,
        events=events,
        relations=relations,
        story_lines=lines,
    )


def publish_and_queries(store: Any, target_entities: int) -> dict[str, Any]:
    """Publish synthetic 10k-fact drafts until the graph holds ``target_entities``."""
    from proctor.store import ReviewScope

    project_id = store.projects()[0].project_id
    publish_times: list[float] = []
    result_ids: list[str] = []
    entity_count = _count(store, "entities")
    while entity_count < target_entities:
        run = store.create_review_run(
            ReviewScope(project_id, None),
            trigger="manual",
            reanalyze=True,
            stages=["structural"],
            batch_size=150,
            batch_chars=60_000,
            connection=None,
            model=None,
        )
        draft = synthetic_draft(project_id, run.run_id, 5_000, 4_000)
        start = time.perf_counter()
        store.publish_result(draft, "completed")
        publish_times.append(time.perf_counter() - start)
        result_ids.append(draft.result_id)
        entity_count = _count(store, "entities")
    facts = 5_000 + 4_000 + 500 + 20
    overview = _timed(lambda: store.overview(None, 20), 50)
    graph = _timed(lambda: store.graph(result_ids[-1]), 20)
    report: dict[str, Any] = {
        "entities": entity_count,
        "events": _count(store, "graph_events"),
        "publish_facts": facts,
        "publish_median_s": statistics.median(publish_times),
        "publish_max_s": max(publish_times),
        "overview_p95_ms": 1000 * _p(overview, 0.95),
        "graph_10k_p95_ms": 1000 * _p(graph, 0.95),
        "graph_limit": store.graph(result_ids[-1]).limit,
    }
    structural = [r.result_id for r in store.overview(None, 50) if r.result_id not in result_ids]
    if structural:
        report.update(structural_queries(store, structural[0]))
    report["search"] = search_latency(store)
    return report


def structural_queries(store: Any, result_id: str) -> dict[str, Any]:
    """Reads of the structural review's result: the whole of it, one story line, history,
    the project's stories, the most linked entity and the attention histogram."""
    from sqlalchemy import func, select

    from proctor.store import _schema as t

    view = store.graph(result_id)
    sle, ee = t.story_line_events.c, t.event_entities.c
    with store._read() as conn:
        line_id, line_events = conn.execute(
            select(sle.story_line_id, func.count())
            .where(sle.result_id == result_id)
            .group_by(sle.story_line_id)
            .order_by(func.count().desc(), sle.story_line_id)
            .limit(1)
        ).one()
        entity_id, entity_events = conn.execute(
            select(ee.entity_id, func.count())
            .group_by(ee.entity_id)
            .order_by(func.count().desc(), ee.entity_id)
            .limit(1)
        ).one()
    project = view.result.project_id or store.projects()[0].project_id
    return {
        "graph_review_events": view.totals.events,
        "graph_review_shown": len(view.events),
        "graph_review_p95_ms": 1000 * _p(_timed(lambda: store.graph(result_id), 20), 0.95),
        "graph_line_events": line_events,
        "graph_line_p95_ms": 1000 * _p(_timed(lambda: store.graph(result_id, line_id), 20), 0.95),
        "graph_published_p95_ms": 1000
        * _p(_timed(lambda: store.graph(result_id, as_published=True), 5), 0.95),
        "stories_lines": len(store.stories(project)),
        "stories_p95_ms": 1000 * _p(_timed(lambda: store.stories(project), 5), 0.95),
        "entity_events": entity_events,
        "entity_p95_ms": 1000 * _p(_timed(lambda: store.entity(entity_id), 10), 0.95),
        "attention_p95_ms": 1000 * _p(_timed(lambda: store.attention(result_id), 10), 0.95),
    }


def search_latency(store: Any) -> dict[str, Any] | None:
    """p95 of ``proctor search`` queries over the same store, when search is installed."""
    try:
        from proctor.search import search
    except ImportError:
        return None
    queries = ["failing tests", "module 42", "pytest", "README", "database migration"]
    times = _timed(lambda: [search(store, q, limit=10) for q in queries], 10)
    return {"p95_ms_per_query": 1000 * _p(times, 0.95) / len(queries)}


def _timed(call: Any, repeats: int) -> list[float]:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def _count(store: Any, table: str) -> int:
    from sqlalchemy import func, select

    from proctor.store import _schema as t

    with store._read() as conn:
        return int(
            conn.execute(select(func.count()).select_from(t.metadata.tables[table])).scalar_one()
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scale-only", action="store_true", help="only the scale comparison")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the scale comparison")
    args = parser.parse_args()
    import review_scale  # bench/review_scale.py

    if args.scale_only:
        scale = review_scale.compare(200, args.rounds, review_scale.BASELINE)
        print(json.dumps(scale, indent=2) if args.json else review_scale.render(scale))
        return
    started = time.perf_counter()
    report: dict[str, Any] = {
        "machine": f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}",
    }
    report["model_cost"] = model_cost()
    with tempfile.TemporaryDirectory() as tmp:
        store, report["large"] = large_store(Path(tmp), args.sources)
        report["no_change"] = no_change(store)
        report["graph"] = publish_and_queries(store, args.entities)
        store.close()
    report["scale"] = review_scale.compare(200, args.rounds, review_scale.BASELINE)
    report["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return
    _print(report)


def _print(r: dict[str, Any]) -> None:
    m, large, nc, g = r["model_cost"], r["large"], r["no_change"], r["graph"]
    print(f"machine: {r['machine']}")
    print(
        f"(1) model cost over {m['messages']:,} real messages ({m['own_tokens']:,} own tokens): "
        f"{m['calls']} calls, {m['messages_per_call']:.1f} messages per call "
        f"(target ≥ 25), {m['calls_per_1000_messages']:.1f} calls and "
        f"{m['input_tokens_per_1000_messages']:,.0f} input tokens per 1,000 messages; "
        f"input / own tokens {m['input_over_own']:.2f} (target ≤ 1.5); run {m['status']}"
    )
    print(
        f"(2) store: {large['stored_sources']:,} sources from a {large['corpus_mb']} MB corpus "
        f"(ingest {large['ingest_seconds']:.1f} s; first structural review "
        f"{large['first_review_seconds']:.1f} s, {large['first_review_batches']} batches, "
        f"{large['first_review_status']})"
    )
    print(
        f"    no-change review: median {nc['median_s'] * 1000:.0f} ms, max "
        f"{nc['max_s'] * 1000:.0f} ms (target < 1 s); statuses {nc['statuses']}"
    )
    print(
        f"(3) publish {g['publish_facts']:,} facts in one transaction: median "
        f"{g['publish_median_s']:.2f} s, max {g['publish_max_s']:.2f} s"
    )
    print(
        f"(4) with {g['entities']:,} entities and {g['events']:,} events: overview p95 "
        f"{g['overview_p95_ms']:.1f} ms; graph(result) p95 (limit {g['graph_limit']} events) "
        f"{g['graph_10k_p95_ms']:.0f} ms for a result of {g['publish_facts']:,} facts"
    )
    if "graph_review_p95_ms" in g:
        print(
            f"    structural review's result ({g['graph_review_events']:,} events): graph(result) "
            f"p95 {g['graph_review_p95_ms']:.0f} ms ({g['graph_review_shown']} shown); "
            f"graph(result, story_line) p95 {g['graph_line_p95_ms']:.0f} ms (largest line, "
            f"{g['graph_line_events']:,} events); as_published p95 "
            f"{g['graph_published_p95_ms']:.0f} ms"
        )
        print(
            f"    stories(project) p95 {g['stories_p95_ms']:.0f} ms ({g['stories_lines']:,} "
            f"lines); entity(most linked) p95 {g['entity_p95_ms']:.0f} ms "
            f"({g['entity_events']:,} events); attention(result) p95 "
            f"{g['attention_p95_ms']:.0f} ms"
        )
    search = g["search"]
    print(
        "    search: "
        + (
            "not installed"
            if search is None
            else f"p95 {search['p95_ms_per_query']:.1f} ms per query"
        )
    )
    import review_scale  # bench/review_scale.py

    print("(5) scale, side by side with the code before issue 18:")
    print(review_scale.render(r["scale"]))
    print(f"total bench time {r['seconds']:.0f} s")


if __name__ == "__main__":
    main()
