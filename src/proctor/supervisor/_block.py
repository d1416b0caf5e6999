"""The untrusted data block: how observed content is framed so it cannot pose as instructions.

Everything the supervised agent, its tools or its users wrote reaches the model only as
JSON lines between two marker lines that carry a random token chosen per call::

    <<<OBSERVED-DATA 5c1e…>>>
    {"type":"target",…}
    {"id":"m3","type":"message",…}
    <<<END OBSERVED-DATA 5c1e…>>>

JSON escapes every newline, so observed text can never begin a line of its own; on top of
that every ``<<<`` / ``>>>`` run and every marker word inside the JSON is written with a
``\\uXXXX`` escape, so no observed text contains anything that looks like a marker, even in
the middle of a line. Decoding a line gives back exactly the original text.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

DATA_OPEN = "<<<OBSERVED-DATA {token}>>>"
DATA_CLOSE = "<<<END OBSERVED-DATA {token}>>>"
REJECTED_OPEN = "<<<REJECTED-ANSWER {token}>>>"
REJECTED_CLOSE = "<<<END REJECTED-ANSWER {token}>>>"

# The first character of each run of three angle brackets, and the first letter of each
# marker word; "\u003c" decodes to "<", so the JSON value is unchanged.
_ANGLE_RUN = re.compile(r"<(?=<<)|>(?=>>)")
_MARKER_WORD = re.compile(r"(?i)(o)(?=bserved-data)|(r)(?=ejected-answer)")


def new_boundary() -> str:
    """A fresh random token for one call's markers."""
    return secrets.token_hex(8)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def encode_line(value: Mapping[str, Any]) -> str:
    """One JSON line in which no marker, and no part of one, can appear."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _MARKER_WORD.sub(_escape, _ANGLE_RUN.sub(_escape, text))


def _framed(lines: Iterable[str], opening: str, closing: str, token: str) -> str:
    return "\n".join([opening.format(token=token), *lines, closing.format(token=token)])


def data_block(lines: Sequence[str], token: str) -> str:
    """The observed data, one encoded line per entry, between the markers."""
    return _framed(lines, DATA_OPEN, DATA_CLOSE, token)


def rejected_block(answer_text: str, errors: Sequence[str], token: str) -> str:
    """A rejected answer and why it was rejected, quoted as data for the repair call."""
    line = encode_line({"answer": answer_text, "errors": list(errors)})
    return _framed([line], REJECTED_OPEN, REJECTED_CLOSE, token)
