"""Write a drawn folder (good records and mutated ones), import it for real, check the result.

A case is one folder. Each record of a drawn file is written as is or after one mutation;
the import must complete, and afterwards:

- every record left as drawn has its marker in the store (no good record is lost, also
  not one beside a bad one in the same file);
- every record a JSON parser refuses (or that nests past the limit) is reported as
  ``file:line`` (a broken document: an issue naming the file);
- every other mutated record is stored (its marker found) or reported, unless the
  mutation destroyed the marker itself.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import seed
from hypothesis import strategies as st
from sqlalchemy import Connection, bindparam, text

from proctor.ingest import IngestReport, ingest
from proctor.store import SqlStore
from proctor.transcript import MAX_JSON_DEPTH, SourceIssue, nesting_problem
from tests.backends import ON_POSTGRES
from tests.fuzz.families import Family, GenFile, Rec
from tests.fuzz.mutations import MUTATIONS, Mutation, dump, get, mutate_record, paths

T = TypeVar("T")

_NONCES = itertools.count(100_000)

FUZZ_SEED = int(os.environ["PROCTOR_FUZZ_SEED"]) if os.environ.get("PROCTOR_FUZZ_SEED") else None
"""A seed for cases nobody has run before (``PROCTOR_FUZZ_SEED=$RANDOM make fuzz``); unset,
each fuzz test draws the same fixed-seed cases every run (hypothesis ``derandomize``)."""


FUZZ_EXAMPLES = (
    int(os.environ["PROCTOR_FUZZ_EXAMPLES"])
    if os.environ.get("PROCTOR_FUZZ_EXAMPLES")
    else (40 if ON_POSTGRES else 500)
)
"""Generated cases per family: ``PROCTOR_FUZZ_EXAMPLES`` when set (``make fuzz``: 10,000);
else ``make test``'s slice, 500 in its SQLite pass and the same seed's first 40 in its
PostgreSQL pass, which checks the same storage of those records on the other database.
The rule for that pass is the store's coverage: with ``--cov=proctor.store --cov-branch``
on PostgreSQL, 40 cases per family reach the same 3,943 lines and 4,762 arcs as 125 (20
miss one line of ``_writer.py``), and the intake fuzz of ``test_intake_fuzz.py`` the same
3,991 lines and 4,894 arcs with 40 examples as with 125; 125 cost 34 CPU s there, 40 13."""


def seeded(test: T) -> T:
    """``test`` drawing from ``FUZZ_SEED`` when one is given (use with ``derandomize=
    FUZZ_SEED is None`` in its settings); unchanged otherwise."""
    return seed(FUZZ_SEED)(test) if FUZZ_SEED is not None else test


def restart_nonces() -> None:
    """Number cases from the start again: a test over a store of its own calls it first,
    so the cases a fixed seed generates (mutations are seeded by the nonce) do not depend
    on which tests ran before in the same worker."""
    global _NONCES
    _NONCES = itertools.count(100_000)


MUTATED_IN_TEN = 3
"""Records mutated, of ten drawn; the others must all be stored."""


@dataclass(frozen=True, slots=True)
class Planted:
    """One record as written: where it is, what was done to it, what must follow."""

    file: str
    line: int | None
    """Line of the record in its file (None: the record is the whole file)."""
    marker: str | None
    mutation: str | None
    must_report: bool
    """True when no JSON parser takes the record (or it nests past the limit)."""
    marker_intact: bool
    """False when the mutation destroyed the marker itself."""


@dataclass(repr=False)
class Case:
    """One drawn folder: its files' bytes and what was planted where."""

    files: dict[str, bytes] = field(default_factory=dict)
    planted: list[Planted] = field(default_factory=list)

    def __repr__(self) -> str:
        # Shown by hypothesis for a failing case: the files (they may hold megabytes of
        # mutated text) by name and size, the planted records in full.
        files = {name: f"{len(data)} bytes" for name, data in self.files.items()}
        return f"Case(files={files}, planted={self.planted})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis prints a case (it would print a dataclass field by field)."""
        printer.text(repr(self))

    @property
    def mutated(self) -> int:
        """Records written mutated."""
        return sum(p.mutation is not None for p in self.planted)


def parsed(data: bytes, *, bom: bool = True) -> tuple[bool, object]:
    """Whether ``data`` is one JSON value, and the value — judged by Python's own parser
    (which takes ``NaN`` and lone surrogate escapes), independently of Proctor's. A
    leading byte order mark is allowed when ``bom`` (a line, not inside a document)."""
    text = data.strip()
    while bom and text.startswith(b"\xef\xbb\xbf"):
        text = text[3:].strip()
    try:
        return True, json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError):
        return False, None


def refused(data: bytes, *, want_object: bool) -> bool:
    """True when ``data`` is not one JSON value (an object, when ``want_object``) or
    nests past the record limit: no reader may take it, each must report it."""
    ok, value = parsed(data)
    if not ok or (want_object and not isinstance(value, dict)):
        return True
    return nesting_problem(value, MAX_JSON_DEPTH) is not None


