"""Ingest throughput and peak memory, Proctor vs. claude-code-log, on the same files.

Builds a corpus by repeating real Claude Code session files (ids rewritten per copy so
every copy is a distinct session), then runs, each in its own process so peak memory is
its own:

- ``claude-code-log`` parse only: ``claude_code_log.converter.load_transcript`` per file;
- ``claude-code-log`` directory load: ``load_directory_transcripts`` per project folder
  (parse, dedupe and build the session DAG — what it does before rendering);
- ``proctor`` parse **and store**: ``proctor.ingest.ingest`` into a fresh SQLite file, once
  in one process and once with its default worker processes (the importing process one
  of the ``jobs`` readers: ``jobs - 1`` workers, ``proctor.ingest._reading.
  IMPORTER_IS_A_READER``). Peak memory of a run is its own peak plus its largest worker's.
  ``--compare-workers`` adds a run with the other setting (``jobs`` workers beside the
  importer), alternated with the default in every round, and prints its ratio too: the
  measurement that decides that default.

Both rates use the same numerator — the transcript entries claude-code-log parses from the
corpus — so the ratio compares time for the same input. Targets (issue 18): Proctor with
its default workers ≥ 1.0× claude-code-log's parse-only rate at 200 MB and 1 GB, in the
same run; Proctor peak RSS < 300 MB on a 1 GB corpus. Each run also reports the CPU
seconds it used (its own and its workers'), and the load average is printed before and
after: on a shared machine the wall time says how much of the CPU the run got, the CPU
seconds how much work it did.

    python bench/ingest.py                 # 200 MB corpus
    python bench/ingest.py --size-mb 1024  # the memory target
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
SAMPLES = [
    SHARED / "transcripts/claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    SHARED / "transcripts/claude-code/marot-spotter/tool_heavy.jsonl",
    SHARED / "transcripts/claude-code/marot-spotter/short.jsonl",
    SHARED
    / "transcripts/claude-code/claude-code-log/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    SHARED
    / "transcripts/claude-code/claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl",
    SHARED
    / "transcripts/claude-code/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/b25638d7-b104-4f06-a797-70ac33d069ed.jsonl",
    SHARED
    / "transcripts/claude-code/claude-code-log/real_projects/-src-experiments-claude_p/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl",
]
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PROVIDER_ID = re.compile(rb"\b(msg_|toolu_|req_)([A-Za-z0-9]{6,})")
_SESSION_ID = re.compile(
    rb'"sessionId":\s*"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"'
)
CORPUS_LAYOUT = 2
"""How ``build_corpus`` names its copies (2: ``<sessionId>.jsonl``); the default corpus
folder carries it (``bench/.corpus/v2-200mb``), so a corpus built the earlier way
(``bench/.corpus/200mb``) is neither reused nor overwritten."""


def build_corpus(target: Path, size_mb: int) -> tuple[int, int]:
    """Write copies of the samples until ``size_mb``; return (files, bytes)."""
    marker = target / ".complete"
    if marker.exists():
        files = sorted(target.rglob("*.jsonl"))
        return len(files), sum(f.stat().st_size for f in files)
    target.mkdir(parents=True, exist_ok=True)
    sources = [p.read_bytes() for p in SAMPLES if p.exists()]
    if not sources:
        raise SystemExit(f"no sample files under {SHARED}; set PROCTOR_SHARED_DIR")
    written = files = copy = 0
    while written < size_mb * 1024 * 1024:
        tag = f"{copy:08x}".encode()
        for data in sources:
            # A distinct session per copy: new uuids, new provider ids.
            data = _UUID.sub(lambda m, t=tag: t + m.group(0)[8:], data)
            data = _PROVIDER_ID.sub(lambda m, t=tag: m.group(1) + t + m.group(2), data)
            folder = target / f"proj-{copy % 50:02d}"
            folder.mkdir(exist_ok=True)
            # Named as Claude Code names a session file: ``<sessionId>.jsonl`` (each
            # sample holds one session; the copy's id is new). Corpora before
            # ``CORPUS_LAYOUT`` 2 were named ``<first uuid>-<n>.jsonl``, which is no
            # session's id, so planning read ~30 head records per file to tell its role.
            session = _SESSION_ID.search(data)
            if session is not None:
                name = session.group(1).decode() + ".jsonl"
            else:
                first = _UUID.search(data)
                name = (first.group(0).decode() if first else f"s{files}") + f"-{files}.jsonl"
            (folder / name).write_bytes(data)
            written += len(data)
            files += 1
        copy += 1
    marker.write_text("ok")
    return files, written


def _peak_rss_mb() -> float:
    """Peak resident memory of this process plus its largest worker process, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + workers) / 1024


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished worker processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_peer(corpus: Path) -> dict[str, float]:
    """claude-code-log: parse every file, count the entries it returns."""
    from claude_code_log.converter import load_transcript

    files = sorted(corpus.rglob("*.jsonl"))
    start = time.perf_counter()
    entries = 0
    for path in files:
        entries += len(load_transcript(path, silent=True))
    elapsed = time.perf_counter() - start
    return {
        "entries": entries,
        "seconds": elapsed,
        "cpu_s": _cpu_seconds(),
        "peak_rss_mb": _peak_rss_mb(),
    }


