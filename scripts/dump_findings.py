"""Findings of one source tree as plain data, for comparing two trees byte for byte.

Ingests ../shared/transcripts and examples/ into a fresh PROCTOR_HOME with the tree's own
code (PYTHONPATH), runs every rule (`proctor check --all --json`) and writes the findings
without ids or clock times. Issue 21's "behaviour unchanged" check:

    git archive <before> src | tar -x -C /tmp/before
    .venv/bin/python scripts/dump_findings.py /tmp/before/src /tmp/findings-before.json
    .venv/bin/python scripts/dump_findings.py src /tmp/findings-after.json
    cmp /tmp/findings-before.json /tmp/findings-after.json

(Published graphs: tests/review/test_published_graph_unchanged.py.)
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROCTOR_SHARED_DIR", REPO.parent / "shared"))
src, out = str(Path(sys.argv[1]).resolve()), sys.argv[2]
home = tempfile.mkdtemp()
env = {
    **os.environ,
    "PYTHONPATH": src,
    "PROCTOR_HOME": home,
    "PROCTOR_ALLOW_MODEL_REQUESTS": "0",
    "PROCTOR_BACKGROUND_INDEXING": "0",
}
py = sys.executable
for folder in (str(SHARED / "transcripts"), str(REPO / "examples")):
    subprocess.run(
        [py, "-m", "proctor.cli.main", "ingest", folder], env=env, check=False, capture_output=True
    )
done = subprocess.run(
    [py, "-m", "proctor.cli.main", "check", "--all", "--json"],
    env=env,
    capture_output=True,
    text=True,
)
data = json.loads(done.stdout)


UNSTABLE = ("finding_id", "id", "created_at", "updated_at", "checked_at")


def strip(value: object) -> object:
    """``value`` without the keys that differ from run to run (ids, clock times)."""
    if isinstance(value, dict):
        return {key: strip(item) for key, item in value.items() if key not in UNSTABLE}
    if isinstance(value, list):
        return [strip(item) for item in value]
    return value


text = json.dumps(strip(data), sort_keys=True, indent=1)
Path(out).write_text(text)
print(out, len(text), done.returncode)
