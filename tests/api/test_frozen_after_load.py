"""In a server (``proctor serve`` marks its process long-lived), what a deferred router's
first request imports is frozen once it is loaded, so later full collections do not walk
it again (each walked the whole heap: 25-55 ms of whichever request ran then); in any
other process (tests making many apps) nothing is frozen."""

from __future__ import annotations

import gc

import pytest

from proctor._util import collector


def test_a_deferred_router_freezes_what_it_loaded_only_in_a_long_lived_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from proctor.api._routers import DeferredRouter

    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *_: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(collector, "_long_lived", False)  # a process no server marked
    DeferredRouter("proctor.api.routers.knowledge", ("/api/knowledge",)).load()
    assert calls == []
    monkeypatch.setattr(collector, "_long_lived", True)
    deferred = DeferredRouter("proctor.api.routers.sources", ("/api/sources",))
    deferred.load()
    assert deferred.loaded
    assert calls == ["collect", "freeze"]  # collected first: no garbage is frozen
    deferred.load()
    assert calls == ["collect", "freeze"]  # once, when the module is first loaded
