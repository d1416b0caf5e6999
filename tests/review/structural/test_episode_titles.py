"""Episode titles a person can read, even where the request's words were redacted (issue 20).

Sanitised Codex logs under ``../shared/transcripts`` keep only placeholders such as
``[REDACTED_TEXT len=115 sha=a83ebe6f]`` where the user's words were; an episode (and its
story line) titled by that tells nothing. Such a request is titled by what came of it
(``Request (redacted) → 2 files edited; tests passing``); the conversation's line by its
session id. Tested on the real rollouts and on invented sessions with placeholders of
other shapes, empty text and whitespace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.ingest import ingest
from proctor.review import ReviewRequest, start_review
from proctor.review.structural import (
    REDACTED_REQUEST,
    WITHOUT_REQUEST,
    is_readable,
    request_title,
    titled_by_work,
)
from proctor.store import open_store
from tests.review.structural.test_episodes import _episodes, _reviewed, _Session

PLACEHOLDER = re.compile(r"REDACTED_|len=\d+ sha=|\[redacted|<redacted", re.IGNORECASE)


@pytest.mark.shared
@pytest.mark.slow
def test_redacted_requests_of_the_shared_codex_logs_are_titled_by_their_work(
    transcripts_dir: Path, tmp_path: Path
) -> None:
    rollouts = sorted(
        path
        for path in transcripts_dir.rglob("rollout-*.jsonl")
        if "[REDACTED_TEXT" in path.read_text(encoding="utf-8", errors="replace")
    )
    assert rollouts, "the shared transcripts hold sanitised Codex rollouts"
    store = open_store(tmp_path / "proctor.db")
    ingest(store, rollouts)
    run = start_review(store, ReviewRequest(), semantic=None, semantic_note="no model")
    assert run.result_id is not None
    graph = store.graph(run.result_id, limit=None)
    store.close()
    episodes = _episodes(graph)
    redacted = [e for e in episodes if e.title.startswith(REDACTED_REQUEST)]
    assert len(redacted) >= 10, [e.title for e in episodes]
    for episode in episodes:
        assert not PLACEHOLDER.search(episode.title), episode.title
    for episode in redacted:
        # Titled by the outcome line it carries (cut like any title).
        outcome = episode.title.removeprefix(f"{REDACTED_REQUEST} → ").removesuffix("…")
        assert episode.summary.startswith(outcome), (episode.title, episode.summary)
    # Their story lines (the episodes' sub-threads and the conversations') read as well.
    for line in graph.story_lines:
        assert not PLACEHOLDER.search(line.title), line.title
    assert any(line.title.startswith("Session 019c") for line in graph.story_lines)


@pytest.mark.parametrize(
    "text",
    [
        "[REDACTED_TEXT len=115 sha=a83ebe6f]",
        "[REDACTED_PROMPT len=9 sha=00ff] [REDACTED_TEXT len=3 sha=ab]",
        "  [REDACTED:api_key]  ",
        "<redacted>",
        '<REDACTED reason="pii"/>',
        "(redacted)",
        "{{REDACTED}}",
        "[content omitted]",
        "[Scrubbed by policy]",
        "[image: [REDACTED_IMAGE_URL len=268602 sha=7e93dd54]]",
        "(removed)",
        "REDACTED",
        "\n\n[REDACTED_TEXT len=2 sha=1]\n   \n",
        "***",
        "",
        "   \t ",
    ],
)
def test_a_request_of_placeholders_blanks_or_nothing_is_titled_as_redacted(text: str) -> None:
    assert not is_readable(text)
    assert request_title(text) == REDACTED_REQUEST


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("[REDACTED_TEXT len=5 sha=ab]\nFix the rounding bug", "Fix the rounding bug"),
        ("Rotate [REDACTED:api_key] today", "Rotate [redacted] today"),
        ("See [image: [REDACTED_IMAGE_URL len=9 sha=1]] here", "See [redacted] here"),
        (
            "Please (see [REDACTED_URL len=3 sha=1] for details) now",
            "Please (see [redacted] for details) now",
        ),
        ("Fix it (do not remove the header)", "Fix it (do not remove the header)"),
        ("Remove", "Remove"),
        ("Fix the hidden files bug", "Fix the hidden files bug"),
        ("ok", "ok"),
        ("<bash-input>ls</bash-input>", "ls"),
    ],
)
def test_a_request_with_readable_words_keeps_them_as_its_title(text: str, title: str) -> None:
    assert request_title(text) == title


def test_a_redacted_title_names_the_outcome_and_stays_within_a_title_s_length() -> None:
    assert titled_by_work("Fix it", "1 file edited") == "Fix it"
    assert titled_by_work(REDACTED_REQUEST, "2 files edited; tests passing") == (
        "Request (redacted) → 2 files edited; tests passing"
    )
    long = titled_by_work(REDACTED_REQUEST, "; ".join(["12 commands run"] * 20))
    assert len(long) == 100 and long.endswith("…")


@pytest.mark.parametrize(
    "text", ["[REDACTED_TEXT len=41 sha=9c0e7a11]", "<redacted>", "[REDACTED:password]"]
)
def test_an_invented_redacted_request_is_titled_by_its_work_through_the_pipeline(
    tmp_path: Path, text: str
) -> None:
    session = _Session()
    session.ask(text)
    session.call("Read", "def total(lines): ...", file_path="/home/dev/shop/invoice/total.py")
    session.call(
        "Edit",
        "The file /home/dev/shop/invoice/total.py has been updated.",
        file_path="/home/dev/shop/invoice/total.py",
        old_string="round(x, 2)",
        new_string="quantize(x)",
    )
    session.call("Bash", "...\n3 passed in 0.10s", command="pytest -q")
    session.ask("[REDACTED_TEXT len=8 sha=77aa]")
    store, graph = _reviewed(tmp_path, session)
    first, second = sorted(_episodes(graph), key=lambda e: e.occurred_at or 0)
    assert first.title == "Request (redacted) → 1 file edited; 1 file read; tests passing"
    assert second.title == "Request (redacted) → no tool work"
    # The episode's own story line carries the same readable title.
    titles = {line.title for line in graph.story_lines}
    assert first.title in titles
    store.close()


def test_a_whitespace_request_opens_no_episode_and_its_work_is_not_lost(tmp_path: Path) -> None:
    session = _Session()
    session.ask("   \n\t")
    session.call("Bash", "ok", command="git status")
    store, graph = _reviewed(tmp_path, session)
    (episode,) = _episodes(graph)
    assert episode.title == WITHOUT_REQUEST
    assert episode.summary == "1 command run"
    store.close()
