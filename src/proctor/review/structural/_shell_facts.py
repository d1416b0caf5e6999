"""Facts of a shell call: the command and its exit status, test runs, files it wrote or
read, packages it installed, URLs it reached, commits it made.

One event says how the line ended: a ``test_run`` per test command it ran, else a
``command`` event; its first entity is the test (or command) whose outcome it reports,
which is what ``derive_open_items`` follows. Effects (files written, packages installed,
URLs fetched) are recorded only when the line succeeded or has not reported yet: after a
failure nobody can tell which of them happened, and the error event names them instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.graph import SourceRef
from proctor.review.structural._builder import Outcome
from proctor.review.structural._git import (
    CommitCommand,
    CommitLine,
    commit_commands,
    commit_lines,
)
from proctor.review.structural._output import error_line, excerpt, exit_line
from proctor.review.structural._packages import package_installs
from proctor.review.structural._paths import file_description, file_identity
from proctor.review.structural._scope import CallScope
from proctor.review.structural._shell import ShellRun, program_args, program_name
from proctor.review.structural._test_runs import SuiteRun, count_summary, find_test_runs
from proctor.review.structural._titles import run_title, short
from proctor.review.structural._urls import shell_urls, url_identity
from proctor.rules.builtin import SimpleCommand, file_accesses, summary_span
from proctor.rules.builtin import outcome as verification_outcome

_CONTENT_READERS = frozenset({
    "cat", "tac", "nl", "less", "more", "head", "tail", "bat", "sed", "gsed", "awk", "gawk",
    "mawk", "wc", "xxd", "od", "hexdump", "strings", "curl", "wget",
})  # fmt: skip
"""Programs whose read paths are files whose content they read (not folders); ``curl``
reads the files it uploads (``-F key=@file``, ``-T file``)."""


def shell_facts(scope: CallScope, run: ShellRun, outcome: Outcome) -> None:
    """Record the facts of a shell call: its command or test runs, files, packages, URLs
    and commits. A failure is told by the command or test_run event itself."""
    builder, source = scope.builder, scope.source
    place = run.workdir or scope.cwd
    command_id = builder.entity(
        source,
        "command",
        run.text.strip(),
        name=short(run.text, 80),
        description=f"Shell command run in {place}" if place else "Shell command",
        refs=[scope.cite(run.field)],
    )
    involved = _packages(scope, run, command_id, outcome) + _urls(scope, run, command_id, outcome)
    tests = find_test_runs(run.commands, base=run.workdir, cwd=scope.cwd)
    if len(tests) == 1:
        _test_run(scope, run, tests[0], command_id, outcome, alone=True)
    elif tests:
        # `pytest a && pytest b` exiting 1: one of them failed, but which one neither the
        # exit code nor the last summary line says; both passed when the line passed.
        for test in tests:
            _test_run(scope, run, test, command_id, "ok" if outcome == "ok" else "unknown")
    else:
        _command_event(scope, run, [command_id, *involved], outcome)
    if outcome != "failed":
        _files(scope, run, outcome)
    _commits(scope, run, command_id)


def _exit_refs(scope: CallScope) -> list[SourceRef]:
    span = exit_line(scope.call.result_text)
    return [] if span is None else [scope.cite("result_text", span)]


def _command_event(
    scope: CallScope, run: ShellRun, entity_ids: Sequence[str], outcome: Outcome
) -> None:
    """The command's run; a failure cites its exit line and its error line. The command
    entity comes first in ``entity_ids`` (open items key on it), then what it touched."""
    label = short(run.text)
    exit_code = scope.exit_code
    detail = f"exit {exit_code}" if outcome == "failed" and exit_code not in (None, 0) else ""
    status = {"ok": "succeeded", "failed": "failed", "unknown": "has no recorded result"}[outcome]
    summary = f"`{short(run.text, 200)}` {status}"
    if exit_code is not None:
        summary += f" (exit code {exit_code})"
    refs = [scope.cite(run.field), *_exit_refs(scope)]
    if outcome == "failed":
        text = scope.call.result_text or ""
        span = error_line(text)
        if span is not None:
            summary += f": {excerpt(text, span)}"
            refs.append(scope.cite("result_text", span))
    scope.builder.event(
        scope.source,
        "command",
        title=run_title(label, outcome, detail, ok_verb=""),
        summary=summary + ".",
        refs=list(dict.fromkeys(refs)),
        entity_ids=list(dict.fromkeys(entity_ids)),
        outcome=outcome,
        occurred_at=scope.occurred_at,
    )


def _test_run(
    scope: CallScope,
    run: ShellRun,
    test: SuiteRun,
    command_id: str,
    outcome: Outcome,
    *,
    alone: bool = False,
) -> None:
    """A ``test_run`` event; only a line's one test run may claim the output's summary."""
    builder, source, call = scope.builder, scope.source, scope.call
    command_ref = scope.cite(run.field, run.span(test.start, test.end))
    test_id = builder.entity(
        source,
        "test",
        test.identity,
        name=test.identity,
        description=f"Tests run by `{test.identity}`",
        refs=[command_ref],
    )
    if alone and outcome == "ok" and verification_outcome(call) == "failed":
        outcome = "failed"  # `pytest | tail` hides the exit code, not the "2 failed" line
    refs = [command_ref]
    counts = ""
    span = summary_span(call) if alone else None
    if span is not None and call.result_text:
        counts = count_summary(call.result_text[span[0] : span[1]])
        refs.append(scope.cite("result_text", span))
    else:
        refs += _exit_refs(scope)
    for identity, file_span in test.files:
        file_id = builder.entity(
            source,
            "file",
            identity,
            name=identity,
            description=file_description(identity, scope.cwd),
            refs=[scope.cite(run.field, None if file_span is None else run.span(*file_span))],
        )
        builder.relation(
            test_id,
            file_id,
            "tests",
            reason=f"`{test.identity}` names {identity} as the tests to run",
            refs=[command_ref],
        )
    written = short(run.text[test.start : test.end], 200)
    ended = {"ok": "passed", "failed": "failed", "unknown": "has no recorded result"}[outcome]
    builder.event(
        source,
        "test_run",
        part=test.identity,
        title=run_title(test.identity, outcome, counts),
        summary=f"`{written}` {ended}" + (f": {counts}." if counts else "."),
        refs=refs,
        entity_ids=[test_id, command_id],
        outcome=outcome,
        occurred_at=scope.occurred_at,
    )


def _innermost(commands: tuple[SimpleCommand, ...], start: int) -> SimpleCommand | None:
    holding = [c for c in commands if c.start <= start < c.end]
    return min(holding, key=lambda c: c.end - c.start) if holding else None


def _files(scope: CallScope, run: ShellRun, outcome: Outcome) -> None:
    builder, source = scope.builder, scope.source
    seen: set[tuple[str, str]] = set()
    for use in file_accesses(scope.call):
        if use.access not in ("read", "write", "delete"):
            continue
        if use.access == "read":
            holder = None if use.start is None else _innermost(run.commands, use.start)
            if holder is None or program_name(program_args(holder)) not in _CONTENT_READERS:
                continue
        identity = file_identity(use.path, base=use.base, cwd=scope.cwd)
        if identity is None or identity == "." or (use.access, identity) in seen:
            continue
        seen.add((use.access, identity))
        span = None if use.start is None or use.end is None else (use.start, use.end)
        ref = scope.cite(use.field, span)
        file_id = builder.entity(
            source,
            "file",
            identity,
            name=identity,
            description=file_description(identity, scope.cwd),
            refs=[ref],
        )
        verb = {"read": "Read", "write": "Wrote", "delete": "Deleted"}[use.access]
        if use.access != "read":
            builder.changed_files[source.conversation_id].add(identity)
        builder.event(
            source,
            "file_read" if use.access == "read" else "file_edit",
            part=f"{use.access}:{identity}",
            title=f"{verb} {identity}",
            summary=f"{verb} {identity} with `{short(run.text, 120)}`.",
            refs=[ref],
            entity_ids=[file_id],
            outcome=outcome,
            occurred_at=scope.occurred_at,
        )


def _packages(scope: CallScope, run: ShellRun, command_id: str, outcome: Outcome) -> list[str]:
    builder, source = scope.builder, scope.source
    named: list[str] = []
    for package in package_installs(run.commands):
        ref = scope.cite(run.field, None if package.span is None else run.span(*package.span))
        package_id = builder.entity(
            source,
            "package",
            package.identity,
            name=package.name,
            description=f"{package.name} from {package.ecosystem}",
            refs=[ref],
        )
        named.append(package_id)
        if outcome == "failed":
            continue
        builder.event(
            source,
            "package_install",
            part=package.identity,
            title=f"Installed {package.name} ({package.ecosystem})"
            if outcome == "ok"
            else f"Started installing {package.name} ({package.ecosystem})",
            summary=f"`{short(run.text, 160)}` installs {package.written}.",
            refs=[ref, *_exit_refs(scope)],
            entity_ids=[package_id, command_id],
            outcome=outcome,
            occurred_at=scope.occurred_at,
        )
    return named


def _urls(scope: CallScope, run: ShellRun, command_id: str, outcome: Outcome) -> list[str]:
    builder, source = scope.builder, scope.source
    named: list[str] = []
    for use in shell_urls(run.commands):
        identity = url_identity(use.url)
        if identity is None:
            continue
        ref = scope.cite(run.field, None if use.span is None else run.span(*use.span))
        url_id = builder.entity(
            source,
            "url",
            identity,
            name=identity,
            description=f"Web address {identity}",
            refs=[ref],
        )
        named.append(url_id)
        if outcome == "failed":
            continue
        verb = "Sent data to" if use.sends else "Fetched"
        builder.event(
            source,
            "url_fetch",
            part=identity,
            title=f"{verb} {identity}",
            summary=f"{verb} {identity} with `{short(run.text, 160)}`.",
            refs=[ref],
            entity_ids=[url_id, command_id],
            outcome=outcome,
            occurred_at=scope.occurred_at,
        )
    return named


def _commits(scope: CallScope, run: ShellRun, command_id: str) -> None:
    """A commit event for every ``[branch hash]`` line a ``git commit`` of the line printed."""
    commands = commit_commands(run.commands)
    lines = commit_lines(scope.call.result_text)
    if not commands or not lines:
        return
    builder, source = scope.builder, scope.source
    paired = len(commands) == len(lines)
    for index, line in enumerate(lines):
        command = commands[index] if paired else None
        refs = [scope.cite("result_text", (line.start, line.end))]
        if command is not None:
            refs.append(scope.cite(run.field, run.span(command.start, command.end)))
        commit_id = builder.entity(
            source,
            "commit",
            line.hash,
            name=f"{line.hash} {short(line.message, 60)}",
            description=f"Commit {line.hash} on {line.branch}: {short(line.message, 200)}",
            refs=refs,
        )
        builder.event(
            source,
            "commit",
            part=line.hash,
            title=f"Committed {line.hash}: {short(line.message)}",
            summary=f"git made commit {line.hash} on {line.branch}: {short(line.message, 200)}.",
            refs=refs,
            entity_ids=[commit_id, command_id],
            outcome="ok",
            occurred_at=scope.occurred_at,
        )
        _commit_files(scope, run, line, command, commit_id)


def _commit_files(
    scope: CallScope,
    run: ShellRun,
    line: CommitLine,
    command: CommitCommand | None,
    commit_id: str,
) -> None:
    """``modifies`` for files the commit is shown to hold that this conversation changed."""
    builder, source = scope.builder, scope.source
    changed = builder.changed_files[source.conversation_id]
    line_ref = scope.cite("result_text", (line.start, line.end))
    named: list[tuple[str, SourceRef, str]] = [
        (path, scope.cite("result_text", (start, end)), f"git lists {path} in commit {line.hash}")
        for path, start, end in line.files
    ]
    if command is not None:
        for arg in command.paths:
            ref = scope.cite(run.field, None if arg.span is None else run.span(*arg.span))
            why = f"{arg.text} is staged in the line that made commit {line.hash}"
            named.append((arg.text, ref, why))
    for path, ref, why in named:
        identity = file_identity(path, base=run.workdir, cwd=scope.cwd)
        if identity is None or identity not in changed:
            continue
        file_id = builder.entity(
            source,
            "file",
            identity,
            name=identity,
            description=file_description(identity, scope.cwd),
            refs=[ref],
        )
        builder.relation(
            commit_id,
            file_id,
            "modifies",
            reason=f"{why}, after this conversation changed it",
            refs=[ref, line_ref],
        )
