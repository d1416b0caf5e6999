"""CPU, wall time and modules of a ``proctor review run --no-model`` process that finds nothing
new, this tree alternating with a baseline source folder (issue 18, point 5).

The store is ``PROCTOR_HOME``'s (``--home``): reviewed once already, the app switched on
(``store.set_setting("app.enabled", True)``). Each run is a fresh interpreter running the
CLI; its CPU time is the children's ``getrusage`` (robust to other work on the machine),
its modules ``len(sys.modules)`` at exit.

    python bench/no_change_process.py --home /tmp/h --baseline-src /tmp/base/src --runs 5
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUN_AND_COUNT = """
import atexit, sys
atexit.register(lambda: print(len(sys.modules), file=sys.stderr))
from proctor.cli.main import main
sys.argv = ["proctor", "review", "run", "--no-model"]
main()
"""


def one(home: Path, src: Path | None) -> tuple[float, float, int]:
    """(CPU s, wall s, modules) of one no-change process on ``home``."""
    env = {**os.environ, "PROCTOR_HOME": str(home)}
    env.pop("PROCTOR_DATABASE_URL", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_COUNT], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "Nothing new" not in done.stdout:
        raise SystemExit(f"not a no-change run:\n{done.stdout}\n{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, wall, int(done.stderr.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    variants: dict[str, Path | None] = {"this tree": None}
    if args.baseline_src is not None:
        variants["baseline"] = args.baseline_src
    # Both trees byte-compiled first: where PYTHONDONTWRITEBYTECODE is set, a folder without
    # bytecode would compile every module it imports in every run, and the ratio would
    # measure that (seen: 0.85x that was 0.97x).
    for src in (Path(__file__).resolve().parents[1] / "src", args.baseline_src):
        if src is not None:
            compileall.compile_dir(src, quiet=1)
    print(f"load average {os.getloadavg()[0]:.2f}")
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, src in variants.items():
            results[name].append(one(args.home, src))
    for name, runs in results.items():
        print(
            f"{name:<10} CPU median {statistics.median(r[0] for r in runs):.3f} s, wall median "
            f"{statistics.median(r[1] for r in runs):.3f} s, {runs[0][2]} modules"
        )
    if "baseline" in results:
        ratio = statistics.median(r[0] for r in results["this tree"]) / statistics.median(
            r[0] for r in results["baseline"]
        )
        print(f"this tree / baseline CPU {ratio:.2f}x")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
