"""No two packages of Proctor import each other, directly or around a loop (AGENTS.md, Layers).

The one exception is an entry point: ``python -m proctor.gate`` runs ``proctor gate`` when it
is given options, so ``proctor.gate.__main__`` imports the CLI (pyproject.toml's layers
contract ignores the same import).
"""

from __future__ import annotations

import grimp

ENTRY_POINTS = {("proctor.gate.__main__", "proctor.cli.gate")}


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def package_imports() -> dict[str, set[str]]:
    """Each top-level package of Proctor and the other packages its modules import."""
    graph = grimp.build_graph("proctor")
    edges: dict[str, set[str]] = {}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if (importer, imported) in ENTRY_POINTS:
                continue
            source, target = _package(importer), _package(imported)
            if source != target and "." in source and "." in target:
                edges.setdefault(source, set()).add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of packages, each found from its smallest member once."""
    found: list[list[str]] = []

    def walk(start: str, path: list[str]) -> None:
        for following in sorted(edges.get(path[-1], ())):
            if following == start:
                found.append(path)
            elif following > start and following not in path:
                walk(start, [*path, following])

    for start in sorted(edges):
        walk(start, [start])
    return found


def test_no_package_imports_a_package_that_imports_it_back() -> None:
    loops = cycles(package_imports())
    assert loops == [], "\n".join(" → ".join([*loop, loop[0]]) for loop in loops)


def test_the_cycle_finder_reports_a_loop_through_three_packages_once() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
