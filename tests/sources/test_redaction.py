"""Secrets never enter the store (SPEC ING-4): table-driven cases per kind, and near misses."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from proctor.sources import Redactor

OPENAI = "sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty"
ANTHROPIC = (
    "sk-ant-api03-Zp4Lq8Rx2Mv6Nb0Kc3Jt7Hw1Gy5Fd9Sa2Qe6Wr0Ty4Ui8Op3As7Df1Gh5Jk9Lz2Xc6Vb0Nm4Qw8Er"
)
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDx3kR9yQpL2wz8s7bQ0g8Zr2pQmWc1N3hTjvUa9bXk0wAAAJgvq8mZL6vJ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    secret: str
    kind: str


CASES = [
    Case("openai key in env listing", f"OPENAI_KEY_X {OPENAI} end", OPENAI, "openai_key"),
    Case("anthropic key", f"export key={ANTHROPIC}", ANTHROPIC, "anthropic_key"),
    Case(
        "google key",
        "key=AIzaSyD3f8Gk2Lm7Qp4Rs9Tv1Wx6Yz0Ab5Cd8Ef",
        "AIzaSyD3f8Gk2Lm7Qp4Rs9Tv1Wx6Yz0Ab5Cd8Ef",
        "google_api_key",
    ),
    Case(
        "aws access key id",
        "aws id AKIAIOSFODNN7EXAMPLE in config",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_access_key",
    ),
    Case("aws secret", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws_secret_key"),
    Case(
        "github token",
        "token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "github_token",
    ),
    Case(
        "github fine-grained",
        "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
        "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
        "github_token",
    ),
    Case(
        "slack bot token",
        "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack_token",
    ),
    Case(
        "slack webhook",
        "post to https://hooks.slack.com/services/T000A0000/B000B0000/XXXXXXXXXXXXXXXXXXXXXXXX now",
        "T000A0000/B000B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "slack_webhook",
    ),
    Case(
        "stripe key",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "stripe_key",
    ),
    Case("jwt", f"id_token: {JWT}", JWT, "jwt"),
    Case(
        "private key block",
        f"cat id_ed25519\n{PRIVATE_KEY}\n",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "private_key",
    ),
    Case(
        "authorization header",
        "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' https://api.example.com",
        "abcDEF123456ghiJKL789",
        "authorization_header",
    ),
    Case(
        "authorization in json",
        '{"headers": {"Authorization": "Basic dXNlcjpwYXNzd29yZDEyMw=="}}',
        "dXNlcjpwYXNzd29yZDEyMw==",
        "authorization_header",
    ),
    Case(
        "cookie header",
        "Cookie: session=3f9a8b7c6d5e4f3a2b1c; csrftoken=abc123def456",
        "session=3f9a8b7c6d5e4f3a2b1c",
        "cookie_header",
    ),
    Case(
        "password in url",
        "DATABASE_URL postgres://app:s3cr3t-P4ss@db.internal:5432/app",
        "s3cr3t-P4ss",
        "url_password",
    ),
    Case(
        "secret env assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2", "secret_assignment"
    ),
    Case(
        "huggingface token",
        "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "huggingface_token",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_kind_of_secret_is_replaced_and_counted(case: Case) -> None:
    redactor = Redactor()
    redacted = redactor.redact(case.text)
    assert case.secret not in redacted
    assert "[REDACTED:" in redacted
    assert redactor.total >= 1
    assert case.kind in redactor.counts


NEAR_MISSES = [
    "see https://example.com/blog/sk-building-a-company-that-lasts-2024",
    "the sk-learn style estimator uses fit() and predict()",
    "Authorization: required for this endpoint",
    "password = get_password()",
    "token: 5",
    "run `npm test` and `git log --oneline`",
    "https://docs.python.org/3/library/urllib.parse.html",
    "the hash is 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_ordinary_text_that_looks_a_little_like_a_secret_is_left_alone(text: str) -> None:
    redactor = Redactor()
    assert redactor.redact(text) == text
    assert redactor.total == 0


def test_redacting_twice_changes_nothing_more() -> None:
    redactor = Redactor()
    once = redactor.redact(f"OPENAI_API_KEY={OPENAI}\nAuthorization: Bearer {OPENAI}")
    again = Redactor()
    assert again.redact(once) == once
    assert again.total == 0


def test_the_surrounding_text_is_kept() -> None:
    redacted = Redactor().redact(
        "connect to postgres://app:s3cr3t-P4ss@db.internal:5432/app please"
    )
    assert (
        redacted == "connect to postgres://app:[REDACTED:url_password]@db.internal:5432/app please"
    )


@pytest.mark.parametrize(
    "text",
    [
        'OPENAI_API_KEY = os.getenv("OPENAI_API_KEY")',
        "GITHUB_TOKEN=<your-token-here>",
        "API_KEY=${API_KEY}",
        "DB_PASSWORD=changeme123",
        "SECRET_KEY=your_secret_key_here",
    ],
)
def test_secret_named_assignments_of_code_or_placeholders_are_left_alone(text: str) -> None:
    redactor = Redactor()
    assert redactor.redact(text) == text
