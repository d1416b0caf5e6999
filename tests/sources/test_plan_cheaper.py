"""Planning an import does less per file and decides the same: whether a file is JSON
Lines is told from as few of its first lines as that takes, and files are told apart by
real paths resolved a folder at a time (``RealPaths``), the same as ``Path.resolve()``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.sources import _source, default_adapters, plan_import
from proctor.sources._real_paths import RealPaths
from proctor.sources._source import Sample


def _session(transcripts_dir: Path) -> Path:
    return next(
        path
        for path in sorted((transcripts_dir / "claude-code").rglob("*.jsonl"))
        if "subagents" not in path.parts and path.read_bytes().count(b"\n") > 20
    )


def test_json_lines_are_told_from_their_first_two_lines(
    transcripts_dir: Path, tmp_path: Path, head_parses: list[bytes]
) -> None:
    copy = tmp_path / "session.jsonl"
    shutil.copy(_session(transcripts_dir), copy)
    sample = Sample(copy)
    assert sample.is_jsonl is True
    assert len(head_parses) == 2  # the first two lines, each once
    assert len(sample.first_records(2)) == 2
    assert len(head_parses) == 2  # the head's scan kept them


class _EveryFlag(_source._LazyFlags):
    """The flags computed all at once, as before they were computed lazily."""

    def __init__(self, size: int, flag: Any) -> None:
        super().__init__(size, flag)
        for index in range(size):
            self[index]


_LINES = st.sampled_from(
    [
        b'{"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user"}}',
        b'{"a": 1}',
        b"[1, 2]",
        b'"a string"',
        b"42",
        b"{",
        b"}",
        b"[",
        b"]",
        b'  "key": "value",',
        b'{"torn": "li',
        b"plain prose, not JSON",
        b"",
        b"   ",
        b"\xef\xbb\xbf{}",
        b"null",
    ]
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(_LINES, min_size=1, max_size=14),
    suffix=st.sampled_from([".jsonl", ".json", ".txt", ".ndjson", ""]),
    final_newline=st.booleans(),
)
def test_told_lazily_as_from_every_leading_line(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    lines: list[bytes],
    suffix: str,
    final_newline: bool,
) -> None:
    path = tmp_path_factory.mktemp("heads") / f"file{suffix}"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline else b""))
    lazy = Sample(path).is_jsonl
    with monkeypatch.context() as patched:
        patched.setattr(_source, "_LazyFlags", _EveryFlag)
        eager = Sample(path).is_jsonl
    assert lazy == eager


def test_every_shared_file_is_told_as_from_every_leading_line(
    transcripts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [p for p in sorted(transcripts_dir.rglob("*")) if p.is_file() and p.stat().st_size]
    assert files
    lazy = [Sample(path).is_jsonl for path in files]
    monkeypatch.setattr(_source, "_LazyFlags", _EveryFlag)
    assert [Sample(path).is_jsonl for path in files] == lazy


def test_real_paths_are_what_resolve_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_folder = tmp_path / "real"
    (real_folder / "inner").mkdir(parents=True)
    plain = real_folder / "inner" / "a.jsonl"
    plain.write_text("{}\n")
    (tmp_path / "linked-folder").symlink_to(real_folder)
    (real_folder / "linked-file.jsonl").symlink_to(plain)
    (real_folder / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    monkeypatch.chdir(real_folder)
    asked = [
        plain,
        tmp_path / "linked-folder" / "inner" / "a.jsonl",  # through a linked folder
        real_folder / "linked-file.jsonl",  # a linked file
        real_folder / "dangling.jsonl",
        real_folder / "missing.jsonl",
        Path("inner/a.jsonl"),  # relative
        real_folder / "inner" / ".." / "inner" / "a.jsonl",
        real_folder / "inner" / "..",
        Path("."),
    ]
    real = RealPaths()
    for path in asked + asked:  # the second time from the folders kept
        assert real(path) == path.resolve(), path


def test_a_file_named_twice_is_planned_once(transcripts_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    session = folder / "session.jsonl"
    shutil.copy(_session(transcripts_dir), session)
    (tmp_path / "same-folder").symlink_to(folder)
    (tmp_path / "same-file.jsonl").symlink_to(session)
    plan = plan_import(
        [folder, tmp_path / "same-folder", tmp_path / "same-file.jsonl", session],
        default_adapters(),
    )
    assert [unit.path for _, unit in plan.units] == [session]
    assert os.path.samefile(plan.units[0][1].path, session)
