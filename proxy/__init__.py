"""The prefixgate proxy: a drop-in base URL for the OpenAI, Anthropic and Gemini APIs, and
for any number of named upstreams speaking one of them.

Sees every request, tracks its repeated prefix, forwards it byte for byte through its own
upstream pool, and reports usage, hits and money. Starlette + uvicorn; no
``httpx.AsyncClient`` on the request path (httpx supplies the response type and the
transport interface only).

The request path, at the top of the package, reads top-down:

- :mod:`.app` — ``create_app(config)``: the routes and the lifespan; :mod:`.gate` — the one
  :class:`~proxy.gate.Gate` that holds what every request shares (router, tenants, store,
  recorder, money, the upstream pool ``gate.pool``, the Gemini auto-cache's hook).
- :mod:`.handler` — one proxied request (``/v1/*``, ``/v1beta/*``, ``/NAME/*``):
  :mod:`.routing` (the upstream, only configured bases, and the endpoint kind, resolved once)
  → :mod:`.tenant` → builds the :class:`~proxy.exchange.Exchange` (:mod:`.exchange`: data only,
  carried from arrival to the record) → body → :mod:`.body_analysis` → rewrite (with
  :mod:`.head_returns`) → the auto-cache's hook → early miss diagnosis (the money layer's one
  route, :meth:`proxy.accounting.money.Money.before`) → starts the store look-up
  (:mod:`.store.lookup`) → returns the :class:`~proxy.relay.Relay`, an ASGI callable.
- :mod:`.relay` — sends the exchange upstream and streams the answer back, with
  :mod:`.read_ahead` (the bytes read before the head: a cache refusal, the provider's miss
  reason), :mod:`.usage_tap` reading usage from a copy and :mod:`.headers` deciding which
  headers cross; :mod:`.errors` (the replies and :func:`~proxy.errors.record_failure`, the one
  place a failure goes on a record) and :mod:`.sse` are the shapes it writes and parses.
- :mod:`.access` (the admin token), :mod:`.config` (and :mod:`.config_file`, the named
  upstreams of ``serve --config``), :mod:`.private` (state-dir modes),
  :mod:`.cli` and :mod:`.demo` (console commands).

Subpackages, one concern each: :mod:`.transport` (the keep-alive HTTP/1.1 pool, llhttp
parsing, the reuse rule), :mod:`.store` (prefix store: memory, or Redis behind a deadline
and a breaker; its protocol declares every optional feature, :mod:`.store.base`),
:mod:`.accounting` (the write side: records, recorder, money, diagnosis memory, stats,
metrics, the SQLite ledger, the fleet's totals), :mod:`.reporting` (the read side: summary,
report, dashboard, KV page), :mod:`.gemini_cache` (``--gemini-auto-cache``, behind one hook),
:mod:`.server` (``prefixgate serve`` on uvicorn), :mod:`.emulator` (the providers' caching
rules over HTTP, for tests and benchmarks; imports only ``analyzer``) and :mod:`.bench`
(``prefixgate bench proxy``).

Imports ``analyzer`` (pure functions); never imports ``kvcache`` (it talks to it over HTTP).
"""
