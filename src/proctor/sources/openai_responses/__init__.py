"""OpenAI Responses API input/output item lists."""

from proctor.sources.openai_responses._adapter import OpenAIResponsesAdapter

__all__ = ["OpenAIResponsesAdapter"]
