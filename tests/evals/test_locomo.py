"""LoCoMo: evidence recall of ``proctor search`` against a plain full-text baseline (REV-14)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from proctor.cli.main import cli
from proctor.evals import LocomoReport, evaluate_locomo
from proctor.evals.locomo import (
    ImportedLocomo,
    QuestionResult,
    gold_ids,
    imported_locomo,
    score_locomo,
)
from proctor.search import load_encoder, missing_embeddings
from tests.backends import ON_POSTGRES

if TYPE_CHECKING:
    from tests.evals.embedding_cache import CachedEncoder


def _sample() -> dict[str, Any]:
    turns_1 = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat called Pixel."},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! Mine is learning the violin."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "My brother lives in Lisbon now."},
    ]
    turns_2 = [
        {"speaker": "Bo", "dia_id": "D2:1", "text": "The violin recital went well yesterday."},
        {"speaker": "Ann", "dia_id": "D2:2", "text": "Pixel knocked over my plant again."},
    ]
    return {
        "sample_id": "mini",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1": turns_1,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2": turns_2,
            "session_2_date_time": "10:00 am on 9 June, 2023",
        },
        "qa": [
            {
                "question": "What is the name of Ann's cat?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What instrument does Bo play?",
                "answer": "violin",
                "evidence": ["D1:2; D2:1"],
                "category": 1,
            },
            {
                "question": "Where does Ann's brother live?",
                "answer": "Lisbon",
                "evidence": ["D9:99"],
                "category": 4,
            },
            {
                "question": "What did Bo say about Mars?",
                "adversarial_answer": "x",
                "evidence": ["D1:2"],
                "category": 5,
            },
        ],
    }


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "locomo.json").write_text(json.dumps([_sample()]))
    (folder / "PROVENANCE.md").write_text("# not a transcript\n")
    return folder


def test_gold_ids_split_entries_that_name_several_turns() -> None:
    assert gold_ids(["D1:3"], "locomo:c") == ["locomo:c:D1:3"]
    assert gold_ids(["D8:6; D9:17", "D8:6", "D"], "locomo:c") == [
        "locomo:c:D8:6",
        "locomo:c:D9:17",
    ]
    assert gold_ids("D2:1", "locomo:c") == ["locomo:c:D2:1"]


def test_recall_is_the_share_of_gold_turns_in_the_first_k() -> None:
    result = QuestionResult("c", "q", 1, gold=("a", "b"), search=("x", "a", "y"), baseline=())
    assert result.recall("search", 1) == 0
    assert result.recall("search", 2) == 0.5
    assert result.recall("baseline", 10) == 0


def test_a_small_dataset_is_imported_indexed_searched_and_scored(mini: Path) -> None:
    report = evaluate_locomo(mini, encoder=None)
    assert report.mode == "full_text"
    assert report.documents == 5
    # Category 5 is left out; a question whose evidence names no turn is counted apart.
    assert [q.category for q in report.questions] == [4, 1]
    assert report.without_evidence == 1
    cat, violin = report.questions
    assert cat.gold == ("locomo:mini:D1:1",)
    assert cat.search[0] == "locomo:mini:D1:1"
    assert violin.gold == ("locomo:mini:D1:2", "locomo:mini:D2:1")
    metrics = report.metrics()
    assert metrics["overall"]["questions"] == 2
    assert metrics["4 single-hop"]["search"]["recall@5"] == 1.0
    assert metrics["3 open-domain"]["search"]["recall@5"] is None
    assert set(report.by_conversation()) == {"locomo:mini"}


def test_eval_locomo_prints_recall_by_category_beside_the_baseline(mini: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", "locomo", "--data", str(mini), "--full-text"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "LoCoMo · 2 questions · 5 turns · search: full text only" in result.output
    assert "baseline @10" in result.output
    assert "1 question(s) name no turn of their conversation" in result.output
    data = json.loads(
        CliRunner()
        .invoke(cli, ["eval", "locomo", "--data", str(mini), "--full-text", "--json"])
        .output
    )
    assert data["metrics"]["overall"]["search"]["recall@10"] == 1.0
    assert data["questions"][0]["search"][0] == "locomo:mini:D1:1"


# -- the development split -------------------------------------------------------------


SAMPLE_ON_POSTGRES = 190
"""Questions the PostgreSQL pass of ``make test`` scores: a quarter of the split's 760, spread
evenly over it (``limit``: every conversation and category keeps its share), the whole split
still imported and indexed. The searches are most of the evaluation's time (760 hybrid ones
took 54 s of the PostgreSQL pass, the whole file 75 s); the SQLite pass scores all 760. What
PostgreSQL changes is the store under the same ranking code: full text ranked by ts_rank
instead of FTS5's bm25, vectors and dates read through its own SQL; the sample proves that
path finds the evidence, against floors measured on the same sample."""


def _limit() -> int | None:
    return SAMPLE_ON_POSTGRES if ON_POSTGRES else None


@pytest.fixture(scope="module")
def encoder() -> CachedEncoder | None:
    """The sentence encoder when the embeddings extra is installed (None: full text only).
    Embedding every turn takes a minute or more, so the vectors are kept between runs
    (``embedding_cache``: the same vectors the encoder gives, keyed by the model's
    fingerprint and each text); the second pass of ``make test`` and later runs reuse
    them."""
    inner = load_encoder()
    if inner is None:
        return None
    from tests.evals.embedding_cache import CachedEncoder

    return CachedEncoder.around(inner)


@pytest.fixture(scope="module")
def imported(datasets_dir: Path, encoder: CachedEncoder | None) -> Iterator[ImportedLocomo]:
    """The development split imported and indexed once for the module's tests: the hybrid
    search and the full text alone search the same index."""
    with imported_locomo(datasets_dir / "locomo", encoder=encoder) as done:
        yield done


@pytest.fixture(scope="module")
def development(imported: ImportedLocomo, encoder: CachedEncoder | None) -> LocomoReport:
    """Hybrid when the embeddings extra is installed."""
    report = score_locomo(imported, encoder=encoder, limit=_limit())
    if encoder is not None:
        encoder.save()
    return report


def _recall(slice_: dict[str, Any], method: str) -> float:
    value = slice_[method]["recall@10"]
    assert isinstance(value, float)
    return value


@pytest.mark.shared
@pytest.mark.slow
def test_search_beats_the_plain_full_text_baseline_on_the_development_split(
    development: LocomoReport,
) -> None:
    assert development.mode == ("hybrid" if missing_embeddings() is None else "full_text")
    metrics = development.metrics()
    assert metrics["overall"]["questions"] == (SAMPLE_ON_POSTGRES if ON_POSTGRES else 760)
    overall = metrics["overall"]
    assert _recall(overall, "search") > _recall(overall, "baseline") + 0.15
    # Hybrid 0.822 on SQLite (the default store); on PostgreSQL, whose full text ranks with
    # ts_rank rather than FTS5's bm25, 0.814 was measured over all 760 questions (0.809 and
    # 0.7999 before the asking share and the name-free query embedding, issue 20), 0.820 over
    # its sample (SQLite 0.848 over the same questions; the baseline 0.616).
    hybrid_floor = 0.805 if ON_POSTGRES else 0.815
    assert _recall(overall, "search") >= (hybrid_floor if development.mode == "hybrid" else 0.77)
    # Date-aware ranking (search/_temporal.py): questions about time find the turn that
    # says when (0.90 before it, 0.928 with it; 0.921 on PostgreSQL, 0.978 over its sample).
    if development.mode == "hybrid":
        assert _recall(metrics["2 temporal"], "search") >= (0.95 if ON_POSTGRES else 0.92)
        # Multi-hop questions gained most from the name-free query embedding (0.487 before;
        # 0.542 on SQLite, 0.523 on PostgreSQL; 0.457 on PostgreSQL's sample, SQLite 0.485
        # over the same questions, the baseline 0.284).
        assert _recall(metrics["1 multi-hop"], "search") >= (0.44 if ON_POSTGRES else 0.51)
    for name, slice_ in metrics.items():
        assert _recall(slice_, "search") > _recall(slice_, "baseline"), name
    # The weights were chosen on the first two conversations; the others must hold too: by
    # 0.1 over all 760 questions. A sample's few dozen per conversation are too few for that
    # margin (PostgreSQL's conv-43: 0.759 against the baseline's 0.663); there each must
    # still beat the baseline.
    margin = 0.0 if ON_POSTGRES else 0.1
    for conversation, slice_ in development.by_conversation().items():
        assert _recall(slice_, "search") > _recall(slice_, "baseline") + margin, conversation


@pytest.mark.slow
@pytest.mark.shared
def test_full_text_search_alone_beats_the_baseline_on_the_development_split(
    imported: ImportedLocomo,
) -> None:
    report = score_locomo(imported, encoder=None, limit=_limit())
    overall = report.metrics()["overall"]
    assert report.mode == "full_text"
    assert overall["questions"] == (SAMPLE_ON_POSTGRES if ON_POSTGRES else 760)
    # 0.795 on SQLite over all 760 questions, 0.809 on PostgreSQL over its sample.
    assert _recall(overall, "search") >= 0.75
    assert _recall(overall, "search") > _recall(overall, "baseline") + 0.15
