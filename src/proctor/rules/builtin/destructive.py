"""Rule family: destructive commands (category ``risk``).

``destructive_command`` flags shell commands and tool calls that destroy data or
weaken the machine, in any agent's shell tool (``Bash``, ``shell`` argv lists,
``exec_command``, ``run_shell_command``, keystrokes sent with ``write_stdin``) and in
database tools that run SQL. Command lines are split into simple commands first, so
``cd x && sudo rm -rf /``, ``bash -c "…"``, ``ssh host '…'``, ``$(…)`` and pipes are seen.

What counts, and how bad (severity → default gate decision):

- **high** (irreversible data loss → ``deny``): ``rm -r`` of ``/``, ``~``, ``*``, ``.``,
  ``..``, system or home folders, the project root or ``.git``; ``git push --force``
  (also ``-f`` and ``+ref``), ``git reset --hard``, ``git clean -f``, ``git checkout -- .``
  / ``git restore .``; ``DROP DATABASE|SCHEMA|TABLE``, ``TRUNCATE``, ``DELETE FROM`` without
  ``WHERE``, Redis/Mongo wipes, ``dropdb``, ``prisma migrate reset``; ``mkfs``, ``wipefs``,
  ``dd of=/dev/…``; ``kubectl delete`` of namespaces/volumes/``--all``; ``terraform|pulumi
  destroy``; deleting docker volumes; ``aws s3 rm --recursive``; a fork bomb.
- **medium** (dangerous but limited or recoverable → ``ask``): ``git push
  --force-with-lease``, ``git branch -D``, discarding changes to single files,
  ``git stash drop``, ``rm -r`` outside the project, ``chmod -R 777``, ``chown -R`` on system
  folders, other ``kubectl delete``, ``docker system prune -a``, ``UPDATE`` without ``WHERE``,
  a downloaded script piped into a shell, turning off SELinux, a firewall or Gatekeeper.

Deliberately *not* flagged: ``rm -rf`` inside the project (``node_modules``, ``build``,
``src/old``: everyday work that version control keeps), scratch folders anywhere
(``/tmp/x``, ``$TMPDIR/x``), dry runs (``git clean -n``), SQL that is only written to a file
(a migration being authored is not a migration being run).

The gate cannot yet vary its decision per hit, so the rule's gate mode is ``deny``: see
``gate_mode`` below.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import ClassVar

from proctor.findings import SEVERITY_ORDER, Evidence
from proctor.rules._calls import argument, argument_strings, is_shell
from proctor.rules._evidence import cite_call
from proctor.rules._policy import RuleMode
from proctor.rules._rule import Hit, Rule, RuleContext
from proctor.rules._trace import Event
from proctor.rules.builtin._call_effects import shell_text, tool_base_name
from proctor.rules.builtin._danger_checks import command_dangers
from proctor.rules.builtin._danger_paths import Danger
from proctor.rules.builtin._danger_text import pipeline_dangers, sql_dangers, text_dangers
from proctor.rules.builtin._shell_words import simple_commands
from proctor.rules.builtin._spans import cite_argument_span, locate
from proctor.transcript import ToolCall

_SQL_TOOL_WORDS = frozenset({"sql", "query", "database", "db", "execute_sql", "run_sql"})


def find_dangers(call: ToolCall, cwd: str | None) -> list[Danger]:
    """Everything destructive a call would do, most severe first."""
    dangers: list[Danger] = []
    text = shell_text(call)
    if text is not None:
        workdir = argument(call, "workdir") or argument(call, "cwd")
        cwd = workdir if isinstance(workdir, str) and workdir.startswith("/") else cwd
        commands = simple_commands(text)
        after_cd: str | None = None
        for command in commands:
            if command.program == "cd":
                # `cd build && rm -rf *` empties build, not the project.
                after_cd = command.args[0] if command.args else "~"
                continue
            dangers += command_dangers(command, cwd, after_cd)
        dangers += pipeline_dangers(commands) + text_dangers(text)
    elif not is_shell(call) and _runs_sql(call):
        for _, value in argument_strings(call.arguments):
            dangers += sql_dangers(value)
    if not dangers:
        return dangers  # the usual case
    unique = list(dict.fromkeys(dangers))
    return sorted(unique, key=lambda d: -SEVERITY_ORDER[d.severity])


def _runs_sql(call: ToolCall) -> bool:
    return _sql_tool(tool_base_name(call))


@lru_cache(maxsize=4096)
def _sql_tool(base_name: str) -> bool:
    return base_name in _SQL_TOOL_WORDS or not _SQL_TOOL_WORDS.isdisjoint(base_name.split("_"))


def _cite(call: ToolCall, danger: Danger) -> Evidence:
    found = locate(call, danger.text)
    if found is None:
        return cite_call(call, "arguments", danger.text)
    field, start, end = found
    if danger.until:
        value = next(v for p, v in argument_strings(call.arguments) if p == field)
        tail = value.find(danger.until, end)
        end = tail + len(danger.until) if tail != -1 else end
        return cite_argument_span(call, field, start, end, value[start:end])
    return cite_argument_span(call, field, start, end, danger.text)


class DestructiveCommand(Rule):
    """Irreversible or dangerous commands: deletes, force pushes, dropped tables, wiped disks."""

    id = "destructive_command"
    version = 1
    category = "risk"
    description = "A shell command or SQL statement that destroys data or weakens the machine"
    gate_mode: ClassVar[RuleMode] = "deny"
    observes = frozenset({"call"})
    """Deny the high-severity (irreversible) cases; each medium hit asks instead."""

    def observe(self, state: None, event: Event, context: RuleContext) -> Iterable[Hit]:
        if event.kind != "call" or event.call is None:
            return ()
        return self._judge(event.call, context)

    def before_call(self, state: None, call: ToolCall, context: RuleContext) -> Iterable[Hit]:
        return self._judge(call, context)

    def _judge(self, call: ToolCall, context: RuleContext) -> list[Hit]:
        dangers = find_dangers(call, context.trace.cwd)
        if not dangers:
            return []
        worst = dangers[0]
        evidence = tuple(dict.fromkeys(_cite(call, d) for d in dangers))
        explained = "; ".join(f"`{d.text}` {d.why}" for d in dangers)
        irreversible = " This cannot be undone." if worst.severity == "high" else ""
        return [
            Hit(
                title=f"Destructive command: {worst.what}",
                severity=worst.severity,
                evidence=evidence,
                content=f"{explained}.{irreversible}",
                action="request_review" if worst.severity == "high" else "warn",
                actual=worst.text,
                trigger=call.source_id,
                gate="deny" if worst.severity == "high" else "ask",
            )
        ]


RULES: list[Rule] = [DestructiveCommand()]
