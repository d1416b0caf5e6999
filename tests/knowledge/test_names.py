"""No entry name leads outside its knowledge-base folder (UI-5): refused, nothing touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from proctor.errors import NotFoundError
from proctor.knowledge import (
    EntryNameError,
    KnowledgeBase,
    check_entry_name,
    list_entries,
    read_entry,
    slug_entry_name,
)
from proctor.knowledge._names import writable_path

TRAVERSALS = [
    "..",
    "../secret",
    "../../etc/passwd",
    "notes/../../secret",
    "notes/./x",
    "/etc/passwd",
    "//server/share/x",
    "\\\\server\\share\\x",
    "..\\..\\secret",
    "C:secret",
    "c:/Windows/win.ini",
    "D:\\x",
    "~/secret",
    "~root/x",
    "secret\x00.md",
    "a\x00/../../b",
    "line\nbreak",
    "tab\there",
    ".hidden",
    "notes/.git/config",
    "notes//x",
    "trailing/",
    "",
    "   ",
    "CON",
    "nul.md",
    "com1",
    "LPT9.txt",
    "broken\ud800",
]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[KnowledgeBase, Path]:
    """A base folder with one note, next to a secret file outside it."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "ledger-export.md").write_text("# Ledger export\n")
    secret = tmp_path / "secret.md"
    secret.write_text("outside")
    return KnowledgeBase("local", root, writable=True), secret


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


@pytest.mark.parametrize("name", TRAVERSALS)
def test_a_name_that_could_escape_is_refused_for_reading_and_writing(
    layout: tuple[KnowledgeBase, Path], name: str
) -> None:
    base, secret = layout
    before = _snapshot(secret.parent)

    with pytest.raises(EntryNameError, match="is refused"):
        slug_entry_name(name)
    with pytest.raises(EntryNameError, match="is refused"):
        check_entry_name(name)
    with pytest.raises(EntryNameError):
        read_entry(base, name)
    with pytest.raises(EntryNameError):
        writable_path(base.root, name)

    assert _snapshot(secret.parent) == before


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Ledger export", "ledger-export"),
        ("ledger-export.md", "ledger-export"),
        ("src/jobs/exportLedger.ts".replace("/", " "), "src-jobs-exportledger-ts"),
        ("Ünïcode Notes", "ünïcode-notes"),
        ("账本导出", "账本导出"),
        ("%2e%2e%2fetc", "2e-2e-2fetc"),
        ("x" * 200, "x" * 80),
    ],
)
def test_names_are_slugged_into_flat_lower_case_file_stems(name: str, slug: str) -> None:
    assert slug_entry_name(name) == slug


def test_proctor_writes_no_entry_in_a_sub_folder(layout: tuple[KnowledgeBase, Path]) -> None:
    with pytest.raises(EntryNameError, match="sub-folders"):
        slug_entry_name("team/ledger")


def test_a_link_pointing_outside_is_neither_listed_read_nor_written(
    layout: tuple[KnowledgeBase, Path],
) -> None:
    base, secret = layout
    (base.root / "leak.md").symlink_to(secret)
    (base.root / "outside").symlink_to(secret.parent, target_is_directory=True)

    assert [entry.name for entry in list_entries(base)] == ["ledger-export"]
    with pytest.raises(EntryNameError, match="outside"):
        read_entry(base, "leak")
    with pytest.raises(EntryNameError, match="outside"):
        read_entry(base, "outside/secret")
    with pytest.raises(EntryNameError, match="symbolic link"):
        writable_path(base.root, "leak")
    assert secret.read_text() == "outside"


def test_a_link_inside_the_folder_is_read_but_never_written_through(
    layout: tuple[KnowledgeBase, Path],
) -> None:
    base, _ = layout
    (base.root / "alias.md").symlink_to(base.root / "ledger-export.md")

    assert read_entry(base, "alias").text == "# Ledger export\n"
    with pytest.raises(EntryNameError, match="symbolic link"):
        writable_path(base.root, "alias")


def test_notes_in_sub_folders_are_listed_and_read_hidden_ones_are_not(
    layout: tuple[KnowledgeBase, Path],
) -> None:
    base, _ = layout
    (base.root / "team").mkdir()
    (base.root / "team" / "ledger.md").write_text("team note")
    (base.root / ".obsidian").mkdir()
    (base.root / ".obsidian" / "workspace.md").write_text("hidden")
    (base.root / "image.png").write_bytes(b"\x89PNG")

    assert [e.name for e in list_entries(base)] == ["ledger-export", "team/ledger"]
    assert read_entry(base, "team/ledger").text == "team note"
    assert read_entry(base, "team/ledger.md").name == "team/ledger"
    with pytest.raises(NotFoundError):
        read_entry(base, "team/missing")


def test_the_base_folder_may_itself_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("A")
    os.symlink(real, tmp_path / "linked")
    base = KnowledgeBase("local", tmp_path / "linked", writable=True)

    assert [e.name for e in list_entries(base)] == ["a"]
    assert read_entry(base, "a").text == "A"
