"""The prefixgate proxy: a drop-in base URL for the OpenAI, Anthropic and Gemini APIs, and
for any number of named upstreams speaking one of them.

Sees every request, tracks its repeated prefix, forwards it byte for byte through its own
upstream pool, and reports usage, hits and money (Starlette + uvicorn; no
``httpx.AsyncClient`` on the request path). The request path reads top-down: :mod:`.app` →
:mod:`.gate` → :mod:`.handler` → :mod:`.relay`; subpackages hold one concern each.
Imports ``analyzer`` (pure functions); never imports ``kvcache`` (it talks to it over HTTP).
See docs/architecture.md (``proxy/``) and docs/request-path.md.
"""
