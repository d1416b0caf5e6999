"""Dataclass methods made from kept code objects are the methods ``dataclasses`` makes.

Each test class is created three times — by ``dataclasses`` alone, under
``cached_dataclass_code`` with nothing kept (it compiles and keeps), and under it again
(the code objects come from the file) — and the three must have the same methods: the same
code (bytecode, constants, names, arguments) and the same behaviour.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.gate._dataclass_code import cached_dataclass_code, code_file

pytestmark = pytest.mark.skipif(
    code_file(Path()) is None, reason="this Python's dataclasses are not the ones repeated"
)

_OPTIONS = st.fixed_dictionaries(
    {
        "frozen": st.booleans(),
        "order": st.booleans(),
        "slots": st.booleans(),
        "kw_only": st.booleans(),
        "eq": st.booleans(),
        "unsafe_hash": st.booleans(),
    }
).filter(lambda o: o["eq"] or not o["order"])
_FIELDS = st.lists(
    st.sampled_from(["plain", "default", "factory", "no_init", "no_repr", "no_compare"]),
    min_size=0,
    max_size=5,
)


def _make(options: dict[str, Any], fields: list[str]) -> type:
    spec: list[tuple[str, Any, Any]] = []
    for number, kind in enumerate(fields):
        name = f"f{number}_{kind}"
        if kind == "plain":
            spec.append((name, int, dataclasses.field()))
        elif kind == "default":
            spec.append((name, int, dataclasses.field(default=number)))
        elif kind == "factory":
            spec.append((name, list, dataclasses.field(default_factory=list)))
        elif kind == "no_init":
            spec.append((name, int, dataclasses.field(default=7, init=False)))
        elif kind == "no_repr":
            spec.append((name, str, dataclasses.field(default="x", repr=False)))
        else:
            spec.append((name, int, dataclasses.field(default=3, compare=False)))
    if not options["kw_only"]:  # fields without a default must come first
        spec.sort(key=lambda item: item[0].endswith("_plain"), reverse=True)
    return dataclasses.make_dataclass("Example", spec, **options)


def _code(function: Any) -> tuple[Any, ...]:
    code = function.__code__
    return (code.co_code, code.co_consts, code.co_names, code.co_varnames, code.co_argcount,
            code.co_kwonlyargcount, code.co_filename, function.__defaults__,
            function.__kwdefaults__)  # fmt: skip


def _methods(cls: type) -> dict[str, tuple[Any, ...]]:
    return {
        name: _code(value)
        for name, value in vars(cls).items()
        if callable(value) and hasattr(value, "__code__") and name.startswith("__")
    }


def _behaviour(cls: type) -> tuple[Any, ...]:
    arguments = {f.name: 1 for f in dataclasses.fields(cls) if f.init and f.name.endswith("_plain")}
    first, second = cls(**arguments), cls(**arguments)
    hashed: object = None
    if cls.__hash__ is not None:  # type: ignore[comparison-overlap]
        try:
            hashed = hash(first) == hash(second)
        except TypeError as exc:  # a list field in a hashed class
            hashed = str(exc)
    return repr(first), first == second, hashed, dataclasses.asdict(first)


@settings(max_examples=60, deadline=None)
@given(options=_OPTIONS, fields=_FIELDS)
def test_methods_made_from_kept_code_are_those_dataclasses_makes(
    tmp_path_factory: pytest.TempPathFactory, options: dict[str, Any], fields: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("cache")
    like = [*fields, "plain", "factory"]  # a like class, kept in the same file
    plain, plain_like = _make(options, fields), _make(options, like)
    with cached_dataclass_code(folder):
        learning = _make(options, fields)
    path = code_file(folder)
    assert path is not None and path.is_file()
    with cached_dataclass_code(folder):
        learning_like = _make(options, like)
    with cached_dataclass_code(folder):
        kept, kept_like = _make(options, fields), _make(options, like)
    assert _methods(learning) == _methods(plain)
    assert _methods(learning_like) == _methods(plain_like)
    assert _methods(kept) == _methods(plain)
    assert _methods(kept_like) == _methods(plain_like)
    assert _behaviour(kept) == _behaviour(plain)
    assert _behaviour(kept_like) == _behaviour(plain_like)


def test_a_kept_code_file_with_a_changed_byte_is_not_used(tmp_path: Path) -> None:
    options = {"frozen": True, "order": True, "slots": False, "kw_only": False, "eq": True,
               "unsafe_hash": False}  # fmt: skip
    with cached_dataclass_code(tmp_path):
        _make(options, ["plain", "default"])
    path = code_file(tmp_path)
    assert path is not None
    data = path.read_bytes()
    path.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    compiled: list[str] = []
    original = compile

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(source)
        return original(source, *args, **kwargs)

    import builtins

    builtins.compile = counting
    try:
        with cached_dataclass_code(tmp_path):
            kept = _make(options, ["plain", "default"])
    finally:
        builtins.compile = original
    assert compiled, "a changed file is ignored: every method is compiled anew"
    assert _methods(kept) == _methods(_make(options, ["plain", "default"]))


def test_dataclasses_is_left_as_it_was(tmp_path: Path) -> None:
    before = dataclasses._create_fn  # type: ignore[attr-defined]
    with cached_dataclass_code(tmp_path):
        assert dataclasses._create_fn is not before  # type: ignore[attr-defined]
    assert dataclasses._create_fn is before  # type: ignore[attr-defined]
    assert sys.modules["dataclasses"] is dataclasses
