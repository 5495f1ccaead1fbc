"""Every counter of the accounting, defined once: the table stats, summary, metrics and report share.

A :class:`Counter` names its key, what a record adds (``add``), what a ledger row adds
(``sql``), a kind (``count``, ``tokens``, ``usd``), a help text and an optional
:class:`Metric`; adding a counter is one row here. :func:`finish` makes money exact or null;
rewrite ids are capped at :data:`MAX_REWRITE_IDS` (:class:`Cap`).

It keeps no request data and does no I/O. See docs/money.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from proxy.accounting.records import RequestRecord

Number = int | float
Kind = Literal["count", "tokens", "usd"]
#: the key of everything past a cap (:class:`Cap`)
OTHER = "other"
MAX_REWRITE_IDS = 64

# Label sets a Metric may use; each value comes from the record (model capped, status as "2xx").
LABELS = (("provider",), ("provider", "model"), ("provider", "model", "status"))


@dataclass(frozen=True, slots=True)
class Metric:
    """How Prometheus exports a counter: ``<name>_total`` (a ``gauge`` for a value that can go down:
    savings); ``help`` None: the counter's own; ``kind``: the label of a family counters share."""

    name: str
    labels: tuple[str, ...] = ("provider",)
    help: str | None = None
    kind: str | None = None
    gauge: bool = False

    def __post_init__(self) -> None:
        if self.labels not in LABELS:
            raise ValueError(f"metric {self.name}: labels must be one of {LABELS}, got {self.labels}")


@dataclass(frozen=True, slots=True)
class Counter:
    """One row of the table: ``add`` over ``r`` (the record) and ``u`` (its usage or None), ``sql``
    over a ledger row's columns, summed (NULL adds nothing); ``metric`` None: not exported to
    Prometheus; ``shown`` False: kept for the others' sake, never a JSON key."""

    name: str
    add: str
    sql: str
    kind: Kind
    help: str
    metric: Metric | None = None
    shown: bool = True
    _of: Callable[[RequestRecord], Number] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("count", "tokens", "usd"):
            raise ValueError(f"counter {self.name}: kind must be count, tokens or usd, got {self.kind!r}")
        object.__setattr__(self, "_of", _function(self.name, f"return {self.add}"))

    def of(self, record: RequestRecord) -> Number:
        """What ``record`` adds to this counter (0: nothing)."""
        return self._of(record)


def _function(name: str, body: str) -> Callable[[RequestRecord], Any]:
    """``def <name>(r): u = r.usage; <body>``, compiled from the table's expressions: its own
    constants, never input."""
    source = f"def {name}(r):\n    u = r.usage\n    {body}\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<counter {name}>", "exec"), namespace)
    return namespace[name]


BY_MODEL = ("provider", "model")


def _tokens_metric(kind: str) -> Metric:
    return Metric("prefixgate_tokens", BY_MODEL, "Tokens by kind as the provider reported them.", kind)


