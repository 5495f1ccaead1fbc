"""An upstream emulator for tests, benchmarks and ``make run``: OpenAI (and Azure's URL shape),
Anthropic and Gemini on one app.

``create_app(EmulatorConfig(...))`` answers the providers' routes (plain and SSE, any model)
with deterministic replies and reports cached tokens by each provider's caching rules, tokens
estimated from bytes (one module per rule set: ``openai_cache``, ``openai_breakpoint_cache``,
``anthropic_cache``, ``gemini_implicit_cache``, ``gemini_cached_contents``, …).
It never calls a real provider and never stores API keys (only digests). It imports only
:mod:`analyzer` and its own modules, never the rest of :mod:`proxy` (``tests/test_layout.py``).
See docs/emulator.md.
"""

from __future__ import annotations

from proxy.emulator.app import create_app
from proxy.emulator.config import EmulatorConfig

__all__ = ["EmulatorConfig", "create_app"]
