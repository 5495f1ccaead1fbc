"""Token estimates from byte counts.

prefixgate never runs a provider's tokenizer (they are not public for every model, and
nothing downloads at run time), so wherever a token count is needed before the provider
reports one, it is estimated from UTF-8 bytes. The same estimate drives the upstream
emulator, so tests and the proxy agree on what "1024 tokens" means.

This module does not tokenize, and does not claim the estimate is exact.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 4
"""English prose averages ~4 bytes per token on the GPT-4/Claude tokenizers."""


def estimate_tokens(n_bytes: int) -> int:
    """Tokens for ``n_bytes`` bytes of prompt (ceil(n / 4)); 0 for nothing."""
    if n_bytes <= 0:
        return 0
    return -(-n_bytes // BYTES_PER_TOKEN)


def estimate_text_tokens(text: str) -> int:
    return estimate_tokens(len(text.encode("utf-8")))