def run_peer_directories(corpus: Path) -> dict[str, float]:
    """claude-code-log: load each project folder (parse, dedupe, session DAG), as it does before rendering."""
    from claude_code_log.converter import load_directory_transcripts

    folders = sorted(p for p in corpus.iterdir() if p.is_dir())
    start = time.perf_counter()
    entries = 0
    for folder in folders:
        messages, _tree = load_directory_transcripts(folder, silent=True)
        entries += len(messages)
    elapsed = time.perf_counter() - start
    return {
        "entries": entries,
        "seconds": elapsed,
        "cpu_s": _cpu_seconds(),
        "peak_rss_mb": _peak_rss_mb(),
    }


OTHER_WORKERS = "jobs workers beside the importer"
"""The run ``--compare-workers`` adds (``IMPORTER_IS_A_READER`` off)."""


def run_proctor(corpus: Path, jobs: int | None, other_workers: bool = False) -> dict[str, float]:
    """Proctor: detect, parse, redact, fingerprint and store every file (``other_workers``:
    with the other setting of ``IMPORTER_IS_A_READER`` than the default)."""
    from proctor.ingest import _reading, ingest
    from proctor.store import open_store

    if other_workers:
        _reading.IMPORTER_IS_A_READER = not _reading.IMPORTER_IS_A_READER

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        start = time.perf_counter()
        report = ingest(store, [corpus], jobs=jobs)
        elapsed = time.perf_counter() - start
        counts = store.counts()
        # Closing waits for the log's last copy into the database file (which the last
        # commit used to make), so the figure holds all the import's work.
        start = time.perf_counter()
        store.close()
        elapsed += time.perf_counter() - start
        db_mb = (Path(tmp) / "bench.db").stat().st_size / 1e6
    return {
        "seconds": elapsed,
        "cpu_s": _cpu_seconds(),
        "peak_rss_mb": _peak_rss_mb(),
        "conversations": report.conversations,
        "messages_stored": counts.messages,
        "tool_calls_stored": counts.tool_calls,
        "errors": len(report.errors),
        "db_mb": db_mb,
    }


PEER_PYTHON = os.environ.get("PROCTOR_BENCH_PEER_PYTHON", sys.executable)
"""The interpreter that runs claude-code-log: this one, or one of a venv of its own
(``PROCTOR_BENCH_PEER_PYTHON=/tmp/ccl-venv/bin/python``) so neither tool's packages
are installed beside the other's."""


