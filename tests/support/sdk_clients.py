"""The official openai and anthropic SDK clients pointed at a base URL (a proxy or an emulator),
with the end-to-end tests' API keys and no retries (a retried request would be two in the stats)."""

from __future__ import annotations

import anthropic
import openai

OPENAI_KEY = "sk-e2e-openai"
ANTHROPIC_KEY = "sk-ant-e2e"


def oai(base: str, **kw) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=OPENAI_KEY, max_retries=0, **kw)


def ant(base: str, **kw) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key=ANTHROPIC_KEY, max_retries=0, **kw)
