"""Destructive things visible in data and in the raw text of a command line.

SQL that drops or empties tables (in a ``psql -c``/here-document/pipe, or in the
arguments of a database tool), Redis/Mongo wipes, a downloaded script piped into a
shell, and a fork bomb (which no word-level parse survives).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from proctor.findings import Severity
from proctor.rules.builtin._danger_paths import Danger
from proctor.rules.builtin._shell_words import SHELLS, SimpleCommand

# fmt: off
SQL_CLIENTS = frozenset({
    "psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "sqlcmd", "clickhouse-client",
    "clickhouse", "cockroach", "mongo", "mongosh", "redis-cli", "snowsql", "bq", "cqlsh", "usql",
    "pgcli", "mycli", "litecli",
})
_FETCHERS = frozenset({"curl", "wget", "fetch", "http", "https", "iwr", "invoke-webrequest", "irm"})
_INTERPRETERS = SHELLS | {
    "python", "python3", "perl", "ruby", "node", "php", "pwsh", "powershell", "iex",
    "invoke-expression",
}
# fmt: on
_NO_WHERE = ("DELETE without WHERE", "UPDATE without WHERE")
_SQL_DANGERS: list[tuple[re.Pattern[str], Severity, str, str]] = [
    (
        re.compile(r"\bDROP\s+(?:DATABASE|SCHEMA|TABLE)\b[^;]*", re.IGNORECASE),
        "high",
        "DROP DATABASE/SCHEMA/TABLE",
        "drops stored data",
    ),
    (
        re.compile(r"\bTRUNCATE\s+(?:TABLE\s+)?[\w\"`.\[\]]+[^;]*", re.IGNORECASE),
        "high",
        "TRUNCATE",
        "empties a table",
    ),
    (
        re.compile(
            r"\bDELETE\s+FROM\s+[\w\"`.\[\]]+(?:\s+(?:AS\s+)?\w+)?\s*(?=;|$|\)|RETURNING\b)",
            re.IGNORECASE,
        ),
        "high",
        "DELETE without WHERE",
        "deletes every row of a table",
    ),
    (
        re.compile(r"\bUPDATE\s+[\w\"`.\[\]]+\s+SET\b(?:(?!\bWHERE\b)[^;])*(?=;|$)", re.IGNORECASE),
        "medium",
        "UPDATE without WHERE",
        "overwrites every row of a table",
    ),
    (
        re.compile(r"\bALTER\s+TABLE\s+[^;]*?\bDROP\s+COLUMN\b[^;]*", re.IGNORECASE),
        "medium",
        "ALTER TABLE … DROP COLUMN",
        "drops a column and its data",
    ),
    (
        re.compile(
            r"\b(?:FLUSHALL|FLUSHDB)\b|\bdropDatabase\s*\(|\.deleteMany\s*\(\s*\{\s*\}\s*\)"
        ),
        "high",
        "database wipe (FLUSHALL / dropDatabase / deleteMany({}))",
        "wipes a database",
    ),
]
_SUBSTITUTED_FETCH = re.compile(
    r"\b(?:(?:ba|z|da|k)?sh|python3?|perl|ruby|node)\b[^|;&\n]*?(?:<\(|\$\(|`)\s*(?:curl|wget)\b"
    r"|\biex\b.*\b(?:DownloadString|iwr|Invoke-WebRequest|irm)\b",
    re.IGNORECASE,
)
_FORK_BOMB = re.compile(r"(\w+|:)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}\s*;?\s*\1")


def sql_dangers(text: str) -> list[Danger]:
    """Destructive SQL (and Redis/Mongo wipes) in ``text``, statement by statement."""
    found: list[Danger] = []
    lowered = text.lower()
    if not any(
        w in lowered for w in ("drop", "truncate", "delete", "update", "flush", "deletemany")
    ):
        return found
    for pattern, severity, what, why in _SQL_DANGERS:
        for match in pattern.finditer(text):
            statement = match.group(0).strip()
            if what in _NO_WHERE and re.search(r"\bWHERE\b", statement, re.IGNORECASE):
                continue
            found.append(Danger(severity, what, why, statement))
    return found


def pipeline_dangers(commands: Sequence[SimpleCommand]) -> list[Danger]:
    """Dangers that need several commands: ``curl … | sh``, SQL piped into a client."""
    dangers: list[Danger] = []
    for index, command in enumerate(commands):
        if command.stage == 0:
            continue
        earlier = [c for c in commands[:index] if c.pipeline == command.pipeline]
        if command.program.lower() in _INTERPRETERS and not _runs_a_file(command):
            fetch = next((c for c in earlier if c.program.lower() in _FETCHERS), None)
            if fetch is not None:
                what = "piping a downloaded script into a shell"
                why = "runs code from the internet unseen"
                dangers.append(Danger("medium", what, why, fetch.text, until=command.text))
        if command.program in SQL_CLIENTS:
            for source in earlier:
                dangers += sql_dangers(" ".join(source.args))
    return dangers


def _runs_a_file(command: SimpleCommand) -> bool:
    """True when an interpreter is given a script file (``bash install.sh``), not stdin."""
    return any(not a.startswith("-") for a in command.args)


def text_dangers(text: str) -> list[Danger]:
    """Dangers visible only in the raw text: fork bombs, ``sh -c "$(curl …)"``."""
    dangers = []
    bomb = _FORK_BOMB.search(text)
    if bomb:
        dangers.append(Danger("high", "fork bomb", "exhausts the machine", bomb.group(0)))
    fetched = _SUBSTITUTED_FETCH.search(text)
    if fetched:
        dangers.append(
            Danger(
                "medium",
                "running a downloaded script",
                "runs code from the internet unseen",
                fetched.group(0),
            )
        )
    return dangers
