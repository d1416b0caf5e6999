"""LoCoMo: does ``proctor search`` find the turns that answer a question?

The dialogues are imported into a fresh Proctor store (a temporary SQLite file, through
``ingest`` and the LoCoMo adapter, exactly as ``proctor ingest`` would) and indexed with
``index_sources``; every question of categories 1–4 is then searched within its own
conversation, and the message ids of the top hits are compared with the question's gold
``evidence`` dialogue ids (``D1:3`` is the source ``locomo:<sample>:D1:3``). The questions
and their evidence are read from the imported files by this module only; nothing of
them is in the store.

Metric: evidence recall@k — the share of a question's gold turns among the first k hits,
averaged over questions — overall and per category (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop; 5, adversarial, is left out as usual). Beside it, in the
same run, a plain full-text baseline: SQLite FTS5 BM25 (porter stemming) over the raw
message texts, with the same query words.

Each question keeps the full text, speaker and session date of its top hits, so a model
can then answer it from them (``_locomo_answers``: answer accuracy, when a connection is
configured); the store is gone by then.
"""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.evals._common import rate, spread_sample
from proctor.ingest import ingest
from proctor.search import (
    AUTHOR_WEIGHT,
    FULL_TEXT_WEIGHT,
    MODEL_NAME,
    NEIGHBOUR_WEIGHT,
    Encoder,
    index_sources,
    query_terms,
    search,
)
from proctor.store import SqlStore, open_store
from proctor.transcript import Message

