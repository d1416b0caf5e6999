"""Instructions one import pass executes, for comparing two trees on a loaded machine.

CPU seconds on a shared machine move by ±15 % between identical runs; the instructions
a pass executes do not. This runs a one-process import of the corpus under valgrind's
cachegrind (no cache simulation) once with one pass and once with two, for each tree;
the difference is one pass without the interpreter's start and imports. ``--work read``
counts the workers' part only (each unit's digest, read, prepared and turned to rows);
``--work import`` the whole import into a fresh SQLite file (``ingest(..., jobs=1)``).

    python bench/ingest_instructions.py bench/.corpus/10mb --baseline-src /tmp/base/src
    python bench/ingest_instructions.py bench/.corpus/10mb --work read --baseline-src /tmp/base/src

An instruction of a byte loop (``bytes.translate``, a hash) costs less time than one of
the interpreter, so the ratio is a guide, not the CPU ratio; each run of the 10 MB corpus
takes about half a minute. Valgrind runs SHA-256 (the unit digest) without the CPU's SHA
instructions, in several times the instructions it takes natively: ``--work
read-no-digest`` leaves the digests out of a ``read`` pass (time them apart).

``--work workers`` asks what reading in worker processes costs over reading in the
importing process: it counts a one-process import (``jobs=1``), an import with two
workers (``jobs=2``, each process counted on its own: valgrind follows forks), one with
one worker and the importer counted among the readers (``IMPORTER_IS_A_READER``) and the
same import stopped where the workers would be forked; a forked process's count starts
from its parent's, so that share is taken off each. What is left is the work after the
plan, in one process and spread over three.

    python bench/ingest_instructions.py bench/.corpus/10mb --work workers
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def passes(corpus: Path, count: int, work: str) -> None:
    """The measured work, ``count`` times (run under valgrind by ``main``)."""
    gc.set_threshold(50_000, 20, 100)  # as an import sets it (``fewer_collections``)
    if work in ("workers", "workers-1", "workers-fork", "workers-mixed"):
        _import_with_workers(corpus, work)
        return
    if work in ("read", "read-no-digest"):
        from proctor.ingest._reading import read_rows, unit_digest
        from proctor.sources import default_adapters, plan_import

        plan = plan_import([corpus], default_adapters())
        for _ in range(count):
            for adapter, unit in plan.units:
                if work == "read":
                    unit_digest(unit)
                list(read_rows(adapter, unit, None))
        return
    from proctor.ingest import ingest
    from proctor.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        for number in range(count):
            store = open_store(Path(tmp) / f"pass{number}.db")
            ingest(store, [corpus], jobs=1)
            store.close()


def _import_with_workers(corpus: Path, work: str) -> None:
    """One import with two workers; ``workers-1``: in one process; ``workers-fork``: stop
    (``os._exit``) where the workers would be forked, for the count they start from;
    ``workers-mixed``: ``jobs=2`` with the importer counted among the readers (one
    worker, ``IMPORTER_IS_A_READER``)."""
    from proctor.ingest import _reading, ingest
    from proctor.store import open_store

    if work == "workers-mixed":
        setattr(_reading, "IMPORTER_IS_A_READER", True)  # noqa: B010 - absent in older trees

    if work == "workers-fork":

        class _Stop:
            def __init__(self, *args: object, **kwargs: object) -> None:
                os._exit(0)

        # Trees before the readers' own pipes started a ProcessPoolExecutor there.
        setattr(_reading, "ProcessPoolExecutor", _Stop)  # noqa: B010 - stop at the fork
        setattr(_reading, "Readers", _Stop)  # noqa: B010 - stop at the fork
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "workers.db")
        ingest(store, [corpus], jobs=1 if work == "workers-1" else 2)
        store.close()


def _under_valgrind(
    src: Path, corpus: Path, count: int, work: str
) -> subprocess.CompletedProcess[str]:
    """This script's ``--run count --work work`` under cachegrind, ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0")
    command = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--run",
        str(count),
        "--work",
        work,
        str(corpus),
    ]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True)


def _per_process(src: Path, corpus: Path, work: str) -> list[int]:
    """Instructions of each process of one ``--run 1`` (the first: the one started)."""
    done = _under_valgrind(src, corpus, 1, work)
    counts: dict[int, int] = {}
    for found in re.finditer(r"==(\d+)== I\s+refs:\s+([\d,]+)", done.stderr):
        counts[int(found.group(1))] = int(found.group(2).replace(",", ""))
    if not counts:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    started = re.search(r"==(\d+)== Command:", done.stderr)
    first = int(started.group(1)) if started else min(counts)
    return [counts.pop(first), *counts.values()]


def workers_report(src: Path, corpus: Path) -> None:
    """Print the ``--work workers`` split (module docstring)."""
    [alone] = _per_process(src, corpus, "workers-1")
    [forked] = _per_process(src, corpus, "workers-fork")
    parent, *workers = _per_process(src, corpus, "workers")
    one = alone - forked
    print(f"{src}: before the fork {forked:,} instructions")
    print(f"  one process, after it: {one:,}")
    spread = [parent - forked, *(count - forked for count in workers)]
    print(
        f"  two workers, after it: {sum(spread):,} (importer {spread[0]:,}, workers "
        + ", ".join(f"{count:,}" for count in spread[1:])
        + f"): {sum(spread) / one:.3f}x one process"
    )
    parent, *workers = _per_process(src, corpus, "workers-mixed")
    spread = [parent - forked, *(count - forked for count in workers)]
    print(
        f"  one worker, the importer a reader: {sum(spread):,} (importer {spread[0]:,}, "
        "worker "
        + ", ".join(f"{count:,}" for count in spread[1:])
        + f"): {sum(spread) / one:.3f}x one process"
    )


def instructions(src: Path, corpus: Path, count: int, work: str) -> int:
    """Instructions of ``count`` passes with ``src`` first on the path, start included."""
    done = _under_valgrind(src, corpus, count, work)
    found = _REFS.search(done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    """Count one pass for this tree and, given one, the baseline tree; print both."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path)
    parser.add_argument(
        "--work",
        choices=[
            "read",
            "read-no-digest",
            "import",
            "workers",
            "workers-1",
            "workers-fork",
            "workers-mixed",
        ],
        default="import",
        help="read-no-digest: a read pass without the unit digests; workers: the cost of "
        "worker processes (see above)",
    )
    parser.add_argument("--src", type=Path, default=REPO / "src")
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        passes(args.corpus, args.run, args.work)
        return
    work = args.work
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    if work == "workers":
        for src in (args.baseline_src, args.src):
            if src is not None:
                workers_report(src, args.corpus)
        return
    trees = [("this tree", args.src)]
    if args.baseline_src is not None:
        trees.insert(0, ("baseline", args.baseline_src))
    per_pass: dict[str, int] = {}
    for name, src in trees:
        one = instructions(src, args.corpus, 1, work)
        two = instructions(src, args.corpus, 2, work)
        per_pass[name] = two - one
        print(f"{name:<10} {src}: {per_pass[name]:,} instructions per {work} pass")
    if len(per_pass) == 2:
        ratio = per_pass["this tree"] / per_pass["baseline"]
        print(f"this tree / baseline: {ratio:.3f}")


if __name__ == "__main__":
    main()
