"""The one ``Duration`` option type: whole units by default, fractions and zero where asked."""

from __future__ import annotations

import click
import pytest

from proctor.cli._duration import Duration


@pytest.mark.parametrize(
    ("text", "unit", "seconds"),
    [("30s", "s", 30.0), ("5m", "s", 300.0), (" 24h ", "s", 86400.0), ("7d", "h", 604800.0),
     ("2", "h", 7200.0), ("90", "s", 90.0)],
)  # fmt: skip
def test_a_duration_is_a_whole_number_of_a_unit_in_seconds(
    text: str, unit: str, seconds: float
) -> None:
    assert Duration(unit).convert(text, None, None) == seconds


@pytest.mark.parametrize("text", ["1.5h", "0s", "0", "soon", "5 weeks", "-1m", ""])
def test_fractions_zero_and_words_are_refused_by_default(text: str) -> None:
    with pytest.raises(click.BadParameter, match="is not a duration like 30s, 5m, 24h or 7d"):
        Duration().convert(text, None, None)


def test_the_supervisor_throttle_takes_fractions_and_zero() -> None:
    lenient = Duration(fractions=True, zero=True)
    assert lenient.convert("1.5h", None, None) == 5400.0
    assert lenient.convert("0s", None, None) == 0.0
    assert lenient.convert("0.25", None, None) == 0.25
    with pytest.raises(click.BadParameter):
        lenient.convert("soon", None, None)
