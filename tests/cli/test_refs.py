"""The refs a listing prints are unique and each one reaches its own row (UI-1).

Formats reuse session ids: four synthetic Claude Code logs all say session ``s1``, two
sessions hold a sub-agent ``e1c84ba5``, and the sessions written here add a shared
12-character prefix, a session id that begins another, and a Claude Code session that
carries the Codex example's id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.cli._refs import unique_prefixes
from proctor.cli.main import cli
from tests.conftest import EXAMPLES_DIR, TRANSCRIPTS_DIR

CODEX_SESSION = "01a20cd6-ef6e-7d2e-ab38-6a552c5d6bae"
INVENTED_SESSIONS = (
    "shared-prefix-session-a",
    "shared-prefix-session-b",
    "run-7",
    "run-7-retry",
    CODEX_SESSION,
)


def _invoke(*args: str, partial: bool = False) -> Result:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in ((0, 1) if partial else (0,)), result.output
    return result


def _session_file(folder: Path, session_id: str) -> Path:
    """A two-message Claude Code session named after its id, as Claude Code names them."""
    path = folder / f"{session_id}.jsonl"
    common = {"isSidechain": False, "userType": "external", "cwd": "/work/app",
              "sessionId": session_id, "version": "2.0.0"}  # fmt: skip
    records = [
        {**common, "type": "user", "timestamp": "2026-03-02T10:00:00.000Z",
         "parentUuid": None, "uuid": f"{session_id}-u",
         "message": {"role": "user", "content": f"Work on {session_id}"}},
        {**common, "type": "assistant", "timestamp": "2026-03-02T10:00:05.000Z",
         "parentUuid": f"{session_id}-u", "uuid": f"{session_id}-a",
         "message": {"id": f"msg-{session_id}", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4", "content": [{"type": "text", "text": "Done."}],
                     "stop_reason": "end_turn",
                     "usage": {"input_tokens": 12, "output_tokens": 3}}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.fixture
def colliding(tmp_path: Path) -> None:
    if not TRANSCRIPTS_DIR.is_dir():
        pytest.skip("../shared is not available (set PROCTOR_SHARED_DIR)")
    folder = tmp_path / "claude" / "-work-app"
    folder.mkdir(parents=True)
    for session_id in INVENTED_SESSIONS:
        _session_file(folder, session_id)
    synthetic = TRANSCRIPTS_DIR / "claude-code" / "claude-code-log-synthetic"
    _invoke("ingest", str(synthetic), "--project", "synthetic", partial=True)  # bad lines kept out
    _invoke("ingest", str(EXAMPLES_DIR))
    _invoke("ingest", str(tmp_path / "claude"), "--project", "invented")


def _listed_refs(*args: str) -> list[str]:
    output = _invoke(*args).output
    return [line.split("│")[1].strip() for line in output.splitlines() if line.startswith("│")]


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.usefixtures("colliding")
def test_every_conversation_ref_is_unique_and_shows_its_own_conversation() -> None:
    stored = json.loads(_invoke("conversations", "list", "--all", "--limit", "1000",
                                "--json").output)  # fmt: skip
    external_ids = [item["external_id"] for item in stored["items"]]
    assert external_ids.count("s1") == 4 and external_ids.count(CODEX_SESSION) == 2
    refs = _listed_refs("conversations", "list", "--all", "--limit", "1000")
    assert len(refs) == stored["total"]
    assert len(set(refs)) == len(refs), sorted(refs)
    reached = {
        json.loads(_invoke("conversations", "show", ref, "--json").output)["conversation"][
            "conversation_id"
        ]
        for ref in refs
    }
    assert reached == {item["conversation_id"] for item in stored["items"]}


@pytest.mark.shared
@pytest.mark.usefixtures("colliding")
def test_a_session_id_is_the_ref_whenever_it_is_unambiguous() -> None:
    refs = set(_listed_refs("conversations", "list", "--all", "--limit", "1000"))
    assert {"run-7", "run-7-retry", "hook-fix-001", "62154fe7-682", "cccc333"} <= refs
    # 12 characters are shared, the whole session id is not
    assert {"shared-prefix-session-a", "shared-prefix-session-b"} <= refs
    # the same id in four files, in two formats, or for two sub-agents: the conversation
    # ids tell them apart, cut where one of their parts ends
    assert {"cc:session:dag_fork", "cc:session:dag_resume", "cc:session:dag_within"} <= refs
    assert {"cc:session:01a20cd6", "codex:01a20cd6"} <= refs
    assert {"cc:agent:dedup", "cc:agent:sidechain"} <= refs
    assert "s1" not in refs and "01a20cd6-ef6" not in refs


@pytest.mark.shared
@pytest.mark.usefixtures("colliding")
def test_a_ref_printed_by_the_list_is_accepted_by_supervise_too() -> None:
    refs = _listed_refs("conversations", "list", "--project", "synthetic")
    dag = next(ref for ref in refs if "dag_fork" in ref)
    enabled = _invoke("supervise", "enable", dag)
    assert dag == "cc:session:dag_fork"
    assert "Supervising cc:session:dag_fork.jsonl" in enabled.output


@pytest.mark.usefixtures("colliding")
@pytest.mark.shared
def test_every_finding_id_in_the_list_shows_its_finding() -> None:
    _invoke("check", "--all")
    stored = json.loads(_invoke("findings", "list", "--json").output)["items"]
    refs = _listed_refs("findings", "list")
    assert len(refs) == len(stored) >= 2 and len(set(refs)) == len(refs)
    shown = {json.loads(_invoke("findings", "show", ref, "--json").output)["finding_id"]
             for ref in refs}  # fmt: skip
    assert shown == {item["finding_id"] for item in stored}


hex_ids = st.lists(st.text("0123456789abcdef", min_size=16, max_size=32), max_size=40)


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine is no bug
@given(ids=hex_ids, length=st.integers(1, 12))
def test_a_unique_prefix_is_shared_by_no_other_id_of_the_listing(
    ids: list[str], length: int
) -> None:
    prefixes = unique_prefixes(ids, length)
    assert set(prefixes) == set(ids)
    for full, prefix in prefixes.items():
        assert full.startswith(prefix)
        assert len(prefix) >= min(length, len(full))
        others = [other for other in ids if other != full and other.startswith(prefix)]
        if len(prefix) < len(full):
            assert not others, (full, prefix, others)
        # one shorter would be shared (or below the least length)
        if len(prefix) > length:
            assert any(o != full and o.startswith(prefix[:-1]) for o in ids)
