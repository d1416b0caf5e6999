"""``proctor kb`` and ``proctor graph continue`` through the command line (UI-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.store import open_store
from tests.api.conftest import database, prepared_database

__all__ = ["database", "prepared_database"]


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.fixture
def ids(database: Path) -> tuple[str, str]:
    """The examples' result and its `npm run db:migrate` entity."""
    store = open_store(database, read_only=True)
    try:
        result_id = store.overview(limit=1)[0].result_id
        view = store.graph(result_id)
        entity_id = next(e.entity_id for e in view.entities if e.name == "npm run db:migrate")
        return result_id, entity_id
    finally:
        store.close()


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.name.startswith("proctor.db")
    }


def test_kb_write_shows_the_preview_and_writes_only_when_confirmed(
    ids: tuple[str, str], proctor_home: Path
) -> None:
    result_id, entity_id = ids

    declined = run("kb", "write", result_id[:8], entity_id[:8], input="n\n")
    assert declined.exit_code == 0, declined.output
    assert "Create local:npm-run-db-migrate.md" in declined.output
    assert "# npm run db:migrate" in declined.output and "Nothing written." in declined.output
    assert not (proctor_home / "knowledge" / "npm-run-db-migrate.md").exists()

    accepted = run("kb", "write", result_id[:8], entity_id[:8], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    path = proctor_home / "knowledge" / "npm-run-db-migrate.md"
    assert f"Created {path}" in accepted.output
    assert path.read_text().startswith("# npm run db:migrate\n")

    listed = run("kb", "list")
    assert "npm-run-db-migrate" in listed.output
    shown = run("kb", "show", "npm-run-db-migrate")
    assert shown.output.startswith("# npm run db:migrate")

    extended = run("kb", "write", result_id, entity_id, "--yes")
    assert "Append to local:npm-run-db-migrate.md" in extended.output
    assert "Extended" in extended.output
    assert path.read_text().count("## Update ") == 1


def test_kb_preview_json_holds_the_text_and_digest_and_writes_nothing(
    ids: tuple[str, str], proctor_home: Path
) -> None:
    result_id, entity_id = ids
    result = run("kb", "preview", result_id, entity_id, "--entry", "Migrations", "--json")

    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["entry"] == "migrations" and data["mode"] == "create"
    assert len(data["digest"]) == 64 and data["text"].startswith("# npm run db:migrate")
    assert not (proctor_home / "knowledge").exists()


@pytest.mark.parametrize(
    "entry",
    ["../escape", "/tmp/escape", "C:\\escape", "a/../../escape", "x\x00y", "~/escape", ".profile"],
)
def test_kb_refuses_names_that_leave_the_folder_and_writes_nothing(
    ids: tuple[str, str], proctor_home: Path, entry: str
) -> None:
    result_id, entity_id = ids
    before = _tree(proctor_home.parent)

    write = run("kb", "write", result_id, entity_id, "--entry", entry, "--yes")
    show = run("kb", "show", entry)

    assert write.exit_code == 2 and "is refused" in write.output
    assert show.exit_code == 2 and "is refused" in show.output
    assert _tree(proctor_home.parent) == before


def test_kb_attaches_external_bases_read_only(
    ids: tuple[str, str], proctor_home: Path, tmp_path: Path
) -> None:
    result_id, entity_id = ids
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "ledger.md").write_text("Team note\n")

    assert run("kb", "attach", "wiki", str(wiki)).exit_code == 0
    bases = run("kb", "bases")
    assert "wiki  read-only" in bases.output and "local  writable" in bases.output
    assert run("kb", "show", "ledger", "--base", "wiki").output == "Team note\n\n"
    refused = run("kb", "write", result_id, entity_id, "--base", "wiki", "--yes")
    assert refused.exit_code == 2 and "read-only" in refused.output
    assert sorted(p.name for p in wiki.iterdir()) == ["ledger.md"]
    assert run("kb", "detach", "wiki").exit_code == 0
    assert "wiki" not in run("kb", "bases").output
    assert run("kb", "attach", "local", str(wiki)).exit_code == 2


def test_kb_dir_sets_the_local_folder(proctor_home: Path, tmp_path: Path) -> None:
    assert run("kb", "dir").output.strip() == str(proctor_home / "knowledge")
    assert run("kb", "dir", str(tmp_path / "notes")).output.strip() == str(tmp_path / "notes")
    assert run("kb", "dir", "--reset").output.strip() == str(proctor_home / "knowledge")


def test_graph_continue_writes_a_prompt_file_and_says_it_cannot_inject(
    ids: tuple[str, str], proctor_home: Path
) -> None:
    result_id, entity_id = ids

    result = run("graph", "continue", result_id[:8], "--entity", entity_id[:8])

    assert result.exit_code == 0, result.output
    files = list((proctor_home / "prompts").iterdir())
    assert len(files) == 1 and f"Prompt file: {files[0]}" in result.output
    text = files[0].read_text()
    assert len(text) <= 12_001 and "<<<PROCTOR-CONTEXT " in text
    assert "npm run db:migrate" in text
    assert "Left out to stay within the limit" in result.output


def test_graph_continue_prints_json_and_refuses_to_overwrite_a_file(
    ids: tuple[str, str], tmp_path: Path
) -> None:
    result_id, _ = ids
    printed = run("graph", "continue", result_id, "--print", "--json")
    data = json.loads(printed.output)
    assert data["prompt_file"] is None and data["chars"] == len(data["draft"]) <= 12_000

    out = tmp_path / "prompt.md"
    assert run("graph", "continue", result_id, "--out", str(out)).exit_code == 0
    assert out.read_text().startswith("Continuing from Proctor's review result")
    again = run("graph", "continue", result_id, "--out", str(out))
    assert again.exit_code == 2 and "already exists" in again.output


def test_graph_continue_edits_the_draft_in_the_editor(
    ids: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result_id, _ = ids
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "Only my words.\\n" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    out = tmp_path / "edited.md"

    result = run("graph", "continue", result_id, "--edit", "--out", str(out))

    assert result.exit_code == 0, result.output
    assert out.read_text() == "Only my words.\n"


def test_graph_continue_refuses_an_unknown_focus(ids: tuple[str, str]) -> None:
    result_id, _ = ids
    result = run("graph", "continue", result_id, "--entity", "no-such-entity")
    assert result.exit_code == 2 and "has no entity" in result.output
