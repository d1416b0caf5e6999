"""Gzip bodies of the intake (issue 16): only whole, valid gzip is read; the rest is named so.

A damaged body used to reach the JSONL reader as whatever part of it inflated, and was
answered "the payload holds no events" or a JSON error on line 1: now it is answered 400
"the body is not valid gzip: …" and nothing is stored.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from proctor.ingest import MAX_PAYLOAD_BYTES
from tests.api.conftest import Api
from tests.backends import raw_connection

NDJSON_GZIP = {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
EVENTS = b"".join(
    b'{"type": "message", "conversation_id": "zipped", "message_id": "m%d", '
    b'"role": "user", "text": "compressed message %d"}\n' % (number, number)
    for number in range(40)
)
WHOLE = gzip.compress(EVENTS, mtime=0)
"""``mtime=0``: the same bytes in every process, so parallel workers (pytest-xdist) collect the
same test ids from the damaged copies below."""


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "proctor.db"


@pytest.fixture
def api(database: Path) -> Iterator[Api]:
    client = Api(database)
    try:
        yield client
    finally:
        client.close()


def stored_messages(database: Path) -> int:
    with raw_connection(database) as connection:
        return int(connection.execute(text("SELECT count(*) FROM messages")).scalar_one())


def _raw_deflate(data: bytes) -> bytes:
    squeezer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return squeezer.compress(data) + squeezer.flush()


@pytest.mark.parametrize(
    ("damaged", "named"),
    [
        (b"", "it is empty"),
        (WHOLE[:3], "cut short"),  # inside the header: nothing inflates at all
        (WHOLE[:10], "cut short"),  # the header only
        (WHOLE[: len(WHOLE) // 2], "cut short"),  # half the events inflate
        (WHOLE[:-4], "cut short"),  # the length field missing
        (WHOLE[:-8] + b"\0\0\0\0" + WHOLE[-4:], "incorrect data check"),  # a wrong CRC
        (WHOLE + b"garbage!", "after its end"),
        (b"plain text, not gzip", "incorrect header check"),
        (_raw_deflate(EVENTS), "incorrect header check"),  # deflate without the gzip frame
        (zlib.compress(EVENTS), "incorrect header check"),  # zlib, not gzip
    ],
)
def test_a_body_that_is_not_whole_valid_gzip_is_refused_naming_why(
    api: Api, database: Path, damaged: bytes, named: str
) -> None:
    refused = api.post("/api/intake/events", content=damaged, headers=NDJSON_GZIP)

    assert refused.status_code == 400, refused.text
    detail = refused.json()["detail"]
    assert detail.startswith("the body is not valid gzip: ")
    assert named in detail
    assert "holds no events" not in detail and "JSON" not in detail
    assert stored_messages(database) == 0


@pytest.mark.parametrize(
    "body",
    [
        WHOLE,
        gzip.compress(EVENTS[:500], mtime=0) + gzip.compress(EVENTS[500:], mtime=0),  # two members
        WHOLE + b"\0" * 16,  # zero padding after the last member
        gzip.compress(EVENTS, compresslevel=0, mtime=0),
    ],
)
def test_whole_gzip_is_read(api: Api, database: Path, body: bytes) -> None:
    stored = api.post("/api/intake/events", content=body, headers=NDJSON_GZIP)

    assert stored.status_code == 200, stored.text
    assert stored_messages(database) == 40


def test_a_gzip_body_that_inflates_past_the_limit_is_answered_413(api: Api, database: Path) -> None:
    bomb = gzip.compress(b"\n" * (MAX_PAYLOAD_BYTES + 1))
    refused = api.post("/api/intake/events", content=bomb, headers=NDJSON_GZIP)

    assert refused.status_code == 413
    assert stored_messages(database) == 0
