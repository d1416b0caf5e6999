"""Proctor's own JSON Lines event format (docs/proctor-jsonl.md).

Besides the file adapter, the pieces the HTTP intake reuses to read the same events
from a request body: line validation and assembly into bundles.
"""

from proctor.sources.jsonl._adapter import SUPPORTED_VERSION, ProctorJsonlAdapter
from proctor.sources.jsonl._assembly import Assembler, conversation_source_id, quote_id
from proctor.sources.jsonl._schema import HeaderLine, ToolCallLine, ToolResultLine
from proctor.sources.jsonl._validation import validate_line

__all__ = [
    "SUPPORTED_VERSION",
    "Assembler",
    "HeaderLine",
    "ProctorJsonlAdapter",
    "ToolCallLine",
    "ToolResultLine",
    "conversation_source_id",
    "quote_id",
    "validate_line",
]
