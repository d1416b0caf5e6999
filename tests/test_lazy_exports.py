"""proctor._util.lazy: a package's names imported when first read, from its own modules or
another package's, under another name where the table says so."""

from __future__ import annotations

import pytest

from proctor._util.lazy import lazy_exports


def test_a_name_is_imported_on_first_read_and_kept() -> None:
    namespace: dict[str, object] = {}
    read = lazy_exports(
        "proctor._util",
        {"one_line": "text", "ProctorError": "proctor.errors", "now": "clock"},
        namespace,
        renamed={"now": "utcnow"},
    )
    from proctor import errors
    from proctor._util import clock, text

    assert read("one_line") is text.one_line
    assert namespace["one_line"] is text.one_line
    # A full proctor.… name is a module of another package, read as it is named.
    assert read("ProctorError") is errors.ProctorError
    assert read("now") is clock.utcnow
    assert namespace["now"] is clock.utcnow


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    read = lazy_exports("proctor.gate", {}, {})
    with pytest.raises(AttributeError, match=r"'proctor\.gate' has no attribute 'nothing'"):
        read("nothing")
