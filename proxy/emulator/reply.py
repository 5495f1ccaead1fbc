"""Deterministic reply text: what the emulated model "says", and how long it is.

The reply is a function of the request only: it echoes words of the last user message
and fills to the requested length, so the same request always gets the same answer (tests
compare proxied and direct results). Length in tokens comes from ``max_tokens`` /
``max_completion_tokens`` / ``max_output_tokens`` (capped by the config), the text is
exactly four bytes per token so ``analyzer.tokens`` counts it back to the same number.

This module does not know wire formats; it returns text and its pieces for streaming.
"""

from __future__ import annotations

from typing import Any

from analyzer.tokens import BYTES_PER_TOKEN
from proxy.emulator.config import EmulatorConfig

LIMIT_FIELDS = ("max_completion_tokens", "max_output_tokens", "max_tokens")
FILLER = "ok"


def output_tokens(body: dict[str, Any], config: EmulatorConfig) -> int:
    for name in LIMIT_FIELDS:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, config.max_output_tokens)
    return config.default_output_tokens


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        return " ".join(parts)
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the last user turn in messages / input / prompt; "" when there is none."""
    for field in ("messages", "input"):
        items = body.get(field)
        if isinstance(items, str):
            return items
        if isinstance(items, list):
            for item in reversed(items):
                if isinstance(item, dict) and item.get("role", "user") == "user":
                    return _text_of(item.get("content"))
    prompt = body.get("prompt")
    if isinstance(prompt, list) and prompt:
        prompt = prompt[-1]
    return prompt if isinstance(prompt, str) else ""


def reply_text(body: dict[str, Any], n_tokens: int) -> str:
    """ASCII text of exactly ``n_tokens * 4`` bytes built from the last user message's words."""
    words = [
        w for w in "".join(c if c.isascii() and c.isalnum() else " " for c in last_user_text(body)).split()
    ]
    words = [w[:12].lower() for w in words][:32] or [FILLER]
    size = n_tokens * BYTES_PER_TOKEN
    out: list[str] = []
    length, i = 0, 0
    while length < size:
        word = words[i % len(words)]
        out.append(word)
        length += len(word) + 1
        i += 1
    return " ".join(out)[:size].ljust(size, ".")


def split_pieces(text: str, n_pieces: int) -> list[str]:
    """``text`` cut into ``n_pieces`` (at most one per character) non-empty pieces."""
    n = max(1, min(n_pieces, len(text)))
    step, extra = divmod(len(text), n)
    pieces, start = [], 0
    for i in range(n):
        end = start + step + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces
