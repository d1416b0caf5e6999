"""``proctor watch --desktop-notify``: each new notification on the desktop, through the
platform's own program; silently off where there is none (SPEC SUP-8)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.notify import DesktopNotifier, desktop_command
from proctor.store import Notification, open_store
from tests.backends import database_env, until
from tests.conftest import EXAMPLES_DIR

FAKE = """#!{python}
import json, sys
with open({record!r}, "a", encoding="utf-8") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def _fake_notify_send(folder: Path) -> Path:
    """A ``notify-send`` that records its arguments, one JSON line per call."""
    folder.mkdir()
    record = folder / "calls.jsonl"
    program = folder / "notify-send"
    program.write_text(FAKE.format(python=sys.executable, record=str(record)))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return record


def _notification(title: str = "Destructive command: rm -r of <b>/srv</b> & co") -> Notification:
    from datetime import UTC, datetime

    return Notification(
        key="k" * 24, finding_id="f" * 32, created_at=datetime.now(UTC), read_at=None,
        title=title, severity="high", rule="destructive_command", origin="rule",
        action="request_review", category="risk", status="open", conversation_id="pj:c",
        conversation_title="Free disk space", project="ops-lab", cwd=None,
        webhook_state=None, webhook_attempts=0, webhook_error=None,
    )  # fmt: skip


def test_notify_send_gets_the_title_and_an_escaped_body_as_arguments() -> None:
    command = desktop_command(_notification(), platform="linux", tool="/x/notify-send")
    assert command is not None
    assert command[:4] == ["/x/notify-send", "--app-name=Proctor", "--urgency=critical", "--"]
    title, body = command[4:]
    assert title == "Proctor · high: Destructive command: rm -r of <b>/srv</b> & co"
    assert body == "ops-lab · Free disk space\nproctor findings show ffffffffffff"


def test_osascript_gets_title_and_body_as_arguments_not_inside_its_script() -> None:
    command = desktop_command(_notification('say "hi" \\ end'), platform="darwin", tool="osa")
    assert command is not None
    assert command[-2].endswith('say "hi" \\ end')
    assert all('"hi"' not in part for part in command[:-2])


def test_desktop_notifications_are_off_where_the_platform_offers_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert DesktopNotifier(platform="win32").why_off == "no desktop notifications on win32"
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = DesktopNotifier(platform="linux")
    assert (missing.on, missing.why_off) == (False, "notify-send is not installed")
    assert not missing.show(_notification())
    assert desktop_command(_notification(), platform="linux") is None


def _watch(home: Path, folder: Path, path: str, *flags: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PROCTOR_HOME": str(home), **database_env(home), "PATH": path}
    return subprocess.Popen(
        [sys.executable, "-m", "proctor.cli.main", "watch", str(folder), *flags],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()


def _until_line(process: subprocess.Popen[str], start: str) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(start):
            return line
    raise AssertionError(f"watch ended without printing {start!r}")


@pytest.mark.slow
def test_watch_shows_each_new_notification_through_notify_send(
    proctor_home: Path, tmp_path: Path
) -> None:
    record = _fake_notify_send(tmp_path / "bin")
    store = open_store(proctor_home / "proctor.db")
    ingest(store, [EXAMPLES_DIR])
    store.close()
    followed = tmp_path / "followed"
    followed.mkdir()
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    watch = _watch(proctor_home, followed, path, "--desktop-notify")
    try:
        assert "notify-send" in _until_line(watch, "Desktop notifications on")
        env = {**os.environ, "PROCTOR_HOME": str(proctor_home), **database_env(proctor_home)}
        checked = subprocess.run(
            [sys.executable, "-m", "proctor.cli.main", "check", "--all", "--json"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert checked.returncode == 0, checked.stderr
        notified = {k for c in json.loads(checked.stdout)["conversations"] for k in c["notified"]}

        def shown() -> list[list[str]]:
            """notify-send was called once per new notification"""
            if not record.exists():
                return []
            calls = [json.loads(line) for line in record.read_text().splitlines()]
            return calls if len(calls) >= len(notified) else []

        calls = until(shown)
    finally:
        _stop(watch)
    assert len(calls) == len(notified)
    assert all(call[0] == "--app-name=Proctor" and call[2] == "--" for call in calls)
    assert any("Claim that the tests pass" in call[3] for call in calls)
    assert all("proctor findings show " in call[4] for call in calls)


@pytest.mark.slow
def test_watch_without_notify_send_says_desktop_notifications_are_off(
    proctor_home: Path, tmp_path: Path
) -> None:
    followed = tmp_path / "followed"
    followed.mkdir()
    python_only = str(Path(sys.executable).parent)
    watch = _watch(proctor_home, followed, python_only, "--desktop-notify")
    try:
        line = _until_line(watch, "Desktop notifications off")
    finally:
        _stop(watch)
    assert line.strip() == "Desktop notifications off: notify-send is not installed."
