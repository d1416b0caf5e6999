"""What can go wrong with a knowledge base, as Proctor errors with a sentence each."""

from __future__ import annotations

from proctor.errors import ConfigError, ProctorError


class EntryNameError(ConfigError):
    """An entry name that could reach outside its knowledge-base folder, or is not a name."""


class ReadOnlyBaseError(ConfigError):
    """A write to an external knowledge base, which Proctor only reads."""


class StaleEntryError(ProctorError):
    """The entry (or the text) changed since the preview: preview again, then confirm."""
