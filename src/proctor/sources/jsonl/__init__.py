"""Proctor's own JSON Lines event format (docs/proctor-jsonl.md)."""

from proctor.sources.jsonl._adapter import ProctorJsonlAdapter

__all__ = ["ProctorJsonlAdapter"]
