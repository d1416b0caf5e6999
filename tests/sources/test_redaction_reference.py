"""Redaction with its quick tests (anchors, exact parts, the patterns an anchor sends it
to) finds what every pattern applied to every text, in order, finds; and the quick
tests that tell a text or a serialised value redaction leaves alone never pass over a
text it would change."""

from __future__ import annotations

import re
from functools import partial

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.redaction import _PATTERNS, ANCHORS, Redactor
from tests.properties import examples

_SECRETS = [
    "sk-proj-Qx7Rt2Lm9Vb4Nc8Kp3Zw6Yh1Js5Df0Ga7Ub2Ie4Oq9Wr3Ty",
    "sk-ant-api03-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SecretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
    "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7",
    "github_pat_" + "A1b2_C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0",
    "glpat-" + "A1b2C3d4E5f6G7h8I9j0",
    "xoxb-" + "1234567890-abcdef",
    "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "rk_test_" + "Zz9" * 8,
    "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
    "npm_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "gsk_" + "A1b2C3d4E5" * 4,
    "xai-" + "A1b2C3d4E5" * 4,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "Authorization: Bearer abcdefghijklmnop1234",
    "proxy-authorization='Basic dXNlcjpwYXNzd29yZA=='",
    "Authorization: required",
    "Cookie: session=abcdef0123456789",
    "set-cookie: id=a3fWa; Expires=Wed",
    "bearer abcdefghijklmnopqrstuvwxyz",
    "postgres://admin:hunter2secret@db.internal:5432/app",
    "https://user:p@example.org",
    "export OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0kLmN",
    "DB_PASSWORD: 'correct-horse-battery'",
    "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "MY_SECRET_KEY=changeme",
    "sk-building-a-company-that-lasts",
    # Case-blind patterns match these letters as s and k: no anchor may assume ASCII.
    "aws_secret_acce\u017fs_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Coo\u212aie: session=abcdef0123456789",
    "Asia and AKIA and asia",
]
_FILLER = st.sampled_from(
    [
        " ",
        "\n",
        "\t",
        "key",
        "KEY",
        "token",
        "Token=",
        "://",
        "@",
        ":",
        "=",
        "_live_",
        "é",
        "日本語",
        "\u0130",
        "\u212a",
        "\ud800",
        "\U0001f600",
        "\x00",
        "A1b2" * 40,
        '"',
        "'",
    ]
)
_ANCHOR_CASES = st.sampled_from(ANCHORS).flatmap(
    lambda anchor: st.sampled_from([anchor, anchor.upper(), anchor.title()])
)
_TEXT = st.lists(
    st.one_of(st.sampled_from(_SECRETS), _FILLER, _ANCHOR_CASES, st.text(max_size=8)),
    max_size=7,
).map("".join)
_COMPILED = [
    (kind, re.compile(pattern), group, random) for kind, pattern, group, random in _PATTERNS
]


def _reference(text: str) -> tuple[str, dict[str, int]]:
    """Every pattern applied to ``text`` in order, without a quick test."""
    redactor = Redactor()
    if len(text) >= 8:
        for kind, pattern, group, random in _COMPILED:
            replace = partial(redactor._replace, kind=kind, group=group, needs_random=random)
            text = pattern.sub(replace, text)
    return text, redactor.counts


@settings(max_examples=examples(1_000), deadline=None)
@given(text=_TEXT)
def test_redaction_finds_what_every_pattern_finds(text: str) -> None:
    redactor = Redactor()
    redacted = redactor.redact(text)
    assert (redacted, redactor.counts) == _reference(text)
    if redacted != text:
        assert Redactor.may_find(text)
        assert Redactor.may_find("\x00".join(["plain", text, "other"]))
        if text.isascii():
            assert Redactor.may_find_in_ascii(text.encode())
            assert Redactor.may_find_in_ascii(orjson.dumps({"k": [text, 1]}))


@pytest.mark.parametrize("secret", _SECRETS)
@pytest.mark.parametrize("where", ["{}", "x {} y", "日本 {}\n", '{{"a": "{}"}}', "\ud800{}\x00"])
def test_each_secret_is_found_wherever_it_stands(secret: str, where: str) -> None:
    text = where.format(secret)
    redactor = Redactor()
    redacted = redactor.redact(text)
    assert (redacted, redactor.counts) == _reference(text)
    if redacted != text:
        assert Redactor.may_find(text)


@pytest.mark.parametrize(
    "text",
    [
        "set max_tokens to 512 and the key in the dict",
        "see https://example.org/docs about the token",
        "runs _live_ and _test_ suites",
    ],
)
def test_anchors_alone_do_not_make_a_text_one_to_redact(text: str) -> None:
    assert Redactor().redact(text) == text
    assert not Redactor.may_find(text)
    assert not Redactor.may_find_in_ascii(text.encode())
