"""Compiled regular expressions kept on disk for the hook that decides alone.

A ``proctor gate`` process with no server to forward to imports every rule, and the rules
compile a few hundred regular expressions at import: a quarter of the process's work, the
same work on every tool call. Python cannot pickle a compiled pattern, but a pattern is
compiled in two steps — parse and compile to a list of opcodes, then ``_sre.compile`` —
and only the first is costly. ``cached_patterns`` keeps the first step's result per
pattern and flags in ``$PROCTOR_HOME/cache/gate/patterns-<tag>.marshal``, where the tag
names the Python build (its version and the regular expression engine's magic number and
code size), and hands later processes the same opcodes, so every pattern is the one
``re.compile`` would make: same opcodes, flags and groups (``tests/gate/test_patterns.py``).

Nothing about the rules is cached, only what Python's own compiler makes of their text,
keyed by that text: an edited rule brings new patterns, which are compiled and added. One
pattern is never kept: ``tokenize``'s ``PseudoToken`` (compiled when ``inspect`` reads a
builtin's signature, as pydantic does for a ``default_factory``), whose text lists the string
prefixes in the order of a set, so it changes with each process's hash seed: kept, every hook
process would learn it anew and rewrite the whole file, one entry larger each time (about
10 KB), until ``MAX_PATTERNS``. A file that cannot be read, or whose digest does not match its contents, is ignored, one that cannot be written is left alone, and a
Python whose ``re`` internals differ from what this module knows compiles as usual.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

FORMAT = b"proctor-patterns 1\n"
"""The file's first line; then the SHA-256 of the rest, then the marshalled table."""
MAX_PATTERNS = 4096
"""More than this in one file (policies' own patterns included) and it starts afresh."""

_Compiled = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
"""What ``_sre.compile`` takes after the pattern: flags, opcodes, groups, the two maps."""


def patterns_file(folder: Path) -> Path | None:
    """The cache file for this Python build under ``folder``; None where it cannot be used."""
    engine = _engine()
    if engine is None:
        return None
    sre = engine[2]
    implementation = sys.implementation.cache_tag or "python"
    return (
        folder / f"patterns-{implementation}-{sys.hexversion:x}-{sre.MAGIC}-{sre.CODESIZE}.marshal"
    )


@contextmanager
def cached_patterns(folder: Path) -> Iterator[None]:
    """Compile regular expressions from (and into) the cache file under ``folder``."""
    engine = _engine()
    path = patterns_file(folder)
    if engine is None or path is None:
        yield
        return
    compiler, parser, sre = engine
    known = read_table(path)
    learned: dict[tuple[str | bytes, int], _Compiled] = {}
    original = compiler.compile

    def compile(p: Any, flags: int = 0) -> Any:
        if type(p) not in (str, bytes) or not isinstance(flags, int) or flags & re.DEBUG:
            return original(p, flags)
        flags = int(flags)  # a RegexFlag is not marshalled
        key = (p, flags)
        compiled = known.get(key)
        if compiled is not None:
            try:
                return sre.compile(p, *compiled)
            except (TypeError, ValueError, RuntimeError):  # a damaged entry: compile anew
                pass
        elif _unsteady(p):
            return original(p, flags)
        parsed = parser.parse(p, flags)
        code = compiler._code(parsed, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        compiled = learned[key] = (
            flags | parsed.state.flags,
            [int(op) for op in code],
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        return sre.compile(p, *compiled)

    compiler.compile = compile
    try:
        yield
    finally:
        compiler.compile = original
        if learned:
            write_table(path, ({} if len(known) + len(learned) > MAX_PATTERNS else known) | learned)


def _unsteady(pattern: str | bytes) -> bool:
    """Whether the pattern's text is one that differs from one process to the next."""
    tokenize = sys.modules.get("tokenize")
    return tokenize is not None and pattern == getattr(tokenize, "PseudoToken", None)


def _engine() -> tuple[Any, Any, Any] | None:
    # The internals compile() uses, as in CPython 3.11 to 3.13 (re._compiler, re._parser).
    try:
        import _sre  # type: ignore[import-not-found]
        from re import _compiler, _parser  # type: ignore[attr-defined]
    except ImportError:
        return None
    if not all(hasattr(_compiler, name) for name in ("compile", "_code")):
        return None
    if not hasattr(_parser, "parse") or not hasattr(_sre, "MAGIC"):
        return None
    return _compiler, _parser, _sre


def read_table(path: Path) -> dict[Any, Any]:
    """The kept table; empty when the file is missing, cut short or changed."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    head = len(FORMAT) + 65
    if not data.startswith(FORMAT) or len(data) < head:
        return {}
    body = data[head:]
    if data[len(FORMAT) : head - 1] != hashlib.sha256(body).hexdigest().encode():
        return {}  # a changed byte could be a changed pattern: compile everything anew
    try:
        table = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return {}
    return table if isinstance(table, dict) else {}


def write_table(path: Path, table: dict[Any, Any]) -> None:
    """Write ``table`` as a kept file (header, digest, marshalled table) in one rename."""
    fresh = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = marshal.dumps(table)
        fresh.write_bytes(FORMAT + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(fresh, path)
    except (OSError, ValueError):  # ValueError: nothing marshal cannot write is expected
        with suppress(OSError):
            fresh.unlink(missing_ok=True)
