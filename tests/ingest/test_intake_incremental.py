"""Appends cost what they carry (ING-7): read and write only their part, equal to a whole re-merge."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, text

from proctor.ingest import Intake, PayloadError
from proctor.ingest import _intake as intake_module
from proctor.sources import prepare_bundle
from proctor.store import SqlStore, open_store
from proctor.transcript import ConversationBundle, PreparedBundle
from tests.backends import ON_POSTGRES, raw_connection
from tests.ingest.intake_reference import WholeMergeIntake, stored_rows

LONG = 3_000


def lines(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def message(conversation: str, number: int, role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "conversation_id": conversation,
        "message_id": f"m{number}",
        "role": role,
        "text": text,
        **extra,
    }


def conversation(name: str, messages: int) -> bytes:
    """``messages`` alternating prompts and replies; call ``c0`` (pending) after the second."""
    events: list[dict[str, Any]] = [{"type": "conversation", "conversation_id": name}]
    for number in range(messages):
        role = "user" if number % 2 == 0 else "assistant"
        events.append(message(name, number, role, f"step {number} of the export fix"))
        if number == 1:
            events.append(
                {
                    "type": "tool_call",
                    "conversation_id": name,
                    "call_id": "c0",
                    "name": "Bash",
                    "arguments": {"command": "pytest -q"},
                }
            )
    return lines(*events)


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "proctor.db"


@pytest.fixture
def store(database: Path) -> Iterator[SqlStore]:
    opened = open_store(database)
    try:
        yield opened
    finally:
        opened.close()


class Recorder:
    """What an append did: the bundles it prepared, the statements it ran."""

    def __init__(self, store: SqlStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.prepared: list[ConversationBundle] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, int]] = []
        real = prepare_bundle

        def prepare(bundle: ConversationBundle, *args: Any, **kwargs: Any) -> PreparedBundle:
            self.prepared.append(bundle)
            return real(bundle, *args, **kwargs)

        def whole(_self: SqlStore, conversation_id: str) -> None:
            raise AssertionError(f"an append read all of {conversation_id}")

        monkeypatch.setattr(intake_module, "prepare_bundle", prepare)
        monkeypatch.setattr(SqlStore, "transcript", whole)
        for engine, kind in ((store._reader, "read"), (store._writer, "write")):
            event.listen(engine, "before_cursor_execute", self._recorder(kind))

    def _recorder(self, kind: str) -> Callable[..., None]:
        def record(
            _conn: Any, _cursor: Any, statement: str, parameters: Any, _ctx: Any, many: bool
        ) -> None:
            verb = statement.split(None, 1)[0].upper()
            if kind == "read":
                self.reads.append(statement)
            elif verb in ("INSERT", "UPDATE", "DELETE"):
                rows = len(parameters) if many else 1
                self.writes.append((" ".join(statement.split()[:3]), rows))

        return record

    def clear(self) -> None:
        self.prepared.clear()
        self.reads.clear()
        self.writes.clear()


def test_an_append_to_a_long_conversation_reads_and_writes_what_one_to_a_short_one_does(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    intake = Intake(store)
    intake.events(conversation("short", 10))
    intake.events(conversation("long", LONG))
    recorder = Recorder(store, monkeypatch)
    seen: dict[str, tuple[list[str], list[tuple[str, int]], int]] = {}
    for name, stored in (("short", 10), ("long", LONG)):
        recorder.clear()
        report = intake.events(
            lines(
                message(name, stored, "assistant", "The export is fixed."),
                {"type": "tool_call", "conversation_id": name, "call_id": "c9", "name": "Bash"},
            )
        )
        assert (report.sources_added, report.conversations_created) == (2, 0)
        [bundle] = recorder.prepared
        seen[name] = (recorder.reads[:], recorder.writes[:], len(bundle.messages))

    assert seen["long"] == seen["short"]
    _, writes, prepared_messages = seen["long"]
    assert prepared_messages == 2, "the new message and the last stored one (its parent)"
    assert ("INSERT INTO messages", 1) in writes and ("INSERT INTO tool_calls", 1) in writes
    assert ("INSERT INTO sources", 2) in writes
    assert not any(verb.startswith("DELETE FROM messages") for verb, _ in writes)

    monkeypatch.undo()
    transcript = store.transcript("pj:long")
    assert len(transcript.messages) == LONG + 1
    last = transcript.messages[-1]
    assert last.parent_source_id == transcript.messages[-2].source_id == f"pj:long:msg:m{LONG - 1}"
    assert transcript.tool_calls[-1].message_source_id == last.source_id


def test_revising_an_old_message_of_a_long_conversation_keeps_its_place(
    store: SqlStore, database: Path
) -> None:
    intake = Intake(store)
    intake.events(conversation("long", LONG))
    report = intake.events(
        lines(
            message("long", 5, "assistant", "step 5, corrected"),
            message("long", LONG, "user", "and now the import"),
        )
    )
    assert (report.sources_revised, report.sources_added) == (1, 1)
    transcript = store.transcript("pj:long")
    assert [m.text for m in transcript.messages[4:7]] == [
        "step 4 of the export fix",
        "step 5, corrected",
        "step 6 of the export fix",
    ]
    assert transcript.messages[-1].text == "and now the import"
    assert transcript.messages[-1].parent_source_id == "pj:long:msg:m5"
    assert store.source("message", "pj:long:msg:m5").revision == 2
    with raw_connection(database) as connection:
        place = connection.execute(
            text("SELECT seq FROM messages WHERE source_id = 'pj:long:msg:m5'")
        ).scalar_one()
    assert place == 5


def test_a_late_result_completes_a_call_stored_long_before(store: SqlStore) -> None:
    intake = Intake(store)
    intake.events(conversation("long", LONG))
    result = {
        "type": "tool_result",
        "conversation_id": "long",
        "call_id": "c0",
        "status": "error",
        "output": "1 failed",
        "exit_code": 1,
    }
    report = intake.events(lines(result))
    assert (report.sources_revised, report.sources_added) == (1, 0)
    [call] = store.transcript("pj:long").tool_calls
    assert (call.status, call.result_text, call.exit_code) == ("error", "1 failed", 1)
    assert call.message_source_id == "pj:long:msg:m1"
    assert store.source("tool_call", call.source_id).revision == 2


def test_a_result_for_a_call_stored_in_another_conversation_is_refused(store: SqlStore) -> None:
    intake = Intake(store)
    intake.events(conversation("one", 3))
    intake.events(conversation("two", 3))
    stray = {"type": "tool_result", "conversation_id": "two", "call_id": "c1", "output": "x"}
    with pytest.raises(PayloadError, match='call "c1"'):
        intake.events(lines(stray))


def test_a_small_append_never_waits_behind_a_large_one(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    intake = Intake(store)
    intake.events(conversation("large", LONG))
    intake.events(conversation("small", 10))
    held, release = threading.Event(), threading.Event()
    real = prepare_bundle

    def prepare(bundle: ConversationBundle, *args: Any, **kwargs: Any) -> PreparedBundle:
        if bundle.conversation_id == "pj:large":
            held.set()
            assert release.wait(timeout=60), "the test never released the large append"
        return real(bundle, *args, **kwargs)

    monkeypatch.setattr(intake_module, "prepare_bundle", prepare)
    large = lines(*(message("large", LONG + n, "user", f"bulk {n}") for n in range(2_000)))
    large_thread = threading.Thread(target=intake.events, args=(large,))
    large_thread.start()
    try:
        assert held.wait(timeout=60), "the large append never reached its preparation"
        small_done = threading.Event()

        def append_small() -> None:
            intake.events(lines(message("small", 10, "assistant", "quick reply")))
            small_done.set()

        small_thread = threading.Thread(target=append_small)
        small_thread.start()
        assert small_done.wait(timeout=60), "the small append waited for the large one"
        assert store.messages("pj:small")[-1].text == "quick reply"
        assert len(store.messages("pj:large")) == LONG, "the large append is still held"
    finally:
        release.set()
        large_thread.join(timeout=120)
    assert len(store.messages("pj:large")) == LONG + 2_000


# -- what the excerpt must hold: cases a whole re-merge decides from far back ---------


def _said(name: str, number: int, role: str, text: str = "step") -> dict[str, Any]:
    return message(name, number, role, text)


_STORED = [
    [
        {"type": "conversation", "conversation_id": "k", "title": "Export fix"},
        _said("k", 0, "user", "  "),
        _said("k", 1, "assistant"),
        _said("k", 2, "user", "Fix the CSV writer"),
        _said("k", 3, "assistant"),
        _said("k", 4, "user", "and the header"),
        _said("k", 5, "user", "please"),
    ]
]
_CALL = {"type": "tool_call", "conversation_id": "k", "call_id": "c7", "name": "Bash"}
_CLEAR_TITLE = {"type": "conversation", "conversation_id": "k", "title": ""}
_CASES: dict[str, tuple[list[list[dict[str, Any]]], Callable[[SqlStore], object], object]] = {
    "a call naming no message belongs to the latest stored assistant message": (
        [[_CALL]],
        lambda store: store.transcript("pj:k").tool_calls[0].message_source_id,
        "pj:k:msg:m3",
    ),
    "the one before it when the request revises that one into a prompt": (
        [[_said("k", 3, "user", "not a reply"), _CALL]],
        lambda store: store.transcript("pj:k").tool_calls[0].message_source_id,
        "pj:k:msg:m1",
    ),
    "a cleared title comes from the first stored prompt with text": (
        [[_CLEAR_TITLE, _said("k", 6, "assistant")]],
        lambda store: store.conversation("pj:k").conversation.title,
        "Fix the CSV writer",
    ),
    "or from a later one when the request blanks that prompt": (
        [[_CLEAR_TITLE, _said("k", 2, "user", " "), _said("k", 6, "user", "New plan")]],
        lambda store: store.conversation("pj:k").conversation.title,
        "and the header",
    ),
    "the first new message of a request answers the last stored one": (
        [[_said("k", 6, "assistant")]],
        lambda store: store.transcript("pj:k").messages[-1].parent_source_id,
        "pj:k:msg:m5",
    ),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_an_append_decides_like_a_whole_re_merge(case: str, tmp_path: Path) -> None:
    requests, observe, expected = _CASES[case]
    databases = tmp_path / "incremental.db", tmp_path / "whole.db"
    seen = []
    for database, kind in zip(databases, (Intake, WholeMergeIntake), strict=True):
        store = open_store(database)
        try:
            intake = kind(store)
            for request in [*_STORED, *requests]:
                intake.events(lines(*request))
            seen.append(observe(store))
        finally:
            store.close()
    assert seen == [expected, expected]
    assert stored_rows(databases[0], ["pj:k"]) == stored_rows(databases[1], ["pj:k"])


# -- the property: request by request, an incremental append equals a whole re-merge ----

_IDS = st.sampled_from([f"m{n}" for n in range(10)])
_CALLS = st.sampled_from(["c0", "c1", "c2", "c3", "c4", "c5"])
_TEXTS = st.sampled_from(
    ["Fix the export", "  ", "", "Done.\nAll green", "use sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 5]
)
_TIMES = st.one_of(
    st.none(),
    st.integers(0, 50).map(lambda s: f"2026-11-20T09:00:{s:02d}Z"),
)
_ROLES = st.sampled_from(["user", "assistant", "assistant", "user", "system", "tool"])


def _clean(event: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in event.items() if value is not None}


def _events(name: str) -> st.SearchStrategy[dict[str, Any]]:
    base = {"conversation_id": name}
    message_line = st.builds(
        lambda i, role, text, kind, parent, at: _clean(
            base
            | {"type": "message", "message_id": i, "role": role, "text": text, "kind": kind}
            | {"parent_message_id": parent, "created_at": at}
        ),
        _IDS,
        _ROLES,
        _TEXTS,
        st.sampled_from([None, None, "prompt", "reply", "notice"]),
        st.one_of(st.none(), st.none(), _IDS),
        _TIMES,
    )
    call_line = st.builds(
        lambda c, name_, message_id, at: _clean(
            base
            | {"type": "tool_call", "call_id": c, "name": name_, "arguments": {"n": c}}
            | {"message_id": message_id, "created_at": at}
        ),
        _CALLS,
        st.sampled_from(["Bash", "Edit"]),
        st.one_of(st.none(), st.none(), _IDS),
        _TIMES,
    )
    result_line = st.builds(
        lambda c, status, output: _clean(
            base | {"type": "tool_result", "call_id": c, "status": status, "output": output}
        ),
        _CALLS,
        st.sampled_from(["ok", "error"]),
        st.one_of(st.none(), _TEXTS),
    )
    description = st.builds(
        lambda title, started, ended, cwd: (
            base
            | {"type": "conversation"}
            | _clean({"started_at": started, "ended_at": ended, "cwd": cwd})
            | ({} if title == "absent" else {"title": title})
        ),
        st.sampled_from(["absent", "absent", "", "Export fix", None]),
        _TIMES,
        _TIMES,
        st.sampled_from([None, "/work/shop"]),
    )
    task_line = st.builds(
        lambda task, status: _clean(
            base | {"type": "task", "task_id": task, "status": status, "title": f"Task {task}"}
        ),
        st.sampled_from(["t0", "t1"]),
        st.sampled_from([None, "open", "completed"]),
    )
    task_event = st.builds(
        lambda event_id, task, text: (
            base
            | {"type": "task_event", "event_id": event_id, "kind": "progress", "text": text}
            | _clean({"task_id": task})
        ),
        st.sampled_from(["e0", "e1", "e2"]),
        st.sampled_from([None, "t0", "t1"]),
        _TEXTS,
    )
    return st.one_of(
        *[message_line] * 4,
        *[call_line] * 2,
        result_line,
        description,
        task_line,
        task_event,
    )


_EVENTS = {name: _events(name) for name in ("a", "b")}
"""The lines of conversations ``a`` and ``b``, built once: building the strategies again for
every line cost as much as storing it. Each example renames them to ids of its own."""


def _request(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(["a", "a", "a", "b"]), min_size=1, max_size=5))
    return [draw(_EVENTS[name]) | {"conversation_id": f"{prefix}-{name}"} for name in names]


@st.composite
def _requests(draw: st.DrawFn, prefix: str) -> list[list[dict[str, Any]]]:
    """A conversation (or two) sent in several requests: new ids, revisions, late results."""
    return [_request(draw, prefix) for _ in range(draw(st.integers(2, 10)))]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqlStore, SqlStore]]:
    """Two stores for every example, opened once: each example writes conversations of
    its own (ids with the example's number), so what one stores no other compares."""
    folder = tmp_path_factory.mktemp("intake-pair")
    incremental, whole = open_store(folder / "incremental.db"), open_store(folder / "whole.db")
    try:
        yield incremental, whole
    finally:
        incremental.close()
        whole.close()


_EXAMPLES = itertools.count()

FULL_EXAMPLES = 60
POSTGRES_EXAMPLES = 20
"""Examples the PostgreSQL pass draws, with a fixed seed (the SQLite pass draws
``FULL_EXAMPLES`` at random). Measured on PostgreSQL with ``--cov=proctor.store
--cov-branch`` over this file: 20 fixed examples reach the same 2,567 lines and 171
branches of ``src/proctor/store`` as one run of 60 random ones (so do 30 and 40 fixed);
another run of 60 random ones reached 3 lines and branches more (``_writer.py``: a source
whose content hash changed but not its fingerprint), which tests/ingest/test_reimport.py
with test_stored_rows_match_the_reference_path.py reach on PostgreSQL. The file took
36-43 CPU s of the test process there with 60 random examples, 23 with 20 (load 10)."""


@pytest.mark.slow
@settings(
    max_examples=POSTGRES_EXAMPLES if ON_POSTGRES else FULL_EXAMPLES,
    derandomize=ON_POSTGRES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_appending_request_by_request_stores_exactly_what_a_whole_re_merge_stores(
    pair: tuple[SqlStore, SqlStore], data: st.DataObject
) -> None:
    prefix = f"x{next(_EXAMPLES)}"
    requests = data.draw(_requests(prefix))
    incremental_store, whole_store = pair
    incremental, whole = Intake(incremental_store), WholeMergeIntake(whole_store)
    for request in requests:
        body = lines(*request)
        answers = [_answer(intake, body) for intake in (incremental, whole)]
        assert answers[0] == answers[1], request
    ids = [f"pj:{prefix}-a", f"pj:{prefix}-b"]
    assert stored_rows(incremental_store, ids) == stored_rows(whole_store, ids)


def _answer(intake: Intake, body: bytes) -> Any:
    try:
        report = intake.events(body, origin="property")
    except PayloadError as refused:
        return ("refused", [(p.line, p.reason) for p in refused.problems])
    return ("stored", report)
