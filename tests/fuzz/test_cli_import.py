"""ING-9 through the command line: ``proctor ingest`` over a folder of damaged files of
every format exits normally, names each bad record by ``file:line``, stores the rest."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from proctor.cli._exit import EXIT_PARTIAL
from proctor.transcript import SourceIssue
from tests.backends import database_env, raw_connection
from tests.fuzz.families import FAMILIES
from tests.fuzz.harness import FUZZ_SEED, Case, cases, check_case, held_text, seeded, write_case

_RUNS = itertools.count()


@settings(
    max_examples=2,
    derandomize=FUZZ_SEED is None,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(folders=st.tuples(*(cases(family) for family in FAMILIES)))
@seeded
def test_proctor_ingest_over_damaged_files_of_every_format_names_each_and_stores_the_rest(
    folders: tuple[Case, ...],
) -> None:
    run = Path(os.environ["PROCTOR_HOME"]).parent / f"cli-{next(_RUNS)}"
    root, home = run / "input", run / "home"
    for family, case in zip(FAMILIES, folders, strict=True):
        write_case(case, root / family.name)
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home)}
    done = subprocess.run(
        [sys.executable, "-m", "proctor.cli.main", "ingest", str(root), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    report = json.loads(done.stdout)
    issues = [
        SourceIssue(i["path"], i["reason"], i["line"], i["severity"]) for i in report["issues"]
    ]
    errors = any(issue.severity == "error" for issue in issues)
    assert done.returncode == (EXIT_PARTIAL if errors else 0), done.stderr[-2000:]
    with raw_connection(home / "proctor.db") as reader:
        held = held_text(reader, report["conversation_ids"])
    for family, case in zip(FAMILIES, folders, strict=True):
        check_case(case, root / family.name, issues, held)
