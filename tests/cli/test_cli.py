"""The command line through its public surface: exit codes, output, no tracebacks (UI-1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from tests.backends import database_exists
from tests.ingest import planted


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    return planted.write_all(tmp_path / "inputs")


def test_init_creates_the_database_in_proctor_home(proctor_home: Path) -> None:
    result = run("init")
    assert result.exit_code == 0
    assert database_exists(proctor_home / "proctor.db")
    assert f"Created database {proctor_home / 'proctor.db'}" in result.output
    assert "Using existing database" in run("init").output


def test_ingest_json_reports_every_format_and_the_redactions(inputs: list[Path]) -> None:
    result = run("ingest", *map(str, inputs), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["status"] == "completed"
    assert set(report["by_format"]) == {
        "claude_code",
        "codex",
        "openai_chat",
        "anthropic",
        "gemini_cli",
    }
    assert report["conversations"] == 5
    assert report["redactions"] >= len(planted.SECRETS)
    again = json.loads(run("ingest", *map(str, inputs), "--json").output)
    assert again["conversations_written"] == 0


def test_ingest_with_bad_input_exits_1_and_names_the_line(
    tmp_path: Path, inputs: list[Path]
) -> None:
    broken = tmp_path / "broken.jsonl"
    lines = inputs[0].read_text().splitlines()
    broken.write_text(lines[0] + "\n{oops\n" + "\n".join(lines[1:]) + "\n")
    result = CliRunner().invoke(cli, ["ingest", str(broken)])
    assert result.exit_code == 1
    assert f"error: {broken}:2: invalid JSON" in result.output
    assert "Traceback" not in result.output


def test_ingest_without_paths_and_without_session_folders_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    result = CliRunner().invoke(cli, ["ingest"])
    assert result.exit_code == 2
    assert "no agent session folders found" in result.output


def test_ingest_without_paths_offers_the_default_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user"
    planted.write_claude_code(home / ".claude" / "projects")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    offered = CliRunner().invoke(cli, ["ingest"])
    assert offered.exit_code == 2  # not a terminal: nothing is imported without --yes
    assert str(home / ".claude" / "projects") in offered.output
    assert "proctor ingest --yes" in offered.output
    result = CliRunner().invoke(cli, ["ingest", "--yes"])
    assert result.exit_code == 0, result.output
    assert json.loads(run("conversations", "list", "--json").output)["total"] == 1


@pytest.mark.slow
def test_list_show_and_delete_a_conversation(inputs: list[Path]) -> None:
    run("ingest", *map(str, inputs))
    listing = json.loads(run("conversations", "list", "--json").output)
    assert listing["total"] == 5
    claude = next(item for item in listing["items"] if item["format"] == "claude_code")

    shown = run("conversations", "show", claude["external_id"][:8])
    assert shown.exit_code == 0
    assert "Deploy with my key [REDACTED:anthropic_key] please" in shown.output
    assert "Bash(command=cat .env)" in shown.output
    assert "[REDACTED:" in shown.output

    as_json = json.loads(run("conversations", "show", claude["conversation_id"], "--json").output)
    assert as_json["messages"][0]["role"] == "user"
    assert as_json["tool_calls"][0]["name"] == "Bash"

    deleted = run("conversations", "delete", claude["conversation_id"], "--yes")
    assert deleted.exit_code == 0
    assert json.loads(run("conversations", "list", "--json").output)["total"] == 4
    missing = CliRunner().invoke(cli, ["conversations", "show", claude["conversation_id"]])
    assert missing.exit_code == 2
    assert "no conversation matches" in missing.output
    assert "Traceback" not in missing.output


def test_transcript_text_that_looks_like_markup_is_shown_literally(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {
                    "role": "user",
                    "content": "print [bold red]this[/bold red] and [link=http://x]y[/link]",
                },
                {"role": "assistant", "content": "ok"},
            ]
        )
    )
    assert run("ingest", str(chat)).exit_code == 0
    conversation_id = json.loads(run("conversations", "list", "--json").output)["items"][0][
        "conversation_id"
    ]
    shown = run("conversations", "show", conversation_id)
    assert "print [bold red]this[/bold red] and [link=http://x]y[/link]" in shown.output


def test_every_command_has_help() -> None:
    for args in (
        ["--help"],
        ["ingest", "--help"],
        ["watch", "--help"],
        ["conversations", "list", "--help"],
        ["conversations", "show", "--help"],
        ["conversations", "delete", "--help"],
        ["init", "--help"],
        ["demo", "--help"],
    ):
        result = run(*args)
        assert result.exit_code == 0
        assert "Usage:" in result.output


def test_a_deleted_conversation_comes_back_when_its_file_is_imported_again(
    inputs: list[Path],
) -> None:
    run("ingest", str(inputs[0]))
    conversation_id = json.loads(run("conversations", "list", "--json").output)["items"][0][
        "conversation_id"
    ]
    assert run("conversations", "delete", conversation_id, "--yes").exit_code == 0
    assert json.loads(run("conversations", "list", "--json").output)["total"] == 0
    again = json.loads(run("ingest", str(inputs[0]), "--json").output)
    assert again["conversations_written"] == 1
    assert (
        json.loads(run("conversations", "list", "--json").output)["items"][0]["conversation_id"]
        == conversation_id
    )
