"""ING-9 under fuzzing: any record of any adapter family is stored or reported, never fatal.

For every family, hypothesis draws folders of records in the format's shapes, mutates
some (numbers past 64 bits, nesting past the limit, NUL, lone surrogates, long strings,
wrong JSON types, missing fields, unquoted hex, NaN, a BOM, truncation, garbage bytes;
whole files with CRLF line ends or a BOM) and imports each folder into one real store.
``PROCTOR_FUZZ_EXAMPLES`` sets the cases per family (default 500, fixed seed, 40 on the
PostgreSQL pass: ``harness.FUZZ_EXAMPLES``; ``PROCTOR_FUZZ_SEED`` draws other cases).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection

from proctor.store import SqlStore, open_store
from tests.backends import raw_connection
from tests.fuzz.families import FAMILIES, Family
from tests.fuzz.harness import (
    FUZZ_EXAMPLES,
    FUZZ_SEED,
    Case,
    cases,
    import_cases,
    restart_nonces,
    seeded,
)

EXAMPLES = FUZZ_EXAMPLES
"""Cases per family (a case is one folder of files)."""
BATCH = 20
"""Cases imported together in one run (one hypothesis example)."""
REPORT = os.environ.get("PROCTOR_FUZZ_REPORT")
"""When set, a file each family's figures are appended to as one JSON line (so parallel
workers, each running some families, add to one report)."""

FIGURES: dict[str, dict[str, float]] = {}


@pytest.fixture
def fuzz_store(tmp_path: Path) -> Iterator[tuple[SqlStore, Connection, Path]]:
    """One store for all cases of a family (each case's ids carry its own nonce), and a
    plain connection to read back what was stored."""
    store = open_store(tmp_path / "proctor.db")
    try:
        with raw_connection(tmp_path / "proctor.db") as reader:
            yield store, reader, tmp_path
    finally:
        store.close()
        for leftover in tmp_path.glob("proctor.db*"):  # SQLite: a file per family run
            leftover.unlink()


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_every_record_of_a_family_is_stored_or_reported_and_never_ends_the_import(
    family: Family, fuzz_store: tuple[SqlStore, Connection, Path]
) -> None:
    store, reader, root = fuzz_store
    restart_nonces()  # the fixed seed's cases, whatever ran before in this worker
    figures = FIGURES.setdefault(family.name, dict.fromkeys(_FIELDS, 0))
    started = time.monotonic()

    @settings(
        max_examples=-(-EXAMPLES // BATCH),
        derandomize=FUZZ_SEED is None,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(batch=st.lists(cases(family), min_size=BATCH, max_size=BATCH))
    @seeded
    def some_folders(batch: list[Case]) -> None:
        for outcome in import_cases(store, reader, batch, root / family.name):
            figures["cases"] += 1
            figures["records"] += outcome.records
            figures["mutated"] += outcome.mutated
            figures["stored"] += outcome.stored_markers
            figures["reported"] += outcome.reported

    some_folders()
    figures["seconds"] = round(time.monotonic() - started, 1)
    if REPORT:
        with Path(REPORT).open("a", encoding="utf-8") as report:
            report.write(json.dumps({"family": family.name, **figures}) + "\n")
    assert figures["cases"] >= EXAMPLES


_FIELDS = ("cases", "records", "mutated", "stored", "reported", "seconds")
