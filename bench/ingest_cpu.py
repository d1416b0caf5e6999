"""CPU seconds of one ``proctor.ingest.ingest`` run, for comparing two trees in turn.

Imports a small file first (imports and compiled statements warm), then the corpus into
a fresh SQLite file, and prints the CPU time of this process (its threads included) and
of its worker processes, the cores they kept busy on average (CPU seconds over wall
seconds: how well the work was spread), and the peak RSS of each (the importer's includes the warm-up). Run it alternately with ``PYTHONPATH`` pointing at each tree:

    PYTHONPATH=/tmp/base/src python bench/ingest_cpu.py bench/.corpus/50mb --jobs 2
    PYTHONPATH=src python bench/ingest_cpu.py bench/.corpus/50mb --jobs 2
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
WARM = SHARED / "transcripts/claude-code/marot-spotter/short.jsonl"


def main() -> None:
    """Warm up, import the corpus, print the CPU seconds and the load average."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path)
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
    from proctor.ingest import _reading, ingest
    from proctor.store import open_store

    if args.importer_reads or args.all_workers:
        _reading.IMPORTER_IS_A_READER = not args.all_workers

    with tempfile.TemporaryDirectory() as tmp:
        warm = open_store(Path(tmp) / "warm.db")
        ingest(warm, [WARM], jobs=1)
        warm.close()
        store = open_store(Path(tmp) / "bench.db")
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        cpu, wall = time.process_time(), time.perf_counter()
        report = ingest(store, [args.corpus], jobs=args.jobs)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        workers = resource.getrusage(resource.RUSAGE_CHILDREN)
        store.close()
    worker_cpu = workers.ru_utime + workers.ru_stime
    print(
        f"load {load}: importer {cpu:.2f} CPU s, workers "
        f"{worker_cpu:.2f} CPU s, {wall:.2f} s wall, {(cpu + worker_cpu) / wall:.2f} cores busy, "
        f"{report.conversations} conversations, {len(report.errors)} errors; peak RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB importer, "
        f"{workers.ru_maxrss / 1024:.0f} MB largest worker"
    )


if __name__ == "__main__":
    main()
