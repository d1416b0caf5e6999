"""Test runs: which simple command runs tests, what it is called, and what it reported.

A test entity's identity is its test command normalised so that runs of the same tests
are one entity and an earlier failure can be seen fixed (``derive_open_items``): runners
go (``uv run``, ``python -m``, ``npx``), and so do options that change only how a run
reports or stops (``-q``, ``-v``, ``-x``, ``--tb=short``, ``--reporter=dot``, ``-count=1``,
vitest's ``run``); what selects tests stays (paths and node ids — normalised like file
paths —, ``-k``, ``-m``, ``-t``, ``-run``, package names). Selectors are sorted, so
``pytest tests/ -k money`` and ``python -m pytest -q -k money tests`` are one test, while
``pytest tests/test_a.py`` is another: a narrower run passing does not prove the wider
one fixed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.review.structural._paths import file_identity, looks_like_file
from proctor.review.structural._shell import Arg, command_folders, program_args, program_name
from proctor.rules.builtin import SimpleCommand, command_topics

# Options that select tests, by program, with how many value words follow (0: the value
# is attached, ``-kfoo`` / ``--flag=x``, or the option is a switch).
# fmt: off
_SELECTORS: dict[str, dict[str, int]] = {
    "pytest": {"-k": 1, "-m": 1, "--deselect": 1, "--ignore": 1, "--ignore-glob": 1,
               "-c": 1, "--rootdir": 1, "--pyargs": 0},
    "jest": {"-t": 1, "--testNamePattern": 1, "--testPathPattern": 1, "--selectProjects": 1,
             "--config": 1, "-c": 1, "--project": 1},
    "go": {"-run": 1, "-skip": 1, "-tags": 1},
    "cargo": {"-p": 1, "--package": 1, "--test": 1, "--lib": 0, "--bins": 0, "--bin": 1,
              "--doc": 0, "--workspace": 0, "--all": 0, "--features": 1, "-F": 1,
              "--all-features": 0, "--no-default-features": 0, "--exact": 0},
    "tox": {"-e": 1},
    "nox": {"-s": 1, "--session": 1, "-k": 1},
    "npm": {"-w": 1, "--workspace": 1, "--filter": 1},
}
_SELECTORS["vitest"] = _SELECTORS["jest"]
_SELECTORS["mocha"] = {"-g": 1, "--grep": 1, "--config": 1}
_SELECTORS["unittest"] = {"-k": 1}
_SELECTORS["rspec"] = {"-e": 1, "--example": 1, "-t": 1, "--tag": 1}
_SELECTORS["mix"] = {"--only": 1, "--exclude": 1, "--include": 1}
_SELECTORS["mvn"] = {"-Dtest": 0, "-pl": 1, "--projects": 1}
_SELECTORS["gradle"] = {"--tests": 1, "-p": 1}
for _manager in ("yarn", "pnpm", "bun"):
    _SELECTORS[_manager] = _SELECTORS["npm"]
# Options that only change reporting, speed or stopping, and take a value word.
_VALUED: dict[str, frozenset[str]] = {
    "pytest": frozenset({"-p", "-n", "--tb", "-W", "--maxfail", "--durations", "--cov",
                         "--cov-report", "-o", "--junitxml", "--junit-xml", "--basetemp",
                         "--timeout", "--log-level", "--log-cli-level", "--color", "-r",
                         "--dist", "--capture", "--cov-config", "--cov-fail-under"}),
    "jest": frozenset({"--reporter", "--reporters", "--outputFile", "--maxWorkers", "-w",
                       "--testTimeout", "--pool", "--coverageReporters", "--shard",
                       "--environment"}),
    "go": frozenset({"-count", "-timeout", "-p", "-parallel", "-coverprofile", "-cpu",
                     "-covermode", "-json", "-bench", "-benchtime", "-o", "-exec"}),
    "cargo": frozenset({"-j", "--jobs", "--target-dir", "--message-format", "--color",
                        "--target", "--profile", "-Z"}),
    "mix": frozenset({"--seed", "--max-failures", "--formatter", "--timeout", "--max-cases",
                      "--slowest", "--partitions", "--repeat-until-failure", "--color"}),
}
# fmt: on
_VALUED["vitest"] = _VALUED["jest"]
_QUIET_SUBCOMMANDS = {"vitest": frozenset({"run"}), "jest": frozenset()}
_SCRIPT_TEST = frozenset({"t", "tst", "test"})
_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_COUNT = re.compile(
    r"\b(\d+)\s+(passed|passing|failed|failing|errors?|skipped|xfailed|xpassed|ignored|"
    r"pending|todo|deselected|warnings?)\b"
)
_COUNT_WORDS = {"passing": "passed", "failing": "failed", "error": "errors", "warning": "warnings"}


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """One simple command that runs tests."""

    identity: str
    """The normalised test command (see the module docstring)."""
    start: int
    end: int
    """The simple command's characters in the command line."""
    files: tuple[tuple[str, tuple[int, int] | None], ...]
    """Test files it names, as file identity keys, with the characters naming each."""


