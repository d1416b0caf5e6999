"""Per-project policy files: what deterministic rules check and what the gate blocks.

A policy is a TOML file (``docs/policy.md`` documents every key). Where Proctor looks,
first match wins:

1. an explicit path (``--policy FILE``);
2. ``.proctor/policy.toml`` in the project's folder or any folder above it;
3. ``$PROCTOR_HOME/policies/<project>.toml``;
4. the defaults: agent mode, no plan restrictions, no budgets, built-in detectors on.

Invalid files raise ``ConfigError`` naming the file, the key and what is wrong.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from proctor.errors import ConfigError

RuleMode = Literal["deny", "ask", "warn", "off"]
"""What the gate does when a rule fires before a tool call: block it, ask the user,
only record a finding, or skip the rule."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Plan(_Strict):
    """The plan snapshot: which tools and paths the agent was expected to use."""

    allowed_tools: list[str] | None = None
    """Tool name globs (``Read``, ``mcp__github__*``); unset means any tool."""
    allowed_paths: list[str] | None = None
    """Path globs the agent may touch, relative to a project root or absolute; unset means any."""
    project_roots: list[str] = Field(default_factory=list)
    """Folders that belong to the project; the conversation's working folder is always one."""


class Budgets(_Strict):
    """Limits per conversation; a warning at ``warn_ratio``, a pause at 100 %."""

    tokens: int | None = Field(default=None, gt=0)
    """Model tokens (input + output, cache included)."""
    wall_time_minutes: float | None = Field(default=None, gt=0)
    """Minutes from the first to the latest event."""
    tool_calls: int | None = Field(default=None, gt=0)
    """Tool calls made."""
    subtasks: int | None = Field(default=None, gt=0)
    """Sub-agents started."""
    artifacts: int | None = Field(default=None, gt=0)
    """Distinct files written or created."""
    warn_ratio: float = Field(default=0.8, gt=0, lt=1)
    """Share of a budget at which a warning is raised."""


class IdempotencyKey(_Strict):
    """Calls of ``tool`` whose ``arguments`` values are equal are the same operation."""

    tool: str
    """Tool name glob."""
    arguments: list[str] = Field(min_length=1)
    """Argument names (dot paths) whose values form the key."""


class OutputSchema(_Strict):
    """A JSON Schema an output must satisfy."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    target: str
    """``final_message`` (the last reply, parsed as JSON) or ``tool:<glob>`` (call arguments)."""
    json_schema: dict[str, Any] = Field(alias="schema")
    """The JSON Schema (any draft ``jsonschema`` supports)."""

    @field_validator("target")
    @classmethod
    def _known_target(cls, value: str) -> str:
        if value != "final_message" and not value.startswith("tool:"):
            raise ValueError("must be 'final_message' or 'tool:<tool name glob>'")
        return value

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        from jsonschema import validators
        from jsonschema.exceptions import SchemaError

        try:
            validators.validator_for(value).check_schema(value)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return value


class HardStop(_Strict):
    """A tool call that must never happen: the run is stopped (and the gate denies it)."""

    name: str
    """Short name shown in findings."""
    tool: str = "*"
    """Tool name glob."""
    argument: str | None = None
    """Argument (dot path) to match; unset means any string argument."""
    pattern: str
    """Regular expression searched in the argument."""
    reason: str | None = None
    """Why, shown to the agent and the user."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


class RequiredArtifact(_Strict):
    """Something the run must produce before it ends."""

    path: str | None = None
    """A file glob that must be written or created."""
    tool: str | None = None
    """A tool (glob) that must be called successfully."""
    description: str | None = None
    """What it is, for the finding."""

    @model_validator(mode="after")
    def _one_target(self) -> RequiredArtifact:
        if (self.path is None) == (self.tool is None):
            raise ValueError("give exactly one of 'path' or 'tool'")
        return self


def _http_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    return value


class Notify(_Strict):
    """Where notifications go besides Proctor's own list (``docs/notifications.md``)."""

    webhook_url: str | None = None
    """An http(s) URL each new notification is POSTed to as JSON; unset: no webhook."""
    timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    """How long one attempt may take."""
    retries: int = Field(default=3, ge=0, le=10)
    """Attempts after the first when the receiver fails (5xx, 408, 429, no answer)."""
    link_base: str | None = None
    """The web UI's address (``http://127.0.0.1:8700``): the body then links the finding."""

    @field_validator("webhook_url", "link_base")
    @classmethod
    def _is_http(cls, value: str | None) -> str | None:
        return _http_url(value)


class Policy(_Strict):
    """Everything the deterministic rules and the gate need to know about a project."""

    version: int = 1
    """Policy file format version."""
    mode: Literal["agent", "ask"] = "agent"
    """``ask``: read-only; any write tool is a violation. ``agent``: writes allowed."""
    plan: Plan = Field(default_factory=Plan)
    budgets: Budgets = Field(default_factory=Budgets)
    idempotency: list[IdempotencyKey] = Field(default_factory=list)
    output_schemas: list[OutputSchema] = Field(default_factory=list)
    hard_stops: list[HardStop] = Field(default_factory=list)
    required_artifacts: list[RequiredArtifact] = Field(default_factory=list)
    write_tools: list[str] | None = None
    """Tool name globs that write; unset means Proctor's built-in list."""
    rules: dict[str, RuleMode] = Field(default_factory=dict)
    """Per rule id: what the gate does when it fires (``deny``, ``ask``, ``warn``, ``off``)."""
    notify: Notify = Field(default_factory=Notify)
    """Where notifications are delivered: ``[notify]`` (webhook)."""
    source: str | None = Field(default=None, exclude=True)
    """Where the policy came from (a path, or ``defaults``)."""

    @field_validator("version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != 1:
            raise ValueError("only policy version 1 exists; upgrade Proctor to read newer files")
        return value


DEFAULT_POLICY = Policy(source="defaults")


def _location(error: ErrorDetails) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(top level)"


def parse_policy(text: str, source: str) -> Policy:
    """Parse and validate policy TOML, raising ``ConfigError`` with file and key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from None
    try:
        policy = Policy.model_validate({**data, "source": source})
    except ValidationError as exc:
        problems = "; ".join(
            f"{_location(e)}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()
        )
        raise ConfigError(f"{source}: invalid policy: {problems}") from None
    from proctor.rules.builtin import builtin_rules

    known = {rule.id for rule in builtin_rules()}
    unknown = sorted(set(policy.rules) - known)
    if unknown:
        raise ConfigError(
            f"{source}: invalid policy: rules.{unknown[0]}: unknown rule "
            f"(`proctor rules` lists them: {', '.join(sorted(known))})"
        )
    return policy


def load_policy(path: Path) -> Policy:
    """Read a policy file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the policy file ({exc.strerror or exc})") from None
    return parse_policy(text, str(path))


def find_policy(
    *, explicit: Path | None = None, cwd: str | None = None, project: str | None = None
) -> Policy:
    """The policy that applies, by the order in the module docstring."""
    if explicit is not None:
        return load_policy(explicit)
    if cwd:
        folder = Path(cwd)
        for candidate in (folder, *folder.parents):
            path = candidate / ".proctor" / "policy.toml"
            if path.is_file():
                return load_policy(path)
    if project:
        from proctor._util.paths import proctor_home

        path = proctor_home() / "policies" / f"{project}.toml"
        if path.is_file():
            return load_policy(path)
    return DEFAULT_POLICY
