"""docs/gate.md cannot drift: its settings snippet, options and rule table match the code."""

from __future__ import annotations

import json
import re

from proctor.cli.gate import gate_command
from proctor.rules.builtin import builtin_rules
from tests.conftest import REPO_ROOT

DOC = REPO_ROOT / "docs" / "gate.md"


def test_the_settings_snippet_is_a_pre_tool_use_hook_running_proctor_gate() -> None:
    snippet = re.search(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert snippet is not None
    settings = json.loads(snippet.group(1))
    (group,) = settings["hooks"]["PreToolUse"]
    (hook,) = group["hooks"]
    assert (group["matcher"], hook["type"], hook["command"]) == ("*", "command", "proctor gate")


def test_every_option_of_the_command_is_documented() -> None:
    text = DOC.read_text()
    for param in gate_command.params:
        for flag in param.opts:
            assert flag in text, flag


def test_the_rule_table_lists_every_built_in_rule_with_its_gate_default() -> None:
    text = DOC.read_text()
    table = text[text.index("<!-- rule-table") : text.index("<!-- /rule-table -->")]
    documented = dict(re.findall(r"^\| `(\w+)` \| (\w+) \|$", table, re.MULTILINE))
    assert documented == {rule.id: rule.gate_mode for rule in builtin_rules()}


def test_the_http_hook_snippet_posts_to_the_gate_route_the_server_serves() -> None:
    from proctor.api.routers.gate import router

    snippets = [json.loads(s) for s in re.findall(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL)]
    http = [
        hook
        for settings in snippets
        if "hooks" in settings
        for group in settings["hooks"]["PreToolUse"]
        for hook in group["hooks"]
        if hook["type"] == "http"
    ]
    assert len(http) == 1
    (hook,) = http
    assert hook["url"].startswith("http://127.0.0.1:8700/api/")
    assert hook["url"].removeprefix("http://127.0.0.1:8700/api") in {
        getattr(route, "path", None) for route in router.routes
    }
    assert 0 < hook["timeout"] <= 30
