"""``python -m proctor.search``: the detached indexer ``hand_off_indexing`` starts.

Opens the store it was handed (``PROCTOR_INDEX_SQLITE``, else the configured one), takes
the store's indexer lock (another indexer holds it: nothing to do), brings the full text
up to date, builds the common words' postings when due (``_postings.py``), embeds every
document without a vector, and exits. ``--progress`` prints a line per written chunk
(``embedded N of M``) for whoever watches; otherwise nothing is printed (nobody is
reading). Killed at any point, it leaves whole chunks behind.
"""

from __future__ import annotations

import argparse
import os
import sys

from proctor.errors import ProctorError
from proctor.search._embed import embed_pending
from proctor.search._encoder import load_encoder
from proctor.search._handoff import SQLITE_VARIABLE, IndexerLock
from proctor.search._index import index_full_text
from proctor.search._postings import refresh_postings
from proctor.store import open_store


def main(argv: list[str] | None = None) -> int:
    """Index to the end and exit: 0 (also when another indexer is at work), 1 when the
    store could not be opened or indexing failed."""
    parser = argparse.ArgumentParser(prog="python -m proctor.search")
    parser.add_argument("--progress", action="store_true", help="print a line per chunk")
    args = parser.parse_args(argv)
    try:
        store = open_store(os.environ.get(SQLITE_VARIABLE) or None)
    except ProctorError:
        return 1
    lock = IndexerLock(store)
    try:
        if not lock.acquire():
            return 0
        index_full_text(store)
        refresh_postings(store)
        encoder = load_encoder()
        if encoder is None:
            return 0

        def show(done: int, total: int) -> None:
            if args.progress:
                print(f"embedded {done} of {total}", flush=True)

        embed_pending(store, encoder, progress=show)
    except ProctorError as exc:
        print(f"search indexing failed: {exc}", file=sys.stderr)
        return 1
    finally:
        lock.release()
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
