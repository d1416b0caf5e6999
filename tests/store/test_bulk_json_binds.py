"""The import's fast SQLite JSON bind writes the very text SQLAlchemy's own bind writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import JSON, Engine, null

from proctor.store import _schema as t
from proctor.store._bulk import _statement
from proctor.store._engine import create_sqlite_engine
from tests.properties import examples

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(0, 9), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    path: Path = tmp_path_factory.mktemp("json") / "binds.db"
    return create_sqlite_engine(path)


def _binds(engine: Engine, table: Any, key: str) -> tuple[Any, Any]:
    dialect = engine.dialect
    general = table.c[key].type.dialect_impl(dialect).bind_processor(dialect)
    statement = _statement(dialect, table, ("source_id", key), False)
    fast = next(p for p in statement.processors if p[1] == key)[2]
    return general, fast


def test_the_fast_bind_is_the_one_the_import_uses(engine: Engine) -> None:
    general, fast = _binds(engine, t.messages, "attributes")
    assert isinstance(t.messages.c.attributes.type, JSON)
    assert fast is not general  # the fast path is taken on the store's own engine


@settings(max_examples=examples(300), deadline=None)
@given(value=_JSON)
def test_a_json_value_is_bound_as_sqlalchemy_binds_it(engine: Engine, value: Any) -> None:
    for table, key in ((t.messages, "attributes"), (t.tool_calls, "arguments")):
        general, fast = _binds(engine, table, key)
        assert fast(value) == general(value)


def test_null_markers_and_none_take_sqlalchemy_s_own_bind(engine: Engine) -> None:
    general, fast = _binds(engine, t.tool_calls, "arguments")
    for value in (None, JSON.NULL, null(), {}, [], {1: "a"}):
        assert fast(value) == general(value)
