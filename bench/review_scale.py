"""Reviews at the scale of a real store, side by side with an earlier revision (issue 18).

On the 200 MB corpus of ``bench/ingest.py`` (~41,600 sources), each side in its own
process, alternating (baseline, current, baseline, current …) so both see the same load:

- **first review**: a structural review of the whole store, in sources per second
  (target ≥ 5,000/s);
- **no-change review**: the review right after it, in process (``start_review``) and as
  a whole ``proctor review run --no-model`` process (target < 0.5 s wall), with the number
  of modules that process imported;
- **publish** of a synthetic 9,520-fact draft into the reviewed store (target < 0.5 s).

The baseline is another git revision's ``src/`` (``git archive``), default the commit
before issue 18's review work. The store is ingested once by the baseline (the current
code migrates it on open), cached under ``bench/.cache``, and copied for every run.

    python bench/review_scale.py                       # 200 MB, 2 rounds
    python bench/review_scale.py --corpus-mb 50 --rounds 1
    python bench/review_scale.py --profile first       # the working tree's first review
                                                       # under cProfile (CPU time), once

``--profile first`` (or ``publish``) runs one worker on a copy of the cached store with
the working tree's ``src/`` and prints where its CPU time went (``--profile-out`` keeps
the ``pstats`` file): the cheapest way to see a review at scale without ingesting again.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
BASELINE = "07b981e"
"""The commit before issue 18's review changes."""


def _source_tree(revision: str) -> Path:
    """``src/`` of ``revision``, extracted once under ``bench/.cache`` — or ``revision``
    itself when it is a folder holding ``proctor/`` (a tree of one's own, e.g. a commit's
    ``src/`` with uncommitted files laid over it)."""
    if (Path(revision) / "proctor").is_dir():
        return Path(revision).resolve()
    full = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", revision], capture_output=True, text=True, check=True
    ).stdout.strip()
    target = CACHE / f"src-{full[:12]}"
    if not (target / "src" / "proctor").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", full, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "src"


