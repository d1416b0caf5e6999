"""No module imports another package's private module (AGENTS.md, Layers).

``proctor.X._y`` is X's own business: the other packages import what X's ``__init__``
exports. The imports that still reach in are recorded as debt in pyproject.toml (the
``private_modules`` contract's ``ignore_imports``, which ``make lint`` checks too); this test
reads every module under ``src/proctor`` itself and allows nothing beyond that list, and
the list names nothing that is gone, so it can only shrink.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _private_target(imported: str) -> str | None:
    """The private module ``imported`` names, cut after its first private part; else None."""
    parts = imported.split(".")
    for index, part in enumerate(parts[2:], start=2):
        if _is_private(part):
            return ".".join(parts[: index + 1])
    return None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks nested in it, expressions skipped: an
    import is a statement, found only in blocks (``ast.walk`` visited every expression node
    too: the whole search took 0.9 CPU s that way, 0.6 so)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, block, []))
        for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield from _statements(clause.body)


def _imported_modules(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    names: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            # `from proctor.x import _y` imports the private module x._y itself.
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


@cache  # two tests ask; the whole tree is parsed once
def cross_package_private_imports() -> set[tuple[str, str]]:
    """Every (importer, private module) pair whose importer lives outside that package.

    "Its package" is the private module's parent (``proctor.rules.builtin`` for
    ``proctor.rules.builtin._shell_words``), as import-linter's ``private_modules`` contract
    counts it.
    """
    found: set[tuple[str, str]] = set()
    for path in sorted((SOURCE / "proctor").rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for imported in _imported_modules(tree, module, path.name == "__init__.py"):
            if not imported.startswith("proctor."):
                continue
            target = _private_target(imported)
            if target is None:
                continue
            owner = target.rsplit(".", 1)[0]
            if module == owner or module.startswith(owner + "."):
                continue
            found.add((module, target))
    return found


def recorded_debt() -> set[tuple[str, str]]:
    """The private imports pyproject.toml still tolerates, as (importer, imported)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (private,) = [c for c in contracts if c["type"] == "private_modules"]
    pairs = (line.split("->") for line in private.get("ignore_imports", []))
    return {(importer.strip(), imported.strip()) for importer, imported in pairs}


@pytest.mark.slow
def test_no_module_imports_another_packages_private_module_beyond_the_recorded_debt() -> None:
    unexpected = sorted(cross_package_private_imports() - recorded_debt())
    assert unexpected == [], (
        "import these names from the owning package's __init__ (export them there):\n"
        + "\n".join(f"{importer} -> {imported}" for importer, imported in unexpected)
    )


def test_the_recorded_debt_names_only_private_imports_that_still_exist() -> None:
    stale = sorted(recorded_debt() - cross_package_private_imports())
    assert stale == [], "delete these lines from pyproject.toml's ignore_imports:\n" + "\n".join(
        f"{importer} -> {imported}" for importer, imported in stale
    )


def test_the_private_import_finder_sees_each_form_of_import() -> None:
    source = (
        "import proctor.store._schema\n"
        "from proctor.rules.builtin._shell_words import split\n"
        "from proctor.search import _query\n"
        "from proctor.store import open_store\n"
        "from . import _own\n"
        # imports nested in blocks: functions, classes, branches, handlers, match cases
        "def lazy():\n"
        "    if TYPE_CHECKING:\n        pass\n    else:\n        import proctor.a._in_else\n"
        "    with lock:\n        import proctor.b._in_with\n"
        "class Later:\n    from proctor.c import _in_class\n"
        "try:\n    pass\nexcept ImportError:\n    import proctor.d._in_handler\n"
        "finally:\n    import proctor.e._in_finally\n"
        "for _ in ():\n    pass\nelse:\n    import proctor.f._in_loop_else\n"
        "match x:\n    case 1:\n        import proctor.g._in_case\n"
    )
    tree = ast.parse(source)
    names = _imported_modules(tree, "proctor.search._index", is_package=False)
    targets = {t for t in map(_private_target, names) if t is not None}
    assert targets == {
        "proctor.store._schema",
        "proctor.rules.builtin._shell_words",
        "proctor.search._query",
        "proctor.search._own",
        "proctor.a._in_else",
        "proctor.b._in_with",
        "proctor.c._in_class",
        "proctor.d._in_handler",
        "proctor.e._in_finally",
        "proctor.f._in_loop_else",
        "proctor.g._in_case",
    }
