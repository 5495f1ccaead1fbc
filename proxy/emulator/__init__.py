"""An upstream emulator for tests, benchmarks and ``make run``: OpenAI (and Azure's URL shape),
Anthropic and Gemini on one app.

``create_app(EmulatorConfig(...))`` gives a Starlette app that answers the providers' routes
(plain and SSE streaming, any model name) with deterministic replies and reports cached
tokens by each provider's prompt-caching rules, with tokens estimated from bytes: OpenAI's
per model generation (automatic 128-token steps before GPT-5.6: ``openai_cache``; breakpoints
and billed writes from GPT-5.6: ``openai_breakpoint_cache``, ``openai_options``), ``/v1/responses/compact``
(``openai_compact``), Anthropic's breakpoints (``anthropic_cache``), compaction passes
(``anthropic_compaction``) and cache diagnostics (``anthropic_diagnostics``), Gemini's implicit
and explicit caches.
It never calls a real provider and never stores API keys (only digests). It imports only
:mod:`analyzer` (and its own modules), never the rest of :mod:`proxy`, so it can run
beside any proxy build; ``tests/test_layout.py`` keeps it that way.
"""

from __future__ import annotations

from proxy.emulator.app import create_app
from proxy.emulator.config import EmulatorConfig

__all__ = ["EmulatorConfig", "create_app"]