if TYPE_CHECKING:
    from proctor.evals._locomo_answers import LocomoAnswers

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""Scored categories (the common convention; 5, adversarial, is excluded)."""
KS = (5, 10)
_DIA_ID = re.compile(r"^D\d+:\d+$")

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ContextTurn:
    """One hit of ``proctor search`` as a model answering the question sees it."""

    source_id: str
    session_date: str | None
    """The session's date as the dataset writes it (``"1:56 pm on 8 May, 2023"``)."""
    speaker: str | None
    text: str


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question: its gold turns and the ids each method ranked first."""

    conversation_id: str
    question: str
    category: int
    gold: tuple[str, ...]
    search: tuple[str, ...]
    baseline: tuple[str, ...]
    question_id: str = ""
    """``<conversation id>:q<n>``, n the question's index in the sample's ``qa`` list."""
    gold_answer: str = ""
    context: tuple[ContextTurn, ...] = ()
    """The turns behind ``search``, in rank order."""

    def recall(self, method: str, k: int) -> float:
        """Share of the gold turns among the first ``k`` ids of ``method``."""
        ranked = self.search if method == "search" else self.baseline
        return len(set(ranked[:k]) & set(self.gold)) / len(self.gold)


@dataclass(slots=True)
class LocomoReport:
    """Recall of ``search`` and of the baseline, per category and per conversation."""

    mode: str
    """``hybrid`` or ``full_text`` (the embeddings extra is missing)."""
    note: str | None
    documents: int
    embedded: int
    index_seconds: float
    search_seconds: float
    seconds: float
    questions: list[QuestionResult] = field(default_factory=list)
    without_evidence: int = 0
    """Questions whose evidence names no turn of the conversation (not scored)."""
    answers: LocomoAnswers | None = None
    """Answer accuracy, when a model answered the questions."""
    answers_note: str | None = None
    """Why answer accuracy was not measured, when it was not."""

    def _slice(self, chosen: Sequence[QuestionResult]) -> dict[str, Any]:
        row: dict[str, Any] = {"questions": len(chosen)}
        for method in ("search", "baseline"):
            row[method] = {
                f"recall@{k}": rate_of(sum(q.recall(method, k) for q in chosen), len(chosen))
                for k in KS
            }
        return row

    def metrics(self) -> dict[str, dict[str, Any]]:
        """``{"overall" | "<n> <category>": {questions, search: {recall@k}, baseline: …}}``."""
        slices = {"overall": self._slice(self.questions)}
        for number, name in CATEGORIES.items():
            slices[f"{number} {name}"] = self._slice(
                [q for q in self.questions if q.category == number]
            )
        return slices

    def by_conversation(self) -> dict[str, dict[str, Any]]:
        """The same figures per conversation (weights were chosen on the first two)."""
        ids = sorted({q.conversation_id for q in self.questions})
        return {c: self._slice([q for q in self.questions if q.conversation_id == c]) for c in ids}

    def as_json(self) -> dict[str, Any]:
        """Everything, per-question rankings included, so each figure can be recomputed."""
        answered = {} if self.answers is None else self.answers.by_question()
        return {
            "benchmark": "locomo",
            "metric": "evidence recall@k",
            "mode": self.mode,
            "note": self.note,
            "model": MODEL_NAME if self.mode == "hybrid" else None,
            "weights": {
                "full_text": FULL_TEXT_WEIGHT,
                "neighbour": NEIGHBOUR_WEIGHT,
                "author": AUTHOR_WEIGHT,
            },
            "baseline": "SQLite FTS5 BM25 (porter) over raw message text, same query words",
            "documents": self.documents,
            "embedded": self.embedded,
            "index_seconds": self.index_seconds,
            "search_seconds": self.search_seconds,
            "seconds": self.seconds,
            "questions_without_evidence": self.without_evidence,
            "metrics": self.metrics(),
            "by_conversation": self.by_conversation(),
            "answers": None if self.answers is None else self.answers.as_json(),
            "answers_note": self.answers_note,
            "questions": [
                {
                    "question_id": q.question_id,
                    "conversation_id": q.conversation_id,
                    "question": q.question,
                    "category": q.category,
                    "gold_answer": q.gold_answer,
                    "gold": list(q.gold),
                    "search": list(q.search),
                    "baseline": list(q.baseline),
                    "answer": (
                        answered[q.question_id].as_json() if q.question_id in answered else None
                    ),
                }
                for q in self.questions
            ],
        }


def rate_of(total: float, count: int) -> float | None:
    """A mean, or None for an empty slice."""
    return None if count == 0 else total / count


def gold_ids(evidence: Any, conversation_id: str) -> list[str]:
    """Source ids of the gold turns (``"D8:6; D9:17"`` in one entry is two turns)."""
    items = evidence if isinstance(evidence, list) else [evidence]
    found: list[str] = []
    for item in items:
        for part in re.split(r"[;,\s]+", str(item)):
            if _DIA_ID.match(part):
                found.append(f"{conversation_id}:{part}")
    return list(dict.fromkeys(found))


def _questions(store: SqlStore) -> list[tuple[str, int, dict[str, Any]]]:
    """(conversation id, index in ``qa``, QA item) for every scored question of the samples."""
    items: list[tuple[str, int, dict[str, Any]]] = []
    conversations = store.list_conversations(limit=100_000)
    origins = {s.origin for s in conversations if s.conversation.format == "locomo" and s.origin}
    for origin in sorted(origins):
        document = json.loads(Path(origin).read_text(encoding="utf-8"))
        samples = document if isinstance(document, list) else [document]
        for sample in samples:
            if not isinstance(sample, dict) or not isinstance(sample.get("qa"), list):
                continue
            conversation_id = f"locomo:{sample.get('sample_id')}"
            for index, item in enumerate(sample["qa"]):
                if isinstance(item, dict) and item.get("category") in CATEGORIES:
                    items.append((conversation_id, index, item))
    return items


class _Baseline:
    """Plain full text: FTS5 BM25 over each message's raw text, no date, no neighbours."""

    def __init__(self, store: SqlStore) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE turns USING fts5("
            "text, conversation_id UNINDEXED, source_id UNINDEXED, tokenize='porter unicode61')"
        )
        for summary in store.list_conversations(limit=100_000):
            self._db.executemany(
                "INSERT INTO turns (text, conversation_id, source_id) VALUES (?, ?, ?)",
                [
                    (m.text, summary.conversation_id, m.source_id)
                    for m in store.messages(summary.conversation_id)
                ],
            )

    def search(self, question: str, conversation_id: str, limit: int) -> list[str]:
        terms = query_terms(question)
        if not terms:
            return []
        rows = self._db.execute(
            "SELECT source_id FROM turns WHERE turns MATCH ? AND conversation_id = ? "
            "ORDER BY bm25(turns) LIMIT ?",
            (" OR ".join(f'"{term}"' for term in terms), conversation_id, limit),
        )
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True, slots=True)
class ImportedLocomo:
    """LoCoMo imported into a temporary store and indexed (``imported_locomo``)."""

    store: SqlStore
    documents: int
    embedded: int
    index_seconds: float
    seconds: float
    """Importing and indexing."""


