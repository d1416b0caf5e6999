"""The compiled code of dataclass methods kept on disk for the hook that decides alone.

Importing the rules, the transcript types and their dependencies creates over a hundred
dataclasses, and ``dataclasses`` writes the source of each one's ``__init__``,
``__repr__``, ``__eq__``, … as text and compiles it: about a sixth of what the hook pays
to import the rules, the same work on every tool call. ``cached_dataclass_code`` keeps
the code object Python's compiler makes of each such text in
``$PROCTOR_HOME/cache/gate/dataclass-code-<tag>.marshal`` (the tag names the Python build:
code objects are only read back by the build that wrote them) and hands later processes
the same code object for the same text, executed exactly as ``dataclasses`` executes its
own (same globals, same locals, same file name): the same methods
(``tests/gate/test_dataclass_code.py``).

Only what Python's compiler makes of a text is kept, keyed by that whole text: an edited
dataclass brings a new text, which is compiled and added. A file that cannot be read is
ignored (so is one whose digest does not match its contents: the file is written as
``_patterns`` writes its own), one that cannot be written is left alone, and a Python whose ``dataclasses``
differs from the one this module knows (CPython 3.11 and 3.12) compiles as usual.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from proctor.gate._patterns import read_table, write_table

MAX_ENTRIES = 8192
"""More than this in one file and it starts afresh."""
_KNOWN_SHAPE = ("name", "args", "body", "globals", "locals", "return_type")
"""``dataclasses._create_fn``'s parameters in the versions whose body this module repeats."""


def code_file(folder: Path) -> Path | None:
    """The cache file for this Python build under ``folder``; None where it is not used."""
    if _original() is None:
        return None
    tag = sys.implementation.cache_tag or "python"
    return folder / f"dataclass-code-{tag}-{sys.hexversion:x}.marshal"


@contextmanager
def cached_dataclass_code(folder: Path) -> Iterator[None]:
    """Create dataclass methods from (and into) the cache file under ``folder``."""
    original = _original()
    path = code_file(folder)
    if original is None or path is None:
        yield
        return
    known = _read(path)
    learned: dict[str, types.CodeType] = {}
    missing: Any = dataclasses.MISSING

    def create_fn(
        name: str,
        args: list[str],
        body: list[str],
        *,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        return_type: Any = missing,
    ) -> Any:
        # As dataclasses._create_fn of CPython 3.11 and 3.12, the text compiled at most once.
        if locals is None:
            locals = {}
        return_annotation = ""
        if return_type is not missing:
            locals["_return_type"] = return_type
            return_annotation = "->_return_type"
        joined = ",".join(args)
        lines = "\n".join(f"  {b}" for b in body)
        text = f" def {name}({joined}){return_annotation}:\n{lines}"
        local_vars = ", ".join(locals.keys())
        text = f"def __create_fn__({local_vars}):\n{text}\n return {name}"
        code = known.get(text)
        if code is None:
            code = learned[text] = compile(text, "<string>", "exec")
        namespace: dict[str, Any] = {}
        exec(code, globals, namespace)
        return namespace["__create_fn__"](**locals)

    dataclasses._create_fn = create_fn  # type: ignore[attr-defined]
    try:
        yield
    finally:
        dataclasses._create_fn = original  # type: ignore[attr-defined]
        if learned:
            write_table(path, ({} if len(known) + len(learned) > MAX_ENTRIES else known) | learned)


def _original() -> Any:
    """``dataclasses._create_fn`` when it is the one this module repeats; else None."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] not in ((3, 11), (3, 12)):
        return None
    original = getattr(dataclasses, "_create_fn", None)
    code = getattr(original, "__code__", None)
    if code is None or code.co_varnames[: len(_KNOWN_SHAPE)] != _KNOWN_SHAPE:
        return None
    return original


def _read(path: Path) -> dict[str, types.CodeType]:
    """The kept code objects; nothing when the file is missing, cut short or changed."""
    return {
        text: code
        for text, code in read_table(path).items()
        if isinstance(text, str) and isinstance(code, types.CodeType)
    }
