"""OpenAI Chat Completions message lists, requests and responses."""

from proctor.sources.openai_chat._adapter import OpenAIChatAdapter

__all__ = ["OpenAIChatAdapter"]
