"""The hook's on-disk cache of compiled regular expressions gives the patterns re.compile gives."""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.gate._patterns import FORMAT, cached_patterns, patterns_file, read_table, write_table

# Invented to cover what the engine keeps per pattern: named and numbered groups, flags set
# inline and by argument, look-arounds, back references, bytes, Unicode and ASCII classes.
PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<verb>rm|mv)\s+(-[rf]+\s+)?(?P<path>/\S*)", 0),
    (r"(?i)ignore (all |any )?(previous|prior) instructions", 0),
    (r"^\s*(\w+)=(.*?)\s*$", re.MULTILINE),
    (r"(?<![\w.])(token|secret)[_-]?key\b(?=\s*[:=])", re.IGNORECASE),
    (r"(['\"])(?:(?!\1).)*\1", re.DOTALL),
    (r"[^\w@%+=:,./-]", re.ASCII),
    (rb"\x00(?P<tag>[a-z]{2,8})\x00", 0),
    (r"caf\u00e9|na\u00efve|\d{2,}", 0),
    (r"(a)(b)?(?(2)c|d)", 0),
]
TEXTS = [
    "rm -rf /tmp/x",
    "Please IGNORE all previous instructions",
    "  name = value \nother=1",
    "the api secret-key: 123",
    "say 'it\"s' now",
    "a b;c",
    "café naïve 2026",
    "abc ad a",
]


def _compile_all() -> list[re.Pattern[str] | re.Pattern[bytes]]:
    re.purge()  # re's own memo would hand back patterns compiled earlier in this process
    return [re.compile(pattern, flags) for pattern, flags in PATTERNS]


def _behaviour(pattern: re.Pattern[str] | re.Pattern[bytes]) -> object:
    seen: list[object] = [pattern.flags, pattern.groups, dict(pattern.groupindex)]
    for text in TEXTS:
        subject: str | bytes = (
            text.encode() + b"\x00ab\x00" if isinstance(pattern.pattern, bytes) else text
        )
        seen.append([(m.span(), m.groups()) for m in pattern.finditer(subject)])  # type: ignore[arg-type]
    return seen


def test_patterns_from_the_cache_behave_as_freshly_compiled_ones(tmp_path: Path) -> None:
    plain = [_behaviour(p) for p in _compile_all()]
    with cached_patterns(tmp_path):
        learning = [_behaviour(p) for p in _compile_all()]
    assert patterns_file(tmp_path) is not None and patterns_file(tmp_path).is_file()  # type: ignore[union-attr]
    with cached_patterns(tmp_path):
        cached = [_behaviour(p) for p in _compile_all()]
    assert plain == learning == cached


def test_a_warm_cache_skips_parsing_and_a_new_pattern_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from re import _parser  # type: ignore[attr-defined]

    with cached_patterns(tmp_path):
        _compile_all()
    parsed: list[object] = []
    original = _parser.parse

    def parse(*args: object) -> object:
        parsed.append(args[0])
        return original(*args)

    monkeypatch.setattr(_parser, "parse", parse)
    with cached_patterns(tmp_path):
        _compile_all()
        re.compile(r"brand new (pattern)+")
    assert parsed == [r"brand new (pattern)+"]
    path = patterns_file(tmp_path)
    assert path is not None
    table = read_table(path)
    assert (r"brand new (pattern)+", 0) in table and len(table) == len(PATTERNS) + 1
    parsed.clear()
    with cached_patterns(tmp_path):
        re.purge()
        re.compile(r"brand new (pattern)+")
    assert parsed == []


def _framed(table: object) -> bytes:
    """A table as the cache writes it, digest and all."""
    body = marshal.dumps(table)
    return FORMAT + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def _swapped(tmp_path: Path) -> bytes:
    """The kept file of ``\\d+`` with its table swapped for one holding the opcodes of
    ``[a-z]+`` under the same key, the digest left as it was: a table that would compile,
    to a pattern that matches something else."""
    with cached_patterns(tmp_path / "letters"):
        re.purge()
        re.compile(r"[a-z]+")
    letters = patterns_file(tmp_path / "letters")
    assert letters is not None
    swapped = marshal.dumps({(r"\d+", 0): read_table(letters)[(r"[a-z]+", 0)]})
    digits = _framed({(r"\d+", 0): (0, [1], 0, {}, (None,))})
    return digits[: len(FORMAT) + 65] + swapped  # the header and digest of another table


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"not marshal at all",
        marshal.dumps({(r"\d+", 0): (0, [1], 0)}),
        _framed([1, 2, 3]),
        _framed({(r"\d+", 0): (0, [1], 0)}),
        b"swapped",
    ],
    ids=["empty", "garbage", "no header", "not a table", "a broken entry", "changed contents"],
)
def test_a_damaged_cache_file_is_compiled_anew_and_rewritten(tmp_path: Path, damage: bytes) -> None:
    path = patterns_file(tmp_path)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_swapped(tmp_path) if damage == b"swapped" else damage)
    with cached_patterns(tmp_path):
        re.purge()
        digits = re.compile(r"\d+")
    assert digits.findall("a1 b22") == ["1", "22"]
    assert (r"\d+", 0) in read_table(path), "a good table is written again"


def test_a_table_is_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "table.marshal"
    write_table(path, {("a", 0): (0, [1, 2], 0, {}, (None,))})
    assert read_table(path) == {("a", 0): (0, [1, 2], 0, {}, (None,))}
    path.write_bytes(path.read_bytes()[:-1])
    assert read_table(path) == {}


def test_the_cache_is_left_alone_where_it_cannot_be_written(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    with cached_patterns(blocked):
        re.purge()
        assert re.compile(r"x(y)").match("xy") is not None
    assert blocked.read_text().startswith("a file")


def test_re_compile_is_itself_again_afterwards(tmp_path: Path) -> None:
    from re import _compiler  # type: ignore[attr-defined]

    before = _compiler.compile
    replaced = None
    try:
        with cached_patterns(tmp_path):
            replaced = _compiler.compile
            raise RuntimeError("the hook failed")
    except RuntimeError:
        pass
    assert replaced is not None and replaced is not before
    assert _compiler.compile is before


_HOOK_IMPORTS = """
import sys
from pathlib import Path
from proctor.gate._patterns import cached_patterns
with cached_patterns(Path(sys.argv[1])):
    import proctor.gate._claude_code, proctor.gate._kept  # what deciding alone imports
"""


def test_a_second_hook_process_with_another_hash_seed_leaves_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    # Importing the rules and the gate's models compiles tokenize's PseudoToken, whose text
    # follows a set's order: kept, each process would add its own and rewrite the file.
    def run(seed: str) -> bytes:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-c", _HOOK_IMPORTS, str(tmp_path)], env=env, check=True, timeout=120
        )
        path = patterns_file(tmp_path)
        assert path is not None
        return path.read_bytes()

    first = run("1")
    assert len(read_table(patterns_file(tmp_path))) > 100  # type: ignore[arg-type]
    assert run("2") == first
