"""Which tool calls verify what: test runs, builds and type checks, linters — and how they ended.

A claim that "the tests pass" is backed only by a test run; "the build succeeds" by a
build, compile or type-check run; "lint is clean" by a linter. This module recognises
those runs across ecosystems (pytest, unittest, tox, nox, npm/yarn/pnpm/bun test, vitest,
jest, mocha, go test, cargo test, mvn, gradle, make, rspec, phpunit, dotnet test, …)
after stripping runners (``uv run``, ``poetry run``, ``npx``, ``python -m``, ``bundle
exec``), and decides whether a finished run passed: a non-zero exit code or error status
fails it, and so does output that reports failures (``2 failed``, ``FAILED``, ``Found 3
errors``, ``npm ERR!``) even when a pipe (``pytest | tail``) hid the exit code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Literal

from proctor.rules.builtin._call_effects import tool_base_name
from proctor.rules.builtin._shell_words import SimpleCommand
from proctor.transcript import ToolCall

Topic = Literal["tests", "build", "lint"]
Outcome = Literal["passed", "failed", "unknown"]

# fmt: off
_RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run",
            "rye": "run", "bundle": "exec", "pnpm": "exec", "yarn": "dlx", "conda": "run",
            "pixi": "run"}
_PREFIX_PROGRAMS = frozenset({"npx", "pnpx", "bunx", "xvfb-run", "cross-env", "dotenv", "coverage"})
_TEST_PROGRAMS = frozenset({
    "pytest", "py.test", "tox", "nox", "vitest", "jest", "mocha", "ava", "karma", "jasmine",
    "rspec", "phpunit", "pest", "ctest", "nose2", "trial", "behave", "cucumber", "bats",
    "prove", "tap", "unittest", "testem",
})
_BUILD_PROGRAMS = frozenset({
    "tsc", "vue-tsc", "svelte-check", "mypy", "pyright", "pytype", "basedpyright", "flow",
    "ninja", "webpack", "esbuild", "rollup", "xcodebuild", "gcc", "g++", "clang", "clang++",
    "cc", "javac", "rustc", "swiftc", "kotlinc", "compileall", "py_compile", "build",
})
_LINT_PROGRAMS = frozenset({
    "ruff", "flake8", "pylint", "eslint", "biome", "prettier", "black", "isort",
    "golangci-lint", "staticcheck", "shellcheck", "rubocop", "stylelint", "hadolint",
    "markdownlint", "tflint", "swiftlint", "ktlint", "pre-commit", "oxlint", "standard",
    "pycodestyle", "pydocstyle", "bandit", "vulture",
})
# Subcommands of multi-tools: program → {subcommand: topic}
_SUBCOMMANDS: dict[str, dict[str, Topic]] = {
    "go": {"test": "tests", "build": "build", "vet": "lint"},
    "cargo": {"test": "tests", "nextest": "tests", "build": "build", "check": "build",
              "clippy": "lint", "fmt": "lint"},
    "mvn": {"test": "tests", "verify": "tests", "install": "tests", "compile": "build",
            "package": "build"},
    "gradle": {"test": "tests", "check": "tests", "build": "build", "assemble": "build",
               "compileJava": "build", "compileKotlin": "build", "lint": "lint"},
    "dotnet": {"test": "tests", "build": "build", "format": "lint"},
    "swift": {"test": "tests", "build": "build"},
    "mix": {"test": "tests", "compile": "build", "credo": "lint", "format": "lint"},
    "flutter": {"test": "tests", "build": "build", "analyze": "lint"},
    "dart": {"test": "tests", "analyze": "lint", "compile": "build"},
    "deno": {"test": "tests", "check": "build", "lint": "lint"},
    "bun": {"test": "tests", "build": "build"},
    "bazel": {"test": "tests", "build": "build"},
    "sbt": {"test": "tests", "compile": "build"},
    "lein": {"test": "tests", "compile": "build"},
    "rake": {"test": "tests", "spec": "tests"},
    "rails": {"test": "tests"},
    "hatch": {"test": "tests", "build": "build"},
    "uv": {"build": "build"},
    "poetry": {"build": "build"},
    "docker": {"build": "build"},
    "cmake": {"--build": "build"},
    "vite": {"build": "build"},
    "next": {"build": "build", "lint": "lint"},
    "nx": {"test": "tests", "build": "build", "lint": "lint"},
    "turbo": {"test": "tests", "build": "build", "lint": "lint"},
    "playwright": {"test": "tests"},
    "cypress": {"run": "tests"},
    "artisan": {"test": "tests"},
}
# fmt: on
_PACKAGE_MANAGERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_MAKES = frozenset({"make", "just", "task", "mage", "invoke"})
# fmt: off
_SCRIPT_TOPICS: list[tuple[re.Pattern[str], Topic]] = [
    (re.compile(r"^(?:t|tests?|spec|e2e|unit|integration|ci)(?:[:\-_].*)?$"), "tests"),
    (re.compile(r"^(?:lint|eslint|stylelint|format[:\-_]check|prettier[:\-_]check)(?:[:\-_].*)?$"),
     "lint"),
    (re.compile(r"^(?:build|compile|typecheck|type-check|types|tsc|check-types|check)"
                r"(?:[:\-_].*)?$"),
     "build"),
]
# fmt: on
_NAME_TOPICS: list[tuple[re.Pattern[str], Topic]] = [
    (re.compile(r"(?:^|_)(?:run_)?tests?(?:_|$)|pytest"), "tests"),
    (re.compile(r"build|compile|typecheck"), "build"),
    (re.compile(r"lint"), "lint"),
]

_FAILURE = re.compile(
    r"\b[1-9]\d*\s+(?:failed|failing|failures?|errors?|problems?)\b"
    r"|^\s*(?:FAILED|FAIL|ERROR)\b|--- FAIL:|\btest result: FAILED\b|\bFAILED \(failures="
    r"|Tests run: \d+, Failures: [1-9]|\bBUILD FAILED\b|\bBuild failed\b|npm ERR!"
    r"|\berror TS\d+|\berror\[E\d+\]|^error(?:\[|:)|: error:"
    r"|\bno tests ran\b|\bcollected 0 items\b|\bNo tests? (?:files? )?found\b",
    re.MULTILINE,
)
_COUNTS_LINE = re.compile(
    r"^.*\b\d+\s+(?:passed|failed|failing|passing|errors?)\b.*$", re.MULTILINE
)
_FAILURE_LINE = re.compile(r"^.*(?:" + _FAILURE.pattern + r").*$", re.MULTILINE)
_PASSED_COUNT = re.compile(r"\b[1-9]\d*\s+(?:passed|passing)\b")
_FAILURE_WORDS = re.compile(
    r"fail|FAIL|error|ERR|problem|Failures|no tests ran|collected 0 items|No test"
)
"""Every match of ``_FAILURE`` holds one of these (case as written)."""
_COUNT_WORDS = re.compile(r"pass|fail|error")
"""Every match of ``_COUNTS_LINE`` holds one of these."""


def _word_lines(text: str, words: re.Pattern[str]) -> Iterator[int]:
    """The starts of the lines where a line pattern whose match holds one of ``words``
    can match, ascending, each once — so the pattern is tried there, not at every
    character of a long log.

    A match holds its word on its own line, or on a later one when only whitespace lies
    between: ``\\s`` crosses line ends (``3\\n failed``, ``^\\s*FAILED``). So a word's
    candidates are the line of the last non-blank character before it, and every line
    start in the blank run that follows, up to the word's own line.
    """
    tried = -1
    for found in words.finditer(text):
        word = blank = found.start()
        while blank > 0 and text[blank - 1].isspace():
            blank -= 1
        line = text.rfind("\n", 0, max(blank - 1, 0)) + 1
        while True:
            if line > tried:
                tried = line
                yield line
            end = text.find("\n", line, word)
            if end < 0:
                break
            line = end + 1


def _first_failure_line(text: str) -> re.Match[str] | None:
    """``_FAILURE_LINE.search(text)``, tried only on the lines ``_word_lines`` names."""
    for line in _word_lines(text, _FAILURE_WORDS):
        found = _FAILURE_LINE.match(text, line)
        if found is not None:
            return found
    return None


def _last_counts_line(text: str) -> re.Match[str] | None:
    """The last match of ``_COUNTS_LINE.finditer(text)``, tried only on the lines
    ``_word_lines`` names (and, as ``finditer``, none inside an earlier match)."""
    last: re.Match[str] | None = None
    for line in _word_lines(text, _COUNT_WORDS):
        if last is not None and line < last.end():
            continue
        found = _COUNTS_LINE.match(text, line)
        if found is not None:
            last = found
    return last


def _strip_runners(words: tuple[str, ...]) -> tuple[str, ...]:
    """``uv run pytest -q`` → ``pytest -q``; ``python -m pytest`` → ``pytest``."""
    for _ in range(4):
        if not words:
            return words
        program = words[0].rsplit("/", 1)[-1]
        if _RUNNERS.get(program) is not None and len(words) > 1 and words[1] == _RUNNERS[program]:
            rest = list(words[2:])
            while rest and rest[0].startswith("-"):
                rest = rest[1:]  # the runner's own options (`uv run --frozen pytest`)
            words = tuple(rest)
        elif program in _PREFIX_PROGRAMS:
            rest = [w for w in words[1:] if w != "--"]
            while rest and (rest[0].startswith("-") or "=" in rest[0] or rest[0] == "run"):
                rest = rest[1:]
            words = tuple(rest)
        elif (
            re.fullmatch(r"python(?:\d+(?:\.\d+)?)?", program)
            and len(words) > 2
            and words[1] == "-m"
        ):
            words = words[2:]
        elif program in ("php",) and len(words) > 1:
            words = (words[1].rsplit("/", 1)[-1], *words[2:])
        else:
            return words
    return words


def command_topics(command: SimpleCommand) -> set[Topic]:
    """What a simple command verifies: tests, build, lint (empty for anything else)."""
    words = _strip_runners(command.argv)
    if not words:
        return set()
    program = words[0].rsplit("/", 1)[-1].removesuffix(".exe")
    operands = [w for w in words[1:] if not w.startswith("-") or w == "--build"]
    first = operands[0] if operands else ""
    if program in _TEST_PROGRAMS or (program in ("node", "deno", "bun") and "--test" in words):
        return {"tests"}
    if program in _LINT_PROGRAMS:
        formatter = program in ("ruff", "black", "prettier", "isort")
        return {"lint"} if not formatter or _checks_only(program, words) else set()
    if program in _BUILD_PROGRAMS:
        return {"build"}
    if program in ("gradlew", "mvnw"):
        program = program.removesuffix("w")
    if program in _SUBCOMMANDS:
        topic = _SUBCOMMANDS[program].get(first)
        return {topic} if topic else set()
    if program in _PACKAGE_MANAGERS:
        script = operands[1] if first in ("run", "run-script") and len(operands) > 1 else first
        return _script_topic(script)
    if program in _MAKES:
        target = next((o for o in operands if "=" not in o), "")
        return {"build"} if program == "make" and not target else _script_topic(target)
    return set()


def _checks_only(program: str, words: tuple[str, ...]) -> bool:
    """Formatters verify only in check mode (``ruff check``, ``black --check``)."""
    if program == "ruff":
        return "format" not in words or "--check" in words
    return "--check" in words or "--check-only" in words or "-c" in words


def _script_topic(script: str) -> set[Topic]:
    for pattern, topic in _SCRIPT_TOPICS:
        if pattern.match(script):
            return {topic}
    return set()


def call_topics(call: ToolCall, commands: Sequence[SimpleCommand]) -> set[Topic]:
    """What a call verifies; shell calls by their commands, other tools by their name."""
    if commands:
        topics: set[Topic] = set()
        for command in commands:
            topics |= command_topics(command)
        return topics
    return set(name_topics(tool_base_name(call)))


@lru_cache(maxsize=4096)
def name_topics(base_name: str) -> frozenset[Topic]:
    """What a tool verifies by its (base) name alone (``run_tests``, ``pytest``)."""
    return frozenset(topic for pattern, topic in _NAME_TOPICS if pattern.search(base_name))


def outcome(call: ToolCall) -> Outcome:
    """How a verification run ended; ``unknown`` when it did not finish."""
    if call.status in ("pending", "interrupted", "rejected"):
        return "unknown"
    if call.status == "error" or (call.exit_code is not None and call.exit_code != 0):
        return "failed"
    # A failure matches somewhere exactly when some line holds one (_FAILURE_LINE).
    return "failed" if _first_failure_line(call.result_text or "") is not None else "passed"


def reported_passes(call: ToolCall) -> bool:
    """True when a (failed) run still reports passing tests (``2 failed, 22 passed``)."""
    return bool(_PASSED_COUNT.search(call.result_text or ""))


def summary_span(call: ToolCall) -> tuple[int, int] | None:
    """Range of the line that sums the run up (``2 failed, 22 passed in 0.53s``).

    The last line with counts wins (test runners print their summary last); without one,
    the first line that reports a failure.
    """
    text = call.result_text or ""
    found = _last_counts_line(text) or _first_failure_line(text)
    if found is None:
        return None
    line = found.group(0)
    stripped = line.strip()
    start = found.start() + line.index(stripped[0]) if stripped else found.start()
    return start, start + len(stripped)
