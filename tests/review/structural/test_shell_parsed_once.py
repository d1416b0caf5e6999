"""A shell line is read once per batch: its program words and install forms are kept."""

from __future__ import annotations

import pytest

from proctor.review.structural import _shell
from proctor.review.structural._output import exit_line, printed_exit_code
from proctor.review.structural._packages import package_installs
from proctor.review.structural._shell import program_args
from proctor.rules.builtin._shell_words import simple_commands


def test_the_same_command_gets_its_program_words_once_and_then_the_kept_answer() -> None:
    (command,) = simple_commands("uv run --frozen pytest -q tests/a.py")
    first = program_args(command)
    assert [a.text for a in first] == ["pytest", "-q", "tests/a.py"]
    assert program_args(command) is first


def test_commands_of_equal_text_on_different_lines_keep_their_own_spans() -> None:
    (alone,) = simple_commands("pip install requests")
    _, second = simple_commands("cd app && pip install requests")
    assert [a.span for a in program_args(alone)] == [(0, 3), (4, 11), (12, 20)]
    assert [a.span for a in program_args(second)] == [(10, 13), (14, 21), (22, 30)]


def test_the_kept_program_words_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shell, "_PROGRAM_ARGS_KEPT", 16)
    monkeypatch.setattr(_shell, "_program_args_seen", {})
    for index in range(50):
        (command,) = simple_commands(f"npm install left-pad-{index}")
        assert [a.text for a in program_args(command)] == ["npm", "install", f"left-pad-{index}"]
        assert len(_shell._program_args_seen) <= 16


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("uv pip install httpx", [("httpx", "pypi")]),
        ("uv tool install ruff && uv add rich", [("ruff", "pypi"), ("rich", "pypi")]),
        ("sudo apt-get install -y jq curl", [("jq", "apt"), ("curl", "apt")]),
        ("python -m pip install -r req.txt flask", [("flask", "pypi")]),
        ("dotnet add app.csproj package Serilog", [("Serilog", "nuget")]),
        ("uv run pytest && git add . && ls", []),
        ("npx pnpm i zod", [("zod", "npm")]),
    ],
)
def test_install_forms_are_found_by_the_program_that_starts_them(
    line: str, found: list[tuple[str, str]]
) -> None:
    uses = package_installs(simple_commands(line))
    assert [(u.name, u.ecosystem) for u in uses] == found


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Exit code 1\nTraceback …", 1),
        ("output\nExit Code: 2", 2),
        ("Chunk ID: x\nProcess exited with code -1\nOutput:", -1),
        ("first\\nExit Code: 3\\nrest", 3),
        ("all good\n" * 500, None),
        ("exit code 1 in lower case is not a status line", None),
        ("", None),
        (None, None),
    ],
)
def test_the_printed_exit_status_is_found_or_passed_over(
    text: str | None, code: int | None
) -> None:
    assert printed_exit_code(text) == code
    span = exit_line(text)
    assert (span is None) == (code is None)
    if span is not None and text is not None:
        assert text[span[0] : span[1]].endswith(str(code))