def _intact(marker: str | None, original: Any, data: bytes) -> bool:
    """True when the mutated record still holds the marker where the drawn one held it
    (a renamed or removed field, or a marker cut in two, takes it away like a missing
    field: readers ignore fields they do not know)."""
    if marker is None:
        return False
    ok, value = parsed(data)
    if not ok:
        return marker.encode() in data
    for path in paths(original):
        try:
            held = get(value, path)
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(held, str) and marker in held and marker in get(original, path):
            return True
    return False


@st.composite
def cases(draw: st.DrawFn, family: Family) -> Case:
    """A folder of ``family`` files with some records mutated."""
    nonce = str(next(_NONCES))
    case = Case()
    for gen in family.draw_files(draw, nonce):
        _write_file(draw, gen, case, nonce)
    return case


def _mutated(draw: st.DrawFn, rec: Rec, nonce: str) -> tuple[Mutation | None, bytes]:
    if not rec.mutable or draw(st.integers(0, 9)) >= MUTATED_IN_TEN:
        return None, dump(rec.value)
    mutation = draw(st.sampled_from(MUTATIONS))
    # Seeded by the case too, so values a mutation invents (a long id) are the case's own.
    rng = random.Random(f"{nonce}:{draw(st.integers(0, 2**32 - 1))}")
    return mutation, mutate_record(mutation, rng, rec.value)


def _write_file(draw: st.DrawFn, gen: GenFile, case: Case, nonce: str) -> None:
    written = [_mutated(draw, rec, nonce) for rec in gen.records]
    if gen.layout == "lines":
        crlf = draw(st.booleans())
        bom = draw(st.booleans())
        newline = b"\r\n" if crlf else b"\n"
        case.files[gen.name] = (b"\xef\xbb\xbf" if bom else b"") + b"".join(
            data + newline for _, data in written
        )
        for number, (rec, (mutation, data)) in enumerate(
            zip(gen.records, written, strict=True), start=1
        ):
            case.planted.append(_planted(gen.name, number, rec, mutation, data, want_object=True))
        return
    if gen.layout == "document":
        # A file that is JSON but not a transcript (a number, a list) is left alone
        # quietly, like any other file in a folder; one that is not JSON is reported.
        ((rec,), ((mutation, data),)) = (gen.records, written)
        case.files[gen.name] = data
        case.planted.append(_planted(gen.name, None, rec, mutation, data, want_object=False))
        return
    # An array: records that break the JSON text would break the whole file, so each goes
    # into a file of its own; the others stay, one element a line.
    kept: list[tuple[Rec, Mutation | None, bytes]] = []
    for index, (rec, (mutation, data)) in enumerate(zip(gen.records, written, strict=True)):
        if mutation is not None and not parsed(data, bom=False)[0]:
            name = f"{Path(gen.name).stem}-broken-{index}.json"
            case.files[name] = b"[\n" + data + b"\n]\n"
            case.planted.append(_planted(name, None, rec, mutation, data, want_object=False))
        else:
            kept.append((rec, mutation, data))
    if kept:
        case.files[gen.name] = b"[\n" + b",\n".join(data for _, _, data in kept) + b"\n]\n"
    for number, (rec, mutation, data) in enumerate(kept, start=2):
        case.planted.append(_planted(gen.name, number, rec, mutation, data, want_object=False))


def _planted(
    file: str,
    line: int | None,
    rec: Rec,
    mutation: Mutation | None,
    data: bytes,
    *,
    want_object: bool,
) -> Planted:
    return Planted(
        file=file,
        line=line,
        marker=rec.marker,
        mutation=None if mutation is None else mutation.name,
        must_report=mutation is not None and refused(data, want_object=want_object),
        marker_intact=mutation is None or _intact(rec.marker, rec.value, data),
    )


def write_case(case: Case, folder: Path) -> None:
    """Write the case's files under ``folder``."""
    folder.mkdir(parents=True)
    for name, data in case.files.items():
        (folder / name).write_bytes(data)


_HELD = [
    "SELECT title FROM conversations WHERE conversation_id IN :ids",
    "SELECT text FROM messages WHERE conversation_id IN :ids",
    "SELECT name || ' ' || COALESCE(result_text, '') FROM tool_calls WHERE conversation_id IN :ids",
    "SELECT arguments FROM tool_calls WHERE conversation_id IN :ids",
    "SELECT title || ' ' || COALESCE(goal, '') FROM tasks WHERE conversation_id IN :ids",
    "SELECT text FROM task_events WHERE conversation_id IN :ids",
]


def held_text(connection: Connection, conversation_ids: Iterable[str]) -> str:
    """Everything the store holds for these conversations, as one searchable text (read
    with plain SQL, one query a table: the store's reader is too slow for thousands)."""
    ids = list(dict.fromkeys(conversation_ids))
    parts: list[str] = []
    for query in _HELD if ids else []:
        statement = text(query).bindparams(bindparam("ids", expanding=True))
        for (value,) in connection.execute(statement, {"ids": ids}):
            parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    connection.rollback()  # a new snapshot next time: later imports must be seen
    return "\n".join(parts)


