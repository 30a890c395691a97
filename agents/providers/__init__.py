"""The LLM seam: a small provider protocol. Only ``anthropic*.py`` here imports ``anthropic``."""

from agents.providers.base import (
    LLMRequest,
    LLMResponse,
    Provider,
    SystemBlock,
    TokenUsage,
    ToolCall,
)

__all__ = ["LLMRequest", "LLMResponse", "Provider", "SystemBlock", "TokenUsage", "ToolCall"]