COUNTERS: tuple[Counter, ...] = (
    Counter(
        "requests",
        "1",
        "1",
        "count",
        "Requests finished: the clients', plus the proxy's own upstream calls (--gemini-auto-cache's cachedContents "
        "create / refresh, under their route; they carry no usage, so they are never billable).",
        Metric("prefixgate_requests", ("provider", "model", "status")),
    ),
    Counter(
        "prefix_hits",
        "r.prefix_segments is not None and r.prefix_segments > 0",
        "prefix_segments > 0",
        "count",
        "Requests whose prefix was seen before.",
        Metric("prefixgate_prefix_hits"),
    ),
    Counter(
        "input_tokens",
        "u.input_tokens if u else 0",
        "input_tokens",
        "tokens",
        "Prompt tokens as the provider reported them, cached and written ones included.",
    ),
    Counter(
        "cached_tokens",
        "u.cached_tokens if u else 0",
        "cached_tokens",
        "tokens",
        "Prompt tokens read from the provider's cache.",
        _tokens_metric("cache_read"),
    ),
    Counter(
        "cache_write_tokens",
        "u.cache_write_tokens if u else 0",
        "cache_write_tokens",
        "tokens",
        "Prompt tokens written to the provider's cache.",
        _tokens_metric("cache_write"),
    ),
    Counter(
        "output_tokens",
        "u.output_tokens if u else 0",
        "output_tokens",
        "tokens",
        "Output tokens.",
        _tokens_metric("output"),
    ),
    Counter(
        "unanalysed",
        "not r.analysed",
        "analysed = 0",
        "count",
        "Requests whose body could not be parsed.",
        Metric("prefixgate_unanalysed"),
    ),
    Counter(
        "errors",
        "r.status >= 400 or r.error is not None",
        "status >= 400 OR error IS NOT NULL",
        "count",
        "Requests answered with status >= 400 or ended by a proxy-side error.",
    ),
    Counter(
        "cost_usd",
        "r.cost_usd or 0.0",
        "cost_usd",
        "usd",
        "What requests cost, USD.",
        Metric("prefixgate_cost_usd", BY_MODEL),
    ),
    Counter(
        "saved_usd",
        "r.saved_usd or 0.0",
        "saved_usd",
        "usd",
        "Saved by caching vs the same tokens uncached, USD (can go down).",
        Metric("prefixgate_saved_usd", BY_MODEL, gauge=True),
    ),
    Counter(
        "missed_usd",
        "r.missed_usd or 0.0",
        "missed_usd",
        "usd",
        "Savings missed, USD: prompt tokens the provider could have read from its cache but did not, "
        "because a volatile value (a timestamp, an id) changed in a repeated prefix, a breakpoint was missing, "
        "or the provider did not cache a repeat (analyzer.missed); priced at what they were billed "
        "(with the write premium where written) less the cached-read rate.",
        Metric("prefixgate_missed_usd", BY_MODEL),
    ),
    Counter(
        "cache_storage_usd",
        "r.cache_storage_usd or 0.0",
        "cache_storage_usd",
        "usd",
        "What keeping explicit caches cost, USD (Gemini cachedContents made by --gemini-auto-cache; per 1M tokens per hour).",
        Metric("prefixgate_cache_storage_usd", BY_MODEL),
    ),
    Counter(
        "net_saved_usd",
        "(r.saved_usd or 0.0) - (r.cache_storage_usd or 0.0)",
        "COALESCE(saved_usd, 0.0) - COALESCE(cache_storage_usd, 0.0)",
        "usd",
        "Saved by caching net of explicit-cache storage, USD (can go down).",
    ),
    Counter(
        "unpriced",
        "u is not None and r.cost_usd is None",
        "input_tokens IS NOT NULL AND cost_usd IS NULL",
        "count",
        "Requests with usage but no price for the model.",
        Metric("prefixgate_unpriced", BY_MODEL),
    ),
    Counter(
        "billable",
        "u is not None",
        "input_tokens IS NOT NULL",
        "count",
        "Requests that reported token usage; the others bill nothing (model lists, probes, errors).",
    ),
    Counter(
        "prefix_unknown",
        "r.prefix_segments is None",
        "prefix_segments IS NULL",
        "count",
        "Requests whose prefix is unknown: the store was skipped or failed.",
        Metric("prefixgate_prefix_unknown"),
    ),
    Counter(
        "rewritten",
        "any(not i.startswith('skipped-') for i in r.rewrites)",
        "CASE WHEN json_valid(rewrites) THEN EXISTS (SELECT 1 FROM json_each(rewrites) WHERE value NOT LIKE 'skipped-%') END",
        "count",
        "Requests the rewrite changed (at least one rewrite id; skipped-* ids say why it did not).",
        Metric("prefixgate_rewritten"),
    ),
    Counter(
        "rules_drift_rows",
        "1 if r.drift else 0",
        "drift IS NOT NULL",
        "count",
        "Requests whose usage the model's rules did not expect (a cache field the parser does not know, writes on a "
        "price row that bills none, cached above the prompt, …): priced null, the rules are stale. The top-level "
        "rules_drift table of the stats and the summary names each field (proxy.accounting.drift).",
        Metric("prefixgate_rules_drift_requests", BY_MODEL),
    ),
    # Not shown: what the null-money rule needs, and Prometheus' tokens{kind="input"}.
    Counter(
        "priced",
        "r.cost_usd is not None",
        "cost_usd IS NOT NULL",
        "count",
        "Requests with a price: tells money that is null (nothing priced) from $0.",
        shown=False,
    ),
    Counter(
        "uncached_input_tokens",
        "max(0, u.input_tokens - u.cached_tokens - u.cache_write_tokens) if u else 0",
        "MAX(0, input_tokens - cached_tokens - cache_write_tokens)",
        "tokens",
        "Prompt tokens paid at the input rate (neither read from nor written to the cache).",
        _tokens_metric("input"),
        shown=False,
    ),
)

INDEX = {c.name: i for i, c in enumerate(COUNTERS)}
BY_NAME = {c.name: c for c in COUNTERS}
ZERO: tuple[Number, ...] = tuple(0.0 if c.kind == "usd" else 0 for c in COUNTERS)
_UNPRICED, _PRICED = INDEX["unpriced"], INDEX["priced"]

contributions: Callable[[RequestRecord], list[Number]] = _function(
    "contributions", "return [" + ", ".join(f"({c.add})" for c in COUNTERS) + "]"
)
contributions.__doc__ = """What ``record`` adds to each counter, in :data:`COUNTERS` order: the table's
expressions fused into one function (one call per record instead of one per counter)."""


def finish(sums: Sequence[Number]) -> dict[str, Number | None]:
    """Sums in :data:`COUNTERS` order → the shown counters' JSON values: counts as ints, USD to
    1e-9 (never ``-0.0``), or null, never $0, when requests had usage but none had a price."""
    unknown = sums[_UNPRICED] > 0 and sums[_PRICED] == 0
    out: dict[str, Number | None] = {}
    for c, v in zip(COUNTERS, sums):
        if not c.shown:
            continue
        if c.kind == "usd":
            out[c.name] = None if unknown else round(float(v), 9) + 0.0
        else:
            out[c.name] = int(v)
    return out


class Cap:
    """Names past the first ``limit`` distinct ones become :data:`OTHER` (model names,
    rewrite ids): what a label or a JSON key can be stays bounded."""

    __slots__ = ("_known", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._known: set[str] = set()

    def __call__(self, name: str) -> str:
        if name not in self._known and len(self._known) >= self.limit:
            return OTHER
        self._known.add(name)
        return name


def ranked(counts: dict[str, int]) -> dict[str, int]:
    """Most first, then by name (how per-id counts are shown)."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
