"""``proctor notifications``: list and mark read, on findings ``proctor check`` produced (SUP-8)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from tests.conftest import EXAMPLES_DIR


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def listing(*args: str) -> dict[str, Any]:
    result = run("notifications", "--json", *args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


@pytest.fixture
def checked() -> dict[str, Any]:
    """The examples ingested and checked: their notifying findings wrote notifications."""
    assert run("ingest", str(EXAMPLES_DIR)).exit_code == 0
    result = run("check", "--all", "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def test_every_notification_check_wrote_is_listed_once_with_its_finding(
    checked: dict[str, Any],
) -> None:
    notified = {key for c in checked["conversations"] for key in c["notified"]}
    assert notified, "the examples hold findings that ask for attention"
    data = listing()
    assert (data["total"], data["unread"]) == (len(notified), len(notified))
    assert {item["id"] for item in data["items"]} == notified
    findings = {f["key"]: f for c in checked["conversations"] for f in c["findings"]}
    for item in data["items"]:
        finding = findings[item["id"]]
        assert (item["title"], item["severity"], item["rule"]) == (
            finding["title"],
            finding["severity"],
            finding["rule"],
        )
        assert item["show"] == f"proctor findings show {item['finding_id']}"
    times = [item["created_at"] for item in data["items"]]
    assert times == sorted(times, reverse=True)


def test_the_command_each_notification_names_shows_its_finding(checked: dict[str, Any]) -> None:
    item = listing()["items"][0]
    shown = run(*item["show"].split()[1:], "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["title"] == item["title"]


def test_the_ids_of_the_table_are_what_read_takes(checked: dict[str, Any]) -> None:
    table = run("notifications")
    assert table.exit_code == 0, table.output
    assert f"of {checked_total(checked)} · {checked_total(checked)} unread" in table.output
    first = re.search(r"│ ([0-9a-f]{8,}) │ ●  *│", table.output)
    assert first is not None, table.output
    marked = run("notifications", "read", first.group(1))
    assert marked.exit_code == 0, marked.output
    assert f"1 marked read · {checked_total(checked) - 1} unread" in marked.output
    unread = listing("--unread")
    assert first.group(1) not in {item["id"][: len(first.group(1))] for item in unread["items"]}
    assert unread["total"] == checked_total(checked) - 1


def checked_total(checked: dict[str, Any]) -> int:
    return len({key for c in checked["conversations"] for key in c["notified"]})


def test_a_notification_is_also_marked_read_by_its_findings_id(checked: dict[str, Any]) -> None:
    item = listing()["items"][-1]
    result = run("notifications", "read", item["finding_id"][:12], "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["marked"] == [item["id"]]
    (read,) = [i for i in listing()["items"] if i["id"] == item["id"]]
    assert (read["unread"], read["read_at"] is not None) == (False, True)


def test_read_all_clears_the_unread_and_the_unread_listing_says_so(
    checked: dict[str, Any],
) -> None:
    result = run("notifications", "read", "--all")
    assert result.exit_code == 0, result.output
    assert f"{checked_total(checked)} marked read · 0 unread" in result.output
    assert listing("--unread") == {"total": 0, "unread": 0, "offset": 0, "limit": 50, "items": []}
    assert "No unread notifications." in run("notifications", "--unread").output
    assert listing()["total"] == checked_total(checked)


def test_pages_of_the_listing_cover_every_notification(checked: dict[str, Any]) -> None:
    total = checked_total(checked)
    seen = [
        item["id"]
        for offset in range(total)
        for item in listing("--limit", "1", "--offset", str(offset))["items"]
    ]
    assert len(set(seen)) == total


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("read",), "name the notifications to mark read, or pass --all"),
        (("read", "abc", "--all"), "not both"),
        (("read", "zzzz"), "no notification matches 'zzzz'"),
    ],
)
def test_a_wrong_read_is_refused_with_what_to_do_and_marks_nothing(
    checked: dict[str, Any], args: tuple[str, ...], message: str
) -> None:
    result = CliRunner().invoke(cli, ["notifications", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert listing()["unread"] == checked_total(checked)


def test_an_empty_home_has_no_notifications() -> None:
    assert run("init").exit_code == 0
    assert "No notifications." in run("notifications").output
