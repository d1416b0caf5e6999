"""Secret redaction (SPEC ING-4).

A leaf (it imports nothing from Proctor): ``sources`` redacts what it prepares, the
``secrets`` rule and the supervisor's rendering redact what they show.

Every string that reaches the store passes through :class:`Redactor` first. A detected
secret is replaced by ``[REDACTED:<kind>]`` and counted. Patterns cover the keys of the
major model providers, cloud and forge tokens, chat-platform tokens, JWTs, private key
blocks, ``Authorization`` / ``Cookie`` headers, passwords inside URLs and secret-named
environment assignments.

Prefix-only patterns (``sk-…``) also require the token to look random, so URL slugs such
as ``sk-building-a-company`` are left alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ahocorasick_rs import BytesAhoCorasick

_RANDOM_TAIL = r"[A-Za-z0-9_\-]"

# (kind, pattern, group holding the secret or 0 for the whole match, needs-randomness)
_PATTERNS: list[tuple[str, str, int, bool]] = [
    (
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]{0,8192})",
        0,
        False,
    ),
    (
        "anthropic_key",
        r"(?<![A-Za-z0-9])sk-ant-(?:api|admin)\d{2}-" + _RANDOM_TAIL + r"{20,}",
        0,
        False,
    ),
    (
        "openai_key",
        r"(?<![A-Za-z0-9_\-])sk-(?:proj-|svcacct-|admin-|None-)?" + _RANDOM_TAIL + r"{20,}",
        0,
        True,
    ),
    ("google_api_key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}", 0, False),
    ("aws_access_key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Z0-9])", 0, False),
    (
        "aws_secret_key",
        r"(?i:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})",
        1,
        False,
    ),
    (
        "github_token",
        r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})",
        0,
        False,
    ),
    ("gitlab_token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{20,}", 0, False),
    ("slack_token", r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9\-]{10,}", 0, False),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", 0, False),
    ("stripe_key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", 0, False),
    ("huggingface_token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}", 0, False),
    ("npm_token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}", 0, False),
    ("groq_key", r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{40,}", 0, False),
    ("xai_key", r"(?<![A-Za-z0-9])xai-[A-Za-z0-9]{40,}", 0, False),
    (
        "jwt",
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        0,
        False,
    ),
    (
        "authorization_header",
        r"(?i:\b(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?"
        r"((?:(?i:bearer|basic|token|digest|apikey)\s+)?[^\s\"',;]{8,})",
        1,
        False,
    ),
    ("cookie_header", r"(?i:\b(?:set-)?cookie)[\"']?\s*:\s*[\"']?([^\r\n\"']{8,})", 1, False),
    ("bearer_token", r"(?i:\bbearer)\s+([A-Za-z0-9_\-\.=:/+]{16,})", 1, False),
    (
        "url_password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>]+:([^\s/@\"'<>]{3,})@[^\s\"'<>]",
        1,
        False,
    ),
    (
        "secret_assignment",
        r"\b[A-Z][A-Z0-9_]*(?:API_KEY|APIKEY|SECRET|SECRET_KEY|TOKEN|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY)"
        r"[A-Z0-9_]*[\"']?\s*[=:]\s*[\"']?([^\s\"']{8,})",
        1,
        False,
    ),
]

# Lower-case substrings one of which must occur for a pattern to be tried at all: most
# text contains none, and a substring test costs far less than a regex scan.
_ANCHORS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "google_api_key": ("aiza",),
    "aws_access_key": ("akia", "asia", "abia", "acca"),
    "aws_secret_key": ("secret",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab_token": ("glpat-",),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "stripe_key": ("_live_", "_test_"),
    "huggingface_token": ("hf_",),
    "npm_token": ("npm_",),
    "groq_key": ("gsk_",),
    "xai_key": ("xai-",),
    "jwt": ("eyj",),
    "authorization_header": ("authorization",),
    "cookie_header": ("cookie",),
    "bearer_token": ("bearer",),
    "url_password": ("://",),
    "secret_assignment": ("key", "secret", "token", "passw"),
}
# A further test for the patterns whose anchor is common in ordinary text: substrings
# (case as written) one of which every match holds. They are what the pattern itself
# spells in fixed case, so the test never skips a text the pattern would match; it
# spares the regex scan of a long text that says "key" or "://" in passing.
_EXACT: dict[str, tuple[tuple[str, ...], ...]] = {
    # An upper-case name that ends in or holds one of these, then "=" or ":".
    "secret_assignment": (("KEY", "SECRET", "TOKEN", "PASSW"), ("=", ":")),
    # scheme://user:password@host
    "url_password": (("@",),),
    "stripe_key": (("sk_live_", "sk_test_", "rk_live_", "rk_test_"),),
    # Upper case only (the pattern is case-sensitive), where "Asia" is a word.
    "aws_access_key": (("AKIA", "ASIA", "ABIA", "ACCA"),),
}
_COMPILED = [
    (kind, re.compile(pattern), group, needs_random, frozenset(_ANCHORS[kind]), _EXACT.get(kind))
    for kind, pattern, group, needs_random in _PATTERNS
]
_ALL_ANCHORS = tuple(sorted({a for v in _ANCHORS.values() for a in v}))
ANCHORS = _ALL_ANCHORS
"""Every anchor, lower-case ASCII: ``Redactor.redact`` changes no text whose lower case
holds none of them (``may_find``). For callers that fold this test into a search of
their own (``sources._prepare``)."""
_ANCHOR_FINDER = BytesAhoCorasick([anchor.encode() for anchor in _ALL_ANCHORS])
"""Every anchor in one pass over the text (Rust's aho-corasick) instead of one scan each.
Over the UTF-8 bytes: the anchors are ASCII, and an ASCII byte there is that character."""
_TRIED_FOR: dict[str, tuple[int, ...]] = {
    anchor: tuple(number for number, compiled in enumerate(_COMPILED) if anchor in compiled[4])
    for anchor in _ALL_ANCHORS
}
"""The patterns (their places in ``_COMPILED``) an anchor's presence sends ``redact`` to."""
_EXACT_BYTES = [
    None if exact is None else tuple(tuple(part.encode() for part in parts) for parts in exact)
    for _, _, _, _, _, exact in _COMPILED
]
"""Each pattern's ``_EXACT`` parts as ASCII bytes (the parts are ASCII), for a text
tested in its UTF-8."""
_PART_ANCHORS: dict[str | bytes, str] = {
    form: max(held, key=len)
    for exact in _EXACT.values()
    for parts in exact
    for part in parts
    if (held := [anchor for anchor in _ALL_ANCHORS if anchor in part.lower()])
    for form in (part, part.encode())
}
"""An anchor the lower case of an ``_EXACT`` part holds, for the parts that hold one
(``KEY``: ``key``; ``sk_live_``: ``_live_``): a text without that anchor cannot hold the
part, which is then not searched for."""
_NEEDS_NON_LETTER = {"authorization_header", "bearer_token"}
_PLACEHOLDER_VALUE = re.compile(
    r"[(){}<>$]|\.\.\.|xxxx|your[-_]|example|placeholder|changeme|replace[-_]?me|redacted", re.I
)


_LOWERED_TO_ASCII = ("\u0130", "\u212a")
"""The only characters not ASCII whose ``str.lower`` holds an ASCII letter (İ → i̇,
Kelvin sign → k); ``_anchors_in`` tests for them written out."""


def _anchors_in(text: str, utf8: bytes | None = None) -> set[str]:
    """The anchors (see ``_ANCHORS``) that occur in ``text``, case-blind; ``utf8``: the
    text's UTF-8 (lone surrogates passed), when the caller has it.

    The anchors are ASCII, so only the text's ASCII bytes can spell one: ``bytes.lower``
    of the UTF-8 (ASCII letters only, one C pass) finds the same anchors as
    ``text.lower()`` encoded (a slow pass over a text with any character not ASCII),
    unless the text holds a character whose lower case is ASCII (``_LOWERED_TO_ASCII``).
    """
    if text.isascii() or ("\u0130" not in text and "\u212a" not in text):
        if utf8 is None:
            utf8 = text.encode("utf-8", "surrogatepass")
        lowered = utf8.lower()
    else:
        lowered = text.lower().encode("utf-8", "surrogatepass")
    matches = _ANCHOR_FINDER.find_matches_as_indexes(lowered, overlapping=True)
    if not matches:  # most texts: no set built
        return set()
    return {_ALL_ANCHORS[number] for number, _, _ in matches}


def _tried(found: set[str]) -> list[int]:
    """The places in ``_COMPILED`` of the patterns whose anchors are among ``found``, in
    order (the order ``redact`` applies them in)."""
    if len(found) == 1:
        return list(_TRIED_FOR[next(iter(found))])
    return sorted({number for anchor in found for number in _TRIED_FOR[anchor]})


def _holds_parts(exact: tuple[tuple[Any, ...], ...] | None, text: Any, found: set[str]) -> bool:
    """True when ``text`` holds one part of every group of ``exact`` (None: no groups).

    ``found``: the anchors of the text (or more); a part whose anchor
    (``_PART_ANCHORS``) is not among them is not searched for. In ``redact`` they are
    the anchors of the text before any pattern replaced a secret in it: a placeholder
    (``[REDACTED:<kind>]``, bracketed) holds no part that holds an anchor and joins no
    letters into one, so a later text holds no such part the first did not."""
    if exact is None:
        return True
    for parts in exact:
        for part in parts:
            anchor = _PART_ANCHORS.get(part)
            if (anchor is None or anchor in found) and part in text:
                break
        else:
            return False
    return True


def _looks_random(token: str) -> bool:
    """True when a token has the character mix of a generated key, not of prose or a slug."""
    body = token.split("-", 1)[1] if token.startswith("sk-") else token
    if sum(ch.isdigit() for ch in body) < 2 or not any(ch.isalpha() for ch in body):
        return False
    words = [w for w in re.split(r"[-_]", body) if w]
    if len(words) >= 3 and all(w.isalpha() and w.islower() for w in words[:-1]):
        return False  # slug-like: lower-case words joined by hyphens
    counts = Counter(body)
    entropy = -sum(n / len(body) * math.log2(n / len(body)) for n in counts.values())
    return entropy >= 3.5


@dataclass(slots=True)
class Redactor:
    """Replaces secrets in strings and counts them by kind."""

    counts: dict[str, int] = field(default_factory=dict)
    """Secrets replaced so far, by kind."""

    @property
    def total(self) -> int:
        """Secrets replaced so far (no sum while none was: most imports)."""
        return sum(self.counts.values()) if self.counts else 0

    def redact(self, text: str, utf8: bytes | None = None) -> str:
        """Return ``text`` with every detected secret replaced by ``[REDACTED:<kind>]``.

        ``utf8``: the text's UTF-8 (lone surrogates passed), when the caller has it (one
        encoding fewer)."""
        if len(text) < 8:
            return text
        found = _anchors_in(text, utf8)
        if not found:
            return text
        for number in _tried(found):
            kind, pattern, group, needs_random, _, exact = _COMPILED[number]
            if _holds_parts(exact, text, found):
                text = pattern.sub(
                    partial(self._replace, kind=kind, group=group, needs_random=needs_random), text
                )
        return text

    @staticmethod
    def may_find(text: str) -> bool:
        """False when ``redact`` would certainly find nothing in ``text`` (a quick test).

        Several strings can be tested at once, joined by a character no pattern's
        anchor holds (``\\x00``).
        """
        return len(text) >= 8 and Redactor.may_find_anchored(_anchors_in(text), text)

    @staticmethod
    def may_find_in_ascii(data: bytes) -> bool:
        """``may_find(data.decode())`` for ASCII ``data`` (a serialised JSON value), without
        decoding it and encoding it again: its UTF-8 is ``data`` itself."""
        if len(data) < 8:
            return False
        matches = _ANCHOR_FINDER.find_matches_as_indexes(data.lower(), overlapping=True)
        return bool(matches) and Redactor.may_find_anchored(
            {_ALL_ANCHORS[number] for number, _, _ in matches}, data
        )

    @staticmethod
    def may_find_anchored(found: set[str], text: str | bytes) -> bool:
        """False when ``redact`` would certainly find nothing in ``text`` (or in any text
        within it), given ``found``: every anchor (``ANCHORS``) its lower case holds, or
        more. ``text`` may be UTF-8 (a serialised JSON value: anchors and ``_EXACT``
        parts hold no character JSON escapes, so one in a string is in its text too).

        ``redact`` tries a pattern only when the text holds one of its anchors and (for
        a pattern with ``_EXACT`` parts) one part of each group: where no pattern
        passes, it tries none."""
        exacts = _EXACT_BYTES if isinstance(text, bytes) else None
        for number in _tried(found):
            exact = _COMPILED[number][5] if exacts is None else exacts[number]
            if _holds_parts(exact, text, found):
                return True
        return False

    def _replace(self, match: re.Match[str], kind: str, group: int, needs_random: bool) -> str:
        whole = match.group(0)
        if needs_random and not _looks_random(whole):
            return whole
        if group == 0:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return f"[REDACTED:{kind}]"
        secret = match.group(group)
        if secret is None or "[REDACTED:" in secret:
            return whole  # already replaced by a more specific pattern
        if kind in _NEEDS_NON_LETTER and secret.replace(" ", "").isalpha():
            return whole  # "Authorization: required" is prose, not a credential
        if kind == "secret_assignment" and _PLACEHOLDER_VALUE.search(secret):
            return whole  # TOKEN=<your-token>, KEY=os.getenv("KEY"): code, not a credential
        start, end = match.span(group)
        offset = match.start()
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{whole[: start - offset]}[REDACTED:{kind}]{whole[end - offset :]}"