def _worker(src: Path, home: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{src}:{REPO / 'bench'}", "PROCTOR_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", *args],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"worker {args} with {src} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite store, its write-ahead log included."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _fresh_home(template: Path, into: Path) -> Path:
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    shutil.copy(template, into / "proctor.db")
    return into


def compare(
    corpus_mb: int, rounds: int, baseline: str, current: str | None = None
) -> dict[str, Any]:
    """Alternate baseline and current over copies of one ingested store.

    ``current`` is a revision to compare instead of the working tree (which may hold
    other people's unfinished changes)."""
    old_src = _source_tree(baseline)
    new_src = REPO / "src" if current is None else _source_tree(current)
    template = CACHE / f"review-{corpus_mb}mb-{old_src.parent.name}.db"
    if not template.exists():
        with tempfile.TemporaryDirectory() as tmp:
            built = _worker(old_src, Path(tmp), "ingest", str(corpus_mb))
            _copy_database(Path(tmp) / "proctor.db", template)
        print(f"ingested {built['sources']:,} sources in {built['seconds']:.1f} s", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for side, src in (("baseline", old_src), ("current", new_src)):
                home = _fresh_home(template, Path(tmp) / side)
                first = _worker(src, home, "first")
                cli = [_cli_no_change(src, home) for _ in range(5)]
                floor = [_import_cli(src) for _ in range(5)]
                publish = _worker(src, home, "publish")
                runs[side].append(
                    {
                        **first,
                        "cli_no_change_s": statistics.median(c["seconds"] for c in cli),
                        "cli_no_change_cpu_s": statistics.median(c["cpu"] for c in cli),
                        "cli_modules": cli[-1]["modules"],
                        "import_cli_s": statistics.median(c["seconds"] for c in floor),
                        "import_cli_cpu_s": statistics.median(c["cpu"] for c in floor),
                        "publish_s": publish["seconds"],
                        "publish_cpu_s": publish["cpu"],
                        "publish_facts": publish["facts"],
                    }
                )
                print(f"{side}: {json.dumps(runs[side][-1])}", flush=True)
    return {
        "corpus_mb": corpus_mb,
        "baseline_revision": baseline,
        "current_revision": current or "working tree",
        "load_average": os.getloadavg(),
        **{side: _median(values) for side, values in runs.items()},
    }


def _cli_no_change(src: Path, home: Path) -> dict[str, Any]:
    """One ``proctor review run --no-model`` process over a reviewed store: wall time and
    how many modules it imported (``-X importtime`` lines)."""
    env = {**os.environ, "PYTHONPATH": str(src), "PROCTOR_HOME": str(home)}
    command = [sys.executable, "-X", "importtime", "-c"]
    code = "import sys; from proctor.cli.main import main; sys.argv[0] = 'proctor'; main()"
    start, before = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [*command, code, "review", "run", "--no-model"], env=env, capture_output=True, text=True
    )
    seconds, cpu = time.perf_counter() - start, _children_cpu() - before
    if done.returncode != 0 or "Nothing new" not in done.stdout:
        raise SystemExit(f"no-change review with {src} did not say so:\n{done.stdout}{done.stderr}")
    modules = sum(1 for line in done.stderr.splitlines() if line.startswith("import time:"))
    return {"seconds": seconds, "cpu": cpu, "modules": modules - 1}


def _children_cpu() -> float:
    """User and system CPU of the ended child processes so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _import_cli(src: Path) -> dict[str, float]:
    """``python -c 'import proctor.cli.main'``: the floor a command's process stands on."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    start, before = time.perf_counter(), _children_cpu()
    subprocess.run([sys.executable, "-c", "import proctor.cli.main"], env=env, check=True)
    return {"seconds": time.perf_counter() - start, "cpu": _children_cpu() - before}


def _median(values: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: statistics.median(v[key] for v in values) for key in values[0]}


# -- workers: run in a process whose PYTHONPATH holds one side's src/ -------------------


def _work(kind: str, args: list[str]) -> dict[str, Any]:
    from proctor.store import open_store

    if kind == "ingest":
        from ingest import build_corpus  # bench/ingest.py
        from proctor.heartbeat import set_app_enabled
        from proctor.ingest import ingest

        corpus = REPO / "bench" / ".corpus" / f"{args[0]}mb"
        build_corpus(corpus, int(args[0]))
        store = open_store()
        start = time.perf_counter()
        ingest(store, [corpus])
        seconds = time.perf_counter() - start
        set_app_enabled(store, True)
        sources = store.counts().sources
        store.close()
        return {"seconds": seconds, "sources": sources}
    store = open_store()  # migrated here, before any timing
    try:
        if kind == "first":
            return _first(store)
        if kind == "publish":
            return _publish(store)
    finally:
        store.close()
    raise SystemExit(f"unknown worker {kind!r}")


class _Profiled:
    """cProfile over CPU time around the timed part when ``PROCTOR_BENCH_PROFILE`` names a
    file to write the statistics to; nothing otherwise."""

    def __init__(self) -> None:
        self.path = os.environ.get("PROCTOR_BENCH_PROFILE")
        self.profile: Any = None

    def __enter__(self) -> None:
        if self.path:
            import cProfile

            self.profile = cProfile.Profile(time.process_time)
            self.profile.enable()

    def __exit__(self, *exc: object) -> None:
        if self.profile is not None:
            self.profile.disable()
            self.profile.dump_stats(self.path)


def _first(store: Any) -> dict[str, Any]:
    from proctor.review import ReviewRequest, start_review

    start, cpu = time.perf_counter(), time.process_time()
    with _Profiled():
        run = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if run.status != "completed":
        raise SystemExit(f"the first review ended {run.status}: {run.error}")
    start = time.perf_counter()
    again = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
    no_change = time.perf_counter() - start
    if again.status != "no_change":
        raise SystemExit(f"the second review ended {again.status}, not no_change")
    return {
        "sources": run.sources_total,
        "first_s": seconds,
        "sources_per_s": run.sources_total / seconds,
        "first_cpu_s": cpu,
        "sources_per_cpu_s": run.sources_total / cpu,
        "no_change_s": no_change,
    }


def _publish(store: Any) -> dict[str, Any]:
    from proctor.store import ReviewScope
    from review import synthetic_draft  # bench/review.py

    project_id = store.projects()[0].project_id
    run = store.create_review_run(
        ReviewScope(project_id, None),
        trigger="manual",
        reanalyze=True,
        stages=["structural"],
        batch_size=150,
        batch_chars=60_000,
        connection=None,
        model=None,
    )
    draft = synthetic_draft(project_id, run.run_id, 5_000, 4_000)
    facts = len(draft.entities) + len(draft.events) + len(draft.relations) + 20
    start, cpu = time.perf_counter(), time.process_time()
    with _Profiled():
        store.publish_result(draft, "completed")
    return {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "facts": facts,
    }


def profile(
    corpus_mb: int,
    baseline: str,
    kind: str,
    keep: Path | None,
    top: int,
    current: str | None = None,
) -> None:
    """Run one ``kind`` worker (``first`` or ``publish``) with the working tree's ``src/``
    (or ``current``'s) on a copy of the cached store, under cProfile, and print the top of
    its profile."""
    import pstats

    src = REPO / "src" if current is None else _source_tree(current)

    template = CACHE / f"review-{corpus_mb}mb-{_source_tree(baseline).parent.name}.db"
    if not template.exists():
        raise SystemExit(f"no cached store {template}: run the comparison once first")
    with tempfile.TemporaryDirectory() as tmp:
        home = _fresh_home(template, Path(tmp) / "home")
        if kind == "publish":  # into a reviewed store, as the comparison does
            _worker(src, home, "first")
        out = keep or Path(tmp) / "profile.pstats"
        os.environ["PROCTOR_BENCH_PROFILE"] = str(out)
        try:
            result = _worker(src, home, kind)
        finally:
            del os.environ["PROCTOR_BENCH_PROFILE"]
        print(json.dumps(result))
        stats = pstats.Stats(str(out))
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)


