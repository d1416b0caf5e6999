"""Anthropic Messages API message lists, requests and responses."""

from proctor.sources.anthropic._adapter import AnthropicMessagesAdapter

__all__ = ["AnthropicMessagesAdapter"]
