"""The local knowledge base (UI-5): a folder of Markdown notes Proctor may add to.

Proctor writes a note only after a preview and a confirmation (``preview_entity_note`` →
``confirm_write`` with the preview's digest), never rewrites what a person wrote (it
appends dated sections), and never writes to an external base. No name can lead outside
a base's folder (see ``_names``). Imports ``graph`` and the store's read side; only the
CLI and the API import this package.
"""

from proctor.knowledge._bases import (
    DIR_ENV,
    DIR_SETTING,
    EXTERNAL_ENV,
    EXTERNAL_SETTING,
    LOCAL_BASE,
    KnowledgeBase,
    SettingsReader,
    check_base_name,
    find_base,
    knowledge_bases,
    local_root,
)
from proctor.knowledge._entries import Entry, EntrySummary, list_entries, read_entry
from proctor.knowledge._errors import EntryNameError, ReadOnlyBaseError, StaleEntryError
from proctor.knowledge._names import check_entry_name, slug_entry_name
from proctor.knowledge._note import EntityReader
from proctor.knowledge._write import (
    KnowledgePreview,
    WriteMode,
    WrittenEntry,
    confirm_write,
    preview_entity_note,
    write_digest,
)

__all__ = [
    "DIR_ENV",
    "DIR_SETTING",
    "EXTERNAL_ENV",
    "EXTERNAL_SETTING",
    "LOCAL_BASE",
    "EntityReader",
    "Entry",
    "EntryNameError",
    "EntrySummary",
    "KnowledgeBase",
    "KnowledgePreview",
    "ReadOnlyBaseError",
    "SettingsReader",
    "StaleEntryError",
    "WriteMode",
    "WrittenEntry",
    "check_base_name",
    "check_entry_name",
    "confirm_write",
    "find_base",
    "knowledge_bases",
    "list_entries",
    "local_root",
    "preview_entity_note",
    "read_entry",
    "slug_entry_name",
    "write_digest",
]