def stored_text(store: SqlStore, conversation_ids: Iterable[str]) -> str:
    """``held_text`` through the store's own reader (for a few cases)."""
    parts: list[str] = []
    for conversation_id in dict.fromkeys(conversation_ids):
        transcript = store.transcript(conversation_id)
        parts.append(transcript.summary.conversation.title or "")
        parts += [message.text for message in transcript.messages]
        for call in transcript.tool_calls:
            parts.append(f"{call.name} {call.result_text or ''}")
            parts.append(json.dumps(call.arguments, ensure_ascii=False))
        parts += [f"{task.title} {task.goal or ''}" for task in transcript.tasks]
        parts += [event.text for event in transcript.task_events]
    return "\n".join(parts)


@dataclass
class Outcome:
    """What one case did: for the figures of a fuzz run."""

    records: int = 0
    mutated: int = 0
    stored_markers: int = 0
    reported: int = 0


def check_case(case: Case, folder: Path, issues: list[SourceIssue], held: str) -> Outcome:
    """Assert what every planted record must have led to, given the import's issues and
    ``held``, what the store holds for its conversations; return the counts."""
    unforeseen = [str(i) for i in issues if "please report it" in i.reason]
    assert unforeseen == [], f"an adapter failed where it should report: {unforeseen[:3]}"
    outcome = Outcome(records=len(case.planted), mutated=case.mutated)
    unrecognisable = _unrecognisable(case, folder, issues)
    for planted in case.planted:
        path = str(folder / planted.file)
        if path in unrecognisable:
            continue
        stored = planted.marker is not None and planted.marker in held
        outcome.stored_markers += stored
        named = _names(issues, path, planted.line)
        outcome.reported += planted.mutation is not None and named
        where = f"{planted.file}:{planted.line} ({planted.mutation or 'good'})"
        if planted.mutation is None:
            assert planted.marker is None or stored, (
                f"good record {where} was not stored; issues: {_shown(issues)}"
            )
        elif planted.must_report:
            assert named, f"bad record {where} was not reported; issues: {_shown(issues)}"
        elif planted.marker_intact and planted.marker is not None:
            assert stored or named, (
                f"mutated record {where} was neither stored nor reported; issues: {_shown(issues)}"
            )
    return outcome


def _unrecognisable(case: Case, folder: Path, issues: list[SourceIssue]) -> set[str]:
    """Files whose every record is damaged and that nothing was said about: with no
    intact record there is nothing to tell the format by, so a folder walk leaves such
    a file alone like any other file of an unknown format."""
    damaged: dict[str, bool] = {}
    for planted in case.planted:
        path = str(folder / planted.file)
        damaged[path] = damaged.get(path, True) and planted.mutation is not None
    named = {issue.path for issue in issues}
    return {path for path, all_damaged in damaged.items() if all_damaged and path not in named}


def _names(issues: list[SourceIssue], path: str, line: int | None) -> bool:
    """True when an issue names the record's line, or says nothing of its file was
    imported (a file whose every record is damaged cannot be told apart from another
    tool's file: it is reported whole)."""
    return any(
        issue.path == path and (line is None or issue.line == line or _whole_file(issue))
        for issue in issues
    )


def _whole_file(issue: SourceIssue) -> bool:
    return issue.line is None and "nothing was imported" in issue.reason


def _shown(issues: list[SourceIssue]) -> list[str]:
    return [str(issue)[-200:] for issue in issues][:12]


def import_case(
    store: SqlStore, reader: Connection, case: Case, folder: Path
) -> tuple[IngestReport, Outcome]:
    """Write, import in process and check one case (``reader``: a connection to the store)."""
    write_case(case, folder)
    report = ingest(store, [folder], jobs=1)
    held = held_text(reader, report.conversation_ids)
    return report, check_case(case, folder, report.issues, held)


def import_cases(
    store: SqlStore, reader: Connection, batch: list[Case], root: Path
) -> list[Outcome]:
    """Write several cases, each a folder of its own, import them in one run and check
    each: one run over many folders is how ``proctor ingest a b c`` works, and it spares
    each case the run's own bookkeeping (the fuzz suite runs thousands)."""
    folders = [root / f"case-{next(_NONCES)}" for _ in batch]
    for case, folder in zip(batch, folders, strict=True):
        write_case(case, folder)
    report = ingest(store, folders, jobs=1)
    held = held_text(reader, report.conversation_ids)
    outcomes = [
        check_case(case, folder, report.issues, held)
        for case, folder in zip(batch, folders, strict=True)
    ]
    for folder in folders:  # the store holds what matters; thousands of folders add up
        shutil.rmtree(folder)
    return outcomes
