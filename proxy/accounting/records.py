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
    request_id: str
    ts: float  # unix seconds when the request arrived
    tenant: str  # keyed hash of the API key (hex); "anonymous" when there was none
    provider: str  # the protocol: "openai" | "anthropic" | "gemini"
    route: str  # path, e.g. "/v1/chat/completions"
    method: str = "POST"
    model: str | None = None
    stream: bool = False
    status: int = 0  # upstream status, or the proxy's own (413, 502, 504, 499 client gone)
    latency_s: float = 0.0  # arrival → last byte relayed
    ttfb_s: float | None = None  # arrival → first byte relayed
    analysed: bool = False  # body parsed and segmented
    usage: Usage | None = None  # None when the upstream reported none
    prefix_segments: int | None = (
        0  # leading segments seen before for this tenant; None: unknown (store skipped or failed)
    )
    prefix_bytes: int | None = 0  # None exactly when prefix_segments is None
    total_segments: int = 0
    total_bytes: int = 0
    chain: list[str] | None = None  # first 8 bytes (hex) of each prefix-chain hash; None when unanalysed
    error: str | None = None  # the proxy's own error kind ("upstream_timeout", …)
    # Filled by the money layer (proxy.accounting.money) when prices are known:
    cost_usd: float | None = None
    saved_usd: float | None = None
    missed_usd: float | None = None
    miss_reason: str | None = None
    rewrites: list[str] = field(default_factory=list)  # kebab-case ids of the rewrites applied, in order
    body: bytes | None = None  # only with --log-bodies
    cost_breakdown: Breakdown | None = (
        None  # cost_usd by token kind, set with it by the money layer; the ledger stores it
    )
    store: str = STORE_NONE  # the prefix look-up's outcome: one of STORE_STATES
    cache_storage_usd: float | None = (
        None  # explicit-cache storage bought by this record's cachedContents call (proxy.gemini_cache); None: none
    )
    upstream: str | None = (
        None  # the upstream's name, its path prefix ("openai", "deepseek"; proxy.config.UpstreamSpec); None: the path named none
    )
    # Rules drift (analyzer.usage "Drift", and the money layer's check of the usage against the price row):
    # what the model's rules did not expect, "<field>:<why>"; non-empty → cost null and counted as rules_drift.
    drift: list[str] = field(default_factory=list)
    response_id: str | None = (
        None  # the provider's id for the answer (Anthropic "msg_…", OpenAI "chatcmpl-…"/"resp_…")
    )
    # The provider's own miss reason (Anthropic diagnostics.cache_miss_reason), when it answered one:
    provider_miss_reason: str | None = None  # its type: "system_changed", "tools_changed", …
    provider_missed_tokens: int | None = None  # its cache_missed_input_tokens (None: the type carries none)
    provider_missed_usd: float | None = (
        None  # those tokens priced at input − cached read; None: unpriced, none, or rules drift
    )
    # What the money layer could not price exactly although nothing was drift (proxy.accounting.money
    # "TTL split"), "<field>:<why>"; non-empty → cost null; the ledger's flags column stores them beside the usage's.
    flags: list[str] = field(default_factory=list)