@contextmanager
def imported_locomo(data: Path, *, encoder: Encoder = "auto") -> Iterator[ImportedLocomo]:
    """LoCoMo under ``data`` imported into a temporary SQLite store (``ingest``, as
    ``proctor ingest`` would) and indexed with ``encoder`` (``index_sources``); the store
    is deleted on leaving. Scored by ``score_locomo``, with any encoder (``None``: the same
    index searched by full text alone)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="proctor-locomo-") as folder:
        store = open_store(Path(folder) / "locomo.db")
        try:
            ingest(store, [data], jobs=1)
            indexed = index_sources(store, encoder=encoder)
            yield ImportedLocomo(
                store,
                indexed.documents,
                indexed.embedded,
                indexed.seconds,
                time.perf_counter() - started,
            )
        finally:
            store.close()


def score_locomo(
    imported: ImportedLocomo,
    *,
    encoder: Encoder = "auto",
    limit: int | None = None,
    progress: Progress | None = None,
) -> LocomoReport:
    """Search every scored question of ``imported`` with ``encoder`` and score its evidence
    recall beside the baseline's (``evaluate_locomo``)."""
    started = time.perf_counter()
    report = _search_all(imported.store, encoder, limit, progress)
    report.documents = imported.documents
    report.embedded = imported.embedded
    report.index_seconds = imported.index_seconds
    report.seconds = imported.seconds + time.perf_counter() - started
    return report


def evaluate_locomo(
    data: Path,
    *,
    encoder: Encoder = "auto",
    limit: int | None = None,
    progress: Progress | None = None,
) -> LocomoReport:
    """Import, index and search LoCoMo under ``data``; score evidence recall@5 and @10.

    ``limit``: only that many of the scored questions, spread evenly over the dataset
    (its questions are sorted by category within each conversation).
    """
    with imported_locomo(data, encoder=encoder) as imported:
        return score_locomo(imported, encoder=encoder, limit=limit, progress=progress)


class _Turns:
    """Every turn of the store by source id, with its session's date as the dataset writes it."""

    def __init__(self, store: SqlStore) -> None:
        self.messages: dict[str, Message] = {}
        self._dates: dict[tuple[str, Any], str] = {}
        for summary in store.list_conversations(limit=100_000):
            for message in store.messages(summary.conversation_id):
                self.messages[message.source_id] = message
            sessions = summary.conversation.attributes.get("sessions")
            for session in sessions if isinstance(sessions, list) else []:
                if isinstance(session, dict) and isinstance(session.get("date_time"), str):
                    key = (summary.conversation_id, session.get("session"))
                    self._dates[key] = session["date_time"]

    def context(self, conversation_id: str, source_ids: Sequence[str]) -> tuple[ContextTurn, ...]:
        """The turns ``source_ids`` name, in their order."""
        turns: list[ContextTurn] = []
        for source_id in source_ids:
            message = self.messages.get(source_id)
            if message is None:
                continue
            session = message.attributes.get("session")
            date = self._dates.get((conversation_id, session))
            if date is None and message.created_at is not None:
                date = f"{message.created_at.day} {message.created_at:%B %Y}"
            turns.append(ContextTurn(source_id, date, message.author, message.text))
        return tuple(turns)


def _search_all(
    store: SqlStore, encoder: Encoder, limit: int | None, progress: Progress | None
) -> LocomoReport:
    report = LocomoReport(
        mode="", note=None, documents=0, embedded=0, index_seconds=0, search_seconds=0, seconds=0
    )
    turns = _Turns(store)
    scored: list[tuple[str, int, dict[str, Any], list[str]]] = []
    for conversation_id, index, item in _questions(store):
        gold = [g for g in gold_ids(item.get("evidence"), conversation_id) if g in turns.messages]
        if gold:
            scored.append((conversation_id, index, item, gold))
        else:
            report.without_evidence += 1
    chosen = spread_sample(scored, limit)
    baseline = _Baseline(store)
    searching = 0.0
    try:
        for done, (conversation_id, index, item, gold) in enumerate(chosen, start=1):
            question = str(item.get("question", ""))
            clock = time.perf_counter()
            result = search(
                store,
                question,
                conversation_id=conversation_id,
                doc_types=["message"],
                limit=max(KS),
                encoder=encoder,
            )
            searching += time.perf_counter() - clock
            report.mode, report.note = result.mode, result.note
            ranked = tuple(hit.doc_id for hit in result.hits)
            report.questions.append(
                QuestionResult(
                    conversation_id=conversation_id,
                    question=question,
                    category=int(item["category"]),
                    gold=tuple(gold),
                    search=ranked,
                    baseline=tuple(baseline.search(question, conversation_id, max(KS))),
                    question_id=f"{conversation_id}:q{index}",
                    gold_answer="" if item.get("answer") is None else str(item["answer"]),
                    context=turns.context(conversation_id, ranked),
                )
            )
            if progress is not None:
                progress(done, len(chosen))
    finally:
        baseline.close()
    report.search_seconds = searching
    return report


__all__ = [
    "CATEGORIES",
    "ContextTurn",
    "ImportedLocomo",
    "LocomoReport",
    "QuestionResult",
    "evaluate_locomo",
    "gold_ids",
    "imported_locomo",
    "rate",
    "score_locomo",
]
