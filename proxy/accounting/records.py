"""One finished request, as every sink (stats, ledger, metrics) sees it.

The handler creates a :class:`RequestRecord` with each exchange, the relay fills status,
timing and usage, and :class:`proxy.accounting.recorder.Recorder` adds money and hands it
to the sinks. ``prefix_segments`` is ``None`` when the store was skipped or failed;
``store`` says which (:data:`STORE_STATES`).

It never holds an API key or auth header; prompt content only with ``--log-bodies``.
See docs/money.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.cost import Breakdown
from analyzer.usage import Usage

STORE_OK, STORE_UNAVAILABLE, STORE_SKIPPED, STORE_NONE = "ok", "unavailable", "skipped", "none"
STORE_CANCELLED = "cancelled"
STORE_STATES = (STORE_OK, STORE_UNAVAILABLE, STORE_SKIPPED, STORE_NONE, STORE_CANCELLED)


@dataclass(slots=True)
class RequestRecord:
    """A field documented by its ``#:`` line. Times are unix seconds (``ts``: arrival) and
    durations seconds from arrival; money is USD, ``None`` when it cannot be exact."""

    request_id: str
    ts: float
    #: keyed hash of the API key (hex); "anonymous" when there was none
    tenant: str
    #: the protocol: "openai" | "anthropic" | "gemini"
    provider: str
    #: the path, e.g. "/v1/chat/completions"
    route: str
    method: str = "POST"
    model: str | None = None
    stream: bool = False
    #: the upstream's status, or the proxy's own (413, 502, 504, 499 client gone)
    status: int = 0
    #: to the last byte relayed
    latency_s: float = 0.0
    #: to the first byte relayed
    ttfb_s: float | None = None
    #: the body was parsed and segmented
    analysed: bool = False
    #: None when the upstream reported none
    usage: Usage | None = None
    #: leading segments seen before for this tenant; None: unknown (store skipped or failed),
    #: and then ``prefix_bytes`` is None too
    prefix_segments: int | None = 0
    prefix_bytes: int | None = 0
    total_segments: int = 0
    total_bytes: int = 0
    #: the first 8 bytes (hex) of each prefix-chain hash; None when unanalysed
    chain: list[str] | None = None
    #: the proxy's own error kind ("upstream_timeout", …)
    error: str | None = None
    # Filled by the money layer (proxy.accounting.money) when prices are known:
    cost_usd: float | None = None
    saved_usd: float | None = None
    missed_usd: float | None = None
    miss_reason: str | None = None
    #: kebab-case ids of the rewrites applied, in order
    rewrites: list[str] = field(default_factory=list)
    #: only with --log-bodies
    body: bytes | None = None
    #: ``cost_usd`` by token kind, set with it by the money layer; the ledger stores it
    cost_breakdown: Breakdown | None = None
    #: the prefix look-up's outcome: one of STORE_STATES
    store: str = STORE_NONE
    #: explicit-cache storage bought by this record's cachedContents call (proxy.gemini_cache)
    cache_storage_usd: float | None = None
    #: the upstream's name, its path prefix ("openai", "deepseek"; proxy.config.UpstreamSpec);
    #: None: the path named none
    upstream: str | None = None
    #: rules drift (analyzer.usage "Drift", and the money layer's check of the usage against the
    #: price row), "<field>:<why>"; non-empty: cost null, counted as rules_drift
    drift: list[str] = field(default_factory=list)
    #: the provider's id for the answer (Anthropic "msg_…", OpenAI "chatcmpl-…"/"resp_…")
    response_id: str | None = None
    #: the provider's own miss reason (Anthropic diagnostics.cache_miss_reason) type:
    #: "system_changed", "tools_changed", …
    provider_miss_reason: str | None = None
    #: its cache_missed_input_tokens (None: the type carries none)
    provider_missed_tokens: int | None = None
    #: those tokens priced at input − cached read; None: unpriced, none, or rules drift
    provider_missed_usd: float | None = None
    #: what the money layer could not price exactly although nothing was drift
    #: (proxy.accounting.money "TTL split"), "<field>:<why>"; non-empty: cost null; the ledger's
    #: flags column stores them beside the usage's
    flags: list[str] = field(default_factory=list)
    #: the replica that served it (its base URL) when the upstream is a pool of several; None: one
    replica: str | None = None
    #: sends it took: 2 when the first replica's connection failed before any byte (not in the ledger)
    attempts: int = 1
