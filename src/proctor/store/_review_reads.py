"""The review repository's reads, without its writes: what a read-only store holds.

``ReviewStore`` (``_review_store.py``) holds both; this class forwards only its reads to
one over the same database, so a read-only store's ``repos.reviews`` has no write method.
"""

from __future__ import annotations

from proctor.store._base import Database, forward
from proctor.store._review_store import ReviewStore


class ReviewReads:
    """Review runs, manifests, batches and the slot: the reads (``ReviewReader``)."""

    def __init__(self, database: Database) -> None:
        self._reviews = ReviewStore(database)

    review_run = forward("_reviews", ReviewStore.review_run)
    review_runs = forward("_reviews", ReviewStore.review_runs)
    review_slot_holder = forward("_reviews", ReviewStore.review_slot_holder)
    review_slot_held = forward("_reviews", ReviewStore.review_slot_held)
    manifest_page = forward("_reviews", ReviewStore.manifest_page)
    review_batch_input = forward("_reviews", ReviewStore.review_batch_input)
    review_batches = forward("_reviews", ReviewStore.review_batches)
    manifest_counts = forward("_reviews", ReviewStore.manifest_counts)
    done_manifest = forward("_reviews", ReviewStore.done_manifest)
    done_sources = forward("_reviews", ReviewStore.done_sources)
    checkpoint_count = forward("_reviews", ReviewStore.checkpoint_count)
    scope_span = forward("_reviews", ReviewStore.scope_span)
    review_conversations = forward("_reviews", ReviewStore.review_conversations)
    source_contents = forward("_reviews", ReviewStore.source_contents)
