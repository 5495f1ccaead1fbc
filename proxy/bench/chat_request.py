"""The request ``prefixgate bench proxy`` sends: one chat body of a given size, and its headers.

OpenAI Chat Completions (``gpt-4o``) or Anthropic Messages (``claude-sonnet-4-6``), a ~``size``
byte system prompt and a short question; ``volatile`` puts a clock and a ULID-like request id atop
the system prompt, as real agents do (what ``--rewrite aggressive`` works on).
It sends nothing and measures nothing.
"""

from __future__ import annotations

import orjson

PHRASE = "You are the support assistant for Example Corp. Follow the policy exactly. "
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(i: int) -> str:
    """A ULID-like id for request ``i`` (Crockford base32, letters well beyond hex)."""
    n = (i * 0x9E3779B97F4A7C15) % (32**26)
    return "".join(_CROCKFORD[(n >> (5 * k)) & 31] for k in range(26))


def request_body(provider: str, size: int, i: int, stream: bool, volatile: bool = False) -> tuple[str, bytes]:
    """(path, body) of request ``i``: a chat request of about ``size`` bytes."""
    clock = f"{8 + i // 3600 % 12:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
    head = f"Current date and time: 2026-12-01 {clock} UTC\nRequest id: {ulid(i)}\n" if volatile else ""
    system = head + (PHRASE * (size // len(PHRASE) + 1))[: max(0, size - len(head))]
    question = f"Question {i}: can I get a refund for order {1000 + i}?"
    if provider == "anthropic":
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 16,
            "stream": stream,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": question}],
        }
        return "/v1/messages", orjson.dumps(body)
    body = {
        "model": "gpt-4o",
        "max_tokens": 16,
        "stream": stream,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
    }
    return "/v1/chat/completions", orjson.dumps(body)


def headers_for(provider: str) -> dict[str, str]:
    """The provider's key headers (a made-up key: the emulator takes any)."""
    if provider == "anthropic":
        return {"x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01"}
    return {"authorization": "Bearer sk-bench"}