def find_test_runs(
    commands: Sequence[SimpleCommand], *, base: str | None, cwd: str | None
) -> list[SuiteRun]:
    """The test runs among a line's simple commands (nested ``bash -c`` ones included).

    A run in another folder than the conversation's (a ``cd``, a Codex ``workdir``) is
    another test: ``npm test in web``.
    """
    found: list[SuiteRun] = []
    for command, folder in zip(commands, command_folders(list(commands), base), strict=True):
        if "tests" not in command_topics(command):
            continue
        args = program_args(command)
        identity, files = _normalise(args, base=folder, cwd=cwd)
        where = None if folder is None else file_identity(folder, base=None, cwd=cwd) or folder
        if where not in (None, "."):
            identity = f"{identity} in {where}"
        found.append(SuiteRun(identity, command.start, command.end, tuple(files)))
    return found


def _normalise(
    args: tuple[Arg, ...], *, base: str | None, cwd: str | None
) -> tuple[str, list[tuple[str, tuple[int, int] | None]]]:
    program = program_name(args)
    if program in ("py.test", "pytest3"):
        program = "pytest"
    selectors = _SELECTORS.get(program, {})
    valued = _VALUED.get(program, frozenset())
    head = [program]
    rest = list(args[1:])
    if program in _MANAGERS:
        head, rest = _script(program, rest)
    elif program in ("go", "cargo", "dotnet", "swift", "mix", "bun", "deno", "mvn", "gradle"):
        subcommand = next((a for a in rest if not a.text.startswith("-")), None)
        if subcommand is not None:
            head.append(subcommand.text)
            rest.remove(subcommand)
    options: list[str] = []
    positionals: list[str] = []
    files: list[tuple[str, tuple[int, int] | None]] = []
    index = 0
    while index < len(rest):
        word = rest[index].text
        index += 1
        if word == "--":
            continue
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            takes = selectors.get(name)
            if takes is not None:
                values = [a.text for a in rest[index : index + takes]] if "=" not in word else []
                options.append(" ".join([word, *values]))
                index += 0 if "=" in word else takes
            elif "=" not in word and index < len(rest):
                following = rest[index].text
                # A value this table does not know: a bare number (`--seed 0`) is one.
                if name in valued or following.lstrip("-").isdigit():
                    index += 1
            continue
        if word in _QUIET_SUBCOMMANDS.get(program, ()) and not positionals:
            continue
        positionals.append(_selector(rest[index - 1], program, base, cwd, files))
    identity = " ".join([*head, *sorted(options), *sorted(positionals)])
    return identity, files


def _script(program: str, rest: list[Arg]) -> tuple[list[str], list[Arg]]:
    """``npm run test -- x`` → ``npm test`` with x; ``pnpm test --filter w`` keeps its filter."""
    selectors = _SELECTORS[program]
    kept: list[Arg] = []
    index = 0
    while index < len(rest) and rest[index].text != "--":
        arg = rest[index]
        if arg.text.startswith("-"):
            takes = 0 if "=" in arg.text else selectors.get(arg.text, 0)
            kept.extend(rest[index : index + 1 + takes])
            index += 1 + takes
            continue
        following = rest[index + 1].text if index + 1 < len(rest) else "--"
        if arg.text in ("run", "run-script") and following != "--":
            index += 1
            continue
        script = "test" if arg.text in _SCRIPT_TEST else arg.text
        passed = [a for a in rest[index + 1 :] if a.text != "--"]
        return [program, script], kept + passed
    return [program], kept


def _selector(
    arg: Arg,
    program: str,
    base: str | None,
    cwd: str | None,
    files: list[tuple[str, tuple[int, int] | None]],
) -> str:
    """A positional selector; a path (or ``path::node``) normalised like a file identity."""
    text = arg.text
    path, sep, node = text.partition("::")
    named_path = program == "pytest" or "/" in path or looks_like_file(path)
    if not named_path or program == "go" or "=" in path:
        return text  # a name filter, a Go package (./pkg, ./...), a key=value
    identity = file_identity(path, base=base, cwd=cwd)
    if identity is None:
        return text
    if looks_like_file(identity):
        span = None if arg.span is None else (arg.span[0], arg.span[0] + len(path))
        files.append((identity, span))
    return identity + sep + node


def count_summary(line: str) -> str:
    """``2 failed, 22 passed`` from a runner's summary line (zero counts left out)."""
    counts: dict[str, int] = {}
    for number, word in _COUNT.findall(line):
        name = _COUNT_WORDS.get(word, word)
        if int(number) and name not in counts:
            counts[name] = int(number)
    return ", ".join(f"{n} {w}" for w, n in counts.items())
