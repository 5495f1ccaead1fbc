"""The prefixgate proxy: a drop-in base URL for the OpenAI and Anthropic APIs.

Starlette + uvicorn + one shared httpx client. Sees every request, tracks its repeated
prefix, forwards it byte-for-byte, and reports usage, hits and money. Imports
``analyzer`` (pure functions); never imports ``kvcache`` (it talks to it over HTTP).
"""
