"""Policy files (SPEC SUP-4): validation names the file and the key; where Proctor looks.

Precedence, first match wins: an explicit path > ``.proctor/policy.toml`` in the working
folder or any folder above it > ``$PROCTOR_HOME/policies/<project>.toml`` > defaults.
The reference in ``docs/policy.md`` documents every key and its complete example parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from proctor.errors import ConfigError
from proctor.rules import DEFAULT_POLICY, Policy, find_policy, load_policy, parse_policy
from proctor.rules.builtin import budgets, hard_stop, idempotency, output_schema, permissions
from tests.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "policy.md"
POLICY_FAMILIES = (permissions, budgets, idempotency, output_schema, hard_stop)


@dataclass(frozen=True)
class Invalid:
    name: str
    text: str
    key: str
    """The key the error must name (``(top level)`` for syntax errors)."""
    reason: str


INVALID = [
    Invalid("an unknown top-level key", 'modes = "ask"', "modes", "Extra inputs"),
    Invalid("an unknown budget", "[budgets]\ntokenz = 5", "budgets.tokenz", "Extra inputs"),
    Invalid("a mode that does not exist", 'mode = "readonly"', "mode", "'agent' or 'ask'"),
    Invalid("a zero token budget", "[budgets]\ntokens = 0", "budgets.tokens", "greater than 0"),
    Invalid(
        "a warn ratio of 1.5", "[budgets]\nwarn_ratio = 1.5", "budgets.warn_ratio", "less than 1"
    ),
    Invalid(
        "allowed tools given as a string",
        '[plan]\nallowed_tools = "Read"',
        "plan.allowed_tools",
        "valid list",
    ),
    Invalid(
        "an idempotency key without arguments",
        '[[idempotency]]\ntool = "send_money"\narguments = []',
        "idempotency.0.arguments",
        "at least 1 item",
    ),
    Invalid(
        "an output schema with an unknown target",
        '[[output_schemas]]\ntarget = "reply"\nschema = { type = "object" }',
        "output_schemas.0.target",
        "final_message",
    ),
    Invalid(
        "an output schema that is not a JSON Schema",
        '[[output_schemas]]\ntarget = "final_message"\nschema = { type = "objekt" }',
        "output_schemas.0.schema",
        "not a valid JSON Schema",
    ),
    Invalid(
        "a hard stop whose pattern does not compile",
        '[[hard_stops]]\nname = "x"\npattern = "("',
        "hard_stops.0.pattern",
        "not a valid regular expression",
    ),
    Invalid(
        "a hard stop without a pattern",
        '[[hard_stops]]\nname = "x"',
        "hard_stops.0.pattern",
        "Field required",
    ),
    Invalid(
        "a required artifact naming both a path and a tool",
        '[[required_artifacts]]\npath = "a"\ntool = "b"',
        "required_artifacts.0",
        "exactly one of 'path' or 'tool'",
    ),
    Invalid(
        "a rule mode that does not exist",
        '[rules]\nhard_stop = "block"',
        "rules.hard_stop",
        "'deny', 'ask', 'warn' or 'off'",
    ),
    Invalid("a newer format version", "version = 2", "version", "only policy version 1"),
]


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.name)
def test_an_invalid_policy_names_the_file_and_the_key(case: Invalid) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_policy(case.text, "/repo/.proctor/policy.toml")
    message = str(raised.value)
    assert message.startswith("/repo/.proctor/policy.toml: invalid policy: ")
    assert f"{case.key}: " in message
    assert case.reason in message


def test_a_syntax_error_names_the_file_and_the_line() -> None:
    with pytest.raises(ConfigError, match=r"^/p/policy\.toml: not valid TOML \(.*line 2"):
        parse_policy('mode = "ask"\nplan = = 1\n', "/p/policy.toml")


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_policy('mode = "x"\n[budgets]\ntokens = -1', "p.toml")
    assert "mode: " in str(raised.value)
    assert "budgets.tokens: " in str(raised.value)


def test_an_unreadable_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=re.escape(str(missing)) + ": cannot read"):
        load_policy(missing)


def test_an_empty_file_is_the_default_policy_with_its_source() -> None:
    policy = parse_policy("", "empty.toml")
    assert policy.model_dump() == DEFAULT_POLICY.model_dump()
    assert policy.source == "empty.toml"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def places(tmp_path: Path, proctor_home: Path) -> dict[str, Path]:
    """A repository with a nested working folder, and a home policy for project ``shop``."""
    repo = tmp_path / "repo"
    cwd = repo / "services" / "api"
    cwd.mkdir(parents=True)
    return {
        "repo": repo,
        "cwd": cwd,
        "repo_policy": _write(repo / ".proctor" / "policy.toml", 'mode = "ask"'),
        "home_policy": _write(proctor_home / "policies" / "shop.toml", "[budgets]\ntokens = 9"),
        "explicit": _write(tmp_path / "explicit.toml", "[budgets]\ntool_calls = 3"),
    }


def test_an_explicit_path_wins_over_every_other_place(places: dict[str, Path]) -> None:
    policy = find_policy(explicit=places["explicit"], cwd=str(places["cwd"]), project="shop")
    assert policy.source == str(places["explicit"])
    assert policy.budgets.tool_calls == 3


def test_the_project_folder_policy_is_found_above_the_working_folder(
    places: dict[str, Path],
) -> None:
    policy = find_policy(cwd=str(places["cwd"]), project="shop")
    assert policy.source == str(places["repo_policy"])
    assert policy.mode == "ask"


def test_the_nearest_project_folder_policy_wins(places: dict[str, Path]) -> None:
    nearer = _write(places["cwd"] / ".proctor" / "policy.toml", "[budgets]\nsubtasks = 2")
    policy = find_policy(cwd=str(places["cwd"]), project="shop")
    assert policy.source == str(nearer)
    assert policy.mode == "agent"


def test_the_home_policy_of_the_project_applies_when_the_folders_have_none(
    places: dict[str, Path], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    policy = find_policy(cwd=str(elsewhere), project="shop")
    assert policy.source == str(places["home_policy"])
    assert policy.budgets.tokens == 9


def test_a_working_folder_that_does_not_exist_here_falls_through_to_the_home_policy(
    places: dict[str, Path],
) -> None:
    policy = find_policy(cwd="/home/someone-else/project", project="shop")
    assert policy.source == str(places["home_policy"])


def test_the_defaults_apply_when_nothing_is_found(tmp_path: Path) -> None:
    policy = find_policy(cwd=str(tmp_path), project="unknown-project")
    assert policy is DEFAULT_POLICY
    assert policy.source == "defaults"


def test_an_invalid_file_found_on_the_way_is_an_error_not_skipped(places: dict[str, Path]) -> None:
    _write(places["repo_policy"], 'mode = "readonly"')
    with pytest.raises(ConfigError, match=re.escape(str(places["repo_policy"])) + ".*mode: "):
        find_policy(cwd=str(places["cwd"]), project="shop")


# ---------------------------------------------------------------------------------------------
# the reference in docs/policy.md
# ---------------------------------------------------------------------------------------------


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    found = []
    for name, info in model.model_fields.items():
        if info.exclude:
            continue
        key = info.alias or name
        found.append(prefix + key)
        annotation: Any = info.annotation
        nested = [a for a in getattr(annotation, "__args__", (annotation,)) if isinstance(a, type)]
        for candidate in nested:
            if issubclass(candidate, BaseModel):
                found.extend(_keys(candidate, f"{prefix}{key}."))
    return found


def test_the_reference_documents_every_policy_key() -> None:
    text = DOCS.read_text(encoding="utf-8")
    missing = [key for key in _keys(Policy) if f"`{key}`" not in text]
    assert not missing, f"document these keys in docs/policy.md: {missing}"


def test_the_reference_names_every_policy_driven_rule_with_its_gate_default() -> None:
    text = DOCS.read_text(encoding="utf-8")
    rules = [r for family in POLICY_FAMILIES for r in family.RULES]
    assert len(rules) == 13
    missing = [r.id for r in rules if f"| `{r.id}` | `{r.gate_mode}` |" not in text]
    assert not missing, f"name these rules in docs/policy.md: {missing}"


def test_the_complete_example_in_the_reference_is_a_valid_policy() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Complete example", 1)[1]
    example = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert example is not None
    policy = parse_policy(example.group(1), "docs/policy.md")
    assert policy.mode == "ask"
    assert policy.plan.allowed_tools
    assert all(
        [policy.idempotency, policy.output_schemas, policy.hard_stops, policy.required_artifacts]
    )


def test_every_snippet_in_the_reference_is_a_valid_policy() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) >= 8
    for number, block in enumerate(blocks):
        parse_policy(block, f"docs/policy.md snippet {number}")
