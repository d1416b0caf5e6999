"""CPU seconds of the import's writes alone, for comparing two trees in turn.

Reads and prepares every unit of a corpus once (in memory), then writes them all into a
fresh SQLite file through the import's batches (``Store.import_batch``), ``--repeat``
times, and prints the least CPU time (``time.process_time``) of a write pass and of the
whole reading and preparing: the least of several passes is what the code costs, the
others what the shared machine added. Run it alternately with ``PYTHONPATH`` pointing
at each tree:

    PYTHONPATH=/tmp/base/src python bench/ingest_write.py bench/.corpus/50mb
    PYTHONPATH=src python bench/ingest_write.py bench/.corpus/50mb
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    """Prepare once, write ``--repeat`` times, print the least CPU seconds of each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from proctor.ingest._reading import read_prepared
    from proctor.sources._detect import plan_import
    from proctor.sources._registry import default_adapters
    from proctor.store import open_store
    from proctor.transcript import PreparedBundle

    plan = plan_import([args.corpus], default_adapters())
    reads: list[float] = []
    bundles: list[PreparedBundle] = []
    for _ in range(2):
        start = time.process_time()
        bundles = [
            item
            for adapter, unit in plan.units
            for item in read_prepared(adapter, unit, None)
            if isinstance(item, PreparedBundle)
        ]
        reads.append(time.process_time() - start)
    writes: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.repeat):
            store = open_store(Path(tmp) / f"write{number}.db")
            start = time.process_time()
            with store.import_batch() as batch:
                for prepared in bundles:
                    batch.write_conversation(prepared)
            writes.append(time.process_time() - start)
            store.close()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"load {load}: {len(bundles)} conversations; read+prepare {min(reads):.3f} CPU s "
        f"(least of {len(reads)}), write {min(writes):.3f} CPU s (least of {len(writes)}; "
        + ", ".join(f"{w:.3f}" for w in writes)
        + ")"
    )


if __name__ == "__main__":
    main()
