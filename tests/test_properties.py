"""The property tests' case counts: a share in ``make test``, all with the scale at 1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import properties


def test_the_default_share_keeps_at_least_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(properties.SCALE_VARIABLE, raising=False)
    assert properties.examples(3000) == 750
    assert properties.examples(300) == 100
    assert properties.examples(60) == 60


def test_a_scale_of_one_draws_every_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(properties.SCALE_VARIABLE, "1")
    assert properties.examples(3000) == 3000
    assert properties.examples(300) == 300


def test_a_lower_floor_lets_an_expensive_property_draw_its_share_down_to_that_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(properties.SCALE_VARIABLE, raising=False)
    assert properties.examples(40, floor=20) == 20
    assert properties.examples(400, floor=20) == 100
    monkeypatch.setenv(properties.SCALE_VARIABLE, "1")
    assert properties.examples(40, floor=20) == 40


def test_make_checks_tenth_lowers_the_floor_in_proportion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(properties.SCALE_VARIABLE, "0.1")  # make check (UNIT_PROPERTY_SCALE)
    assert properties.examples(300) == 40
    assert properties.examples(3000) == 300
    assert properties.examples(40, floor=20) == 8
    assert properties.examples(3, floor=2) == 1  # never below one case


@pytest.mark.parametrize("raw", ["many", "0", "-1"])
def test_a_scale_that_is_not_a_positive_number_is_refused(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv(properties.SCALE_VARIABLE, raw)
    with pytest.raises(ValueError, match=properties.SCALE_VARIABLE):
        properties.examples(300)


@settings(max_examples=5)
@given(st.integers())
def test_a_hypothesis_test(number: int) -> None:
    assert isinstance(number, int)


def test_hypothesis_tests_carry_the_property_mark(request: pytest.FixtureRequest) -> None:
    marked = {
        item.name: item.get_closest_marker("property") is not None
        for item in request.session.items
        if item.path == request.path
    }
    assert marked["test_a_hypothesis_test"]
    assert not marked["test_hypothesis_tests_carry_the_property_mark"]
