"""Digest of every row an import stores, to show an import change stores the same rows.

Imports the given folders into a fresh SQLite file (with the given worker count), then
imports them again with ``force`` (every unit re-read and compared with what is
stored), and prints one hash per import table. Run it with the code before and after a
change (``PYTHONPATH`` pointing at the other tree) and compare the output:

    python bench/ingest_rows.py ../shared/transcripts bench/.corpus/20mb --jobs 2

Clock values, random ids and the importing process are left out, as
``tests/ingest/stored_tables.py`` describes (it is the one list of what is compared).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    """Import, import again with force, print the digest of each table as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--importer-reads",
        action="store_true",
        help="Count the importing process among the readers (jobs - 1 workers; the default "
        "now, kept for older trees).",
    )
    parser.add_argument(
        "--all-workers",
        action="store_true",
        help="Start jobs workers beside the importer (the default until this was measured).",
    )
    args = parser.parse_args()
    from tests.ingest.stored_tables import digest, stored_tables

    from proctor.ingest import _reading, ingest
    from proctor.store import open_store

    if args.importer_reads or args.all_workers:
        _reading.IMPORTER_IS_A_READER = not args.all_workers
    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "rows.db"
        store = open_store(db)
        ingest(store, args.paths, jobs=args.jobs)
        out["first"] = digest(stored_tables(db))
        ingest(store, args.paths, jobs=args.jobs, force=True)
        out["forced"] = digest(stored_tables(db))
        store.close()
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