def render(r: dict[str, Any]) -> str:
    old, new = r["baseline"], r["current"]
    load = ", ".join(f"{x:.1f}" for x in r["load_average"])

    def row(name: str, key: str, fmt: str, target: str) -> str:
        ratio = new[key] / old[key] if old[key] else float("nan")
        return (
            f"| {name} | {format(old[key], fmt)} | {format(new[key], fmt)} | {ratio:.2f}× "
            f"| {target} |"
        )

    return "\n".join(
        [
            f"{new['sources']:,.0f} sources ({r['corpus_mb']} MB corpus); baseline "
            f"{r['baseline_revision']}; current {r.get('current_revision', 'working tree')}; "
            f"medians; load average after the run {load}",
            "",
            "| | baseline | current | current / baseline | target |",
            "|---|---:|---:|---:|---|",
            row("first structural review, sources/s", "sources_per_s", ",.0f", "≥ 5,000"),
            row("first structural review, s", "first_s", ".1f", ""),
            row("first structural review, sources per CPU second", "sources_per_cpu_s", ",.0f", ""),
            row("first structural review, CPU s", "first_cpu_s", ".1f", ""),
            row("no-change review in process, s", "no_change_s", ".3f", "< 0.3"),
            row("`proctor review run` no-change process, s", "cli_no_change_s", ".3f", "< 0.5"),
            row("`proctor review run` no-change process, CPU s", "cli_no_change_cpu_s", ".3f", ""),
            row("`python -c 'import proctor.cli.main'`, s", "import_cli_s", ".3f", ""),
            row("`python -c 'import proctor.cli.main'`, CPU s", "import_cli_cpu_s", ".3f", ""),
            row("modules that process imports", "cli_modules", ".0f", ""),
            row(f"publish {new['publish_facts']:,.0f} facts, s", "publish_s", ".2f", "< 0.5"),
            row(f"publish {new['publish_facts']:,.0f} facts, CPU s", "publish_cpu_s", ".2f", ""),
        ]
    )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        print(json.dumps(_work(sys.argv[2], sys.argv[3:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-mb", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument(
        "--current",
        default=None,
        help="a revision (or a folder holding proctor/) instead of the working tree's src/",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--profile",
        choices=("first", "publish"),
        help="profile the working tree's first review or publish once, compare nothing",
    )
    parser.add_argument("--profile-out", type=Path, help="keep the pstats file here")
    parser.add_argument("--profile-top", type=int, default=40)
    args = parser.parse_args()
    if args.profile:
        profile(
            args.corpus_mb,
            args.baseline,
            args.profile,
            args.profile_out,
            args.profile_top,
            args.current,
        )
        return
    report = compare(args.corpus_mb, args.rounds, args.baseline, args.current)
    print(json.dumps(report, indent=2) if args.json else render(report))


if __name__ == "__main__":
    main()
