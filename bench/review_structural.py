"""The structural layer alone, side by side with an earlier revision (issue 18, point 5).

A first review's CPU is mostly the store's (reading batches, saving checkpoints,
publishing, indexing); ``bench/review_scale.py`` measures all of it. This one measures
only ``extract_structural``: each side, in its own process on a copy of the cached
41,600-source store of ``bench/review_scale.py``, runs a first review while recording
its batches and the CPU spent extracting them, then extracts every batch again in
``--passes`` passes with the shell parser's caches emptied before each one.

    python bench/review_structural.py --baseline dda3451 --current 4c92893 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import review_scale as scale

STORE = scale.CACHE / "review-200mb-src-07b981e84a81.db"
"""The store ``bench/review_scale.py`` ingests with its default baseline (each side migrates
it on open)."""


def _extract(passes: int) -> dict[str, Any]:
    """Inside a worker: the first review's extraction CPU, then ``passes`` passes again."""
    import proctor.review.structural as structural
    from proctor.review import ReviewRequest, start_review
    from proctor.rules.builtin._shell_words import simple_commands
    from proctor.store import open_store

    real, batches, during = structural.extract_structural, [], [0.0]

    def recording(batch: Any) -> Any:
        batches.append(batch)
        cpu = time.process_time()
        facts = real(batch)
        during[0] += time.process_time() - cpu
        return facts

    structural.extract_structural = recording  # type: ignore[assignment]
    store = open_store()
    run = start_review(store, ReviewRequest(), semantic=None, semantic_note="bench")
    store.close()
    if run.status != "completed":
        raise SystemExit(f"the first review ended {run.status}")
    kept = getattr(sys.modules.get("proctor.review.structural._shell"), "_program_args_seen", {})
    cpu_passes = []
    for _ in range(passes):
        simple_commands.cache_clear()
        kept.clear()
        cpu = time.process_time()
        for batch in batches:
            real(batch)
        cpu_passes.append(time.process_time() - cpu)
    return {"sources": run.sources_total, "in_review_cpu_s": during[0], "passes": cpu_passes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--current", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_extract(args.passes)))
        return
    if not STORE.exists():
        raise SystemExit(f"no cached store {STORE}: run bench/review_scale.py once first")
    sides = {
        "baseline": scale._source_tree(args.baseline),
        "current": scale._source_tree(args.current),
    }
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for side, src in sides.items():
                home = scale._fresh_home(STORE, Path(tmp) / side)
                env = {
                    **os.environ,
                    "PYTHONPATH": f"{src}:{scale.REPO / 'bench'}",
                    "PROCTOR_HOME": str(home),
                }
                done = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        "--passes",
                        str(args.passes),
                        "--baseline",
                        "-",
                        "--current",
                        "-",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
                runs[side].append(result)
                print(f"{side} load {os.getloadavg()}: {json.dumps(result)}", flush=True)
    medians = {
        side: {
            "in_review_cpu_s": statistics.median(r["in_review_cpu_s"] for r in values),
            "pass_cpu_s": statistics.median(p for r in values for p in r["passes"]),
        }
        for side, values in runs.items()
    }
    sources = runs["current"][0]["sources"]
    for side, m in medians.items():
        print(
            f"{side}: extraction {m['pass_cpu_s']:.2f} CPU s a pass "
            f"({sources / m['pass_cpu_s']:,.0f} sources per CPU s); in the review "
            f"{m['in_review_cpu_s']:.2f} CPU s"
        )
    ratio = medians["current"]["pass_cpu_s"] / medians["baseline"]["pass_cpu_s"]
    print(f"current / baseline {ratio:.2f}×; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
