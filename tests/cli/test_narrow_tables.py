"""Every table the CLI prints stays readable on an 80- (and 60-) column terminal (UI-1).

One store holds real data for every listing: the bundled examples, the synthetic Claude
Code logs and the Codex sessions of ../shared, rule findings, a review, a heartbeat plan
that ran, suggestions and a model connection. Each table-printing command runs at
several widths through click's runner with ``COLUMNS`` set, as in a real terminal; its
headers must each be shown whole or be named as left out, never cut to "s…".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.cells import cell_len

from proctor.cli.main import cli
from tests.conftest import DATASETS_DIR, EXAMPLES_DIR, TRANSCRIPTS_DIR

_BOX_LINE = re.compile(r"^[┏┃┡│└┣┠╇]")
_HIDDEN = re.compile(r"not shown at this width: (.*?) \(widen the terminal")


def _invoke(*args: str, columns: int | None = None, partial: bool = False) -> Result:
    env = {"COLUMNS": str(columns)} if columns is not None else {}
    result = CliRunner(env=env).invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in ((0, 1) if partial else (0,)), result.output
    return result


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose store has something in every listing."""
    if not TRANSCRIPTS_DIR.is_dir() or not DATASETS_DIR.is_dir():
        pytest.skip("../shared is not available (set PROCTOR_SHARED_DIR)")
    home = tmp_path_factory.mktemp("narrow") / "proctor-home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROCTOR_HOME", str(home))
        patch.setenv("PROCTOR_ALLOW_MODEL_REQUESTS", "0")
        patch.delenv("PROCTOR_DATABASE_URL", raising=False)
        claude = TRANSCRIPTS_DIR / "claude-code" / "claude-code-log-synthetic"
        _invoke("ingest", str(EXAMPLES_DIR))
        # edge_cases.jsonl holds bad lines on purpose: the import reports them and exits 1
        _invoke("ingest", str(claude), "--project", "synthetic-claude-code-logs", partial=True)
        _invoke("ingest", str(TRANSCRIPTS_DIR / "codex"), "--project", "codex")
        _invoke("check", "--all")
        _invoke("app", "enable")
        result_id = json.loads(_invoke("review", "run", "--json").output)["result_id"]
        _invoke("plans", "add", "mornings", "--weekly", "mon,thu@09:00", "--timezone",
                "Europe/Berlin", "--window", "24h")  # fmt: skip
        _invoke("plans", "run-now", "mornings", "--no-model")
        _invoke("suggestions", "retry", result_id)  # no connection yet: rule text, no call
        _invoke("models", "add", "local-openai-compatible", "--provider", "openai", "--model",
                "qwen2.5-coder-32b-instruct-q4", "--base-url", "http://127.0.0.1:9/v1",
                "--default")  # fmt: skip
        _invoke("supervise", "enable", "62154fe7", "--mode", "evidence")
    return home


