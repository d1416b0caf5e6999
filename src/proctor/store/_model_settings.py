"""Settings, saved model connections and the usage of every model call (SPEC MOD-1…4)."""

from __future__ import annotations

from proctor.store._base import StoreBase


class ModelSettingsStore(StoreBase):
    """Settings, saved model connections and the usage of every model call; every write one transaction."""
