"""Import a corpus into a SQLite file with one tree, then compare two such files.

Run the import once with each tree (``PYTHONPATH`` pointing at it), then compare every
import table row by row (``tests/ingest/stored_tables.py``: the clock, random ids and
the importing process are left out, everything else is compared as stored):

    PYTHONPATH=/tmp/base/src python bench/ingest_same_rows.py import /tmp/a.db bench/.corpus/50mb
    PYTHONPATH=src python bench/ingest_same_rows.py import /tmp/b.db bench/.corpus/50mb
    PYTHONPATH=src python bench/ingest_same_rows.py compare /tmp/a.db /tmp/b.db

``compare`` prints each table's row count and whether it matched, and exits 1 when a
table differs (naming the first differing row).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    """Import into a fresh file, or compare two files."""
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    into = commands.add_parser("import")
    into.add_argument("db", type=Path)
    into.add_argument("paths", nargs="+", type=Path)
    into.add_argument("--jobs", type=int, default=1)
    both = commands.add_parser("compare")
    both.add_argument("first", type=Path)
    both.add_argument("second", type=Path)
    args = parser.parse_args()
    if args.command == "import":
        from proctor.ingest import ingest
        from proctor.store import open_store

        if args.db.exists():
            raise SystemExit(f"{args.db} exists: give a new file")
        store = open_store(args.db)
        report = ingest(store, args.paths, jobs=args.jobs)
        store.close()
        print(f"{report.conversations} conversations, {len(report.errors)} errors")
        return
    from tests.ingest.stored_tables import stored_tables

    first, second = stored_tables(args.first), stored_tables(args.second)
    differ = False
    for table, rows in first.items():
        other = second[table]
        same = rows == other
        differ = differ or not same
        print(f"{table:16} {len(rows):>8} rows  {'same' if same else 'DIFFERENT'}")
        if not same:
            for index, (one, two) in enumerate(zip(rows, other, strict=False)):
                if one != two:
                    print(f"  first difference, row {index}:\n  {one!r:.400}\n  {two!r:.400}")
                    break
            else:
                print(f"  {len(rows)} rows against {len(other)}")
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