@pytest.fixture
def home(populated: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_HOME", str(populated))
    return populated


@dataclass(frozen=True)
class Listing:
    args: tuple[str, ...]
    headers: tuple[str, ...]
    kept: tuple[str, ...]
    """Headers shown at every width: what the rows are and what to type to reach them."""


def _listing(args: str | tuple[str, ...], headers: str, kept: str) -> Listing:
    """A listing from its arguments and its headers as written, separated by "|"."""
    return Listing(
        tuple(args.split()) if isinstance(args, str) else args,
        tuple(h.strip() for h in headers.split("|")),
        tuple(h.strip() for h in kept.split("|")),
    )


R_JUDGE = ("eval", "r-judge", "--data", str(DATASETS_DIR / "r-judge"), "--rules-only",
           "--limit", "40")  # fmt: skip
AGENTDOJO = ("eval", "agentdojo", "--data",
             str(DATASETS_DIR / "agentdojo" / "agentdojo-command-r-plus.jsonl"))  # fmt: skip
LISTINGS = {
    "conversations": _listing(
        "conversations list --all",
        "ref | project | format | title | started (UTC) | msgs | tools | agents",
        "ref | title",
    ),
    "findings": _listing(
        "findings list",
        "id | sev | rule | title | conversation | status | updated (UTC)",
        "id | sev | title",
    ),
    "rules": _listing("rules", "rule | v | category | gate | checks", "rule | checks"),
    "reviews": _listing(
        "review list",
        "run | state | scope | trigger | sources | batches | model calls | started (UTC)",
        "run | state",
    ),
    "plans": _listing(
        "plans list",
        "plan | scope | schedule | next run (local) | next run (UTC) | state | intervention "
        "| window",
        "plan | next run (UTC) | state",
    ),
    "activity": _listing(
        "activity",
        "started (UTC) | kind | plan | scope | outcome | phase | calls | result | summary / error",
        "started (UTC) | outcome | result",
    ),
    "suggestions": _listing(
        "suggestions list",
        "id | kind | status | suggestion | sources | updated (UTC)",
        "id | suggestion",
    ),
    "models": _listing(
        "models list", "name | provider | model | endpoint | key | role", "name | model | role"
    ),
    "imports": _listing(
        ("ingest", str(EXAMPLES_DIR)),
        "format | units | conversations | messages | tool calls | sub-agents | written "
        "| unchanged files",
        "format | conversations",
    ),
    "r-judge": _listing(
        R_JUDGE,
        "slice | records | TP | FP | FN | TN | precision | recall | F1 | safe F1 | macro F1",
        "slice | precision | recall | F1",
    ),
    "agentdojo": _listing(
        AGENTDOJO,
        "agent | hijacked | TP | FN | TPR | FP benign | FPR benign | FP resisted "
        "| FPR resisted | FPR both | precision",
        "agent | TPR | precision",
    ),
}


def _tables(output: str) -> list[list[str]]:
    """Each table's lines, box drawing included (its title and caption are not)."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in output.splitlines():
        if _BOX_LINE.match(line):
            current.append(line)
            if line.startswith("└"):
                tables.append(current)
                current = []
    return tables


def _header_cells(table: list[str]) -> list[str]:
    rows = [line for line in table if line.startswith("┃")]
    assert len(rows) == 1, f"the header takes {len(rows)} lines:\n" + "\n".join(table)
    return [cell.strip() for cell in rows[0].strip("┃").split("┃")]


def _hidden(output: str) -> list[list[str]]:
    """The headers each caption says were left out, in order of the tables."""
    flat = " ".join(output.split())
    return [found.split(", ") for found in _HIDDEN.findall(flat)]


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("columns", [80, 60, 100])
@pytest.mark.parametrize("name", list(LISTINGS))
def test_every_table_shows_each_header_whole_or_says_it_left_the_column_out(
    home: Path, name: str, columns: int
) -> None:
    listing = LISTINGS[name]
    output = _invoke(*listing.args, columns=columns).output
    tables = _tables(output)
    assert tables, f"{name} printed no table:\n{output}"
    hidden = iter(_hidden(output))
    for table in tables:
        too_wide = [line for line in table if cell_len(line) > columns]
        assert not too_wide, f"{name} is wider than {columns} columns:\n" + "\n".join(table)
        shown = _header_cells(table)
        assert all(cell in listing.headers for cell in shown), f"{name}: cut header in {shown}"
        left_out = [] if len(shown) == len(listing.headers) else next(hidden)
        assert sorted([*shown, *left_out]) == sorted(listing.headers), (shown, left_out)
        assert set(listing.kept) <= set(shown), f"{name} at {columns} lost {listing.kept}"


@pytest.mark.shared
@pytest.mark.parametrize("name", ["conversations", "findings", "rules", "plans", "models"])
def test_a_wide_terminal_shows_every_column_and_no_caption(home: Path, name: str) -> None:
    listing = LISTINGS[name]
    output = _invoke(*listing.args, columns=200).output
    [table] = _tables(output)
    assert _header_cells(table) == list(listing.headers)
    assert "not shown at this width" not in output


@pytest.mark.shared
def test_a_narrow_conversation_list_keeps_refs_whole_so_they_can_be_typed(home: Path) -> None:
    listing = _invoke("conversations", "list", "--all", columns=60).output
    refs = [line.split("│")[1].strip() for line in listing.splitlines() if line.startswith("│")]
    assert refs and not any(ref.endswith("…") for ref in refs)
    for ref in refs:
        shown = json.loads(_invoke("conversations", "show", ref, "--json").output)
        assert shown["conversation"]["conversation_id"]


@pytest.mark.shared
@pytest.mark.parametrize("columns", [80, 60])
def test_supervise_status_names_every_part_at_narrow_widths(home: Path, columns: int) -> None:
    output = _invoke("supervise", "status", columns=columns).output
    for label in ("mode evidence", "last run", "pending", "budget", "Model:"):
        assert label in output
