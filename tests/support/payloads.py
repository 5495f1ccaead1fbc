"""The chat the end-to-end SDK tests send: a long system prompt (~1,800 tokens, over every
provider's caching minimum) and one user turn, in the OpenAI and the Anthropic shape."""

from __future__ import annotations

SYSTEM = "You are a careful assistant for the prefixgate test-suite. " * 120  # ~7 KB ≈ 1800 tokens
CHAT = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "name three colours"}]
ANTHROPIC_SYSTEM = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
