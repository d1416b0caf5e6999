"""A store builds each repository (``store.repos.<part>``) the first time it is read, once.

Opening a store imports no repository module (``tests/api/test_lazy_start.py`` and
``tests/review/test_no_change_imports.py`` check that in a fresh interpreter); here: the
parts a store builds are the ones asked for, the same object every time and from every
thread, and a facade method still reads like the repository method it forwards to.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from pathlib import Path

from proctor.store import GraphReads, ImportRepository, Repositories, SqlStore, open_store


def test_a_part_is_built_when_first_read_and_kept(tmp_path: Path) -> None:
    store = open_store(tmp_path / "proctor.db")
    try:
        assert [name for name in vars(store.repos) if not name.startswith("_")] == []
        assert store.get_setting("app.enabled") is None
        assert [name for name in vars(store.repos) if not name.startswith("_")] == ["models"]
        assert store.repos.graph is store.repos.graph
        assert isinstance(store.reader().repos.graph, GraphReads)
        fields = [field.name for field in dataclasses.fields(Repositories)]
        assert "imports" in fields and "graph" in fields
    finally:
        store.close()


def test_threads_asking_for_a_part_at_once_get_the_same_repository(tmp_path: Path) -> None:
    """An import's leases live on its ``ImportRepository``: two would lose one."""
    store = open_store(tmp_path / "proctor.db")
    seen: list[ImportRepository] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        seen.append(store.repos.imports)

    try:
        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(seen) == 8
        assert all(part is store.repos.imports for part in seen)
    finally:
        store.close()


def test_a_facade_method_carries_its_repository_methods_name_and_docstring() -> None:
    assert SqlStore.publish_result.__name__ == "publish_result"
    assert inspect.getdoc(SqlStore.graph) == inspect.getdoc(GraphReads.graph)
    assert SqlStore.graph.forwarded_to == "repos.graph"  # type: ignore[attr-defined]
