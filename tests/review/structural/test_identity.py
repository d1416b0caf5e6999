"""REV-3 for structural entities: exact locators decide identity, names never do."""

from __future__ import annotations

from pathlib import Path

from proctor.graph import BatchFacts, structural_entity_id
from proctor.review._batch import SourceBatch
from proctor.review.structural import extract_structural
from proctor.store import Store
from tests.conftest import EXAMPLES_DIR
from tests.review.structural.helpers import CLAUDE_MAIN, batch_of, import_into

CLAUDE_DIR = EXAMPLES_DIR / "claude-code"


def ids_by_locator(facts: BatchFacts) -> dict[tuple[str, str | None], str]:
    return {(e.kind, e.identity_key): e.entity_id for e in facts.entities}


def split(batch: SourceBatch, first_source_id: str) -> tuple[SourceBatch, SourceBatch]:
    """The batch cut in two before ``first_source_id``, like two batches of one run."""
    cut = next(i for i, s in enumerate(batch.sources) if s.source_id == first_source_id)
    head = SourceBatch(batch.run_id, 1, batch.scope_key, batch.sources[:cut],
                       batch.conversations, batch.projects, batch.subagent_runs)  # fmt: skip
    tail = SourceBatch(batch.run_id, 2, batch.scope_key, batch.sources[cut:],
                       batch.conversations, batch.projects, batch.subagent_runs)  # fmt: skip
    return head, tail


def test_the_same_path_in_two_batches_is_the_same_file_entity(examples_store: Store) -> None:
    batch = batch_of(examples_store, [CLAUDE_MAIN])
    # invoice/totals.py is read in the first half and edited in the second.
    first, second = split(batch, "cc:tool:toolu_01vL4XwGBjzGRY7dLErfxQ5G")
    read, edited = extract_structural(first), extract_structural(second)
    (read_file,) = [e for e in read.entities if e.identity_key == "invoice/totals.py"]
    (edited_file,) = [e for e in edited.entities if e.identity_key == "invoice/totals.py"]
    assert read_file.entity_id == edited_file.entity_id
    assert {e.kind for e in read.events if read_file.entity_id in e.entity_ids} == {"file_read"}
    assert {e.kind for e in edited.events if edited_file.entity_id in e.entity_ids} == {"file_edit"}
    source_ids = {s.source_id for s in first.sources}
    assert {r.source_id for r in read_file.sources} <= source_ids
    assert not {r.source_id for r in edited_file.sources} & source_ids


def test_the_same_locator_in_another_project_is_another_entity(tmp_path: Path) -> None:
    alpha = import_into(tmp_path / "alpha.db", CLAUDE_DIR, project="alpha")
    beta = import_into(tmp_path / "beta.db", CLAUDE_DIR, project="beta")
    facts = [extract_structural(batch_of(store, [CLAUDE_MAIN])) for store in (alpha, beta)]
    in_alpha, in_beta = map(ids_by_locator, facts)
    assert in_alpha.keys() == in_beta.keys()
    for locator, entity_id in in_alpha.items():
        assert in_beta[locator] != entity_id, locator  # same locator and name, other project
    (alpha_project,) = {e.project_id for e in facts[0].entities}
    assert in_alpha["file", "invoice/totals.py"] == structural_entity_id(
        alpha_project, "file", "invoice/totals.py"
    )


def test_entity_ids_follow_the_locator_not_the_display_name(
    examples_facts: BatchFacts,
) -> None:
    # Two distinct commands can share a shortened display name; identity is the full line.
    for entity in examples_facts.entities:
        assert entity.identity_key is not None
        assert entity.entity_id == structural_entity_id(
            entity.project_id, entity.kind, entity.identity_key
        )
    keys = [(e.project_id, e.kind, e.identity_key) for e in examples_facts.entities]
    assert len(keys) == len(set(keys))


def test_extracting_a_batch_twice_gives_the_same_facts_and_survives_json(
    examples_batch: SourceBatch, examples_facts: BatchFacts
) -> None:
    again = extract_structural(examples_batch)
    assert again == examples_facts
    assert BatchFacts.from_json(examples_facts.to_json()) == examples_facts
