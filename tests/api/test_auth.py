"""Tokens: required off loopback, enforced on every request whenever set (SPEC UI-2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from proctor.api import check_bind, is_loopback
from proctor.errors import ConfigError
from tests.api.conftest import Api


def test_loopback_addresses_are_recognised() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert not is_loopback("example.org")


def test_a_non_loopback_address_without_a_token_is_refused() -> None:
    with pytest.raises(ConfigError, match="PROCTOR_API_TOKEN"):
        check_bind("0.0.0.0", None, "PROCTOR_API_TOKEN")
    check_bind("0.0.0.0", "s3cret", "PROCTOR_API_TOKEN")
    check_bind("127.0.0.1", None, "PROCTOR_API_TOKEN")


@pytest.mark.slow
def test_proctor_serve_refuses_a_public_address_without_a_token(proctor_home: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "proctor.cli.main", "serve", "--host", "0.0.0.0"],
        env={"PROCTOR_HOME": str(proctor_home), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 2
    assert "without a token" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_every_request_needs_the_configured_token(database: Path) -> None:
    api = Api(database, token="s3cret-token")
    try:
        assert api.get("/api/health").status_code == 401
        assert api.get("/openapi.json").status_code == 401
        wrong = api.get("/api/projects", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json()["detail"]
        right = api.get("/api/projects", headers={"Authorization": "Bearer s3cret-token"})
        assert right.status_code == 200
    finally:
        api.close()


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_accepted_in_any_case(database: Path, scheme: str) -> None:
    api = Api(database, token="s3cret-token")
    try:
        answer = api.get("/api/projects", headers={"Authorization": f"{scheme} s3cret-token"})
    finally:
        api.close()

    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer s3cret-toke",
        "Bearer s3cret-token2",
        "bearer S3CRET-TOKEN",  # the scheme's case is free, the token's is not
        "Basic s3cret-token",
        "Bearers3cret-token",
        "s3cret-token",
        "Bearer",
        "",
    ],
)
def test_anything_but_the_bearer_token_itself_is_refused(
    database: Path, authorization: str
) -> None:
    api = Api(database, token="s3cret-token")
    try:
        answer = api.get("/api/projects", headers={"Authorization": authorization})
    finally:
        api.close()

    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"
