"""``proctor models …`` and ``proctor supervisor model`` end to end (SPEC MOD-1…MOD-4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from proctor.cli.main import cli
from proctor.testing.scripted_model import ScriptedModelServer, ScriptedReply

Run = Callable[..., Result]


@pytest.fixture
def run() -> Run:
    """``proctor`` as the user runs it."""

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return invoke


def _listed(run: Run) -> dict[str, object]:
    result = run("models", "list", "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def test_added_connections_are_listed_with_their_key_variable_but_never_a_key(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert run("models", "add", "gpt", "--model", "gpt-test", "--default").exit_code == 0
    added = run("models", "add", "claude", "--provider", "anthropic", "--model", "claude-x")
    assert added.exit_code == 0
    assert "ANTHROPIC_API_KEY is not set" in added.output
    data = _listed(run)
    connections = {c["name"]: c for c in data["connections"]}  # type: ignore[attr-defined]
    assert connections["gpt"]["api_key_env"] == "OPENAI_API_KEY"
    assert connections["gpt"]["endpoint"] == "https://api.openai.com/v1"
    assert (connections["gpt"]["key_set"], connections["claude"]["key_set"]) == (True, False)
    assert (connections["gpt"]["default"], connections["gpt"]["supervisor"]) == (True, True)
    assert connections["claude"]["endpoint"] == "https://api.anthropic.com/v1"
    table = run("models", "list")
    assert "sk-secret-value" not in table.output + json.dumps(data)
    assert "$OPENAI_API_KEY (set)" in table.output
    assert "follows the default: it uses 'gpt'" in table.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "m", "--api-key-env", "sk-abc123"], "not the key itself"),
        (["--model", "m", "--api-key-env", "MY-KEY"], "not an environment variable name"),
        (["--provider", "anthropic"], "needs --model"),
        (["--provider", "local"], "needs --path FILE"),
        (["--provider", "local", "--path", "/no/such.gguf"], "needs --path FILE"),
        (["--model", "m", "--base-url", "ftp://x"], "must start with http"),
    ],
)
def test_add_refuses_what_cannot_work(run: Run, args: list[str], message: str) -> None:
    assert run("init").exit_code == 0
    result = run("models", "add", "bad", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert _listed(run)["connections"] == []


def test_a_local_connection_needs_an_existing_file_and_no_key(run: Run, tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    assert run("models", "add", "tiny", "--provider", "local", "--path", str(model)).exit_code == 0
    [saved] = _listed(run)["connections"]  # type: ignore[misc]
    assert (saved["model"], saved["path"], saved["api_key_env"]) == ("tiny", str(model), None)


def test_models_test_reports_model_latency_and_tokens(run: Run) -> None:
    reply = ScriptedReply({"ok": True}, input_tokens=12, output_tokens=4)
    with ScriptedModelServer([reply, reply]) as server:
        assert run("models", "add", "s", "--model", "m", "--base-url", server.url).exit_code == 0
        result = run("models", "test", "s")
        as_json = run("models", "test", "s", "--json")
        sent = server.requests[0].body
    assert result.exit_code == 0, result.output
    assert "OK: 's' (scripted-model) answered in" in result.output
    assert "tokens: 12 in, 4 out" in result.output
    assert json.loads(as_json.output)["input_tokens"] == 12
    assert sent["response_format"]["json_schema"]["strict"] is True


def test_models_test_fails_with_the_error_message(run: Run) -> None:
    with ScriptedModelServer([ScriptedReply(status=401)]) as server:
        run("models", "add", "s", "--model", "m", "--base-url", server.url)
        result = run("models", "test", "s")
    assert result.exit_code == 1
    assert "refused the credentials (HTTP 401" in result.output


def test_models_test_fails_when_the_answer_is_not_the_json_asked_for(run: Run) -> None:
    with ScriptedModelServer(["no JSON here"]) as server:
        run("models", "add", "s", "--model", "m", "--base-url", server.url)
        result = run("models", "test", "s")
    assert result.exit_code == 1
    assert "not with the JSON asked for" in result.output


def test_removing_the_default_clears_it_and_a_pinned_one_warns_and_then_fails_loudly(
    run: Run,
) -> None:
    run("models", "add", "a", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--default")
    run("models", "add", "b", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert run("supervisor", "model", "b").exit_code == 0
    removed = run("models", "remove", "b")
    assert removed.exit_code == 0
    assert "still pinned to 'b'" in removed.output
    shown = run("supervisor", "model", "--json")
    assert json.loads(shown.output)["problem"] == (
        "the supervisor is pinned to connection 'b', which no longer exists; run "
        "`proctor supervisor model NAME` or `proctor supervisor model --follow-default`"
    )
    assert run("models", "remove", "a").output.count("there is no default now") == 1
    assert _listed(run)["default"] is None
    assert run("models", "remove", "a").exit_code == 2


def test_the_supervisor_follows_the_default_until_pinned_and_can_follow_it_again(
    run: Run,
) -> None:
    url = "http://127.0.0.1:9/v1"
    run("models", "add", "a", "--model", "m", "--base-url", url, "--default")
    run("models", "add", "b", "--model", "m", "--base-url", url)
    assert "follows the default: it uses 'a'" in run("supervisor", "model").output
    assert "is pinned to 'b': it uses 'b'" in run("supervisor", "model", "b").output
    assert run("models", "default", "b").exit_code == 0
    assert "The default connection is 'b'" in run("models", "default").output
    followed = run("supervisor", "model", "--follow-default")
    assert "follows the default: it uses 'b'" in followed.output
    assert run("supervisor", "model", "nope").exit_code == 2
    assert run("supervisor", "model", "a", "--follow-default").exit_code == 2


def test_an_embedding_model_can_be_neither_default_nor_supervisor(run: Run) -> None:
    url = "http://127.0.0.1:9/v1"
    run("models", "add", "vec", "--model", "e", "--base-url", url, "--kind", "embedding")
    assert "needs a text model" in run("supervisor", "model", "vec").output
    assert "must be a text model" in run("models", "default", "vec").output


def test_limits_are_shown_changed_within_their_ranges_and_refused_outside(run: Run) -> None:
    assert json.loads(run("models", "limits", "--json").output) == {
        "concurrency": 1,
        "stage_timeout_s": 240.0,
        "capacity_kib": 1024,
    }
    changed = run("models", "limits", "--concurrency", "2", "--stage-timeout", "60")
    assert "Concurrency 2, stage timeout 60 s, response capacity 1024 KiB" in changed.output
    assert run("models", "limits", "--stage-timeout", "10").exit_code == 2
    assert json.loads(run("models", "limits", "--json").output)["stage_timeout_s"] == 60
