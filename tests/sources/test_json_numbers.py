"""Integers past 64 bits are read exactly, wherever they sit on a line (SPEC ING-9: the
one JSON rule of ``sources._files``): orjson would read them as floats, so a line that
may hold one is read by Python's parser. The quick test that picks those lines must not
miss one: nineteen digits and a minus sign, twenty digits, or more."""

from __future__ import annotations

import json

import pytest

from proctor.sources._files import parse_json

LINES = [
    b'{"n": 12345678901234567890123}',
    b'{"n": 18446744073709551616}',  # 2**64: past orjson's unsigned integers
    b'{"n": 18446744073709551615}',  # 2**64 - 1: orjson's own, the same value
    b'{"n": -9223372036854775809}',  # below -2**63 with nineteen digits
    b'{"n": -9223372036854775808}',
    b'{"n": 1234567890123456789}',
    b'{"n": [1, -12345678901234567890, 3]}',
    b'{"s": "1234567890123456789012345", "n": 5}',
    b'{"uuid": "00000000-0e93-49f0-bb71-150f63befcd1", "t": "2026-02-10T22:57:54.764Z"}',
    b'{"n": 123456789012345678, "m": -123456789012345678}',
]


@pytest.mark.parametrize("line", LINES)
def test_numbers_are_read_exactly(line: bytes) -> None:
    expected = json.loads(line)
    value = parse_json(line)
    assert value == expected
    assert json.dumps(value) == json.dumps(expected)  # integers stay integers