def _in_subprocess(
    which: str, corpus: Path, jobs: int | None = None, other_workers: bool = False
) -> dict[str, float]:
    extra = [] if jobs is None else ["--jobs", str(jobs)]
    extra += ["--compare-workers"] if other_workers else []
    python = PEER_PYTHON if which.startswith("peer") else sys.executable
    out = subprocess.run(
        [python, __file__, "--run", which, "--corpus", str(corpus), *extra],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    """Build the corpus, run both tools, print the comparison."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--run", choices=["peer", "peer-dir", "proctor"], help=argparse.SUPPRESS)
    parser.add_argument("--skip-peer", action="store_true", help="Measure Proctor only.")
    parser.add_argument("--jobs", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--compare-workers",
        "--importer-reads",  # its name while the other setting was the default
        dest="compare_workers",
        action="store_true",
        help="Also run Proctor with the other worker setting (jobs workers beside the "
        "importer, where the default counts the importer as one of the jobs readers), "
        "alternated with the default run in every round.",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="Pairs of (claude-code-log parse-only, proctor with workers) runs, alternated; "
        "the ratio is their median (a shared machine's load changes between runs).",
    )
    args = parser.parse_args()
    if args.run:
        runners = {
            "peer": lambda: run_peer(args.corpus),
            "peer-dir": lambda: run_peer_directories(args.corpus),
            "proctor": lambda: run_proctor(args.corpus, args.jobs, args.compare_workers),
        }
        result = runners[args.run]()
        print(json.dumps(result))
        return
    corpus = args.corpus or REPO / "bench" / ".corpus" / f"v{CORPUS_LAYOUT}-{args.size_mb}mb"
    files, size = build_corpus(corpus, args.size_mb)
    print(f"corpus: {files} files, {size / 1e6:.0f} MB at {corpus}")
    print(f"load average before: {_load()} ({os.cpu_count()} CPUs)")
    runs: list[tuple[str, dict[str, float]]] = []
    if not args.skip_peer:
        runs.append(
            ("claude-code-log load_transcript (parse only)", _in_subprocess("peer", corpus))
        )
        runs.append(
            ("claude-code-log load_directory_transcripts", _in_subprocess("peer-dir", corpus))
        )
    runs.append(("proctor, 1 process (parse + store)", _in_subprocess("proctor", corpus, jobs=1)))
    proctor = _in_subprocess("proctor", corpus)
    runs.append(("proctor, default workers (parse + store)", proctor))
    if args.compare_workers:
        mixed = _in_subprocess("proctor", corpus, other_workers=True)
        runs.append((f"proctor, {OTHER_WORKERS}", mixed))
    entries = runs[0][1]["entries"] if not args.skip_peer else proctor["messages_stored"]
    print(f"rates use one numerator: {entries:,.0f} entries claude-code-log parses from the corpus")
    print(f"{'run':<46}{'entries/s':>12}{'seconds':>10}{'CPU s':>8}{'peak MB':>10}")
    for name, result in runs:
        rate = entries / result["seconds"]
        print(
            f"{name:<46}{rate:>12,.0f}{result['seconds']:>10.1f}{result['cpu_s']:>8.1f}"
            f"{result['peak_rss_mb']:>10.0f}"
        )
    if not args.skip_peer:
        ratios = [runs[0][1]["seconds"] / proctor["seconds"]]
        mixed_ratios = [runs[0][1]["seconds"] / mixed["seconds"]] if args.compare_workers else []
        for _ in range(args.repeat - 1):
            peer_again = _in_subprocess("peer", corpus)["seconds"]
            proctor_again = _in_subprocess("proctor", corpus)["seconds"]
            ratios.append(peer_again / proctor_again)
            if args.compare_workers:
                mixed_again = _in_subprocess("proctor", corpus, other_workers=True)["seconds"]
                mixed_ratios.append(peer_again / mixed_again)
        for label, values in (("default workers", ratios), (OTHER_WORKERS, mixed_ratios)):
            if not values:
                continue
            shown = ", ".join(f"{r:.2f}" for r in values)
            print(
                f"ratio proctor ({label}) / claude-code-log parse-only: "
                f"{statistics.median(values):.2f}x"
                + (f" (median of {shown})" if len(values) > 1 else "")
            )
    print(f"load average after: {_load()}")
    print(
        f"proctor stored {proctor['conversations']:.0f} conversations, "
        f"{proctor['messages_stored']:.0f} messages, {proctor['tool_calls_stored']:.0f} tool calls "
        f"({proctor['db_mb']:.0f} MB database, {proctor['errors']:.0f} errors)"
    )


if __name__ == "__main__":
    main()
